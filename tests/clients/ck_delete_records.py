"""DeleteRecords through confluent-kafka's AdminClient: for each
`TOPIC:PARTITION:OFFSET` argument, one line `deleted TOPIC-P low N` or
`error TOPIC-P CODE`, then the partition's watermarks as a consumer sees
them, `watermarks TOPIC-P LOW HIGH`."""
import sys

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient

boot, asks = sys.argv[1], sys.argv[2:]
admin = AdminClient({"bootstrap.servers": boot})
for ask in asks:
    topic, partition, offset = ask.split(":")
    tp = TopicPartition(topic, int(partition), int(offset))
    for done, future in admin.delete_records([tp], operation_timeout=15).items():
        try:
            result = future.result(15)
            print(f"deleted {topic}-{partition} low {result.low_watermark}")
        except Exception as e:  # KafkaException carrying the broker's error
            print(f"error {topic}-{partition}", e.args[0].name() if e.args else e)
consumer = Consumer({"bootstrap.servers": boot, "group.id": "dr"})
for ask in asks[:1]:
    topic, partition, _ = ask.split(":")
    low, high = consumer.get_watermark_offsets(TopicPartition(topic, int(partition)), timeout=15)
    print(f"watermarks {topic}-{partition} {low} {high}")
consumer.close()
