"""One confluent-kafka Producer (idempotent unless told otherwise) kept
alive across server restarts, driven by commands on standard input
(tests/serve/restart_promises.rs). Usage: BOOT CLIENT_ID [KEY=VALUE...]
(extra producer settings). Prints the lines of ck_restart_common.py
(`error ...`, `ids PID EPOCH`, `delivered TOPIC PARTITION OFFSET VALUE`,
`failed TOPIC VALUE ERROR`) and runs one command a line:

  produce TOPIC PARTITION N PREFIX   N records PREFIX0.. and a flush of at
                                     most 60 s: each delivery report, then
                                     `ok produce` (`left N` first if some
                                     were neither delivered nor failed)
  quit                               exits

Exits at the end of its input and after 300 s whatever happens.
"""
import sys

from confluent_kafka import Producer

from ck_restart_common import config, lifetime, report, say, settings

lifetime(300)
boot, client_id = sys.argv[1], sys.argv[2]
extra = {"enable.idempotence": True, "acks": "all", "linger.ms": 5, "message.timeout.ms": 30000}
extra.update(settings(sys.argv[3:]))
producer = Producer(config(boot, client_id, extra))
say("ready")
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "produce":
        topic, partition, n, prefix = words[1], int(words[2]), int(words[3]), words[4]
        for i in range(n):
            producer.produce(topic, value=f"{prefix}{i}".encode(), partition=partition, on_delivery=report)
        left = producer.flush(60)
        # librdkafka's statistics (the `ids` line) come on a poll.
        producer.poll(0.3)
        if left:
            say("left", left)
        say("ok produce")
    elif words[0] == "quit":
        break
    else:
        say("failed unknown command", words[0])
