"""What a client waits on replication for, timed (tests/serve/latency.rs):
COUNT acks=all records produced one at a time (each flushed before the
next) to TOPIC-0, then COUNT records each read by a waiting consumer
(assigned at the end) before the next is produced. Usage: BOOT TOPIC COUNT.
Prints `acks_all COUNT MS` and `end_to_end COUNT MS` (the total time of
each loop), or `failed ...`. Exits after 120 s whatever happens."""
import sys
import threading
import time

from confluent_kafka import Consumer, Producer, TopicPartition

threading.Timer(120, lambda: (print("failed: ran past 120 s", flush=True),
                              __import__("os")._exit(1))).start()
boot, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
failed = []


def report(err, msg):
    if err:
        failed.append(err.name())


p = Producer({"bootstrap.servers": boot, "acks": "all", "linger.ms": 0,
              "message.timeout.ms": 60000})
p.produce(topic, b"warm", partition=0, on_delivery=report)
p.flush(60)
start = time.monotonic()
for i in range(count):
    p.produce(topic, f"a{i}".encode(), partition=0, on_delivery=report)
    p.flush(60)
print("acks_all", count, int((time.monotonic() - start) * 1000), flush=True)

c = Consumer({"bootstrap.servers": boot, "group.id": "wait-on-replication",
              "enable.auto.commit": False, "fetch.wait.max.ms": 500})
_, end = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
c.assign([TopicPartition(topic, 0, end)])
start = time.monotonic()
for i in range(count):
    p.produce(topic, f"e{i}".encode(), partition=0, on_delivery=report)
    p.flush(60)
    while True:
        msg = c.poll(10)
        if msg is None:
            failed.append(f"e{i} not read in 10 s")
            break
        if not msg.error() and msg.value() == f"e{i}".encode():
            break
print("end_to_end", count, int((time.monotonic() - start) * 1000), flush=True)
c.close()
for f in failed:
    print("failed", f)
__import__("os")._exit(0)
