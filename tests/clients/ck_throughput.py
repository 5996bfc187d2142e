"""The throughput benchmark's client (benches/kafka_throughput.rs): create
TOPIC (1 partition, 1 replica), produce COUNT values of SIZE bytes with an
acks=1 confluent-kafka Producer (batching on: linger.ms 5, the default
batch.size, no compression, no idempotence, no retries), then read them all
back with a read_committed Consumer using assign(). Prints
`produced N SECONDS ENQUEUED` and `fetched N SECONDS FIRST`, each timed
from the first call to the last delivery report or record (ENQUEUED: to
the end of the loop of produce() calls, the client's own floor; FIRST: to
the first record)."""
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

boot, topic, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
admin = AdminClient({"bootstrap.servers": boot})
admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)

producer = Producer({
    "bootstrap.servers": boot,
    "acks": 1,
    "linger.ms": 5,
    "compression.type": "none",
    "enable.idempotence": False,
    "retries": 0,
    "queue.buffering.max.messages": count + 1,
    "queue.buffering.max.kbytes": 2 * 1024 * 1024,
})
producer.list_topics(topic, timeout=30)
value = b"v" * size
failed = []
delivered = [0]


def report(err, msg):
    if err:
        failed.append(err.name())
    else:
        delivered[0] += 1


start = time.monotonic()
for _ in range(count):
    producer.produce(topic, value=value, partition=0, on_delivery=report)
    producer.poll(0)
enqueue_s = time.monotonic() - start
left = producer.flush(120)
produce_s = time.monotonic() - start
if left or failed or delivered[0] != count:
    sys.exit(f"produce: {delivered[0]} delivered, {left} left, failures {sorted(set(failed))}")
print("produced", count, f"{produce_s:.6f}", f"{enqueue_s:.6f}")

consumer = Consumer({
    "bootstrap.servers": boot,
    "group.id": "mk-tui-bench",
    "enable.auto.commit": False,
    "isolation.level": "read_committed",
    "fetch.wait.max.ms": 10,
})
consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
got = 0
first_s = None
start = time.monotonic()
deadline = start + 120
while got < count and time.monotonic() < deadline:
    for msg in consumer.consume(min(10000, count - got), 1.0):
        if msg.error():
            sys.exit(f"fetch: {msg.error().name()}")
        if first_s is None:
            first_s = time.monotonic() - start
        got += 1
fetch_s = time.monotonic() - start
consumer.close()
if got != count:
    sys.exit(f"fetch: {got} of {count} records")
print("fetched", got, f"{fetch_s:.6f}", f"{first_s:.6f}")

# The consumer's own floor: the same records read by a second consumer
# whose fetches finished before it is timed (librdkafka prefetches up to
# queued.max.messages.kbytes, 64 MiB by default: all of them), so only the
# client's consume() loop is measured.
consumer = Consumer({
    "bootstrap.servers": boot,
    "group.id": "mk-tui-bench-floor",
    "enable.auto.commit": False,
    "isolation.level": "read_committed",
    "fetch.wait.max.ms": 10,
})
consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
got = 0
deadline = time.monotonic() + 120
while got == 0 and time.monotonic() < deadline:
    got += len(consumer.consume(1, 1.0))
time.sleep(2.0)
start = time.monotonic()
while got < count and time.monotonic() < deadline:
    # consume(n) waits for n records or the timeout: never ask for more
    # than are left.
    for msg in consumer.consume(min(10000, count - got), 1.0):
        if msg.error():
            sys.exit(f"fetch: {msg.error().name()}")
        got += 1
floor_s = time.monotonic() - start
consumer.close()
if got != count:
    sys.exit(f"floor fetch: {got} of {count} records")
print("floor", count - 1, f"{floor_s:.6f}")
