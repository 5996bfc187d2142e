"""The book's leader-failure lab (ch06, SPEC E6) through kafka-python, in
the two phases of ck_leader_failure.py around the failover the dashboard
drives:

  produce BOOT TOPIC: an acks=1 KafkaProducer writes one record to TOPIC-0
      and prints `acknowledged offset: N`, then the high watermark
      (end_offsets: ListOffsets latest) as `consumer-visible end (HW): N`;
  consume BOOT TOPIC: a KafkaConsumer reads TOPIC-0 from the beginning to
      its end and prints `records after failover: N`."""
import sys

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

phase, boot, topic = sys.argv[1], sys.argv[2], sys.argv[3]
tp = TopicPartition(topic, 0)

if phase == "produce":
    producer = KafkaProducer(bootstrap_servers=boot, acks=1, enable_idempotence=False,
                             request_timeout_ms=15000)
    meta = producer.send(topic, value=b"acked-by-leader-only", partition=0).get(20)
    print(f"acknowledged offset: {meta.offset}")
    producer.close(5)
    c = KafkaConsumer(bootstrap_servers=boot, enable_auto_commit=False,
                      request_timeout_ms=15000)
    print(f"consumer-visible end (HW): {c.end_offsets([tp])[tp]}")
    c.close()
elif phase == "consume":
    c = KafkaConsumer(bootstrap_servers=boot, enable_auto_commit=False,
                      consumer_timeout_ms=1500, request_timeout_ms=15000)
    c.assign([tp])
    c.seek_to_beginning(tp)
    records = sum(1 for _ in c)
    c.end_offsets([tp])  # raises unless the new leader answered
    print(f"records after failover: {records}")
    c.close()
else:
    raise SystemExit(f"unknown phase {phase}")
