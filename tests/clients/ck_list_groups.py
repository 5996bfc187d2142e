"""confluent-kafka's AdminClient.list_consumer_groups (ListGroups)."""
import sys

from confluent_kafka.admin import AdminClient

# Kept in a variable: a client collected before its future completes
# fails it with _DESTROY.
admin = AdminClient({"bootstrap.servers": sys.argv[1]})
result = admin.list_consumer_groups().result(timeout=15)
for g in sorted(result.valid, key=lambda g: g.group_id):
    print("group", g.group_id, g.state.name)
for e in result.errors:
    print("error", e)
