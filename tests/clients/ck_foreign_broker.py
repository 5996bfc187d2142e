"""A Kafka-protocol broker that this project did not write, started on a
free loopback port and driven by real confluent-kafka clients, for
tests/observe_foreign_tansu.rs (docs/observe.md "Tested implementations").

Usage: ck_foreign_broker.py LOG DIR COMMAND... starts COMMAND (every `{port}`
in it replaced by a free 127.0.0.1 port) in the working directory DIR, with
its standard output and error in the file LOG, waits until the port
accepts connections, prints `boot 127.0.0.1:PORT` and `ready`, then runs
one command per line of its standard input, each ending with `ok COMMAND`:

  create P           creates topic t with P partitions, replication 1
  plain N            N records plain0.. to t-0 in one batch (no
                     idempotence): `delivered OFFSET` each
  txn ID END V...    transactional.id ID writes V... to t-0 in one batch,
                     then END: commit, abort, or open (left open, its
                     producer kept): `delivered OFFSET` each
  end ID END         ends the transaction ID left open: commit or abort
  consume ISOLATION  every record of t-0 from offset 0 up to the end, as a
                     consumer at that isolation level reads it: `read
                     OFFSET VALUE` each, then `eof OFFSET` (where the
                     consumer's end of partition is: the HW under
                     read_uncommitted, the LSO under read_committed), then
                     `end LOW HIGH` (the watermarks the consumer is told)
  metadata           `partition T P leader L replicas R,.. isr I,..` and
                     `broker ID HOST:PORT`, as the AdminClient reads them
  quit               exits

It exits by itself at the end of its input (so when the test that runs it
goes away) and, whatever happens, after LIFETIME_S seconds. The broker is
killed when this script exits or is killed (Linux's parent-death signal),
so it never outlives the test.
"""
import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

LIFETIME_S = 240
TOPIC = "t"
WAIT_S = 20
# One command's records go in one batch: they are all queued within the
# linger, and flush() sends what is queued at once, linger or not.
LINGER_MS = 5000

threading.Timer(LIFETIME_S, lambda: os._exit(3)).start()



def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent():
    # PR_SET_PDEATHSIG (1): SIGKILL this child when its parent exits.
    if ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL) != 0:
        os._exit(4)


def start_broker(log, workdir, command):
    port = free_port()
    broker = subprocess.Popen([w.replace("{port}", str(port)) for w in command],
                              cwd=workdir, stdin=subprocess.DEVNULL,
                              stdout=open(log, "wb"), stderr=subprocess.STDOUT,
                              preexec_fn=die_with_parent)
    deadline = time.monotonic() + WAIT_S
    while True:
        if broker.poll() is not None:
            raise SystemExit(f"the broker exited ({broker.returncode}) before listening: see {log}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return f"127.0.0.1:{port}"
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit(f"the broker did not listen on {port} in {WAIT_S} s: see {log}")
            time.sleep(0.1)


boot = start_broker(sys.argv[1], sys.argv[2], sys.argv[3:])
print(f"boot {boot}", flush=True)
admin = AdminClient({"bootstrap.servers": boot})
print("ready", flush=True)

open_producers = {}  # transactions left open: their producers must live


def delivered(err, msg):
    if err is not None:
        print(f"failed {err}", flush=True)
    else:
        print(f"delivered {msg.offset()}", flush=True)


def create(partitions):
    futures = admin.create_topics([NewTopic(TOPIC, partitions, 1)], operation_timeout=WAIT_S)
    futures[TOPIC].result(WAIT_S)


def plain(n):
    p = Producer({"bootstrap.servers": boot, "enable.idempotence": False, "linger.ms": LINGER_MS})
    for i in range(n):
        p.produce(TOPIC, value=f"plain{i}".encode(), partition=0, on_delivery=delivered)
    assert p.flush(WAIT_S) == 0


def finish(p, end, tid):
    if end == "commit":
        p.commit_transaction(WAIT_S)
    elif end == "abort":
        p.abort_transaction(WAIT_S)
    else:
        raise SystemExit(f"txn {tid}: END is commit or abort, not {end!r}")


def txn(tid, end, values):
    p = Producer({"bootstrap.servers": boot, "transactional.id": tid, "linger.ms": LINGER_MS})
    p.init_transactions(WAIT_S)
    p.begin_transaction()
    for v in values:
        p.produce(TOPIC, value=v.encode(), partition=0, on_delivery=delivered)
    assert p.flush(WAIT_S) == 0
    if end == "open":
        open_producers[tid] = p
    else:
        finish(p, end, tid)


def end_open(tid, end):
    finish(open_producers.pop(tid), end, tid)


def consume(isolation):
    c = Consumer({"bootstrap.servers": boot, "group.id": f"reader-{isolation}",
                  "enable.auto.commit": False, "isolation.level": isolation,
                  "enable.partition.eof": True})
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
                print(f"eof {m.offset()}", flush=True)
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
    elif command == "create":
        create(int(args[0]))
    elif command == "plain":
        plain(int(args[0]))
    elif command == "txn":
        txn(args[0], args[1], args[2:])
    elif command == "end":
        end_open(args[0], args[1])
    elif command == "consume":
        consume(args[0])
    elif command == "metadata":
        metadata()
    else:
        raise SystemExit(f"unknown command {command!r}")
    print(f"ok {command}", flush=True)
os._exit(0)
