//! A log read through a pipe that closes (`serve 2>&1 | tee log`, then
//! Ctrl-C, found trying `serve` as a new user): the server goes on serving
//! and still stops cleanly, writing what it must, instead of panicking at
//! its next log line (exit 101, every connection dropped, the HW
//! checkpoint behind the acknowledged writes).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{lines_with, partition, python, raw, server};

/// Kills the server if the test fails before it stopped it.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_closed_log_pipe_neither_stops_the_server_nor_its_clean_stop() {
    let temp = tempfile::tempdir().unwrap();
    let data = temp.path().join("data");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&data)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader of its log goes away at once.
    drop(child.stderr.take());
    let stdout = child.stdout.take().unwrap();
    let mut child = KillOnDrop(child);
    let mut port = None;
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        if line == "ready" {
            break;
        }
        if let Some(addr) = line.strip_prefix("broker 1 listening on ") {
            port = addr.rsplit(':').next().and_then(|p| p.parse::<u16>().ok());
        }
    }
    let port = port.expect("broker 1 listens");
    // Each request is a log line into the closed pipe; the connection
    // stays and keeps being answered.
    let mut s = raw::connect(port);
    for _ in 0..3 {
        assert_eq!(raw::api_versions(&mut s, 3).error_code, 0);
    }
    let produced = python::with("confluent_kafka").map(|py| {
        let boot = format!("127.0.0.1:{port}");
        python::run(&py, "ck_create_topic.py", &[&boot, "t", "1", "1"]);
        let out = python::run(&py, "ck_produce.py", &[&boot, "t", "0", "1", "4", "v"]);
        assert_eq!(lines_with(&out, "delivered").len(), 4, "{out}");
    });
    let _ = Command::new("kill")
        .args(["-TERM", &child.0.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "serve stops after SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(
        status.code(),
        Some(143),
        "a clean stop (128 + SIGTERM), not a panic: {status}"
    );
    if produced.is_some() {
        let state = server::state_of(&data);
        let p = partition(&state, "t", 0);
        assert_eq!(p["log_end_offset"], 4, "{p}");
        assert_eq!(
            p["high_watermark"], 4,
            "the stop wrote the HW checkpoint: {p}"
        );
    }
}
