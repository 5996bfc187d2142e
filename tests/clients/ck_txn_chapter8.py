"""Chapter 8's experiment ("observe the visibility boundary") through
confluent-kafka: a transactional producer (transactional.id tx-1) writes
"pending" to out-0, read_uncommitted and read_committed consumers read the
partition before and after its commit, then tx-2 writes "discard-me" and
aborts. Prints the chapter's four lines (values as Python bytes, as the
chapter prints them)."""
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

boot = sys.argv[1]
admin = AdminClient({"bootstrap.servers": boot})
admin.create_topics([NewTopic("out", 1, 1)])["out"].result(15)


def read(isolation):
    """Every value of out-0 from the start up to the end the isolation
    level sees (the HW, or the LSO for read_committed)."""
    consumer = Consumer({
        "bootstrap.servers": boot,
        "group.id": "mk-tui-ch8",
        "enable.auto.commit": False,
        "isolation.level": isolation,
        "enable.partition.eof": True,
    })
    consumer.assign([TopicPartition("out", 0, OFFSET_BEGINNING)])
    values = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        msg = consumer.poll(0.2)
        if msg is None:
            continue
        if msg.error():
            if msg.error().code() == KafkaError._PARTITION_EOF:
                break
            raise SystemExit(f"consumer error {msg.error().name()}")
        values.append(msg.value())
    else:
        raise SystemExit(f"{isolation}: no end of partition in 20 s")
    consumer.close()
    return values


def producer(txn):
    p = Producer({"bootstrap.servers": boot, "transactional.id": txn, "linger.ms": 5})
    p.init_transactions(30)
    return p


tx = producer("tx-1")
tx.begin_transaction()
tx.produce("out", value=b"pending", partition=0)
tx.flush(30)
print("before marker, read_uncommitted:", read("read_uncommitted"))
print("before marker, read_committed:", read("read_committed"))
tx.commit_transaction(30)
print("after commit marker:", read("read_committed"))
tx2 = producer("tx-2")
tx2.begin_transaction()
tx2.produce("out", value=b"discard-me", partition=0)
tx2.flush(30)
tx2.abort_transaction(30)
print("after abort marker:", read("read_committed"))
