"""Members of one consumer group split a 6-partition TOPIC (already
created) and hand partitions over (tests/serve/groups.rs). MEMBER is
ck_group_member.py or kp_group_member.py, each member its own process;
STRATEGY its assignor. Steps (`full`): three members split the topic;
one closes and the other two take its partitions; one is killed (SIGKILL)
and the last takes its partitions once its session (6 s) ran out; that
one closes; three new members resume from the committed offsets. `short`
stops after the close. `restart` (driven by tests/serve/script.rs): prints
`ready`; three members split and read; all three close; prints `stopped`
and waits for a line on standard input (the test may kill -9 the server
and restart it meanwhile); three new members split and resume from the
committed offsets. `live` (driven by tests/serve/script.rs): prints
`ready`; two members split and read; prints `stopped` and waits for a line
(the test kills the server with SIGKILL and restarts it meanwhile, the
members alive); a third member joins, all three split and read; after each
split `members ID,ID,...` (the group's member ids, DescribeGroups). Ten records per partition are produced after each
step and read before the next. Prints, per step: `split N,N,N` (the
members' partition counts, sorted, once they own every partition exactly
once), `read N` (distinct records read so far), after the first split
`describe ...` (confluent-kafka only, see describe()); `expired_after_ms N` (the
kill to the takeover); at the end `read twice 0` (records read twice
beyond those whose commit failed in a rebalance) and `uncommitted N`."""
import os
import queue
import subprocess
import sys
import threading
import time

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

boot, topic, group, strategy, member_script, mode = sys.argv[1:7]
PARTITIONS = range(6)
here = os.path.dirname(os.path.abspath(__file__))
lines = queue.Queue()
members = {}
assigned = {}
reads = []
uncommitted = set()
produced = 0
# Idempotent: a retried batch (a slow, loaded server) is not written twice,
# which would read as a record read twice.
producer = Producer({"bootstrap.servers": boot, "linger.ms": 5, "enable.idempotence": True})


def start(name):
    p = subprocess.Popen([sys.executable, os.path.join(here, member_script), boot, topic,
                          group, strategy], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, bufsize=1)

    def pump():
        for line in p.stdout:
            lines.put((name, line.split()))
        lines.put((name, ["exited"]))

    threading.Thread(target=pump, daemon=True).start()
    members[name] = p
    assigned[name] = set()


def take(seconds):
    """Handles the members' lines for up to SECONDS."""
    try:
        name, words = lines.get(timeout=seconds)
    except queue.Empty:
        return
    if words[0] == "assigned":
        assigned[name] = set() if words[1] == "-" else {int(p) for p in words[1].split(",")}
    elif words[0] == "read":
        reads.append((int(words[1]), int(words[2])))
    elif words[0] == "uncommitted":
        uncommitted.add((int(words[1]), int(words[2])))
    elif words[0] == "exited":
        assigned.pop(name, None)
    else:
        print(name, *words, file=sys.stderr, flush=True)


def wait_for(what, cond, seconds=40):
    deadline = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > deadline:
            sys.exit(f"timed out waiting for {what}: assigned {assigned}, "
                     f"{len(set(reads))} read of {produced}")
        take(0.05)


def split_of(names):
    owned = [assigned.get(n, set()) for n in names]
    every = [p for o in owned for p in o]
    if sorted(every) == list(PARTITIONS) and all(owned):
        return ",".join(str(len(o)) for o in sorted(owned, key=len))
    return None


def settle(names):
    wait_for(f"a split among {names}", lambda: split_of(names) is not None)
    # The split holds (no rebalance still under way).
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:
        take(0.05)
    wait_for(f"a split among {names}", lambda: split_of(names) is not None)
    print("split", split_of(names), flush=True)


def produce_and_read():
    global produced
    for p in PARTITIONS:
        for i in range(10):
            producer.produce(topic, value=f"{p}-{produced + i}".encode(), partition=p)
    producer.flush(15)
    produced += 10 * len(PARTITIONS)
    wait_for("every record read", lambda: len(set(reads)) >= produced)
    print("read", len(set(reads)), flush=True)


def describe():
    """DescribeGroups through the AdminClient, as `describe STATE
    PROTOCOL MEMBERS PARTITIONS HOSTS` (PARTITIONS: assigned, summed over
    the members; HOSTS: the distinct client hosts)."""
    admin = AdminClient({"bootstrap.servers": boot})
    d = admin.describe_consumer_groups([group])[group].result(15)
    partitions = sum(len(m.assignment.topic_partitions) for m in d.members)
    hosts = ",".join(sorted({m.host for m in d.members}))
    print("describe", d.state.name, d.partition_assignor, len(d.members), partitions, hosts,
          flush=True)


def member_ids():
    """The group's member ids, sorted, as DescribeGroups gives them."""
    admin = AdminClient({"bootstrap.servers": boot})
    d = admin.describe_consumer_groups([group])[group].result(15)
    print("members", ",".join(sorted(m.member_id for m in d.members)), flush=True)


def close(name):
    members[name].stdin.write("close\n")
    members[name].stdin.flush()
    members[name].wait(30)
    wait_for(f"{name} gone", lambda: name not in assigned)


if mode == "live":
    print("ready", flush=True)
    for name in ("a", "b"):
        start(name)
    settle(["a", "b"])
    member_ids()
    produce_and_read()
    print("stopped", flush=True)
    sys.stdin.readline()
    start("c")
    settle(["a", "b", "c"])
    member_ids()
    produce_and_read()
    for name in ("a", "b", "c"):
        close(name)
    twice = {r for r in reads if reads.count(r) > 1} - uncommitted
    print("read twice", len(twice), flush=True)
    print("uncommitted", len(uncommitted), flush=True)
    sys.exit(0)
if mode == "restart":
    print("ready", flush=True)
for name in ("a", "b", "c"):
    start(name)
settle(["a", "b", "c"])
if member_script.startswith("ck_"):
    describe()
produce_and_read()
if mode == "restart":
    for name in ("a", "b", "c"):
        close(name)
    print("stopped", flush=True)
    sys.stdin.readline()
    for name in ("d", "e", "f"):
        start(name)
    settle(["d", "e", "f"])
    produce_and_read()
    for name in ("d", "e", "f"):
        close(name)
else:
    close("c")
    settle(["a", "b"])
    produce_and_read()
if mode == "full":
    killed_at = time.monotonic()
    members["b"].kill()
    members["b"].wait(10)
    settle(["a"])
    print("expired_after_ms", int((time.monotonic() - killed_at) * 1000), flush=True)
    produce_and_read()
    close("a")
    for name in ("d", "e", "f"):
        start(name)
    settle(["d", "e", "f"])
    produce_and_read()
    for name in ("d", "e", "f"):
        close(name)
elif mode == "short":
    for name in ("a", "b"):
        close(name)
twice = {r for r in reads if reads.count(r) > 1} - uncommitted
print("read twice", len(twice), flush=True)
print("uncommitted", len(uncommitted), flush=True)
