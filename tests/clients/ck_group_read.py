"""A confluent-kafka Consumer of group GROUP subscribes to TOPIC (from
the earliest offset when the group has none committed), reads COUNT
records or for at most 30 s, commits what it read and closes. Prints
`read VALUE` per record, then `committed N` (records read)."""
import sys
import time

from confluent_kafka import Consumer

boot, topic, group, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
consumer = Consumer({
    "bootstrap.servers": boot,
    "group.id": group,
    "auto.offset.reset": "earliest",
    "enable.auto.commit": False,
})
consumer.subscribe([topic])
read = []
deadline = time.monotonic() + 30
while len(read) < count and time.monotonic() < deadline:
    msg = consumer.poll(0.2)
    if msg is None or msg.error():
        continue
    read.append(msg.value().decode())
if read:
    consumer.commit(asynchronous=False)
consumer.close()
for value in read:
    print("read", value)
print("committed", len(read))
