"""The zombie lesson (E14) and an idempotent producer with kafka-python:
two transactional producers of "app" (the second's init_transactions()
fences the first, whose commit then fails), and an idempotent producer
writing COUNT records to idem-0. Prints `zombie commit: ERROR`,
`read_committed: [...]` and `idempotent offsets ...`."""
import sys

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

boot = sys.argv[1]
admin = KafkaAdminClient(bootstrap_servers=boot, request_timeout_ms=15000)
admin.create_topics([NewTopic("out", 1, 1), NewTopic("idem", 1, 3)])


def producer(txn):
    p = KafkaProducer(bootstrap_servers=boot, transactional_id=txn, request_timeout_ms=15000)
    p.init_transactions()
    return p


zombie = producer("app")
zombie.begin_transaction()
zombie.send("out", value=b"from-zombie", partition=0)
zombie.flush(15)
fresh = producer("app")
try:
    zombie.commit_transaction()
    print("zombie commit: ok")
except Exception as e:  # kafka.errors.ProducerFencedError and its kin
    print("zombie commit:", type(e).__name__)
fresh.begin_transaction()
fresh.send("out", value=b"from-fresh", partition=0)
fresh.commit_transaction()
consumer = KafkaConsumer(bootstrap_servers=boot, isolation_level="read_committed",
                         enable_auto_commit=False, consumer_timeout_ms=1500)
consumer.assign([TopicPartition("out", 0)])
consumer.seek_to_beginning()
print("read_committed:", [m.value for m in consumer])
consumer.close()

idem = KafkaProducer(bootstrap_servers=boot, enable_idempotence=True, acks="all",
                     request_timeout_ms=15000)
futures = [idem.send("idem", value=f"v{i}".encode(), partition=0) for i in range(5)]
idem.flush(15)
print("idempotent offsets", *[f.get(15).offset for f in futures])
