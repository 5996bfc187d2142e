"""Consume-transform-produce by a group of two (confluent-kafka): 100
records in `in` (4 partitions); member a, a consumer of group `ctp` with
its own transactional producer (`ctp-a`), copies them to `out` in
transactions of up to ten records, each with its input offsets
(send_offsets_to_transaction with the consumer's group metadata, so the
generation and member id fence a zombie). Once a has copied 40, member b
(`ctp-b`) joins: the group rebalances, 100 more records come, and both
go on. A transaction that
fails is aborted and its member rewinds to the committed offsets. A
read_committed reader of `out` waits for every record. Prints `b joined
with N partitions`, `both copied yes|no`, `out N distinct N` and
`aborted N`."""
import sys
import threading
import time

from confluent_kafka import (OFFSET_BEGINNING, Consumer, KafkaException, Producer,
                             TopicPartition)
from confluent_kafka.admin import AdminClient, NewTopic

boot = sys.argv[1]
COUNT = 200
admin = AdminClient({"bootstrap.servers": boot})
for f in admin.create_topics([NewTopic("in", 4, 1), NewTopic("out", 1, 1)]).values():
    f.result(15)
plain = Producer({"bootstrap.servers": boot, "enable.idempotence": True})


def produce(values):
    for i in values:
        plain.produce("in", value=f"v{i}".encode(), partition=i % 4)
    plain.flush(15)


produce(range(COUNT // 2))

copied = {"a": 0, "b": 0}
owned = {}
aborted = [0]
stop = threading.Event()


def rewind(c):
    for tp in c.committed(c.assignment(), timeout=10):
        c.seek(TopicPartition(tp.topic, tp.partition,
                              tp.offset if tp.offset >= 0 else OFFSET_BEGINNING))


def member(name):
    c = Consumer({"bootstrap.servers": boot, "group.id": "ctp",
                  "isolation.level": "read_committed", "enable.auto.commit": False,
                  "auto.offset.reset": "earliest", "session.timeout.ms": 6000,
                  "heartbeat.interval.ms": 500})
    p = Producer({"bootstrap.servers": boot, "transactional.id": f"ctp-{name}"})
    p.init_transactions(30)

    def on_assign(_c, partitions):
        owned[name] = [tp.partition for tp in partitions]

    c.subscribe(["in"], on_assign=on_assign)
    while not stop.is_set():
        msgs = [m for m in c.consume(10, 0.2) if not m.error()]
        if not msgs:
            continue
        p.begin_transaction()
        ends = {}
        for m in msgs:
            p.produce("out", value=m.value(), partition=0)
            ends[m.partition()] = m.offset() + 1
        try:
            p.send_offsets_to_transaction(
                [TopicPartition("in", part, end) for part, end in ends.items()],
                c.consumer_group_metadata(), 30)
            p.commit_transaction(30)
            copied[name] += len(msgs)
        except KafkaException as e:
            if not e.args[0].txn_requires_abort():
                raise
            p.abort_transaction(30)
            aborted[0] += 1
            rewind(c)
        time.sleep(0.05)
    c.close()


threads = {"a": threading.Thread(target=member, args=("a",))}
threads["a"].start()
deadline = time.monotonic() + 30
while copied["a"] < 40 and time.monotonic() < deadline:
    time.sleep(0.05)
threads["b"] = threading.Thread(target=member, args=("b",))
threads["b"].start()
deadline = time.monotonic() + 30
while "b" not in owned and time.monotonic() < deadline:
    time.sleep(0.05)
print("b joined with", len(owned.get("b", [])), "partitions", flush=True)
produce(range(COUNT // 2, COUNT))

reader = Consumer({"bootstrap.servers": boot, "group.id": "reader",
                   "isolation.level": "read_committed", "enable.auto.commit": False})
reader.assign([TopicPartition("out", 0, OFFSET_BEGINNING)])
out = []
deadline = time.monotonic() + 45
while len(set(out)) < COUNT and time.monotonic() < deadline:
    msg = reader.poll(0.2)
    if msg is not None and not msg.error():
        out.append(msg.value().decode())
# Anything more (a duplicate) would come now.
settle = time.monotonic() + 2
while time.monotonic() < settle:
    msg = reader.poll(0.2)
    if msg is not None and not msg.error():
        out.append(msg.value().decode())
stop.set()
for t in threads.values():
    t.join(30)
reader.close()
print("both copied", "yes" if copied["a"] > 0 and copied["b"] > 0 else "no")
print("out", len(out), "distinct", len(set(out)))
print("aborted", aborted[0])
