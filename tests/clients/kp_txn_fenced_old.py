"""A zombie's commit with kafka-python speaking the protocol of Kafka 2.6
(api_version=(2, 6): EndTxn v1, from before KIP-588's PRODUCER_FENCED).
Two producers of one transactional id: the second's init_transactions()
fences the first, whose commit then fails. Prints `zombie commit: NAME`
(the client's exception) and `read_committed: [...]`.
Arguments: bootstrap, topic, transactional id."""
import sys

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

boot, topic, txn = sys.argv[1], sys.argv[2], sys.argv[3]
OLD = (2, 6)
admin = KafkaAdminClient(bootstrap_servers=boot, request_timeout_ms=15000)
admin.create_topics([NewTopic(topic, 1, 1)])
admin.close()


def producer():
    p = KafkaProducer(bootstrap_servers=boot, transactional_id=txn, api_version=OLD,
                      request_timeout_ms=15000)
    p.init_transactions()
    return p


zombie = producer()
zombie.begin_transaction()
zombie.send(topic, value=b"from-zombie", partition=0)
zombie.flush(15)
fresh = producer()
try:
    zombie.commit_transaction()
    print("zombie commit: ok")
except Exception as e:  # kafka.errors.ProducerFencedError and its kin
    print("zombie commit:", type(e).__name__)
fresh.begin_transaction()
fresh.send(topic, value=b"from-fresh", partition=0)
fresh.commit_transaction()
consumer = KafkaConsumer(bootstrap_servers=boot, isolation_level="read_committed",
                         enable_auto_commit=False, consumer_timeout_ms=3000)
consumer.assign([TopicPartition(topic, 0)])
consumer.seek_to_beginning()
print("read_committed:", [m.value for m in consumer])
consumer.close()
