"""The lesson on idempotence with kafka-python: an idempotent KafkaProducer
(enable_idempotence, acks=all) sends COUNT records PREFIX0.. to TOPIC-0 in
one batch while the server drops the response of that Produce and closes
the connection (`--fault drop-produce-response`). The client retries the
same batch on a new connection; the server's sequence check answers the
retry with the original offsets. With REQUEST_TIMEOUT_MS (default 5000)
short, it also retries a Produce whose acks=all answer is slow (the
dashboard, before `r`). Prints `offsets ...` (each record's offset from
its future), then `elapsed_ms N`."""
import sys
import time

from kafka import KafkaProducer

boot, topic, count, prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
timeout_ms = int(sys.argv[5]) if len(sys.argv) > 5 else 5000
producer = KafkaProducer(bootstrap_servers=boot, enable_idempotence=True, acks="all",
                         linger_ms=50, request_timeout_ms=timeout_ms, retry_backoff_ms=100,
                         delivery_timeout_ms=30000)
start = time.monotonic()
futures = [producer.send(topic, value=f"{prefix}{i}".encode(), partition=0)
           for i in range(count)]
producer.flush(30)
print("offsets", *[f.get(30).offset for f in futures])
print(f"elapsed_ms {int((time.monotonic() - start) * 1000)}")
producer.close(5)
