"""kafka-python's admin client on what `mk-tui observe` asks: ListGroups,
ListTransactions, DescribeTransactions (and DescribeLogDirs)."""
import sys

from kafka import KafkaAdminClient

admin = KafkaAdminClient(bootstrap_servers=sys.argv[1], request_timeout_ms=15000)
for g in sorted(admin.list_groups(), key=lambda g: g["group_id"]):
    print("group", g["group_id"], g["group_state"])
listed = sorted(
    (t for ts in admin.list_transactions().values() for t in ts),
    key=lambda t: t.transactional_id,
)
for t in listed:
    print("transaction", t.transactional_id, t.state.value, t.producer_id)
described = admin.describe_transactions([t.transactional_id for t in listed])
for tid in sorted(described):
    d = described[tid]
    parts = sorted(f"{tp.topic}-{tp.partition}" for tp in d.topic_partitions)
    print("describe", tid, d.state.value, ",".join(parts) or "-")
print("hanging", len(admin.find_hanging_transactions()))
admin.close()
