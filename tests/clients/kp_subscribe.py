"""subscribe() with one kafka-python consumer per group: three records
r0-r2 in TOPIC-0; a consumer of group GROUP subscribes, reads them,
commits and closes; two more records r3-r4; a new consumer of the group
resumes at the committed offset and reads only them. Prints `read ...`
and `committed N`."""
import sys

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

boot, topic, group = sys.argv[1], sys.argv[2], sys.argv[3]
producer = KafkaProducer(bootstrap_servers=boot, acks=1)


def produce(values):
    for v in values:
        producer.send(topic, value=v.encode(), partition=0)
    producer.flush(15)


def read(count):
    c = KafkaConsumer(topic, bootstrap_servers=boot, group_id=group,
                      auto_offset_reset="earliest", enable_auto_commit=False,
                      consumer_timeout_ms=20000)
    got = []
    for m in c:
        got.append(m.value.decode())
        if len(got) == count:
            break
    c.commit()
    committed = c.committed(TopicPartition(topic, 0))
    c.close()
    return got, committed


produce(["r0", "r1", "r2"])
got, committed = read(3)
print("read", *got)
print("committed", committed)
produce(["r3", "r4"])
got, committed = read(2)
print("read", *got)
print("committed", committed)
