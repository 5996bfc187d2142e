"""A KIP-848 consumer (confluent-kafka, `group.protocol=consumer`) of
group GROUP subscribing to TOPIC: serve speaks the classic protocol only
and answers its ConsumerGroupHeartbeat UNSUPPORTED_VERSION. Prints the
error the application sees (`refused NAME API`, API the request named in
its text), or `no error` if none came in 15 s."""
import sys
import time

from confluent_kafka import Consumer

boot, topic, group = sys.argv[1:4]
c = Consumer({"bootstrap.servers": boot, "group.id": group, "group.protocol": "consumer",
              "auto.offset.reset": "earliest", "log_level": 0})
c.subscribe([topic])
seen = None
deadline = time.monotonic() + 15
while seen is None and time.monotonic() < deadline:
    msg = c.poll(0.2)
    if msg is not None and msg.error():
        seen = msg.error()
if seen is None:
    print("no error")
else:
    api = "ConsumerGroupHeartbeat" if "ConsumerGroupHeartbeat" in seen.str() else "-"
    print("refused", seen.name(), api)
c.close()
