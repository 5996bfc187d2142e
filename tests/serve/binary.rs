//! Binary keys, values and header values (what applications send first: a
//! Long key, an Avro or Protobuf value behind a schema id) through `serve`:
//! produced by confluent-kafka (idempotent, plain and zstd), kept across a
//! kill -9 and a restart, and read back byte for byte by kafka-python at
//! the offsets they were acknowledged at. Kafka keeps any bytes; so does
//! serve (docs/kafka-protocol.md, "Produce").

use std::collections::BTreeMap;

use crate::python;
use crate::server::Server;

/// `PREFIX OFFSET RECORD` lines: offset -> record.
fn records(out: &str, prefix: &str) -> BTreeMap<i64, String> {
    out.lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .map(|l| {
            let (offset, record) = l.split_once(' ').unwrap();
            (offset.parse().unwrap(), record.to_string())
        })
        .collect()
}

#[test]
fn binary_records_are_kept_byte_for_byte_across_a_kill_9_and_a_restart() {
    let (Some(py), Some(_)) = (python::with("confluent_kafka"), python::with("kafka")) else {
        return;
    };
    let mut server = Server::start_restartable(&["--rules", "kafka"]);
    let boot = server.bootstrap();
    let out = python::run(&py, "ck_create_topic.py", &[&boot, "bin", "1", "3"]);
    assert_eq!(out.trim(), "created bin");
    let out = python::run(&py, "ck_binary.py", &[&boot, "bin", "120", "29"]);
    assert!(!out.contains("failed"), "{out}");
    let acked = records(&out, "acked ");
    assert_eq!(acked.len(), 120, "{out}");
    let not_text = acked
        .values()
        .filter(|r| {
            let value = r.split('|').nth(1).unwrap();
            String::from_utf8(hex(value)).is_err()
        })
        .count();
    assert!(not_text > 100, "most values are not UTF-8: {not_text}");

    server.kill();
    server.restart();
    let out = python::run(&py, "kp_binary_read.py", &[&server.bootstrap(), "bin"]);
    let read = records(&out, "read ");
    let wrong: Vec<_> = acked
        .iter()
        .filter(|(offset, record)| read.get(offset) != Some(record))
        .map(|(offset, _)| offset)
        .collect();
    assert!(
        wrong.is_empty() && read.len() == acked.len(),
        "{} acknowledged, {} read; not read as acknowledged at offsets {wrong:?}",
        acked.len(),
        read.len()
    );

    // The dashboard's state shows the bytes that are not UTF-8 escaped.
    server.stop();
    let shown = server.state().to_string();
    assert!(shown.contains(r"\\x"), "escaped bytes in the state");
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}
