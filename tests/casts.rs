//! A cast ends on exactly the frame `mk-tui render` draws (issue 13, item
//! 11), checked with a third-party terminal emulator: the cast's bytes are
//! played into pyte (`tests/tools/cast_screen.py`) and its final screen is
//! compared with `render --step LAST --format text`, for whole casts and
//! for a cast cut to a chapter, in both languages. Only the key bar (the
//! last row) differs: a cast names the player's keys, which are the keys
//! a viewer of the cast has. A step that crashed the cluster plays its
//! moment of death (`N✝`) before its recovery, as replay shows it.

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
    for (i, (rec, range, size, lang)) in cases.into_iter().enumerate() {
        // One file each: export refuses to replace a cast.
        let cast = dir.path().join(format!("out-{i}.cast"));
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
        let (screen, bar) = body_and_bar(&screen);
        let (frame, dashboard_bar) = body_and_bar(&frame);
        assert_eq!(
            screen, frame,
            "{rec} at {size} ({lang}), step {last}:\npyte:\n{screen:#?}\nrender:\n{frame:#?}"
        );
        let (space, player_keys) = match lang {
            "zh" => ("空格", ["空格 播放/暂停", "[ ] 上一个/下一个字幕"]),
            _ => ("space", ["space play/pause", "[ ] previous/next caption"]),
        };
        for keys in player_keys {
            assert!(bar.contains(keys), "{rec}: the cast's key bar {bar:?}");
        }
        assert!(
            dashboard_bar.contains(space) && !bar.contains(" q "),
            "{rec}: the dashboard's bar {dashboard_bar:?}, the cast's {bar:?}"
        );
    }
}

/// A screen's rows but the last, trailing spaces trimmed, and the last
/// row (the key bar).
fn body_and_bar(text: &str) -> (Vec<String>, String) {
    let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_string()).collect();
    let bar = lines.pop().unwrap_or_default();
    (lines, bar)
}

#[test]
fn a_cast_shows_a_crash_s_moment_of_death_then_its_recovery() {
    let Some(python) = python_with_pyte() else {
        if std::env::var_os("CI").is_some() {
            panic!("CI installs pyte (.ci/run): it must be importable");
        }
        eprintln!("skipped: no Python with pyte (pip install pyte, or set MK_TUI_PYTHON)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cast = dir.path().join("torn.cast");
    let rec = "recordings/ch08-torn-journal.jsonl";
    mk_tui(&[
        "export",
        rec,
        "--cast",
        cast.to_str().unwrap(),
        "--size",
        "160x48",
    ]);
    // Step 5 tears the journal and restarts: its marker's time is the
    // moment; the next frame of the cast, before step 6, the recovery.
    let text = std::fs::read_to_string(&cast).unwrap();
    let events: Vec<serde_json::Value> = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let time_of_marker = |prefix: &str| {
        events
            .iter()
            .find(|e| e[1] == "m" && e[2].as_str().unwrap().starts_with(prefix))
            .unwrap_or_else(|| panic!("no marker {prefix:?}"))[0]
            .as_f64()
            .unwrap()
    };
    let (moment, next) = (time_of_marker("step 5:"), time_of_marker("step 6:"));
    let frames_between: Vec<f64> = events
        .iter()
        .filter(|e| e[1] == "o")
        .map(|e| e[0].as_f64().unwrap())
        .filter(|t| *t > moment && *t < next)
        .collect();
    assert_eq!(
        frames_between.len(),
        1,
        "the recovery, once: {frames_between:?}"
    );
    let screen_at = |t: f64| {
        let out = Command::new(&python)
            .arg(root().join("tests/tools/cast_screen.py"))
            .arg(&cast)
            .args(["--until", &t.to_string()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let at_moment = screen_at(moment);
    let title = at_moment.lines().next().unwrap();
    assert!(
        title.contains("✝ moment of death") && title.contains("step 5✝/9"),
        "{title}"
    );
    let recovered = screen_at(frames_between[0]);
    let title = recovered.lines().next().unwrap();
    assert!(title.contains("step 5+/9"), "{title}");
    // The recovery is the frame `render --step 5` draws, but for the bar.
    let frame = mk_tui(&["render", rec, "--step", "5", "--size", "160x48"]);
    assert_eq!(body_and_bar(&recovered).0, body_and_bar(&frame).0);
}

/// The cast's markers: (step, label) in order.
fn markers(cast: &Path) -> Vec<(usize, String)> {
    std::fs::read_to_string(cast)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e[1] == "m")
        .map(|e| {
            let label = e[2].as_str().unwrap().to_string();
            let step = label
                .strip_prefix("step ")
                .and_then(|r| r.split(':').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            (step, label)
        })
        .collect()
}

/// A cast that starts at step n opens on the caption the screen shows at
/// step n (the last one at or before it), as a whole cast's markers name
/// it, not on the recording's title.
#[test]
fn a_cast_from_a_later_step_opens_on_the_caption_shown_there() {
    let dir = tempfile::tempdir().unwrap();
    let rec = "recordings/ch08-visibility.jsonl";
    let whole = dir.path().join("whole.cast");
    mk_tui(&["export", rec, "--cast", whole.to_str().unwrap()]);
    let all = markers(&whole);
    let captioned: Vec<usize> = all.iter().map(|(s, _)| *s).filter(|s| *s > 0).collect();
    assert!(captioned.len() >= 2, "{all:?}");
    // A step past the second caption (the title is the step-0 marker's).
    let from = captioned[1] + 1;
    let to = from + 1;
    let part = dir.path().join("part.cast");
    mk_tui(&[
        "export",
        rec,
        "--cast",
        part.to_str().unwrap(),
        "--from",
        &from.to_string(),
        "--to",
        &to.to_string(),
    ]);
    let (_, shown) = all.iter().rev().find(|(s, _)| *s <= from).unwrap();
    let caption = shown.split_once(": ").unwrap().1;
    assert_eq!(
        markers(&part)[0],
        (from, format!("step {from}: {caption}")),
        "whole cast's markers: {all:?}"
    );
}
