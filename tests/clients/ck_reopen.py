"""confluent-kafka around a restart of `mk-tui serve --data-dir D` (issue 25
item 3, tests/serve/reopen.rs). PHASE `before`: three records to `lat` (a
LogAppendTime topic of the served recording). PHASE `after`, against the
server restarted without flags: a new producer of the transactional id
`app` (the recording left its transaction open) commits `fresh` to
`out`-0; eight records of 100 bytes to `out`-0; three more to `lat`; then
every record of `lat` read back, and `out`-0 at read_committed. PHASE
`lat N` (after a kill -9 and a restart): three more records to `lat`, then
its N records read back.

Prints `txn app ok` or `txn app ERROR NAME`, `produced N`, `lat OFFSET
TIMESTAMP TYPE` per record of `lat` (the broker's append time, Unix ms),
and `committed VALUE...` (the values read_committed reads of `out`-0)."""
import sys
import time

from confluent_kafka import (OFFSET_BEGINNING, TIMESTAMP_LOG_APPEND_TIME, Consumer,
                             KafkaException, Producer, TopicPartition)

boot, phase = sys.argv[1], sys.argv[2]


def produce(topic, values):
    p = Producer({"bootstrap.servers": boot, "acks": "all", "linger.ms": 5,
                  "message.timeout.ms": 20000})
    failed = []
    for v in values:
        p.produce(topic, value=v, partition=0,
                  on_delivery=lambda err, msg: err and failed.append(err.name()))
    p.flush(30)
    return len(values) - len(failed)


def read(topic, isolation, count):
    c = Consumer({"bootstrap.servers": boot, "group.id": "reopen-" + isolation,
                  "enable.auto.commit": False, "isolation.level": isolation})
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    got = []
    deadline = time.monotonic() + 20
    while len(got) < count and time.monotonic() < deadline:
        msg = c.poll(0.5)
        if msg is None or msg.error():
            continue
        got.append(msg)
    c.close()
    return got


if phase == "before":
    print("produced", produce("lat", [b"before-%d" % i for i in range(3)]))
    sys.exit(0)
if phase == "lat":
    print("produced", produce("lat", [b"late-%d" % i for i in range(3)]))
    for msg in read("lat", "read_uncommitted", int(sys.argv[3])):
        kind, ts = msg.timestamp()
        print("lat", msg.offset(), ts, "log_append" if kind == TIMESTAMP_LOG_APPEND_TIME else kind)
    sys.exit(0)

t = Producer({"bootstrap.servers": boot, "transactional.id": "app",
              "message.timeout.ms": 20000})
try:
    t.init_transactions(30)
    t.begin_transaction()
    t.produce("out", value=b"fresh", partition=0)
    t.commit_transaction(30)
    print("txn app ok")
except KafkaException as e:
    print("txn app ERROR", e.args[0].name())
print("produced", produce("out", [b"%02d" % i + b"x" * 98 for i in range(8)]))
produce("lat", [b"after-%d" % i for i in range(3)])
for msg in read("lat", "read_uncommitted", 6):
    kind, ts = msg.timestamp()
    print("lat", msg.offset(), ts, "log_append" if kind == TIMESTAMP_LOG_APPEND_TIME else kind)
committed = [m.value().decode()[:5] for m in read("out", "read_committed", 9)]
print("committed", *committed)
