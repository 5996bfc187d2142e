//! The book's consumer-group code (E15), ported: `tests/unit/test_assignor.py`
//! test by test, and the rules of `consumer/group.py` that its lab
//! (`labs/rebalance.py`) and `Consumer` rely on, each test naming the
//! method it pins. The lab itself is compared with the book's own run
//! byte for byte in `tests/rebalance_lab.rs`.

use std::collections::{BTreeMap, BTreeSet};

use minikafka::engine::consumer::group::GroupState;
use minikafka::engine::consumer::{Consumer, round_robin_assign};
use minikafka::engine::{
    BrokerCluster, ManualClock, MiniKafkaConfig, MiniKafkaError, TopicPartition,
};

fn tp(topic: &str, p: u32) -> TopicPartition {
    TopicPartition::new(topic, p)
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// test_assignor.py::test_round_robin_assignor_has_single_owner
#[test]
fn test_round_robin_assignor_has_single_owner() {
    let members = BTreeMap::from([
        ("a".to_string(), set(&["orders"])),
        ("b".to_string(), set(&["orders"])),
    ]);
    let partitions = BTreeMap::from([("orders".to_string(), vec![0, 1, 2, 3])]);
    let assignment = round_robin_assign(&members, &partitions);
    assert_eq!(assignment["a"], [tp("orders", 0), tp("orders", 2)]);
    assert_eq!(assignment["b"], [tp("orders", 1), tp("orders", 3)]);
    assert!(assignment["a"].iter().all(|x| !assignment["b"].contains(x)));
}

/// test_assignor.py::test_assignor_respects_topic_subscriptions
#[test]
fn test_assignor_respects_topic_subscriptions() {
    let members = BTreeMap::from([
        ("orders-only".to_string(), set(&["orders"])),
        ("all".to_string(), set(&["orders", "payments"])),
    ]);
    let partitions = BTreeMap::from([
        ("orders".to_string(), vec![0, 1]),
        ("payments".to_string(), vec![0]),
    ]);
    let assignment = round_robin_assign(&members, &partitions);
    assert!(!assignment["orders-only"].contains(&tp("payments", 0)));
    assert!(assignment["all"].contains(&tp("payments", 0)));
}

/// The assignor's cursor runs on across topics, as the book's does: the
/// second topic's partition goes to the member after the first topic's
/// last owner.
#[test]
fn the_cursor_runs_on_across_topics() {
    let members = BTreeMap::from([
        ("a".to_string(), set(&["x", "y"])),
        ("b".to_string(), set(&["x", "y"])),
    ]);
    let partitions = BTreeMap::from([("x".to_string(), vec![0]), ("y".to_string(), vec![0])]);
    let assignment = round_robin_assign(&members, &partitions);
    assert_eq!(assignment["a"], [tp("x", 0)]);
    assert_eq!(assignment["b"], [tp("y", 0)]);
}

fn cluster(timeout_ms: u64) -> (tempfile::TempDir, ManualClock, BrokerCluster) {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new();
    let mut config = MiniKafkaConfig::new(dir.path()).with_brokers([1]);
    config.group_session_timeout_ms = timeout_ms;
    let cluster = BrokerCluster::open(config, clock.clone()).unwrap();
    cluster.create_topic("orders", 4, 1).unwrap();
    (dir, clock, cluster)
}

/// `join` and `leave`: every membership change is a new generation and a
/// whole new assignment, done at once (the eager rebalance); an emptied
/// group is `empty` with no assignment.
#[test]
fn join_and_leave_rebalance_eagerly_with_a_new_generation() {
    let (_dir, _clock, c) = cluster(10_000);
    let orders = set(&["orders"]);
    let first = c.join_group("workers", "member-1", &orders).unwrap();
    assert_eq!(first.generation, 1);
    assert_eq!(first.assignment.len(), 4);
    let second = c.join_group("workers", "member-2", &orders).unwrap();
    assert_eq!(second.generation, 2);
    assert_eq!(second.assignment, [tp("orders", 1), tp("orders", 3)]);
    let group = c.group("workers").unwrap();
    assert_eq!(group.state, GroupState::Stable);
    let moved = &group.last_rebalance.as_ref().unwrap().moved;
    assert_eq!(moved.len(), 2, "{moved:?}");
    assert_eq!(moved[0].from.as_deref(), Some("member-1"));
    assert_eq!(moved[0].to.as_deref(), Some("member-2"));
    assert!(c.leave_group("workers", "member-2").unwrap());
    assert!(
        !c.leave_group("workers", "member-2").unwrap(),
        "leaving twice is no error"
    );
    assert_eq!(
        c.group_assignment("workers", "member-1")
            .unwrap()
            .generation,
        3
    );
    c.leave_group("workers", "member-1").unwrap();
    let group = c.group("workers").unwrap();
    assert_eq!((group.state, group.generation), (GroupState::Empty, 4));
    assert!(group.assignment.is_empty());
}

/// `join` refuses empty ids and unknown topics (the book's `ValueError`s),
/// changing nothing.
#[test]
fn join_refuses_empty_ids_and_unknown_topics() {
    let (_dir, _clock, c) = cluster(10_000);
    let e = c.join_group("", "m", &set(&["orders"])).unwrap_err();
    assert_eq!(e.code(), "InvalidGroupId");
    let e = c.join_group("g", "m", &set(&["nope"])).unwrap_err();
    assert_eq!(e.code(), "UnknownTopicOrPartition");
    assert!(e.to_string().contains("nope"), "{e}");
    assert!(c.group("g").is_none());
}

/// `heartbeat` and `commit` are fenced by generation (`IllegalGeneration`)
/// and membership (`UnknownMember`); `commit` by ownership too
/// (`NotPartitionOwner`); a commit that passes is durable in
/// `offsets.json` through the `OffsetStore`.
#[test]
fn heartbeat_and_commit_are_fenced() {
    let (dir, _clock, c) = cluster(10_000);
    let orders = set(&["orders"]);
    c.join_group("workers", "member-1", &orders).unwrap();
    c.join_group("workers", "member-2", &orders).unwrap();
    let e = c.heartbeat("workers", "member-1", 1).unwrap_err();
    assert!(
        matches!(
            e,
            MiniKafkaError::IllegalGeneration {
                generation: 1,
                current: 2,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(
        c.heartbeat("workers", "nobody", 2).unwrap_err().code(),
        "UnknownMember"
    );
    assert_eq!(
        c.heartbeat("other", "member-1", 2).unwrap_err().to_string(),
        "unknown member: unknown group \"other\""
    );
    let stale = BTreeMap::from([(tp("orders", 1), 5)]);
    let e = c
        .commit_group_offsets("workers", "member-1", 1, &stale)
        .unwrap_err();
    assert_eq!(e.code(), "IllegalGeneration");
    let e = c
        .commit_group_offsets("workers", "member-1", 2, &stale)
        .unwrap_err();
    assert_eq!(e.code(), "NotPartitionOwner", "orders-1 is member-2's now");
    let own = BTreeMap::from([(tp("orders", 0), 5)]);
    c.commit_group_offsets("workers", "member-1", 2, &own)
        .unwrap();
    assert_eq!(c.offsets().get("workers", &tp("orders", 0)), Some(5));
    let file = std::fs::read_to_string(dir.path().join("offsets.json")).unwrap();
    assert!(
        file.contains(r#"{"offset":5,"partition":0,"topic":"orders"}"#),
        "{file}"
    );
}

/// `expire_members` removes a member only once the clock is strictly past
/// its deadline; a heartbeat moves the deadline. The wall clock plays no
/// part: only `ManualClock` moves.
#[test]
fn expiry_follows_the_engine_clock() {
    let (_dir, clock, c) = cluster(1_000);
    let orders = set(&["orders"]);
    c.join_group("workers", "member-1", &orders).unwrap();
    c.join_group("workers", "member-2", &orders).unwrap();
    clock.advance(600);
    assert_eq!(c.heartbeat("workers", "member-2", 2).unwrap(), 1_600);
    clock.advance(400);
    assert!(
        c.expire_group_members().unwrap().is_empty(),
        "at the deadline, not past it"
    );
    clock.advance(1);
    assert_eq!(
        c.expire_group_members().unwrap(),
        [("workers".to_string(), "member-1".to_string())]
    );
    let after = c.group_assignment("workers", "member-2").unwrap();
    assert_eq!((after.generation, after.assignment.len()), (3, 4));
}

/// Membership is in memory, as the book keeps it: a crash drops every
/// group; committed offsets survive in `offsets.json`.
#[test]
fn a_crash_forgets_groups_but_not_committed_offsets() {
    let (_dir, _clock, c) = cluster(10_000);
    c.join_group("workers", "member-1", &set(&["orders"]))
        .unwrap();
    c.commit_group_offsets(
        "workers",
        "member-1",
        1,
        &BTreeMap::from([(tp("orders", 2), 3)]),
    )
    .unwrap();
    c.crash().unwrap();
    assert!(c.group("workers").is_none());
    assert_eq!(c.offsets().get("workers", &tp("orders", 2)), Some(3));
}

/// The book's `Consumer`: its assignment is a local view until
/// `refresh_assignment`; `poll` reads from the committed offset (else the
/// log start) and advances its positions; `commit` commits them.
#[test]
fn the_consumer_polls_its_partitions_from_the_committed_offset() {
    let (_dir, _clock, c) = cluster(10_000);
    for p in 0..4 {
        for v in ["a", "b"] {
            let batch = minikafka::engine::RecordBatch::of_values([format!("{v}{p}")]);
            futures_lite(c.append_batch(
                &tp("orders", p),
                batch,
                minikafka::engine::AckMode::Leader,
            ))
            .unwrap();
        }
    }
    c.offsets().commit("workers", &tp("orders", 1), 1).unwrap();
    let orders = set(&["orders"]);
    let mut first = Consumer::new("workers", "member-1");
    first.subscribe(&c, &orders).unwrap();
    let read = first.poll(&c, 3).unwrap();
    let got: Vec<(String, i64)> = read
        .iter()
        .map(|(t, r)| (t.to_string(), r.offset))
        .collect();
    assert_eq!(
        got,
        [
            ("orders-0".into(), 0),
            ("orders-0".into(), 1),
            ("orders-1".into(), 1)
        ]
    );
    let mut second = Consumer::new("workers", "member-2");
    second.subscribe(&c, &orders).unwrap();
    assert_eq!(
        first.assignment().len(),
        4,
        "no revoke barrier: the old view stays"
    );
    first.refresh_assignment(&c).unwrap();
    assert_eq!(first.assignment(), [tp("orders", 0), tp("orders", 2)]);
    assert_eq!(
        first.positions().keys().cloned().collect::<Vec<_>>(),
        [tp("orders", 0)]
    );
    first.commit(&c).unwrap();
    assert_eq!(c.offsets().get("workers", &tp("orders", 0)), Some(2));
}

fn futures_lite<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}
