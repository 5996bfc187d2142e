"""Chapter 8 through kafka-python's transactional producer: the
experiment's four lines (out-0), then the offsets exercise (in-0, group
"workers"): the committed offset before and after the commit that
publishes send_offsets_to_transaction()'s in-0 -> 7."""
import sys

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.structs import OffsetAndMetadata

boot = sys.argv[1]
admin = KafkaAdminClient(bootstrap_servers=boot, request_timeout_ms=15000)
admin.create_topics([NewTopic("out", 1, 1), NewTopic("in", 1, 1)])


def read(isolation, topic="out"):
    """Every value of topic-0 from the start that the isolation level
    sees: iteration stops after 1.5 s without a record."""
    consumer = KafkaConsumer(bootstrap_servers=boot, isolation_level=isolation,
                             enable_auto_commit=False, consumer_timeout_ms=1500)
    consumer.assign([TopicPartition(topic, 0)])
    consumer.seek_to_beginning()
    values = [m.value for m in consumer]
    consumer.close()
    return values


def producer(txn):
    p = KafkaProducer(bootstrap_servers=boot, transactional_id=txn, request_timeout_ms=15000)
    p.init_transactions()
    return p


tx = producer("tx-1")
tx.begin_transaction()
tx.send("out", value=b"pending", partition=0)
tx.flush(15)
print("before marker, read_uncommitted:", read("read_uncommitted"))
print("before marker, read_committed:", read("read_committed"))
tx.commit_transaction()
print("after commit marker:", read("read_committed"))
tx2 = producer("tx-2")
tx2.begin_transaction()
tx2.send("out", value=b"discard-me", partition=0)
tx2.flush(15)
tx2.abort_transaction()
print("after abort marker:", read("read_committed"))

plain = KafkaProducer(bootstrap_servers=boot, acks=1)
for i in range(7):
    plain.send("in", value=f"i{i}".encode(), partition=0)
plain.flush(15)
worker = KafkaConsumer(bootstrap_servers=boot, group_id="workers", enable_auto_commit=False,
                       isolation_level="read_committed", consumer_timeout_ms=1500)
worker.assign([TopicPartition("in", 0)])
worker.seek_to_beginning()
print("worker read:", " ".join(m.value.decode() for m in worker))


def committed():
    c = KafkaConsumer(bootstrap_servers=boot, group_id="workers", enable_auto_commit=False)
    try:
        return c.committed(TopicPartition("in", 0))
    finally:
        c.close()


tx3 = producer("tx-3")
tx3.begin_transaction()
tx3.send("out", value=b"result-1", partition=0)
tx3.send_offsets_to_transaction({TopicPartition("in", 0): OffsetAndMetadata(7, "", -1)},
                                worker.group_metadata())
tx3.flush(15)
print("committed before commit:", committed())
tx3.commit_transaction()
print("committed after commit:", committed())
worker.close()
