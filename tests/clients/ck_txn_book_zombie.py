"""The same two producers of one transactional.id under the book's rules
(E14: no fencing): the first writes "from-zombie" and keeps its
transaction open; the second's init_transactions() is answered
CONCURRENT_TRANSACTIONS (the book refuses begin of an active id) and
retries, until the first commits a second later; then it initialises.
Prints `zombie commit: ok`, `fresh init: ok after the zombie's commit`
and what a read_committed consumer reads of out-0."""
import sys
import threading
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

boot = sys.argv[1]
admin = AdminClient({"bootstrap.servers": boot})
admin.create_topics([NewTopic("out", 1, 1)])["out"].result(15)


def producer():
    return Producer({"bootstrap.servers": boot, "transactional.id": "app", "linger.ms": 5})


zombie = producer()
zombie.init_transactions(30)
zombie.begin_transaction()
zombie.produce("out", value=b"from-zombie", partition=0)
zombie.flush(30)
fresh = producer()
done = {}


def init():
    fresh.init_transactions(30)
    done["at"] = time.monotonic()


thread = threading.Thread(target=init)
thread.start()
time.sleep(1.0)
committed_at = time.monotonic()
zombie.commit_transaction(30)
print("zombie commit: ok")
thread.join(40)
print("fresh init:", "ok after the zombie's commit" if done.get("at", 0) > committed_at else done)
fresh.begin_transaction()
fresh.produce("out", value=b"from-fresh", partition=0)
fresh.commit_transaction(30)
consumer = Consumer({"bootstrap.servers": boot, "group.id": "mk-tui-book", "enable.auto.commit": False,
                     "isolation.level": "read_committed", "enable.partition.eof": True})
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
        continue
    values.append(msg.value())
consumer.close()
print("read_committed:", values)
