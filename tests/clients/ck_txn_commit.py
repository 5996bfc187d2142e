"""One transaction through confluent-kafka: transactional.id TXN writes
VALUE to TOPIC-0 and commits. Prints `committed`."""
import sys

from confluent_kafka import Producer

boot, topic, txn, value = sys.argv[1:5]
producer = Producer({"bootstrap.servers": boot, "transactional.id": txn, "linger.ms": 5,
                     "transaction.timeout.ms": 60000})
producer.init_transactions(60)
producer.begin_transaction()
producer.produce(topic, value=value.encode(), partition=0)
producer.commit_transaction(60)
print("committed")
