"""One transactional confluent-kafka Producer kept alive across server
restarts (tests/serve/restart_promises.rs), driven by commands on
standard input. Usage: BOOT TXN_ID [KEY=VALUE...]. Prints the lines of
ck_restart_common.py (`ids`, `error`, `delivered ...`, `failed ...`) and
runs one command a line:

  txn K N TOPIC   the logical transaction K: begin, N records `K.I/N@A` to
                  TOPIC-0 (A: the attempt, from 1), `committing K A`, then
                  commit. A retriable commit error is retried (`retry K A
                  ERROR`); one that requires an abort is aborted (`aborted
                  K A ERROR`, or `abort failed K A COMMIT_ERROR
                  ABORT_ERROR`) and the records
                  sent again as attempt A+1, at most 3 attempts; ends with
                  `committed K A`, `gave up K`, or `fatal K A ERROR`; then
                  `ok txn`. The first one calls init_transactions()
                  (`init failed K ERROR` if it fails)
  quit            exits

Exits at the end of its input and after 300 s whatever happens.
"""
import sys

from confluent_kafka import KafkaException, Producer

from ck_restart_common import config, lifetime, report, say, settings

lifetime(300)
boot, txn_id = sys.argv[1], sys.argv[2]
extra = {"transactional.id": txn_id, "linger.ms": 5, "transaction.timeout.ms": 60000,
         "message.timeout.ms": 60000}
extra.update(settings(sys.argv[3:]))
producer = Producer(config(boot, txn_id, extra))
say("ready")
initialised = False


def attempt(k, n, topic, a):
    """One attempt: `committed`, `abort` (retry) or `fatal`."""
    try:
        producer.begin_transaction()
        for i in range(n):
            producer.produce(topic, value=f"{k}.{i}/{n}@{a}".encode(), partition=0, on_delivery=report)
        producer.flush(60)
        say("committing", k, a)
        for _ in range(10):
            try:
                producer.commit_transaction(60)
                say("committed", k, a)
                return "committed"
            except KafkaException as e:
                if not e.args[0].retriable():
                    raise
                say("retry", k, a, e.args[0].name())
        raise KafkaException(e.args[0])
    except (KafkaException, SystemError) as e:
        # A fatal error raised while a delivery report runs comes as a
        # SystemError caused by the KafkaException.
        if not isinstance(e, KafkaException):
            if not isinstance(e.__cause__, KafkaException):
                raise
            e = e.__cause__
        err = e.args[0]
        if err.txn_requires_abort():
            try:
                producer.abort_transaction(60)
                say("aborted", k, a, err.name())
            except KafkaException as e2:
                say("abort failed", k, a, err.name(), e2.args[0].name())
                return "fatal"
            return "abort"
        say("fatal", k, a, err.name())
        return "fatal"


for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "txn":
        k, n, topic = words[1], int(words[2]), words[3]
        if not initialised:
            try:
                producer.init_transactions(15)
                initialised = True
            except KafkaException as e:
                say("init failed", k, e.args[0].name())
                say("ok txn")
                continue
        for a in range(1, 4):
            outcome = attempt(k, n, topic, a)
            if outcome != "abort":
                break
        else:
            say("gave up", k)
        say("ok txn")
    elif words[0] == "quit":
        break
    else:
        say("failed unknown command", words[0])
