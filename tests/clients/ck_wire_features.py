"""confluent-kafka: the wire features applications use. Creates TOPIC (one
partition, RF given), then one Producer per compression type (none, gzip,
snappy, lz4, zstd; the odd ones idempotent) writes three records each with
an explicit CreateTime and headers (one with a null value). Prints
`delivered OFFSET` per record, then reads the partition back from the
start and prints one `record` line per record (tests/clients/wire_lines.py),
then `offsets_for_times` answers: `at TIMESTAMP OFFSET`, then what a
record stamped two hours ahead of the wall clock gets: `future ERROR`
(Kafka 4 refuses it: message.timestamp.after.max.ms is one hour)."""
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from wire_lines import CODECS, ASKED, record_line, sent

boot, topic, rf = sys.argv[1], sys.argv[2], int(sys.argv[3])
admin = AdminClient({"bootstrap.servers": boot})
admin.create_topics([NewTopic(topic, 1, rf)])[topic].result(15)

for i, codec in enumerate(CODECS):
    producer = Producer({
        "bootstrap.servers": boot,
        "compression.type": codec,
        "enable.idempotence": i % 2 == 1,
        "linger.ms": 100,
        "message.timeout.ms": 15000,
    })
    offsets = []

    def report(err, msg):
        offsets.append(f"failed {err.name()}" if err else f"delivered {msg.offset()}")

    for key, value, timestamp, headers in sent(i, codec):
        producer.produce(topic, value=value.encode(), key=key.encode(), partition=0,
                         timestamp=timestamp,
                         headers=[(k, None if v is None else v.encode()) for k, v in headers],
                         on_delivery=report)
    producer.flush(20)
    print(*offsets, sep="\n")

consumer = Consumer({"bootstrap.servers": boot, "group.id": "wire-features",
                     "enable.auto.commit": False, "isolation.level": "read_committed"})
consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
want, got = 3 * len(CODECS), 0
deadline = time.monotonic() + 20
while got < want and time.monotonic() < deadline:
    msg = consumer.poll(0.5)
    if msg is None:
        continue
    if msg.error():
        print("error", msg.error().name())
        continue
    kind, timestamp = msg.timestamp()
    headers = [(k, None if v is None else v.decode()) for k, v in (msg.headers() or [])]
    print(record_line(msg.offset(), msg.key().decode(), msg.value().decode(),
                      {1: "create", 2: "log_append"}.get(kind, f"type{kind}"), timestamp, headers))
    got += 1
for asked in ASKED:
    found = consumer.offsets_for_times([TopicPartition(topic, 0, asked)], 15)[0]
    print("at", asked, found.offset)
consumer.close()

producer = Producer({"bootstrap.servers": boot, "message.timeout.ms": 15000})
future = []
producer.produce(topic, value=b"later", partition=0,
                 timestamp=int(time.time() * 1000) + 2 * 3600 * 1000,
                 on_delivery=lambda err, msg: future.append(err.name() if err else "ok"))
producer.flush(20)
print("future", *future)
