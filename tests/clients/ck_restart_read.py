"""A confluent-kafka Consumer (assign(), no group commits) reading every
partition of the named topics from the beginning, at ISOLATION
(tests/serve/restart_promises.rs, the soak). Usage: BOOT ISOLATION
once|follow TOPIC:PARTITIONS... Prints `read TOPIC PARTITION OFFSET
VALUE` per record and `error NAME ...` (ck_restart_common.py).
`once`: reads to the end of each partition (`end TOPIC PARTITION` each,
the LSO at read_committed), then `done N`; at most 60 s. `follow`: reads
on across restarts until a line `stop` (or the end) of standard input,
then `done N`. Exits after 900 s whatever happens."""
import sys
import threading
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from ck_restart_common import config, lifetime, say

lifetime(900)
boot, isolation, mode = sys.argv[1], sys.argv[2], sys.argv[3]
parts = []
for spec in sys.argv[4:]:
    topic, n = spec.split(":")
    parts += [(topic, p) for p in range(int(n))]
conf = config(boot, f"reader-{isolation}", {
    "group.id": f"reader-{isolation}",
    "enable.auto.commit": False,
    "isolation.level": isolation,
    "enable.partition.eof": True,
})
del conf["stats_cb"], conf["statistics.interval.ms"]
consumer = Consumer(conf)
consumer.assign([TopicPartition(t, p, OFFSET_BEGINNING) for t, p in parts])
stop = threading.Event()
if mode == "follow":
    def watch_input():
        for line in sys.stdin:
            if line.strip() == "stop":
                break
        stop.set()
    threading.Thread(target=watch_input, daemon=True).start()
say("ready")
ended = set()
got = 0
deadline = time.monotonic() + 60
while not stop.is_set():
    if mode == "once" and (len(ended) == len(parts) or time.monotonic() > deadline):
        break
    msg = consumer.poll(0.2)
    if msg is None:
        continue
    if msg.error():
        if msg.error().name() == "_PARTITION_EOF":
            if (msg.topic(), msg.partition()) not in ended:
                ended.add((msg.topic(), msg.partition()))
                if mode == "once":
                    say("end", msg.topic(), msg.partition())
        else:
            say("error", msg.error().name(), "fatal" if msg.error().fatal() else "retriable")
        continue
    got += 1
    say("read", msg.topic(), msg.partition(), msg.offset(), msg.value().decode())
consumer.close()
say("done", got)
