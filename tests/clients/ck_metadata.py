"""Metadata through confluent-kafka: brokers, leaders, replicas, ISR."""
import sys

from confluent_kafka.admin import AdminClient

md = AdminClient({"bootstrap.servers": sys.argv[1]}).list_topics(timeout=15)
for b in sorted(md.brokers.values(), key=lambda b: b.id):
    print("broker", b.id, f"{b.host}:{b.port}")
for t in sorted(md.topics.values(), key=lambda t: t.topic):
    for p in sorted(t.partitions.values(), key=lambda p: p.id):
        print("partition", t.topic, p.id, "leader", p.leader,
              "replicas", ",".join(map(str, p.replicas)), "isr", ",".join(map(str, p.isrs)))
