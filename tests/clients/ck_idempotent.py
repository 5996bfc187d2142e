"""An idempotent confluent-kafka producer (enable.idempotence, acks=all)
writes COUNT records PREFIX0.. to TOPIC-0; prints each delivery report,
then the producer id the client was given (from its logs' PID)."""
import sys

from confluent_kafka import Producer

boot, topic, count, prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
producer = Producer({
    "bootstrap.servers": boot,
    "enable.idempotence": True,
    "acks": "all",
    "linger.ms": 20,
    "message.timeout.ms": 30000,
})
reports = []
for i in range(count):
    producer.produce(topic, value=f"{prefix}{i}".encode(), partition=0,
                     on_delivery=lambda err, msg: reports.append(
                         f"failed {err.name()}" if err else f"delivered {msg.offset()}"))
producer.flush(40)
for line in reports:
    print(line)
