//! `mk-tui serve --record F` (issue 14): a served session is a normal
//! recording, and its replay without the clients (`mk-tui state F`) is the
//! state the server left (`mk-tui state --data-dir D`).

use std::process::Command;

use serde_json::{Value, json};

use crate::python;
use crate::server::Server;

/// What a replay and a reopened data directory both know of a partition:
/// its leader, epochs, ISR, offsets, batches with their records, and each
/// replica's log end.
pub fn comparable(state: &Value) -> Value {
    let partitions: Vec<Value> = state["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let replicas: Vec<Value> = p["replicas"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| json!([r["broker"], r["log_end_offset"], r["log"]]))
                .collect();
            json!({
                "topic": p["topic"],
                "partition": p["partition"],
                "leader": p["leader"],
                "leader_epoch": p["leader_epoch"],
                "isr": p["isr"],
                "log_start_offset": p["log_start_offset"],
                "high_watermark": p["high_watermark"],
                "last_stable_offset": p["last_stable_offset"],
                "log_end_offset": p["log_end_offset"],
                "batches": p["batches"],
                "replicas": replicas,
            })
        })
        .collect();
    json!({
        "partitions": partitions,
        "committed_offsets": state["committed_offsets"],
        "consumers": state["consumers"],
    })
}

pub fn state_of_recording(file: &std::path::Path) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .arg("state")
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "state {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_served_session_replays_from_its_recording_to_the_state_the_server_left() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("served.jsonl");
    let file_arg = file.to_str().unwrap();
    let mut server = Server::start(&["--record", file_arg, "--auto-replicate", "50"]);
    let boot = server.bootstrap();
    python::run(&py, "ck_create_topic.py", &[&boot, "t", "2", "3"]);
    let acked = python::run(&py, "ck_produce.py", &[&boot, "t", "0", "1", "5", "a"]);
    assert_eq!(acked.matches("delivered").count(), 5, "{acked}");
    let all = python::run(&py, "ck_produce.py", &[&boot, "t", "1", "all", "3", "b"]);
    assert_eq!(all.matches("delivered").count(), 3, "{all}");
    // A read changes nothing, so it records nothing.
    python::run(
        &py,
        "ck_consume.py",
        &[&boot, "t", "0", "read_committed", "5"],
    );
    let log = server.stop();
    assert!(log.contains("recorded in"), "{log}");

    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines[0]["cluster"]["brokers"],
        json!([1, 2, 3]),
        "{}",
        lines[0]
    );
    let count = |name: &str| {
        lines[1..]
            .iter()
            .filter(|s| s["action"].get(name).is_some())
            .count()
    };
    assert_eq!(count("create_topic"), 1, "{text}");
    let produced: usize = lines[1..]
        .iter()
        .filter_map(|s| s["action"].get("produce"))
        .map(|p| p["records"].as_array().map_or(1, Vec::len))
        .sum();
    assert_eq!(
        produced, 8,
        "every record in a step, a client's batch in one: {text}"
    );
    assert!(count("replicate") > 0, "the server's ticks are steps");
    assert!(count("advance_clock") > 0, "real time passing is a step");
    let at: Vec<u64> = lines[1..]
        .iter()
        .map(|s| s["at_ms"].as_u64().unwrap())
        .collect();
    assert!(at.windows(2).all(|w| w[0] <= w[1]), "at_ms never goes back");

    let replayed = state_of_recording(&file);
    let left = server.state();
    assert_eq!(replayed["step"], (lines.len() - 1) as u64);
    let p1 = crate::server::partition(&left, "t", 1);
    assert_eq!(p1["high_watermark"], 3, "{p1}");
    assert_eq!(
        comparable(&replayed),
        comparable(&left),
        "the replay without clients is the state the server left"
    );
    assert_eq!(
        replayed["clock_ms"],
        lines[1..]
            .iter()
            .filter_map(|s| s["action"]["advance_clock"]["ms"].as_u64())
            .sum::<u64>()
    );
}

#[test]
fn a_recording_is_refused_inside_the_data_directory_or_over_a_file() {
    let temp = tempfile::tempdir().unwrap();
    let data = temp.path().join("data");
    let inside = data.join("r.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&data)
        .arg("--record")
        .arg(&inside)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("inside the data directory"), "{err}");
    assert!(!data.exists(), "nothing written");
    assert!(out.stdout.is_empty(), "nothing listened");

    let taken = temp.path().join("taken.jsonl");
    std::fs::write(&taken, "keep me\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .args(["serve", "--listen", "127.0.0.1:0", "--record"])
        .arg(&taken)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("already exists"), "{err}");
    assert_eq!(std::fs::read_to_string(&taken).unwrap(), "keep me\n");
}

#[test]
fn a_recordings_stopped_broker_has_its_listener_closed() {
    let temp = tempfile::tempdir().unwrap();
    let rec = temp.path().join("stop.jsonl");
    std::fs::write(
        &rec,
        concat!(
            r#"{"mk_recording":1,"title":"stop","cluster":{"brokers":[1,2,3],"topics":[{"name":"t","partitions":1,"replication_factor":3}]}}"#,
            "\n",
            r#"{"action":{"stop_broker":{"broker":3}}}"#,
            "\n"
        ),
    )
    .unwrap();
    let mut server = Server::start(&[rec.to_str().unwrap()]);
    assert_eq!(server.brokers.len(), 3, "every broker's port is printed");
    let connect = |port: u16| std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while connect(server.port(3)) {
        assert!(
            std::time::Instant::now() < deadline,
            "broker 3 still listens"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(connect(server.port(1)) && connect(server.port(2)));
    let log = server.stop();
    assert!(log.contains("broker 3: stopped: listener on"), "{log}");
}
