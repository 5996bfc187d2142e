//! E16 end to end: the `retention` and `compact` actions through the
//! session driver, on a replicated partition, read back from the state
//! JSON (what every pane is drawn from): the log start advancing on the
//! leader and on a follower at its next fetch, what a fresh consumer reads,
//! tombstones, compacted-away records, and a compaction crashed at its
//! `before_swap` cut point that loses and doubles nothing.

use minikafka::session::recording::Header;
use minikafka::session::{Action, Driver, Snapshot};
use serde_json::{Value, json};

/// Two brokers, topic `s` at replication factor 2, segments of 150 bytes:
/// each one-record batch below gets a segment of its own.
fn driver() -> Driver {
    let header: Header = serde_json::from_value(json!({
        "mk_recording": 1, "rules": "minikafka",
        "cluster": {"brokers": [1, 2],
            "topics": [{"name": "s", "partitions": 1, "replication_factor": 2}],
            "config": {"segment_max_bytes": 150}},
    }))
    .unwrap();
    Driver::new(&header, None).unwrap()
}

fn apply(d: &mut Driver, action: Value) -> Value {
    let action: Action = Action::from_json(&action).unwrap();
    d.apply(&action);
    state(d)
}

fn state(d: &Driver) -> Value {
    serde_json::to_value(Snapshot::of(d)).unwrap()
}

fn partition(state: &Value) -> &Value {
    &state["partitions"][0]
}

fn produce(d: &mut Driver, key: &str, value: Option<&str>) {
    let record = match value {
        Some(v) => json!({"key": key, "value": v}),
        None => json!({"key": key, "tombstone": true}),
    };
    apply(
        d,
        json!({"produce": {"topic": "s", "records": [record], "acks": "1"}}),
    );
}

/// (offset, key, value) of every record the state lists, in the leader's log.
fn records(state: &Value) -> Vec<(i64, String, Value)> {
    partition(state)["batches"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b["records"].as_array().unwrap().clone())
        .map(|r| {
            (
                r["offset"].as_i64().unwrap(),
                r["key"].as_str().unwrap_or("").to_string(),
                r["value"].clone(),
            )
        })
        .collect()
}

fn last_error(state: &Value) -> Option<String> {
    state["errors"]
        .as_array()
        .and_then(|e| e.last())
        .map(|e| e["message"].as_str().unwrap().to_string())
}

#[test]
fn retention_advances_the_log_start_on_the_leader_and_on_the_follower_at_its_fetch() {
    let mut d = driver();
    for (i, ms) in [0u64, 100, 100, 100].iter().enumerate() {
        apply(&mut d, json!({"advance_clock": {"ms": ms}}));
        produce(&mut d, &format!("k{i}"), Some("v"));
    }
    let s = apply(&mut d, json!({"replicate": {}}));
    assert_eq!(partition(&s)["high_watermark"], 4);
    assert_eq!(partition(&s)["log_start_offset"], 0);

    // Clock 300; records at 0, 100, 200, 300. Older than 150 ms: the
    // segments of offsets 0 and 1 (closed, below the HW).
    apply(&mut d, json!({"advance_clock": {"ms": 0}}));
    let s = apply(
        &mut d,
        json!({"retention": {"topic": "s", "retention_ms": 150}}),
    );
    assert_eq!(last_error(&s), None);
    let p = partition(&s);
    assert_eq!(p["log_start_offset"], 2);
    let leader_first = p["batches"][0]["base_offset"].as_i64().unwrap();
    assert_eq!(leader_first, 2);
    assert_eq!(
        s["consumers"]["read_uncommitted"]["s-0"],
        json!(["v", "v"]),
        "a fresh consumer starts at the log start"
    );
    assert_eq!(
        d.last_said().en,
        "retention: ok; s-0: deleted 2 closed segment(s), log start 0 → 2 (offsets below 2 are gone)"
    );
    // Broker 2 ran, so its own retention deleted the same segments.
    assert_eq!(replica_start(&d, 2), 2);
    // Nothing more is old enough: a second run deletes nothing.
    let s = apply(
        &mut d,
        json!({"retention": {"topic": "s", "partition": 0, "retention_ms": 150}}),
    );
    assert_eq!(partition(&s)["log_start_offset"], 2);
}

#[test]
fn retention_by_bytes_keeps_the_newest_segments_and_never_the_active_one() {
    let mut d = driver();
    for i in 0..5 {
        produce(&mut d, &format!("k{i}"), Some("value"));
    }
    apply(&mut d, json!({"replicate": {}}));
    let s = apply(
        &mut d,
        json!({"retention": {"topic": "s", "retention_bytes": 1}}),
    );
    // Every closed segment goes; the active one (offset 4) stays.
    assert_eq!(partition(&s)["log_start_offset"], 4);
    assert_eq!(records(&s).len(), 1);
}

#[test]
fn retention_stops_at_the_high_watermark() {
    let mut d = driver();
    for i in 0..4 {
        produce(&mut d, &format!("k{i}"), Some("v"));
    }
    // Not replicated: the HW is 0 (acks=1, the follower has nothing), so
    // no segment is below it.
    let s = apply(
        &mut d,
        json!({"retention": {"topic": "s", "retention_bytes": 1}}),
    );
    assert_eq!(partition(&s)["high_watermark"], 0);
    assert_eq!(partition(&s)["log_start_offset"], 0);
}

#[test]
fn compaction_keeps_each_keys_latest_and_a_recent_tombstone_with_their_offsets() {
    let mut d = driver();
    produce(&mut d, "a", Some("1"));
    produce(&mut d, "b", Some("x"));
    produce(&mut d, "a", Some("2"));
    produce(&mut d, "b", None); // a tombstone for b
    produce(&mut d, "c", Some("active"));
    apply(&mut d, json!({"replicate": {}}));
    let s = apply(
        &mut d,
        json!({"compact": {"topic": "s", "delete_retention_ms": 1000}}),
    );
    assert_eq!(last_error(&s), None, "{}", s["errors"]);
    assert_eq!(
        records(&s),
        vec![
            (2, "a".into(), json!("2")),
            (3, "b".into(), Value::Null),
            (4, "c".into(), json!("active")),
        ]
    );
    let p = partition(&s);
    assert_eq!(p["log_start_offset"], 0, "compaction keeps the log start");
    // The compacted-away offsets 0 and 1 are gone from the batches.
    let bases: Vec<i64> = p["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["base_offset"].as_i64().unwrap())
        .collect();
    assert_eq!(bases, vec![2, 3, 4]);

    // Once the tombstone is older than delete_retention_ms, it goes too.
    apply(&mut d, json!({"advance_clock": {"ms": 1001}}));
    let s = apply(
        &mut d,
        json!({"compact": {"topic": "s", "partition": 0, "delete_retention_ms": 1000}}),
    );
    let keys: Vec<String> = records(&s).into_iter().map(|r| r.1).collect();
    assert_eq!(keys, vec!["a", "c"]);
}

#[test]
fn a_batch_compaction_thins_keeps_its_offsets_and_counts_the_removed() {
    let mut d = driver();
    apply(
        &mut d,
        json!({"produce": {"topic": "s", "records": [
            {"key": "a", "value": "1"}, {"key": "b", "value": "1"}, {"key": "a", "value": "2"}]}}),
    );
    produce(&mut d, "z", Some("active"));
    apply(&mut d, json!({"replicate": {}}));
    let s = apply(
        &mut d,
        json!({"compact": {"topic": "s", "delete_retention_ms": 0}}),
    );
    let batch = &partition(&s)["batches"][0];
    assert_eq!(
        (batch["base_offset"].clone(), batch["last_offset"].clone()),
        (json!(0), json!(2))
    );
    assert_eq!(batch["compacted"], 1);
    let offsets: Vec<i64> = records(&s).iter().map(|r| r.0).collect();
    assert_eq!(offsets, vec![1, 2, 3]);
}

#[test]
fn a_compaction_crashed_before_its_swap_loses_and_doubles_nothing() {
    let mut d = driver();
    for (k, v) in [("a", "1"), ("a", "2"), ("b", "1"), ("a", "3")] {
        produce(&mut d, k, Some(v));
    }
    let s = apply(&mut d, json!({"replicate": {}}));
    let before = records(&s);
    assert_eq!(before.len(), 4);

    let s = apply(
        &mut d,
        json!({"compact": {"topic": "s", "delete_retention_ms": 0, "crash_at": "before_swap"}}),
    );
    assert_eq!(
        records(&s),
        before,
        "the live log stands: nothing lost, nothing doubled"
    );
    let repaired = &s["last_recovery"]["swaps_repaired"];
    assert_eq!(
        repaired[0]["repair"], "discarded_replacement",
        "{}",
        s["last_recovery"]
    );
    assert_eq!(repaired[0]["topic"], "s");
    // The data directory holds no replacement left behind.
    let broker_dir = d
        .data_dir()
        .join(format!("broker-{}", repaired[0]["broker"]));
    let leftovers: Vec<_> = std::fs::read_dir(&broker_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // A crash drops in-memory state: the reopen reads the same records.
    let s = apply(&mut d, json!({"crash": {}}));
    assert_eq!(records(&s), before);
    // The compaction runs again and does what it would have done.
    let s = apply(
        &mut d,
        json!({"compact": {"topic": "s", "delete_retention_ms": 0}}),
    );
    let kept: Vec<(i64, String)> = records(&s).into_iter().map(|r| (r.0, r.1)).collect();
    assert_eq!(kept, vec![(2, "b".into()), (3, "a".into())]);
}

fn replica_start(d: &Driver, broker: u32) -> i64 {
    let tp = minikafka::engine::TopicPartition::new("s", 0);
    d.cluster()
        .replica_log(&tp, broker)
        .unwrap()
        .log_start_offset()
        .unwrap()
}

fn replica_leo(state: &Value, broker: u32) -> Value {
    partition(state)["replicas"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["broker"] == broker)
        .unwrap()["log_end_offset"]
        .clone()
}

/// Broker 2 stopped while retention ran on the leader alone: `produced`
/// records, `replicated` of them fetched before the stop, the ISR shrunk
/// by time, every closed segment below the HW deleted on the leader.
fn follower_left_behind(produced: usize, replicated: usize) -> Driver {
    let mut d = driver();
    for i in 0..replicated {
        produce(&mut d, &format!("k{i}"), Some("v"));
    }
    apply(&mut d, json!({"replicate": {}}));
    apply(&mut d, json!({"stop_broker": {"broker": 2}}));
    for i in replicated..produced {
        produce(&mut d, &format!("k{i}"), Some("v"));
    }
    apply(&mut d, json!({"advance_clock": {"ms": 10001}}));
    let s = apply(&mut d, json!({"replicate": {}}));
    assert_eq!(partition(&s)["isr"], json!([1]));
    let s = apply(
        &mut d,
        json!({"retention": {"topic": "s", "retention_bytes": 1}}),
    );
    assert_eq!(partition(&s)["log_start_offset"], produced as i64 - 1);
    assert_eq!(
        replica_start(&d, 2),
        0,
        "a stopped broker's log is untouched"
    );
    apply(&mut d, json!({"start_broker": {"broker": 2}}));
    d
}

#[test]
fn a_follower_behind_the_leaders_log_start_starts_again_there() {
    let mut d = follower_left_behind(4, 0);
    let s = apply(&mut d, json!({"replicate": {}}));
    assert_eq!(last_error(&s), None, "{}", s["errors"]);
    assert_eq!(replica_start(&d, 2), 3);
    assert_eq!(replica_leo(&s, 2), 4);
}

#[test]
fn a_follower_moves_its_log_start_up_to_the_leaders_as_it_fetches() {
    let mut d = follower_left_behind(4, 3);
    let s = apply(&mut d, json!({"replicate": {}}));
    assert_eq!(last_error(&s), None, "{}", s["errors"]);
    assert_eq!(replica_leo(&s, 2), 4);
    // Its segments wholly below the leader's start went at the first fetch
    // (its active one, holding offset 2, was not closed yet), the rest at
    // the next.
    assert_eq!(replica_start(&d, 2), 2);
    apply(&mut d, json!({"replicate": {}}));
    assert_eq!(replica_start(&d, 2), 3);
}

#[test]
fn bad_cleanup_actions_are_refused_with_the_field_named() {
    let refuse = |v: Value| Action::from_json(&v).unwrap_err().to_string();
    assert_eq!(
        refuse(json!({"retention": {"topic": "s"}})),
        "field action.retention: give retention_ms, retention_bytes or both"
    );
    assert_eq!(
        refuse(json!({"retention": {"topic": "s", "retention_bytes": 0}})),
        "field action.retention.retention_bytes: retention_bytes must be positive"
    );
    assert!(
        refuse(json!({"compact": {"topic": "s", "delete_retention_ms": 1, "crash_at": "after"}}))
            .starts_with("field action.compact.crash_at: unknown cut point \"after\"")
    );
    let mut d = driver();
    let s = apply(
        &mut d,
        json!({"compact": {"topic": "nope", "delete_retention_ms": 1}}),
    );
    assert!(
        last_error(&s).unwrap().contains("nope"),
        "{:?}",
        last_error(&s)
    );
}

#[test]
fn delete_records_moves_the_leaders_start_and_the_follower_follows_at_its_fetch() {
    let mut d = driver();
    for i in 0..4 {
        produce(&mut d, &format!("k{i}"), Some("v"));
    }
    apply(&mut d, json!({"replicate": {}}));
    let s = apply(
        &mut d,
        json!({"delete_records": {"topic": "s", "partition": 0, "offset": 2}}),
    );
    assert_eq!(last_error(&s), None, "{}", s["errors"]);
    assert_eq!(partition(&s)["log_start_offset"], 2);
    assert_eq!(replica_start(&d, 2), 0, "the follower has not fetched yet");
    apply(&mut d, json!({"replicate": {}}));
    assert_eq!(replica_start(&d, 2), 2);
    // -1 is the HW (4): segment-aligned, the start stops at the active
    // segment's base, 3.
    let s = apply(
        &mut d,
        json!({"delete_records": {"topic": "s", "partition": 0, "offset": -1}}),
    );
    assert_eq!(partition(&s)["log_start_offset"], 3);
    assert_eq!(
        d.last_said().en,
        "delete_records: ok; s-0 up to -1: log start 2 → 3"
    );
    let s = apply(
        &mut d,
        json!({"delete_records": {"topic": "s", "partition": 0, "offset": 9}}),
    );
    assert!(
        last_error(&s).unwrap().contains("out of range"),
        "{:?}",
        last_error(&s)
    );
    assert_eq!(partition(&s)["log_start_offset"], 3);
}
