//! The screenshots in docs/images/ (issue 13: "docs updated, with
//! screenshots made from the casts or the renders") are made from
//! `mk-tui render --format ansi`, played into pyte (a third-party terminal
//! emulator) and drawn as SVG by tests/tools/screen_svg.py. This test makes
//! each again and fails when the committed picture is stale, so the docs
//! always show what the dashboard draws today.
//!
//! `MK_UPDATE_SCREENSHOTS=1 cargo test --test screenshots` rewrites them.
//! Without Python and pyte the test is skipped with a printed reason; CI
//! installs them (.ci/run), and there a missing one fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// (file in docs/images, recording, step, size, layout, lang, theme).
const SHOTS: &[(&str, &str, usize, &str, &str, &str, &str)] = &[
    (
        "ch08-visibility-160x48.svg",
        "ch08-visibility",
        6,
        "160x48",
        "transactions",
        "en",
        "dark",
    ),
    (
        "ch08-missing-markers-160x48-zh.svg",
        "ch08-missing-markers",
        10,
        "160x48",
        "default",
        "zh",
        "dark",
    ),
    (
        "ch08-cut-points-160x48.svg",
        "ch08-cut-points",
        5,
        "160x48",
        "crash",
        "en",
        "dark",
    ),
    (
        "ch06-leader-failure-120x36.svg",
        "ch06-leader-failure",
        7,
        "120x36",
        "replication",
        "en",
        "dark",
    ),
    (
        "ch08-offsets-120x36-light.svg",
        "ch08-offsets",
        10,
        "120x36",
        "transactions",
        "en",
        "light",
    ),
];

/// Presentation mode (`render --present`): (file, recording, step, size,
/// lang), in the default layout and dark theme.
const PRESENT_SHOTS: &[(&str, &str, usize, &str, &str)] = &[
    (
        "present-ch08-visibility-160x48.svg",
        "ch08-visibility",
        3,
        "160x48",
        "en",
    ),
    (
        "present-ch06-leader-failure-160x48.svg",
        "ch06-leader-failure",
        7,
        "160x48",
        "en",
    ),
    (
        "present-ch08-visibility-160x48-zh.svg",
        "ch08-visibility",
        3,
        "160x48",
        "zh",
    ),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Python that imports pyte, or `None` after printing why not.
fn python() -> Option<PathBuf> {
    let py = std::env::var_os("MK_TUI_PYTHON")
        .map(PathBuf::from)
        .or_else(|| Some(root().join(".venv/bin/python")).filter(|p| p.exists()));
    let ok = py.as_ref().is_some_and(|py| {
        Command::new(py)
            .args(["-c", "import pyte, wcwidth"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    if ok {
        return py;
    }
    let reason = "no Python with pyte (set MK_TUI_PYTHON or create .venv, see .ci/run)";
    assert!(
        std::env::var("CI").map_or(true, |v| v != "true"),
        "CI installs pyte, yet: {reason}"
    );
    println!("skipped: {reason}");
    None
}

/// `mk-tui render` of `rec` at `step` as ANSI, with `extra` arguments.
fn render(
    rec: &str,
    step: usize,
    size: &str,
    layout: &str,
    lang: &str,
    theme: &str,
    extra: &[&str],
) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .arg("render")
        .arg(root().join("recordings").join(format!("{rec}.jsonl")))
        .args([
            "--step",
            &step.to_string(),
            "--size",
            size,
            "--layout",
            layout,
        ])
        .args(["--lang", lang, "--theme", theme, "--format", "ansi"])
        .args(extra)
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn svg(py: &Path, ansi: &[u8], size: &str, theme: &str) -> String {
    use std::io::Write;
    let (cols, rows) = size.split_once('x').unwrap();
    let mut child = Command::new(py)
        .arg(root().join("tests/tools/screen_svg.py"))
        .args([cols, rows, theme])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(ansi).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_docs_screenshots_are_what_render_draws() {
    let Some(py) = python() else { return };
    let update = std::env::var_os("MK_UPDATE_SCREENSHOTS").is_some();
    let mut stale = Vec::new();
    let presenting = PRESENT_SHOTS.iter().map(|&(file, rec, step, size, lang)| {
        (file, rec, step, size, "default", lang, "dark", true)
    });
    let shots = SHOTS
        .iter()
        .map(|&(file, rec, step, size, layout, lang, theme)| {
            (file, rec, step, size, layout, lang, theme, false)
        })
        .chain(presenting);
    for (file, rec, step, size, layout, lang, theme, present) in shots {
        let extra: &[&str] = if present { &["--present"] } else { &[] };
        let made = svg(
            &py,
            &render(rec, step, size, layout, lang, theme, extra),
            size,
            theme,
        );
        // The picture holds the frame's own words (a check of the tool).
        assert!(made.contains("mk-tui"), "{file}: {made:.200}");
        let path = root().join("docs/images").join(file);
        if update {
            std::fs::write(&path, &made).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(made.as_str()) {
            stale.push(file);
        }
    }
    assert!(
        stale.is_empty(),
        "stale screenshots {stale:?}: run MK_UPDATE_SCREENSHOTS=1 cargo test --test screenshots"
    );
}
