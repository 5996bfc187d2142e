"""OffsetDelete through kafka-python's KafkaAdminClient.delete_group_offsets
(confluent-kafka offers no offset deletion; its consumers make the groups).

`kp_delete_offsets.py BOOT scenario`: group `g` reads topics t and u, commits
the ends and closes; group `live` keeps a member subscribed to t (with t-0
committed at 1). Then, one line each:

- `g t-0 NoError`, `g t-1 NoError`: g's offsets of t deleted;
- `live t-0 GroupSubscribedToTopicError`: live's member subscribes to t;
- `live u-0 NoError`: not subscribed to u, nothing committed there;
- `nope GroupIdNotFoundError`: the group's own error, raised;
- `g nope-0 UnknownTopicOrPartitionError`, `g u-5 ...`: no such partitions;
- `offsets g: ...` and `offsets live: ...`: what OffsetFetch lists after.

`kp_delete_offsets.py BOOT hold GROUP TOPIC STOPFILE`: a member of GROUP
subscribed to TOPIC prints `assigned N` once it has partitions, then polls
until STOPFILE exists (at most 60 s) and closes.

`kp_delete_offsets.py BOOT read GROUP TOPIC`: a new member of GROUP
(auto.offset.reset earliest) reads what there is after its committed
offsets and prints `read N from P:OFFSET,...` (the first offset it read on
each partition), committing nothing.
"""
import os
import sys
import time

from confluent_kafka import Consumer, TopicPartition as CkPartition
from kafka import KafkaAdminClient, TopicPartition

boot, mode = sys.argv[1], sys.argv[2]
DEADLINE = 30


def consumer(group):
    return Consumer({
        "bootstrap.servers": boot,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
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


def assigned(c, got=None):
    """Polls until `c` has partitions; the messages polled meanwhile go to
    `got` (dropped without it)."""
    end = time.time() + DEADLINE
    while time.time() < end and not c.assignment():
        m = c.poll(0.2)
        if got is not None and m is not None and not m.error():
            got.append(m)
    return c.assignment()


if mode == "hold":
    group, topic, stop = sys.argv[3], sys.argv[4], sys.argv[5]
    c = consumer(group)
    c.subscribe([topic])
    print("assigned", len(assigned(c)), flush=True)
    end = time.time() + 60
    while time.time() < end and not os.path.exists(stop):
        c.poll(0.2)
    c.close()
    sys.exit(0)

if mode == "read":
    group, topic = sys.argv[3], sys.argv[4]
    c = consumer(group)
    c.subscribe([topic])
    got = []
    assigned(c, got)
    got += drain(c)
    first = {}
    for m in got:
        first.setdefault(m.partition(), m.offset())
    shown = ",".join(f"{p}:{o}" for p, o in sorted(first.items()))
    print(f"read {len(got)} from {shown or '-'}")
    c.close()
    sys.exit(0)

# Group `g`: read both topics, commit the ends, leave.
g = consumer("g")
g.subscribe(["t", "u"])
read = []
assigned(g, read)  # Kafka's first rebalance waits group.initial.rebalance.delay.ms
ends = {}
for m in read + drain(g):
    key = (m.topic(), m.partition())
    ends[key] = max(ends.get(key, 0), m.offset() + 1)
g.commit(offsets=[CkPartition(t, p, o) for (t, p), o in sorted(ends.items())],
         asynchronous=False)
g.close()

# Group `live`: a member subscribed to t that holds its assignment.
live = consumer("live")
live.subscribe(["t"])
assigned(live)
live.commit(offsets=[CkPartition("t", 0, 1)], asynchronous=False)

admin = KafkaAdminClient(bootstrap_servers=boot, request_timeout_ms=15000)


def show(group, partitions):
    try:
        result = admin.delete_group_offsets(group, partitions)
    except Exception as e:  # the group's own error, raised
        print(group, type(e).__name__)
        return
    for tp, error in sorted(result.items()):
        print(group, f"{tp.topic}-{tp.partition}", error.__name__)


show("g", [TopicPartition("t", 0), TopicPartition("t", 1)])
show("live", [TopicPartition("t", 0)])
show("live", [TopicPartition("u", 0)])
show("nope", [TopicPartition("t", 0)])
show("g", [TopicPartition("nope", 0), TopicPartition("u", 5)])
for group in ["g", "live"]:
    offsets = admin.list_group_offsets(group)[group]
    shown = sorted(f"{tp.topic}-{tp.partition}={o.offset}" for tp, o in offsets.items())
    print(f"offsets {group}:", " ".join(shown) or "none")
admin.close()
live.close()
