#![allow(dead_code)]
//! The book's own Python code as an oracle (issue 16): finding a Python
//! that can run it, and talking to `tests/book/drive_book.py --serve`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

pub mod compare;
pub mod generate;

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The book's `src` folder: `MK_BOOK_SRC`, else `../shared/book/src` beside
/// the repository (CI's layout).
pub fn book_src() -> PathBuf {
    std::env::var_os("MK_BOOK_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("../shared/book/src"))
}

/// `(major, minor)` of a Python interpreter, if it runs.
fn version_of(python: &Path) -> Option<(u32, u32)> {
    let out = Command::new(python)
        .args(["-c", "import sys; print(*sys.version_info[:2])"])
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let mut parts = text.split_whitespace().map(|p| p.parse().ok());
    Some((parts.next()??, parts.next()??))
}

/// A Python 3.12+ (the book's `requires-python`): `MK_BOOK_PYTHON`,
/// `MK_TUI_PYTHON`, `python3.13`/`python3.12`/`python3` on the PATH, or a
/// pyenv installation. `MK_BOOK_ALLOW_PYTHON_311=1` accepts 3.11, on which
/// the book's code also imports and runs (for a machine without 3.12).
pub fn python() -> Result<PathBuf, String> {
    let mut candidates: Vec<PathBuf> = ["MK_BOOK_PYTHON", "MK_TUI_PYTHON"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .collect();
    candidates.extend(["python3.13", "python3.12", "python3"].map(PathBuf::from));
    let pyenv = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pyenv")));
    if let Some(Ok(entries)) = pyenv.map(|home| std::fs::read_dir(home.join("versions"))) {
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path().join("bin/python3"))
            .collect();
        found.sort();
        found.reverse();
        candidates.extend(found);
    }
    let minimum = if std::env::var("MK_BOOK_ALLOW_PYTHON_311").is_ok_and(|v| v == "1") {
        (3, 11)
    } else {
        (3, 12)
    };
    candidates
        .into_iter()
        .find(|p| version_of(p).is_some_and(|v| v >= minimum))
        .ok_or_else(|| {
            format!(
                "no Python {}.{}+ found (set MK_BOOK_PYTHON)",
                minimum.0, minimum.1
            )
        })
}

/// Why the book cannot be driven here, if it cannot. Under `CI=true` a
/// missing book or Python is a failure, not a skip (`.ci/run` provides both).
pub fn unavailable() -> Option<String> {
    let reason = if !book_src().join("minikafka/__init__.py").is_file() {
        Some(format!(
            "the book's code is not at {} (set MK_BOOK_SRC)",
            book_src().display()
        ))
    } else {
        python().err()
    };
    if let Some(reason) = &reason {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "CI=true but the book differential test cannot run: {reason}"
        );
    }
    reason
}

/// One `drive_book.py --serve` process; many recordings run through it.
pub struct Book {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Book {
    pub fn start() -> Self {
        let mut child = Command::new(python().expect("checked by unavailable()"))
            .arg(repo().join("tests/book/drive_book.py"))
            .arg("--serve")
            .env("MK_BOOK_SRC", book_src())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            stdout,
        }
    }

    fn call(&mut self, command: &Value) -> Value {
        writeln!(self.stdin, "{command}").expect("the driver reads");
        self.stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .expect("the driver answers");
        assert!(
            !line.is_empty(),
            "drive_book.py died on {command} (its stderr is above)"
        );
        serde_json::from_str(&line).expect("the driver prints JSON")
    }

    /// Opens a recording's cluster in `dir`: the state at step 0.
    pub fn open(&mut self, header: &Value, dir: &Path) -> Value {
        self.call(&json!({"open": {"header": header, "dir": dir}}))
    }

    /// Applies one action; `adopt` gives mk-tui's HW and ISR to take after
    /// a reopen (decided difference D4).
    pub fn step(&mut self, action: &Value, adopt: Option<&Value>) -> Value {
        self.call(&json!({"step": action, "adopt": adopt}))
    }

    pub fn close(&mut self) {
        self.call(&json!({"close": true}));
    }
}

impl Drop for Book {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
