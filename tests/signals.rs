//! Signals sent to the live dashboard (issue 17 items 7 and 9): SIGTERM,
//! SIGHUP, SIGINT and SIGQUIT each restore the terminal (cooked mode, the
//! main screen, the cursor shown), keep the recording whole, remove the
//! demo's temporary data directory and exit with 128 + the signal's
//! number. A real dashboard runs in tmux (a test server of its own, `-L`),
//! bounded in time; CI installs tmux, elsewhere the test skips without it.

mod common;

use common::tmux::Tmux;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// The pid of the process whose command line contains `needle`.
fn pid_of(needle: &str) -> u32 {
    let start = Instant::now();
    loop {
        let out = Command::new("pgrep").args(["-f", needle]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        // The shell that runs it has the needle too; the dashboard is the
        // newest.
        if let Some(pid) = text.lines().filter_map(|l| l.trim().parse().ok()).max() {
            return pid;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "no {needle}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn signalled(name: &str, number: i32) {
    let Some(tmux) = Tmux::new(&format!("sig-{name}"), "sig") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let record = tmp.path().join(format!("session-{name}.jsonl"));
    let bin = env!("CARGO_BIN_EXE_mk-tui");
    // The shell reports the exit code and the terminal's mode afterwards.
    let script = format!(
        "TMPDIR={tmp} {bin} --no-mouse --record {rec}; echo \"exit=$?\"; stty -a | tr ' ' '\\n' | grep -x -e icanon -e -icanon -e echo -e -echo | tr '\\n' ' '; echo modes-end; sleep 60",
        tmp = tmp.path().display(),
        rec = record.display()
    );
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "sig",
        "-x",
        "120",
        "-y",
        "36",
        "sh",
        "-c",
        &script,
    ]);
    tmux.wait_for("│ live │");
    // One step of the session's own, so the recording has one to keep.
    tmux.run(&["send-keys", "-t", "sig", "r"]);
    tmux.wait_for("replicate: ok");
    let private: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("mk-tui-"))
        .collect();
    assert_eq!(private.len(), 1, "the demo's data directory: {private:?}");
    let pid = pid_of(&record.display().to_string());
    Command::new("kill")
        .args([format!("-{name}"), pid.to_string()])
        .status()
        .unwrap();
    let screen = tmux.wait_for("modes-end");
    assert!(
        screen.contains(&format!("exit={}", 128 + number)),
        "{name}: {screen}"
    );
    // Cooked mode again: canonical input and echo on.
    assert!(
        screen.contains(" icanon") || screen.contains("icanon echo"),
        "{name}: {screen}"
    );
    assert!(
        !screen.contains("-icanon") && !screen.contains("-echo"),
        "{name}: {screen}"
    );
    let flags = tmux.run(&[
        "display-message",
        "-p",
        "-t",
        "sig",
        "#{alternate_on} #{cursor_flag}",
    ]);
    assert_eq!(flags.trim(), "0 1", "{name}: main screen, cursor shown");
    // The demo's temporary data directory is gone; the recording is whole:
    // the demo's steps and the `r`, each a line that reads back.
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("mk-tui-"))
        .collect();
    assert!(left.is_empty(), "{name}: left behind {left:?}");
    let recording = minikafka::session::Recording::load(Path::new(&record)).unwrap();
    let demo = minikafka::demo::recording();
    assert_eq!(recording.steps.len(), demo.steps.len() + 1, "{name}");
    assert_eq!(
        serde_json::to_string(&recording.steps.last().unwrap().action).unwrap(),
        r#"{"replicate":{}}"#
    );
}

#[test]
fn sigterm_restores_the_terminal_and_cleans_up() {
    signalled("TERM", 15);
}

#[test]
fn sighup_restores_the_terminal_and_cleans_up() {
    signalled("HUP", 1);
}

#[test]
fn sigint_restores_the_terminal_and_cleans_up() {
    signalled("INT", 2);
}

#[test]
fn sigquit_restores_the_terminal_and_cleans_up() {
    signalled("QUIT", 3);
}

/// `mk-tui serve` (issue 25): each signal stops it cleanly (the cluster
/// closed, its data directory readable, the temporary directories gone)
/// and it exits with 128 + the signal's number, as every other command
/// does; it exited 0 before.
fn serve_signalled(name: &str, number: i32) {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&data)
        .env("TMPDIR", tmp.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    for line in stdout.lines() {
        if line.unwrap() == "ready" {
            break;
        }
    }
    Command::new("kill")
        .args([format!("-{name}"), child.id().to_string()])
        .status()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{name}: still running"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut log = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut log).unwrap();
    assert_eq!(status.code(), Some(128 + number), "{name}: {log}");
    assert!(
        log.contains(": closing") && log.contains("stopped after"),
        "{name}: {log}"
    );
    let state = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .args(["state", "--data-dir"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        state.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&state.stderr)
    );
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("mk-tui-"))
        .collect();
    assert!(left.is_empty(), "{name}: left behind {left:?}");
}

#[test]
fn serve_exits_143_after_sigterm_130_after_sigint_129_after_sighup() {
    serve_signalled("TERM", 15);
    serve_signalled("INT", 2);
    serve_signalled("HUP", 1);
    serve_signalled("QUIT", 3);
}
