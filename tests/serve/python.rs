//! The real Python clients of tests/clients/: found at `$MK_TUI_PYTHON`
//! or `.venv/bin/python`; a test whose client cannot be imported is skipped
//! with a printed reason (CI installs every client, so CI skips none).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one client script may run.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(90);

fn python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MK_TUI_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    venv.exists().then_some(venv)
}

/// Under CI every client is installed, so a missing one fails the test.
fn skip(reason: String) -> Option<PathBuf> {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI installs every client (.ci/run), yet {reason}");
    }
    println!("skipped: {reason}");
    None
}

/// The Python that can import `module`, or `None` after printing why not.
pub fn with(module: &str) -> Option<PathBuf> {
    let Some(py) = python() else {
        return skip(
            "no Python client environment (set MK_TUI_PYTHON or create .venv, see .ci/run)".into(),
        );
    };
    let ok = Command::new(&py)
        .args(["-c", &format!("import {module}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        return skip(format!("{} cannot import {module}", py.display()));
    }
    Some(py)
}

/// Runs tests/clients/`script` with `args`; returns its standard output.
/// Panics (with its error output) if it fails or outlives the timeout.
pub fn run(py: &PathBuf, script: &str, args: &[&str]) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients")
        .join(script);
    let dir = tempfile::tempdir().unwrap();
    let (out_path, err_path) = (dir.path().join("out"), dir.path().join("err"));
    let mut child = Command::new(py)
        .arg(&path)
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + SCRIPT_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{script} {args:?} ran past {SCRIPT_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = std::fs::read_to_string(&out_path).unwrap();
    let err = std::fs::read_to_string(&err_path).unwrap();
    assert!(
        status.success(),
        "{script} {args:?} failed ({status}):\n{out}\n{err}"
    );
    out
}
