"""kafka-python reads COUNT records of partition 0 of TOPIC from the start
(read_committed) and prints each as ck_wire_features.py does
(tests/clients/wire_lines.py), then `offsets_for_times` answers."""
import sys

from kafka import KafkaConsumer, TopicPartition

from wire_lines import ASKED, record_line

boot, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
tp = TopicPartition(topic, 0)
consumer = KafkaConsumer(bootstrap_servers=boot, isolation_level="read_committed",
                         enable_auto_commit=False, consumer_timeout_ms=15000)
consumer.assign([tp])
consumer.seek_to_beginning()
got = 0
for m in consumer:
    headers = [(k, None if v is None else v.decode()) for k, v in m.headers]
    kind = {0: "create", 1: "log_append"}.get(m.timestamp_type, f"type{m.timestamp_type}")
    print(record_line(m.offset, m.key.decode(), m.value.decode(), kind, m.timestamp, headers))
    got += 1
    if got == count:
        break
for asked in ASKED:
    found = consumer.offsets_for_times({tp: asked})[tp]
    print("at", asked, -1 if found is None else found.offset)
consumer.close()
