//! A topic created with `timestamp_type: "LogAppendTime"` (Kafka's
//! `message.timestamp.type`, issue 23 item 4): its leader stamps every
//! record it appends with the engine clock, whatever the producer sent,
//! transactional sends included; the type is kept in metadata.json (only
//! when it is LogAppendTime, so the book's format is unchanged otherwise)
//! and a reopened data directory stamps as before.

use minikafka::engine::config::Rules;
use minikafka::engine::core::metadata::TimestampType;
use minikafka::engine::{IsolationLevel, TopicPartition};
use minikafka::session::recording::Header;
use minikafka::session::{Action, Driver, Outcome};
use serde_json::json;

fn header() -> Header {
    serde_json::from_value(json!({
        "mk_recording": 1,
        "rules": "minikafka",
        "cluster": {"brokers": [1], "topics": []},
    }))
    .unwrap()
}

fn act(driver: &mut Driver, action: serde_json::Value) {
    let parsed = Action::from_json(&action).unwrap();
    assert_eq!(
        serde_json::to_value(&parsed).unwrap(),
        action,
        "the action writes back as it was read, as a recording keeps it"
    );
    assert_eq!(driver.apply(&parsed), Outcome::Ok, "{action}");
}

/// The timestamps of topic-0's records, in offset order.
fn stamps(driver: &Driver, topic: &str) -> Vec<i64> {
    driver
        .cluster()
        .fetch(
            &TopicPartition::new(topic, 0),
            0,
            100,
            IsolationLevel::ReadCommitted,
        )
        .unwrap()
        .iter()
        .map(|r| r.timestamp_ms)
        .collect()
}

fn produce(topic: &str, timestamps: &[i64]) -> serde_json::Value {
    let records: Vec<_> = timestamps
        .iter()
        .map(|t| json!({"value": "v", "timestamp_ms": t}))
        .collect();
    json!({"produce": {"topic": topic, "partition": 0, "records": records}})
}

#[test]
fn a_log_append_time_topic_is_stamped_by_the_leaders_clock_and_kept_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut driver = Driver::new(&header(), Some(&data)).unwrap();
    act(
        &mut driver,
        json!({"create_topic": {"name": "lat", "partitions": 1, "replication_factor": 1,
            "timestamp_type": "LogAppendTime"}}),
    );
    act(
        &mut driver,
        json!({"create_topic": {"name": "ct", "partitions": 1, "replication_factor": 1}}),
    );
    act(&mut driver, json!({"advance_clock": {"ms": 40}}));
    act(&mut driver, produce("lat", &[1234, 0, -1]));
    act(&mut driver, produce("ct", &[1234, 0]));
    act(&mut driver, json!({"advance_clock": {"ms": 25}}));
    act(&mut driver, json!({"begin": {"txn": "tx"}}));
    act(
        &mut driver,
        json!({"send": {"txn": "tx", "topic": "lat", "partition": 0,
            "records": [{"value": "t", "timestamp_ms": 9}]}}),
    );
    act(&mut driver, json!({"commit": {"txn": "tx"}}));
    assert_eq!(stamps(&driver, "lat"), [40, 40, 40, 65]);
    assert_eq!(
        stamps(&driver, "ct"),
        [1234, 40],
        "CreateTime: kept as sent"
    );
    assert_eq!(
        driver.cluster().timestamp_type("lat"),
        Some(TimestampType::LogAppendTime)
    );

    // metadata.json names the type for the LogAppendTime topic only.
    let file = std::fs::read_to_string(data.join("metadata.json")).unwrap();
    let metadata: serde_json::Value = serde_json::from_str(&file).unwrap();
    assert_eq!(metadata["topics"]["lat"]["timestamp_type"], "LogAppendTime");
    let ct = metadata["topics"]["ct"].as_object().unwrap();
    assert_eq!(ct.keys().collect::<Vec<_>>(), ["partitions"], "{file}");

    // Reopened, the topic still stamps: the type came back from disk.
    drop(driver);
    let mut reopened = Driver::open_in_place(&data, Rules::Minikafka).unwrap();
    assert_eq!(
        reopened.cluster().timestamp_type("lat"),
        Some(TimestampType::LogAppendTime)
    );
    act(&mut reopened, json!({"advance_clock": {"ms": 7}}));
    let now = reopened.clock_ms() as i64;
    act(&mut reopened, produce("lat", &[5]));
    act(&mut reopened, produce("ct", &[5]));
    assert_eq!(stamps(&reopened, "lat"), [40, 40, 40, 65, now]);
    assert_eq!(stamps(&reopened, "ct"), [1234, 40, 5]);
}

/// A `create_topic` without `timestamp_type` is CreateTime and writes back
/// without it; an unknown type is refused when the action is read.
#[test]
fn the_action_field_is_optional_and_checked() {
    let plain = json!({"create_topic": {"name": "t", "partitions": 1, "replication_factor": 1}});
    let action = Action::from_json(&plain).unwrap();
    assert!(matches!(
        action,
        Action::CreateTopic {
            timestamp_type: TimestampType::CreateTime,
            ..
        }
    ));
    assert_eq!(serde_json::to_value(&action).unwrap(), plain);
    let bad = json!({"create_topic": {"name": "t", "partitions": 1, "replication_factor": 1,
        "timestamp_type": "WallTime"}});
    assert!(Action::from_json(&bad).is_err());
}

/// What the book's Python code reads of `topic`-0 in `data`, opening the
/// whole directory as its `BrokerCluster` does: `OFFSET TIMESTAMP` lines,
/// or `None` where the book's code or a Python for it is not here.
fn book_reads(data: &std::path::Path, topic: &str) -> Option<String> {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/book/src");
    let python =
        std::env::var_os("MK_BOOK_PYTHON").or_else(|| std::env::var_os("MK_TUI_PYTHON"))?;
    if !src.join("minikafka").is_dir() {
        return None;
    }
    let script = r#"
import sys
from pathlib import Path
from minikafka.config import MiniKafkaConfig
from minikafka.core.cluster import BrokerCluster
from minikafka.core.metadata import TopicPartition
cluster = BrokerCluster.open(MiniKafkaConfig(Path(sys.argv[1]), broker_ids=(1,)))
for r in cluster.fetch(TopicPartition(sys.argv[2], 0), 0, 100):
    print(r.offset, r.timestamp_ms)
"#;
    let out = std::process::Command::new(python)
        .args(["-c", script])
        .arg(data)
        .arg(topic)
        .env("PYTHONPATH", &src)
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "the book's code: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

/// The book's Python code opens a data directory holding a LogAppendTime
/// topic (its metadata reader ignores `timestamp_type`) and reads the
/// stamped records as the engine wrote them.
#[test]
fn the_books_code_reads_a_log_append_time_topic() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut driver = Driver::new(&header(), Some(&data)).unwrap();
    act(
        &mut driver,
        json!({"create_topic": {"name": "lat", "partitions": 1, "replication_factor": 1,
            "timestamp_type": "LogAppendTime"}}),
    );
    act(&mut driver, json!({"advance_clock": {"ms": 12}}));
    act(&mut driver, produce("lat", &[1234, 99]));
    drop(driver);
    let Some(read) = book_reads(&data, "lat") else {
        return;
    };
    assert_eq!(read, "0 12\n1 12\n");
}
