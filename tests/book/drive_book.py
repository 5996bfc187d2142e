"""Applies an mk-tui recording (SPEC §4) to the book's own Python code and
prints, after every step, the part of the state that both implementations
can show (issue 16; docs/book-differences.md).

The book's code is an oracle: it is imported from `MK_BOOK_SRC` (default:
`<repo>/../shared/book/src`, where CI lays it), never copied. This file only
maps recording actions onto the book's public API, the way a reader of the
book would write them:

- `produce` (no named producer) is `cluster.append_batch(tp, batch, acks)`
  with one record stamped with the clock: the raw append mk-tui's session
  uses too. A keyless record without a partition goes where the book's
  producer would put it (its sticky `Partitioner`, one for the driver); a
  keyless transactional one to partition 0, as the book's `send` does. A named producer is `cluster.producer(idempotent=True,
  transactional_name=name)` and a flush.
- `begin`/`send`/`send_offsets`/`commit`/`abort` use
  `cluster.transactions`. The handle of a transaction is always the book's
  latest `TransactionData` of its id (after a crash too: mk-tui's
  `resume`). Actions on one transaction run in order, each waiting behind
  the previous one (SPEC §4), with one `asyncio.Lock` per id.
- `crash_after` cut points raise a private exception at the cut (after the
  PREPARE frame, after the k-th marker was acknowledged, before the offsets
  are published, before the COMPLETE frame), and the driver then crashes
  and reopens the cluster as `crash` does.
- `replicate` with no field is `replicate_all_once()`; with topic and
  partition it is that partition's `fetch_followers_once()`. The book has
  no fetch by one broker: a `replicate` naming a broker is unsupported.
- `advance_clock` moves the book's `ManualClock`; nothing else runs (the
  book evaluates the ISR only when followers fetch).
- `crash` cancels every pending operation (each counts as an error, as in
  mk-tui), calls the book's `crash()` and `BrokerCluster.open` again with
  the same clock. `tear` crashes, damages the file's tail as mk-tui does
  (cut N bytes, or append garbage) and reopens.
- `stop_broker` / `start_broker`: the book cannot stop a broker. They are
  unsupported: the state says so and the differential test never generates
  them.
- `join_group` subscribes a book `Consumer` (made with the member id,
  `auto_offset_reset="earliest"`, one per group and member);
  `leave_group`, `heartbeat` and `commit_group_offsets` call
  `cluster.groups` directly; `poll` is the member's consumer's
  `refresh_assignment()` then `poll(max)` (500 without `max`). After
  `advance_clock` the driver calls `cluster.expire_group_members()`, as
  mk-tui expires sessions when the clock moves (docs/book-differences.md,
  G1). A crash drops the consumers with the groups.
- `retention` and `compact` (E16): the book's cluster has neither, so the
  driver runs the book's `RetentionManager.apply` / `LogCompactor.compact`
  on the log of every replica of the partition (or of each partition of
  the topic), the leader first, as mk-tui does. `crash_at: "before_swap"`
  raises a Cut at the compactor's `before_swap` hook (the book rolls back
  its replacement) and the driver then crashes and reopens.
- `produce` with `records` (no producer) appends them as one batch,
  `tombstone: true` being a null value.
- `note` and `ui` change nothing.

After each action the asyncio loop runs until no task can make progress;
what is still waiting is the pending count. A failed operation is an error.

Usage:
  drive_book.py RECORDING.jsonl [--data-dir DIR]   one state line per step,
                                                   step 0 first
  drive_book.py --serve                            commands on stdin, one
                                                   JSON object a line:
      {"open": {"header": {...}, "dir": "DIR"}}    -> the state at step 0
      {"step": ACTION, "adopt": {...}}             -> the state after it
      {"close": true}                              -> {"closed": true}
  "adopt" (optional) gives, per partition, a high watermark and an ISR that
  the driver puts into the book's replica set after a step that reopened
  the cluster: the decided difference "HW and ISR after a reopen"
  (docs/book-differences.md, D4) would otherwise make every later step
  differ.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BOOK_SRC = Path(
    os.environ.get("MK_BOOK_SRC", REPO.parent / "shared" / "book" / "src")
)
sys.path.insert(0, str(BOOK_SRC))

from minikafka.clock import ManualClock  # noqa: E402
from minikafka.config import MiniKafkaConfig  # noqa: E402
from minikafka.consumer.consumer import Consumer  # noqa: E402
from minikafka.core.batch import ControlType, RecordBatch  # noqa: E402
from minikafka.core.cluster import BrokerCluster  # noqa: E402
from minikafka.core.metadata import TopicPartition  # noqa: E402
from minikafka.core.record import Record  # noqa: E402
from minikafka.log.compaction import LogCompactor  # noqa: E402
from minikafka.log.retention import RetentionManager  # noqa: E402
from minikafka.producer.partitioner import Partitioner  # noqa: E402
from minikafka.replication.model import AckMode, IsolationLevel  # noqa: E402
from minikafka.transaction.manager import Transaction  # noqa: E402
from minikafka.transaction.model import TransactionState  # noqa: E402

# The bytes written are the same with or without fsync; a temporary
# directory needs no durability, and fsync dominates the run time.
os.fsync = lambda _fd: None

DEFAULT_GARBAGE = b"MKB1\x00\x00\x00\x09garbage"
UNSTABLE = {
    TransactionState.ONGOING,
    TransactionState.PREPARE_COMMIT,
    TransactionState.PREPARE_ABORT,
}


class Cut(Exception):
    """The process "dies" at a commit's or abort's cut point."""


class Unsupported(Exception):
    """An action the book's code cannot express."""


def text(value: bytes | None) -> str | None:
    if value is None:
        return None
    return value.decode("utf-8", errors="backslashreplace")


def tp_name(tp: TopicPartition) -> str:
    return f"{tp.topic}-{tp.partition}"


class BookDriver:
    def __init__(self, header: dict, data_dir: Path) -> None:
        if header.get("rules", "minikafka") != "minikafka":
            raise Unsupported("the book has only its own rules (minikafka)")
        cluster = header["cluster"]
        config = cluster.get("config", {})
        kwargs = {"broker_ids": tuple(cluster["brokers"])}
        for name in (
            "min_insync_replicas",
            "replica_lag_time_ms",
            "replica_lag_max_offsets",
            "segment_max_bytes",
            "group_session_timeout_ms",
        ):
            if config.get(name) is not None:
                kwargs[name] = config[name]
        self.config = MiniKafkaConfig(data_dir=data_dir, **kwargs)
        self.clock = ManualClock()
        self.cluster = BrokerCluster.open(self.config, clock=self.clock)
        self.topics = cluster.get("topics", [])
        self.step = 0
        self.tasks: list[tuple[int, asyncio.Task]] = []
        self.errors: list[dict] = []
        self.locks: dict[str, asyncio.Lock] = {}
        self.producers: dict[str, object] = {}
        self.consumers: dict[tuple[str, str], Consumer] = {}
        self.polled: dict[tuple[str, str], list] = {}
        self.partitioner = Partitioner()
        self.produces: set[asyncio.Task] = set()
        self.down: str | None = None

    async def create_topics(self) -> None:
        for topic in self.topics:
            await self.cluster.create_topic(
                topic["name"], topic["partitions"], topic["replication_factor"]
            )

    # ---- running actions -------------------------------------------------

    async def apply(self, action: dict) -> None:
        self.step += 1
        [(name, fields)] = action.items()
        fields = fields or {}
        if self.down is not None and name not in {"note", "ui"}:
            self.error(f"cluster is down: {self.down}")
            return
        try:
            if name in {"send", "produce"}:
                # The partition is chosen when the action is issued.
                key = fields.get("key")
                fields = dict(fields, partition=self.partition_of(
                    fields["topic"],
                    fields.get("partition"),
                    None if key is None else key.encode(),
                ))
            if name in {"begin", "send", "send_offsets", "commit", "abort"}:
                self.spawn(self.txn_op(name, fields))
            elif name == "produce":
                self.spawn(self.produce(fields))
                self.produces.add(self.tasks[-1][1])
            elif name == "create_topic":
                await self.cluster.create_topic(
                    fields["name"],
                    fields["partitions"],
                    fields["replication_factor"],
                )
            elif name == "replicate":
                await self.replicate(fields)
            elif name in {"retention", "compact"}:
                await self.cleanup(name, fields)
            elif name == "advance_clock":
                self.clock.advance_ms(fields["ms"])
                await self.cluster.expire_group_members()
            elif name in {"join_group", "leave_group", "heartbeat",
                          "commit_group_offsets", "poll"}:
                await self.group_op(name, fields)
            elif name == "crash":
                await self.crash()
            elif name == "tear":
                await self.tear(fields)
            elif name == "promote":
                tp = TopicPartition(fields["topic"], fields["partition"])
                await self.cluster.promote(tp, fields["broker"])
            elif name in {"stop_broker", "start_broker"}:
                raise Unsupported(f"the book cannot {name.replace('_', ' ')}")
            elif name in {"note", "ui"}:
                pass
            else:
                raise Unsupported(f"unknown action {name}")
        except Unsupported:
            raise
        except Cut:
            await self.crash()
        except Exception as error:  # noqa: BLE001 - an error event
            self.error(f"{type(error).__name__}: {error}")
        await self.quiesce()

    def error(self, message: str, step: int | None = None) -> None:
        self.errors.append({"step": self.step if step is None else step,
                            "message": message})

    def spawn(self, coroutine) -> None:
        self.tasks.append((self.step, asyncio.ensure_future(coroutine)))

    async def quiesce(self) -> None:
        """Runs the loop until every task is done or waits on something that
        only a later action can give; handles a cut point's crash."""
        loop = asyncio.get_running_loop()
        while True:
            for _ in range(10_000):
                await asyncio.sleep(0)
                if not loop._ready:  # noqa: SLF001 - nothing runnable
                    break
            cut = False
            still = []
            for step, task in self.tasks:
                if not task.done():
                    still.append((step, task))
                elif task.cancelled():
                    self.error("cancelled", step)
                elif isinstance(task.exception(), Cut):
                    cut = True
                elif task.exception() is not None:
                    error = task.exception()
                    self.error(f"{type(error).__name__}: {error}", step)
            self.tasks = still
            if not cut:
                return
            await self.crash()

    def partition_of(self, topic: str, partition, key: bytes | None) -> int:
        if partition is not None:
            return partition
        count = len(self.cluster.topic(topic).partitions)
        if key is not None:
            return (zlib.crc32(key) & 0xFFFFFFFF) % count
        # The book's own choices (docs/book-differences.md, D1): a
        # transaction's keyless record goes to partition 0, a producer's to
        # its sticky partitioner's choice (one producer for the driver).
        return None

    async def produce(self, fields: dict) -> None:
        key = fields.get("key")
        key = None if key is None else key.encode()
        value = None if "records" in fields else fields["value"].encode()
        acks = fields.get("acks", "1")
        name = fields.get("producer")
        topic = fields["topic"]
        partition = fields["partition"]
        if name is None:
            count = len(self.cluster.topic(topic).partitions)
            sticky = partition is None
            if sticky:
                partition = self.partitioner.choose(count, None)
            if "records" in fields:
                records = tuple(
                    Record(
                        None if r.get("key") is None else r["key"].encode(),
                        None if r.get("tombstone") else r["value"].encode(),
                        self.clock.now_ms(),
                    )
                    for r in fields["records"]
                )
            else:
                records = (Record(key, value, self.clock.now_ms()),)
            batch = RecordBatch.unassigned(records)
            await self.cluster.append_batch(
                TopicPartition(topic, partition), batch, acks
            )
            if sticky:
                self.partitioner.on_batch_closed(count, partition)
            return
        producer = self.producers.get(name)
        if producer is None:
            producer = self.cluster.producer(
                idempotent=True, transactional_name=name, acks=AckMode.ALL
            )
            self.producers[name] = producer
        future = producer.send(topic, value=value, key=key, partition=partition)
        await producer.flush()
        await future

    def handle(self, txn: str) -> Transaction:
        manager = self.cluster.transactions
        data = manager._transactions.get(txn)  # noqa: SLF001 - resume(id)
        if data is None:
            raise LookupError(f"unknown transaction {txn}")
        return Transaction(manager, data)

    async def txn_op(self, name: str, fields: dict) -> None:
        txn = fields["txn"]
        lock = self.locks.setdefault(txn, asyncio.Lock())
        async with lock:
            if name == "begin":
                await self.cluster.transactions.begin(txn)
            elif name == "send":
                key = fields.get("key")
                key = None if key is None else key.encode()
                partition = fields["partition"]
                await self.handle(txn).send(
                    fields["topic"],
                    value=fields["value"].encode(),
                    key=key,
                    partition=partition,
                )
            elif name == "send_offsets":
                offsets = {
                    TopicPartition(o["topic"], o["partition"]): o["offset"]
                    for o in fields["offsets"]
                }
                await self.handle(txn).send_offsets(fields["group"], offsets)
            else:
                await self.end(txn, name == "commit", fields.get("crash_after"))

    async def end(self, txn: str, commit: bool, cut: str | None) -> None:
        handle = self.handle(txn)
        if cut is None:
            await (handle.commit() if commit else handle.abort())
            return
        data = handle.data
        marks = len(data.partitions)
        if cut == "prepare":
            after_markers = 0
        elif cut.startswith("marker:"):
            after_markers = min(int(cut.split(":", 1)[1]), marks)
        elif cut == "markers":
            after_markers = marks
        elif cut == "offsets":
            after_markers = None
        else:
            raise Unsupported(f"cut point {cut}")
        cluster = self.cluster
        journal = cluster.transactions.journal
        prepared = (
            TransactionState.PREPARE_COMMIT
            if commit
            else TransactionState.PREPARE_ABORT
        )
        written = 0
        original_journal = journal.append
        original_append = cluster.append_batch
        original_publish = cluster.offsets.commit_many

        def journal_append(transaction):
            if (
                transaction is data
                and transaction.state
                in {TransactionState.COMPLETE_COMMIT,
                    TransactionState.COMPLETE_ABORT}
            ):
                # `offsets` (and, for an abort, `markers`): die before the
                # COMPLETE frame.
                raise self.die()
            original_journal(transaction)
            if transaction is data and transaction.state is prepared:
                if after_markers == 0:
                    raise self.die()

        async def append_batch(tp, batch, acks):
            nonlocal written
            result = await original_append(tp, batch, acks)
            if batch.control is not None and batch.transactional_id == txn:
                written += 1
                if after_markers is not None and written == after_markers:
                    raise self.die()
            return result

        async def commit_many(groups):
            if after_markers is not None:
                raise self.die()
            await original_publish(groups)

        journal.append = journal_append
        cluster.append_batch = append_batch
        cluster.offsets.commit_many = commit_many
        try:
            await (handle.commit() if commit else handle.abort())
        finally:
            journal.append = original_journal
            del cluster.append_batch
            cluster.offsets.commit_many = original_publish

    def die(self) -> Cut:
        """The process dies at a cut point, at once: every other pending
        operation is dropped before any of them runs again (as in mk-tui,
        where the crash happens inside the commit's own step). The caller
        raises the returned Cut; `quiesce` then crashes and reopens."""
        current = asyncio.current_task()
        kept = []
        for step, task in self.tasks:
            waiter = task._fut_waiter  # noqa: SLF001
            woken = waiter is None or waiter.done()
            if task is current or task.done() or (task in self.produces and woken):
                # A produce whose acknowledgement was already decided before
                # the crash (the same fetch acknowledged it) is answered: in
                # mk-tui its reply is already sent. Transaction steps are not
                # (their next step finds the cluster crashed).
                kept.append((step, task))
                continue
            task.cancel()
            self.error("crashed", step)
        self.tasks = kept
        return Cut()

    async def replicate(self, fields: dict) -> None:
        if fields.get("broker") is not None:
            raise Unsupported("the book has no fetch by one broker")
        if fields.get("topic") is None:
            await self.cluster.replicate_all_once()
        else:
            tp = TopicPartition(fields["topic"], fields["partition"])
            await self.cluster.replica_set(tp).fetch_followers_once()

    async def cleanup(self, name: str, fields: dict) -> None:
        """`retention` or `compact` on each replica's log, leader first."""
        topic = fields["topic"]
        if fields.get("partition") is not None:
            numbers = [fields["partition"]]
        else:
            numbers = sorted(self.cluster.topic(topic).partitions)
        for number in numbers:
            rs = self.cluster.replica_set(TopicPartition(topic, number))
            order = [rs.leader_id] + [
                b for b in sorted(rs.replicas) if b != rs.leader_id
            ]
            for broker in order:
                log = rs.replicas[broker].log
                if name == "retention":
                    RetentionManager(self.clock).apply(
                        log,
                        retention_ms=fields.get("retention_ms"),
                        retention_bytes=fields.get("retention_bytes"),
                    )
                    continue
                cut = fields.get("crash_at")

                def before_swap() -> None:
                    raise self.die()

                LogCompactor(
                    self.clock,
                    delete_retention_ms=fields["delete_retention_ms"],
                    before_swap=before_swap if cut == "before_swap" else None,
                ).compact(log)

    async def group_op(self, name: str, fields: dict) -> None:
        """One consumer-group action (E15), through the book's API."""
        key = (fields["group"], fields["member"])
        groups = self.cluster.groups
        if name == "join_group":
            consumer = self.consumers.get(key)
            if consumer is None:
                consumer = Consumer(
                    self.cluster, key[0],
                    auto_offset_reset="earliest", member_id=key[1],
                )
            await consumer.subscribe(fields["topics"])
            self.consumers[key] = consumer
        elif name == "leave_group":
            await groups.leave(*key)
            self.consumers.pop(key, None)
            self.polled.pop(key, None)
        elif name == "heartbeat":
            await groups.heartbeat(*key, fields["generation"])
        elif name == "commit_group_offsets":
            offsets = {
                TopicPartition(o["topic"], o["partition"]): o["offset"]
                for o in fields["offsets"]
            }
            await groups.commit(*key, fields["generation"], offsets)
        else:
            consumer = self.consumers.get(key)
            if consumer is None:
                raise RuntimeError(f"unknown member {key[1]} of {key[0]}")
            await consumer.refresh_assignment()
            records = await consumer.poll(fields.get("max", 500))
            # The book's StoredRecord has no partition: each is found by
            # walking the assignment in order, as poll reads it.
            self.polled[key] = [
                [record.offset, text(record.value)] for record in records
            ]

    def group_state(self) -> dict:
        out = {}
        for group_id, group in sorted(self.cluster.groups._groups.items()):  # noqa: SLF001
            members = {}
            for member_id in sorted(group.members):
                member = group.members[member_id]
                consumer = self.consumers.get((group_id, member_id))
                positions = {} if consumer is None else {
                    tp_name(tp): p
                    for tp, p in sorted(consumer._positions.items())  # noqa: SLF001
                }
                members[member_id] = {
                    "assignment": [
                        tp_name(tp) for tp in group.assignment.get(member_id, ())
                    ],
                    "deadline_ms": member.deadline_ms,
                    "positions": positions,
                    "last_poll": self.polled.get((group_id, member_id), []),
                }
            out[group_id] = {
                "state": group.state.value,
                "generation": group.generation,
                "members": members,
            }
        return out

    async def crash(self, damage=None) -> None:
        """Drops everything in memory (pending operations fail), reopens."""
        for step, task in self.tasks:
            task.cancel()
            self.error("crashed", step)
        if self.tasks:
            await asyncio.gather(
                *(task for _, task in self.tasks), return_exceptions=True
            )
        self.tasks = []
        self.producers = {}
        self.consumers = {}
        self.polled = {}
        await self.cluster.crash()
        if damage is not None:
            damage()
        try:
            self.cluster = BrokerCluster.open(self.config, clock=self.clock)
        except Exception as error:  # noqa: BLE001 - the cluster is down
            self.down = f"{type(error).__name__}: {error}"
            raise

    async def shut(self) -> None:
        """Ends the run: pending work is cancelled, the cluster crashes."""
        for _, task in self.tasks:
            task.cancel()
        await asyncio.gather(*(t for _, t in self.tasks), return_exceptions=True)
        await self.cluster.crash()

    async def tear(self, fields: dict) -> None:
        target = fields["target"]
        if target == "journal":
            path = self.config.data_dir / "transactions.journal"
        else:
            directory = (
                self.config.data_dir
                / f"broker-{target['broker']}"
                / f"{target['topic']}-{target['partition']}"
            )
            path = max(directory.glob("*.log"))

        def damage() -> None:
            # The book creates the journal with its first frame; mk-tui's is
            # there, empty, from the start (D8): tearing none is tearing an
            # empty one.
            path.touch()
            if fields.get("cut_bytes") is not None:
                size = path.stat().st_size
                with path.open("r+b") as file:
                    file.truncate(max(0, size - fields["cut_bytes"]))
            else:
                garbage = fields.get("append_garbage")
                data = (
                    DEFAULT_GARBAGE if garbage is True else str(garbage).encode()
                )
                with path.open("ab") as file:
                    file.write(data)

        await self.crash(damage)

    def adopt(self, partitions: dict) -> None:
        """Puts mk-tui's HW and ISR after a reopen into the book (D4)."""
        for name, values in partitions.items():
            topic, _, number = name.rpartition("-")
            rs = self.cluster.replica_set(TopicPartition(topic, int(number)))
            rs.high_watermark = values["high_watermark"]
            rs._isr = set(values["isr"])  # noqa: SLF001
            for broker, replica in rs.replicas.items():
                replica.in_sync = broker in rs._isr  # noqa: SLF001

    # ---- the comparable state --------------------------------------------

    def state(self) -> dict:
        if self.down is not None:
            return {"step": self.step, "down": self.down,
                    "pending": len(self.tasks), "errors": len(self.errors),
                    "error_messages": [e["message"] for e in self.errors]}
        cluster = self.cluster
        if not cluster._closed:  # noqa: SLF001
            # Python buffers segment writes until a flush; the book's crash
            # closes (so flushes) every log, so flushing here to compare the
            # bytes changes nothing a crash would not.
            for log in cluster._logs.values():  # noqa: SLF001
                log.flush()
        manager = cluster.transactions
        partitions = {}
        for topic in sorted(cluster._topics.values(), key=lambda t: t.name):  # noqa: SLF001
            for number in sorted(topic.partitions):
                tp = TopicPartition(topic.name, number)
                partitions[tp_name(tp)] = self.partition_state(tp)
        transactions = {}
        for txn, data in sorted(manager._transactions.items()):  # noqa: SLF001
            transactions[txn] = {
                "state": data.state.value,
                "partitions": [tp_name(tp) for tp in sorted(data.partitions)],
                "first_offsets": {
                    tp_name(tp): offset
                    for tp, offset in sorted(data.first_offsets.items())
                },
                "staged_offsets": {
                    group: {tp_name(tp): o for tp, o in sorted(offsets.items())}
                    for group, offsets in sorted(data.staged_offsets.items())
                },
            }
        committed = {
            group: {tp_name(tp): o for tp, o in sorted(offsets.items())}
            for group, offsets in sorted(cluster.offsets._offsets.items())  # noqa: SLF001
        }
        return {
            "step": self.step,
            "clock_ms": self.clock.now_ms(),
            "partitions": partitions,
            "transactions": transactions,
            "committed_offsets": committed,
            "groups": self.group_state(),
            "pending": len(self.tasks),
            "errors": len(self.errors),
            "error_messages": [e["message"] for e in self.errors],
            "down": self.down,
        }

    def partition_state(self, tp: TopicPartition) -> dict:
        cluster = self.cluster
        rs = cluster.replica_set(tp)
        metadata = cluster.partition_metadata(tp)
        log = rs.leader.log
        hw = rs.high_watermark
        batches = []
        for batch in log.all_batches():
            batches.append({
                "base_offset": batch.base_offset,
                "last_offset": batch.base_offset + batch.last_offset_delta,
                "kind": "data" if batch.control is None else "control",
                "control": None if batch.control is None else batch.control.value,
                "transactional_id": batch.transactional_id,
                "producer_id": batch.producer_id,
                "values": [text(r.value) for r in batch.records],
                "records": [
                    [batch.base_offset + delta, text(r.key), text(r.value)]
                    for delta, r in zip(batch.offset_deltas, batch.records)
                ],
            })

        def read(isolation: IsolationLevel) -> list:
            records = cluster.fetch(tp, log.log_start_offset, 1 << 30, isolation)
            return [text(r.value) for r in records]

        return {
            "leader": rs.leader_id,
            "leader_epoch": rs.leader_epoch,
            "isr": sorted(rs.isr),
            "log_start_offset": log.log_start_offset,
            "high_watermark": hw,
            "last_stable_offset": cluster.transactions.last_stable_offset(tp, hw),
            "replicas": {
                str(broker): rs.replicas[broker].leo for broker in metadata.replicas
            },
            "batches": batches,
            "read_uncommitted": read(IsolationLevel.READ_UNCOMMITTED),
            "read_committed": read(IsolationLevel.READ_COMMITTED),
        }


def emit(value: dict) -> None:
    sys.stdout.write(json.dumps(value, sort_keys=True) + "\n")
    sys.stdout.flush()


async def open_driver(header: dict, data_dir: Path) -> BookDriver:
    driver = BookDriver(header, data_dir)
    await driver.create_topics()
    return driver


async def step(driver: BookDriver, action: dict, adopt=None) -> dict:
    try:
        await driver.apply(action)
    except Unsupported as error:
        return {"unsupported": str(error)}
    if adopt and driver.down is None:
        driver.adopt(adopt)
    return driver.state()


async def serve() -> None:
    driver = None
    for line in sys.stdin:
        if not line.strip():
            continue
        command = json.loads(line)
        try:
            if "open" in command:
                if driver is not None:
                    await driver.shut()
                spec = command["open"]
                driver = await open_driver(spec["header"], Path(spec["dir"]))
                emit(driver.state())
            elif "step" in command:
                emit(await step(driver, command["step"], command.get("adopt")))
            elif "close" in command:
                if driver is not None:
                    await driver.shut()
                    driver = None
                emit({"closed": True})
            else:
                emit({"unsupported": f"unknown command {sorted(command)}"})
        except Unsupported as error:
            emit({"unsupported": str(error)})


async def run_file(path: Path, data_dir: Path | None) -> None:
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    header = json.loads(lines[0])
    with tempfile.TemporaryDirectory() as temporary:
        directory = data_dir or Path(temporary)
        driver = await open_driver(header, directory)
        emit(driver.state())
        for line in lines[1:]:
            emit(await step(driver, json.loads(line)["action"]))
        await driver.cluster.close()


def main(argv: list[str]) -> int:
    if argv[1:2] == ["--serve"]:
        asyncio.run(serve())
        return 0
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--data-dir"):
        sys.stderr.write(__doc__)
        return 2
    data_dir = Path(argv[3]) if len(argv) == 4 else None
    asyncio.run(run_file(Path(argv[1]), data_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
