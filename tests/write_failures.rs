//! Issue 17, item 1: a write that fails, or is short, is never acknowledged
//! and leaves nothing behind that later writes land after
//! (docs/reliability.md, "Write failures").
//!
//! Each file the engine writes (the transaction journal, a log segment, its
//! index, `offsets.json`, `metadata.json`, the HW checkpoint) meets an
//! injected ENOSPC after a few bytes, an EIO after a few bytes, and a third
//! failure (an EIO on fsync where the file is fsynced): the operation fails,
//! the file is back at its last good length, later writes succeed, and a
//! reopen keeps every acknowledged record, transaction, offset and topic,
//! with nothing for recovery to cut. When the cut back fails too, the
//! journal or log goes offline (`KafkaStorageException`) until a crash
//! reopens it. A last test fills a real 1 MiB tmpfs where the machine lets
//! it mount one.

mod common;

#[path = "common/fake_kafka.rs"]
mod fake_kafka;
#[path = "common/tmpfs.rs"]
mod tmpfs;
use tmpfs::in_a_tmpfs;

use std::fs;
use std::path::{Path, PathBuf};

use common::{TestCluster, committed, tp};
use minikafka::engine::config::Rules;
use minikafka::engine::consumer::offsets::OFFSETS_FILE;
use minikafka::engine::core::metadata::METADATA_FILE;
use minikafka::engine::fsutil::tmp_sibling;
use minikafka::engine::io_fault::{Effect, Errno, FileOp, inject};
use minikafka::engine::layout::CHECKPOINT_FILE;
use minikafka::engine::log::index::OffsetIndex;
use minikafka::engine::transaction::TransactionState;
use minikafka::engine::{AckMode, BrokerCluster, RecordBatch, TopicPartition};

/// The three failures every file meets: (name, operation, effect).
fn failures(sync: bool) -> Vec<(&'static str, FileOp, Effect)> {
    let third = if sync {
        ("EIO on fsync", FileOp::Sync, Effect::Fail(Errno::Io))
    } else {
        (
            "ENOSPC after 11 bytes",
            FileOp::Write,
            Effect::Short {
                written: 11,
                errno: Errno::NoSpace,
            },
        )
    };
    vec![
        (
            "ENOSPC after 5 bytes",
            FileOp::Write,
            Effect::Short {
                written: 5,
                errno: Errno::NoSpace,
            },
        ),
        (
            "EIO after 5 bytes",
            FileOp::Write,
            Effect::Short {
                written: 5,
                errno: Errno::Io,
            },
        ),
        third,
    ]
}

fn size(path: &Path) -> u64 {
    fs::metadata(path).unwrap().len()
}

fn journal_path(cluster: &BrokerCluster) -> PathBuf {
    cluster.with_state(|s| s.transactions().journal_path().to_path_buf())
}

/// begin, send `value` to `p`, commit.
async fn committed_txn(cluster: &BrokerCluster, id: &str, p: &TopicPartition, value: &str) {
    let tx = cluster.transactions().begin(id).await.unwrap();
    tx.send_record(&p.topic, Some(p.partition), None, value)
        .await
        .unwrap();
    tx.commit().await.unwrap();
}

fn states(cluster: &BrokerCluster) -> Vec<(String, TransactionState)> {
    cluster
        .transactions()
        .all()
        .into_iter()
        .map(|d| (d.id, d.state))
        .collect()
}

// ---------------------------------------------------------------------------
// The journal.

#[tokio::test]
async fn a_failed_journal_write_is_cut_back_and_every_later_commit_survives() {
    for (name, op, effect) in failures(true) {
        let t = TestCluster::new(&[1], 1);
        t.cluster.create_topic("out", 1, 1).unwrap();
        let p = tp("out", 0);
        committed_txn(&t.cluster, "tx-1", &p, "v1").await;
        let journal = journal_path(&t.cluster);
        let good = size(&journal);
        {
            let _fault = inject(&journal, op, 1, effect);
            let err = t.cluster.transactions().begin("tx-2").await.unwrap_err();
            assert!(
                err.to_string().contains("transactions.journal"),
                "{name}: {err}"
            );
        }
        assert_eq!(size(&journal), good, "{name}: the failed frame was cut");
        let frames = t.cluster.with_state(|s| s.transactions().journal_size());
        assert_eq!(frames, good, "{name}: memory and file agree");
        committed_txn(&t.cluster, "tx-2", &p, "v2").await;
        committed_txn(&t.cluster, "tx-3", &p, "v3").await;
        let before = t.cluster.with_state(|s| {
            s.transactions()
                .journal_frames()
                .iter()
                .cloned()
                .collect::<Vec<_>>()
        });
        let report = t.cluster.crash().unwrap();
        assert!(report.is_clean(), "{name}: {report:?}");
        let after = t.cluster.with_state(|s| {
            s.transactions()
                .journal_frames()
                .iter()
                .cloned()
                .collect::<Vec<_>>()
        });
        assert_eq!(
            after, before,
            "{name}: the journal holds exactly its frames"
        );
        assert_eq!(committed(&t.cluster, &p), ["v1", "v2", "v3"], "{name}");
        assert!(
            states(&t.cluster)
                .iter()
                .all(|(_, s)| *s == TransactionState::CompleteCommit),
            "{name}: {:?}",
            states(&t.cluster)
        );
    }
}

#[tokio::test]
async fn a_journal_that_cannot_be_cut_back_goes_offline_until_a_crash() {
    let t = TestCluster::new(&[1], 1);
    t.cluster.create_topic("out", 1, 1).unwrap();
    let p = tp("out", 0);
    committed_txn(&t.cluster, "tx-1", &p, "v1").await;
    let journal = journal_path(&t.cluster);
    let good = size(&journal);
    {
        let _short = inject(
            &journal,
            FileOp::Write,
            1,
            Effect::Short {
                written: 5,
                errno: Errno::NoSpace,
            },
        );
        let _no_cut = inject(&journal, FileOp::Truncate, 1, Effect::Fail(Errno::Io));
        let err = t.cluster.transactions().begin("tx-2").await.unwrap_err();
        assert_eq!(err.code(), "KafkaStorageException", "{err}");
    }
    // Offline: refused without writing, though the fault is gone.
    let err = t.cluster.transactions().begin("tx-2").await.unwrap_err();
    assert_eq!(err.code(), "KafkaStorageException", "{err}");
    assert!(err.to_string().contains("offline"), "{err}");
    assert_eq!(size(&journal), good + 5, "nothing more was written");
    // A restart brings it back: recovery cuts the 5 bytes.
    let report = t.cluster.crash().unwrap();
    assert_eq!(report.journal_truncated_bytes, 5);
    committed_txn(&t.cluster, "tx-2", &p, "v2").await;
    assert!(t.cluster.crash().unwrap().is_clean());
    assert_eq!(committed(&t.cluster, &p), ["v1", "v2"]);
}

/// Kafka rules: the journal's frames are group-committed, their fsync run
/// by a waiting request outside the state lock. A failed fsync fails the
/// request whose frame it covered, cuts the journal back to its last
/// synced length (no later frame lands behind bytes of unknown
/// durability) and takes the journal offline until a crash reopens it.
#[tokio::test]
async fn kafka_rules_a_failed_group_sync_fails_its_request_and_cuts_back_to_the_synced_length() {
    let t = common::TestCluster::with_config(&[1], |c| c.with_rules(Rules::Kafka));
    t.cluster.create_topic("out", 1, 1).unwrap();
    let p = tp("out", 0);
    committed_txn(&t.cluster, "tx-1", &p, "v1").await;
    let journal = journal_path(&t.cluster);
    let good = size(&journal);
    {
        let _fault = inject(&journal, FileOp::Sync, 1, Effect::Fail(Errno::Io));
        let err = t.cluster.transactions().begin("tx-2").await.unwrap_err();
        assert_eq!(err.code(), "KafkaStorageException", "{err}");
        assert!(err.to_string().contains("fdatasync failed"), "{err}");
    }
    assert_eq!(size(&journal), good, "the unsynced frame was cut");
    let err = t.cluster.transactions().begin("tx-3").await.unwrap_err();
    assert!(err.to_string().contains("offline"), "{err}");
    assert_eq!(size(&journal), good, "nothing more was written");
    let report = t.cluster.crash().unwrap();
    assert_eq!(report.journal_truncated_bytes, 0);
    assert_eq!(
        states(&t.cluster),
        [("tx-1".to_string(), TransactionState::CompleteCommit)],
        "tx-2's unanswered begin is gone with its frame"
    );
    committed_txn(&t.cluster, "tx-2", &p, "v2").await;
    assert!(t.cluster.crash().unwrap().is_clean());
    assert_eq!(committed(&t.cluster, &p), ["v1", "v2"]);
}

// ---------------------------------------------------------------------------
// A log segment.

fn active_segment(cluster: &BrokerCluster, p: &TopicPartition) -> PathBuf {
    cluster
        .leader_log(p)
        .unwrap()
        .segment_paths()
        .unwrap()
        .pop()
        .unwrap()
}

fn log_size(cluster: &BrokerCluster, p: &TopicPartition) -> u64 {
    cluster.with_state(|s| s.partition(p).unwrap().leader().log.size_bytes())
}

#[tokio::test]
async fn a_failed_segment_write_is_cut_back_and_replication_goes_on() {
    for (name, op, effect) in failures(true) {
        let t = TestCluster::with_config(&[1, 2], |mut c| {
            c.fsync_log = true;
            c.with_min_insync_replicas(2)
        });
        t.cluster.create_topic("out", 1, 2).unwrap();
        let p = tp("out", 0);
        let ack = t.append(&p, "v1", AckMode::All);
        t.cluster.replicate_all_once().unwrap();
        ack.await.unwrap();
        let segment = active_segment(&t.cluster, &p);
        let good = size(&segment);
        {
            let _fault = inject(&segment, op, 1, effect);
            let err = t.append(&p, "lost", AckMode::Leader).await.unwrap_err();
            assert!(err.to_string().contains(".log"), "{name}: {err}");
        }
        assert_eq!(size(&segment), good, "{name}: the partial frame was cut");
        assert_eq!(log_size(&t.cluster, &p), good, "{name}");
        // Followers still replicate: no frame "changed on disk".
        let ack = t.append(&p, "v2", AckMode::All);
        t.cluster.replicate_all_once().unwrap();
        assert_eq!(ack.await.unwrap().base_offset(), Some(1), "{name}");
        let ack = t.append(&p, "v3", AckMode::Leader).await.unwrap();
        assert_eq!(ack.base_offset(), Some(2), "{name}");
        let report = t.cluster.crash().unwrap();
        assert!(report.is_clean(), "{name}: {report:?}");
        assert_eq!(t.visible(&p), ["v1", "v2"], "{name}: up to the HW");
        t.cluster.replicate_all_once().unwrap();
        assert_eq!(t.visible(&p), ["v1", "v2", "v3"], "{name}");
    }
}

#[tokio::test]
async fn a_log_that_cannot_be_cut_back_goes_offline_until_a_crash() {
    let t = TestCluster::new(&[1], 1);
    t.cluster.create_topic("out", 1, 1).unwrap();
    let p = tp("out", 0);
    t.append(&p, "v1", AckMode::Leader).await.unwrap();
    let segment = active_segment(&t.cluster, &p);
    let good = size(&segment);
    {
        let _short = inject(
            &segment,
            FileOp::Write,
            1,
            Effect::Short {
                written: 5,
                errno: Errno::Io,
            },
        );
        let _no_cut = inject(&segment, FileOp::Truncate, 1, Effect::Fail(Errno::Io));
        let err = t.append(&p, "lost", AckMode::Leader).await.unwrap_err();
        assert_eq!(err.code(), "KafkaStorageException", "{err}");
    }
    let err = t.append(&p, "refused", AckMode::Leader).await.unwrap_err();
    assert_eq!(err.code(), "KafkaStorageException", "{err}");
    assert_eq!(size(&segment), good + 5, "nothing more was written");
    let report = t.cluster.crash().unwrap();
    assert_eq!(report.logs_truncated.len(), 1, "{report:?}");
    assert_eq!(report.logs_truncated[0].truncated_bytes, 5);
    t.append(&p, "v2", AckMode::Leader).await.unwrap();
    assert!(t.cluster.crash().unwrap().is_clean());
    assert_eq!(t.visible(&p), ["v1", "v2"]);
}

// ---------------------------------------------------------------------------
// An index.

#[tokio::test]
async fn a_failed_index_write_is_cut_back_to_whole_entries() {
    for (name, op, effect) in failures(false) {
        let t = TestCluster::with_config(&[1], |mut c| {
            c.index_interval_bytes = 1;
            c
        });
        t.cluster.create_topic("out", 1, 1).unwrap();
        let p = tp("out", 0);
        for v in ["v1", "v2"] {
            t.append(&p, v, AckMode::Leader).await.unwrap();
        }
        let index = active_segment(&t.cluster, &p).with_extension("index");
        let good = fs::read(&index).unwrap();
        assert_eq!(good.len(), 12, "one entry, for v2");
        {
            let _fault = inject(&index, op, 1, effect);
            t.append(&p, "lost", AckMode::Leader).await.unwrap_err();
        }
        assert_eq!(fs::read(&index).unwrap(), good, "{name}: cut back");
        for v in ["v3", "v4"] {
            t.append(&p, v, AckMode::Leader).await.unwrap();
        }
        let entries = OffsetIndex::parse(&fs::read(&index).unwrap())
            .unwrap_or_else(|e| panic!("{name}: the index file is {e}"));
        let in_memory = t.cluster.with_state(|s| {
            let log = &s.partition(&p).unwrap().leader().log;
            log.segments()[0].index().entries().to_vec()
        });
        assert_eq!(entries, in_memory, "{name}");
        assert_eq!(entries.len(), 3, "{name}");
        let log = t.cluster.leader_log(&p).unwrap();
        for offset in 0..4 {
            assert_eq!(
                log.read_batches(offset, 1).unwrap()[0].base_offset,
                offset,
                "{name}"
            );
        }
        assert!(t.cluster.crash().unwrap().is_clean(), "{name}");
        assert_eq!(t.visible(&p), ["v1", "v2", "v3", "v4"], "{name}");
    }
}

// ---------------------------------------------------------------------------
// The files replaced atomically.

/// Asserts that `path` holds `good` and that no `.tmp` sibling is left.
fn unchanged(name: &str, path: &Path, good: &[u8]) {
    assert_eq!(fs::read(path).unwrap(), good, "{name}: {}", path.display());
    assert!(
        !tmp_sibling(path).exists(),
        "{name}: {} was left behind",
        tmp_sibling(path).display()
    );
}

#[test]
fn a_failed_offsets_write_changes_nothing_and_later_commits_survive() {
    for (name, op, effect) in failures(true) {
        let t = TestCluster::new(&[1], 1);
        t.cluster.create_topic("in", 1, 1).unwrap();
        let p = tp("in", 0);
        t.cluster.offsets().commit("g", &p, 1).unwrap();
        let path = t.dir.path().join(OFFSETS_FILE);
        let good = fs::read(&path).unwrap();
        {
            let _fault = inject(&path, op, 1, effect);
            let err = t.cluster.offsets().commit("g", &p, 2).unwrap_err();
            assert!(err.to_string().contains(OFFSETS_FILE), "{name}: {err}");
        }
        unchanged(name, &path, &good);
        assert_eq!(t.cluster.offsets().get("g", &p), Some(1), "{name}");
        t.cluster.offsets().commit("g", &p, 3).unwrap();
        let t = t.reopen();
        assert_eq!(t.cluster.offsets().get("g", &p), Some(3), "{name}");
    }
}

#[test]
fn a_failed_metadata_write_changes_nothing_and_later_topics_survive() {
    for (name, op, effect) in failures(true) {
        let t = TestCluster::new(&[1], 1);
        t.cluster.create_topic("a", 1, 1).unwrap();
        let path = t.dir.path().join(METADATA_FILE);
        let good = fs::read(&path).unwrap();
        {
            let _fault = inject(&path, op, 1, effect);
            let err = t.cluster.create_topic("b", 1, 1).unwrap_err();
            assert!(err.to_string().contains(METADATA_FILE), "{name}: {err}");
        }
        unchanged(name, &path, &good);
        assert_eq!(t.cluster.topics(), [("a".to_string(), 1)], "{name}");
        t.cluster.create_topic("b", 2, 1).unwrap();
        let t = t.reopen();
        assert_eq!(
            t.cluster.topics(),
            [("a".to_string(), 1), ("b".to_string(), 2)],
            "{name}"
        );
        assert!(t.cluster.last_recovery().is_clean(), "{name}");
    }
}

#[tokio::test]
async fn a_failed_checkpoint_write_changes_nothing_and_the_next_flush_writes_it() {
    let mut cases = failures(false);
    cases[2] = (
        "ENOSPC, nothing written",
        FileOp::Write,
        Effect::Fail(Errno::NoSpace),
    );
    for (name, op, effect) in cases {
        let t = TestCluster::new(&[1], 1);
        t.cluster.create_topic("out", 1, 1).unwrap();
        let p = tp("out", 0);
        t.append(&p, "v1", AckMode::Leader).await.unwrap();
        t.cluster.flush().unwrap();
        let path = t.dir.path().join(CHECKPOINT_FILE);
        let good = fs::read(&path).unwrap();
        t.append(&p, "v2", AckMode::Leader).await.unwrap();
        {
            let _fault = inject(&path, op, 1, effect);
            let err = t.cluster.flush().unwrap_err();
            assert!(err.to_string().contains(CHECKPOINT_FILE), "{name}: {err}");
        }
        unchanged(name, &path, &good);
        t.cluster.flush().unwrap();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "0\n1\nout 0 2\n",
            "{name}: the next flush writes what the failed one did not"
        );
        let t = t.reopen();
        assert_eq!(t.cluster.replica_set(&p).unwrap().high_watermark(), 2);
    }
}

// ---------------------------------------------------------------------------
// A real full file system.

const TMPFS_ENV: &str = "MK_TEST_TMPFS_DIR";

/// Fills a real 1 MiB tmpfs (mounted in a private mount namespace by
/// re-running this test under `unshare -m`, which needs root or user
/// namespaces; skipped, saying so, where neither is available): appends and
/// transactions run until the disk is full, space is freed, and everything
/// acknowledged survives a reopen with nothing to cut.
#[test]
fn a_full_tmpfs_loses_no_acknowledged_write() {
    let Ok(dir) = std::env::var(TMPFS_ENV) else {
        in_a_tmpfs(
            "a_full_tmpfs_loses_no_acknowledged_write",
            TMPFS_ENV,
            "full tmpfs: ",
        );
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(fill_a_tmpfs(Path::new(&dir)));
}

async fn fill_a_tmpfs(root: &Path) {
    use minikafka::engine::{ManualClock, MiniKafkaConfig};
    let data = root.join("data");
    let config = MiniKafkaConfig::new(&data).with_brokers([1]);
    let cluster = BrokerCluster::open(config.clone(), ManualClock::new()).unwrap();
    cluster.create_topic("out", 1, 1).unwrap();
    let p = tp("out", 0);
    // Fill the file system, then give back about 40 KiB.
    let filler = root.join("filler");
    fill(&filler, 40 << 10);
    let (mut acked, mut txns, mut failed) = (Vec::new(), Vec::new(), 0);
    for i in 0..2000 {
        let value = format!("value-{i:04}-{}", "x".repeat(200));
        match cluster
            .append_batch(
                &p,
                RecordBatch::of_values([value.as_str()]),
                AckMode::Leader,
            )
            .await
        {
            Ok(_) => acked.push(value),
            Err(_) => failed += 1,
        }
        if i % 10 == 0 {
            let id = format!("tx-{i}");
            let done = async {
                let tx = cluster.transactions().begin(&id).await?;
                tx.commit().await
            };
            if done.await.is_ok() {
                txns.push(id);
            }
        }
        if failed > 20 {
            break;
        }
    }
    assert!(failed > 0, "the disk never filled");
    fs::remove_file(&filler).unwrap();
    for i in 0..3 {
        let value = format!("after-{i}");
        cluster
            .append_batch(
                &p,
                RecordBatch::of_values([value.as_str()]),
                AckMode::Leader,
            )
            .await
            .unwrap();
        acked.push(value);
    }
    drop(cluster);
    let cluster = BrokerCluster::open(config.clone(), ManualClock::new()).unwrap();
    // Nothing to cut. (A commit refused after its PREPARE_COMMIT was
    // journaled is completed now, as after any crash: not a loss.)
    let report = cluster.last_recovery();
    assert!(
        report.logs_truncated.is_empty() && report.journal_truncated_bytes == 0,
        "{report:?}"
    );
    let read = common::values(
        &cluster
            .fetch(
                &p,
                0,
                100_000,
                minikafka::engine::IsolationLevel::ReadUncommitted,
            )
            .unwrap(),
    );
    assert_eq!(read, acked);
    let complete: Vec<String> = states(&cluster)
        .into_iter()
        .filter(|(_, s)| *s == TransactionState::CompleteCommit)
        .map(|(id, _)| id)
        .collect();
    for id in &txns {
        assert!(complete.contains(id), "{id} was committed and is gone");
    }
    // The journal alone: the disk full to the last byte, transactions
    // until one fails (its frame crosses into a page the disk does not
    // have), then space again, more transactions, a reopen.
    fill(&filler, 0);
    let (mut journal_txns, mut journal_failed) = (Vec::new(), 0);
    for i in 0..2000 {
        let id = format!("j-{i}");
        let done = async {
            let tx = cluster.transactions().begin(&id).await?;
            tx.commit().await
        };
        match done.await {
            Ok(()) => journal_txns.push(id),
            Err(_) => journal_failed += 1,
        }
        if journal_failed >= 3 {
            break;
        }
    }
    assert!(journal_failed > 0, "the journal never met a full disk");
    fs::remove_file(&filler).unwrap();
    for i in 0..3 {
        let id = format!("after-{i}");
        let tx = cluster.transactions().begin(&id).await.unwrap();
        tx.commit().await.unwrap();
        journal_txns.push(id);
    }
    drop(cluster);
    let cluster = BrokerCluster::open(config, ManualClock::new()).unwrap();
    let report = cluster.last_recovery();
    assert_eq!(report.journal_truncated_bytes, 0, "{report:?}");
    let complete: Vec<String> = states(&cluster)
        .into_iter()
        .filter(|(_, s)| *s == TransactionState::CompleteCommit)
        .map(|(id, _)| id)
        .collect();
    for id in &journal_txns {
        assert!(complete.contains(id), "{id} was committed and is gone");
    }
    println!(
        "full tmpfs: {} appends acknowledged, {failed} refused, {} transactions committed; journal alone: {} committed, {journal_failed} refused; all kept",
        acked.len(),
        txns.len(),
        journal_txns.len()
    );
}

/// Writes `filler` until the file system is full, then gives back `leave`
/// bytes.
fn fill(filler: &Path, leave: u64) {
    use std::io::Write;
    let mut file = fs::File::create(filler).unwrap();
    let chunk = vec![0u8; 4096];
    while file.write_all(&chunk).is_ok() {}
    while file.write_all(&[0]).is_ok() {}
    let len = file.metadata().unwrap().len();
    file.set_len(len.saturating_sub(leave)).unwrap();
}

// ---------------------------------------------------------------------------
// Recordings on a full disk.

const RECORDING_TMPFS_ENV: &str = "MK_TEST_RECORDING_TMPFS_DIR";

/// Issue 25: a recording written on a full disk (`serve --record`,
/// `observe --record`, the dashboard's `--record`) ends in a whole line,
/// so `check` and `state` read it up to the failure; before, it ended in
/// a half line and the whole file was refused. On a real 1 MiB tmpfs
/// (as above): the writer itself, then `serve REC --record F` and
/// `observe --record F` filling it.
#[test]
fn recordings_on_a_full_tmpfs_end_in_a_whole_line() {
    let Ok(dir) = std::env::var(RECORDING_TMPFS_ENV) else {
        in_a_tmpfs(
            "recordings_on_a_full_tmpfs_end_in_a_whole_line",
            RECORDING_TMPFS_ENV,
            "full tmpfs recordings: ",
        );
        return;
    };
    recordings_fill_a_tmpfs(Path::new(&dir));
}

/// A recording of `steps` produce steps with 1000-byte values.
fn big_recording(steps: usize) -> String {
    let mut text = String::from(
        r#"{"mk_recording":1,"title":"big","rules":"minikafka","cluster":{"brokers":[1],"topics":[{"name":"out","partitions":1,"replication_factor":1}]}}"#,
    );
    text.push('\n');
    for i in 0..steps {
        text.push_str(&format!(
            r#"{{"at_ms":{i},"action":{{"produce":{{"topic":"out","partition":0,"value":"{i:04}{}"}}}}}}"#,
            "x".repeat(996)
        ));
        text.push('\n');
    }
    text
}

/// `mk-tui check FILE` succeeds; the file ends in a newline; its steps.
fn whole(file: &Path) -> usize {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .arg("check")
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = fs::read_to_string(file).unwrap();
    assert!(text.ends_with('\n'), "{}", file.display());
    text.lines().count() - 1
}

fn recordings_fill_a_tmpfs(root: &Path) {
    use minikafka::session::{Recording, RecordingWriter};
    let filler = root.join("filler");
    // The writer: appends until the disk is full, then after space is back.
    let big = Recording::parse("big.jsonl", &big_recording(1)).unwrap();
    let file = root.join("writer.jsonl");
    let mut writer = RecordingWriter::create(&file, &big.header).unwrap();
    fill(&filler, 0);
    let mut appended = 0;
    let err = loop {
        match writer.append(&big.steps[0]) {
            Ok(()) => appended += 1,
            Err(e) => break e,
        }
        assert!(appended < 100, "the disk never filled");
    };
    assert_eq!(err.raw_os_error(), Some(libc::ENOSPC), "{err}");
    assert_eq!(
        whole(&file),
        appended,
        "every whole step, the failed one cut"
    );
    fs::remove_file(&filler).unwrap();
    writer.append(&big.steps[0]).unwrap();
    assert_eq!(
        whole(&file),
        appended + 1,
        "appends go on once space is back"
    );
    drop(writer);

    // `serve REC --record F`: the recording's steps are written first, and
    // the disk fills among them.
    let inputs = tempfile::tempdir().unwrap();
    let rec = inputs.path().join("big.jsonl");
    fs::write(&rec, big_recording(300)).unwrap();
    fill(&filler, 8 << 10);
    let served = root.join("served.jsonl");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .arg("serve")
        .arg(&rec)
        .args(["--listen", "127.0.0.1:0", "--record"])
        .arg(&served)
        .env("TMPDIR", inputs.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    let served_steps = whole(&served);
    assert!(served_steps < 300, "{served_steps}");
    fs::remove_file(&filler).unwrap();

    // `observe --record F`: each refresh is a line; the disk fills and the
    // observer stops (exit 2) with a whole recording.
    let address = fake_kafka::Fake::with_batches(40, 1).start();
    fill(&filler, 64 << 10);
    let observed = root.join("observed.jsonl");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .args(["observe", "--bootstrap", &address, "--interval", "100"])
        .args(["--refreshes", "100", "--record"])
        .arg(&observed)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    let refreshes = whole(&observed);
    assert!((1..100).contains(&refreshes), "{refreshes}");
    println!(
        "full tmpfs recordings: the writer kept {appended} whole steps, serve --record {served_steps}, observe --record {refreshes} refreshes"
    );
}

// ---------------------------------------------------------------------------
// A completion that fails part way.

/// A commit whose COMPLETE_COMMIT frame, or whose publication of the staged
/// offsets, fails on a full disk returns the error and stays
/// PREPARE_COMMIT; committing again resumes it (no second marker) instead
/// of being refused as "already in progress" until a restart.
#[tokio::test]
async fn a_commit_that_failed_after_its_prepare_can_be_committed_again() {
    for file in ["transactions.journal", OFFSETS_FILE] {
        let t = TestCluster::new(&[1], 1);
        t.cluster.create_topic("out", 1, 1).unwrap();
        let p = tp("out", 0);
        let tx = t.cluster.transactions().begin("tx").await.unwrap();
        tx.send_record("out", Some(0), None, "v").await.unwrap();
        tx.send_offsets("g", [(tp("out", 0), 1)]).await.unwrap();
        let path = t.dir.path().join(file);
        // The journal's first write in the commit is PREPARE_COMMIT, its
        // second COMPLETE_COMMIT; offsets.json is written once.
        let nth = if file == OFFSETS_FILE { 1 } else { 2 };
        {
            let _fault = inject(
                &path,
                FileOp::Write,
                nth,
                Effect::Short {
                    written: 3,
                    errno: Errno::NoSpace,
                },
            );
            let err = tx.commit().await.unwrap_err();
            assert!(err.to_string().contains(file), "{file}: {err}");
        }
        assert_eq!(
            states(&t.cluster),
            [("tx".to_string(), TransactionState::PrepareCommit)],
            "{file}"
        );
        tx.commit().await.unwrap();
        assert_eq!(committed(&t.cluster, &p), ["v"], "{file}");
        assert_eq!(t.cluster.offsets().get("g", &p), Some(1), "{file}");
        let markers = t
            .cluster
            .leader_log(&p)
            .unwrap()
            .all_batches()
            .unwrap()
            .iter()
            .filter(|b| b.is_control())
            .count();
        assert_eq!(markers, 1, "{file}: one COMMIT marker");
        assert!(t.cluster.crash().unwrap().is_clean(), "{file}");
        assert_eq!(
            states(&t.cluster),
            [("tx".to_string(), TransactionState::CompleteCommit)],
            "{file}"
        );
    }
}

/// A follower's fetch whose write fails is cut back too: the next fetch
/// copies the batch again, and the acks=all append completes.
#[tokio::test]
async fn a_failed_follower_write_is_cut_back_and_fetched_again() {
    for (name, op, effect) in failures(true) {
        let t = TestCluster::with_config(&[1, 2], |mut c| {
            c.fsync_log = true;
            c.with_min_insync_replicas(2)
        });
        t.cluster.create_topic("out", 1, 2).unwrap();
        let p = tp("out", 0);
        let segment = t
            .cluster
            .replica_log(&p, 2)
            .unwrap()
            .segment_paths()
            .unwrap()
            .pop()
            .unwrap();
        let ack = t.append(&p, "v1", AckMode::All);
        {
            let _fault = inject(&segment, op, 1, effect);
            let err = t.cluster.replicate_all_once().unwrap_err();
            assert!(err.to_string().contains("broker-2"), "{name}: {err}");
        }
        assert_eq!(size(&segment), 0, "{name}: cut back");
        t.cluster.replicate_all_once().unwrap();
        assert_eq!(ack.await.unwrap().base_offset(), Some(0), "{name}");
        let follower = t.cluster.replica_log(&p, 2).unwrap();
        assert_eq!(follower.log_end_offset().unwrap(), 1, "{name}");
        assert!(t.cluster.crash().unwrap().is_clean(), "{name}");
        assert_eq!(t.visible(&p), ["v1"], "{name}");
    }
}

// ---------------------------------------------------------------------------
// Failures anywhere, at random.

/// A small deterministic generator (xorshift64*): no wall clock, no hash
/// order, the same cases on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// `common::drive`, but a replication round that fails (an injected
/// failure on a follower's write) is only tried again next round, and half
/// way the clock passes `replica_lag_time_ms`, so an offline follower
/// leaves the ISR. `None`: still waiting after `rounds` rounds (an acks=all
/// wait on an offline follower that was in the ISR when the batch was
/// appended waits, as for a stopped one, until a crash): not acknowledged.
async fn drive_through_failures<T: Send + 'static>(
    t: &TestCluster,
    fut: impl std::future::Future<Output = T> + Send + 'static,
    rounds: usize,
) -> Option<T> {
    let task = tokio::spawn(fut);
    for round in 0..=rounds {
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        if task.is_finished() {
            return Some(task.await.unwrap());
        }
        if round == rounds / 2 {
            let lag = t.cluster.config().replica_lag_time_ms;
            t.clock.advance(lag + 1);
            let _ = t.cluster.tick();
        }
        let _ = t.cluster.replicate_all_once();
    }
    task.abort();
    None
}

/// A two-broker cluster on `/dev/shm` where the machine has it: the
/// engine's logic is under test, not the disk's fsync latency.
fn shm_cluster(
    tweak: impl FnOnce(minikafka::engine::MiniKafkaConfig) -> minikafka::engine::MiniKafkaConfig,
) -> TestCluster {
    use minikafka::engine::{ManualClock, MiniKafkaConfig};
    let dir = tempfile::tempdir_in("/dev/shm").unwrap_or_else(|_| tempfile::tempdir().unwrap());
    let clock = ManualClock::new();
    let config = tweak(MiniKafkaConfig::new(dir.path()).with_brokers([1, 2]));
    let cluster = BrokerCluster::open(config, clock.clone()).unwrap();
    TestCluster {
        dir,
        clock,
        cluster,
    }
}

/// Every file a step may write, for the fault to pick from.
fn writable_files(t: &TestCluster) -> Vec<PathBuf> {
    let mut files = vec![
        journal_path(&t.cluster),
        t.dir.path().join(OFFSETS_FILE),
        t.dir.path().join(CHECKPOINT_FILE),
    ];
    for p in [tp("out", 0), tp("out", 1)] {
        for broker in [1, 2] {
            let log = t.cluster.replica_log(&p, broker).unwrap();
            let segment = log.segment_paths().unwrap().pop().unwrap();
            files.push(segment.with_extension("index"));
            files.push(segment);
        }
    }
    files
}

/// 300 seeded cases of 30 steps (appends with acks=1 and acks=all,
/// transactions with offsets, offset commits, replication, checkpoint
/// flushes), each step run under one injected failure of a write or fsync
/// of any file it may touch (ENOSPC or EIO, nothing or part of the buffer
/// written), and one step in ten also under a failure of the cut back
/// (offline until the crash). Whatever failed, the crash at the end cuts
/// nothing unless a cut back failed, and every
/// acknowledged record is in the leader's log at its offset, every
/// committed transaction is read_committed, every acknowledged offset
/// commit is there.
#[tokio::test]
async fn random_write_failures_never_lose_an_acknowledged_write() {
    let (mut injected, mut refused, mut acknowledged, mut no_cuts) = (0, 0, 0, 0);
    for seed in 1..=300u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let t = shm_cluster(|mut c| {
            c.segment_max_bytes = 400;
            c.index_interval_bytes = 64;
            c.with_min_insync_replicas(1)
        });
        t.cluster.create_topic("out", 2, 2).unwrap();
        let mut acked: Vec<(TopicPartition, i64, String)> = Vec::new();
        let mut committed_values: Vec<(TopicPartition, String)> = Vec::new();
        let mut offset_commit: Option<i64> = None;
        let mut cuts_failed = false;
        for step in 0..30 {
            let files = writable_files(&t);
            let file = files[rng.below(files.len() as u64) as usize].clone();
            let op = if rng.below(4) == 0 {
                FileOp::Sync
            } else {
                FileOp::Write
            };
            let errno = if rng.below(2) == 0 {
                Errno::NoSpace
            } else {
                Errno::Io
            };
            let effect = match rng.below(3) {
                0 => Effect::Fail(errno),
                _ => Effect::Short {
                    written: rng.below(40) as usize,
                    errno,
                },
            };
            let p = tp("out", rng.below(2) as u32);
            let value = format!("s{seed}-{step}");
            let fault = inject(&file, op, 1 + rng.below(2), effect);
            // One step in ten: the cut back fails too, and the file's log or
            // journal goes offline until the crash at the end.
            let _no_cut = (rng.below(10) == 0).then(|| {
                cuts_failed = true;
                no_cuts += 1;
                inject(&file, FileOp::Truncate, 1, Effect::Fail(Errno::Io))
            });
            injected += 1;
            let ok = match rng.below(6) {
                0 | 1 => {
                    let acks = if rng.below(2) == 0 {
                        AckMode::Leader
                    } else {
                        AckMode::All
                    };
                    let ack =
                        t.cluster
                            .append_batch(&p, RecordBatch::of_values([value.as_str()]), acks);
                    match drive_through_failures(&t, ack, 8).await {
                        Some(Ok(r)) => {
                            acked.push((p.clone(), r.base_offset().unwrap(), value.clone()));
                            true
                        }
                        Some(Err(_)) | None => false,
                    }
                }
                2 => {
                    let c = t.cluster.clone();
                    let (q, v) = (p.clone(), value.clone());
                    let done = drive_through_failures(
                        &t,
                        async move {
                            let tx = c.transactions().begin("tx").await?;
                            tx.send_record(&q.topic, Some(q.partition), None, v).await?;
                            // Another group than the direct commits': a
                            // commit left in PREPARE_COMMIT is completed by
                            // the crash's recovery, unacknowledged.
                            tx.send_offsets("tg", [(tp("out", 0), 5)]).await?;
                            tx.commit().await
                        },
                        16,
                    )
                    .await;
                    drop(fault);
                    let done = match done {
                        Some(Ok(())) => true,
                        None => false,
                        // Whatever step failed, end the transaction without
                        // faults: abort it, or commit it again if it had
                        // reached PREPARE_COMMIT.
                        Some(Err(_)) => {
                            let tx = t.cluster.transactions().resume("tx");
                            let state = t.cluster.transactions().get("tx").map(|d| d.state);
                            match (tx, state) {
                                (Ok(tx), Some(TransactionState::PrepareCommit)) => matches!(
                                    drive_through_failures(
                                        &t,
                                        async move { tx.commit().await },
                                        16
                                    )
                                    .await,
                                    Some(Ok(()))
                                ),
                                (Ok(tx), Some(TransactionState::Ongoing)) => {
                                    let _ = drive_through_failures(
                                        &t,
                                        async move { tx.abort().await },
                                        16,
                                    )
                                    .await;
                                    false
                                }
                                _ => false,
                            }
                        }
                    };
                    if done {
                        committed_values.push((p.clone(), value.clone()));
                    }
                    done
                }
                3 => {
                    let offset = rng.below(100) as i64;
                    let done = t
                        .cluster
                        .offsets()
                        .commit("g", &tp("out", 0), offset)
                        .is_ok();
                    if done {
                        offset_commit = Some(offset);
                    }
                    done
                }
                4 => t.cluster.replicate_all_once().is_ok(),
                _ => t.cluster.flush().is_ok(),
            };
            if ok {
                acknowledged += 1;
            } else {
                refused += 1;
            }
        }
        // Replication settles without faults (a log that went offline
        // stays so), then the process dies.
        for _ in 0..2 {
            let _ = t.cluster.replicate_all_once();
        }
        let report = t.cluster.crash().unwrap();
        // A cut that failed leaves the unacknowledged tail for recovery.
        assert!(
            cuts_failed
                || (report.logs_truncated.is_empty() && report.journal_truncated_bytes == 0),
            "seed {seed}: {report:?}"
        );
        for (p, offset, value) in &acked {
            let log = t.cluster.leader_log(p).unwrap();
            let record = log.fetch(*offset, 1).unwrap();
            assert_eq!(
                common::values(&record),
                std::slice::from_ref(value),
                "seed {seed}: {p} offset {offset}"
            );
        }
        t.cluster.replicate_all_once().unwrap();
        for (p, value) in &committed_values {
            assert!(
                committed(&t.cluster, p).contains(value),
                "seed {seed}: committed {value} on {p} is not read_committed"
            );
        }
        assert_eq!(
            t.cluster.offsets().get("g", &tp("out", 0)),
            offset_commit,
            "seed {seed}"
        );
    }
    println!(
        "random write failures: {injected} faults ({no_cuts} with a failing cut back), {acknowledged} operations acknowledged, {refused} refused, nothing lost"
    );
}
