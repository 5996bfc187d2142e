"""A topic's min.insync.replicas through confluent-kafka's AdminClient.

`ck_min_isr.py BOOT TOPIC set VALUE`: IncrementalAlterConfigs SET
min.insync.replicas=VALUE; `... delete`: DELETE it. Prints `ok` or
`error CODE_NAME`, then `min.insync.replicas=VALUE SOURCE` as
DescribeConfigs reads it afterwards.
"""
import sys

from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
)

boot, topic, mode = sys.argv[1], sys.argv[2], sys.argv[3]
TOPIC = ConfigResource.Type.TOPIC
KEY = "min.insync.replicas"
admin = AdminClient({"bootstrap.servers": boot})
if mode == "set":
    entry = ConfigEntry(KEY, sys.argv[4], incremental_operation=AlterConfigOpType.SET)
else:
    entry = ConfigEntry(KEY, None, incremental_operation=AlterConfigOpType.DELETE)
resource = ConfigResource(TOPIC, topic, incremental_configs=[entry])
future = admin.incremental_alter_configs([resource], request_timeout=15)
try:
    list(future.values())[0].result(timeout=20)
    print("ok")
except KafkaException as e:
    print("error", e.args[0].name())
configs = admin.describe_configs([ConfigResource(TOPIC, topic)], request_timeout=15)
got = list(configs.values())[0].result(timeout=20)
print(f"{KEY}={got[KEY].value} {ConfigSource(got[KEY].source).name}")
