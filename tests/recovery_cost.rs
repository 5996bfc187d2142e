//! Issue 17 item 12: a crash's recovery costs what changed since the last
//! recovery, not the history (docs/engine-decisions.md, "A crash's recovery
//! reads what changed since the last one"), and gives the state a full
//! open of the same directory gives (SPEC §3 E13: a crash drops every
//! in-memory structure; what a reopen reuses it checks against the files).

use minikafka::engine::{BrokerCluster, ManualClock};
use minikafka::session::driver::config_for;
use minikafka::session::{Driver, Recording};

/// Runs `recording` in a fresh driver (a crash every 600 steps).
fn run(recording: &Recording) -> Driver {
    let mut driver = Driver::new(&recording.header, None).unwrap();
    for step in &recording.steps {
        driver.apply(&step.action);
    }
    driver
}

/// What an open rebuilds from the files: the journal replayed (every
/// instance, the latest instance of each id, the frames) and each replica
/// log's batch summaries, segment sizes and index entries.
fn opened_state(cluster: &BrokerCluster) -> impl PartialEq + std::fmt::Debug {
    cluster.with_state(|s| {
        let t = s.transactions();
        let logs: Vec<_> = s
            .partitions()
            .iter()
            .flat_map(|(tp, set)| {
                set.assignment().iter().map(move |&b| {
                    let log = &set.replica(b).unwrap().log;
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
                    )
                })
            })
            .collect();
        (
            t.instances().iter().cloned().collect::<Vec<_>>(),
            t.current().map(|d| d.id.clone()).collect::<Vec<_>>(),
            t.journal_frames().iter().cloned().collect::<Vec<_>>(),
            t.journal_size(),
            logs,
        )
    })
}

/// Bytes the replica logs' last open validated frame by frame.
fn log_bytes_scanned(cluster: &BrokerCluster) -> u64 {
    cluster.with_state(|s| {
        s.partitions()
            .values()
            .flat_map(|set| {
                set.assignment()
                    .iter()
                    .map(|&b| set.replica(b).unwrap().log.scanned_on_open())
            })
            .sum()
    })
}

/// The last crash of a 1,200-step and of a 6,000-step run parses no
/// journal frame (the crashed coordinator's state is the replay of every
/// frame it wrote, and the journal still holds exactly those bytes), and
/// validates only the log frames of the 600 steps since the crash before.
/// A full open (main) parses every frame, five times as many in the longer
/// run.
#[test]
fn a_crash_reads_frame_by_frame_only_what_was_written_since_the_last_recovery() {
    let measure = |steps: usize| {
        let driver = run(&minikafka::perf::generated_recording(steps));
        assert_eq!(driver.cluster().generation() as usize, steps / 600);
        let cluster = driver.cluster();
        let (replayed, frames, size) = cluster.with_state(|s| {
            let t = s.transactions();
            (
                t.replayed_on_open(),
                t.journal_frames().len(),
                t.journal_size(),
            )
        });
        let log_bytes: u64 = cluster.with_state(|s| {
            s.partitions()
                .values()
                .flat_map(|set| {
                    set.assignment()
                        .iter()
                        .map(|&b| set.replica(b).unwrap().log.size_bytes())
                })
                .sum()
        });
        (
            replayed,
            frames,
            size,
            log_bytes_scanned(cluster),
            log_bytes,
        )
    };
    let (short, short_frames, short_size, short_scanned, short_logs) = measure(1_200);
    let (long, long_frames, long_size, long_scanned, long_logs) = measure(6_000);
    assert!(
        long_frames >= 4 * short_frames,
        "{short_frames} {long_frames}"
    );
    assert!(long_size >= 4 * short_size && long_logs >= 4 * short_logs);
    assert_eq!(
        (short, long),
        (0, 0),
        "journal frames replayed by the last crash"
    );
    assert!(
        short_scanned > 0 && short_scanned < short_logs,
        "{short_scanned} of {short_logs}"
    );
    // The same steps append the same frames, but a value's length grows
    // with its step number ("value-5999" against "value-1199").
    assert!(
        long_scanned <= short_scanned + short_scanned / 10,
        "log bytes validated by the last crash: {short_scanned} then {long_scanned}"
    );
}

/// After crashes that reused the crashed state, the coordinator is the one
/// a full open of a copy of the directory replays, under both rules.
#[test]
fn a_reopen_after_crashes_equals_a_full_open_of_the_same_directory() {
    for rules in ["minikafka", "kafka"] {
        let mut recording = minikafka::perf::generated_recording(1_900);
        recording.header.rules = rules.to_string();
        let driver = run(&recording);
        assert_eq!(driver.cluster().generation(), 3, "{rules}");
        let copy = tempfile::tempdir().unwrap();
        let dest = copy.path().join("data");
        driver.copy_data_dir(&dest).unwrap();
        let config = config_for(&recording.header, &dest).unwrap();
        let fresh = BrokerCluster::open(config, ManualClock::new()).unwrap();
        let full = fresh.with_state(|s| s.transactions().replayed_on_open());
        let frames = fresh.with_state(|s| s.transactions().journal_frames().len());
        assert_eq!(full, frames, "{rules}: a first open replays every frame");
        assert!(log_bytes_scanned(driver.cluster()) < log_bytes_scanned(&fresh));
        assert_eq!(
            opened_state(driver.cluster()),
            opened_state(&fresh),
            "{rules}"
        );
    }
}

/// A crash whose reopen must refuse the directory (a closed segment
/// corrupted under the running cluster) refuses it although the crashed
/// state was carried: every segment's bytes are checked against its CRC32.
/// The stale state keeps what the reopen borrowed (the dashboard shows it),
/// and once the byte is restored the next crash reuses it and opens what a
/// full open of the same directory opens.
#[test]
fn a_refused_reopen_gives_back_the_carried_state_and_the_next_one_reuses_it() {
    let mut recording = minikafka::perf::generated_recording(700);
    recording.header.cluster.config.segment_max_bytes = Some(2_000);
    let driver = run(&recording);
    let cluster = driver.cluster();
    assert_eq!(cluster.generation(), 1);
    let before = opened_state(cluster);
    let segment = driver
        .data_dir()
        .join("broker-1/out-0/00000000000000000000.log");
    let intact = std::fs::read(&segment).unwrap();
    let segments = std::fs::read_dir(segment.parent().unwrap())
        .unwrap()
        .count();
    assert!(
        segments >= 6,
        "closed segments to corrupt: {segments} files"
    );
    let mut bad = intact.clone();
    bad[30] ^= 0x55;
    std::fs::write(&segment, &bad).unwrap();

    let err = cluster.crash().unwrap_err().to_string();
    assert!(err.contains("closed segment"), "{err}");
    assert!(err.contains("00000000000000000000.log"), "{err}");
    assert_eq!(std::fs::read(&segment).unwrap(), bad, "nothing repaired");
    assert_eq!(opened_state(cluster), before, "the stale state is whole");

    std::fs::write(&segment, &intact).unwrap();
    assert!(cluster.crash().unwrap().is_clean());
    assert!(
        log_bytes_scanned(cluster)
            < cluster.with_state(|s| {
                s.partitions()
                    .values()
                    .map(|set| set.leader().log.size_bytes())
                    .sum()
            })
    );
    let copy = tempfile::tempdir().unwrap();
    let dest = copy.path().join("data");
    driver.copy_data_dir(&dest).unwrap();
    let config = config_for(&recording.header, &dest).unwrap();
    let fresh = BrokerCluster::open(config, ManualClock::new()).unwrap();
    assert_eq!(opened_state(cluster), opened_state(&fresh));
}
