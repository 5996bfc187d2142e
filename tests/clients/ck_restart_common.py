"""What the restart scripts share (tests/serve/restart_promises.rs and
the soak, tests/serve/soak.rs): one line a fact on standard output,
flushed at once and never interleaved between threads, so the test reads
them as they happen; a lifetime after which the script exits whatever
happens; SIGUSR1 for every thread's stack on standard error (a test
that finds a script stuck sends it); and confluent-kafka configurations whose errors and producer
ids are reported as lines:

  error NAME fatal|retriable TEXT   an error callback (librdkafka's own)
  ids PID EPOCH                     the producer id and epoch the client
                                    holds (librdkafka's statistics), on
                                    each change
"""
import faulthandler
import json
import os
import signal
import sys
import threading

_lock = threading.Lock()
# SIGUSR1 writes every thread's stack to standard error: a test that finds
# a script stuck shows where.
faulthandler.register(signal.SIGUSR1, all_threads=True)


def say(*words):
    """One line of space-separated words, flushed."""
    with _lock:
        sys.stdout.write(" ".join(str(w) for w in words) + "\n")
        sys.stdout.flush()


def lifetime(seconds):
    """Exit (status 3) after `seconds` whatever the script is doing."""
    t = threading.Timer(seconds, lambda: (say("lifetime over"), os._exit(3)))
    t.daemon = True
    t.start()


class Ids:
    """The producer id and epoch librdkafka's statistics report."""

    def __init__(self):
        self.pid, self.epoch = -1, -1

    def stats(self, text):
        eos = json.loads(text).get("eos") or {}
        pid, epoch = eos.get("producer_id", -1), eos.get("producer_epoch", -1)
        if (pid, epoch) != (self.pid, self.epoch) and pid >= 0:
            self.pid, self.epoch = pid, epoch
            say("ids", pid, epoch)


def error_cb(err):
    say("error", err.name(), "fatal" if err.fatal() else "retriable", err.str().replace("\n", " "))


def config(boot, client_id, extra=None):
    """A confluent-kafka configuration reporting its errors and ids."""
    ids = Ids()
    conf = {
        "bootstrap.servers": boot,
        "client.id": client_id,
        "error_cb": error_cb,
        "stats_cb": ids.stats,
        "statistics.interval.ms": 100,
        # A restart takes about a second: reconnect soon after it.
        "reconnect.backoff.ms": 50,
        "reconnect.backoff.max.ms": 500,
    }
    conf.update(extra or {})
    return conf


def settings(args):
    """KEY=VALUE words as a configuration (numbers and booleans typed)."""
    out = {}
    for a in args:
        k, v = a.split("=", 1)
        if v in ("true", "false"):
            v = v == "true"
        elif v.lstrip("-").isdigit():
            v = int(v)
        out[k] = v
    return out


def report(err, msg):
    """A delivery report as a line: `delivered TOPIC PARTITION OFFSET
    VALUE` or `failed TOPIC VALUE ERROR`."""
    value = msg.value().decode()
    if err is None:
        say("delivered", msg.topic(), msg.partition(), msg.offset(), value)
    else:
        say("failed", msg.topic(), value, err.name())
