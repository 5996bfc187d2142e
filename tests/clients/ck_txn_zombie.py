"""The zombie lesson (E14) with real confluent-kafka producers sharing a
transactional.id: a second producer's init_transactions() fences the
first, whose open transaction the cluster aborts.

- "app": the zombie writes "from-zombie"; a new producer initialises; the
  zombie's commit fails (the server answers EndTxn PRODUCER_FENCED); the
  new producer commits "from-fresh".
- "late": the zombie writes "w1"; a new producer initialises; the
  zombie's next write fails (Produce answered INVALID_PRODUCER_EPOCH,
  which the client reports as fenced).

Prints `zombie commit: ERROR fatal|not fatal`, `zombie write: ERROR ...`
and what a read_committed consumer reads of out-0."""
import sys
import time

from confluent_kafka import (OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer,
                             TopicPartition)
from confluent_kafka.admin import AdminClient, NewTopic

boot = sys.argv[1]
admin = AdminClient({"bootstrap.servers": boot})
admin.create_topics([NewTopic("out", 1, 1)])["out"].result(15)


def producer(txn):
    p = Producer({"bootstrap.servers": boot, "transactional.id": txn, "linger.ms": 5,
                  "message.timeout.ms": 10000})
    p.init_transactions(30)
    return p


def failure(e):
    err = e.args[0]
    return f"{err.name()} {'fatal' if err.fatal() else 'not fatal'}"


zombie = producer("app")
zombie.begin_transaction()
zombie.produce("out", value=b"from-zombie", partition=0)
zombie.flush(30)
fresh = producer("app")
try:
    zombie.commit_transaction(30)
    print("zombie commit: ok")
except KafkaException as e:
    print("zombie commit:", failure(e))
fresh.begin_transaction()
fresh.produce("out", value=b"from-fresh", partition=0)
fresh.commit_transaction(30)

zombie2 = producer("late")
zombie2.begin_transaction()
zombie2.produce("out", value=b"w1", partition=0)
zombie2.flush(30)
fresh2 = producer("late")
zombie2.produce("out", value=b"late", partition=0)
try:
    zombie2.flush(30)
    zombie2.commit_transaction(30)
    print("zombie write: ok")
except KafkaException as e:
    print("zombie write:", failure(e))

consumer = Consumer({"bootstrap.servers": boot, "group.id": "mk-tui-zombie",
                     "enable.auto.commit": False, "isolation.level": "read_committed",
                     "enable.partition.eof": True})
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
