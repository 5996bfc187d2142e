"""kafka-python's KafkaAdminClient.describe_log_dirs (DescribeLogDirs) of
the brokers named after the bootstrap address."""
import sys

from kafka import KafkaAdminClient

admin = KafkaAdminClient(bootstrap_servers=sys.argv[1], request_timeout_ms=15000)
brokers = [int(b) for b in sys.argv[2:]]
for b in sorted(admin.describe_log_dirs(brokers=brokers), key=lambda b: b["broker"]):
    for d in b["log_dirs"]:
        for t in d["topics"]:
            for p in t["partitions"]:
                print("logdir", b["broker"], d["log_dir"].rsplit("/", 1)[-1],
                      f"{t['name']}-{p['partition_index']}", p["partition_size"],
                      p["offset_lag"], "future" if p["is_future_key"] else "current")
admin.close()
