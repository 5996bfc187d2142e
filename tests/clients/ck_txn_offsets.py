"""Chapter 8's offsets exercise through confluent-kafka: seven input
records i0-i6 in in-0; a worker of group "workers" reads them and, in
transaction tx-1, writes result-1 to out-0 and stages in-0 -> 7 with
send_offsets_to_transaction(). The group's committed offset is printed
before and after the commit: None, then 7.

The check before the commit uses a read_uncommitted consumer: a
read_committed one asks OffsetFetch with require_stable, which a broker
answers UNSTABLE_OFFSET_COMMIT while the transaction is open, and the
client retries until it ends (printed as `stable committed() before
commit: ...`)."""
import sys
import time

from confluent_kafka import (OFFSET_BEGINNING, Consumer, KafkaException, Producer,
                             TopicPartition)
from confluent_kafka.admin import AdminClient, NewTopic

boot = sys.argv[1]
admin = AdminClient({"bootstrap.servers": boot})
for f in admin.create_topics([NewTopic("in", 1, 1), NewTopic("out", 1, 1)]).values():
    f.result(15)
plain = Producer({"bootstrap.servers": boot, "enable.idempotence": False})
for i in range(7):
    plain.produce("in", value=f"i{i}".encode(), partition=0)
plain.flush(15)


def consumer(isolation):
    return Consumer({
        "bootstrap.servers": boot,
        "group.id": "workers",
        "enable.auto.commit": False,
        "isolation.level": isolation,
    })


def committed(isolation, timeout=10):
    c = consumer(isolation)
    try:
        [tp] = c.committed([TopicPartition("in", 0)], timeout=timeout)
        return None if tp.offset < 0 else tp.offset
    finally:
        c.close()


worker = consumer("read_committed")
worker.assign([TopicPartition("in", 0, OFFSET_BEGINNING)])
read = []
deadline = time.monotonic() + 20
while len(read) < 7 and time.monotonic() < deadline:
    msg = worker.poll(0.2)
    if msg is not None and not msg.error():
        read.append(msg.value().decode())
print("worker read:", " ".join(read))
next_offset = 7
tx = Producer({"bootstrap.servers": boot, "transactional.id": "tx-1"})
tx.init_transactions(30)
tx.begin_transaction()
tx.produce("out", value=b"result-1", partition=0)
tx.send_offsets_to_transaction([TopicPartition("in", 0, next_offset)],
                               worker.consumer_group_metadata(), 30)
tx.flush(30)
print("committed before commit:", committed("read_uncommitted"))
try:
    print("stable committed() before commit:", committed("read_committed", timeout=2))
except KafkaException as e:
    print("stable committed() before commit: waits,", e.args[0].name())
tx.commit_transaction(30)
print("committed after commit:", committed("read_uncommitted"))
print("stable committed() after commit:", committed("read_committed"))
worker.close()
