"""IncrementalAlterConfigs v0 in raw frames, one resource a request, for
what no client sends (duplicate keys, unknown operations, empty names)
and to read each answer's code and message as the broker wrote them.
argv: host:port, then one JSON resource a request:
`[TYPE, NAME, [[KEY, OP, VALUE-or-null], ...]]`. Prints
`TYPE NAME CODE MESSAGE` per request."""
import json
import socket
import struct
import sys


def s16(v):
    return struct.pack(">h", v)


def s32(v):
    return struct.pack(">i", v)


def string(x):
    if x is None:
        return s16(-1)
    b = x.encode()
    return s16(len(b)) + b


def ask(host, port, kind, name, configs):
    body = s32(1) + struct.pack(">b", kind) + string(name) + s32(len(configs))
    for key, op, value in configs:
        body += string(key) + struct.pack(">b", op) + string(value)
    body += b"\x00"  # validate_only false
    msg = s16(44) + s16(0) + s32(7) + string("raw") + body
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(s32(len(msg)) + msg)
        n = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise SystemExit("connection closed mid-response")
            data += chunk
    off = 4 + 4 + 4  # correlation id, throttle, response count (1)
    err, ml = struct.unpack_from(">hh", data, off)
    off += 4
    text = data[off:off + ml].decode() if ml >= 0 else None
    return err, text


host, port = sys.argv[1].split(":")
for arg in sys.argv[2:]:
    kind, name, configs = json.loads(arg)
    err, text = ask(host, int(port), kind, name, configs)
    print(kind, repr(name), err, text)
