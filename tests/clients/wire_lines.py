"""What ck_wire_features.py sends, and the one line a record read back is
printed as by both it and kp_read_back.py, so their outputs compare."""

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
# CreateTimes: codec i writes T0 + 1000 i + j, so offset 3 i + j has it.
T0 = 1_600_000_000_000
# offsets_for_times asks: the first record's time, a time between two
# codecs' records (the next codec's first offset), and one after them all.
ASKED = [T0, T0 + 1500, T0 + 10_000]


def sent(i, codec):
    """(key, value, timestamp, headers) of codec i's three records; the
    values repeat, so that every codec compresses them."""
    return [
        (f"k{i}{j}", f"{codec}-{j}-" + "x" * 300, T0 + 1000 * i + j,
         [("codec", codec), ("n", str(j)), ("nil", None)])
        for j in range(3)
    ]


def record_line(offset, key, value, kind, timestamp, headers):
    shown = ",".join(k if v is None else f"{k}={v}" for k, v in headers)
    return f"record {offset} {key} {value[:12]}/{len(value)} {kind} {timestamp} {shown}"
