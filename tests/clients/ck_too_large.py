"""Produce, to partition 0 of TOPIC, a 2,000,000-byte record uncompressed,
a 3,000,000-byte record of one repeated byte compressed with gzip (a few
KB on the wire), then a small record; prints each delivery report in that
order ("failed NAME" or "delivered OFFSET")."""
import sys

from confluent_kafka import Producer

boot, topic = sys.argv[1:3]
reports = []


def report(err, msg):
    reports.append(f"failed {err.name()}" if err else f"delivered {msg.offset()}")


for value, compression in ((b"x" * 2_000_000, "none"), (b"a" * 3_000_000, "gzip"), (b"small", "none")):
    producer = Producer({
        "bootstrap.servers": boot,
        "compression.type": compression,
        "message.max.bytes": 5_000_000,
        "enable.idempotence": False,
        "retries": 0,
        "message.timeout.ms": 20000,
    })
    producer.produce(topic, value=value, partition=0, on_delivery=report)
    producer.flush(30)
for line in reports:
    print(line)
