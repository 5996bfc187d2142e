"""The load test's real client (tests/serve/load.rs): N confluent-kafka
Producers in one process, one thread each, produce to TOPIC for SECONDS
(producer i: partition i % PARTITIONS, acks=1 for even i and acks=all for
odd i; no idempotence, no retries, so nothing is sent twice). Values are
`k<i>-<seq>` padded to 100 bytes. Prints one line per acknowledged record,
`acked PARTITION OFFSET ACKS VALUE`, then `failed N` (delivery reports with
an error) and `elapsed SECONDS`."""
import sys
import threading
import time

from confluent_kafka import Producer

boot, topic, n, partitions, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
lock = threading.Lock()
acked = []
failed = [0]


def run(i, until):
    acks = "1" if i % 2 == 0 else "all"
    producer = Producer({
        "bootstrap.servers": boot,
        "client.id": f"load-{i}",
        "acks": acks,
        "enable.idempotence": False,
        "retries": 0,
        "linger.ms": 5,
        "message.timeout.ms": 30000,
        # At most 100 records waiting per producer, so the run ends soon
        # after SECONDS whatever the server's pace.
        "queue.buffering.max.messages": 100,
    })
    partition = i % partitions

    def report(err, msg):
        with lock:
            if err:
                failed[0] += 1
            else:
                acked.append((msg.partition(), msg.offset(), acks, msg.value().decode()))

    seq = 0
    while time.monotonic() < until:
        value = f"k{i:02}-{seq:08}-".ljust(100, "x")
        seq += 1
        try:
            producer.produce(topic, value=value.encode(), partition=partition, on_delivery=report)
        except BufferError:
            producer.poll(0.05)
            continue
        producer.poll(0)
        if seq % 200 == 0:
            producer.poll(0.01)
    producer.flush(60)


start = time.monotonic()
until = start + seconds
threads = [threading.Thread(target=run, args=(i, until)) for i in range(n)]
for t in threads:
    t.start()
for t in threads:
    t.join()
for p, o, a, v in acked:
    print("acked", p, o, a, v)
print("failed", failed[0])
print("elapsed", f"{time.monotonic() - start:.3f}")
