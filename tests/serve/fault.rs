//! The dropped-response fault (issue 14 item 3, the lesson on
//! idempotence): `mk-tui serve --fault drop-produce-response` drops the
//! response of the first Produce and closes its connection; a real
//! idempotent producer (confluent-kafka, kafka-python) retries the batch
//! on a new connection and the sequence check answers the retry with the
//! original offsets. The record is written once, the client's delivery
//! reports carry the original offsets, the log says both, and the
//! recording has the fault's `note` steps and replays to the same state.

use serde_json::Value;

use crate::python;
use crate::record::{comparable, state_of_recording};
use crate::server::{Server, partition};

/// The values of `topic-0`'s batches, in offset order.
fn values(state: &Value, topic: &str) -> Vec<String> {
    partition(state, topic, 0)["batches"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b["records"].as_array().unwrap().clone())
        .map(|r| r["value"].as_str().unwrap().to_string())
        .collect()
}

/// Serves with the fault armed and recorded, runs `script` (an idempotent
/// producer of 5 records v0..v4 to t-0), and checks the server's side:
/// one drop, one duplicate answer, the records once, the notes recorded,
/// the replay equal. Returns the script's output.
fn dropped_then_retried(py: &std::path::PathBuf, script: &str) -> String {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("fault.jsonl");
    let mut server = Server::start(&[
        "--fault",
        "drop-produce-response",
        "--record",
        file.to_str().unwrap(),
    ]);
    let boot = server.bootstrap();
    python::run(py, "ck_create_topic.py", &[&boot, "t", "1", "3"]);
    let printed = python::run(py, script, &[&boot, "t", "5", "v"]);
    println!("{script}:\n{printed}");
    let log = server.stop();
    assert_eq!(
        log.matches("fault armed: the response to the next Produce will be dropped")
            .count(),
        1,
        "{log}"
    );
    let dropped: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("response dropped (fault)"))
        .collect();
    assert_eq!(dropped.len(), 1, "one response dropped:\n{log}");
    assert!(
        dropped[0].contains("Produce v") && dropped[0].contains("t-0 offset 0 (5 record(s)"),
        "the dropped response was the batch's: {}",
        dropped[0]
    );
    assert!(dropped[0].ends_with("connection closed"), "{}", dropped[0]);
    assert_eq!(
        log.matches(
            "t-0: retry of producer 1000 seq 0..4 answered with the original offset 0 (duplicate, nothing appended)"
        )
        .count(),
        1,
        "the retry answered by the sequence check:\n{log}"
    );
    let state = server.state();
    let p = partition(&state, "t", 0);
    assert_eq!(p["log_end_offset"], 5, "no duplicate in the log: {p}");
    assert_eq!(values(&state, "t"), ["v0", "v1", "v2", "v3", "v4"]);
    // Faults are data: the recording says where the fault was armed, which
    // response it dropped and how the retry was answered, in notes that
    // change nothing, so the replay is the state the server left.
    let text = std::fs::read_to_string(&file).unwrap();
    let notes: Vec<Value> = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|s| s["action"].get("note").is_some())
        .collect();
    let said: Vec<&str> = notes
        .iter()
        .map(|n| n["caption"]["en"].as_str().unwrap())
        .collect();
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(said[0].starts_with("fault armed"), "{said:?}");
    assert!(
        said[1].starts_with("fault: response to Produce"),
        "{said:?}"
    );
    // The retry is a `produce` step like the original, with the same
    // identity: the engine's producer state (E7) answered it, so a replay
    // judges it the same way.
    let identities: Vec<String> = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|s| s["action"]["produce"]["wire"].clone())
        .filter(Value::is_object)
        .map(|w| w.to_string())
        .collect();
    assert_eq!(
        identities, [r#"{"base_sequence":0,"epoch":0,"producer_id":1000}"#; 2],
        "the original and its retry"
    );
    assert_eq!(
        comparable(&state_of_recording(&file)),
        comparable(&state),
        "the recording replays to the state the server left"
    );
    printed
}

#[test]
fn a_dropped_produce_response_is_retried_by_confluent_kafka_and_written_once() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let out = dropped_then_retried(&py, "ck_idempotent_retry.py");
    let reports: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with("elapsed_ms"))
        .collect();
    assert_eq!(
        reports,
        [
            "delivered 0",
            "delivered 1",
            "delivered 2",
            "delivered 3",
            "delivered 4"
        ],
        "the delivery reports carry the original offsets:\n{out}"
    );
}

#[test]
fn a_dropped_produce_response_is_retried_by_kafka_python_and_written_once() {
    let Some(py) = python::with("kafka") else {
        return;
    };
    let out = dropped_then_retried(&py, "kp_idempotent_retry.py");
    assert_eq!(
        out.lines().next(),
        Some("offsets 0 1 2 3 4"),
        "the futures carry the original offsets:\n{out}"
    );
}

#[test]
fn an_unknown_fault_is_refused_in_one_line() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .args(["serve", "--listen", "127.0.0.1:0", "--fault", "drop"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown fault \"drop\"") && err.contains("drop-produce-response"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing listened");
}
