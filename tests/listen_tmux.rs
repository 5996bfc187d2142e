//! `mk-tui --listen 127.0.0.1:0` in a real terminal (issue 14): tmux runs
//! the dashboard with the Kafka listeners open and `--record`; a real
//! client (confluent-kafka) reads the port off the clients pane, creates a
//! topic and produces to it; the frame shows the batch, and after `q` the
//! recording replays to the same partitions as the data directory the
//! dashboard left. Its own tmux server, loopback only, bounded in time;
//! skipped with a reason where tmux or the client is missing (CI installs
//! both).

mod common;

use common::tmux::Tmux;
#[path = "serve/python.rs"]
mod python;

use std::time::{Duration, Instant};

fn partition<'a>(state: &'a serde_json::Value, topic: &str) -> &'a serde_json::Value {
    state["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["topic"] == topic)
        .unwrap_or_else(|| panic!("no {topic} in {state}"))
}

#[test]
fn a_real_client_produces_into_the_dashboard_in_a_real_terminal() {
    let Some(tmux) = Tmux::new("listen", "listen") else {
        return;
    };
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (data, file) = (dir.path().join("data"), dir.path().join("live.jsonl"));
    let command = format!(
        "{} --listen 127.0.0.1:0 --no-mouse --data-dir {} --record {}",
        env!("CARGO_BIN_EXE_mk-tui"),
        data.display(),
        file.display()
    );
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "listen",
        "-x",
        "160",
        "-y",
        "45",
        &command,
    ]);
    // The clients pane says where each broker listens.
    let screen = tmux.wait_for("listening: 1 127.0.0.1:");
    let port: u16 = screen
        .split("listening: 1 127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port on the screen:\n{screen}"));
    let boot = format!("127.0.0.1:{port}");
    let out = python::run(&py, "ck_create_topic.py", &[&boot, "lab", "1", "3"]);
    assert_eq!(out.trim(), "created lab");
    let out = python::run(
        &py,
        "ck_produce.py",
        &[&boot, "lab", "0", "1", "2", "hello"],
    );
    assert_eq!(out.matches("delivered").count(), 2, "{out}");
    // The frame shows the client's batches and says who wrote them.
    let screen = tmux.wait_for("lab-0");
    assert!(screen.contains("(Kafka client)"), "{screen}");
    tmux.wait_for("LEO 2");
    tmux.run(&["send-keys", "-t", "listen", "q"]);
    let start = Instant::now();
    while tmux.run(&["list-sessions"]).contains("listen") {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "mk-tui did not quit"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let recorded = common::mk_tui_state(&[file.as_os_str()]);
    let left = common::mk_tui_state(&["--data-dir".as_ref(), data.as_os_str()]);
    let lab = partition(&recorded, "lab");
    assert_eq!(lab["log_end_offset"], 2, "{lab}");
    let values: Vec<&str> = lab["batches"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b["records"].as_array().unwrap().iter())
        .map(|r| r["value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["hello0", "hello1"]);
    for field in [
        "log_end_offset",
        "high_watermark",
        "last_stable_offset",
        "batches",
    ] {
        assert_eq!(lab[field], partition(&left, "lab")[field], "{field}");
    }
}
