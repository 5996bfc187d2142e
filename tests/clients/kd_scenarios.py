"""The Kafka differential scenarios (tests/kafka_differential.rs), run
against Apache Kafka and against `mk-tui serve --rules kafka` alike:

    kd_scenarios.py BOOTSTRAP SCENARIO TAG

runs one scenario on confluent-kafka (TAG makes its topic, group and
transactional ids unique) and prints one JSON document of its
observables, normalised by kd_common. `kd_scenarios.py list` prints the
scenario names, one a line."""
import json
import struct
import subprocess
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, KafkaException, TopicPartition
from confluent_kafka.admin import NewTopic, OffsetSpec

import kd_raw
import kd_raw_groups
from kd_common import (Ctx, both, committed, deliver, ends, err, list_offsets, read,
                       settled_committed, settled_ends, wait_hw)

SCENARIOS = {}
# Scenarios the test runs itself, around stopping a broker.
PHASES = {}


def scenario(f):
    SCENARIOS[f.__name__] = f
    return f


def phase(f):
    PHASES[f.__name__] = f
    return f


# --- produce and read -------------------------------------------------


# Records stamped in 1970 (these scenarios' explicit stamps, kd_raw's
# timestamp 0) are older than Kafka's 7-day retention.ms default: its
# retention check (30 s after start, then every 5 minutes) deletes them
# if it runs between the write and the read, so a scenario that sends
# such stamps keeps its topic forever on both clusters.
KEEP_1970 = {"retention.ms": "-1"}


@scenario
def acks_1(ctx):
    t = ctx.create("t")
    offsets = deliver(ctx.producer(acks=1), t, [f"v{i}".encode() for i in range(5)],
                      keys=[f"k{i}".encode() for i in range(5)])
    wait_hw(ctx, t, 5)
    return {"offsets": offsets, "read": both(ctx, t), "ends": ends(ctx, t)}


@scenario
def acks_all(ctx):
    t = ctx.create("t")
    offsets = deliver(ctx.producer(acks="all"), t, [f"v{i}".encode() for i in range(5)])
    return {"offsets": offsets, "read": both(ctx, t), "ends": ends(ctx, t)}


@scenario
def acks_0(ctx):
    t = ctx.create("t")
    offsets = deliver(ctx.producer(acks=0), t, [f"v{i}".encode() for i in range(3)])
    wait_hw(ctx, t, 3)
    return {"offsets": offsets, "read": both(ctx, t), "ends": ends(ctx, t)}


@scenario
def three_partitions(ctx):
    t = ctx.create("t", partitions=3)
    p = ctx.producer()
    offsets = {str(part): deliver(p, t, [f"p{part}-{i}".encode() for i in range(part + 1)],
                                  partition=part) for part in range(3)}
    return {"offsets": offsets,
            "read": {str(part): read(ctx, t, part) for part in range(3)},
            "hw": {str(part): ends(ctx, t, part)["hw"] for part in range(3)}}


@scenario
def keyed_partitioner(ctx):
    # Where a key goes is the client's choice (murmur2 over the partition
    # count), so both clusters must see the same spread.
    t = ctx.create("t", partitions=3)
    p = ctx.producer(partitioner="murmur2")
    keys = [f"key-{i}".encode() for i in range(12)]
    placed = []

    def cb(err_, msg):
        placed.append((msg.key().decode(), msg.partition(), msg.offset()))

    for k in keys:
        p.produce(t, key=k, value=b"x", on_delivery=cb)
    p.flush(30)
    return {"placed": sorted(placed)}


@scenario
def null_key_and_empty_value(ctx):
    t = ctx.create("t")
    offsets = deliver(ctx.producer(), t, [b"", b"no-key"])
    return {"offsets": offsets, "read": both(ctx, t)}


@scenario
def tombstone(ctx):
    t = ctx.create("t")
    offsets = deliver(ctx.producer(), t, [None], keys=[b"gone"])
    return {"offsets": offsets, "read": read(ctx, t)}


@scenario
def headers(ctx):
    t = ctx.create("t")
    offsets = deliver(ctx.producer(), t, [b"with-headers"],
                      headers=[("trace", b"abc"), ("trace", b"def"), ("empty", b"")])
    return {"offsets": offsets, "read": read(ctx, t)}


@scenario
def binary_records(ctx):
    # What applications send first: a Long key, a schema-registry value (a
    # zero byte, a 4-byte schema id, then bytes that are not UTF-8), a
    # binary header; once plain and once zstd-compressed. Kafka keeps any
    # bytes and returns them as sent.
    t = ctx.create("t")
    keys = [struct.pack(">q", -i - 1) for i in range(4)]
    values = [b"\x00\x00\x00\x00\x07" + bytes([0xc3, 0x28, 0xff, i]) for i in range(4)]
    offsets = deliver(ctx.producer(), t, values[:2], keys=keys[:2],
                      headers=[("schema", b"\xfe\x01"), ("text", b"ok")])
    offsets += deliver(ctx.producer(**{"compression.type": "zstd"}), t, values[2:],
                       keys=keys[2:])
    return {"offsets": offsets, "read": both(ctx, t)}


@scenario
def create_time(ctx):
    t = ctx.create("t", config=KEEP_1970)
    offsets = deliver(ctx.producer(), t, [b"old", b"older"], timestamp=1_000_000)
    return {"offsets": offsets, "read": read(ctx, t, sent_ts=1_000_000)}


def compressed(ctx, codec):
    """Four records in one compressed batch: their delivery (offsets, or
    the set of errors) and whether all four read back intact."""
    t = ctx.create("t")
    values = [f"{codec}-{i}-".encode() * 20 for i in range(4)]
    offsets = deliver(ctx.producer(**{"compression.type": codec, "linger.ms": 50}), t, values)
    errors = sorted({o["error"] for o in offsets if isinstance(o, dict)})
    got = [r.get("value") for r in read(ctx, t)]
    return {"delivered": {"errors": errors} if errors else offsets,
            "read": {"count": len(got), "intact": got == [v.decode() for v in values]}}


@scenario
def compression_gzip(ctx):
    return compressed(ctx, "gzip")


@scenario
def compression_snappy(ctx):
    return compressed(ctx, "snappy")


@scenario
def compression_lz4(ctx):
    return compressed(ctx, "lz4")


@scenario
def compression_zstd(ctx):
    return compressed(ctx, "zstd")


@scenario
def list_offsets_by_timestamp(ctx):
    t = ctx.create("t", config=KEEP_1970)
    p = ctx.producer()
    offsets = [deliver(p, t, [f"at-{ts}".encode()], timestamp=ts)[0]
               for ts in (1_000_000, 2_000_000, 3_000_000)]
    found = {str(ts): list_offsets(ctx, t, 0, OffsetSpec.for_timestamp(ts))
             for ts in (0, 1_500_000, 3_000_000, 4_000_000)}
    return {"offsets": offsets, "for_timestamp": found,
            "max_timestamp": list_offsets(ctx, t, 0, OffsetSpec.max_timestamp())}


@scenario
def empty_partition(ctx):
    t = ctx.create("t")
    return {"ends": ends(ctx, t), "read": both(ctx, t)}


@scenario
def unknown_topic(ctx):
    p = ctx.producer(**{"message.timeout.ms": 4000})
    offsets = deliver(p, ctx.topic("never-created"), [b"x"], timeout=10)
    return {"offsets": offsets,
            "list_offsets": list_offsets(ctx, ctx.topic("never-created"), 0,
                                         OffsetSpec.latest())}


@scenario
def offset_out_of_range(ctx):
    t = ctx.create("t")
    deliver(ctx.producer(), t, [b"a", b"b", b"c"])
    c = ctx.consumer(**{"auto.offset.reset": "error"})
    c.assign([TopicPartition(t, 0, 10)])
    seen = None
    deadline = time.monotonic() + 15
    while seen is None and time.monotonic() < deadline:
        msg = c.poll(0.2)
        if msg is not None:
            seen = {"error": msg.error().name()} if msg.error() else {"offset": msg.offset()}
    c.close()
    return {"poll": seen}


def created_or_refused(ctx, topic):
    """CreateTopics of one NewTopic: "created", or the error's name."""
    try:
        ctx.admin.create_topics([topic])[topic.topic].result(20)
        return "created"
    except KafkaException as e:
        return e.args[0].name()


@scenario
def create_topic_refusals(ctx):
    ctx.create("t")
    return {what: created_or_refused(ctx, topic)
            for what, topic in (("exists", NewTopic(ctx.topic("t"), 1, 3)),
                                ("rf_4", NewTopic(ctx.topic("rf4"), 1, 4)),
                                ("bad_name", NewTopic(ctx.topic("bad name!"), 1, 1)))}


# Kafka Streams' repartition topic configs (and two that Spring and
# Connect set): taken on both clusters, and records go through.
FRAMEWORK_CONFIGS = {"cleanup.policy": "delete", "segment.bytes": "52428800", "retention.ms": "-1",
                     "message.timestamp.type": "CreateTime", "compression.type": "lz4",
                     "max.message.bytes": "2097152"}


@scenario
def framework_topic_configs(ctx):
    t = ctx.create("t", config=FRAMEWORK_CONFIGS)
    offsets = deliver(ctx.producer(), t, [b"through"])
    out = {"offsets": offsets, "read": read(ctx, t)}
    for what, config in (("segment_bytes_ten", {"segment.bytes": "ten"}),
                         ("dirty_ratio_2", {"min.cleanable.dirty.ratio": "2"}),
                         ("compression_brotli", {"compression.type": "brotli"}),
                         ("preallocate_maybe", {"preallocate": "maybe"})):
        out[what] = created_or_refused(ctx, NewTopic(ctx.topic(what), 1, 3, config=config))
    return out


@scenario
def delete_topic(ctx):
    """A topic deleted after a record and a group's commit, created again
    under its name: the new topic starts empty, and the group's committed
    offset went with the old one."""
    t = ctx.create("t")
    deliver(ctx.producer(), t, [b"x", b"y"])
    c = ctx.consumer(**{"group.id": ctx.topic("g")})
    c.commit(offsets=[TopicPartition(t, 0, 2)], asynchronous=False)
    c.close()
    try:
        ctx.admin.delete_topics([t], operation_timeout=15)[t].result(20)
        deleted = "deleted"
    except KafkaException as e:
        deleted = e.args[0].name()
    listed = None
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        listed = t in ctx.admin.list_topics(timeout=5).topics
        if not listed or deleted != "deleted":
            break
        time.sleep(0.2)
    out = {"delete": deleted, "still_listed": listed}
    if deleted != "deleted":
        return out
    deadline = time.monotonic() + 30
    while True:  # Kafka frees the name once the deletion completed.
        try:
            ctx.create("t")
            break
        except KafkaException as e:
            if e.args[0].name() != "TOPIC_ALREADY_EXISTS" or time.monotonic() > deadline:
                out["created_again"] = e.args[0].name()
                return out
            time.sleep(0.2)
    deliver(ctx.producer(), t, [b"z"])
    out["records_after"] = read(ctx, t)
    out["committed_after"] = committed(ctx, ctx.topic("g"), t)
    return out


@scenario
def metadata(ctx):
    t = ctx.create("t", partitions=2)
    md = ctx.admin.list_topics(timeout=10)
    parts = md.topics[t].partitions
    return {"brokers": len(md.brokers),
            "partitions": {str(i): {"replicas": len(p.replicas), "isr": len(p.isrs),
                                    "leader_in_replicas": p.leader in p.replicas}
                           for i, p in sorted(parts.items())}}


@scenario
def many_records_one_batch(ctx):
    t = ctx.create("t")
    offsets = deliver(ctx.producer(**{"linger.ms": 200}), t,
                      [f"m{i}".encode() for i in range(500)])
    got = read(ctx, t)
    return {"first_last": [offsets[0], offsets[-1]], "contiguous": offsets == list(range(500)),
            "read_count": len(got), "ends": ends(ctx, t)}


@scenario
def idempotent_producer(ctx):
    t = ctx.create("t")
    offsets = deliver(ctx.producer(**{"enable.idempotence": True}), t,
                      [f"i{i}".encode() for i in range(10)])
    return {"offsets": offsets, "read": [r["value"] for r in read(ctx, t)]}


# --- transactions -----------------------------------------------------


def txn_producer(ctx, txn, **conf):
    p = ctx.producer(**{"transactional.id": f"{ctx.tag}-{txn}", **conf})
    p.init_transactions(30)
    return p


@scenario
def chapter8_experiment(ctx):
    t = ctx.create("out")
    tx = txn_producer(ctx, "tx-1")
    tx.begin_transaction()
    tx.produce(t, value=b"pending", partition=0)
    tx.flush(30)
    out = {"before_marker": both(ctx, t), "open_ends": ends(ctx, t)}
    tx.commit_transaction(30)
    settled_ends(ctx, t)
    out["after_commit"] = read(ctx, t, isolation="read_committed")
    tx2 = txn_producer(ctx, "tx-2")
    tx2.begin_transaction()
    tx2.produce(t, value=b"discard-me", partition=0)
    tx2.flush(30)
    tx2.abort_transaction(30)
    out["ends"] = settled_ends(ctx, t)
    out["after_abort"] = both(ctx, t)
    return out


@scenario
def chapter8_offsets_exercise(ctx):
    tin, tout = ctx.create("in"), ctx.create("out")
    group = f"{ctx.tag}-workers"
    deliver(ctx.producer(), tin, [f"i{i}".encode() for i in range(7)])
    worker = ctx.consumer("read_committed", **{"group.id": group})
    worker.assign([TopicPartition(tin, 0, OFFSET_BEGINNING)])
    got = []
    deadline = time.monotonic() + 20
    while len(got) < 7 and time.monotonic() < deadline:
        msg = worker.poll(0.2)
        if msg is not None and not msg.error():
            got.append(msg.value().decode())
    tx = txn_producer(ctx, "tx-1")
    tx.begin_transaction()
    tx.produce(tout, value=b"result-1", partition=0)
    tx.send_offsets_to_transaction([TopicPartition(tin, 0, 7)],
                                   worker.consumer_group_metadata(), 30)
    tx.flush(30)
    out = {"worker_read": got,
           "committed_before": committed(ctx, group, tin),
           "stable_before": committed(ctx, group, tin, isolation="read_committed", timeout=2)}
    tx.commit_transaction(30)
    settled_ends(ctx, tout)
    out["committed_after"] = settled_committed(ctx, group, tin)
    out["stable_after"] = committed(ctx, group, tin, isolation="read_committed")
    out["out"] = read(ctx, tout, isolation="read_committed")
    worker.close()
    return out


@scenario
def send_offsets_aborted(ctx):
    tin, tout = ctx.create("in"), ctx.create("out")
    group = f"{ctx.tag}-g"
    deliver(ctx.producer(), tin, [b"a", b"b", b"c"])
    worker = ctx.consumer(**{"group.id": group})
    tx = txn_producer(ctx, "tx")
    tx.begin_transaction()
    tx.produce(tout, value=b"never", partition=0)
    tx.send_offsets_to_transaction([TopicPartition(tin, 0, 3)],
                                   worker.consumer_group_metadata(), 30)
    tx.flush(30)
    tx.abort_transaction(30)
    worker.close()
    ends_ = settled_ends(ctx, tout)
    return {"committed": committed(ctx, group, tin), "out": both(ctx, tout), "ends": ends_}


@scenario
def commit_abort_commit(ctx):
    t = ctx.create("t")
    tx = txn_producer(ctx, "tx")
    for i, end in enumerate(("commit", "abort", "commit")):
        tx.begin_transaction()
        deliver(tx, t, [f"{end}-{i}a".encode(), f"{end}-{i}b".encode()])
        getattr(tx, f"{end}_transaction")(30)
    ends_ = settled_ends(ctx, t)
    return {"read": both(ctx, t), "ends": ends_}


@scenario
def open_transaction_lso(ctx):
    t = ctx.create("t")
    deliver(ctx.producer(), t, [b"plain-0", b"plain-1"])
    tx = txn_producer(ctx, "tx")
    tx.begin_transaction()
    offsets = deliver(tx, t, [b"open-0", b"open-1"])
    out = {"offsets": offsets, "open": both(ctx, t), "open_ends": ends(ctx, t)}
    tx.commit_transaction(30)
    out["committed_ends"] = settled_ends(ctx, t)
    return out


@scenario
def transaction_two_partitions(ctx):
    t = ctx.create("t", partitions=2)
    tx = txn_producer(ctx, "tx")
    tx.begin_transaction()
    offsets = {str(p): deliver(tx, t, [f"p{p}".encode()], partition=p) for p in range(2)}
    tx.commit_transaction(30)
    return {"offsets": offsets,
            "ends": {str(p): settled_ends(ctx, t, p) for p in range(2)},
            "read": {str(p): read(ctx, t, p, "read_committed") for p in range(2)}}


@scenario
def empty_transaction(ctx):
    t = ctx.create("t")
    tx = txn_producer(ctx, "tx")
    tx.begin_transaction()
    tx.commit_transaction(30)
    tx.begin_transaction()
    tx.abort_transaction(30)
    return {"ends": settled_ends(ctx, t)}


@scenario
def zombie_commit_fenced(ctx):
    """Two real processes share a transactional.id: this one writes and
    holds its transaction open while kd_fresh.py initialises the id."""
    t = ctx.create("out")
    txn = f"{ctx.tag}-app"
    zombie = ctx.producer(**{"transactional.id": txn})
    zombie.init_transactions(30)
    zombie.begin_transaction()
    deliver(zombie, t, [b"from-zombie"])
    fresh = run_fresh(ctx.boot, txn, t, "from-fresh")
    try:
        zombie.commit_transaction(30)
        outcome = "committed"
    except KafkaException as e:
        outcome = err(e)
    ends_ = settled_ends(ctx, t)
    return {"fresh": fresh, "zombie_commit": outcome, "read": both(ctx, t), "ends": ends_}


@scenario
def zombie_write_fenced(ctx):
    t = ctx.create("out")
    txn = f"{ctx.tag}-late"
    zombie = ctx.producer(**{"transactional.id": txn})
    zombie.init_transactions(30)
    zombie.begin_transaction()
    first = deliver(zombie, t, [b"w1"])
    fresh = run_fresh(ctx.boot, txn, t, "from-fresh")
    # No delivery callback here: confluent-kafka 2.16.1 cannot hand a
    # fatal error to one (its KafkaError methods raise SystemError), so the
    # late write's fate is read from the commit that follows it.
    zombie.produce(t, value=b"late", partition=0)
    try:
        zombie.flush(30)
        late = "flushed"
    except KafkaException as e:
        late = err(e)
    try:
        zombie.commit_transaction(30)
        outcome = "committed"
    except KafkaException as e:
        outcome = err(e)
    settled_ends(ctx, t)
    return {"first": first, "fresh": fresh, "late_write": late, "zombie_commit": outcome,
            "read_committed": read(ctx, t, isolation="read_committed")}


def run_fresh(boot, txn, topic, value):
    """kd_fresh.py in its own process: the new instance of `txn`."""
    here = __file__.rsplit("/", 1)[0]
    out = subprocess.run([sys.executable, f"{here}/kd_fresh.py", boot, txn, topic, value],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1:]}
    return json.loads(out.stdout)


@scenario
def transaction_timeout(ctx):
    """A transaction left open past the producer's transaction.timeout.ms
    (3 s): does the cluster abort it, and what does the late commit get?"""
    t = ctx.create("t")
    tx = txn_producer(ctx, "tx", **{"transaction.timeout.ms": 3000, "message.timeout.ms": 3000})
    tx.begin_transaction()
    offsets = deliver(tx, t, [b"slow"])
    time.sleep(9)
    ends_after_timeout = ends(ctx, t)
    try:
        tx.commit_transaction(15)
        outcome = "committed"
    except KafkaException as e:
        outcome = err(e)
    return {"offsets": offsets, "ends_after_timeout": ends_after_timeout,
            "late_commit": outcome, "read": both(ctx, t)}


# --- groups -----------------------------------------------------------


@scenario
def group_commit(ctx):
    t = ctx.create("t")
    group = f"{ctx.tag}-g"
    deliver(ctx.producer(), t, [f"g{i}".encode() for i in range(5)])
    c = ctx.consumer(**{"group.id": group, "auto.offset.reset": "earliest",
                        "enable.partition.eof": False})
    c.subscribe([t])
    got = []
    deadline = time.monotonic() + 30
    while len(got) < 5 and time.monotonic() < deadline:
        msg = c.poll(0.2)
        if msg is not None and not msg.error():
            got.append(msg.offset())
    c.commit(asynchronous=False)
    before = committed(ctx, group, t)
    c.commit(offsets=[TopicPartition(t, 0, 2)], asynchronous=False)
    c.close()
    return {"read": got, "committed": before, "rewound": committed(ctx, group, t),
            "unknown_group": committed(ctx, f"{ctx.tag}-nobody", t)}


@scenario
def group_members(ctx):
    """Three members of one group (range, the classic protocol) split six
    partitions, the group described; one closes and two share them; all
    close and the group is described empty."""
    t = ctx.create("t", partitions=6)
    group = f"{ctx.tag}-members"
    owned = {}

    def member(name):
        c = ctx.consumer(**{"group.id": group, "auto.offset.reset": "earliest",
                            "enable.partition.eof": False, "session.timeout.ms": 6000,
                            "heartbeat.interval.ms": 500,
                            "partition.assignment.strategy": "range"})

        def on_assign(_c, partitions):
            owned[name] = sorted(tp.partition for tp in partitions)

        def on_revoke(_c, _partitions):
            owned[name] = []

        c.subscribe([t], on_assign=on_assign, on_revoke=on_revoke)
        return c

    members = {name: member(name) for name in "abc"}

    def split(names):
        """The members' assignments once they own every partition, held
        for 1.5 s (no rebalance under way)."""
        deadline = time.monotonic() + 40
        since = None
        while time.monotonic() < deadline:
            for n in names:
                members[n].poll(0.05)
            every = sorted(p for n in names for p in owned.get(n, []))
            if every == list(range(6)) and all(owned.get(n) for n in names):
                since = since or time.monotonic()
                if time.monotonic() - since > 1.5:
                    break
            else:
                since = None
        return sorted(owned.get(n, []) for n in names)

    def describe():
        d = ctx.admin.describe_consumer_groups([group])[group].result(15)
        return {"state": d.state.name, "assignor": d.partition_assignor,
                "members": sorted([sorted(tp.partition for tp in m.assignment.topic_partitions),
                                   m.client_id, m.host] for m in d.members)}

    out = {"three": split("abc"), "described_three": describe()}
    members.pop("c").close()
    out["two"] = split("ab")
    out["described_two"] = describe()
    for c in members.values():
        c.close()
    out["described_empty"] = describe()
    return out


# --- kafka-python (its own API versions: EndTxn v3, AddPartitionsToTxn v3)


def kp_read(ctx, topic, isolation):
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KpPartition
    c = KafkaConsumer(bootstrap_servers=ctx.boot, isolation_level=isolation,
                      enable_auto_commit=False, consumer_timeout_ms=2000)
    c.assign([KpPartition(topic, 0)])
    c.seek_to_beginning()
    out = [[m.offset, m.value.decode()] for m in c]
    c.close()
    return out


@scenario
def kafka_python_zombie(ctx):
    from kafka import KafkaProducer
    t = ctx.create("out")
    txn = f"{ctx.tag}-kp"

    def producer():
        p = KafkaProducer(bootstrap_servers=ctx.boot, transactional_id=txn,
                          request_timeout_ms=15000)
        p.init_transactions()
        return p

    zombie = producer()
    zombie.begin_transaction()
    offset = zombie.send(t, value=b"from-zombie", partition=0).get(15).offset
    fresh = producer()
    try:
        zombie.commit_transaction()
        outcome = "committed"
    except Exception as e:  # kafka.errors.ProducerFencedError and its kin
        outcome = type(e).__name__
    fresh.begin_transaction()
    fresh_offset = fresh.send(t, value=b"from-fresh", partition=0).get(15).offset
    fresh.commit_transaction()
    settled_ends(ctx, t)
    return {"zombie_offset": offset, "zombie_commit": outcome, "fresh_offset": fresh_offset,
            "read_committed": kp_read(ctx, t, "read_committed"),
            "read_uncommitted": kp_read(ctx, t, "read_uncommitted")}


@scenario
def kafka_python_aborted_reads(ctx):
    from kafka import KafkaProducer
    t = ctx.create("t")
    p = KafkaProducer(bootstrap_servers=ctx.boot, transactional_id=f"{ctx.tag}-kp",
                      request_timeout_ms=15000)
    p.init_transactions()
    offsets = []
    for i, end in enumerate(("commit", "abort", "commit")):
        p.begin_transaction()
        offsets.append(p.send(t, value=f"{end}-{i}".encode(), partition=0).get(15).offset)
        getattr(p, f"{end}_transaction")()
    p.close()
    ends_ = settled_ends(ctx, t)
    return {"offsets": offsets, "ends": ends_,
            "read_committed": kp_read(ctx, t, "read_committed"),
            "read_uncommitted": kp_read(ctx, t, "read_uncommitted")}


# --- raw protocol -----------------------------------------------------


@scenario
def raw_idempotent_duplicate(ctx):
    return kd_raw.idempotent_duplicate(ctx, ctx.create("t", config=KEEP_1970))


@scenario
def raw_sequence_gap(ctx):
    return kd_raw.sequence_gap(ctx, ctx.create("t", config=KEEP_1970))


@scenario
def raw_fenced_end_txn_by_version(ctx):
    return kd_raw.fenced_end_txn(ctx, ctx.create("t", config=KEEP_1970))


@scenario
def raw_aborted_transactions(ctx):
    t = ctx.create("t")
    tx = txn_producer(ctx, "tx")
    for i, end in enumerate(("commit", "abort", "abort", "commit")):
        tx.begin_transaction()
        deliver(tx, t, [f"{end}-{i}".encode()])
        getattr(tx, f"{end}_transaction")(30)
    settled_ends(ctx, t)
    return kd_raw.fetch_aborted(ctx, t)


@scenario
def raw_not_leader(ctx):
    return kd_raw.not_leader(ctx, ctx.create("t", config=KEEP_1970))


@scenario
def raw_unknown_topic_produce(ctx):
    return kd_raw.unknown_topic(ctx, ctx.topic("absent"))


@scenario
def raw_group_errors(ctx):
    return kd_raw_groups.group_errors(ctx, ctx.create("t"))


# --- a broker stopped (run by the test on its own, after the others) ---


@phase
def broker_down_setup(ctx):
    """Creates TAG-all (RF 3) and TAG-two (RF 2); names the broker the
    test is to stop: a follower of TAG-two, so that its ISR falls to one,
    below min.insync.replicas 2, while TAG-all keeps two."""
    ctx.create("all", rf=3)
    t = ctx.create("two", rf=2)
    p = ctx.admin.list_topics(t, timeout=10).topics[t].partitions[0]
    return {"stop": next(r for r in p.replicas if r != p.leader)}


@phase
def broker_down(ctx):
    """With the broker stopped (serve: a recording's stop_broker and a
    clock past replica.lag.time.max.ms), acks=all and acks=1 writes."""
    tall, ttwo = ctx.topic("all"), ctx.topic("two")
    isr = {}
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        md = ctx.admin.list_topics(timeout=10).topics
        isr = {name: len(md[t].partitions[0].isrs) for name, t in (("all", tall), ("two", ttwo))}
        # Each leader shrinks its own partition's ISR, each in its time.
        if isr == {"all": 2, "two": 1}:
            break
        time.sleep(0.5)
    quick = {"message.timeout.ms": 5000}
    out = {"isr": isr,
           "acks_all_rf3": deliver(ctx.producer(acks="all", **quick), tall, [b"a0", b"a1"]),
           "acks_all_rf2": deliver(ctx.producer(acks="all", **quick), ttwo, [b"b0"]),
           "acks_1_rf2": deliver(ctx.producer(acks=1, **quick), ttwo, [b"c0"]),
           "raw_acks_all_rf2": kd_raw.unknown_topic(ctx, ttwo)["produce"]}
    out["ends"] = {"all": ends(ctx, tall), "two": ends(ctx, ttwo)}
    out["read"] = {"all": [r["value"] for r in read(ctx, tall)],
                   "two": [r["value"] for r in read(ctx, ttwo)]}
    return out



def main():
    if sys.argv[1:] == ["list"]:
        print("\n".join(SCENARIOS))
        return
    boot, name, tag = sys.argv[1:4]
    doc = {**SCENARIOS, **PHASES}[name](Ctx(boot, tag))
    print(json.dumps(doc, sort_keys=True))


if __name__ == "__main__":
    main()
