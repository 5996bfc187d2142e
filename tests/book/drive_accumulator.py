"""Runs a list of operations on the book's own `BatchAccumulator`
(`minikafka/producer/accumulator.py`, imported from `MK_BOOK_SRC`, never
copied) and prints what each returned, one JSON line per operation, for
`tests/book_accumulator.rs` to compare with mk-tui's port (E17).

Input (stdin): a list of cases, each {"batch_size": N, "linger_ms": N, "max_buffer_bytes": N,
"ops": [{"add": {"partition": P, "bytes": B, "now_ms": T}},
{"due": T}, {"pop": P}, {"partitions": true}]} on topic "t".
Output: one JSON line per case, the list of answers per op:
{"full": bool} or {"error": "ProducerBufferFull"},
{"due": [P...]}, {"popped": N}, {"partitions": [P...]}, each with
"total_bytes".
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BOOK_SRC = Path(
    os.environ.get("MK_BOOK_SRC", REPO.parent / "shared" / "book" / "src")
)
sys.path.insert(0, str(BOOK_SRC))

from minikafka.core.metadata import TopicPartition  # noqa: E402
from minikafka.core.record import Record  # noqa: E402
from minikafka.errors import ProducerBufferFull  # noqa: E402
from minikafka.producer.accumulator import (  # noqa: E402
    BatchAccumulator,
    PendingRecord,
)


def run(spec: dict) -> list:
    answers = []
    acc = BatchAccumulator(
        batch_size=spec["batch_size"],
        linger_ms=spec["linger_ms"],
        max_buffer_bytes=spec["max_buffer_bytes"],
    )
    for op in spec["ops"]:
        [(name, arg)] = op.items()
        if name == "add":
            tp = TopicPartition("t", arg["partition"])
            # The future is the book's asyncio one; the accumulator never
            # touches it, so none is needed to drive it.
            pending = PendingRecord(tp, Record(None, b"", 0), None, arg["bytes"])
            try:
                out = {"full": acc.add(pending, arg["now_ms"])}
            except ProducerBufferFull:
                out = {"error": "ProducerBufferFull"}
        elif name == "due":
            out = {"due": [tp.partition for tp in acc.due_partitions(arg)]}
        elif name == "pop":
            out = {"popped": len(acc.pop(TopicPartition("t", arg)))}
        else:
            out = {"partitions": [tp.partition for tp in acc.partitions()]}
        out["total_bytes"] = acc.total_bytes
        answers.append(out)
    return answers


def main() -> int:
    for spec in json.load(sys.stdin):
        print(json.dumps(run(spec), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
