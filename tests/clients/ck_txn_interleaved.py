"""One transaction of transactional.id TXN on TOPIC-0 around plain
records: the transaction writes `PREFIX-first`, a plain producer then
writes PLAIN records, the transaction writes `PREFIX-last` and commits, so
the transaction's batches are at the partition's next offset and PLAIN
after it. Prints `committed`."""
import sys

from confluent_kafka import Producer

boot, topic, txn, prefix, plain = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
producer = Producer({"bootstrap.servers": boot, "transactional.id": txn, "linger.ms": 0,
                     "transaction.timeout.ms": 60000})
producer.init_transactions(60)
producer.begin_transaction()
producer.produce(topic, value=f"{prefix}-first".encode(), partition=0)
producer.flush(30)
other = Producer({"bootstrap.servers": boot, "acks": "all", "enable.idempotence": False})
for i in range(plain):
    other.produce(topic, value=f"plain{i}".encode(), partition=0)
other.flush(30)
producer.produce(topic, value=f"{prefix}-last".encode(), partition=0)
producer.commit_transaction(60)
print("committed")
