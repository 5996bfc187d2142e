"""Binary records, as applications send them (tests/serve/binary.rs):
Long keys, schema-registry values (a zero byte, a 4-byte schema id, then
bytes that are not UTF-8), binary header values, and seeded random bytes
of every value 0-255, from an idempotent confluent-kafka Producer, half
plain and half zstd. Usage: BOOT TOPIC COUNT SEED. Prints `acked OFFSET
RECORD` for each acknowledged record, RECORD being
KEYHEX|VALUEHEX|NAME=HEX,... ("-" for null), and `failed ERROR`."""
import random
import struct
import sys

from confluent_kafka import Producer

boot, topic, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)


def hexed(b):
    return "-" if b is None else b.hex()


def shown(key, value, headers):
    hs = ",".join(f"{k}={hexed(v)}" for k, v in headers or [])
    return f"{hexed(key)}|{hexed(value)}|{hs}"


lines = []


def report(sent):
    # What was sent, at the offset acknowledged (a delivery report's own
    # headers are not dependable in librdkafka).
    def done(err, msg):
        if err:
            lines.append(f"failed {err.name()}")
        else:
            lines.append(f"acked {msg.offset()} {sent}")
    return done


for codec in ("none", "zstd"):
    p = Producer({"bootstrap.servers": boot, "enable.idempotence": True, "linger.ms": 5,
                  "compression.type": codec, "message.timeout.ms": 30000})
    for i in range(count // 2):
        n = rng.randrange(1 << 40)
        key = struct.pack(">q", -n - 1) if i % 3 else None
        value = b"\x00" + struct.pack(">i", 7 + i % 5) + rng.randbytes(rng.randrange(0, 300))
        headers = [("schema", rng.randbytes(4)), ("text", b"ok")] if i % 2 else None
        p.produce(topic, key=key, value=value, headers=headers, partition=0,
                  on_delivery=report(shown(key, value, headers)))
    p.flush(60)
for line in lines:
    print(line)
