"""IncrementalAlterConfigs and AlterConfigs through confluent-kafka's
AdminClient, and what a topic's retention does to its log.

`ck_alter_configs.py BOOT TOPIC scenario`: on TOPIC (made with no
configs), one line per request, each followed by the topic's configs a
topic sets (`  NAME=VALUE SOURCE`, sorted):
  - `set`: incremental SET cleanup.policy=compact, retention.ms=60000;
  - `delete`: incremental DELETE retention.ms;
  - `bad`: incremental SET retention.ms=soon (`error CODE_NAME`);
  - `unknown`: incremental SET retention.mss=5 (`error CODE_NAME`);
  - `whole`: alter_configs (the whole set) retention.bytes=4096, which
    takes cleanup.policy back to its default.

`ck_alter_configs.py BOOT TOPIC produce N`: N records to partition 0,
one batch each (linger 0, flushed one by one), so small segments roll.

`ck_alter_configs.py BOOT TOPIC earliest`: waits (at most 30 s) until
partition 0's earliest offset is past 0; prints `earliest L latest H`.
"""
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
)

boot, topic, mode = sys.argv[1], sys.argv[2], sys.argv[3]
KEYS = ("cleanup.policy", "delete.retention.ms", "retention.bytes", "retention.ms")
TOPIC = ConfigResource.Type.TOPIC


def show(admin):
    configs = admin.describe_configs([ConfigResource(TOPIC, topic)], request_timeout=15)
    got = list(configs.values())[0].result(timeout=20)
    for c in sorted(got.values(), key=lambda c: c.name):
        if c.name in KEYS:
            print(f"  {c.name}={c.value} {ConfigSource(c.source).name}")


def incremental(admin, label, entries):
    resource = ConfigResource(TOPIC, topic, incremental_configs=entries)
    future = admin.incremental_alter_configs([resource], request_timeout=15)
    try:
        list(future.values())[0].result(timeout=20)
        print(label, "ok")
    except KafkaException as e:
        print(label, "error", e.args[0].name())
    show(admin)


if mode == "scenario":
    admin = AdminClient({"bootstrap.servers": boot})
    SET, DELETE = AlterConfigOpType.SET, AlterConfigOpType.DELETE
    incremental(admin, "set", [
        ConfigEntry("cleanup.policy", "compact", incremental_operation=SET),
        ConfigEntry("retention.ms", "60000", incremental_operation=SET),
    ])
    incremental(admin, "delete", [ConfigEntry("retention.ms", None, incremental_operation=DELETE)])
    incremental(admin, "bad", [ConfigEntry("retention.ms", "soon", incremental_operation=SET)])
    incremental(admin, "unknown", [ConfigEntry("retention.mss", "5", incremental_operation=SET)])
    whole = ConfigResource(TOPIC, topic, set_config={"retention.bytes": "4096"})
    future = admin.alter_configs([whole], request_timeout=15)
    list(future.values())[0].result(timeout=20)
    print("whole ok")
    show(admin)
elif mode == "produce":
    producer = Producer({"bootstrap.servers": boot, "linger.ms": 0, "acks": "1"})
    for i in range(int(sys.argv[4])):
        producer.produce(topic, value=f"record-{i:03}".encode(), partition=0)
        if producer.flush(20) != 0:
            sys.exit(f"record {i} not delivered")
    print("produced", sys.argv[4])
elif mode == "earliest":
    c = Consumer({"bootstrap.servers": boot, "group.id": "watermarks"})
    end = time.time() + 30
    low, high = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    while low == 0 and time.time() < end:
        time.sleep(0.2)
        low, high = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    print("earliest", low, "latest", high)
    c.close()
