"""A transaction its client leaves open: transactional.id TXN writes one
record to TOPIC-0 and neither commits nor aborts for SECONDS; then it
tries to commit. Prints `written`, then `committed` or `commit ERROR_NAME`
(the server timed the transaction out meanwhile)."""
import sys
import time

from confluent_kafka import KafkaException, Producer

boot, topic, txn, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
producer = Producer({"bootstrap.servers": boot, "transactional.id": txn, "linger.ms": 5})
producer.init_transactions(30)
producer.begin_transaction()
producer.produce(topic, value=b"left open", partition=0)
producer.flush(30)
print("written", flush=True)
time.sleep(seconds)
try:
    producer.commit_transaction(30)
    print("committed")
except KafkaException as e:
    print("commit", e.args[0].name())
