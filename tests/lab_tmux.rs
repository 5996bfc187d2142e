//! Chapter 8 live exactly as written, in a real terminal: tmux runs
//! `mk-tui lab ch08` (one broker, topic `out` with one partition and one
//! replica, nothing else), the test types the keystrokes docs/lectures.md
//! lists beside the chapter's code lines, and reads the chapter's four
//! measured lines off the Consumers pane. No `r`: with one replica every
//! acks=all write is acknowledged at once, as in the chapter. Its own
//! tmux server (`-L`), every wait bounded, killed at the end; skipped with
//! a reason where tmux is missing (CI installs it).

mod common;

use common::tmux::Tmux;

/// The values a fresh consumer of `out-0` reads at each isolation level,
/// as the Consumers pane shows them: the row under `out-0 (n)`, split at
/// the `read_committed` column; `-` is nothing.
fn reads(screen: &str) -> (Vec<String>, Vec<String>) {
    let lines: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let find = |line: &[char], word: &str| {
        let w: Vec<char> = word.chars().collect();
        line.windows(w.len()).position(|x| x == w.as_slice())
    };
    // The pane's head row starts at its border (the Log's legend names
    // the two levels too).
    let (head, ru_col) = lines
        .iter()
        .enumerate()
        .find_map(|(i, l)| find(l, "│read_uncommitted ").map(|c| (i, c + 1)))
        .unwrap_or_else(|| panic!("no Consumers pane on the screen:\n{screen}"));
    let rc_col = find(&lines[head], "read_committed").expect("read_committed column");
    let end = lines[head][rc_col..]
        .iter()
        .position(|&c| c == '│')
        .map_or(lines[head].len(), |p| rc_col + p);
    let at = lines[head + 1..]
        .iter()
        .position(|l| find(&l[ru_col..], "out-0 (").is_some())
        .map(|p| head + 2 + p)
        .unwrap_or_else(|| panic!("no out-0 in the Consumers pane:\n{screen}"));
    let cut = |from: usize, to: usize| -> Vec<String> {
        let text: String = lines[at][from..to.min(lines[at].len())].iter().collect();
        text.split_whitespace()
            .filter(|w| *w != "-")
            .map(str::to_string)
            .collect()
    };
    (cut(ru_col, rc_col), cut(rc_col, end))
}

#[test]
fn chapter_8_live_as_written_in_a_real_terminal() {
    let Some(tmux) = Tmux::new("lab", "lab") else {
        return;
    };
    // Recorded as a lecturer would (`lab ch08 --record FILE`, a new
    // user's trial found it refused): the recording must replay to the
    // chapter's output.
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("ch08-live.jsonl");
    tmux.start(
        120,
        36,
        &[&format!(
            "{} lab ch08 --no-mouse --record {}",
            env!("CARGO_BIN_EXE_mk-tui"),
            rec.display()
        )],
    );
    let screen = tmux.wait_for("Chapter 8 live: out has 1 partition, 1 replica");
    assert!(
        screen.contains("out-0 leader 1 e0 HW 0 LSO 0 LEO 0"),
        "{screen}"
    );
    assert_eq!(reads(&screen), (vec![], vec![]), "nothing on out at step 0");
    // tx = await cluster.transactions.begin("tx-1")
    tmux.keys(&["b", "Enter"]);
    tmux.wait_for("step 1: begin: ok");
    // await tx.send("out", value=b"pending")
    tmux.keys(&["s", "C-w", "pending", "Enter"]);
    let screen = tmux.wait_for("step 2: send: ok");
    let (ru, rc) = reads(&screen);
    assert_eq!(
        ru,
        ["pending"],
        "before marker, read_uncommitted:\n{screen}"
    );
    assert!(rc.is_empty(), "before marker, read_committed:\n{screen}");
    // await tx.commit()
    tmux.keys(&["c", "Enter"]);
    let screen = tmux.wait_for("step 3: commit: ok");
    assert_eq!(
        reads(&screen).1,
        ["pending"],
        "after commit marker:\n{screen}"
    );
    // tx2 = begin("tx-2"); await tx2.send("out", value=b"discard-me")
    tmux.keys(&["b", "Enter"]);
    tmux.wait_for("step 4: begin: ok");
    tmux.keys(&["s", "C-w", "discard-me", "Enter"]);
    tmux.wait_for("step 5: send: ok");
    // await tx2.abort()
    tmux.keys(&["a", "Enter"]);
    let screen = tmux.wait_for("step 6: abort: ok");
    let (ru, rc) = reads(&screen);
    assert_eq!(rc, ["pending"], "after abort marker:\n{screen}");
    assert_eq!(
        ru,
        ["pending", "discard-me"],
        "the aborted write stays in the log:\n{screen}"
    );
    assert!(screen.contains("◆ABORT"), "the ABORT marker:\n{screen}");
    tmux.keys(&["q"]);
    tmux.wait_gone(std::time::Duration::from_secs(30));
    // The recording replays: `state` at its last step reads the chapter's
    // output, and each step kept the guide's caption.
    let state = common::mk_tui_state(&[rec.as_os_str()]);
    assert_eq!(state["step"], 6, "six steps recorded");
    assert_eq!(
        state["consumers"]["read_committed"]["out-0"],
        serde_json::json!(["pending"])
    );
    assert_eq!(
        state["consumers"]["read_uncommitted"]["out-0"],
        serde_json::json!(["pending", "discard-me"])
    );
    let caption = state["caption"]["en"].as_str().unwrap_or_default();
    assert!(caption.contains("6 of 6 done"), "{state}");
}
