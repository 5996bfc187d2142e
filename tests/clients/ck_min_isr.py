"""A topic's min.insync.replicas through confluent-kafka's AdminClient.

`ck_min_isr.py BOOT TOPIC set VALUE`: IncrementalAlterConfigs SET
min.insync.replicas=VALUE; `... delete`: DELETE it. Prints `ok` or
`error CODE_NAME`, then `min.insync.replicas=VALUE SOURCE` as
DescribeConfigs reads it afterwards.

Apache Kafka answers IncrementalAlterConfigs once its controller has the
change, and DescribeConfigs from the answering broker's metadata image,
which may not have it yet (a CI run read the old value): after `ok` the
read is repeated, for at most 15 s, until it shows the change.
"""
import sys
import time

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
    altered = True
except KafkaException as e:
    print("error", e.args[0].name())
    altered = False


def read():
    configs = admin.describe_configs([ConfigResource(TOPIC, topic)], request_timeout=15)
    entry = list(configs.values())[0].result(timeout=20)[KEY]
    return entry.value, ConfigSource(entry.source)


def shows_change(value, source):
    if mode == "set":
        return value == sys.argv[4] and source == ConfigSource.DYNAMIC_TOPIC_CONFIG
    return source != ConfigSource.DYNAMIC_TOPIC_CONFIG


value, source = read()
end = time.monotonic() + 15
while altered and not shows_change(value, source) and time.monotonic() < end:
    time.sleep(0.2)
    value, source = read()
print(f"{KEY}={value} {source.name}")
