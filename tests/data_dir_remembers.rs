//! Issue 25 item 3: a data directory remembers how it was made. A cluster
//! made under `--rules kafka` with `segment_max_bytes` 300, whose clock
//! reached an hour, reopens by `--data-dir` alone under the same rules and
//! configuration, its clock where it stopped (`cluster.json`,
//! docs/reliability.md "What the data directory remembers"); `--rules`
//! that contradict it are refused naming both, changing nothing.

mod common;

use std::path::Path;
use std::process::Command;

use minikafka::engine::config::Rules;
use minikafka::engine::{IsolationLevel, TopicPartition};
use minikafka::session::recording::Header;
use minikafka::session::{Action, Driver, Outcome};
use serde_json::{Value, json};

const HOUR: u64 = 3_600_000;

/// The tests run one at a time: one forks `mk-tui` while another holds a
/// data directory's lock, and the child shares the lock between its fork
/// and its exec (seen once: a reopen refused as "in use").
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn header() -> Header {
    serde_json::from_value(json!({
        "mk_recording": 1,
        "rules": "kafka",
        "cluster": {
            "brokers": [1, 2, 3],
            "topics": [{"name": "out", "partitions": 1, "replication_factor": 3}],
            "config": {"segment_max_bytes": 300},
        },
    }))
    .unwrap()
}

/// The recording of [`header`]: a record, an hour, an open transaction
/// (the transaction a client abandoned).
fn steps() -> Vec<Value> {
    vec![
        json!({"produce": {"topic": "out", "partition": 0, "value": "before"}}),
        json!({"advance_clock": {"ms": HOUR}}),
        json!({"begin": {"txn": "tx-a"}}),
        json!({"send": {"txn": "tx-a", "topic": "out", "partition": 0, "value": "abandoned"}}),
        json!({"replicate": {}}),
    ]
}

fn act(json: Value) -> Action {
    Action::from_json(&json).unwrap()
}

fn mk_tui(args: &[&str], dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .args(args)
        .arg(dir)
        .output()
        .unwrap()
}

/// `mk-tui state REC --data-dir D` makes the directory.
fn made_by_the_cli() -> (tempfile::TempDir, std::path::PathBuf) {
    let temp = tempfile::tempdir().unwrap();
    let rec = temp.path().join("rec.jsonl");
    let mut lines = vec![serde_json::to_string(&header()).unwrap()];
    lines.extend(
        steps()
            .into_iter()
            .map(|a| json!({"action": a}).to_string()),
    );
    std::fs::write(&rec, lines.join("\n") + "\n").unwrap();
    let data = temp.path().join("data");
    let out = mk_tui(&["state", rec.to_str().unwrap(), "--data-dir"], &data);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (temp, data)
}

fn made_by_a_driver() -> (tempfile::TempDir, std::path::PathBuf) {
    let temp = tempfile::tempdir().unwrap();
    let data = temp.path().join("data");
    let mut driver = Driver::new(&header(), Some(&data)).unwrap();
    for a in steps() {
        assert_eq!(driver.apply(&act(a.clone())), Outcome::Ok, "{a}");
    }
    (temp, data)
}

fn segments(data: &Path) -> usize {
    std::fs::read_dir(data.join("broker-1/out-0"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "log")
        })
        .count()
}

/// Through the binary: `state --data-dir` and the dashboard without a
/// terminal read the directory as it was made (this failed before: rules
/// `minikafka`, clock 0).
#[test]
fn state_and_the_dashboard_reopen_with_the_rules_and_clock_it_was_made_with() {
    let _serial = serial();
    let (_temp, data) = made_by_the_cli();
    let out = mk_tui(&["state", "--data-dir"], &data);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let state: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(state["rules"], "kafka");
    assert_eq!(state["clock_ms"], HOUR);
    let out = mk_tui(&["--data-dir"], &data);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("rules: kafka"), "{text}");
    // A --rules that agrees is fine.
    let out = mk_tui(&["state", "--rules", "kafka", "--data-dir"], &data);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Reopened in place without flags: segments roll at 300 bytes, a new
/// instance of the abandoned transactional id fences the old one (the
/// book's rules refused it), the clock goes on from an hour, so new
/// records are stamped after the old ones, and the abandoned transaction
/// times out 60 s after it began, not an hour later.
#[test]
fn reopened_without_flags_it_keeps_rules_config_and_clock() {
    let _serial = serial();
    let (_temp, data) = made_by_a_driver();
    assert_eq!(segments(&data), 1);
    let mut driver = Driver::open_in_place(&data, None).unwrap();
    assert_eq!(driver.rules(), "kafka");
    assert_eq!(driver.clock_ms(), HOUR);
    assert_eq!(driver.cluster().config().segment_max_bytes, 300);
    assert_eq!(driver.cluster().config().broker_ids, [1, 2, 3]);
    // 59 s on: tx-a (begun at 1 h) still holds the LSO.
    driver.apply(&act(json!({"advance_clock": {"ms": 59_000}})));
    let tp = TopicPartition::new("out", 0);
    let lso = |d: &Driver| d.cluster().last_stable_offset(&tp).unwrap();
    assert_eq!(lso(&driver), 1, "the open transaction holds the LSO");
    driver.apply(&act(json!({"advance_clock": {"ms": 1_000}})));
    assert!(lso(&driver) > 1, "timed out 60 s after it began");
    for i in 0..6 {
        let a = json!({"produce": {"topic": "out", "partition": 0, "value": format!("after-{i}-{}", "x".repeat(60))}});
        assert_eq!(driver.apply(&act(a)), Outcome::Ok);
    }
    assert!(segments(&data) > 1, "segments roll at 300 bytes");
    let b = act(json!({"begin": {"txn": "tx-a"}}));
    assert_eq!(driver.apply(&b), Outcome::Ok, "a new instance of tx-a");
    let stamps: Vec<i64> = driver
        .cluster()
        .fetch(&tp, 0, 100, IsolationLevel::ReadUncommitted)
        .unwrap()
        .iter()
        .map(|r| r.timestamp_ms)
        .collect();
    assert!(stamps.windows(2).all(|w| w[0] <= w[1]), "{stamps:?}");
    assert!(
        *stamps.last().unwrap() >= (HOUR + 60_000) as i64,
        "{stamps:?}"
    );
    // Closed, it keeps the clock where it stopped.
    drop(driver);
    let reopened = Driver::open_in_place(&data, Rules::Kafka).unwrap();
    assert_eq!(reopened.clock_ms(), HOUR + 60_000);
    let file: Value =
        serde_json::from_slice(&std::fs::read(data.join("cluster.json")).unwrap()).unwrap();
    assert_eq!(file["version"], 1);
    assert_eq!(file["rules"], "kafka");
    assert_eq!(file["config"]["segment_max_bytes"], 300);
}

/// `--rules` that contradict the directory are refused in one line that
/// names both, and nothing in the directory changes.
#[test]
fn contradicting_rules_are_refused_naming_both_and_change_nothing() {
    let _serial = serial();
    let (_temp, data) = made_by_a_driver();
    let before = common::dir_snapshot(&data);
    let err = Driver::open_in_place(&data, Rules::Minikafka)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!(
            "--rules minikafka: {0} was made under --rules kafka ({0}/cluster.json); leave --rules out to reopen it as it was made",
            data.display()
        )
    );
    let err = Driver::open_copy(&data, Rules::Minikafka)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("--rules minikafka: "), "{err}");
    assert!(
        err.contains(&format!("{}/cluster.json", data.display())),
        "named as the user's directory, not the copy: {err}"
    );
    assert_eq!(common::dir_snapshot(&data), before);
}

/// A directory an older mk-tui (or the book's code) made has no
/// cluster.json: it opens under the rules given (else the book's), the
/// default configuration and the clock at 0, and gets the file, so the
/// next open needs no flag.
#[test]
fn a_directory_without_the_file_takes_the_flags_and_gets_one() {
    let _serial = serial();
    let (_temp, data) = made_by_a_driver();
    std::fs::remove_file(data.join("cluster.json")).unwrap();
    let driver = Driver::open_in_place(&data, Rules::Kafka).unwrap();
    assert_eq!(driver.clock_ms(), 0);
    assert_eq!(driver.cluster().config().segment_max_bytes, 1 << 20);
    drop(driver);
    let file: Value =
        serde_json::from_slice(&std::fs::read(data.join("cluster.json")).unwrap()).unwrap();
    assert_eq!(file["rules"], "kafka");
    assert_eq!(file["config"]["segment_max_bytes"], 1 << 20);
    assert_eq!(Driver::open_in_place(&data, None).unwrap().rules(), "kafka");
    // A refused open of a directory without the file writes none.
    std::fs::remove_file(data.join("cluster.json")).unwrap();
    std::fs::write(data.join("metadata.json"), "{").unwrap();
    assert!(Driver::open_in_place(&data, None).is_err());
    assert!(!data.join("cluster.json").exists());
}

/// serve's clock is the wall clock's time since an origin the directory
/// keeps: reopened, it owes the time the server was down; a clock already
/// past that stays, and the origin moves instead. Never back.
#[test]
fn serve_resumes_the_clock_from_its_wall_clock_origin() {
    let _serial = serial();
    let (_temp, data) = made_by_a_driver();
    let t0: i64 = 1_800_000_000_000;
    let mut driver = Driver::open_in_place(&data, None).unwrap();
    let (origin, owed) = driver.follow_wall_clock(t0).unwrap();
    assert_eq!((origin, owed), (t0 - HOUR as i64, 0));
    driver.apply(&act(json!({"advance_clock": {"ms": 5_000}})));
    drop(driver);
    // Down for two minutes after five seconds of serving.
    let mut driver = Driver::open_in_place(&data, None).unwrap();
    assert_eq!(driver.clock_ms(), HOUR + 5_000);
    let (again, owed) = driver.follow_wall_clock(t0 + 125_000).unwrap();
    assert_eq!((again, owed), (origin, 120_000));
    drop(driver);
    // A wall clock set back: the engine clock stays, the origin moves.
    let mut driver = Driver::open_in_place(&data, None).unwrap();
    let (moved, owed) = driver.follow_wall_clock(t0).unwrap();
    assert_eq!(owed, 0);
    assert_eq!(moved, t0 - (HOUR + 5_000) as i64);
    let file: Value =
        serde_json::from_slice(&std::fs::read(data.join("cluster.json")).unwrap()).unwrap();
    assert_eq!(file["unix_origin_ms"], moved);
}
