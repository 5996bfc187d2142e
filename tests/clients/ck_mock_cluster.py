"""librdkafka's mock cluster, driven by real confluent-kafka clients, for
tests/observe_foreign.rs (docs/observe.md "Tested implementations").

A client configured with `test.mock.num.brokers` starts an in-process
Kafka-protocol cluster on 127.0.0.1 ports, which lives as long as that
client does; any other client (here `mk-tui observe`) can connect to it.
This script starts one of BROKERS brokers (default 3), prints
`boot HOST:PORT,...` and `ready`, then runs one command per line of its
standard input, each ending with `ok COMMAND`:

  plain N            N records plain0.. to t-0 (no idempotence):
                     `delivered OFFSET` each
  txn ID END V...    transactional.id ID writes V... to t-0, then END:
                     commit, abort, or open (left open, the producer kept)
                     `delivered OFFSET` each
  txn_offsets ID G O a transaction of ID with no records that stages
                     offset O of t-0 for group G and commits
  commit G O         group G commits offset O of t-0 (a plain commit)
  committed G        `committed G OFFSET` (or None) as a consumer reads it
  consume ISOLATION  every record of t-0 from offset 0 up to the end, as
                     a consumer at that isolation level reads it:
                     `read OFFSET VALUE` each, then `end LOW HIGH` (the
                     watermarks the consumer is told)
  metadata           `partition T P leader L replicas R,.. isr I,..` and
                     `broker ID HOST:PORT`, as the AdminClient reads them
  quit               exits

It exits by itself at the end of its input (so when the test that runs it
goes away) and, whatever happens, after LIFETIME_S seconds.
"""
import os
import sys
import threading
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

LIFETIME_S = 240
TOPIC = "t"
WAIT_S = 20
# One command's records go in one batch: they are all queued within the
# linger, and flush() sends what is queued at once, linger or not.
LINGER_MS = 5000

threading.Timer(LIFETIME_S, lambda: os._exit(3)).start()

brokers = int(sys.argv[1]) if len(sys.argv) > 1 else 3
admin = AdminClient({"test.mock.num.brokers": brokers})
boot = ",".join(
    f"{b.host}:{b.port}" for b in sorted(admin.list_topics(timeout=WAIT_S).brokers.values(),
                                          key=lambda b: b.id))
print(f"boot {boot}", flush=True)
print("ready", flush=True)

open_producers = []  # transactions left open: their producers must live


def delivered(err, msg):
    if err is not None:
        print(f"failed {err}", flush=True)
    else:
        print(f"delivered {msg.offset()}", flush=True)


def plain(n):
    p = Producer({"bootstrap.servers": boot, "enable.idempotence": False, "linger.ms": LINGER_MS})
    for i in range(n):
        p.produce(TOPIC, value=f"plain{i}".encode(), partition=0, on_delivery=delivered)
    assert p.flush(WAIT_S) == 0


def txn(tid, end, values):
    p = Producer({"bootstrap.servers": boot, "transactional.id": tid, "linger.ms": LINGER_MS})
    p.init_transactions(WAIT_S)
    p.begin_transaction()
    for v in values:
        p.produce(TOPIC, value=v.encode(), partition=0, on_delivery=delivered)
    assert p.flush(WAIT_S) == 0
    if end == "commit":
        p.commit_transaction(WAIT_S)
    elif end == "abort":
        p.abort_transaction(WAIT_S)
    elif end == "open":
        open_producers.append(p)
    else:
        raise SystemExit(f"txn {tid}: END is commit, abort or open, not {end!r}")


def consumer(group, isolation="read_uncommitted"):
    return Consumer({"bootstrap.servers": boot, "group.id": group,
                     "enable.auto.commit": False, "isolation.level": isolation,
                     "enable.partition.eof": True})


def txn_offsets(tid, group, offset):
    p = Producer({"bootstrap.servers": boot, "transactional.id": tid})
    p.init_transactions(WAIT_S)
    p.begin_transaction()
    c = consumer(group)
    p.send_offsets_to_transaction([TopicPartition(TOPIC, 0, offset)],
                                  c.consumer_group_metadata(), WAIT_S)
    p.commit_transaction(WAIT_S)
    c.close()


def commit(group, offset):
    c = consumer(group)
    c.commit(offsets=[TopicPartition(TOPIC, 0, offset)], asynchronous=False)
    c.close()


def committed(group):
    c = consumer(group)
    [tp] = c.committed([TopicPartition(TOPIC, 0)], timeout=WAIT_S)
    print(f"committed {group} {tp.offset if tp.offset >= 0 else None}", flush=True)
    c.close()


def consume(isolation):
    c = consumer(f"reader-{isolation}", isolation)
    c.assign([TopicPartition(TOPIC, 0, 0)])
    deadline = time.monotonic() + WAIT_S
    while True:
        if time.monotonic() > deadline:
            raise SystemExit(f"consume {isolation}: no end of partition in {WAIT_S} s")
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            if m.error().code() == -191:  # _PARTITION_EOF: at the end
                break
            raise SystemExit(f"consume {isolation}: {m.error()}")
        print(f"read {m.offset()} {m.value().decode()}", flush=True)
    low, high = c.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=WAIT_S, cached=False)
    print(f"end {low} {high}", flush=True)
    c.close()


def metadata():
    md = admin.list_topics(timeout=WAIT_S)
    for b in sorted(md.brokers.values(), key=lambda b: b.id):
        print(f"broker {b.id} {b.host}:{b.port}", flush=True)
    for name in sorted(md.topics):
        for pid, p in sorted(md.topics[name].partitions.items()):
            print(f"partition {name} {pid} leader {p.leader} "
                  f"replicas {','.join(map(str, p.replicas))} isr {','.join(map(str, p.isrs))}",
                  flush=True)


for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    command, args = words[0], words[1:]
    if command == "quit":
        break
    elif command == "plain":
        plain(int(args[0]))
    elif command == "txn":
        txn(args[0], args[1], args[2:])
    elif command == "txn_offsets":
        txn_offsets(args[0], args[1], int(args[2]))
    elif command == "commit":
        commit(args[0], int(args[1]))
    elif command == "committed":
        committed(args[0])
    elif command == "consume":
        consume(args[0])
    elif command == "metadata":
        metadata()
    else:
        raise SystemExit(f"unknown command {command!r}")
    print(f"ok {command}", flush=True)
os._exit(0)
