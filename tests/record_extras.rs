//! A record's producer timestamp and headers (issue 23 item 4), given by
//! an action's `records`: kept by the engine's batch, by MKB1 on disk
//! (the data directory reopened), and by the action's JSON, which is what
//! a recording replays. A record stamped 0 takes the leader's clock, the
//! book's rule.

use minikafka::engine::config::Rules;
use minikafka::engine::{IsolationLevel, TopicPartition};
use minikafka::session::recording::Header;
use minikafka::session::{Action, Driver, Outcome};

fn header() -> Header {
    serde_json::from_value(serde_json::json!({
        "mk_recording": 1,
        "rules": "minikafka",
        "cluster": {
            "brokers": [1],
            "topics": [{"name": "out", "partitions": 1, "replication_factor": 1}],
        },
    }))
    .unwrap()
}

fn act(json: serde_json::Value) -> Action {
    let action = Action::from_json(&json).unwrap();
    assert_eq!(
        serde_json::to_value(&action).unwrap(),
        json,
        "the action writes back as it was read, as a recording keeps it"
    );
    action
}

/// (offset, timestamp, key, value, headers as text) of every record a
/// read_committed consumer of out-0 reads.
fn read(driver: &Driver) -> Vec<(i64, i64, String, String, Vec<String>)> {
    let text = |b: &Option<bytes::Bytes>| {
        b.as_deref()
            .map_or("null".into(), |b| String::from_utf8_lossy(b).into_owned())
    };
    driver
        .cluster()
        .fetch(
            &TopicPartition::new("out", 0),
            0,
            100,
            IsolationLevel::ReadCommitted,
        )
        .unwrap()
        .iter()
        .map(|r| {
            let headers = r
                .headers
                .iter()
                .map(|h| format!("{}={}", h.key, text(&h.value)))
                .collect();
            (
                r.offset,
                r.timestamp_ms,
                text(&r.key),
                text(&r.value),
                headers,
            )
        })
        .collect()
}

#[test]
fn timestamps_and_headers_survive_the_engine_the_disk_and_the_actions_json() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut driver = Driver::new(&header(), Some(&data)).unwrap();
    let actions = [
        serde_json::json!({"advance_clock": {"ms": 500}}),
        serde_json::json!({"produce": {"topic": "out", "partition": 0, "records": [
            {"key": "k", "value": "a", "timestamp_ms": 1234,
             "headers": [{"key": "trace", "value": "t1"}, {"key": "flag"}]},
            {"value": "b", "timestamp_ms": -1},
            {"value": "c"},
        ]}}),
        serde_json::json!({"begin": {"txn": "tx"}}),
        serde_json::json!({"send": {"txn": "tx", "topic": "out", "partition": 0, "records": [
            {"value": "d", "timestamp_ms": 1_600_000_000_000_i64,
             "headers": [{"key": "h", "value": "x"}, {"key": "h2", "value": "y"}]},
        ]}}),
        serde_json::json!({"commit": {"txn": "tx"}}),
    ];
    for a in actions {
        assert_eq!(driver.apply(&act(a.clone())), Outcome::Ok, "{a}");
    }
    let expected = vec![
        (
            0,
            1234,
            "k".into(),
            "a".into(),
            vec!["trace=t1".into(), "flag=null".into()],
        ),
        (1, -1, "null".into(), "b".into(), vec![]),
        (2, 500, "null".into(), "c".into(), vec![]),
        (
            3,
            1_600_000_000_000,
            "null".into(),
            "d".into(),
            vec!["h=x".into(), "h2=y".into()],
        ),
    ];
    assert_eq!(read(&driver), expected);
    drop(driver);
    let reopened = Driver::open_in_place(&data, Rules::Minikafka).unwrap();
    assert_eq!(read(&reopened), expected, "MKB1 on disk keeps them");
}

/// Kafka keeps a CreateTime of 0; the book's leader stamps a record whose
/// timestamp is 0 with its clock, and so does the engine
/// (docs/kafka-differences.md).
#[test]
fn a_record_stamped_0_takes_the_leaders_clock() {
    let mut driver = Driver::new(&header(), None).unwrap();
    driver.apply(&act(serde_json::json!({"advance_clock": {"ms": 70}})));
    let produce = act(
        serde_json::json!({"produce": {"topic": "out", "partition": 0,
        "records": [{"value": "z", "timestamp_ms": 0}]}}),
    );
    assert_eq!(driver.apply(&produce), Outcome::Ok);
    assert_eq!(read(&driver)[0].1, 70);
}
