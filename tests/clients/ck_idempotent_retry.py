"""The lesson on idempotence with confluent-kafka: an idempotent producer
(enable.idempotence) sends COUNT records PREFIX0.. to TOPIC-0 in one batch
while the server drops the response of that Produce (`--fault
drop-produce-response` or the dashboard's `D`). request.timeout.ms is
short, so the client gives up on the lost response within seconds and
retries the same batch (same producer id, epoch and sequences); the
server's sequence check answers the retry with the original offsets.
Prints each delivery report, then `elapsed_ms N`."""
import sys
import time

from confluent_kafka import Producer

boot, topic, count, prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
producer = Producer({
    "bootstrap.servers": boot,
    "enable.idempotence": True,
    "acks": "all",
    "linger.ms": 50,
    # The lost response: the client waits this long for it, then retries.
    "request.timeout.ms": 2000,
    "retry.backoff.ms": 100,
    "message.timeout.ms": 30000,
})
reports = []
start = time.monotonic()
for i in range(count):
    producer.produce(topic, value=f"{prefix}{i}".encode(), partition=0,
                     on_delivery=lambda err, msg: reports.append(
                         f"failed {err.name()}" if err else f"delivered {msg.offset()}"))
left = producer.flush(40)
for line in reports:
    print(line)
if left:
    print(f"undelivered {left}")
print(f"elapsed_ms {int((time.monotonic() - start) * 1000)}")
