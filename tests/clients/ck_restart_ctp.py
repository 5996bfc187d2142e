"""A consume-transform-produce loop with exactly-once semantics, kept
alive across server restarts (the soak, tests/serve/soak.rs): a
read_committed confluent-kafka Consumer assigned IN_TOPIC-PARTITION (group
ctp-TXN_ID, no group membership) and a transactional Producer
(transactional.id TXN_ID). Each transaction takes up to 20 records, writes
each as `VALUE|TXN_ID.A.I/N` to OUT_TOPIC-PARTITION (A: the loop's
attempt number, I of N records), stages the input offset with
send_offsets_to_transaction() and commits. A commit error that requires
an abort aborts, and one that is fatal makes a new producer (as an
application must); either way the consumer goes back to the group's
committed offset, as read from the server. Usage: BOOT IN_TOPIC PARTITION
OUT_TOPIC TXN_ID. Prints the lines of ck_restart_common.py and

  committed TXN_ID A N FIRST LAST  attempt A committed N records, input
                                   offsets FIRST..LAST
  aborted TXN_ID A ERROR           attempt A aborted (told so)
  unknown TXN_ID A ERROR           attempt A ended with a fatal error or
                                   an abort that failed: its fate is the
                                   server's (a new producer follows)
  rewound OFFSET                   the consumer went back to OFFSET
  init ERROR                       init_transactions() failed (retried)

until a line `stop` (or the end) of standard input, after which it
stops once it has read to the end of its input: `done COMMITTED
ABORTED UNKNOWN`; if it is still initialising a producer then, it exits
with status 4. Exits after 900 s whatever happens."""
import os
import sys
import threading
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from ck_restart_common import config, error_cb, lifetime, say

lifetime(900)
boot, in_topic, partition, out_topic, txn_id = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
BATCH = 20
consumer_conf = config(boot, f"{txn_id}-consumer", {
    "group.id": f"ctp-{txn_id}",
    "enable.auto.commit": False,
    "isolation.level": "read_committed",
    "enable.partition.eof": True,
})
del consumer_conf["stats_cb"], consumer_conf["statistics.interval.ms"]
consumer = Consumer(consumer_conf)
stop = threading.Event()


def watch_input():
    for line in sys.stdin:
        if line.strip() == "stop":
            break
    stop.set()


def kafka_error(e):
    """The KafkaError of an exception (a fatal error raised while a
    callback runs comes as a SystemError caused by the KafkaException)."""
    if isinstance(e, KafkaException):
        return e.args[0]
    if isinstance(e.__cause__, KafkaException):
        return e.__cause__.args[0]
    raise e


def diagnosis():
    """Settings for diagnosing a wedged loop, off unless asked:
    MK_CTP_DEBUG_DIR=D sends this process's standard error (librdkafka's
    debug log of eos,broker,protocol) to D/TXN_ID.PID.log;
    MK_CTP_NO_REBOOTSTRAP (on unless 0) sets metadata.recovery.strategy=none, which
    keeps librdkafka 2.16 from re-bootstrapping when every broker is down
    (a kill -9 of serve) and so from keeping a decommissioned broker as
    the group coordinator of send_offsets_to_transaction (librdkafka
    issue #5511)."""
    extra = {}
    d = os.environ.get("MK_CTP_DEBUG_DIR")
    if d:
        fd = os.open(f"{d}/{txn_id}.{os.getpid()}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        os.dup2(fd, 2)
        extra["debug"] = "eos,broker,protocol"
    # On by default (MK_CTP_NO_REBOOTSTRAP=0 turns it off): a client bug,
    # not the server's; the soak's other clients keep the default.
    if os.environ.get("MK_CTP_NO_REBOOTSTRAP", "1") != "0":
        extra["metadata.recovery.strategy"] = "none"
    return extra


def new_producer():
    """A transactional producer, initialised: retried until it is (a
    restart, or a transaction the server has not ended yet), or until
    `stop`, when the script exits with status 4."""
    producer = Producer(config(boot, txn_id, {
        "transactional.id": txn_id, "linger.ms": 5,
        "transaction.timeout.ms": 60000, "message.timeout.ms": 60000,
        **diagnosis(),
    }))
    while not stop.is_set():
        try:
            producer.init_transactions(30)
            return producer
        except (KafkaException, SystemError) as e:
            err = kafka_error(e)
            say("init", err.name())
            if err.fatal():
                error_cb(err)
                producer = Producer(config(boot, txn_id, {"transactional.id": txn_id}))
    say("stopped in init_transactions")
    sys.exit(4)


def rewind():
    """Back to the group's committed offset, as the server has it."""
    global at_end
    for _ in range(30):
        try:
            [tp] = consumer.committed([TopicPartition(in_topic, partition)], timeout=10)
            offset = max(tp.offset, 0)
            consumer.assign([TopicPartition(in_topic, partition, offset)])
            at_end = False
            say("rewound", offset)
            return
        except KafkaException as e:
            say("committed()", e.args[0].name())
            time.sleep(0.5)
    raise SystemExit("could not read the committed offset")


threading.Thread(target=watch_input, daemon=True).start()
producer = new_producer()
rewind()
say("ready")
attempt = 0
counts = {"committed": 0, "aborted": 0, "unknown": 0}
at_end = False
while not (stop.is_set() and at_end):
    msgs = consumer.consume(num_messages=BATCH, timeout=0.3)
    records = []
    for m in msgs:
        if m.error():
            if m.error().name() == "_PARTITION_EOF":
                at_end = True
            else:
                say("error", m.error().name(), "fatal" if m.error().fatal() else "retriable")
        else:
            at_end = False
            records.append(m)
    if not records:
        continue
    attempt += 1
    n = len(records)
    try:
        producer.begin_transaction()
        for i, m in enumerate(records):
            producer.produce(out_topic, value=f"{m.value().decode()}|{txn_id}.{attempt}.{i}/{n}".encode(),
                             partition=partition)
        producer.send_offsets_to_transaction(
            [TopicPartition(in_topic, partition, records[-1].offset() + 1)],
            consumer.consumer_group_metadata(), 60)
        for tries in range(10):
            try:
                producer.commit_transaction(60)
                break
            except (KafkaException, SystemError) as e:
                err = kafka_error(e)
                if not err.retriable() or tries == 9:
                    raise
                say("retry", txn_id, attempt, err.name())
        counts["committed"] += 1
        say("committed", txn_id, attempt, n, records[0].offset(), records[-1].offset())
    except (KafkaException, SystemError) as e:
        err = kafka_error(e)
        if err.txn_requires_abort():
            try:
                producer.abort_transaction(60)
                counts["aborted"] += 1
                say("aborted", txn_id, attempt, err.name())
            except (KafkaException, SystemError) as e2:
                counts["unknown"] += 1
                say("unknown", txn_id, attempt, f"{err.name()}+abort:{kafka_error(e2).name()}")
                producer = new_producer()
        else:
            if err.fatal():
                error_cb(err)
            counts["unknown"] += 1
            say("unknown", txn_id, attempt, err.name())
            producer = new_producer()
        rewind()
say("done", counts["committed"], counts["aborted"], counts["unknown"])
