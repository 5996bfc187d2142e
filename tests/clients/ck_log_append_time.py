"""confluent-kafka: a LogAppendTime topic. Creates TOPIC (one partition, RF
given) with message.timestamp.type=LogAppendTime, then writes three
batches of three records (the middle one idempotent), each record with a
CreateTime far in the past (T0), the batches apart by 30 ms. Prints what can be compared with another
broker, never a time itself:
`delivered OFFSET TYPE` per record (the delivery report's timestamp type,
from the produce response's log_append_time_ms), then per record read
back `record OFFSET TYPE SEND DELIVERY` where SEND says whether its
timestamp is at or after the wall time before its produce() call
(`after_send`, else `before_send`) and DELIVERY whether it equals the
delivery report's (`as_delivered`, else `not_as_delivered`); then
`monotonic yes|no`, `batches N` (distinct timestamps), and
`offsets_for_times` answers `at NAME OFFSET as_read` (as_read: the first
offset read back stamped at or after the time asked, else
`expected_OFFSET`)."""
import sys
import time

from confluent_kafka import (OFFSET_BEGINNING, TIMESTAMP_CREATE_TIME,
                             TIMESTAMP_LOG_APPEND_TIME, Consumer, Producer,
                             TopicPartition)
from confluent_kafka.admin import AdminClient, NewTopic

T0 = 1_500_000_000_000
KINDS = {TIMESTAMP_CREATE_TIME: "create", TIMESTAMP_LOG_APPEND_TIME: "log_append"}

boot, topic, rf = sys.argv[1], sys.argv[2], int(sys.argv[3])
admin = AdminClient({"bootstrap.servers": boot})
admin.create_topics([NewTopic(topic, 1, rf, config={
    "message.timestamp.type": "LogAppendTime"})])[topic].result(15)

delivered = {}
sent_at = []
lines = []


def report(err, msg):
    if err:
        lines.append(f"failed {err.name()}")
        return
    kind, timestamp = msg.timestamp()
    delivered[msg.offset()] = timestamp
    lines.append(f"delivered {msg.offset()} {KINDS.get(kind, kind)}")


for batch in range(3):
    # The middle batch's producer is idempotent: its produce response is
    # answered by another path of the broker.
    # linger.ms long and flush() to send: each group of three is one batch
    # however slow the loop runs (with 5 ms a loaded machine split one).
    producer = Producer({"bootstrap.servers": boot, "linger.ms": 2000,
                         "enable.idempotence": batch == 1, "message.timeout.ms": 15000})
    # The topic's metadata first: a record produced before it is known waits
    # in librdkafka's unassigned queue, which flush() may drain into the
    # partition one record at a time while the broker thread already sends
    # (a loaded CI machine split a group into two batches that way).
    producer.list_topics(topic, timeout=15)
    for j in range(3):
        sent_at.append(int(time.time() * 1000))
        producer.produce(topic, value=f"v{batch}{j}".encode(), key=f"k{batch}{j}".encode(),
                         partition=0, timestamp=T0 + 3 * batch + j, on_delivery=report)
    producer.flush(20)
    time.sleep(0.03)
print(*lines, sep="\n")

consumer = Consumer({"bootstrap.servers": boot, "group.id": "log-append-time",
                     "enable.auto.commit": False})
consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
read = {}
deadline = time.monotonic() + 20
while len(read) < len(sent_at) and time.monotonic() < deadline:
    msg = consumer.poll(0.5)
    if msg is None or msg.error():
        continue
    kind, timestamp = msg.timestamp()
    read[msg.offset()] = timestamp
    send = "after_send" if timestamp >= sent_at[msg.offset()] else "before_send"
    same = "as_delivered" if delivered.get(msg.offset()) == timestamp else "not_as_delivered"
    print("record", msg.offset(), KINDS.get(kind, kind), send, same)
times = [read[o] for o in sorted(read)]
print("monotonic", "yes" if times == sorted(times) else "no")
print("batches", len(set(times)))

second = next((read[o] for o in sorted(read) if read[o] > times[0]), times[0])
asked = [("t0", T0), ("first", times[0]), ("second", second), ("past_last", times[-1] + 1)]
for name, at in asked:
    found = consumer.offsets_for_times([TopicPartition(topic, 0, at)], 15)[0]
    # The first offset read back stamped at or after the time asked.
    expected = next((o for o in sorted(read) if read[o] >= at), -1)
    check = "as_read" if found.offset == expected else f"expected_{expected}"
    print("at", name, found.offset, check)
consumer.close()
