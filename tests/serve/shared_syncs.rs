//! `mk-tui serve --rules kafka` shares the journal's `fdatasync` between
//! the requests its driver thread handled together (issue 29 item 3,
//! `src/kafka/held.rs`): several transactional confluent-kafka producers
//! run at once, each in its own process (tests/clients/ck_restart_txn.py);
//! every transaction one was told committed is read back at
//! read_committed, none told aborted is, none is half visible, and the
//! server's count of syncs (its log line at stop) is below its count of
//! frames, where one sync per frame was the rule before. A `kill -9` while
//! they run keeps the same promises after the restart.

use std::time::Duration;

use crate::python;
use crate::restart_promises::{
    MINUTE, attempts, fatal, read_all, read_to_end, tail, transaction_problems,
};
use crate::script::Script;
use crate::server::Server;

const PRODUCERS: usize = 4;
const TRANSACTIONS: usize = 20;

/// `PRODUCERS` transactional producers, `T0`..: each is sent its
/// `TRANSACTIONS` transactions `p{j}k{k}` (2 records each to `t-0`) at
/// once; they run side by side.
/// Every script is started (and ready) before any is sent its work, so
/// that they overlap.
fn start_producers(py: &std::path::Path, boot: &str) -> Vec<Script> {
    let mut producers: Vec<Script> = (0..PRODUCERS)
        .map(|j| Script::start(py, "ck_restart_txn.py", &[boot, &format!("T{j}")]))
        .collect();
    for (j, p) in producers.iter_mut().enumerate() {
        for k in 0..TRANSACTIONS {
            p.send(&format!("txn p{j}k{k} 2 t"));
        }
    }
    producers
}

/// Waits for every producer's `ok txn` lines (one per transaction).
fn await_producers(producers: &mut [Script], bound: Duration) -> Vec<String> {
    let mut lines = Vec::new();
    for p in producers.iter_mut() {
        while p.all().iter().filter(|l| *l == "ok txn").count() < TRANSACTIONS {
            p.until(|l| l == "ok txn", bound);
        }
        lines.extend(p.all());
    }
    lines
}

/// The `journal group commit: F frames written, S fdatasync` line of a
/// stopped server's log.
fn frames_and_syncs(log: &str) -> (u64, u64) {
    let line = log
        .lines()
        .find_map(|l| l.split_once("journal group commit: ").map(|(_, r)| r))
        .unwrap_or_else(|| {
            panic!(
                "no journal group commit line in the log:\n{}",
                tail(log, 20)
            )
        });
    let words: Vec<&str> = line.split(' ').collect();
    (words[0].parse().unwrap(), words[3].parse().unwrap())
}

#[test]
fn concurrent_transactions_share_journal_syncs_and_every_commit_is_read_back() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut server = Server::start(&["--rules", "kafka", "--auto-replicate", "5"]);
    let boot = server.bootstrap();
    python::run(&py, "ck_create_topic.py", &[&boot, "t", "1", "1"]);
    let mut producers = start_producers(&py, &boot);
    let lines = await_producers(&mut producers, MINUTE);
    let read = read_all(&py, &boot, "read_committed", &[("t", 1)]);
    let seen = attempts(&read);
    let mut problems = transaction_problems(&lines, &seen);
    let committed = lines.iter().filter(|l| l.starts_with("committed ")).count();
    if committed != PRODUCERS * TRANSACTIONS {
        problems.push(format!(
            "{committed} of {} transactions committed",
            PRODUCERS * TRANSACTIONS
        ));
    }
    let fatal = fatal(&lines);
    if !fatal.is_empty() {
        problems.push(format!("fatal errors {fatal:?}"));
    }
    let log = server.stop();
    let (frames, syncs) = frames_and_syncs(&log);
    println!(
        "{PRODUCERS} producers, {committed} transactions: {frames} journal frames, {syncs} fdatasync ({:.2} per transaction)",
        syncs as f64 / committed.max(1) as f64
    );
    // Each transaction writes at least a begin, a send, PREPARE_COMMIT and
    // COMPLETE_COMMIT; one sync per frame (the driver waiting for each
    // request's own sync) would make them equal.
    assert!(
        frames >= 4 * committed as u64,
        "{frames} frames for {committed} transactions"
    );
    assert!(
        syncs < frames,
        "{syncs} fdatasync for {frames} frames: not shared"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn concurrent_transactions_keep_their_promises_across_a_kill() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut server = Server::start_restartable(&["--rules", "kafka", "--auto-replicate", "5"]);
    let boot = server.bootstrap();
    python::run(&py, "ck_create_topic.py", &[&boot, "t", "1", "1"]);
    let mut producers = start_producers(&py, &boot);
    // Kill while they run: once the first producer has committed a few.
    producers[0].until(|l| l == "committed p0k2 1", MINUTE);
    server.kill();
    server.restart();
    let lines = await_producers(&mut producers, Duration::from_secs(240));
    let (read, unended) = read_to_end(&py, &boot, "read_committed", &[("t", 1)]);
    let seen = attempts(&read);
    let mut problems = transaction_problems(&lines, &seen);
    if !unended.is_empty() {
        problems.push(format!(
            "read_committed did not reach the end of {unended:?}"
        ));
    }
    let committed = lines.iter().filter(|l| l.starts_with("committed ")).count();
    println!(
        "after a kill: {committed} of {} transactions told committed, {} visible",
        PRODUCERS * TRANSACTIONS,
        seen.len()
    );
    assert!(committed > 0, "nothing committed:\n{}", lines.join("\n"));
    assert!(
        problems.is_empty(),
        "{}\nlog:\n{}",
        problems.join("\n"),
        tail(&server.log(), 25)
    );
}
