"""Produce COUNT records PREFIX0.. to one partition with a confluent-kafka
Producer at the given acks; prints each delivery report."""
import sys
import time

from confluent_kafka import Producer

boot, topic, partition, acks, count, prefix = sys.argv[1:7]
timeout_ms = int(sys.argv[7]) if len(sys.argv) > 7 else 30000
producer = Producer({
    "bootstrap.servers": boot,
    "acks": acks,
    "enable.idempotence": False,
    "linger.ms": 5,
    "request.timeout.ms": min(timeout_ms, 30000),
    "message.timeout.ms": timeout_ms,
    "retries": 0,
})
reports = []


def report(err, msg):
    reports.append(f"failed {err.name()}" if err else f"delivered {msg.offset()}")


start = time.monotonic()
for i in range(int(count)):
    producer.produce(topic, value=f"{prefix}{i}".encode(), partition=int(partition), on_delivery=report)
producer.flush(timeout_ms / 1000 + 10)
for line in reports:
    print(line)
print("elapsed_ms", int((time.monotonic() - start) * 1000))
