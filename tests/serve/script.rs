//! A long-lived Python client of tests/clients/ (the restart scripts,
//! `ck_restart_*.py`): commands on its standard input, one fact a line on
//! its standard output, each line stamped with the time it arrived so a
//! test can tell what happened after a restart. Every wait is bounded;
//! dropping it kills the script, whether the test passed or not.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

pub struct Script {
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<(Instant, String)>,
    /// Every line so far, with the time it arrived.
    pub seen: Vec<(Instant, String)>,
    /// How many of `seen` [`Self::until`] has returned.
    read: usize,
    stderr: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Script {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Script {
    /// Starts tests/clients/`script` with `args` and waits (at most 60 s)
    /// for its `ready` line.
    pub fn start(py: &Path, script: &str, args: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let stderr = dir.path().join("stderr");
        let mut child = Command::new(py)
            .arg(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/clients")
                    .join(script),
            )
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("python starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send((Instant::now(), line)).is_err() {
                    break;
                }
            }
        });
        let mut s = Script {
            name: format!("{script} {}", args.join(" ")),
            child,
            stdin,
            lines,
            seen: Vec::new(),
            read: 0,
            stderr,
            _dir: dir,
        };
        s.until(|l| l == "ready", Duration::from_secs(60));
        s
    }

    /// Sends one command line (nothing if the input is closed).
    pub fn send(&mut self, line: &str) {
        if let Some(stdin) = &mut self.stdin {
            let _ = writeln!(stdin, "{line}").and_then(|_| stdin.flush());
        }
    }

    /// Takes in the lines that arrived so far, without waiting.
    pub fn poll(&mut self) {
        while let Ok(line) = self.lines.try_recv() {
            self.seen.push(line);
        }
    }

    /// The lines after the last call, up to and including the first that
    /// `last` accepts; panics (with everything the script said) after
    /// `timeout`.
    pub fn until(&mut self, last: impl Fn(&str) -> bool, timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(i) = self.seen[self.read..].iter().position(|(_, l)| last(l)) {
                let out = self.seen[self.read..=self.read + i]
                    .iter()
                    .map(|(_, l)| l.clone())
                    .collect();
                self.read += i + 1;
                return out;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(RecvTimeoutError::Timeout) => {
                    self.fail(&format!("nothing ended within {timeout:?}"))
                }
                Err(RecvTimeoutError::Disconnected) => self.fail("the script exited"),
            }
        }
    }

    /// Runs one command and returns its lines up to `ok VERB`.
    pub fn run(&mut self, command: &str, timeout: Duration) -> Vec<String> {
        self.send(command);
        let ok = format!("ok {}", command.split_whitespace().next().unwrap());
        self.until(|l| l == ok, timeout)
    }

    /// Closes its input after `stop`, then waits (within `timeout`) for it
    /// to exit with status 0; every line it said.
    pub fn finish(&mut self, timeout: Duration) -> Vec<String> {
        self.send("stop");
        self.stdin = None;
        let deadline = Instant::now() + timeout;
        loop {
            match self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(line) => self.seen.push(line),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    self.fail(&format!("still running after {timeout:?}"))
                }
            }
        }
        let status = self.child.wait().unwrap();
        if !status.success() {
            self.fail(&format!("exited with {status}"));
        }
        self.all()
    }

    /// Like [`Self::finish`], but never panics: the lines, and how it
    /// ended (`None` if it was still running after `timeout`: its stacks
    /// are then in [`Self::stderr_tail`], and it is killed).
    pub fn stop(&mut self, timeout: Duration) -> (Vec<String>, Option<std::process::ExitStatus>) {
        self.send("stop");
        self.stdin = None;
        let deadline = Instant::now() + timeout;
        loop {
            match self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(line) => self.seen.push(line),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    // SAFETY: kill(2) with the id of our own child.
                    unsafe { libc::kill(self.child.id() as i32, libc::SIGUSR1) };
                    std::thread::sleep(Duration::from_millis(300));
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return (self.all(), None);
                }
            }
        }
        let status = self.child.wait().unwrap();
        (self.all(), Some(status))
    }

    /// The last `n` lines of its standard error.
    pub fn stderr_tail(&self, n: usize) -> String {
        let err = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        let lines: Vec<&str> = err.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    /// Every line so far.
    pub fn all(&self) -> Vec<String> {
        self.seen.iter().map(|(_, l)| l.clone()).collect()
    }

    pub fn fail(&self, what: &str) -> ! {
        // The script's stacks (ck_restart_common.py), if it still runs.
        // SAFETY: kill(2) with the id of our own child and a signal.
        if unsafe { libc::kill(self.child.id() as i32, libc::SIGUSR1) } == 0 {
            std::thread::sleep(Duration::from_millis(300));
        }
        let err = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        let out: Vec<&str> = self.seen.iter().map(|(_, l)| l.as_str()).collect();
        let tail = &out[out.len().saturating_sub(60)..];
        panic!(
            "{}: {what}\nlast lines:\n{}\nstderr:\n{err}",
            self.name,
            tail.join("\n")
        );
    }
}
