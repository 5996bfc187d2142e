//! The book's tests of retention and compaction
//! (`../shared/book/tests/log/test_retention.py`,
//! `tests/log/test_compaction.py`, `tests/reliability/test_compaction_swap.py`),
//! ported to the engine's `PartitionLog`, `RetentionManager` and
//! `LogCompactor` with the book's scenarios and expected values; each test
//! names the book test it ports. The crash-at-swap tests after them are
//! ours: the book's swap is crash-safe only before its first rename, ours
//! on open at every point of it (`src/engine/log/segment_swap.rs`).

use std::path::Path;

use minikafka::engine::core::record::Record;
use minikafka::engine::log::partition_log::LogConfig;
use minikafka::engine::log::segment_swap::SwapRepair;
use minikafka::engine::log::{LogCompactor, PartitionLog, RetentionManager};
use minikafka::engine::{ManualClock, MiniKafkaError, RecordBatch};

fn config(segment_max_bytes: u64) -> LogConfig {
    LogConfig {
        segment_max_bytes,
        index_interval_bytes: 1,
        fsync: false,
    }
}

fn open(dir: &Path, segment_max_bytes: u64) -> PartitionLog {
    PartitionLog::open(dir, config(segment_max_bytes))
        .unwrap()
        .0
}

/// The book's `log.append(RecordBatch.unassigned(records))`.
fn append_records(log: &mut PartitionLog, records: &[(Option<&str>, Option<&str>, i64)]) {
    let records = records
        .iter()
        .map(|(k, v, ts)| {
            Record::new(
                k.map(|k| k.as_bytes().to_vec().into()),
                v.map(|v| v.as_bytes().to_vec().into()),
                *ts,
            )
        })
        .collect();
    let mut batch = RecordBatch::new(records);
    batch.base_offset = log.leo();
    log.append(&batch).unwrap();
}

fn append(log: &mut PartitionLog, value: &[u8], timestamp_ms: i64) {
    let mut batch = RecordBatch::new(vec![Record::new(
        None,
        Some(value.to_vec().into()),
        timestamp_ms,
    )]);
    batch.base_offset = log.leo();
    log.append(&batch).unwrap();
}

fn bases(log: &PartitionLog) -> Vec<i64> {
    log.segments().iter().map(|s| s.base_offset()).collect()
}

/// The book's `rolled_log`: four 20-byte records at times 0, 50, 150, 250,
/// one segment each (segment_max_bytes 80).
fn rolled_log(dir: &Path) -> PartitionLog {
    let mut log = open(&dir.join("events-0"), 80);
    for timestamp in [0i64, 50, 150, 250] {
        append(&mut log, &[(timestamp % 256) as u8; 20], timestamp);
    }
    assert!(log.closed_segments().len() >= 3);
    log
}

fn non_monotonic_log(dir: &Path) -> PartitionLog {
    let mut log = open(&dir.join("non-monotonic-0"), 80);
    for timestamp in [250i64, 0, 0, 250] {
        append(&mut log, &[b'x'; 20], timestamp);
    }
    assert!(log.closed_segments().len() >= 3);
    log
}

/// (offset, key, value) of every record from `from`.
fn contents(log: &PartitionLog, from: i64) -> Vec<(i64, Option<String>, Option<String>)> {
    let text = |b: Option<bytes::Bytes>| b.map(|b| String::from_utf8_lossy(&b).into_owned());
    log.fetch(from, 100, i64::MAX)
        .unwrap()
        .into_iter()
        .map(|r| (r.offset, text(r.key), text(r.value)))
        .collect()
}

fn s(text: &str) -> Option<String> {
    Some(text.to_string())
}

// test_retention.py

#[test]
fn test_time_retention_deletes_closed_segments_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = rolled_log(dir.path());
    let active_base = log.segments().last().unwrap().base_offset();
    let manager = RetentionManager::new(ManualClock::at(300));

    let deleted = manager.apply(&mut log, Some(100), None).unwrap();

    assert_eq!(deleted, vec![0, 1, 2]);
    assert_eq!(log.segments().last().unwrap().base_offset(), active_base);
    assert_eq!(log.log_start_offset(), active_base);
    assert!(matches!(
        log.fetch(0, 1, i64::MAX),
        Err(MiniKafkaError::OffsetOutOfRange { .. })
    ));
}

#[test]
fn test_time_retention_stops_at_first_non_expired_segment() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = non_monotonic_log(dir.path());

    let deleted = RetentionManager::new(ManualClock::at(300))
        .apply(&mut log, Some(100), None)
        .unwrap();

    assert_eq!(deleted, Vec::<i64>::new());
    assert_eq!(bases(&log), vec![0, 1, 2, 3]);
}

#[test]
fn test_size_retention_deletes_oldest_segments_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = rolled_log(dir.path());
    let newest_closed = log.closed_segments().last().unwrap().base_offset();
    let target =
        log.segments().last().unwrap().size() + log.closed_segments().last().unwrap().size() + 20;

    let deleted = RetentionManager::new(ManualClock::new())
        .apply(&mut log, None, Some(target))
        .unwrap();

    assert!(!deleted.is_empty());
    let mut sorted = deleted.clone();
    sorted.sort_unstable();
    assert_eq!(deleted, sorted);
    assert!(!deleted.contains(&newest_closed));
    assert!(log.log_start_offset() > 0);
}

#[test]
fn test_partition_log_rejects_non_prefix_segment_deletion() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = rolled_log(dir.path());

    let err = log.delete_closed_segments(&[0, 2]).unwrap_err();

    assert!(err.to_string().contains("continuous prefix"), "{err}");
    assert_eq!(bases(&log), vec![0, 1, 2, 3]);
}

#[test]
fn test_retention_result_survives_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = rolled_log(dir.path());
    let directory = log.dir().to_path_buf();
    RetentionManager::new(ManualClock::at(300))
        .apply(&mut log, Some(100), None)
        .unwrap();
    let start = log.log_start_offset();
    drop(log);

    let reopened = open(&directory, 80);

    assert_eq!(reopened.log_start_offset(), start);
    let offsets: Vec<i64> = contents(&reopened, start).iter().map(|r| r.0).collect();
    assert_eq!(offsets, vec![start]);
}

// test_compaction.py

fn compactable_log(dir: &Path) -> PartitionLog {
    open(&dir.join("state-0"), 160)
}

#[test]
fn test_compaction_preserves_latest_key_and_original_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = compactable_log(dir.path());
    append_records(
        &mut log,
        &[(Some("a"), Some("1"), 0), (Some("b"), Some("x"), 1)],
    );
    log.roll().unwrap();
    append_records(
        &mut log,
        &[(Some("a"), Some("2"), 2), (None, Some("event"), 3)],
    );
    log.roll().unwrap();
    append_records(&mut log, &[(Some("active"), Some("keep"), 4)]);

    LogCompactor::new(ManualClock::at(10), 1000)
        .compact(&mut log)
        .unwrap();

    assert_eq!(
        contents(&log, 0),
        vec![
            (1, s("b"), s("x")),
            (2, s("a"), s("2")),
            (3, None, s("event")),
            (4, s("active"), s("keep")),
        ]
    );
    assert_eq!(log.leo(), 5);
}

#[test]
fn test_recent_tombstone_is_retained() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = compactable_log(dir.path());
    append_records(
        &mut log,
        &[(Some("a"), Some("1"), 0), (Some("a"), None, 100)],
    );
    log.roll().unwrap();
    append_records(&mut log, &[(Some("active"), Some("x"), 101)]);

    LogCompactor::new(ManualClock::at(500), 1000)
        .compact(&mut log)
        .unwrap();

    let records = contents(&log, 0);
    let closed: Vec<_> = records[..records.len() - 1]
        .iter()
        .map(|(offset, _, value)| (*offset, value.clone()))
        .collect();
    assert_eq!(closed, vec![(1, None)]);
}

#[test]
fn test_expired_tombstone_removes_key_history() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = compactable_log(dir.path());
    append_records(
        &mut log,
        &[(Some("a"), Some("1"), 0), (Some("a"), None, 100)],
    );
    log.roll().unwrap();
    append_records(&mut log, &[(Some("active"), Some("x"), 2000)]);

    LogCompactor::new(ManualClock::at(2000), 1000)
        .compact(&mut log)
        .unwrap();

    let kv: Vec<_> = contents(&log, 0)
        .into_iter()
        .map(|(_, k, v)| (k, v))
        .collect();
    assert_eq!(kv, vec![(s("active"), s("x"))]);
    // The log start stays where it was: compaction leaves a gap, it does
    // not move the start as retention does.
    assert_eq!(log.log_start_offset(), 0);
}

#[test]
fn test_active_segment_is_not_cleaned() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = compactable_log(dir.path());
    append_records(&mut log, &[(Some("a"), Some("old"), 0)]);
    log.roll().unwrap();
    append_records(
        &mut log,
        &[
            (Some("a"), Some("active-new"), 1),
            (Some("a"), Some("active-newer"), 2),
        ],
    );

    LogCompactor::new(ManualClock::at(3), 1000)
        .compact(&mut log)
        .unwrap();

    let ov: Vec<_> = contents(&log, 0)
        .into_iter()
        .map(|(o, _, v)| (o, v))
        .collect();
    assert_eq!(ov, vec![(1, s("active-new")), (2, s("active-newer"))]);
}

// test_compaction_swap.py

/// Three batches of key "k" at segment_max_bytes 100: one per segment.
fn swap_log(dir: &Path) -> PartitionLog {
    let mut log = open(&dir.join("state-0"), 100);
    for value in ["one", "two", "three"] {
        append_records(&mut log, &[(Some("k"), Some(value), 0)]);
    }
    assert_eq!(log.closed_segments().len(), 2);
    log
}

fn siblings(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn test_failure_before_swap_leaves_original_log_authoritative() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = swap_log(dir.path());
    let original = contents(&log, 0);

    let err = LogCompactor::new(ManualClock::new(), 1000)
        .before_swap(Box::new(|| {
            Err(MiniKafkaError::io(
                "before_swap",
                std::io::Error::other("injected before swap"),
            ))
        }))
        .compact(&mut log)
        .unwrap_err();

    assert!(err.to_string().contains("injected"), "{err}");
    assert_eq!(contents(&log, 0), original);
    assert_eq!(
        siblings(dir.path()),
        vec!["state-0"],
        "the replacement is removed"
    );
}

#[test]
fn test_compacted_log_survives_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = swap_log(dir.path());
    LogCompactor::new(ManualClock::new(), 1000)
        .compact(&mut log)
        .unwrap();
    let expected = contents(&log, 0);
    assert_eq!(expected, vec![(2, s("k"), s("three"))]);
    let directory = log.dir().to_path_buf();
    drop(log);

    let reopened = open(&directory, 100);

    assert_eq!(contents(&reopened, 0), expected);
    assert_eq!(siblings(dir.path()), vec!["state-0"]);
}

// Ours: a crash (not an in-process error) at each point of the swap, then
// a reopen: the log before or after the compaction, whole.

#[test]
fn a_crash_at_before_swap_keeps_the_log_before_it_and_the_open_removes_the_replacement() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = swap_log(dir.path());
    append_records(&mut log, &[(Some("j"), Some("active"), 0)]);
    let original = contents(&log, 0);
    let directory = log.dir().to_path_buf();

    let err = LogCompactor::new(ManualClock::new(), 1000)
        .before_swap(Box::new(|| Err(MiniKafkaError::Crashed)))
        .compact(&mut log)
        .unwrap_err();
    assert!(matches!(err, MiniKafkaError::Crashed));
    drop(log); // the process dies: the replacement stays on disk
    assert_eq!(siblings(dir.path()), vec![".state-0.compact-mk", "state-0"]);

    let (reopened, recovery) = PartitionLog::open(&directory, config(100)).unwrap();

    assert_eq!(recovery.swap, Some(SwapRepair::DiscardedReplacement));
    assert_eq!(
        contents(&reopened, 0),
        original,
        "nothing lost, nothing doubled"
    );
    assert_eq!(siblings(dir.path()), vec!["state-0"]);
    // The compaction can run again, and does what it would have done.
    let mut reopened = reopened;
    LogCompactor::new(ManualClock::new(), 1000)
        .compact(&mut reopened)
        .unwrap();
    assert_eq!(
        contents(&reopened, 0),
        vec![(2, s("k"), s("three")), (3, s("j"), s("active"))]
    );
}

/// Copies a log directory (its files only).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

#[test]
fn a_crash_between_the_renames_restores_the_log_before_the_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let log = swap_log(dir.path());
    let original = contents(&log, 0);
    let directory = log.dir().to_path_buf();
    drop(log);
    // What the first rename leaves: the live log renamed to the backup,
    // the replacement beside it, not yet renamed.
    let compacted = tempfile::tempdir().unwrap();
    copy_dir(&directory, &compacted.path().join("state-0"));
    let mut other = open(&compacted.path().join("state-0"), 100);
    LogCompactor::new(ManualClock::new(), 1000)
        .compact(&mut other)
        .unwrap();
    copy_dir(other.dir(), &dir.path().join(".state-0.compact-mk"));
    std::fs::rename(&directory, dir.path().join(".state-0.backup-mk")).unwrap();

    let (reopened, recovery) = PartitionLog::open(&directory, config(100)).unwrap();

    assert_eq!(recovery.swap, Some(SwapRepair::RestoredBackup));
    assert_eq!(contents(&reopened, 0), original);
    assert_eq!(siblings(dir.path()), vec!["state-0"]);
}

#[test]
fn a_crash_after_the_swap_keeps_the_compacted_log_and_removes_the_backup() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = swap_log(dir.path());
    let directory = log.dir().to_path_buf();
    let before = tempfile::tempdir().unwrap();
    copy_dir(&directory, before.path());
    LogCompactor::new(ManualClock::new(), 1000)
        .compact(&mut log)
        .unwrap();
    // The backup as the second rename left it (the compaction removed
    // its own; this one stands for a crash before that removal).
    copy_dir(before.path(), &dir.path().join(".state-0.backup-mk"));
    let expected = contents(&log, 0);
    drop(log);

    let (reopened, recovery) = PartitionLog::open(&directory, config(100)).unwrap();

    assert_eq!(recovery.swap, Some(SwapRepair::RemovedBackup));
    assert_eq!(contents(&reopened, 0), expected);
    assert_eq!(siblings(dir.path()), vec!["state-0"]);
}
