"""A compacted topic through confluent-kafka: creates TOPIC with
cleanup.policy=compact, delete.retention.ms=DELETE_MS and
message.timestamp.type=LogAppendTime, produces keyed
records one flush each (so that small segments roll between them): k0..k3,
then new values for k0 and k2, a tombstone for k1, then filler keys f0..f7
that push the tombstone into a closed segment. Then reads the whole log
from the beginning, again every half second until no key is there twice and
no tombstone is left (the server's cleaner has run past delete.retention.ms)
or 30 s have passed, and prints `OFFSET KEY VALUE` per record of the last
read (VALUE `null` for a tombstone), then `reads N`."""
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

boot, topic, delete_ms = sys.argv[1], sys.argv[2], sys.argv[3]
admin = AdminClient({"bootstrap.servers": boot})
# LogAppendTime: the records carry the engine clock, which the tombstone's
# age is judged by (a CreateTime tombstone carries the client's Unix time;
# docs/kafka-differences.md).
configs = {"cleanup.policy": "compact", "delete.retention.ms": delete_ms,
           "message.timestamp.type": "LogAppendTime"}
for _, future in admin.create_topics([NewTopic(topic, 1, 1, config=configs)]).items():
    future.result(15)

producer = Producer({"bootstrap.servers": boot, "linger.ms": 0})
writes = [("k0", "a0"), ("k1", "a1"), ("k2", "a2"), ("k3", "a3"),
          ("k0", "b0"), ("k2", "b2"), ("k1", None)]
writes += [(f"f{i}", f"filler{i}") for i in range(8)]
for key, value in writes:
    producer.produce(topic, key=key, value=value, partition=0)
    assert producer.flush(15) == 0, "undelivered"


def read_all():
    consumer = Consumer({"bootstrap.servers": boot, "group.id": "compacted",
                         "enable.auto.commit": False})
    tp = TopicPartition(topic, 0)
    _, high = consumer.get_watermark_offsets(tp, timeout=15)
    consumer.assign([TopicPartition(topic, 0, 0)])
    got = []
    deadline = time.monotonic() + 15
    while (not got or got[-1][0] < high - 1) and time.monotonic() < deadline:
        m = consumer.poll(0.5)
        if m is None or m.error():
            continue
        value = m.value()
        got.append((m.offset(), m.key().decode(), None if value is None else value.decode()))
    consumer.close()
    return got


reads, deadline = 0, time.monotonic() + 30
while True:
    got = read_all()
    reads += 1
    keys = [k for _, k, _ in got]
    if (len(set(keys)) == len(keys) and all(v is not None for _, _, v in got)) \
            or time.monotonic() > deadline:
        break
    time.sleep(0.5)
for offset, key, value in got:
    print(offset, key, "null" if value is None else value)
print("reads", reads)
