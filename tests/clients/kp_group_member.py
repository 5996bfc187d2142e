"""One member of a consumer group (kafka-python), driven by
group_split.py, printing what ck_group_member.py prints: subscribes to
TOPIC in GROUP with the assignor STRATEGY (range or roundrobin), commits
each record synchronously once read; `close` on standard input closes
it (LeaveGroup).

It learns the topic's partitions before its first poll (`topics()` after
`subscribe`): kafka-python 3.0.12's leader, when its first assignment ran
before the topic's metadata arrived, rejoins for the new metadata; if
poll's timeout ends while that JoinGroup/SyncGroup is in flight, its
assignment makes need_rejoin() false again, so the SyncGroup's answer is
never applied and heartbeats stay off: the member sits unassigned and the
coordinator expires it after its session (Apache Kafka does the same). The
others then split the topic without it for ever."""
import sys
import threading

from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition
from kafka.errors import KafkaError
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

boot, topic, group, strategy = sys.argv[1:5]
assignor = {"range": RangePartitionAssignor,
            "roundrobin": RoundRobinPartitionAssignor}[strategy]


def say(*words):
    print(*words, flush=True)


closing = threading.Event()
threading.Thread(
    target=lambda: [closing.set() for line in sys.stdin if line.strip() == "close"],
    daemon=True).start()
c = KafkaConsumer(bootstrap_servers=boot, group_id=group,
                  partition_assignment_strategy=[assignor],
                  auto_offset_reset="earliest", enable_auto_commit=False,
                  session_timeout_ms=6000, heartbeat_interval_ms=500,
                  metadata_max_age_ms=2000)
c.subscribe([topic])
c.topics()  # a blocking metadata fetch: the coordinator's snapshot has the topic
shown = None
while not closing.is_set():
    batches = c.poll(timeout_ms=100)
    now = sorted(tp.partition for tp in c.assignment())
    if now != shown:
        shown = now
        say("assigned", ",".join(str(p) for p in now) or "-")
    for tp, records in batches.items():
        for r in records:
            try:
                c.commit({TopicPartition(topic, r.partition):
                          OffsetAndMetadata(r.offset + 1, "", -1)})
            except KafkaError as e:  # the group rebalanced meanwhile
                say("uncommitted", r.partition, r.offset, type(e).__name__)
            say("read", r.partition, r.offset)
c.close()
say("closed")
