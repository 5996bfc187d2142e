//! A LogAppendTime topic (issue 23 item 4): created with Kafka's topic
//! config `message.timestamp.type=LogAppendTime`, its records come back
//! to confluent-kafka stamped with the time the leader appended them,
//! marked LogAppendTime, as the produce response told the producer, and
//! ListOffsets finds them by those times; the same script against Apache
//! Kafka 4.4 prints the same lines. Other topic configs stay refused.

use serde_json::Value;

use crate::kafka_ref::KafkaRef;
use crate::python;
use crate::record::{comparable, state_of_recording};
use crate::server::Server;

/// The lines tests/clients/ck_log_append_time.py prints when the broker
/// stamps each of its three batches with its append time.
fn expected() -> Vec<String> {
    let mut lines: Vec<String> = (0..9)
        .map(|o| format!("delivered {o} log_append"))
        .collect();
    lines.extend((0..9).map(|o| format!("record {o} log_append after_send as_delivered")));
    lines.extend(
        [
            "monotonic yes",
            "batches 3",
            "at t0 0 as_read",
            "at first 0 as_read",
            "at second 3 as_read",
            "at past_last -1 as_read",
        ]
        .map(String::from),
    );
    lines
}

fn lines(out: &str) -> Vec<String> {
    out.lines().map(str::to_string).collect()
}

#[test]
fn a_log_append_time_topic_is_stamped_at_append_and_replays() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    for rules in ["minikafka", "kafka"] {
        stamped_at_append_and_replayed(&py, rules);
    }
}

fn stamped_at_append_and_replayed(py: &std::path::PathBuf, rules: &str) {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("served.jsonl");
    let mut server = Server::start(&["--record", file.to_str().unwrap(), "--rules", rules]);
    let boot = server.bootstrap();
    let got = python::run(py, "ck_log_append_time.py", &[&boot, "lat", "3"]);
    assert_eq!(lines(&got), expected(), "{rules}:\n{got}");
    // kafka-python reads the same batches as LogAppendTime, and finds
    // offset 0 for every time before the appends (wire_lines.py's ASKED,
    // 2020: the records' CreateTimes were older still).
    if let Some(kp) = python::with("kafka") {
        let read = python::run(&kp, "kp_read_back.py", &[&boot, "lat", "9"]);
        let kinds: Vec<&str> = read
            .lines()
            .filter(|l| l.starts_with("record "))
            .map(|l| l.split(' ').nth(4).unwrap_or_default())
            .collect();
        assert_eq!(kinds, ["log_append"; 9], "kafka-python:\n{read}");
        let at: Vec<&str> = read.lines().filter(|l| l.starts_with("at ")).collect();
        assert_eq!(at.len(), 3, "{read}");
        assert!(at.iter().all(|l| l.ends_with(" 0")), "{read}");
    }
    // Any other topic config, or another value, is refused, naming it.
    for config in [
        "remote.storage.enable=true",
        "message.timestamp.type=WallTime",
    ] {
        let refused = python::run(py, "ck_create_topic.py", &[&boot, "x", "1", "1", config]);
        assert_eq!(refused.trim(), "error x INVALID_CONFIG", "{config}");
    }
    server.stop();

    let recorded = std::fs::read_to_string(&file).unwrap();
    let created: Vec<Value> = recorded
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|step| step["action"].get("create_topic").cloned())
        .collect();
    assert_eq!(created.len(), 1, "{recorded}");
    assert_eq!(created[0]["timestamp_type"], "LogAppendTime");
    assert_eq!(
        comparable(&state_of_recording(&file)),
        comparable(&server.state()),
        "the recording replays to the state the server left, stamps included"
    );
}

/// The same script against Apache Kafka 4.4 prints the same lines (where
/// Kafka can be had: see tests/common/kafka_ref.rs).
#[test]
fn apache_kafka_prints_the_same_log_append_time_lines() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let Some(kafka) = KafkaRef::start() else {
        return;
    };
    let theirs = python::run(
        &py,
        "ck_log_append_time.py",
        &[&kafka.bootstrap, "lat", "3"],
    );
    assert_eq!(lines(&theirs), expected(), "Kafka:\n{theirs}");
}
