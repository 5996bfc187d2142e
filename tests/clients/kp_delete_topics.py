"""DeleteTopics through kafka-python's KafkaAdminClient (errors not
raised): one line per topic, `NAME CODE` (0 when deleted)."""
import sys

from kafka import KafkaAdminClient

boot, names = sys.argv[1], sys.argv[2:]
admin = KafkaAdminClient(bootstrap_servers=boot, request_timeout_ms=15000)
result = admin.delete_topics(names, timeout_ms=15000, raise_errors=False)
for t in sorted(result["topics"], key=lambda t: t["name"]):
    print(t["name"], t["error_code"])
admin.close()
