"""Hand-built classic group requests for the Kafka differential: the
error codes a group coordinator answers on each path (JoinGroup v4,
SyncGroup v0, Heartbeat v0, LeaveGroup v0, OffsetCommit v2), which no
client library lets one send at will. Member ids are reported by their
role ("self"), never raw."""
import struct
import time

from kd_raw import Conn, brokers, string


def group_coordinator(ctx, group, topic):
    addrs, leader = brokers(ctx, topic)
    conn = Conn(addrs[leader])
    deadline = time.monotonic() + 20
    while True:
        r = conn.call(10, 1, string(group) + struct.pack(">b", 0))
        _throttle, error = r.take("ih")
        r.string()
        node = r.take("i")
        if error == 0:
            return Conn(addrs[node])
        if time.monotonic() > deadline:
            raise SystemExit(f"FindCoordinator {group}: error {error}")
        time.sleep(0.2)


def settled_coordinator(ctx, group, topic, timeout=30):
    """The group's coordinator once it answers for the group: a fresh
    Kafka cluster answers COORDINATOR_LOAD_IN_PROGRESS (14),
    COORDINATOR_NOT_AVAILABLE (15) or NOT_COORDINATOR (16) while its
    `__consumer_offsets` partitions are being created and loaded; a
    client retries those, so does this. It asks with a SyncGroup, not a
    Heartbeat: while loading, Kafka's GroupCoordinatorService answers a
    Heartbeat NONE ("the group is still loading, so blindly respond"),
    which would pass for settled; a SyncGroup says 14."""
    deadline = time.monotonic() + timeout
    while True:
        conn = group_coordinator(ctx, group, topic)
        if sync(conn, group, 1, "nobody")[0] not in (14, 15, 16):
            return conn
        if time.monotonic() > deadline:
            raise SystemExit(f"the coordinator of {group} never settled")
        time.sleep(0.2)


def join(conn, group, member):
    """JoinGroup v4 (session 10 s, rebalance 10 s, protocol `range`):
    (error, generation, member id, leader)."""
    body = (string(group) + struct.pack(">ii", 10000, 10000) + string(member)
            + string("consumer") + struct.pack(">i", 1) + string("range")
            + struct.pack(">i", 3) + b"abc")
    r = conn.call(11, 4, body)
    _throttle, error, generation = r.take("ihi")
    r.string()
    leader = r.string()
    member_id = r.string()
    return error, generation, member_id, leader


def sync(conn, group, generation, member, assign_to=None):
    assignments = struct.pack(">i", 0)
    if assign_to:
        assignments = struct.pack(">i", 1) + string(assign_to) + struct.pack(">i", 2) + b"p0"
    r = conn.call(14, 0, string(group) + struct.pack(">i", generation) + string(member)
                  + assignments)
    error = r.take("h")
    n = r.take("i")
    return error, r.data[r.pos:r.pos + max(n, 0)].decode()


def heartbeat(conn, group, generation, member):
    r = conn.call(12, 0, string(group) + struct.pack(">i", generation) + string(member))
    return r.take("h")


def leave(conn, group, member):
    return conn.call(13, 0, string(group) + string(member)).take("h")


def offset_commit(conn, group, generation, member, topic, offset):
    body = (string(group) + struct.pack(">i", generation) + string(member)
            + struct.pack(">q", -1) + struct.pack(">i", 1) + string(topic)
            + struct.pack(">iiq", 1, 0, offset) + string(""))
    r = conn.call(8, 2, body)
    r.take("i")
    r.string()
    r.take("i")
    _partition, error = r.take("ih")
    return error


def group_errors(ctx, topic):
    """One member through its life, with the wrong requests beside the
    right ones: each answer's error code (0: none)."""
    group = f"{ctx.tag}-raw"
    conn = settled_coordinator(ctx, group, topic)
    out = {"heartbeat_unknown_group": heartbeat(conn, group, 1, "nobody"),
           "sync_unknown_group": sync(conn, group, 1, "nobody")[0],
           "commit_unknown_group_member": offset_commit(conn, group, 3, "nobody", topic, 1),
           "join_unknown_member": join(conn, group, "nobody")[0]}
    error, _gen, member, _leader = join(conn, group, "")
    out["join_without_id"] = error
    out["named"] = bool(member)
    error, generation, _me, leader = join(conn, group, member)
    out["join"] = {"error": error, "generation": generation, "leader": leader == member}
    out["heartbeat_before_sync"] = heartbeat(conn, group, generation, member)
    out["commit_before_sync"] = offset_commit(conn, group, generation, member, topic, 1)
    out["sync_wrong_generation"] = sync(conn, group, generation + 1, member)[0]
    out["sync_unknown_member"] = sync(conn, group, generation, "nobody")[0]
    out["sync"] = sync(conn, group, generation, member, assign_to=member)
    out["heartbeat"] = heartbeat(conn, group, generation, member)
    out["heartbeat_wrong_generation"] = heartbeat(conn, group, generation + 1, member)
    out["heartbeat_unknown_member"] = heartbeat(conn, group, generation, "nobody")
    out["commit_wrong_generation"] = offset_commit(conn, group, generation - 1, member, topic, 2)
    out["commit_simple_while_member"] = offset_commit(conn, group, -1, "", topic, 2)
    out["commit"] = offset_commit(conn, group, generation, member, topic, 2)
    out["rejoin_unchanged"] = join(conn, group, member)[:2]
    out["leave_unknown_member"] = leave(conn, group, "nobody")
    out["leave"] = leave(conn, group, member)
    out["heartbeat_after_leave"] = heartbeat(conn, group, generation, member)
    out["commit_simple_when_empty"] = offset_commit(conn, group, -1, "", topic, 3)
    out["commit_member_when_empty"] = offset_commit(conn, group, generation, member, topic, 3)
    return out
