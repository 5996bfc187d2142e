//! A `mk-tui serve` child process for one test: started on loopback with
//! ports the system picks, stopped with SIGTERM, killed on drop. A server
//! started with [`Server::start_restartable`] can also be killed with
//! SIGKILL, paused (SIGSTOP/SIGCONT) and restarted on the same data
//! directory and ports ([`Server::restart`]). Every wait is bounded.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long the server may take to open its listeners.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long it may take to close after SIGTERM.
const STOP_TIMEOUT: Duration = Duration::from_secs(20);
/// How much of the server's log a failed test prints.
const LOG_TAIL_ON_FAILURE: usize = 200;

pub struct Server {
    child: Option<Child>,
    /// Broker id and port, in broker order.
    pub brokers: Vec<(u32, u16)>,
    pub data_dir: PathBuf,
    log: PathBuf,
    /// The arguments before `--data-dir`, for [`Self::restart`].
    args: Vec<String>,
    _temp: tempfile::TempDir,
}

impl Server {
    /// `mk-tui serve --listen 127.0.0.1:0 --data-dir D EXTRA...`.
    pub fn start(extra: &[&str]) -> Self {
        let temp = tempfile::tempdir().unwrap();
        let data_dir = temp.path().join("data");
        let mut args = vec!["serve", "--listen", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        Self::start_with(temp, data_dir, &args)
    }

    /// Starts the binary with exactly `args` plus `--data-dir`.
    pub fn start_with(temp: tempfile::TempDir, data_dir: PathBuf, args: &[&str]) -> Self {
        let log = temp.path().join("serve.log");
        let mut server = Self {
            child: None,
            brokers: Vec::new(),
            data_dir,
            log,
            args: args.iter().map(|a| a.to_string()).collect(),
            _temp: temp,
        };
        server.spawn();
        server
    }

    /// `mk-tui serve --listen 127.0.0.1:BASE --data-dir D EXTRA...` on
    /// three consecutive free ports, so that [`Self::restart`] can listen
    /// on the same ones again (a few tries: a neighbour may be taken).
    pub fn start_restartable(extra: &[&str]) -> Self {
        Self::start_restartable_in(None, extra)
    }

    /// The same with the data directory at `data_dir` (the log stays in
    /// a temporary directory of its own), or in the temporary directory.
    pub fn start_restartable_in(data_dir: Option<&Path>, extra: &[&str]) -> Self {
        // Below the ephemeral range (32768 and up on Linux), where the
        // outgoing connections of every client of the parallel tests take
        // their ports (the odd ones, next to an even bind(0) port).
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
            ^ std::process::id();
        let mut last = String::from("every base port was taken");
        for attempt in 0..50u32 {
            let base = 20_000 + (seed.wrapping_add(attempt.wrapping_mul(7_919)) % 12_000) as u16;
            if (0..3).any(|n| std::net::TcpListener::bind(("127.0.0.1", base + n)).is_err()) {
                continue;
            }
            let temp = tempfile::tempdir().unwrap();
            let data_dir = data_dir.map_or_else(|| temp.path().join("data"), Path::to_path_buf);
            let listen = format!("127.0.0.1:{base}");
            let mut args = vec!["serve", "--listen", &listen];
            args.extend_from_slice(extra);
            match std::panic::catch_unwind(|| Self::start_with(temp, data_dir, &args)) {
                Ok(server) => return server,
                Err(e) => {
                    last = e
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                }
            }
        }
        panic!("no server started on three consecutive free ports in 50 tries; the last: {last}");
    }

    /// Starts the child (its standard error appended to the log) and waits
    /// for `ready`.
    fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
            .args(&self.args)
            .arg("--data-dir")
            .arg(&self.data_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("mk-tui starts");
        let stdout = child.stdout.take().unwrap();
        self.child = Some(child);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + START_TIMEOUT;
        let mut brokers = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) if line == "ready" => break,
                Ok(line) => {
                    // "broker 1 listening on 127.0.0.1:PORT"
                    let words: Vec<&str> = line.split_whitespace().collect();
                    if let ["broker", id, "listening", "on", addr] = words[..] {
                        let port = addr.rsplit(':').next().unwrap().parse().unwrap();
                        brokers.push((id.parse().unwrap(), port));
                    }
                }
                Err(_) => panic!(
                    "mk-tui serve did not print ready in time; its log:\n{}",
                    self.log()
                ),
            }
        }
        self.brokers = brokers;
    }

    /// Kills the server with SIGKILL (`kill -9`: nothing flushed, nothing
    /// closed) and waits for it to be gone.
    pub fn kill(&mut self) {
        let mut child = self.child.take().expect("running");
        child.kill().unwrap();
        child.wait().unwrap();
    }

    /// Starts the server again on the same data directory, arguments and
    /// ports, after [`Self::kill`] or [`Self::stop`].
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "restart after kill or stop");
        let before = self.brokers.clone();
        self.spawn();
        assert_eq!(self.brokers, before, "restarted on the same ports");
    }

    /// Pauses (SIGSTOP) or resumes (SIGCONT) the server: its connections
    /// stay open and nothing is answered meanwhile.
    pub fn pause(&self, paused: bool) {
        let child = self.child.as_ref().expect("running");
        let signal = if paused { libc::SIGSTOP } else { libc::SIGCONT };
        // SAFETY: kill(2) with the id of our own child and a signal.
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
    }

    /// The bootstrap address: the first broker.
    pub fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.brokers[0].1)
    }

    /// The port of `broker`.
    pub fn port(&self, broker: u32) -> u16 {
        self.brokers.iter().find(|(b, _)| *b == broker).unwrap().1
    }

    /// The server's process id (for /proc: its memory and CPU time).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// What the server logged so far (standard error).
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Sends SIGTERM and waits for a clean exit; returns the log.
    pub fn stop(&mut self) -> String {
        let mut child = self.child.take().expect("running");
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
        let deadline = Instant::now() + STOP_TIMEOUT;
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                // 128 + SIGTERM's 15, after a clean stop.
                assert_eq!(
                    status.code(),
                    Some(143),
                    "serve exited with {status}; log:\n{}",
                    self.log()
                );
                return self.log();
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("serve did not stop after SIGTERM; log:\n{}", self.log());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `mk-tui state --data-dir D` as JSON (after [`Self::stop`]).
    pub fn state(&self) -> serde_json::Value {
        state_of(&self.data_dir)
    }
}

pub fn state_of(dir: &Path) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .args(["state", "--data-dir"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "state failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

impl Drop for Server {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // A failed test shows what the server saw (the harness prints
            // a failed test's captured output).
            let log = self.log();
            let lines: Vec<&str> = log.lines().collect();
            let tail = &lines[lines.len().saturating_sub(LOG_TAIL_ON_FAILURE)..];
            eprintln!(
                "serve's log, its last {} of {} lines:\n{}",
                tail.len(),
                lines.len(),
                tail.join("\n")
            );
        }
        if let Some(mut child) = self.child.take() {
            // SIGKILL ends a paused (SIGSTOP) server too.
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The topic names of a `state` document, in its order, once each.
pub fn topics(state: &serde_json::Value) -> Vec<String> {
    let mut names: Vec<String> = state["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["topic"].as_str().unwrap().to_string())
        .collect();
    names.dedup();
    names
}

/// The partition `topic-partition` of a state.
pub fn partition<'a>(state: &'a serde_json::Value, topic: &str, p: u64) -> &'a serde_json::Value {
    state["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["topic"] == topic && x["partition"] == p)
        .unwrap_or_else(|| panic!("no {topic}-{p} in {state}"))
}
