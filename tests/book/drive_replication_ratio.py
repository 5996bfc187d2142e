"""The book's side of `examples/book_ratio.rs`: the same workload run on the
book's own Python code (imported from `MK_BOOK_SRC`, default
`<repo>/../shared/book/src`; never copied), one round per line read.

A round, for each line `round` on stdin: a fresh data directory, brokers
(1, 2), topic `t` with one partition and replication factor 2; 200 batches
of 100 keyed records of 100 B built before any timing; then

- append: each batch is `cluster.append_batch(tp, batch, "leader")`
  (acks=1, `AckMode.LEADER`: the raw append the book's producer ends in);
- replication: `cluster.replicate_all_once()` repeated until every
  follower's log end offset equals the leader's.

It prints one JSON line per round: each phase's thread CPU time and wall
time in seconds, the replication rounds and the records replicated. The
cluster is closed and its directory removed outside the timing.
"""

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BOOK_SRC = os.environ.get("MK_BOOK_SRC") or str(HERE.parents[2] / "shared" / "book" / "src")
sys.path.insert(0, BOOK_SRC)

from minikafka.config import MiniKafkaConfig  # noqa: E402
from minikafka.core.batch import RecordBatch  # noqa: E402
from minikafka.core.cluster import BrokerCluster  # noqa: E402
from minikafka.core.metadata import TopicPartition  # noqa: E402
from minikafka.core.record import Record  # noqa: E402
from minikafka.replication.model import AckMode  # noqa: E402

BATCHES = 200
RECORDS = 100
VALUE_LEN = 100


def batch(seed: int) -> RecordBatch:
    """The records of `minikafka::perf::record_batch(100, 100, seed)`."""
    records = []
    for i in range(RECORDS):
        n = seed * RECORDS + i
        value = f"value-{n}-".encode().ljust(VALUE_LEN, b".")
        records.append(Record(key=f"k{n % 1024}".encode(), value=value, timestamp_ms=0))
    return RecordBatch.unassigned(tuple(records))


def caught_up(cluster: BrokerCluster, tp: TopicPartition) -> bool:
    replica_set = cluster.replica_set(tp)
    leo = replica_set.leader.leo
    return all(follower.leo == leo for follower in replica_set.followers)


async def one_round() -> dict:
    batches = [batch(seed) for seed in range(BATCHES)]
    tp = TopicPartition("t", 0)
    with tempfile.TemporaryDirectory() as data_dir:
        config = MiniKafkaConfig(data_dir=Path(data_dir), broker_ids=(1, 2))
        cluster = BrokerCluster.open(config)
        await cluster.create_topic("t", 1, 2)
        cpu, wall = time.thread_time(), time.perf_counter()
        for b in batches:
            await cluster.append_batch(tp, b, AckMode.LEADER)
        append_cpu, append_wall = time.thread_time() - cpu, time.perf_counter() - wall
        cpu, wall = time.thread_time(), time.perf_counter()
        rounds = 0
        while not caught_up(cluster, tp):
            await cluster.replicate_all_once()
            rounds += 1
        repl_cpu, repl_wall = time.thread_time() - cpu, time.perf_counter() - wall
        records = cluster.replica_set(tp).followers[0].leo
        await cluster.close()
    return {
        "append_cpu": append_cpu,
        "append_wall": append_wall,
        "repl_cpu": repl_cpu,
        "repl_wall": repl_wall,
        "repl_rounds": rounds,
        "records": records,
    }


def main() -> None:
    for line in sys.stdin:
        if line.strip() != "round":
            print(f"unknown command {line.strip()!r}", file=sys.stderr)
            sys.exit(2)
        print(json.dumps(asyncio.run(one_round())), flush=True)


if __name__ == "__main__":
    main()
