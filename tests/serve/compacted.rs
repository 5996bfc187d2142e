//! A compacted topic (issue 26, item 6): confluent-kafka creates it with
//! `cleanup.policy=compact`; the server's own cleaner compacts its closed
//! segments every `--cleaner-interval` ms, as recorded `compact` steps, so
//! a consumer reading from the beginning finds each key's latest value at
//! its original offset, and the tombstoned key gone once the tombstone
//! outlived `delete.retention.ms`. The recording replays to the same state.

use serde_json::{Value, json};

use crate::python;
use crate::record::{comparable, state_of_recording};
use crate::server::Server;

#[test]
fn the_cleaner_compacts_a_compact_topic_and_the_recording_replays() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let keep = tempfile::tempdir().unwrap();
    let (rec, served) = (
        keep.path().join("rec.jsonl"),
        keep.path().join("served.jsonl"),
    );
    // Segments of 150 bytes: each one-record batch (about 80 bytes) rolls
    // the segment every other batch, so the early records sit in closed
    // segments the cleaner may touch.
    let header = json!({"mk_recording": 1, "title": "compacted",
        "cluster": {"brokers": [1], "config": {"segment_max_bytes": 150}}});
    std::fs::write(&rec, format!("{header}\n")).unwrap();
    let mut server = Server::start(&[
        rec.to_str().unwrap(),
        "--record",
        served.to_str().unwrap(),
        "--cleaner-interval",
        "300",
    ]);
    let got = python::run(
        &py,
        "ck_compacted.py",
        &[&server.bootstrap(), "cmp", "1000"],
    );
    let mut lines: Vec<&str> = got.lines().collect();
    let reads = lines.pop().unwrap_or_default();
    assert!(reads.starts_with("reads "), "{got}");
    // k0 and k2 at their updates' offsets (4, 5), k3 at its own (3), k1's
    // value and tombstone gone, the fillers (7-14) untouched.
    let mut expected = vec![
        "3 k3 a3".to_string(),
        "4 k0 b0".to_string(),
        "5 k2 b2".to_string(),
    ];
    expected.extend((0..8).map(|i| format!("{} f{i} filler{i}", 7 + i)));
    assert_eq!(lines, expected, "{got}");
    server.stop();

    let recorded = std::fs::read_to_string(&served).unwrap();
    let steps: Vec<Value> = recorded
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|step| step.get("action").cloned())
        .collect();
    let created: Vec<&Value> = steps.iter().filter_map(|a| a.get("create_topic")).collect();
    assert_eq!(
        created[0]["config"],
        json!({"cleanup_policy": "compact", "delete_retention_ms": 1000}),
        "{recorded}"
    );
    let compactions: Vec<&Value> = steps.iter().filter_map(|a| a.get("compact")).collect();
    assert!(!compactions.is_empty(), "{recorded}");
    assert!(
        compactions
            .iter()
            .all(|c| **c == json!({"topic": "cmp", "delete_retention_ms": 1000})),
        "{recorded}"
    );
    let state = server.state();
    let partition = crate::server::partition(&state, "cmp", 0);
    assert_eq!(
        partition["config"],
        json!({"cleanup_policy": "compact", "delete_retention_ms": 1000,
               "timestamp_type": "LogAppendTime"}),
        "the topic's config, its timestamp type with it"
    );
    assert_eq!(
        comparable(&state_of_recording(&served)),
        comparable(&state),
        "the recording replays to the state the server left, compactions included"
    );
}
