"""One idempotent confluent-kafka Producer (acks=all) writing without a
pause across server restarts (tests/serve/restart_promises.rs, the soak):
records CLIENT_ID-SEQ to TOPIC's PARTITIONS partitions in turn, at most
RATE a second, until a line `stop` (or the end) of standard input, then a
flush of at most 60 s. Usage: BOOT TOPIC PARTITIONS CLIENT_ID RATE
[KEY=VALUE...]. Prints the lines of ck_restart_common.py (`ids`, `error`,
`delivered TOPIC PARTITION OFFSET VALUE`, `failed TOPIC VALUE ERROR`),
an `error NAME fatal` line when poll() or produce() raise a fatal error
(it stops producing then), and `done SENT LEFT` (records produced, and those
never reported).
Exits after 900 s whatever happens."""
import sys
import threading
import time

from confluent_kafka import KafkaException, Producer

from ck_restart_common import config, error_cb, lifetime, report, say, settings

lifetime(900)
boot, topic, partitions, client_id, rate = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
extra = {"enable.idempotence": True, "acks": "all", "linger.ms": 10, "message.timeout.ms": 120000}
extra.update(settings(sys.argv[6:]))
producer = Producer(config(boot, client_id, extra))
stop = threading.Event()


def watch_input():
    for line in sys.stdin:
        if line.strip() == "stop":
            break
    stop.set()


threading.Thread(target=watch_input, daemon=True).start()
say("ready")
sent = 0
while not stop.is_set():
    value = f"{client_id}-{sent:07}"
    try:
        try:
            producer.produce(topic, value=value.encode(), partition=sent % partitions, on_delivery=report)
            sent += 1
        except BufferError:
            pass
        producer.poll(1.0 / rate)
    except KafkaException as e:
        # A fatal error is raised by poll() and produce() from then on.
        error_cb(e.args[0])
        if e.args[0].fatal():
            break
        time.sleep(0.1)
try:
    left = producer.flush(60)
except KafkaException as e:
    error_cb(e.args[0])
    left = len(producer)
say("done", sent, left)
