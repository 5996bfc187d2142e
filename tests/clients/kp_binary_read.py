"""kafka-python reading every record of TOPIC-0 from the beginning as raw
bytes (tests/serve/binary.rs). Usage: BOOT TOPIC. Prints `read OFFSET
RECORD` as ck_binary.py prints `acked`, then `done N`; at most 60 s."""
import sys
import time

from kafka import KafkaConsumer, TopicPartition

boot, topic = sys.argv[1], sys.argv[2]
consumer = KafkaConsumer(bootstrap_servers=boot, enable_auto_commit=False,
                         auto_offset_reset="earliest", consumer_timeout_ms=3000)
tp = TopicPartition(topic, 0)
consumer.assign([tp])
consumer.seek_to_beginning(tp)
end = consumer.end_offsets([tp])[tp]


def hexed(b):
    return "-" if b is None else b.hex()


got = 0
deadline = time.monotonic() + 60
while time.monotonic() < deadline and consumer.position(tp) < end:
    for msg in consumer:
        hs = ",".join(f"{k}={hexed(v)}" for k, v in msg.headers or [])
        print(f"read {msg.offset} {hexed(msg.key)}|{hexed(msg.value)}|{hs}")
        got += 1
        if msg.offset + 1 >= end:
            break
consumer.close()
print("done", got)
