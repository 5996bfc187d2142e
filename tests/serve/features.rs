//! The wire features applications use (issue 23 item 4): producer
//! timestamps (CreateTime) kept as sent, record headers kept end to end,
//! and batches compressed with gzip, snappy, lz4 or zstd, written by
//! confluent-kafka and Kafka's Java client and read back by confluent-kafka
//! and kafka-python; the same client script against Apache Kafka 4.4 prints
//! the same lines.

use serde_json::{Value, json};

use crate::kafka_ref::KafkaRef;
use crate::record::{comparable, state_of_recording};
use crate::server::{Server, partition};
use crate::{lines_with, python};

const CODECS: [&str; 5] = ["none", "gzip", "snappy", "lz4", "zstd"];
/// tests/clients/wire_lines.py: codec i writes T0 + 1000 i + j.
const T0: i64 = 1_600_000_000_000;

/// The lines tests/clients/ck_wire_features.py prints for what it sent, if
/// every record comes back as sent: offset, key, value, CreateTime and
/// headers; then the offsets by timestamp, the first offset stamped at or
/// after each time asked, none (-1) past the last.
fn expected_read() -> Vec<String> {
    let mut lines = Vec::new();
    for (i, codec) in CODECS.iter().enumerate() {
        for j in 0..3 {
            let value = format!("{codec}-{j}-{}", "x".repeat(300));
            lines.push(format!(
                "record {} k{i}{j} {}/{} create {} codec={codec},n={j},nil",
                3 * i + j,
                &value[..12],
                value.len(),
                T0 + 1000 * i as i64 + j as i64
            ));
        }
    }
    lines.push(format!("at {T0} 0"));
    lines.push(format!("at {} 6", T0 + 1500));
    lines.push(format!("at {} -1", T0 + 10_000));
    lines.push("future INVALID_TIMESTAMP".into());
    lines
}

fn read_lines(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.starts_with("record ") || l.starts_with("at ") || l.starts_with("future "))
        .map(str::to_string)
        .collect()
}

#[test]
fn timestamps_headers_and_every_compression_come_back_as_sent_to_both_clients() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let Some(kp) = python::with("kafka") else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("served.jsonl");
    let mut server = Server::start(&["--record", file.to_str().unwrap()]);
    let boot = server.bootstrap();
    let ck = python::run(&py, "ck_wire_features.py", &[&boot, "wf", "3"]);
    let delivered: Vec<String> = (0..15).map(|o| format!("delivered {o}")).collect();
    assert_eq!(lines_with(&ck, "delivered"), delivered, "{ck}");
    assert_eq!(read_lines(&ck), expected_read(), "confluent-kafka:\n{ck}");
    let kp_out = python::run(&kp, "kp_read_back.py", &[&boot, "wf", "15"]);
    let mut kp_expected = expected_read();
    kp_expected.pop(); // the `future` line is the producer's
    assert_eq!(read_lines(&kp_out), kp_expected, "kafka-python:\n{kp_out}");
    let log = server.stop();
    // The server's log names each compressed batch's codec: the clients
    // did compress. The batch that starts at each codec's first offset:
    // librdkafka usually sends a codec's 3 records as one batch, but under
    // load its linger can expire after the first (1 then 2 records).
    for codec in &CODECS[1..] {
        let batch = CODECS.iter().position(|c| c == codec).unwrap() * 3;
        let note = format!("wf-0 offset {batch} (");
        let line = log.lines().find(|l| l.contains(&note)).unwrap_or_default();
        assert!(
            line.contains(&format!(", {codec}")),
            "{codec} at offset {batch}:\n{log}"
        );
    }

    // The engine's batches hold the records decompressed, with their
    // timestamps and headers; the recording replays to the same state.
    let state = server.state();
    let batches = partition(&state, "wf", 0)["batches"].as_array().unwrap();
    let first = &batches[0]["records"][0];
    assert_eq!(
        first["headers"],
        json!([["codec", "none"], ["n", "0"], ["nil", null]]),
        "{first}"
    );
    let zstd = batches
        .iter()
        .flat_map(|b| b["records"].as_array().unwrap())
        .find(|r| r["offset"] == 12)
        .unwrap();
    assert_eq!(zstd["headers"][0], json!(["codec", "zstd"]), "{zstd}");
    assert_eq!(
        comparable(&state_of_recording(&file)),
        comparable(&state),
        "the recording replays to the state the server left"
    );
    let recorded = std::fs::read_to_string(&file).unwrap();
    let stamped = recorded
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|step| step["action"]["produce"]["records"].as_array().cloned())
        .flatten()
        .filter(|r| r["timestamp_ms"].as_i64().is_some_and(|t| t >= T0))
        .count();
    assert_eq!(stamped, 15, "each recorded record keeps its CreateTime");
}

/// Kafka's Java client writes two records with headers and CreateTimes
/// 1000 and 1001 in a committed transaction and one in an aborted one,
/// then reads at read_committed: the lines Apache Kafka 4.4 gives
/// (tests/kafka_reference.rs).
#[test]
fn the_java_client_round_trip_keeps_headers_and_create_times() {
    let Some(java) = KafkaRef::java_client() else {
        return;
    };
    for rules in [&[][..], &["--rules", "kafka"][..]] {
        let mut server = Server::start(rules);
        let out = java.run("RoundTrip.java", &[&server.bootstrap(), "rt", "3"]);
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            ["0 k0 v0 1000 h=x0", "1 k1 v1 1001 h=x1", "end 5"],
            "{rules:?}:\n{}",
            server.log()
        );
        server.stop();
    }
}

/// The same client script against Apache Kafka 4.4 prints the same lines
/// as against `mk-tui serve` (where Kafka can be had: see
/// tests/common/kafka_ref.rs).
#[test]
fn apache_kafka_prints_the_same_lines_for_the_same_script() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let Some(kafka) = KafkaRef::start() else {
        return;
    };
    let theirs = python::run(&py, "ck_wire_features.py", &[&kafka.bootstrap, "wf", "3"]);
    let mut server = Server::start(&[]);
    let ours = python::run(
        &py,
        "ck_wire_features.py",
        &[&server.bootstrap(), "wf", "3"],
    );
    server.stop();
    assert_eq!(read_lines(&theirs), expected_read(), "Kafka:\n{theirs}");
    assert_eq!(read_lines(&ours), read_lines(&theirs));
    assert_eq!(
        lines_with(&ours, "delivered"),
        lines_with(&theirs, "delivered")
    );
}
