//! The live observer in a real terminal (issue 15 item 3; docs/observe.md
//! "Live"): a broker that accepts connections and never answers holds the
//! refresh for its full 10 s, yet `q` quits at once and the terminal is
//! restored, because the refreshes run off the drawing thread. Its own
//! tmux server, killed at the end; skipped (saying so) without tmux.

mod common;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::tmux::Tmux;

#[test]
fn a_silent_broker_never_holds_the_keys_and_quitting_restores_the_terminal() {
    let Some(tmux) = Tmux::new("observe", "observe") else {
        return;
    };
    // Accepts, reads nothing, answers nothing; holds the connections.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept() {
            held.push(s);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("obs.jsonl");
    let command = format!(
        "{} observe --bootstrap {address} --record {} --no-mouse; echo EXIT $?; sleep 60",
        env!("CARGO_BIN_EXE_mk-tui"),
        record.display()
    );
    tmux.start(120, 36, &["sh", "-c", &command]);
    let screen = tmux.wait_for("refresh 1: asking the cluster");
    assert!(screen.contains("│ observed │ step 0"), "{screen}");
    assert!(screen.contains("r refresh"), "{screen}");
    // Keys still work while the refresh waits on the broker.
    tmux.keys(&["?"]);
    tmux.wait_for("refresh now");
    // `?` closes it (an Escape followed at once by `r` would read as Alt-r).
    tmux.keys(&["?"]);
    let closed = Instant::now();
    while tmux.screen().contains("refresh now") {
        assert!(
            closed.elapsed() < Duration::from_secs(10),
            "the help stayed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    tmux.keys(&["r"]);
    tmux.wait_for("refresh 1: asking the cluster");
    let quit = Instant::now();
    tmux.keys(&["q"]);
    let after = tmux.wait_for("EXIT 0");
    assert!(
        quit.elapsed() < Duration::from_secs(5),
        "quitting took {:?}",
        quit.elapsed()
    );
    assert_eq!(tmux.display("#{alternate_on}").trim(), "0", "{after}");
    // No refresh ended: the recording is its header alone, and reads.
    let text = std::fs::read_to_string(&record).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("\"mk_observation\":1"), "{text}");
}
