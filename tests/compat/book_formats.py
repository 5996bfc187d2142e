#!/usr/bin/env python3
"""An independent implementation of the book's on-disk formats (FORMATS.md),
written from the format description alone, in the style of the book's Python
reference code. The Rust tests use it to check that a data directory written
"by the book" opens in mk-tui, and that one written by mk-tui reads here.

    book_formats.py write DIR   write a small data directory the book's way
    book_formats.py dump DIR    print every log, metadata and offsets as JSON
"""

import json
import os
import struct
import sys
import zlib

MAGIC = b"MKB1"
FLAG_TRANSACTIONAL, FLAG_COMMIT, FLAG_ABORT = 1, 2, 4


def dumps(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def atomic_write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(os.path.dirname(path), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def nullable(b):
    return struct.pack(">i", -1) if b is None else struct.pack(">i", len(b))


def encode_batch(base_offset, records, leader_epoch=0, producer_id=-1, producer_epoch=-1,
                 base_sequence=-1, transactional_id=None, control=None):
    flags = 0
    tid = b""
    if transactional_id is not None:
        flags |= FLAG_TRANSACTIONAL
        tid = transactional_id.encode("utf-8")
    if control == "commit":
        flags |= FLAG_COMMIT
    elif control == "abort":
        flags |= FLAG_ABORT
    last_offset_delta = 0 if control else len(records) - 1
    payload = struct.pack(">BqIqiiBiHI", 1, base_offset, leader_epoch, producer_id, producer_epoch,
                          base_sequence, flags, last_offset_delta, len(tid), len(records)) + tid
    for i, (key, value, timestamp, headers) in enumerate(records):
        payload += struct.pack(">iq", i, timestamp) + nullable(key) + nullable(value)
        payload += struct.pack(">H", len(headers)) + (key or b"") + (value or b"")
        for hkey, hvalue in headers:
            hk = hkey.encode("utf-8")
            payload += struct.pack(">H", len(hk)) + hk + nullable(hvalue) + (hvalue or b"")
    return MAGIC + struct.pack(">II", len(payload), zlib.crc32(payload) & 0xFFFFFFFF) + payload


def decode_frames(data):
    """Yields decoded batches; stops at the first invalid frame."""
    pos = 0
    while pos + 12 <= len(data):
        if data[pos:pos + 4] != MAGIC:
            return
        length, crc = struct.unpack(">II", data[pos + 4:pos + 12])
        payload = data[pos + 12:pos + 12 + length]
        if len(payload) != length or zlib.crc32(payload) & 0xFFFFFFFF != crc:
            return
        (version, base_offset, leader_epoch, producer_id, producer_epoch, base_sequence, flags,
         last_offset_delta, tid_len, count) = struct.unpack(">BqIqiiBiHI", payload[:40])
        p = 40
        tid = None
        if flags & FLAG_TRANSACTIONAL:
            tid = payload[p:p + tid_len].decode("utf-8")
            p += tid_len
        records = []
        for _ in range(count):
            delta, ts, klen, vlen, hcount = struct.unpack(">iqiiH", payload[p:p + 22])
            p += 22
            key = None if klen == -1 else payload[p:p + klen].hex()
            p += max(klen, 0)
            value = None if vlen == -1 else payload[p:p + vlen].hex()
            p += max(vlen, 0)
            headers = []
            for _ in range(hcount):
                (hklen,) = struct.unpack(">H", payload[p:p + 2])
                hkey = payload[p + 2:p + 2 + hklen].decode("utf-8")
                p += 2 + hklen
                (hvlen,) = struct.unpack(">i", payload[p:p + 4])
                p += 4
                hvalue = None if hvlen == -1 else payload[p:p + hvlen].hex()
                p += max(hvlen, 0)
                headers.append([hkey, hvalue])
            records.append({"offset": base_offset + delta, "timestamp": ts, "key": key,
                            "value": value, "headers": headers})
        if p != len(payload):
            return
        control = "commit" if flags & FLAG_COMMIT else "abort" if flags & FLAG_ABORT else None
        yield {"base_offset": base_offset, "last_offset": base_offset + last_offset_delta,
               "leader_epoch": leader_epoch, "producer_id": producer_id,
               "producer_epoch": producer_epoch, "base_sequence": base_sequence,
               "transactional_id": tid, "control": control, "records": records}
        pos += 12 + length


def write(root):
    os.makedirs(root, exist_ok=True)
    metadata = {"topics": {
        "out": {"partitions": {"0": {"leader_epoch": 0, "leader_id": 1, "replicas": [1, 2]},
                               "1": {"leader_epoch": 0, "leader_id": 2, "replicas": [2, 1]}}},
    }, "version": 1}
    atomic_write(os.path.join(root, "metadata.json"), dumps(metadata))
    atomic_write(os.path.join(root, "offsets.json"),
                 dumps({"groups": {"workers": [{"offset": 7, "partition": 0, "topic": "in"}]},
                        "version": 1}))
    atomic_write(os.path.join(root, "producer-identities.json"), dumps({"book": [0, 0]}))
    frames = (
        encode_batch(0, [(b"k", b"hello", 1000, [("h", b"v"), ("n", None)]),
                         (None, b"world", 1001, [])], producer_id=0, producer_epoch=0,
                     base_sequence=0)
        + encode_batch(2, [(None, b"pending", 1002, [])], transactional_id="tx-1")
        + encode_batch(3, [], transactional_id="tx-1", control="commit")
        + encode_batch(4, [(b"", None, 1003, [])])
    )
    for broker, partition in ((1, 0), (2, 0), (2, 1), (1, 1)):
        d = os.path.join(root, "broker-%d" % broker, "out-%d" % partition)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "%020d.log" % 0), "wb") as f:
            f.write(frames if partition == 0 else b"")
        with open(os.path.join(d, "%020d.index" % 0), "wb") as f:
            f.write(b"")


def dump(root):
    out = {"logs": {}}
    for name in ("metadata.json", "offsets.json", "producer-identities.json"):
        path = os.path.join(root, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                out[name] = json.load(f)
    for broker_dir in sorted(os.listdir(root)):
        if not broker_dir.startswith("broker-"):
            continue
        for part in sorted(os.listdir(os.path.join(root, broker_dir))):
            d = os.path.join(root, broker_dir, part)
            batches = []
            for seg in sorted(n for n in os.listdir(d) if n.endswith(".log")):
                with open(os.path.join(d, seg), "rb") as f:
                    batches.extend(decode_frames(f.read()))
            out["logs"]["%s/%s" % (broker_dir, part)] = batches
    print(dumps(out))


if __name__ == "__main__":
    {"write": write, "dump": dump}[sys.argv[1]](sys.argv[2])
