"""kafka-python end to end: CreateTopics, an acks=1 producer, and an
assign()ed consumer at both isolation levels."""
import sys

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

boot, topic = sys.argv[1], sys.argv[2]
admin = KafkaAdminClient(bootstrap_servers=boot, request_timeout_ms=15000)
admin.create_topics([NewTopic(topic, 1, 2)])
print("created")
producer = KafkaProducer(bootstrap_servers=boot, acks=1, request_timeout_ms=15000)
futures = [producer.send(topic, value=f"kp{i}".encode(), partition=0) for i in range(3)]
producer.flush(15)
print("offsets", *[f.get(15).offset for f in futures])
for isolation in ["read_uncommitted", "read_committed"]:
    consumer = KafkaConsumer(bootstrap_servers=boot, isolation_level=isolation,
                             enable_auto_commit=False, consumer_timeout_ms=10000)
    consumer.assign([TopicPartition(topic, 0)])
    consumer.seek_to_beginning()
    got = []
    for m in consumer:
        got.append(f"{m.offset}:{m.value.decode()}")
        if len(got) == 3:
            break
    consumer.close()
    print(isolation, *got)
