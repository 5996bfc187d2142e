"""kafka-python's KafkaAdminClient.alter_configs on topic TOPIC.

`kp_alter_configs.py BOOT TOPIC inc|whole NAME=VALUE...`: `inc` sends
IncrementalAlterConfigs (a VALUE of `-` is a DELETE, any other a SET),
`whole` AlterConfigs (the whole set). Prints `TOPIC OUTCOME` per
resource (`OK` or the error's name).

`kp_alter_configs.py BOOT TOPIC create`: creates TOPIC (one partition,
one replica, no configs); prints `created TOPIC`.
"""
import sys

from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic

boot, topic, mode = sys.argv[1], sys.argv[2], sys.argv[3]
configs = {}
for arg in sys.argv[4:]:
    name, value = arg.split("=", 1)
    configs[name] = ("DELETE", None) if value == "-" else value
admin = KafkaAdminClient(bootstrap_servers=boot, request_timeout_ms=15000)
if mode == "create":
    admin.create_topics([NewTopic(topic, 1, 1)])
    print("created", topic)
    admin.close()
    sys.exit(0)
result = admin.alter_configs(
    [ConfigResource(ConfigResourceType.TOPIC, topic, configs=configs)],
    raise_on_unknown=False,
    incremental=(mode == "inc"),
)
for name, outcome in sorted(result["topic"].items()):
    print(name, outcome)
admin.close()
