"""CreateTopics through confluent-kafka's AdminClient; any arguments
after RF are topic configs, KEY=VALUE."""
import sys

from confluent_kafka.admin import AdminClient, NewTopic

boot, name, partitions, rf = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
configs = dict(arg.split("=", 1) for arg in sys.argv[5:])
admin = AdminClient({"bootstrap.servers": boot})
for topic, future in admin.create_topics([NewTopic(name, partitions, rf, config=configs)]).items():
    try:
        future.result(15)
        print("created", topic)
    except Exception as e:  # KafkaException carrying the broker's error
        print("error", topic, e.args[0].name() if e.args else e)
