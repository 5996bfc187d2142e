"""One member of a consumer group (confluent-kafka), driven by
group_split.py: subscribes to TOPIC in GROUP with the assignor STRATEGY,
commits each record synchronously once read, and prints (flushed):
`assigned P,P,...` whenever its assignment changes (empty: `assigned -`),
`read PARTITION OFFSET` per record once committed, `uncommitted PARTITION OFFSET ERROR`
when its commit failed (the group rebalanced meanwhile). A `close` line on standard input
closes it (LeaveGroup) and prints `closed`."""
import sys
import threading

from confluent_kafka import Consumer, KafkaException

boot, topic, group, strategy = sys.argv[1:5]
owned = set()


def say(*words):
    print(*words, flush=True)


def show():
    say("assigned", ",".join(str(p) for p in sorted(owned)) or "-")


def on_assign(_c, partitions):
    owned.update(tp.partition for tp in partitions)
    show()


def on_revoke(_c, partitions):
    owned.difference_update(tp.partition for tp in partitions)
    show()


closing = threading.Event()
threading.Thread(
    target=lambda: [closing.set() for line in sys.stdin if line.strip() == "close"],
    daemon=True).start()
c = Consumer({"bootstrap.servers": boot, "group.id": group,
              "partition.assignment.strategy": strategy,
              "auto.offset.reset": "earliest", "enable.auto.commit": False,
              "session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
              "topic.metadata.refresh.interval.ms": 2000})
c.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_revoke)
while not closing.is_set():
    msg = c.poll(0.1)
    if msg is None:
        continue
    if msg.error():
        say("error", msg.error().name())
        continue
    # `read` once committed: a member killed before its commit is answered
    # has not said it read the record, which its next owner reads again.
    try:
        c.commit(message=msg, asynchronous=False)
    except KafkaException as e:  # the group rebalanced meanwhile
        say("uncommitted", msg.partition(), msg.offset(), e.args[0].name())
    say("read", msg.partition(), msg.offset())
c.close()
say("closed")
