//! Issue 29 item 5: growth stays linear in steps. Work that a step does
//! must not grow with the history before it, or N steps cost O(N²): a
//! crash's moment of death (the state the dashboard shows at the instant of
//! a crash) counted what a fresh consumer reads by folding every batch of
//! every partition from the log's start, because the reader cache
//! (`engine::core::cluster::reader_cache`) did not survive the crash's
//! reopen; and the reopen walked every leader's batch summaries to find the
//! coordinator's markers again, though no log had changed. `mk-tui state` over the generated recording (a crash every 600
//! steps) cost 25x per 10x steps. Counting work is robust where timing is
//! not (docs/performance.md, "Growth").

use minikafka::engine::txn_support::instances::marker_summaries_walked;
use minikafka::perf::generated_recording;
use minikafka::session::{Action, Driver};

/// Summaries folded past the reader cache so far (crashes included).
fn folded(driver: &Driver) -> u64 {
    driver.cluster().with_state(|s| s.reader_cache().folded())
}

/// Batch summaries the partitions' leaders hold.
fn leader_summaries(driver: &Driver) -> usize {
    driver.cluster().with_state(|s| {
        s.partitions()
            .values()
            .map(|set| set.leader().log.batch_summaries().len())
            .sum()
    })
}

/// For each crash of the generated recording up to `steps`: the summaries
/// its moment of death folded, and the leaders' summaries then (the
/// history). The counts themselves are checked against a fold of the whole
/// log on every call in debug builds (`snapshot::build::reader_counts`),
/// so a carried fold that no longer holds fails here too.
fn per_crash(steps: usize) -> Vec<(u64, usize)> {
    per_crash_counting(steps, folded)
}

/// For each crash of the generated recording up to `steps`: what
/// `counter` (a running count) grew by over the crash, and the leaders'
/// summaries then. No other step may move it.
fn per_crash_counting(steps: usize, counter: impl Fn(&Driver) -> u64) -> Vec<(u64, usize)> {
    let recording = generated_recording(steps);
    let mut driver = Driver::new(&recording.header, None).unwrap();
    let mut crashes = Vec::new();
    for step in &recording.steps {
        let (before, history) = (counter(&driver), leader_summaries(&driver));
        driver.apply(&step.action);
        let work = counter(&driver) - before;
        if matches!(step.action, Action::Crash {}) {
            crashes.push((work, history));
        } else {
            assert_eq!(work, 0, "only a crash does this work");
        }
    }
    crashes
}

/// A plain crash changes no log and no journal frame, so its reopen keeps
/// the markers the crashed coordinator knew and walks no leader's batch
/// summaries to find them again, at the eighth crash as at the second. (The
/// first crash has nothing to carry: a log the cluster created has no
/// recovery point until an open has read its files.)
/// (When every reopen walked every leader's summaries, the eighth walked
/// the whole history, over 1,000 summaries: fails there.) The markers kept
/// are checked against a walk of each log on every reopen in debug builds
/// (`TransactionInstances::adopt_markers`), so markers carried that no
/// longer hold fail here too.
#[test]
fn a_plain_crash_finds_the_markers_without_walking_the_logs() {
    let crashes = per_crash_counting(4_800, |_| marker_summaries_walked());
    assert_eq!(crashes.len(), 8);
    let (_, history) = crashes[7];
    assert!(history > 1_000, "the history grew: {crashes:?}");
    assert!(
        crashes[1..].iter().all(|&(walked, _)| walked == 0),
        "a crash's reopen walked the logs for markers: {crashes:?}"
    );
}

/// Every crash of 4,800 steps folds about what came since the crash
/// before it, the same at the eighth crash as at the second, while the
/// history grew fourfold. (Before the reader cache was carried across a
/// crash, the eighth folded four times what the second did: fails there.)
#[test]
fn a_crash_folds_what_came_since_the_last_one_not_the_history() {
    let crashes = per_crash(4_800);
    assert_eq!(crashes.len(), 8);
    let (second, second_history) = crashes[1];
    let (last, last_history) = crashes[7];
    assert!(
        last_history >= 3 * second_history,
        "the history grew: {second_history} then {last_history} summaries"
    );
    assert!(second > 0, "a moment folds what came since the last crash");
    let most = crashes.iter().map(|&(w, _)| w).max().unwrap();
    assert!(
        most <= 2 * second,
        "summaries folded per crash grow with the history: {crashes:?}"
    );
    assert!(
        (last as usize) * 3 < last_history,
        "the eighth crash folded {last} of {last_history} summaries: {crashes:?}"
    );
}
