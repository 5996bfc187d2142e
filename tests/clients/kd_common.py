"""Helpers of the Kafka differential scenarios (kd_scenarios.py): one
cluster's observables, normalised so that Apache Kafka and `mk-tui serve`
can be compared field by field. Producer ids and wall-clock times are
masked (they differ by nature); offsets, keys, values, headers, error
names and explicit timestamps are kept."""
import time

from confluent_kafka import (OFFSET_BEGINNING, Consumer, IsolationLevel, KafkaError, KafkaException, Producer,
                             TopicPartition)
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

# A timestamp this close to the wall clock is "now" (a broker's or a
# client's clock), not one the scenario chose.
NOW_WINDOW_MS = 3_600_000


class Ctx:
    def __init__(self, boot, tag):
        self.boot = boot
        self.tag = tag
        self.admin = AdminClient({"bootstrap.servers": boot})

    def topic(self, name):
        """The scenario's topic name, unique per run."""
        return f"{self.tag}-{name}"

    def create(self, name, partitions=1, rf=3, config=None):
        t = self.topic(name)
        self.admin.create_topics([NewTopic(t, partitions, rf, config=config or {})])[t].result(20)
        # Metadata may lag the creation on a multi-broker cluster.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            md = self.admin.list_topics(t, timeout=5).topics.get(t)
            if md is not None and md.error is None and len(md.partitions) == partitions and all(
                    p.leader >= 0 for p in md.partitions.values()) and all(
                    not isinstance(list_offsets(self, t, p, OffsetSpec.latest(), retry_s=0), dict)
                    for p in range(partitions)):
                # Every leader knows the topic (a broker's metadata can lag
                # the one that answered, and ListOffsets would get
                # UNKNOWN_TOPIC_OR_PART).
                return t
            time.sleep(0.1)
        raise SystemExit(f"topic {t} has no leaders after 20 s")

    def producer(self, **conf):
        base = {"bootstrap.servers": self.boot, "linger.ms": 5, "message.timeout.ms": 15000}
        base.update(conf)
        return Producer(base)

    def consumer(self, isolation="read_uncommitted", **conf):
        base = {"bootstrap.servers": self.boot, "group.id": f"{self.tag}-reader",
                "enable.auto.commit": False, "isolation.level": isolation,
                "enable.partition.eof": True}
        base.update(conf)
        return Consumer(base)


def ts_kind(ts, sent=None):
    """A record timestamp, normalised: the value sent if it came back as
    sent, "now" for a wall-clock stamp (the producer's or the broker's:
    it differs run to run), else "other" (a clock of another kind)."""
    kind, value = ts
    if sent is not None and value == sent:
        return value
    if abs(value - time.time() * 1000) < NOW_WINDOW_MS:
        return "now"
    return "other"


def exact(b):
    """Bytes as text when they are UTF-8, else as "hex:..." (never lossy,
    so binary records compare byte for byte)."""
    if b is None:
        return None
    try:
        return b.decode()
    except UnicodeDecodeError:
        return "hex:" + b.hex()


def record(msg, sent_ts=None):
    headers = msg.headers()
    return {
        "offset": msg.offset(),
        "key": exact(msg.key()),
        "value": exact(msg.value()),
        "headers": None if not headers else [[k, exact(v)] for k, v in headers],
        "timestamp": ts_kind(msg.timestamp(), sent_ts),
    }


def read(ctx, topic, partition=0, isolation="read_uncommitted", sent_ts=None, timeout=20):
    """Every record of topic-partition from the start up to the end the
    isolation level sees (partition EOF), or the error the consumer met."""
    c = ctx.consumer(isolation)
    c.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
    out = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            msg = c.poll(0.2)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    return out
                return out + [{"error": msg.error().name()}]
            out.append(record(msg, sent_ts))
        return out + [{"error": "no partition EOF in time"}]
    finally:
        c.close()


def both(ctx, topic, partition=0, sent_ts=None):
    return {iso: read(ctx, topic, partition, iso, sent_ts)
            for iso in ("read_uncommitted", "read_committed")}


# ListOffsets errors that pass (metadata catching up, a leader moving):
# retried for a few seconds, as an application would, before they count.
TRANSIENT = {"_NOENT", "_TRANSPORT", "_TIMED_OUT", "REQUEST_TIMED_OUT", "NOT_LEADER_OR_FOLLOWER",
             "LEADER_NOT_AVAILABLE", "UNKNOWN_TOPIC_OR_PART"}


def list_offsets(ctx, topic, partition, spec, isolation="read_uncommitted", retry_s=5):
    """ListOffsets through the admin client: the offset, or the error."""
    level = (IsolationLevel.READ_COMMITTED if isolation == "read_committed"
             else IsolationLevel.READ_UNCOMMITTED)
    tp = TopicPartition(topic, partition)
    deadline = time.monotonic() + retry_s
    while True:
        try:
            res = ctx.admin.list_offsets({tp: spec}, isolation_level=level,
                                         request_timeout=15)[tp].result(20)
            return res.offset
        except KafkaException as e:
            name = e.args[0].name()
            if name not in TRANSIENT or time.monotonic() > deadline:
                return {"error": name}
            # _NOENT: the admin client's metadata has no leader for the
            # topic yet, and a busy machine can keep it so for longer than
            # the retries; asking for the topic's metadata refreshes it.
            try:
                ctx.admin.list_topics(topic=topic, timeout=5)
            except KafkaException:
                pass
        time.sleep(0.2)


def ends(ctx, topic, partition=0):
    """HW (latest, read_uncommitted), LSO (latest, read_committed) and the
    log start offset (earliest), as ListOffsets answers them."""
    return {
        "earliest": list_offsets(ctx, topic, partition, OffsetSpec.earliest()),
        "hw": list_offsets(ctx, topic, partition, OffsetSpec.latest()),
        "lso": list_offsets(ctx, topic, partition, OffsetSpec.latest(), "read_committed"),
    }


def settled_ends(ctx, topic, partition=0, timeout=15):
    """ends() once the LSO has caught up with the HW: Kafka answers EndTxn
    before the markers are written (they follow asynchronously), so the
    ends right after a commit are a race; the settled ones are not."""
    deadline = time.monotonic() + timeout
    while True:
        e = ends(ctx, topic, partition)
        # A passing error still there after list_offsets' own retries (a
        # new topic missing from a loaded client's metadata: _NOENT) is
        # retried like an unsettled LSO, until the same deadline.
        passing = any(isinstance(v, dict) and v.get("error") in TRANSIENT for v in e.values())
        if (e["lso"] == e["hw"] and not passing) or time.monotonic() > deadline:
            return e
        time.sleep(0.1)


def deliver(producer, topic, values, partition=0, keys=None, timeout=30, **kw):
    """Produces values; returns each one's delivery: its offset or error."""
    results = [None] * len(values)

    def cb(i):
        def done(error, msg):
            results[i] = {"error": error.name()} if error else msg.offset()
        return done

    for i, v in enumerate(values):
        args = dict(kw)
        if keys is not None:
            args["key"] = keys[i]
        if partition is not None:
            args["partition"] = partition
        try:
            producer.produce(topic, value=v, on_delivery=cb(i), **args)
        except KafkaException as e:
            results[i] = err(e)
    producer.flush(timeout)
    return results


def err(e):
    """A KafkaException as its error name and whether it is fatal."""
    e = e.args[0]
    return {"error": e.name(), "fatal": e.fatal()}


def committed(ctx, group, topic, partition=0, isolation="read_uncommitted", timeout=10):
    c = Consumer({"bootstrap.servers": ctx.boot, "group.id": group,
                  "enable.auto.commit": False, "isolation.level": isolation})
    try:
        [tp] = c.committed([TopicPartition(topic, partition)], timeout=timeout)
        if tp.error:
            return {"error": tp.error.name()}
        return None if tp.offset < 0 else tp.offset
    except KafkaException as e:
        return err(e)
    finally:
        c.close()


def settled_committed(ctx, group, topic, partition=0, timeout=15):
    """committed() once it shows an offset: Kafka's group coordinator
    publishes a transaction's offsets when the commit marker reaches
    __consumer_offsets, after EndTxn was answered, so a read right after
    the commit may still see none."""
    deadline = time.monotonic() + timeout
    while True:
        c = committed(ctx, group, topic, partition)
        if c is not None or time.monotonic() > deadline:
            return c
        time.sleep(0.1)


def wait_hw(ctx, topic, n, partition=0, timeout=15):
    """Waits (bounded) until the HW reaches n: an acks=0 or acks=1 write is
    acknowledged before the followers have it, and consumers see it only
    once they do, so a read right after would be a race."""
    deadline = time.monotonic() + timeout
    while list_offsets(ctx, topic, partition, OffsetSpec.latest()) != n:
        if time.monotonic() > deadline:
            return
        time.sleep(0.1)
