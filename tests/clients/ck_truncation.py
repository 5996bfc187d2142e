"""Read one partition from its start with a confluent-kafka Consumer
(assigned, no group commits) until WANT records have been read or the
deadline passes. Each record read is appended to PROGRESS as
"offset value" (flushed at once, for the test to follow), and printed at
the end, followed by librdkafka's log lines about offset validation and
truncation ("log: ...")."""
import logging
import sys
import time

from confluent_kafka import Consumer, TopicPartition

boot, topic, partition, want, progress = sys.argv[1:6]
deadline = time.monotonic() + (float(sys.argv[6]) if len(sys.argv) > 6 else 60)
lines = []


class Keep(logging.Handler):
    def emit(self, record):
        text = record.getMessage()
        if "validation" in text or "runcat" in text:
            lines.append("log: " + text)


logger = logging.getLogger("rdkafka")
logger.setLevel(logging.DEBUG)
logger.addHandler(Keep())
consumer = Consumer({
    "bootstrap.servers": boot,
    "group.id": "truncation-watch",
    "enable.auto.commit": False,
    "auto.offset.reset": "earliest",
    "topic.metadata.refresh.interval.ms": 500,
    "debug": "fetch,topic",
}, logger=logger)
consumer.assign([TopicPartition(topic, int(partition), 0)])
read = []
with open(progress, "a", encoding="utf-8") as out:
    while len(read) < int(want) and time.monotonic() < deadline:
        msg = consumer.poll(0.2)
        if msg is None:
            continue
        if msg.error():
            lines.append(f"error: {msg.error().name()}")
            continue
        entry = f"{msg.offset()} {msg.value().decode()}"
        read.append(entry)
        out.write(entry + "\n")
        out.flush()
consumer.close()
for entry in read:
    print(entry)
for line in lines:
    print(line)
