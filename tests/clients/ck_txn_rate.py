"""Transactions per second against a server (docs/performance.md, P7G:
`mk-tui serve --rules kafka` sharing journal syncs between connections).
Usage: BOOT TOPIC PRODUCERS TRANSACTIONS. Creates TOPIC (1 partition, 1
replica) if missing, then PRODUCERS threads, each with its own
transactional confluent-kafka Producer (`rate-J`), run init_transactions()
and wait for each other; then each runs TRANSACTIONS transactions of one
record (begin, produce, flush, commit). Prints `rate PRODUCERS COMMITTED
SECONDS TXN_PER_S`, timed from the start barrier to the last commit.
Exits after 600 s whatever happens."""
import sys
import threading
import time

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

watchdog = threading.Timer(600, lambda: __import__("os")._exit(3))
watchdog.daemon = True
watchdog.start()
boot, topic, producers, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
admin = AdminClient({"bootstrap.servers": boot})
try:
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
except Exception:  # already there
    pass

ready = threading.Barrier(producers + 1)
done = []


def run(j):
    p = Producer({"bootstrap.servers": boot, "transactional.id": f"rate-{j}", "linger.ms": 0})
    p.init_transactions(30)
    ready.wait()
    for i in range(count):
        p.begin_transaction()
        p.produce(topic, value=f"{j}.{i}".encode(), partition=0)
        p.flush(30)
        p.commit_transaction(30)
    done.append(count)


threads = [threading.Thread(target=run, args=(j,)) for j in range(producers)]
for t in threads:
    t.start()
ready.wait()
start = time.perf_counter()
for t in threads:
    t.join()
seconds = time.perf_counter() - start
committed = sum(done)
print("rate", producers, committed, f"{seconds:.3f}", f"{committed / seconds:.1f}", flush=True)
sys.exit(0 if committed == producers * count else 1)
