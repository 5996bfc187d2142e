"""Hand-built Kafka requests for the differential scenarios where no
client library lets one choose: a retried idempotent batch, a sequence
gap, EndTxn at a chosen version, a Fetch's `aborted_transactions`, a
Produce to a broker that is not the leader. Old, non-flexible versions
only (Produce v3, Fetch v4, InitProducerId v1, FindCoordinator v1,
EndTxn v1/v2), which Apache Kafka 4.4 and `mk-tui serve` both serve.
Producer ids are reported by order of appearance ("pid#1"), never raw."""
import socket
import struct
import time

# CRC-32C (Castagnoli), the record batch checksum.
_TABLE = []
for _n in range(256):
    _c = _n
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _TABLE.append(_c)


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def varint(n):
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def string(s):
    if s is None:
        return struct.pack(">h", -1)
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def batch(values, producer_id=-1, epoch=-1, sequence=-1, transactional=False):
    """A v2 record batch of `values` (no keys, timestamp 0)."""
    records = b""
    for i, v in enumerate(values):
        body = b"\x00" + varint(0) + varint(i) + varint(-1) + varint(len(v)) + v + varint(0)
        records += varint(len(body)) + body
    attributes = 0x10 if transactional else 0
    after_crc = struct.pack(">hiqqqhii", attributes, len(values) - 1, 0, 0, producer_id, epoch,
                            sequence, len(values)) + records
    head = struct.pack(">ib", 0, 2) + struct.pack(">I", crc32c(after_crc))
    return struct.pack(">qi", 0, len(head) + len(after_crc)) + head + after_crc


class Conn:
    def __init__(self, addr):
        host, port = addr
        self.sock = socket.create_connection((host, port), timeout=15)
        self.correlation = 0

    def call(self, api, version, body):
        self.correlation += 1
        req = struct.pack(">hhi", api, version, self.correlation) + string("kd-raw") + body
        self.sock.sendall(struct.pack(">i", len(req)) + req)
        size = struct.unpack(">i", self._exact(4))[0]
        resp = self._exact(size)
        assert struct.unpack(">i", resp[:4])[0] == self.correlation
        return Reader(resp[4:])

    def _exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("closed by the broker")
            buf += chunk
        return buf


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, fmt):
        v = struct.unpack_from(">" + fmt, self.data, self.pos)
        self.pos += struct.calcsize(">" + fmt)
        return v[0] if len(v) == 1 else v

    def string(self):
        n = self.take("h")
        if n < 0:
            return None
        s = self.data[self.pos:self.pos + n].decode()
        self.pos += n
        return s

    def skip_bytes(self):
        n = self.take("i")
        self.pos += max(n, 0)


class Pids:
    """Masks producer ids by order of appearance."""

    def __init__(self):
        self.seen = {}

    def __call__(self, pid):
        if pid < 0:
            return pid
        return self.seen.setdefault(pid, f"pid#{len(self.seen) + 1}")


def brokers(ctx, topic):
    md = ctx.admin.list_topics(timeout=10)
    addrs = {b.id: (b.host, b.port) for b in md.brokers.values()}
    leader = md.topics[topic].partitions[0].leader if topic in md.topics else min(addrs)
    return addrs, leader


def init_producer_id(conn, txn=None):
    """InitProducerId v1, retried while the broker answers a retriable
    error (a fresh Kafka cluster is still allocating its producer id
    blocks: COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR, ...), as
    clients do; a batch with producer id -1 would not be idempotent."""
    deadline = time.monotonic() + 20
    while True:
        r = conn.call(22, 1, string(txn) + struct.pack(">i", 60000))
        _throttle, error, pid, epoch = r.take("ihqh")
        if error in (0, 51) or time.monotonic() > deadline:
            return error, pid, epoch
        time.sleep(0.2)


def produce(conn, topic, records, transactional_id=None, version=3):
    body = (string(transactional_id) + struct.pack(">hi", -1, 15000) + struct.pack(">i", 1)
            + string(topic) + struct.pack(">ii", 1, 0) + struct.pack(">i", len(records))
            + records)
    r = conn.call(0, version, body)
    r.take("i")
    r.string()
    r.take("i")
    _part, error, base_offset, _append_time = r.take("ihqq")
    return {"error": error, "base_offset": base_offset}


def idempotent_duplicate(ctx, topic):
    addrs, leader = brokers(ctx, topic)
    conn = Conn(addrs[leader])
    error, pid, epoch = init_producer_id(conn)
    first = batch([b"a", b"b", b"c"], pid, epoch, 0)
    out = {"init_error": error,
           "first": produce(conn, topic, first),
           "retry": produce(conn, topic, first),
           "next": produce(conn, topic, batch([b"d"], pid, epoch, 3))}
    return out


def sequence_gap(ctx, topic):
    addrs, leader = brokers(ctx, topic)
    conn = Conn(addrs[leader])
    error, pid, epoch = init_producer_id(conn)
    return {"init_error": error,
            "first": produce(conn, topic, batch([b"a", b"b"], pid, epoch, 0)),
            "gap": produce(conn, topic, batch([b"x"], pid, epoch, 5)),
            "old_epoch": produce(conn, topic, batch([b"y"], pid, epoch - 1 if epoch > 0 else 0,
                                                    2)) if epoch > 0 else "no older epoch"}


def coordinator(ctx, txn, addrs, leader):
    conn = Conn(addrs[leader])
    deadline = time.monotonic() + 20
    while True:
        r = conn.call(10, 1, string(txn) + struct.pack(">b", 1))
        _throttle, error = r.take("ih")
        r.string()
        node = r.take("i")
        if error == 0:
            return Conn(addrs[node])
        if time.monotonic() > deadline:
            raise SystemExit(f"FindCoordinator {txn}: error {error}")
        time.sleep(0.2)


def end_txn(conn, version, txn, pid, epoch, commit):
    r = conn.call(26, version, string(txn) + struct.pack(">qhb", pid, epoch, commit))
    _throttle, error = r.take("ih")
    return error


def add_partitions(conn, txn, pid, epoch, topic):
    body = (string(txn) + struct.pack(">qh", pid, epoch) + struct.pack(">i", 1) + string(topic)
            + struct.pack(">ii", 1, 0))
    r = conn.call(24, 1, body)
    r.take("ii")
    r.string()
    r.take("i")
    _part, error = r.take("ih")
    return error


def retry_concurrent(f):
    """Retries f() while the coordinator answers CONCURRENT_TRANSACTIONS
    (51) or COORDINATOR_LOAD_IN_PROGRESS (14), as clients do."""
    deadline = time.monotonic() + 20
    while True:
        res = f()
        code = res[0] if isinstance(res, tuple) else res
        if code not in (14, 51) or time.monotonic() > deadline:
            return res
        time.sleep(0.1)


def fenced_end_txn(ctx, topic):
    addrs, leader = brokers(ctx, topic)
    txn = f"{ctx.tag}-raw"
    conn = coordinator(ctx, txn, addrs, leader)
    pids = Pids()
    e1, pid, old = retry_concurrent(lambda: init_producer_id(conn, txn))
    added = add_partitions(conn, txn, pid, old, topic)
    e2, pid2, new = retry_concurrent(lambda: init_producer_id(conn, txn))
    return {
        "init": [e1, e2],
        "same_producer_id": pid == pid2,
        "epoch_step": new - old,
        "add_partitions": added,
        "old_epoch_add_partitions_v1": add_partitions(conn, txn, pid, old, topic),
        "old_epoch_end_txn_v1": end_txn(conn, 1, txn, pid, old, 1),
        "old_epoch_end_txn_v2": end_txn(conn, 2, txn, pid, old, 1),
        "unknown_pid_end_txn_v1": end_txn(conn, 1, txn, pid + 77777, 0, 1),
        "current_epoch_abort_nothing_open": retry_concurrent(
            lambda: end_txn(conn, 1, txn, pid2, new, 0)),
        "pid": pids(pid),
    }


def fetch_aborted(ctx, topic):
    addrs, leader = brokers(ctx, topic)
    conn = Conn(addrs[leader])
    pids = Pids()
    out = {}
    for isolation in (0, 1):
        body = (struct.pack(">iiiib", -1, 100, 1, 1 << 20, isolation) + struct.pack(">i", 1)
                + string(topic) + struct.pack(">iiqi", 1, 0, 0, 1 << 20))
        r = conn.call(1, 4, body)
        r.take("ii")
        r.string()
        r.take("i")
        _part, error, hw, lso = r.take("ihqq")
        n = r.take("i")
        aborted = None if n < 0 else [list(r.take("qq")) for _ in range(n)]
        if aborted:
            aborted = [[pids(p), first] for p, first in aborted]
        out["read_committed" if isolation else "read_uncommitted"] = {
            "error": error, "high_watermark": hw, "last_stable_offset": lso,
            "aborted_transactions": aborted}
    return out


def not_leader(ctx, topic):
    addrs, leader = brokers(ctx, topic)
    other = next(b for b in sorted(addrs) if b != leader)
    return {"to_follower": produce(Conn(addrs[other]), topic, batch([b"x"])),
            "to_leader": produce(Conn(addrs[leader]), topic, batch([b"x"]))}


def unknown_topic(ctx, topic):
    """An acks=all Produce v3 of one plain record to `topic`'s leader (to
    the lowest broker id if the topic is unknown)."""
    addrs, leader = brokers(ctx, topic)
    return {"produce": produce(Conn(addrs[leader]), topic, batch([b"x"]))}
