"""DeleteTopics through confluent-kafka's AdminClient: one line per topic,
`deleted NAME` or `error NAME CODE`."""
import sys

from confluent_kafka.admin import AdminClient

boot, names = sys.argv[1], sys.argv[2:]
admin = AdminClient({"bootstrap.servers": boot})
for topic, future in sorted(admin.delete_topics(names, operation_timeout=15).items()):
    try:
        future.result(15)
        print("deleted", topic)
    except Exception as e:  # KafkaException carrying the broker's error
        print("error", topic, e.args[0].name() if e.args else e)
