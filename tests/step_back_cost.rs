//! Issue 17 item 11: a step back costs the same at any history. A restore
//! takes what an open would parse from the files (each log's summaries,
//! segments and index entries, the coordinator's state and markers, the
//! readers' counts) from the checkpoint's memo, checking only the files'
//! lengths, so it reads the same number of log bytes (none) whether the
//! history is short or long. Counting work is robust where timing is not
//! (docs/performance.md, "A step back and history"). What it builds is
//! what a full open of the same directory builds, and a directory that
//! does not match the memo is read and checked in full.

use minikafka::engine::{BrokerCluster, ManualClock};
use minikafka::session::driver::config_for;
use minikafka::session::{Driver, Snapshot, Timeline};

/// Bytes the replica logs' opens validated frame by frame, and journal
/// frames the coordinator's open replayed.
fn work_of_open(cluster: &BrokerCluster) -> (u64, usize) {
    cluster.with_state(|s| {
        let bytes = s
            .partitions()
            .values()
            .flat_map(|set| {
                set.assignment()
                    .iter()
                    .map(|&b| set.replica(b).unwrap().log.scanned_on_open())
            })
            .sum();
        (bytes, s.transactions().replayed_on_open())
    })
}

/// Total bytes of the replica logs.
fn log_bytes(cluster: &BrokerCluster) -> u64 {
    cluster.with_state(|s| {
        s.partitions()
            .values()
            .flat_map(|set| {
                set.assignment()
                    .iter()
                    .map(|&b| set.replica(b).unwrap().log.size_bytes())
            })
            .sum()
    })
}

/// What an open rebuilds from the files: each replica log's summaries,
/// segments, index entries and producer state, the coordinator's
/// instances, frames and each id's markers.
/// Each part as its debug text, named, so that a difference names it.
fn opened_state(cluster: &BrokerCluster) -> Vec<(&'static str, String)> {
    cluster.with_state(|s| {
        let t = s.transactions();
        let logs: Vec<_> = s
            .partitions()
            .iter()
            .flat_map(|(tp, set)| {
                set.assignment().iter().map(move |&b| {
                    let replica = set.replica(b).unwrap();
                    let log = &replica.log;
                    let segments: Vec<_> = log
                        .segments()
                        .iter()
                        .map(|seg| {
                            (
                                seg.base_offset(),
                                seg.size(),
                                seg.index().entries().to_vec(),
                            )
                        })
                        .collect();
                    (
                        tp.clone(),
                        b,
                        log.batch_summaries().iter().cloned().collect::<Vec<_>>(),
                        segments,
                        replica.producer_state.clone(),
                    )
                })
            })
            .collect();
        let markers: Vec<_> = t
            .current()
            .map(|d| (d.id.clone(), t.markers_of(&d.id)))
            .collect();
        let mut parts = vec![
            (
                "instances",
                format!("{:?}", t.instances().iter().cloned().collect::<Vec<_>>()),
            ),
            (
                "frames",
                format!(
                    "{:?}",
                    t.journal_frames().iter().cloned().collect::<Vec<_>>()
                ),
            ),
            ("journal size", t.journal_size().to_string()),
            ("markers", format!("{markers:?}")),
        ];
        for (tp, b, summaries, segments, producers) in logs {
            parts.push(("summaries", format!("{tp} {b} {summaries:?}")));
            parts.push(("segments", format!("{tp} {b} {segments:?}")));
            parts.push(("producers", format!("{tp} {b} {producers:?}")));
        }
        parts
    })
}

/// One step back 10 steps after a checkpoint at about step `n` of the
/// generated recording (a crash every 600 steps): the work the restore's
/// open did, the logs' size, and the restored driver's snapshot.
fn step_back_at(n: usize) -> ((u64, usize), u64, String) {
    let recording = minikafka::perf::generated_recording(n + 100);
    let mut timeline = Timeline::new(recording, 50).unwrap();
    timeline.goto(n).unwrap();
    let checkpoint = timeline
        .checkpoint_steps()
        .into_iter()
        .rev()
        .find(|&c| c + 10 < n)
        .unwrap();
    timeline.goto(checkpoint + 11).unwrap();
    timeline.goto(checkpoint + 10).unwrap();
    assert_eq!(timeline.replayed(), 10);
    let cluster = timeline.driver().cluster();
    (
        work_of_open(cluster),
        log_bytes(cluster),
        Snapshot::of(timeline.driver()).to_json(),
    )
}

/// A step back at step 1,300 and at step 6,500 reads no log byte and
/// replays no journal frame: the same work at five times the history. (On
/// a restore that reads the files, as before, it validates every log byte,
/// five times as many in the longer run.)
#[test]
fn a_step_back_reads_no_history_at_a_short_and_a_long_one() {
    let (short, short_logs, _) = step_back_at(1_300);
    let (long, long_logs, _) = step_back_at(6_500);
    assert!(long_logs >= 4 * short_logs, "{short_logs} {long_logs}");
    assert_eq!(short, long, "log bytes validated, journal frames replayed");
    assert_eq!(long, (0, 0));
}

/// A restore from a memo builds the in-memory state a straight run has at
/// the same step (under both rules, after crashes), and the logs a full
/// open of the same directory reads (a full open also runs recovery, which
/// completes a PREPARE_COMMIT the straight run is still committing: the
/// coordinator's parts are compared with the straight run only).
#[test]
fn a_restore_from_a_memo_equals_a_straight_run_and_a_full_open() {
    for rules in ["minikafka", "kafka"] {
        let mut recording = minikafka::perf::generated_recording(1_400);
        recording.header.rules = rules.to_string();
        let mut timeline = Timeline::new(recording.clone(), 50).unwrap();
        timeline.goto(1_390).unwrap();
        timeline.goto(1_377).unwrap();
        let restored = timeline.driver();
        assert_eq!(work_of_open(restored.cluster()), (0, 0), "{rules}");

        let mut straight = Driver::new(&recording.header, None).unwrap();
        for step in &recording.steps[..1_377] {
            straight.apply(&step.action);
        }
        let ours = opened_state(restored.cluster());
        let theirs = opened_state(straight.cluster());
        assert_eq!(ours.len(), theirs.len());
        for (a, b) in ours.iter().zip(&theirs) {
            assert!(a == b, "{rules}: {} differ:\n{}\n{}", a.0, a.1, b.1);
        }
        assert_eq!(
            Snapshot::of(restored).to_json(),
            Snapshot::of(&straight).to_json(),
            "{rules}"
        );

        let copy = tempfile::tempdir().unwrap();
        let dest = copy.path().join("data");
        restored.copy_data_dir(&dest).unwrap();
        let config = config_for(&recording.header, &dest).unwrap();
        let fresh = BrokerCluster::open(config, ManualClock::new()).unwrap();
        assert!(work_of_open(&fresh).0 > 0, "a full open reads the logs");
        let logs = |parts: Vec<(&'static str, String)>| -> Vec<(&'static str, String)> {
            parts
                .into_iter()
                .filter(|(name, _)| ["summaries", "segments", "producers"].contains(name))
                .collect()
        };
        let full = logs(opened_state(&fresh));
        assert!(!full.is_empty());
        assert!(
            logs(ours) == full,
            "{rules}: the logs differ from a full open's"
        );
    }
}

/// A directory whose files do not match the memo (here an active segment
/// grown by a byte) is not trusted: that log is read and checked in full,
/// as any open reads it (its bad tail cut), and the others are still taken
/// from the memo.
#[test]
fn files_that_do_not_match_the_memo_are_read_in_full() {
    let recording = minikafka::perf::generated_recording(500);
    let mut driver = Driver::new(&recording.header, None).unwrap();
    let mut steps = recording.steps.iter();
    for step in steps.by_ref().take(400) {
        driver.apply(&step.action);
    }
    // On to the first quiet step (a checkpoint's memo needs one).
    let memo = loop {
        if let Some(memo) = driver.cluster().memo() {
            break memo;
        }
        driver.apply(&steps.next().expect("a quiet step").action);
    };
    let restore = |dest: &std::path::Path| {
        let mut config = config_for(&recording.header, dest).unwrap();
        config.sync_writes = false;
        BrokerCluster::restore(config, ManualClock::new(), &memo).unwrap()
    };
    let copy = tempfile::tempdir().unwrap();

    // Untouched: nothing read.
    let same = copy.path().join("same");
    driver.copy_data_dir(&same).unwrap();
    assert_eq!(work_of_open(&restore(&same)).0, 0);

    // A byte appended to one active segment: that log is read in full and
    // the byte cut as a torn tail, the others are still taken from the memo.
    let grown = copy.path().join("grown");
    driver.copy_data_dir(&grown).unwrap();
    let segment = grown.join("broker-1/out-0/00000000000000000000.log");
    let len = std::fs::metadata(&segment).unwrap().len();
    let mut bytes = std::fs::read(&segment).unwrap();
    bytes.push(0x55);
    std::fs::write(&segment, &bytes).unwrap();
    let cluster = restore(&grown);
    assert_eq!(work_of_open(&cluster).0, len + 1, "only that log was read");
    assert_eq!(std::fs::metadata(&segment).unwrap().len(), len, "tail cut");
    let untouched = restore(&same);
    assert_eq!(
        opened_state(&cluster),
        opened_state(&untouched),
        "the same state once the tail is cut"
    );
}
