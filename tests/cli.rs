//! The `mk-tui` binary, as the README runs it. These tests live in their own
//! test binary: they spawn processes, and a process forked while another
//! test holds a data directory's lock would briefly share that lock.

use std::process::Command;

#[test]
fn mk_tui_prints_the_demo_cluster() {
    let out = Command::new(env!("CARGO_BIN_EXE_mk-tui")).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("orders-2: leader 1 (epoch 1)"), "{text}");
    assert!(text.contains("broker 3: LEO"), "{text}");
    assert!(text.contains("out of sync, stopped"), "{text}");
    assert!(
        text.contains("group billing: payments-0 committed at 1"),
        "{text}"
    );
}

#[test]
fn mk_tui_reopens_a_persistent_data_directory_and_reports_recovery() {
    let dir = tempfile::tempdir().unwrap();
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_mk-tui"))
            .arg("--data-dir")
            .arg(dir.path())
            .output()
            .unwrap()
    };
    let first = run();
    assert!(first.status.success());
    let segment = dir
        .path()
        .join("broker-1/orders-0/00000000000000000000.log");
    let mut bytes = std::fs::read(&segment).unwrap();
    bytes.truncate(bytes.len() - 3);
    std::fs::write(&segment, bytes).unwrap();
    let second = run();
    let text = String::from_utf8(second.stdout).unwrap();
    assert!(text.contains("recovery: cut"), "{text}");
    assert!(text.contains("orders-0 on broker 1"), "{text}");
}

#[test]
fn mk_tui_reports_a_locked_or_bad_data_directory_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("metadata.json"), "not json").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .arg("--data-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("mk-tui: corrupt ") && err.contains("metadata.json"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}
