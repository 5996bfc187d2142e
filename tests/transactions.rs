//! E9-E12: transactions as in chapter 8: the focused two-replica tests, the
//! visibility experiment, offsets atomicity, restart, the LSO, interleaving,
//! and the bad-input rules.

mod common;

use common::{TestCluster, committed, drive, read, tp};
use minikafka::engine::transaction::TransactionState;
use minikafka::engine::{AckMode, ControlType, IsolationLevel, MiniKafkaError, RecordBatch};

fn single() -> TestCluster {
    let t = TestCluster::new(&[1], 1);
    t.cluster.create_topic("out", 1, 1).unwrap();
    t.cluster.create_topic("in", 1, 1).unwrap();
    t
}

fn two_replicas() -> TestCluster {
    let t = TestCluster::new(&[1, 2], 1);
    t.cluster.create_topic("out", 1, 2).unwrap();
    t
}

/// The chapter's focused tests: on a two-replica partition the data, the
/// COMMIT marker and the ABORT marker each stay pending until
/// `replicate_all_once`.
#[tokio::test]
async fn data_and_commit_marker_stay_pending_until_replication() {
    let t = two_replicas();
    let out = tp("out", 0);
    let tx = t.cluster.transactions().begin("tx-1").await.unwrap();
    let send = tokio::spawn({
        let tx = tx.clone();
        async move { tx.send("out", b"pending".to_vec()).await }
    });
    tokio::task::yield_now().await;
    assert!(!send.is_finished(), "data waits for acks=all");
    assert!(
        t.cluster
            .transactions()
            .get("tx-1")
            .unwrap()
            .partitions
            .is_empty(),
        "journaled only after the ack"
    );
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(send.await.unwrap().unwrap(), (out.clone(), 0));

    let commit = tokio::spawn({
        let tx = tx.clone();
        async move { tx.commit().await }
    });
    for _ in 0..4 {
        tokio::task::yield_now().await;
    }
    assert!(
        !commit.is_finished(),
        "the COMMIT marker waits for acks=all"
    );
    assert_eq!(
        t.cluster.transactions().get("tx-1").unwrap().state,
        TransactionState::PrepareCommit
    );
    assert!(
        committed(&t.cluster, &out).is_empty(),
        "PREPARE_COMMIT is not yet visible"
    );
    assert_eq!(
        t.cluster.replica_set(&out).unwrap().pending()[0].waiting_for,
        [2]
    );
    t.cluster.replicate_all_once().unwrap();
    commit.await.unwrap().unwrap();
    assert_eq!(
        t.cluster.transactions().get("tx-1").unwrap().state,
        TransactionState::CompleteCommit
    );
    assert_eq!(committed(&t.cluster, &out), ["pending"]);
}

#[tokio::test]
async fn the_abort_marker_stays_pending_until_replication() {
    let t = two_replicas();
    let out = tp("out", 0);
    let tx = t.cluster.transactions().begin("tx-2").await.unwrap();
    drive(
        &t.cluster,
        {
            let tx = tx.clone();
            async move { tx.send("out", b"discard-me".to_vec()).await }
        },
        5,
    )
    .await
    .unwrap();
    let abort = tokio::spawn({
        let tx = tx.clone();
        async move { tx.abort().await }
    });
    for _ in 0..4 {
        tokio::task::yield_now().await;
    }
    assert!(!abort.is_finished(), "the ABORT marker waits for acks=all");
    assert_eq!(
        t.cluster.transactions().get("tx-2").unwrap().state,
        TransactionState::PrepareAbort
    );
    t.cluster.replicate_all_once().unwrap();
    abort.await.unwrap().unwrap();
    assert_eq!(
        t.cluster.transactions().get("tx-2").unwrap().state,
        TransactionState::CompleteAbort
    );
    assert!(committed(&t.cluster, &out).is_empty());
    let follower = t
        .cluster
        .replica_log(&out, 2)
        .unwrap()
        .all_batches()
        .unwrap();
    assert_eq!(
        follower.last().unwrap().control,
        Some(ControlType::Abort),
        "the follower has the marker"
    );
}

/// The chapter's experiment, and "aborted data stays physically in the log".
#[tokio::test]
async fn visibility_and_abort_as_in_the_chapter() {
    let t = single();
    let out = tp("out", 0);
    let tx = t.cluster.transactions().begin("tx-1").await.unwrap();
    tx.send("out", b"pending".to_vec()).await.unwrap();
    assert_eq!(
        read(&t.cluster, &out, IsolationLevel::ReadUncommitted),
        ["pending"]
    );
    assert!(committed(&t.cluster, &out).is_empty());
    assert_eq!(t.cluster.last_stable_offset(&out).unwrap(), 0);
    assert_eq!(
        t.cluster.replica_set(&out).unwrap().high_watermark(),
        1,
        "HW includes open data"
    );
    tx.commit().await.unwrap();
    assert_eq!(committed(&t.cluster, &out), ["pending"]);
    let tx2 = t.cluster.transactions().begin("tx-2").await.unwrap();
    tx2.send("out", b"discard-me".to_vec()).await.unwrap();
    tx2.abort().await.unwrap();
    assert_eq!(committed(&t.cluster, &out), ["pending"]);
    assert_eq!(
        read(&t.cluster, &out, IsolationLevel::ReadUncommitted),
        ["pending", "discard-me"]
    );
    let batches = t.cluster.leader_log(&out).unwrap().all_batches().unwrap();
    let kinds: Vec<_> = batches
        .iter()
        .map(|b| (b.transactional_id.clone().unwrap(), b.control))
        .collect();
    assert_eq!(
        kinds,
        [
            ("tx-1".to_string(), None),
            ("tx-1".to_string(), Some(ControlType::Commit)),
            ("tx-2".to_string(), None),
            ("tx-2".to_string(), Some(ControlType::Abort)),
        ]
    );
}

/// Output and input progress commit together; abort discards staged offsets.
#[tokio::test]
async fn output_and_offsets_commit_atomically_and_abort_discards_them() {
    let t = single();
    let input = tp("in", 0);
    let tx = t.cluster.transactions().begin("tx-1").await.unwrap();
    tx.send("out", b"result".to_vec()).await.unwrap();
    tx.send_offsets("workers", [(input.clone(), 7)])
        .await
        .unwrap();
    assert_eq!(
        t.cluster.offsets().get("workers", &input),
        None,
        "staged only"
    );
    let staged = t.cluster.transactions().get("tx-1").unwrap().staged_offsets;
    assert_eq!(staged["workers"][&input], 7);
    tx.commit().await.unwrap();
    assert_eq!(t.cluster.offsets().get("workers", &input), Some(7));
    assert_eq!(committed(&t.cluster, &tp("out", 0)), ["result"]);

    let tx = t.cluster.transactions().begin("tx-2").await.unwrap();
    tx.send("out", b"undone".to_vec()).await.unwrap();
    tx.send_offsets("workers", [(input.clone(), 9)])
        .await
        .unwrap();
    tx.abort().await.unwrap();
    assert_eq!(
        t.cluster.offsets().get("workers", &input),
        Some(7),
        "abort discards the staged 9"
    );
    assert!(
        t.cluster
            .transactions()
            .get("tx-2")
            .unwrap()
            .staged_offsets
            .is_empty()
    );
    assert_eq!(committed(&t.cluster, &tp("out", 0)), ["result"]);
}

/// The chapter's restart test: committed data stays visible, PREPARE_COMMIT
/// completes its offsets, and a torn last journal frame is truncated.
#[tokio::test]
async fn restart_keeps_committed_data_and_completes_prepare_commit() {
    let t = single();
    let out = tp("out", 0);
    let input = tp("in", 0);
    let done = t.cluster.transactions().begin("done").await.unwrap();
    done.send("out", b"committed".to_vec()).await.unwrap();
    done.commit().await.unwrap();
    let tx = t.cluster.transactions().begin("half").await.unwrap();
    tx.send("out", b"decided".to_vec()).await.unwrap();
    tx.send_offsets("workers", [(input.clone(), 7)])
        .await
        .unwrap();
    let outcome = tx
        .commit_until(Some("prepare".parse().unwrap()))
        .await
        .unwrap();
    let minikafka::engine::transaction::EndOutcome::Crashed(report) = outcome else {
        panic!("the cut point crashes");
    };
    assert_eq!(report.completed.len(), 1);
    assert_eq!(report.completed[0].id, "half");
    assert_eq!(report.completed[0].from, TransactionState::PrepareCommit);
    assert_eq!(
        t.cluster.transactions().get("half").unwrap().state,
        TransactionState::CompleteCommit
    );
    assert_eq!(
        t.cluster.offsets().get("workers", &input),
        Some(7),
        "recovery published the staged offsets"
    );
    assert_eq!(committed(&t.cluster, &out), ["committed", "decided"]);
    assert!(
        report.markers_resent.is_empty(),
        "the book's rules do not re-send markers"
    );
    let markers = t
        .cluster
        .leader_log(&out)
        .unwrap()
        .all_batches()
        .unwrap()
        .iter()
        .filter(|b| b.is_control())
        .count();
    assert_eq!(markers, 1, "only the first transaction's marker");
    // Plain close and reopen too (handles hold the cluster open).
    drop((done, tx));
    let t = t.reopen();
    assert!(t.cluster.last_recovery().is_clean());
    assert_eq!(committed(&t.cluster, &out), ["committed", "decided"]);
}

#[tokio::test]
async fn a_torn_last_journal_frame_falls_back_to_the_previous_state() {
    use minikafka::engine::fault::{Tear, TearTarget};
    let t = single();
    let tx = t.cluster.transactions().begin("tx-1").await.unwrap();
    tx.send("out", b"v".to_vec()).await.unwrap();
    tx.send_offsets("workers", [(tp("in", 0), 3)])
        .await
        .unwrap();
    let frames = t.cluster.with_state(|s| {
        s.transactions()
            .journal_frames()
            .iter()
            .cloned()
            .collect::<Vec<_>>()
    });
    assert_eq!(frames.len(), 3);
    let (_, report) = t
        .cluster
        .tear(&TearTarget::Journal, &Tear::CutBytes(5))
        .unwrap();
    assert_eq!(report.journal_truncated_bytes, frames[2].len - 5);
    let data = t.cluster.transactions().get("tx-1").unwrap();
    assert_eq!(data.state, TransactionState::Ongoing);
    assert!(
        data.staged_offsets.is_empty(),
        "the staged offsets were in the torn frame"
    );
    assert_eq!(data.partitions, [tp("out", 0)]);
    assert_eq!(report.left_open, ["tx-1"]);
    let size = t.cluster.with_state(|s| s.transactions().journal_size());
    assert_eq!(size, frames[1].offset + frames[1].len);
}

/// E11: an open transaction holds back later non-transactional records from
/// read_committed; the HW does not.
#[tokio::test]
async fn the_lso_blocks_later_non_transactional_records() {
    let t = single();
    let out = tp("out", 0);
    t.append(&out, "before", AckMode::Leader).await.unwrap();
    let tx = t.cluster.transactions().begin("tx-1").await.unwrap();
    tx.send("out", b"open".to_vec()).await.unwrap();
    t.append(&out, "after", AckMode::Leader).await.unwrap();
    assert_eq!(t.cluster.replica_set(&out).unwrap().high_watermark(), 3);
    assert_eq!(t.cluster.last_stable_offset(&out).unwrap(), 1);
    assert_eq!(
        read(&t.cluster, &out, IsolationLevel::ReadUncommitted),
        ["before", "open", "after"]
    );
    assert_eq!(
        committed(&t.cluster, &out),
        ["before"],
        "'after' waits behind the open transaction"
    );
    tx.abort().await.unwrap();
    assert_eq!(t.cluster.last_stable_offset(&out).unwrap(), 4);
    assert_eq!(
        committed(&t.cluster, &out),
        ["before", "after"],
        "aborted data is filtered below the new LSO"
    );
}

/// Interleaved transactions over several partitions: each commits or aborts
/// on its own; the LSO follows the earliest open one.
#[tokio::test]
async fn interleaved_transactions_over_several_partitions() {
    let t = TestCluster::new(&[1], 1);
    t.cluster.create_topic("out", 2, 1).unwrap();
    let (p0, p1) = (tp("out", 0), tp("out", 1));
    let a = t.cluster.transactions().begin("a").await.unwrap();
    let b = t.cluster.transactions().begin("b").await.unwrap();
    a.send_record("out", Some(0), None, "a0").await.unwrap();
    b.send_record("out", Some(0), None, "b0").await.unwrap();
    b.send_record("out", Some(1), None, "b1").await.unwrap();
    a.send_record("out", Some(1), None, "a1").await.unwrap();
    assert_eq!(
        (
            t.cluster.last_stable_offset(&p0).unwrap(),
            t.cluster.last_stable_offset(&p1).unwrap()
        ),
        (0, 0)
    );
    b.commit().await.unwrap();
    assert_eq!(
        t.cluster.last_stable_offset(&p0).unwrap(),
        0,
        "a is still open on p0"
    );
    assert!(committed(&t.cluster, &p0).is_empty());
    a.abort().await.unwrap();
    assert_eq!(committed(&t.cluster, &p0), ["b0"]);
    assert_eq!(committed(&t.cluster, &p1), ["b1"]);
    let data = t.cluster.transactions().get("b").unwrap();
    assert_eq!(data.partitions, [p0.clone(), p1.clone()]);
    assert_eq!(data.first_offsets, [(p0, 1), (p1, 0)]);
}

/// Bad input: typed errors, and the journal and logs are unchanged.
#[tokio::test]
async fn invalid_operations_are_typed_errors_that_change_nothing() {
    let t = single();
    let tx = t.cluster.transactions().begin("tx-1").await.unwrap();
    tx.send("out", b"v".to_vec()).await.unwrap();
    let snapshot = |t: &TestCluster| {
        (
            std::fs::read(t.dir.path().join("transactions.journal")).unwrap(),
            t.cluster
                .leader_log(&tp("out", 0))
                .unwrap()
                .all_batches()
                .unwrap(),
        )
    };
    let before = snapshot(&t);
    let err = t.cluster.transactions().begin("tx-1").await.unwrap_err();
    assert!(
        matches!(err, MiniKafkaError::TransactionAlreadyActive { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("ongoing"));
    let err = tx.send("nope", b"x".to_vec()).await.unwrap_err();
    assert!(
        matches!(err, MiniKafkaError::UnknownTopicOrPartition(_)),
        "{err}"
    );
    assert_eq!(snapshot(&t), before);

    tx.commit().await.unwrap();
    let before = snapshot(&t);
    for err in [
        tx.send("out", b"late".to_vec()).await.unwrap_err(),
        tx.commit().await.unwrap_err(),
        tx.abort().await.unwrap_err(),
        tx.send_offsets("g", [(tp("in", 0), 1)]).await.unwrap_err(),
    ] {
        assert!(
            matches!(err, MiniKafkaError::InvalidTransactionState { .. }),
            "{err}"
        );
        assert!(err.to_string().contains("complete_commit"), "{err}");
    }
    assert_eq!(snapshot(&t), before);
    assert!(matches!(
        t.cluster.transactions().resume("never"),
        Err(MiniKafkaError::UnknownTransaction(_))
    ));
}

/// Book flaw fixed under both rules: an id reused after an abort must not
/// make the aborted instance's data visible.
#[tokio::test]
async fn visibility_is_per_transaction_instance_not_per_id() {
    let t = single();
    let out = tp("out", 0);
    let first = t.cluster.transactions().begin("reused").await.unwrap();
    first.send("out", b"aborted".to_vec()).await.unwrap();
    first.abort().await.unwrap();
    let second = t.cluster.transactions().begin("reused").await.unwrap();
    second.send("out", b"committed".to_vec()).await.unwrap();
    second.commit().await.unwrap();
    assert_eq!(committed(&t.cluster, &out), ["committed"]);
    // and after a restart, from the journal alone
    t.cluster.crash().unwrap();
    assert_eq!(committed(&t.cluster, &out), ["committed"]);
    let instances = t.cluster.with_state(|s| s.transactions().instances().len());
    assert_eq!(instances, 2);
}

/// Book flaw fixed under both rules: an ONGOING transaction found after a
/// crash can be aborted, so it does not block read_committed forever.
#[tokio::test]
async fn an_ongoing_transaction_left_by_a_crash_can_be_aborted() {
    let t = single();
    let out = tp("out", 0);
    let tx = t.cluster.transactions().begin("stuck").await.unwrap();
    tx.send("out", b"orphan".to_vec()).await.unwrap();
    t.append(&out, "later", AckMode::Leader).await.unwrap();
    let report = t.cluster.crash().unwrap();
    assert_eq!(report.left_open, ["stuck"]);
    assert!(
        committed(&t.cluster, &out).is_empty(),
        "blocked by the open transaction"
    );
    let resumed = t.cluster.transactions().resume("stuck").unwrap();
    resumed.abort().await.unwrap();
    assert_eq!(committed(&t.cluster, &out), ["later"]);
}

/// A marker refused (min ISR) leaves PREPARE_COMMIT; commit can be called
/// again and resumes without writing a marker twice.
#[tokio::test]
async fn a_failed_marker_leaves_prepare_and_commit_resumes() {
    let t = TestCluster::new(&[1, 2], 2);
    t.cluster.create_topic("out", 1, 2).unwrap();
    let out = tp("out", 0);
    let tx = t.cluster.transactions().begin("tx").await.unwrap();
    drive(
        &t.cluster,
        {
            let tx = tx.clone();
            async move { tx.send("out", b"v".to_vec()).await }
        },
        5,
    )
    .await
    .unwrap();
    t.cluster.stop_broker(2).unwrap();
    t.clock.advance(10_001);
    t.cluster.replicate_all_once().unwrap(); // the round judges the ISR: 2 leaves
    let err = tx.commit().await.unwrap_err();
    assert!(
        matches!(err, MiniKafkaError::NotEnoughReplicas { .. }),
        "{err}"
    );
    assert_eq!(
        t.cluster.transactions().get("tx").unwrap().state,
        TransactionState::PrepareCommit
    );
    t.cluster.start_broker(2).unwrap();
    t.cluster.replicate_all_once().unwrap(); // broker 2 catches up and rejoins the ISR
    drive(
        &t.cluster,
        {
            let tx = tx.clone();
            async move { tx.commit().await }
        },
        5,
    )
    .await
    .unwrap();
    assert_eq!(
        t.cluster.transactions().get("tx").unwrap().state,
        TransactionState::CompleteCommit
    );
    let markers = t
        .cluster
        .leader_log(&out)
        .unwrap()
        .all_batches()
        .unwrap()
        .iter()
        .filter(|b| b.is_control())
        .count();
    assert_eq!(markers, 1);
    assert_eq!(committed(&t.cluster, &out), ["v"]);
}

/// A raw transactional batch without a transaction (no journal entry) is
/// never committed.
#[tokio::test]
async fn orphan_transactional_data_is_never_committed() {
    let t = single();
    let out = tp("out", 0);
    t.cluster
        .append_batch(
            &out,
            RecordBatch::of_values(["orphan"]).with_transactional_id("ghost"),
            AckMode::Leader,
        )
        .await
        .unwrap();
    assert_eq!(
        read(&t.cluster, &out, IsolationLevel::ReadUncommitted),
        ["orphan"]
    );
    assert!(committed(&t.cluster, &out).is_empty());
}

/// The sync floor of a transaction (docs/performance.md, P7): a commit that
/// staged no offsets journals its four frames and leaves `offsets.json`
/// as the last commit that staged some wrote it (the same file, not a
/// replacement with the same bytes); one that stages an offset replaces it.
#[tokio::test]
async fn a_transaction_without_offsets_journals_four_frames_and_leaves_offsets_json() {
    use minikafka::engine::consumer::offsets::OFFSETS_FILE;
    use std::os::unix::fs::MetadataExt;
    let t = single();
    let path = t.dir.path().join(OFFSETS_FILE);
    let inode = || std::fs::metadata(&path).unwrap().ino();
    let frames = || {
        t.cluster
            .with_state(|s| s.transactions().journal_frames().len())
    };
    let tx = t.cluster.transactions().begin("tx").await.unwrap();
    tx.send("out", b"first".to_vec()).await.unwrap();
    tx.send_offsets("workers", [(tp("in", 0), 7)])
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let (written, bytes) = (inode(), std::fs::read(&path).unwrap());
    for i in 0..3 {
        let before = frames();
        let tx = t.cluster.transactions().begin("tx").await.unwrap();
        tx.send("out", format!("v{i}").into_bytes()).await.unwrap();
        tx.commit().await.unwrap();
        assert_eq!(frames() - before, 4, "ONGOING x2, PREPARE, COMPLETE");
        assert_eq!(inode(), written, "offsets.json not replaced");
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
    }
    let tx = t.cluster.transactions().begin("tx").await.unwrap();
    tx.send("out", b"last".to_vec()).await.unwrap();
    tx.send_offsets("workers", [(tp("in", 0), 8)])
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_ne!(inode(), written, "a staged offset replaces the file");
    assert_eq!(t.cluster.offsets().get("workers", &tp("in", 0)), Some(8));
    assert_eq!(committed(&t.cluster, &tp("out", 0)).len(), 5);
}
