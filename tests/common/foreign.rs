//! What the tests of `mk-tui observe` against foreign brokers share
//! (tests/observe_foreign.rs, observe_foreign_tansu.rs): the Python driver
//! of the broker ([`LineDriver`]: tests/clients/ck_mock_cluster.py,
//! ck_foreign_broker.py; its standard input takes one command a line, its
//! standard output answers with lines ending `ok VERB` or `failed …`; every
//! wait is bounded, and dropping it kills the driver and with it the
//! broker, whether the test passed or not), and reading the observer's
//! state of topic `t`.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long one driver command may take (a transaction's round trips on
/// loopback take milliseconds; a consumer waits at most 20 s itself).
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

pub struct LineDriver {
    /// The script's name, for failures.
    name: &'static str,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr: PathBuf,
    /// A log whose last lines a failure shows too (the broker's own).
    log: Option<PathBuf>,
    /// The address the driver printed as `boot ADDRESS` before `ready`.
    pub boot: String,
    _dir: tempfile::TempDir,
}

impl Drop for LineDriver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl LineDriver {
    /// Starts `command` (its standard error to a file in `dir`) and waits
    /// for its `boot ADDRESS` and `ready` lines.
    pub fn start(
        name: &'static str,
        mut command: Command,
        dir: tempfile::TempDir,
        log: Option<PathBuf>,
    ) -> Self {
        let stderr = dir.path().join("stderr");
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("the driver starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut driver = LineDriver {
            name,
            child,
            stdin,
            lines,
            stderr,
            log,
            boot: String::new(),
            _dir: dir,
        };
        let out = driver.until("ready");
        driver.boot = out
            .iter()
            .find_map(|l| l.strip_prefix("boot "))
            .unwrap_or_else(|| panic!("{name} prints its brokers: {out:?}"))
            .to_string();
        driver
    }

    /// The lines up to `last` (not included), within [`COMMAND_TIMEOUT`].
    pub fn until(&mut self, last: &str) -> Vec<String> {
        let deadline = Instant::now() + COMMAND_TIMEOUT;
        let mut out = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line == last => return out,
                Ok(line) if line.starts_with("failed") => self.fail(&line, &out),
                Ok(line) => out.push(line),
                Err(RecvTimeoutError::Timeout) => self.fail(&format!("no {last:?}"), &out),
                Err(RecvTimeoutError::Disconnected) => {
                    self.fail(&format!("the driver exited before {last:?}"), &out)
                }
            }
        }
    }

    fn fail(&self, what: &str, out: &[String]) -> ! {
        let err = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        let log = match &self.log {
            Some(path) => {
                let log = std::fs::read_to_string(path).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(40).collect();
                format!(
                    "\nbroker log (last lines, newest first):\n{}",
                    tail.join("\n")
                )
            }
            None => String::new(),
        };
        panic!("{}: {what}\nout: {out:?}\nerr:\n{err}{log}", self.name);
    }

    /// Runs one driver command; its lines.
    pub fn run(&mut self, command: &str) -> Vec<String> {
        writeln!(self.stdin, "{command}").unwrap();
        self.stdin.flush().unwrap();
        let verb = command.split_whitespace().next().unwrap();
        self.until(&format!("ok {verb}"))
    }

    /// The offsets a command's records were delivered at.
    pub fn delivered(&mut self, command: &str) -> Vec<i64> {
        self.run(command)
            .iter()
            .filter_map(|l| l.strip_prefix("delivered "))
            .map(|o| o.parse().unwrap())
            .collect()
    }
}

pub fn mk_tui(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .args(args)
        .output()
        .expect("mk-tui runs")
}

/// `mk-tui observe --bootstrap B --state EXTRA…` as JSON.
pub fn observe(boot: &str, extra: &[&str]) -> Value {
    let mut args = vec!["observe", "--bootstrap", boot, "--state"];
    args.extend(extra);
    let out = mk_tui(&args);
    assert!(
        out.status.success(),
        "observe {extra:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Partition t-0 of an observed state.
pub fn t0(state: &Value) -> &Value {
    state["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["topic"] == "t" && p["partition"] == 0)
        .unwrap_or_else(|| panic!("t-0 observed: {state}"))
}

pub fn unavailable(state: &Value) -> Vec<&str> {
    state["unavailable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

/// The batch of t-0 at `base`.
pub fn batch(state: &Value, base: i64) -> &Value {
    t0(state)["batches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["base_offset"] == base)
        .unwrap_or_else(|| panic!("a batch at {base}: {}", t0(state)))
}
