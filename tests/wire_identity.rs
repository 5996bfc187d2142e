//! A Kafka client's identity carried by the actions (`produce` and `send`
//! with `wire`: producer id, epoch, first sequence; docs/recording-format.md):
//! the engine's producer state (E7) judges the batch, not the edge, so a
//! replay judges it the same way and a reopened data directory remembers
//! it (the producer state is rebuilt from the log).

use minikafka::engine::config::Rules;
use minikafka::session::recording::Header;
use minikafka::session::{Action, Driver, Outcome, Recording, Snapshot, Step};
use serde_json::Value;

fn header(rules: &str) -> Header {
    serde_json::from_value(serde_json::json!({
        "mk_recording": 1,
        "title": "wire identity",
        "rules": rules,
        "cluster": {
            "brokers": [1],
            "topics": [{"name": "t", "partitions": 1, "replication_factor": 1}],
            "config": {},
        },
    }))
    .unwrap()
}

fn act(json: Value) -> Action {
    Action::from_json(&json).unwrap()
}

fn produce(pid: i64, epoch: i16, seq: i32, values: &[&str]) -> Action {
    let records: Vec<Value> = values
        .iter()
        .map(|v| serde_json::json!({"value": v}))
        .collect();
    act(serde_json::json!({"produce": {
        "topic": "t", "partition": 0, "records": records, "acks": "1",
        "wire": {"producer_id": pid, "epoch": epoch, "base_sequence": seq},
    }}))
}

fn values(d: &Driver) -> Vec<String> {
    let state: Value = serde_json::from_str(&Snapshot::of(d).to_json()).unwrap();
    state["partitions"][0]["batches"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b["records"].as_array().unwrap().clone())
        .map(|r| r["value"].as_str().unwrap().to_string())
        .collect()
}

/// Applies `action`; returns its outcome's kind and, for a produce, where
/// its batch landed and whether it was a retry.
fn apply(d: &mut Driver, action: &Action) -> (String, Option<(i64, bool)>) {
    let outcome = d.apply(action);
    let landed = d
        .appended(d.step())
        .and_then(|r| r.offsets.map(|(first, _)| (first, r.duplicate)));
    let kind = match outcome {
        Outcome::Error(e) => e
            .engine()
            .map_or("invalid".into(), |e| e.code().to_string()),
        other => other.name().to_string(),
    };
    (kind, landed)
}

#[test]
fn the_engine_judges_a_clients_batches_by_their_identity() {
    let mut d = Driver::new(&header("minikafka"), None).unwrap();
    let ok = |first| ("ok".to_string(), Some((first, false)));
    assert_eq!(apply(&mut d, &produce(1000, 0, 0, &["a", "b"])), ok(0));
    assert_eq!(
        apply(&mut d, &produce(1000, 0, 0, &["a", "b"])),
        ("ok".to_string(), Some((0, true))),
        "an exact retry: the original offsets, nothing appended"
    );
    assert!(
        d.last_said().en.contains("exact retry"),
        "{:?}",
        d.last_said()
    );
    assert_eq!(
        apply(&mut d, &produce(1000, 0, 5, &["x"])).0,
        "OutOfOrderSequence"
    );
    assert_eq!(apply(&mut d, &produce(1000, 0, 2, &["c"])), ok(2));
    assert_eq!(
        apply(&mut d, &produce(1000, 1, 0, &["d"])),
        ok(3),
        "a newer epoch from sequence 0"
    );
    assert_eq!(
        apply(&mut d, &produce(1000, 0, 3, &["x"])).0,
        "ProducerFenced",
        "the older epoch"
    );
    assert_eq!(
        apply(&mut d, &produce(2000, 0, 0, &["e"])),
        ok(4),
        "another client"
    );
    assert_eq!(values(&d), ["a", "b", "c", "d", "e"]);
}

#[test]
fn a_recording_of_client_batches_replays_to_the_same_log_and_a_reopen_remembers_them() {
    let h = header("minikafka");
    let actions = [
        produce(1000, 0, 0, &["a", "b"]),
        produce(1000, 0, 0, &["a", "b"]),
        produce(1000, 0, 2, &["c"]),
        produce(1001, 0, 0, &["z"]),
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut live = Driver::new(&h, Some(dir.path())).unwrap();
    for a in &actions {
        live.apply(a);
    }
    let recording = Recording {
        header: h.clone(),
        steps: actions
            .iter()
            .enumerate()
            .map(|(i, a)| Step {
                present: None,
                at_ms: i as u64,
                action: a.clone(),
                caption: None,
            })
            .collect(),
    };
    let text = recording.to_jsonl();
    assert!(
        text.contains(r#""wire":{"producer_id":1000,"epoch":0,"base_sequence":0}"#),
        "{text}"
    );
    let replayed = Recording::parse("wire.jsonl", &text).unwrap();
    let mut again = Driver::new(&replayed.header, None).unwrap();
    for s in &replayed.steps {
        again.apply(&s.action);
    }
    assert_eq!(values(&again), ["a", "b", "c", "z"]);
    assert_eq!(values(&again), values(&live));
    // The process ends; the data directory is opened again: the producer
    // state comes back from the log, so a retry across the restart is
    // still answered with its original offsets, and the next batch is
    // still in order.
    live.dispose().join().unwrap();
    let mut reopened = Driver::open_in_place(dir.path(), Rules::Minikafka).unwrap();
    assert_eq!(
        apply(&mut reopened, &produce(1000, 0, 2, &["c"])),
        ("ok".to_string(), Some((2, true)))
    );
    assert_eq!(
        apply(&mut reopened, &produce(1000, 0, 3, &["d"])),
        ("ok".to_string(), Some((4, false)))
    );
    assert_eq!(values(&reopened), ["a", "b", "c", "z", "d"]);
}

#[test]
fn a_transactional_send_with_an_identity_is_judged_by_the_transactions_producer() {
    let mut d = Driver::new(&header("kafka"), None).unwrap();
    assert_eq!(
        d.apply(&act(serde_json::json!({"begin": {"txn": "tx"}}))),
        Outcome::Ok
    );
    let (pid, epoch) = d
        .cluster()
        .with_state(|s| s.transactions().instances()[0].producer)
        .expect("the kafka rules give a transaction a producer");
    let send = |seq: i32, epoch: i32, value: &str| {
        act(serde_json::json!({"send": {
            "txn": "tx", "topic": "t", "partition": 0, "value": value,
            "wire": {"producer_id": pid, "epoch": epoch, "base_sequence": seq},
        }}))
    };
    assert_eq!(
        apply(&mut d, &send(0, epoch, "a")),
        ("ok".into(), Some((0, false)))
    );
    assert_eq!(
        apply(&mut d, &send(0, epoch, "a")),
        ("ok".into(), Some((0, true))),
        "a retry of the send: its original offset, journaled once"
    );
    assert_eq!(
        apply(&mut d, &send(1, epoch, "b")),
        ("ok".into(), Some((1, false)))
    );
    assert_eq!(
        apply(&mut d, &send(2, epoch + 1, "x")).0,
        "ProducerFenced",
        "another epoch than the transaction's"
    );
    assert_eq!(
        d.apply(&act(serde_json::json!({"commit": {"txn": "tx"}}))),
        Outcome::Ok
    );
    assert_eq!(values(&d), ["a", "b"]);

    let mut book = Driver::new(&header("minikafka"), None).unwrap();
    book.apply(&act(serde_json::json!({"begin": {"txn": "tx"}})));
    let (kind, _) = apply(&mut book, &send(0, 0, "a"));
    assert_eq!(
        kind, "InvalidBatch",
        "the book's transactions carry no producer id"
    );
}

#[test]
fn an_identity_is_checked_when_the_action_is_read() {
    let bad = |json: Value| Action::from_json(&json).unwrap_err().to_string();
    assert_eq!(
        bad(serde_json::json!({"produce": {"topic": "t", "value": "v",
            "wire": {"producer_id": -1, "epoch": 0, "base_sequence": 0}}})),
        "field action.produce.wire: producer_id, epoch and base_sequence are at least 0"
    );
    assert_eq!(
        bad(
            serde_json::json!({"produce": {"topic": "t", "value": "v", "producer": "p",
            "wire": {"producer_id": 1, "epoch": 0, "base_sequence": 0}}})
        ),
        "field action.produce.wire: give producer (a named producer of the engine) or wire (a client's identity), not both"
    );
}
