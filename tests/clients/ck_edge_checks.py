"""The edge's Kafka checks, as confluent-kafka meets them (BOOT, then a
topic prefix P): prints one line per check, "NAME: RESULT".

- compacted-no-key: a record without a key to a topic created with
  cleanup.policy=compact (Kafka: INVALID_RECORD), then one with a key;
- collision: creating P.x_y after P.x.y (Kafka: TOPIC_EXCEPTION);
- bad-name: producing to a name no topic can have fails at once
  (Kafka's Metadata: TOPIC_EXCEPTION), not after message.timeout.ms;
- txn-timeout: init_transactions with transaction.timeout.ms 900001
  (Kafka: INVALID_TRANSACTION_TIMEOUT);
- txn-offsets-unknown: send_offsets_to_transaction for a partition that
  does not exist (Kafka: UNKNOWN_TOPIC_OR_PART), then abort."""
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

boot, prefix = sys.argv[1:3]
admin = AdminClient({"bootstrap.servers": boot})


def create(name, config=None):
    f = admin.create_topics([NewTopic(name, 1, 1, config=config or {})])[name]
    try:
        f.result(15)
        return "created"
    except KafkaException as e:
        return e.args[0].name()


def deliver(topic, key, value, timeout_ms=15000):
    out = []
    p = Producer({"bootstrap.servers": boot, "message.timeout.ms": timeout_ms,
                  "enable.idempotence": False, "retries": 0})
    p.produce(topic, key=key, value=value, partition=0,
              on_delivery=lambda e, m: out.append(e.name() if e else f"offset {m.offset()}"))
    p.flush(timeout_ms / 1000 + 10)
    return out[0] if out else "no report"


compacted = f"{prefix}-compacted"
create(compacted, {"cleanup.policy": "compact"})
print("compacted-no-key:", deliver(compacted, None, b"v"), "then", deliver(compacted, b"k", b"v"))

print("collision:", create(f"{prefix}.x.y"), "then", create(f"{prefix}.x_y"))

start = time.monotonic()
result = deliver("bad name", None, b"v", timeout_ms=20000)
print("bad-name:", result, "at once" if time.monotonic() - start < 10 else "after waiting")

t = Producer({"bootstrap.servers": boot, "transactional.id": f"{prefix}-long",
              "transaction.timeout.ms": 900001})
try:
    t.init_transactions(15)
    print("txn-timeout: init ok")
except KafkaException as e:
    print("txn-timeout:", e.args[0].name())

out = f"{prefix}-out"
create(out)
t = Producer({"bootstrap.servers": boot, "transactional.id": f"{prefix}-tx"})
t.init_transactions(15)
t.begin_transaction()
t.produce(out, b"v", partition=0)
c = Consumer({"bootstrap.servers": boot, "group.id": f"{prefix}-g"})
try:
    t.send_offsets_to_transaction([TopicPartition(out, 9, 3)], c.consumer_group_metadata(), 15)
    print("txn-offsets-unknown: staged")
except KafkaException as e:
    print("txn-offsets-unknown:", e.args[0].name())
t.abort_transaction(15)
c.close()
