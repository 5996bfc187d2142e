//! A cast ends on exactly the frame `mk-tui render` draws (issue 13, item
//! 11), checked with a third-party terminal emulator: the cast's bytes are
//! played into pyte (`tests/tools/cast_screen.py`) and its final screen is
//! compared with `render --step LAST --format text`, for whole casts and
//! for a cast cut to a chapter, in both languages.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A Python that has pyte: `$MK_TUI_PYTHON`, the project's `.venv`, or
/// `python3` (CI installs pyte into `.venv`; see `.ci/run`).
fn python_with_pyte() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("MK_TUI_PYTHON").map(PathBuf::from),
        Some(root().join(".venv/bin/python")),
        Some(PathBuf::from("python3")),
    ];
    candidates.into_iter().flatten().find(|py| {
        Command::new(py)
            .args(["-c", "import pyte"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

fn mk_tui(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_cast_ends_on_the_frame_render_draws_in_a_real_terminal_emulator() {
    let Some(python) = python_with_pyte() else {
        if std::env::var_os("CI").is_some() {
            panic!("CI installs pyte (.ci/run): it must be importable");
        }
        eprintln!("skipped: no Python with pyte (pip install pyte, or set MK_TUI_PYTHON)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // (recording, --from and --to, size, language)
    type Case = (
        &'static str,
        Option<(&'static str, &'static str)>,
        &'static str,
        &'static str,
    );
    let cases: [Case; 4] = [
        ("recordings/ch08-visibility.jsonl", None, "120x36", "en"),
        ("recordings/ch08-torn-journal.jsonl", None, "160x48", "en"),
        (
            "recordings/ch06-leader-failure.jsonl",
            Some(("2", "4")),
            "100x30",
            "en",
        ),
        ("recordings/ch08-offsets.jsonl", None, "120x36", "zh"),
    ];
    for (rec, range, size, lang) in cases {
        let cast = dir.path().join("out.cast");
        let mut args = vec![
            "export",
            rec,
            "--cast",
            cast.to_str().unwrap(),
            "--size",
            size,
            "--lang",
            lang,
        ];
        if let Some((from, to)) = range {
            args.extend(["--from", from, "--to", to]);
        }
        mk_tui(&args);
        let played = Command::new(&python)
            .arg(root().join("tests/tools/cast_screen.py"))
            .arg(&cast)
            .output()
            .unwrap();
        assert!(
            played.status.success(),
            "{}",
            String::from_utf8_lossy(&played.stderr)
        );
        let screen = String::from_utf8(played.stdout).unwrap();
        let last = match range {
            Some((_, to)) => to.to_string(),
            None => mk_tui(&["check", rec])
                .split('(')
                .nth(1)
                .and_then(|s| s.split_whitespace().next())
                .unwrap()
                .to_string(),
        };
        let frame = mk_tui(&[
            "render", rec, "--step", &last, "--size", size, "--lang", lang,
        ]);
        let lines =
            |t: &str| -> Vec<String> { t.lines().map(|l| l.trim_end().to_string()).collect() };
        assert_eq!(
            lines(&screen),
            lines(&frame),
            "{rec} at {size} ({lang}), step {last}:\npyte:\n{screen}\nrender:\n{frame}"
        );
    }
}
