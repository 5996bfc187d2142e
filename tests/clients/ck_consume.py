"""Read COUNT records of one partition from the beginning with a
confluent-kafka Consumer using assign() at the given isolation level."""
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

boot, topic, partition, isolation, count = sys.argv[1:6]
consumer = Consumer({
    "bootstrap.servers": boot,
    "group.id": "mk-tui-test",
    "enable.auto.commit": False,
    "isolation.level": isolation,
})
consumer.assign([TopicPartition(topic, int(partition), OFFSET_BEGINNING)])
got = 0
deadline = time.monotonic() + 20
while got < int(count) and time.monotonic() < deadline:
    msg = consumer.poll(0.5)
    if msg is None:
        continue
    if msg.error():
        print("error", msg.error().name())
        continue
    print("record", msg.offset(), msg.value().decode())
    got += 1
consumer.close()
print("done", got)
