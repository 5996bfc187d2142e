"""DescribeConfigs v1 in raw frames, one resource a request, for what no
client sends: a broker's resource to another broker, a name that is not
a number, other resource types. argv: host:port, then resources as
TYPE:NAME. Prints `TYPE NAME CODE MESSAGE` per resource (the message
only for INVALID_REQUEST, 42, whose text is Kafka's own)."""
import socket
import struct
import sys


def s16(v):
    return struct.pack(">h", v)


def s32(v):
    return struct.pack(">i", v)


def string(x):
    b = x.encode()
    return s16(len(b)) + b


def ask(host, port, kind, name):
    body = s32(1) + struct.pack(">b", kind) + string(name) + s32(-1) + b"\x00"
    msg = s16(32) + s16(1) + s32(7) + string("raw") + body
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(s32(len(msg)) + msg)
        n = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise SystemExit("connection closed mid-response")
            data += chunk
    off = 4 + 4 + 4  # correlation id, throttle, result count (1)
    err, ml = struct.unpack_from(">hh", data, off)
    off += 4
    text = data[off:off + ml].decode() if ml >= 0 else None
    return err, text


host, port = sys.argv[1].split(":")
for arg in sys.argv[2:]:
    kind, _, name = arg.partition(":")
    err, text = ask(host, int(port), int(kind), name)
    print(kind, repr(name), err, text if err == 42 else "")
