"""A confluent-kafka consumer in a long poll: fetch.wait.max.ms 10000 on an
empty partition 0 of TOPIC, then a producer writes one record (acks=1).
Prints the record the consumer received and the milliseconds between the
producer's acknowledgement and the consumer's receipt (a broker that
answers the waiting fetch when the record arrives: well under 10 s)."""
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition

boot, topic = sys.argv[1:3]
consumer = Consumer({
    "bootstrap.servers": boot,
    "group.id": "mk-tui-long-poll",
    "enable.auto.commit": False,
    "fetch.wait.max.ms": 10000,
})
consumer.assign([TopicPartition(topic, 0, 0)])
# Long enough for the consumer to be waiting in its fetch.
until = time.monotonic() + 3
while time.monotonic() < until:
    msg = consumer.poll(0.2)
    if msg is not None:
        print("unexpected", msg.error() or msg.value())

acked = []
producer = Producer({"bootstrap.servers": boot, "acks": "1", "linger.ms": 0})


def delivered(err, msg):
    if err is None:
        acked.append(time.monotonic())
    else:
        print("error", err.name())


producer.produce(topic, b"late", partition=0, on_delivery=delivered)
producer.flush(10)
received = None
deadline = time.monotonic() + 20
while received is None and time.monotonic() < deadline:
    msg = consumer.poll(0.05)
    if msg is None or msg.error():
        continue
    received = time.monotonic()
    print("received", msg.value().decode())
consumer.close()
if acked and received is not None:
    print("latency_ms", max(0, int((received - acked[0]) * 1000)))
else:
    print("acked", len(acked), "received", received is not None)
