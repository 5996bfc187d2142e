"""The book's leader-failure lab (ch06, SPEC E6) through confluent-kafka,
in two phases around the failover the dashboard drives (stop the leader,
promote the follower, start the old leader, replicate):

  produce BOOT TOPIC: an acks=1 Producer writes one record to TOPIC-0 and
      prints `acknowledged offset: N`, then the partition's high watermark
      (ListOffsets latest, read_uncommitted) as `consumer-visible end (HW): N`;
  consume BOOT TOPIC: a read_uncommitted Consumer reads TOPIC-0 from the
      beginning to its end and prints `records after failover: N`.

The lines are examples/leader_failure.rs's."""
import sys

from confluent_kafka import Consumer, Producer, TopicPartition

phase, boot, topic = sys.argv[1], sys.argv[2], sys.argv[3]
tp = TopicPartition(topic, 0)


def consumer():
    return Consumer({
        "bootstrap.servers": boot,
        "group.id": "leader-failure-lab",
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "isolation.level": "read_uncommitted",
        "auto.offset.reset": "earliest",
    })


if phase == "produce":
    producer = Producer({"bootstrap.servers": boot, "acks": "1", "linger.ms": 0,
                         "message.timeout.ms": 20000})
    offsets = []
    producer.produce(topic, value=b"acked-by-leader-only", partition=0,
                     on_delivery=lambda err, msg: offsets.append(
                         f"failed {err.name()}" if err else msg.offset()))
    producer.flush(30)
    print(f"acknowledged offset: {offsets[0]}")
    c = consumer()
    _, high = c.get_watermark_offsets(tp, timeout=20, cached=False)
    print(f"consumer-visible end (HW): {high}")
    c.close()
elif phase == "consume":
    c = consumer()
    c.assign([TopicPartition(topic, 0, 0)])
    records = 0
    while True:
        msg = c.poll(20)
        if msg is None:
            raise SystemExit("no end of partition within 20 s")
        if msg.error():
            if msg.error().code() == -191:  # _PARTITION_EOF: at the log end
                break
            raise SystemExit(f"consume: {msg.error()}")
        records += 1
    print(f"records after failover: {records}")
    c.close()
else:
    raise SystemExit(f"unknown phase {phase}")
