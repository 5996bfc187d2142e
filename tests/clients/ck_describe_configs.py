"""confluent-kafka's AdminClient.describe_configs (DescribeConfigs).

argv: bootstrap, then resources as `topic:NAME` or `broker:ID` (librdkafka
sends a broker's to that broker), one request each. Prints, per
resource, `RESOURCE error CODE_NAME` or one line per config, sorted by
name: `RESOURCE NAME=VALUE SOURCE read_only|rw synonyms=[SOURCE:NAME=VALUE,...]`.
"""
import sys

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource


def source(s):
    """A config's or synonym's source by name (synonyms carry the int)."""
    return ConfigSource(s).name if isinstance(s, int) else s.name


admin = AdminClient({"bootstrap.servers": sys.argv[1]})
for spec in sys.argv[2:]:
    kind, _, name = spec.partition(":")
    restype = ConfigResource.Type.TOPIC if kind == "topic" else ConfigResource.Type.BROKER
    resource = ConfigResource(restype, name)
    futures = admin.describe_configs([resource], request_timeout=15)
    try:
        configs = list(futures.values())[0].result(timeout=20)
    except KafkaException as e:
        print(spec, "error", e.args[0].name())
        continue
    for c in sorted(configs.values(), key=lambda c: c.name):
        # confluent-kafka keys synonyms by name: of two levels with one
        # name (a broker config set and its default) it keeps the last.
        synonyms = ",".join(
            f"{source(s.source)}:{s.name}={s.value}" for s in c.synonyms.values()
        )
        ro = "read_only" if c.is_read_only else "rw"
        print(spec, f"{c.name}={c.value}", source(c.source), ro, f"synonyms=[{synonyms}]")
