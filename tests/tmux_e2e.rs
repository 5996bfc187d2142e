//! The real dashboard in a real terminal (issue 13, "Done when"): tmux runs
//! `mk-tui replay … --record OUT`; the test steps through the lesson,
//! branches at a step, presses a key that changes the engine, quits, and
//! replays the new recording to the same state and the same screen. Bounded
//! in time; its own tmux server (`-L`), killed at the end. CI installs tmux
//! (`.ci/run`); without it the test says so and skips.

mod common;

use common::tmux::Tmux;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn mk_tui(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
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

/// The panes of a screen: every line but the title bar and the key bar,
/// trailing spaces trimmed.
fn panes(screen: &str) -> Vec<String> {
    let lines: Vec<&str> = screen.lines().collect();
    lines[1..lines.len().saturating_sub(1)]
        .iter()
        .map(|l| l.trim_end().to_string())
        .filter(|l| !l.contains("Chapter 8: the visibility boundary"))
        .collect()
}

#[test]
fn replay_branch_press_record_and_replay_again_in_a_real_terminal() {
    let Some(tmux) = Tmux::new("e2e", "e2e") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("what-if.jsonl");
    let bin = env!("CARGO_BIN_EXE_mk-tui");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lesson = root.join("recordings/ch08-visibility.jsonl");
    let command = format!(
        "{bin} replay {} --record {} --no-mouse",
        lesson.display(),
        out.display()
    );
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "e2e",
        "-x",
        "120",
        "-y",
        "36",
        &command,
    ]);
    // Replaying the lesson: two captioned steps forward.
    tmux.wait_for("step 0/6");
    tmux.keys(&["]", "]"]);
    tmux.wait_for("step 2/6");
    // Branch here, then a key that changes the engine: crash.
    tmux.keys(&["b"]);
    tmux.wait_for("branched at step 2");
    tmux.keys(&["x"]);
    let crashed = tmux.wait_for("step 3: crash");
    assert!(crashed.contains("│ live │ step 3"), "{crashed}");
    tmux.keys(&["q"]);
    let start = Instant::now();
    while tmux.run(&["list-sessions"]).contains("e2e") {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "mk-tui did not quit"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The recording holds the lesson's two steps and the crash.
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(
        text.lines().last().unwrap().contains(r#""crash""#),
        "{text}"
    );
    // Replayed, it reaches the state the live session had, and the screen.
    let state = mk_tui(&["state", out.to_str().unwrap()]);
    let live_state = {
        let mut s = minikafka::session::Snapshot::from_json(&state).unwrap();
        s.title.clear();
        s.total_steps = None;
        s.caption = None;
        s
    };
    assert_eq!(live_state.step, 3);
    assert!(live_state.last_recovery.is_some(), "the crash recovered");
    let replay = format!("{bin} replay {} --no-mouse", out.display());
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "e2e",
        "-x",
        "120",
        "-y",
        "36",
        &replay,
    ]);
    tmux.wait_for("step 0/3");
    tmux.keys(&["End"]);
    tmux.wait_for("step 3");
    let rendered = mk_tui(&[
        "render",
        out.to_str().unwrap(),
        "--step",
        "3",
        "--size",
        "120x36",
    ]);
    // The terminal may still be painting the frame: wait (bounded) until
    // it holds still on the rendered one.
    let start = Instant::now();
    let mut replayed = tmux.screen();
    while panes(&replayed) != panes(&rendered) && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
        replayed = tmux.screen();
    }
    assert_eq!(
        panes(&replayed),
        panes(&rendered),
        "the replayed screen is the rendered frame:\n{replayed}\n{rendered}"
    );
    assert!(replayed.contains("last recovery"), "{replayed}");
    tmux.keys(&["q"]);
}

/// `mk-tui --record` in a 100x30 terminal writes 100x30 as the size the
/// recording reads well at (its header's `terminal`), not the demo
/// recording's 120x36 that the live session starts from (a new user's
/// trial: the cast exported from it was 120x36).
#[test]
fn a_live_recording_keeps_the_size_of_the_terminal_it_was_made_in() {
    let Some(tmux) = Tmux::new("e2e-size", "size") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("live.jsonl");
    let bin = env!("CARGO_BIN_EXE_mk-tui");
    let command = format!("{bin} --record {} --no-mouse", out.display());
    tmux.start(100, 30, &[&command]);
    tmux.wait_for("live");
    tmux.keys(&["q"]);
    tmux.wait_gone(Duration::from_secs(10));
    let text = std::fs::read_to_string(&out).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(
        header["terminal"],
        serde_json::json!({"cols": 100, "rows": 30}),
        "{header}"
    );
}
