"""subscribe() through confluent-kafka: three
records r0-r2 in TOPIC-0; a consumer of group GROUP subscribes, reads
them and commits; a second consumer of the group, started while the first
is still in it, joins: the group rebalances and the one partition is
owned by exactly one of them (printed as `two members: owned N`); both
close (LeaveGroup); two more records r3-r4; a new consumer of the group
resumes at the committed offset and reads only them. Prints `read ...`,
`committed N` and `two members: owned N`."""
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition

boot, topic, group = sys.argv[1], sys.argv[2], sys.argv[3]
producer = Producer({"bootstrap.servers": boot, "enable.idempotence": False})


def produce(values):
    for v in values:
        producer.produce(topic, value=v.encode(), partition=0)
    producer.flush(15)


owned = {}


def consumer(name="member"):
    c = Consumer({"bootstrap.servers": boot, "group.id": group,
                  "auto.offset.reset": "earliest", "enable.auto.commit": False,
                  "session.timeout.ms": 10000, "heartbeat.interval.ms": 500})

    def on_assign(_c, partitions):
        owned[name] = [tp.partition for tp in partitions]

    c.subscribe([topic], on_assign=on_assign)
    return c


def read(c, count):
    got = []
    deadline = time.monotonic() + 30
    while len(got) < count and time.monotonic() < deadline:
        msg = c.poll(0.2)
        if msg is None:
            continue
        if msg.error():
            print("error", msg.error().name())
            continue
        got.append(msg.value().decode())
    return got


produce(["r0", "r1", "r2"])
first = consumer("first")
print("read", *read(first, 3))
first.commit(asynchronous=False)
[tp] = first.committed([TopicPartition(topic, 0)], timeout=10)
print("committed", tp.offset)
owned.clear()
second = consumer("second")
deadline = time.monotonic() + 20
# The first rejoins (its heartbeat says REBALANCE_IN_PROGRESS); both are
# assigned anew: the one partition to one of them.
while len(owned) < 2 and time.monotonic() < deadline:
    for c in (first, second):
        msg = c.poll(0.1)
        if msg is not None and msg.error():
            print("error", msg.error().name())
print("two members: owned", sum(len(p) for p in owned.values()))
second.close()
first.close()
produce(["r3", "r4"])
third = consumer()
print("read", *read(third, 2))
third.close()
