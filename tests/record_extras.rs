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

/// Every record a read_committed consumer of out-0 reads.
fn fetched(driver: &Driver) -> Vec<minikafka::engine::core::record::ConsumerRecord> {
    driver
        .cluster()
        .fetch(
            &TopicPartition::new("out", 0),
            0,
            100,
            IsolationLevel::ReadCommitted,
        )
        .unwrap()
}

/// (offset, timestamp, key, value, headers as text) of every record a
/// read_committed consumer of out-0 reads.
fn read(driver: &Driver) -> Vec<(i64, i64, String, String, Vec<String>)> {
    let text = |b: &Option<bytes::Bytes>| {
        b.as_deref()
            .map_or("null".into(), |b| String::from_utf8_lossy(b).into_owned())
    };
    fetched(driver)
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

/// Kafka keeps any bytes (a Long key, a schema-registry value), and so do
/// the actions: bytes that are not UTF-8 are spelled `{"base64": ...}` in
/// the action's JSON (docs/recording-format.md), reach the engine byte for
/// byte, and MKB1 on disk keeps them.
#[test]
fn binary_keys_values_and_headers_survive_the_engine_the_disk_and_the_actions_json() {
    use base64::Engine as _;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    // -7 as a Long (0xff..0xf9) is not UTF-8; 7 would be, and be text.
    let key = (-7i64).to_be_bytes();
    let value = [0u8, 0, 0, 0, 3, 0xc3, 0x28, 0xff, 0x80];
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut driver = Driver::new(&header(), Some(&data)).unwrap();
    let produce = serde_json::json!({"produce": {"topic": "out", "partition": 0, "records": [
        {"key": {"base64": b64(&key)}, "value": {"base64": b64(&value)},
         "headers": [{"key": "schema", "value": {"base64": b64(&[0xfe, 0x01])}}]},
        {"key": "text", "value": "still text"},
    ]}});
    assert_eq!(driver.apply(&act(produce)), Outcome::Ok);
    let bytes_read = |driver: &Driver| {
        fetched(driver)
            .iter()
            .map(|r| {
                (
                    r.key.as_deref().unwrap().to_vec(),
                    r.value.as_deref().unwrap().to_vec(),
                    r.headers
                        .iter()
                        .map(|h| h.value.as_deref().unwrap().to_vec())
                        .collect::<Vec<_>>(),
                )
            })
            .collect::<Vec<_>>()
    };
    let expected = vec![
        (key.to_vec(), value.to_vec(), vec![vec![0xfe, 0x01]]),
        (b"text".to_vec(), b"still text".to_vec(), vec![]),
    ];
    assert_eq!(bytes_read(&driver), expected);
    drop(driver);
    let reopened = Driver::open_in_place(&data, Rules::Minikafka).unwrap();
    assert_eq!(bytes_read(&reopened), expected, "MKB1 on disk keeps them");
}

/// A key or value spelled `{"base64": ...}` whose bytes are UTF-8 is the
/// same record as one spelled as text, and writes back as text (control
/// characters too: `"\u0000"` is JSON).
#[test]
fn base64_of_text_is_the_text() {
    let spelled = Action::from_json(&serde_json::json!({"produce": {"topic": "out",
        "records": [{"key": {"base64": "aw=="}, "value": {"base64": "dGV4dA=="}}]}}))
    .unwrap();
    assert_eq!(
        serde_json::to_value(&spelled).unwrap(),
        serde_json::json!({"produce": {"topic": "out",
            "records": [{"key": "k", "value": "text"}]}})
    );
}

/// Bytes that are UTF-8 but not printable (a Long's leading zero bytes)
/// are text, spelled with JSON's escapes, and read back the same.
#[test]
fn utf8_control_bytes_stay_text_and_round_trip() {
    let spelled = serde_json::json!({"produce": {"topic": "out",
        "records": [{"key": "\u{0}\u{0}\u{7}", "value": {"base64": "AAAAAAAAAAc="}}]}});
    let action = Action::from_json(&spelled).unwrap();
    let written = serde_json::to_string(&action).unwrap();
    assert!(
        written.contains(r#""key":"\u0000\u0000\u0007""#),
        "{written}"
    );
    assert!(written.contains(r#""value":"\u0000\u0000"#), "{written}");
    let again = Action::from_json(&serde_json::from_str(&written).unwrap()).unwrap();
    assert_eq!(again, action);
}
