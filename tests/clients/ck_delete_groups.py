"""DeleteGroups through confluent-kafka's AdminClient.delete_consumer_groups.

`ck_delete_groups.py BOOT TOPIC scenario`: group `done` reads TOPIC's
records, commits and closes; group `live` keeps a subscribed member while
`done`, `live` and `nope` are deleted (one line per group: `deleted G` or
`error G CODE`); then `done`'s committed offsets (`offsets done: ...`,
`none` if nothing) and the groups listed (`listed ...`); then `live`'s
member commits and closes.

`ck_delete_groups.py BOOT TOPIC read GROUP`: a new member of GROUP
(auto.offset.reset earliest) reads what there is after its committed
offset and prints `read N from OFFSET` (OFFSET the first it read, -1 if
none), committing nothing.
"""
import sys
import time

from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient

boot, topic, mode = sys.argv[1], sys.argv[2], sys.argv[3]
DEADLINE = 30


def consumer(group, commit=True):
    return Consumer({
        "bootstrap.servers": boot,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "session.timeout.ms": 10000,
    })


def drain(c, quiet_s=2.0):
    """Reads until nothing came for `quiet_s` seconds: the messages read."""
    got, last = [], time.time()
    end = time.time() + DEADLINE
    while time.time() < end and time.time() - last < quiet_s:
        m = c.poll(0.2)
        if m is None or m.error():
            continue
        got.append(m)
        last = time.time()
    return got


if mode == "read":
    c = consumer(sys.argv[4])
    c.subscribe([topic])
    got = drain(c)
    first = got[0].offset() if got else -1
    print(f"read {len(got)} from {first}")
    c.close()
    sys.exit(0)

# Group `done`: read everything, commit, leave.
done = consumer("done")
done.subscribe([topic])
read = drain(done)
ends = {}
for m in read:
    ends[m.partition()] = max(ends.get(m.partition(), 0), m.offset() + 1)
done.commit(offsets=[TopicPartition(topic, p, o) for p, o in sorted(ends.items())],
            asynchronous=False)
print(f"done read {len(read)}")
done.close()

# Group `live`: a member that holds its assignment.
live = consumer("live")
live.subscribe([topic])
end = time.time() + DEADLINE
while time.time() < end and not live.assignment():
    live.poll(0.2)
print("live assigned", len(live.assignment()))

admin = AdminClient({"bootstrap.servers": boot})
futures = admin.delete_consumer_groups(["done", "live", "nope"], request_timeout=15)
for group in ["done", "live", "nope"]:
    try:
        futures[group].result(15)
        print("deleted", group)
    except Exception as e:  # KafkaException carrying the broker's error
        print("error", group, e.args[0].name() if e.args else e)

offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions("done")])
parts = offsets["done"].result(15).topic_partitions or []
shown = [f"{p.topic}-{p.partition}={p.offset}" for p in parts if p.offset >= 0]
print("offsets done:", " ".join(shown) if shown else "none")
listed = admin.list_consumer_groups().result(timeout=15)
print("listed", " ".join(sorted(g.group_id for g in listed.valid)))

live.commit(offsets=[TopicPartition(topic, p.partition, 1) for p in live.assignment()],
            asynchronous=False)
live.close()
print("live closed")
