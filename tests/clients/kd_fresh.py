"""The new instance of a transactional.id in the zombie scenarios
(kd_scenarios.py), in a process of its own as a restarted application
would be: initialises TXN (fencing the old instance), writes VALUE to
TOPIC-0 and commits. Prints {"init": ..., "commit": ...} as JSON.

    kd_fresh.py BOOTSTRAP TXN TOPIC VALUE"""
import json
import sys

from confluent_kafka import KafkaException, Producer

boot, txn, topic, value = sys.argv[1:5]
out = {}
p = Producer({"bootstrap.servers": boot, "transactional.id": txn, "linger.ms": 5})
try:
    p.init_transactions(30)
    out["init"] = "ok"
    p.begin_transaction()
    p.produce(topic, value=value.encode(), partition=0)
    p.commit_transaction(30)
    out["commit"] = "ok"
except KafkaException as e:
    out["error"] = e.args[0].name()
print(json.dumps(out, sort_keys=True))
