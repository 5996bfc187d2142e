"""CreatePartitions through confluent-kafka's AdminClient.create_partitions.

`ck_create_partitions.py BOOT grow TOPIC COUNT [validate]`: grows TOPIC to
COUNT partitions (validate_only with `validate`); prints `grown TOPIC
COUNT` or `error TOPIC CODE MESSAGE`.

`ck_create_partitions.py BOOT group TOPIC COUNT`: a member of group `g`
(metadata refreshed every second) subscribes to TOPIC and prints
`assigned N` once it has its partitions; TOPIC then grows to COUNT; the
member prints `reassigned N` once its assignment holds all COUNT
partitions; a producer writes `new` to the last partition, and the
member prints `read P OFFSET VALUE` of it. Bounded: 40 s in all.
"""
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewPartitions

boot, mode, topic, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
DEADLINE = time.time() + 40


def grow(validate=False):
    admin = AdminClient({"bootstrap.servers": boot})
    futures = admin.create_partitions([NewPartitions(topic, count)],
                                      validate_only=validate, request_timeout=15)
    for name, future in futures.items():
        try:
            future.result(15)
            print("grown", name, count, flush=True)
        except KafkaException as e:
            err = e.args[0]
            print("error", name, err.name(), err.str(), flush=True)


if mode == "grow":
    grow(len(sys.argv) > 5 and sys.argv[5] == "validate")
    sys.exit(0)

assert mode == "group", mode
c = Consumer({
    "bootstrap.servers": boot,
    "group.id": "g",
    "auto.offset.reset": "earliest",
    "enable.auto.commit": False,
    "session.timeout.ms": 10000,
    "topic.metadata.refresh.interval.ms": 1000,
})
c.subscribe([topic])


def wait_assigned(n):
    while time.time() < DEADLINE:
        c.poll(0.2)
        if len(c.assignment()) == n:
            return True
    return False


first = None
while time.time() < DEADLINE and not c.assignment():
    c.poll(0.2)
print("assigned", len(c.assignment()), flush=True)
grow()
if not wait_assigned(count):
    print("still assigned", sorted(p.partition for p in c.assignment()), flush=True)
    sys.exit(1)
print("reassigned", len(c.assignment()), flush=True)
p = Producer({"bootstrap.servers": boot, "acks": "all"})
p.produce(topic, value=b"new", partition=count - 1)
p.flush(15)
while time.time() < DEADLINE:
    m = c.poll(0.2)
    if m is None or m.error():
        continue
    if m.partition() == count - 1:
        print("read", m.partition(), m.offset(), m.value().decode(), flush=True)
        break
c.close()
