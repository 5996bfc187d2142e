"""confluent-kafka clients against a running Kafka cluster (the Apache
Kafka 4.4 reference of tests/kafka-ref/), for tests/observe_kafka.rs.

Usage: ck_kafka_ref.py BOOTSTRAP prints `boot BOOTSTRAP` and `ready`, then
runs one command per line of its standard input, each ending with
`ok COMMAND` (or `failed WHY`). T is a topic, P a partition of it:

  create T P RF        creates T with P partitions of RF replicas
  plain T N            N records plain0.. to T-0 in one batch (no
                       idempotence): `delivered OFFSET` each
  txn T ID END V...    transactional.id ID writes V... to T-0 in one
                       batch, then END: commit, abort, or open (left
                       open, its producer kept): `delivered OFFSET` each
  end ID END           ends the transaction ID left open: commit or abort
  hang T ID MS V...    a child process with transactional.id ID and
                       transaction.timeout.ms MS writes V... to T-0 in a
                       transaction, prints `delivered OFFSET` each, and is
                       killed (SIGKILL) before it ends the transaction
  txn_offsets T ID G O END
                       a transaction of ID with no records that stages
                       offset O of T-0 for group G, then END (commit, or
                       open: left pending, its producer kept)
  commit T G O         group G commits offset O of T-0 (a plain commit)
  committed T G        `committed G OFFSET` (or None) as a consumer reads it
  consume T ISOLATION  every record of T-0 from offset 0 up to the end, as
                       a consumer at that isolation level reads it: `read
                       OFFSET VALUE` each, then `eof OFFSET` (where its
                       end of partition is), then `end LOW HIGH` (the
                       watermarks it is told)
  metadata T           `broker ID HOST:PORT` each, then `partition T P
                       leader L replicas R,.. isr I,..` for T's
                       partitions, as the AdminClient reads them
  quit                 exits

It exits by itself at the end of its input (so when the test that runs it
goes away) and, whatever happens, after LIFETIME_S seconds; a hanging
child is killed by its own hand, or with this script (parent-death
signal).
"""
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

LIFETIME_S = 300
WAIT_S = 30
# One command's records go in one batch: they are all queued within the
# linger, and flush() sends what is queued at once, linger or not.
LINGER_MS = 5000

threading.Timer(LIFETIME_S, lambda: os._exit(3)).start()


def delivered(err, msg):
    if err is not None:
        print(f"failed {err}", flush=True)
    else:
        print(f"delivered {msg.offset()}", flush=True)


def hang_child(boot, topic, tid, timeout_ms, values):
    """The producer killed mid-transaction: writes, then dies."""
    # PR_SET_PDEATHSIG (1): SIGKILL this child if its parent exits first.
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
    p = Producer({"bootstrap.servers": boot, "transactional.id": tid,
                  "transaction.timeout.ms": timeout_ms, "linger.ms": LINGER_MS})
    p.init_transactions(WAIT_S)
    p.begin_transaction()
    for v in values:
        p.produce(topic, value=v.encode(), partition=0, on_delivery=delivered)
    assert p.flush(WAIT_S) == 0
    # No EndTxn, no close: a crash, as the coordinator sees it.
    os.kill(os.getpid(), signal.SIGKILL)


if sys.argv[1] == "--hang":
    hang_child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6:])

boot = sys.argv[1]
admin = AdminClient({"bootstrap.servers": boot})
print(f"boot {boot}", flush=True)
print("ready", flush=True)

open_producers = {}  # transactions left open: their producers must live


def create(topic, partitions, rf, configs):
    """A topic, with `name=value` topic configs after its replication factor."""
    config = dict(c.split("=", 1) for c in configs)
    futures = admin.create_topics([NewTopic(topic, partitions, rf, config=config)],
                                  operation_timeout=WAIT_S)
    futures[topic].result(WAIT_S)


def plain(topic, n):
    p = Producer({"bootstrap.servers": boot, "enable.idempotence": False, "linger.ms": LINGER_MS})
    for i in range(n):
        p.produce(topic, value=f"plain{i}".encode(), partition=0, on_delivery=delivered)
    assert p.flush(WAIT_S) == 0


def finish(p, end, tid):
    if end == "commit":
        p.commit_transaction(WAIT_S)
    elif end == "abort":
        p.abort_transaction(WAIT_S)
    else:
        raise SystemExit(f"{tid}: END is commit or abort, not {end!r}")


def transactional(tid):
    p = Producer({"bootstrap.servers": boot, "transactional.id": tid, "linger.ms": LINGER_MS})
    p.init_transactions(WAIT_S)
    p.begin_transaction()
    return p


def txn(topic, tid, end, values):
    p = transactional(tid)
    for v in values:
        p.produce(topic, value=v.encode(), partition=0, on_delivery=delivered)
    assert p.flush(WAIT_S) == 0
    if end == "open":
        open_producers[tid] = p
    else:
        finish(p, end, tid)


def hang(topic, tid, timeout_ms, values):
    child = subprocess.run([sys.executable, __file__, "--hang", boot, topic, tid, timeout_ms,
                            *values], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           timeout=WAIT_S, check=False)
    sys.stdout.write(child.stdout.decode())
    if child.returncode != -signal.SIGKILL:
        raise SystemExit(f"hang {tid}: the child exited {child.returncode}, not killed")


def consumer(group, isolation="read_uncommitted"):
    return Consumer({"bootstrap.servers": boot, "group.id": group,
                     "enable.auto.commit": False, "isolation.level": isolation,
                     "enable.partition.eof": True})


def txn_offsets(topic, tid, group, offset, end):
    p = transactional(tid)
    c = consumer(group)
    p.send_offsets_to_transaction([TopicPartition(topic, 0, offset)],
                                  c.consumer_group_metadata(), WAIT_S)
    c.close()
    if end == "open":
        open_producers[tid] = p
    else:
        finish(p, end, tid)


def commit(topic, group, offset):
    c = consumer(group)
    c.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)
    c.close()


def committed(topic, group):
    c = consumer(group)
    [tp] = c.committed([TopicPartition(topic, 0)], timeout=WAIT_S)
    print(f"committed {group} {tp.offset if tp.offset >= 0 else None}", flush=True)
    c.close()


def consume(topic, isolation):
    # No group: assign() reads without joining, as the observer does.
    c = Consumer({"bootstrap.servers": boot, "group.id": "unused", "enable.auto.commit": False,
                  "isolation.level": isolation, "enable.partition.eof": True})
    c.assign([TopicPartition(topic, 0, 0)])
    deadline = time.monotonic() + WAIT_S
    while True:
        if time.monotonic() > deadline:
            raise SystemExit(f"consume {topic} {isolation}: no end of partition in {WAIT_S} s")
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            if m.error().code() == -191:  # _PARTITION_EOF: at the end
                print(f"eof {m.offset()}", flush=True)
                break
            raise SystemExit(f"consume {topic} {isolation}: {m.error()}")
        print(f"read {m.offset()} {m.value().decode()}", flush=True)
    low, high = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=WAIT_S, cached=False)
    print(f"end {low} {high}", flush=True)
    c.close()


def metadata(topic):
    md = admin.list_topics(topic, timeout=WAIT_S)
    for b in sorted(md.brokers.values(), key=lambda b: b.id):
        print(f"broker {b.id} {b.host}:{b.port}", flush=True)
    for pid, p in sorted(md.topics[topic].partitions.items()):
        print(f"partition {topic} {pid} leader {p.leader} "
              f"replicas {','.join(map(str, p.replicas))} isr {','.join(map(str, p.isrs))}",
              flush=True)


for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    command, args = words[0], words[1:]
    try:
        if command == "quit":
            break
        elif command == "create":
            create(args[0], int(args[1]), int(args[2]), args[3:])
        elif command == "plain":
            plain(args[0], int(args[1]))
        elif command == "txn":
            txn(args[0], args[1], args[2], args[3:])
        elif command == "end":
            finish(open_producers.pop(args[0]), args[1], args[0])
        elif command == "hang":
            hang(args[0], args[1], args[2], args[3:])
        elif command == "txn_offsets":
            txn_offsets(args[0], args[1], args[2], int(args[3]), args[4])
        elif command == "commit":
            commit(args[0], args[1], int(args[2]))
        elif command == "committed":
            committed(args[0], args[1])
        elif command == "consume":
            consume(args[0], args[1])
        elif command == "metadata":
            metadata(args[0])
        else:
            raise SystemExit(f"unknown command {command!r}")
    except Exception as e:  # one line, so the test names what failed
        print(f"failed {command}: {type(e).__name__}: {e}", flush=True)
        continue
    print(f"ok {command}", flush=True)
os._exit(0)
