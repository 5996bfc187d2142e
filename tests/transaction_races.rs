//! Transactions racing with crashes, fencing, out-of-order acks and torn
//! journals. Each test is a scenario found in review; it asserts the fixed
//! behaviour.

mod common;

use common::{TestCluster, committed, drive, tp};
use minikafka::engine::config::RuleSwitches;
use minikafka::engine::fault::{Tear, TearTarget};
use minikafka::engine::transaction::TransactionState;
use minikafka::engine::{AckMode, ControlType, MiniKafkaConfig, MiniKafkaError};

async fn settle() {
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
}

fn two(rules: RuleSwitches, partitions: u32) -> TestCluster {
    let t = TestCluster::with_config(&[1, 2], |c| MiniKafkaConfig { rules, ..c });
    t.cluster.create_topic("out", partitions, 2).unwrap();
    t
}

fn markers(t: &TestCluster, p: u32) -> Vec<(i64, ControlType)> {
    t.cluster
        .leader_log(&tp("out", p))
        .unwrap()
        .all_batches()
        .unwrap()
        .iter()
        .filter_map(|b| b.control.map(|c| (b.base_offset, c)))
        .collect()
}

/// Data of a new instance whose write was never journaled (a crash before
/// its ack) does not inherit the previous committed instance's fate.
#[tokio::test]
async fn an_unjournaled_write_does_not_inherit_the_previous_commit() {
    let t = two(RuleSwitches::default(), 1);
    let out = tp("out", 0);
    let a = t.cluster.transactions().begin("app").await.unwrap();
    drive(
        &t.cluster,
        {
            let a = a.clone();
            async move { a.send("out", "ok").await }
        },
        5,
    )
    .await
    .unwrap();
    drive(
        &t.cluster,
        {
            let a = a.clone();
            async move { a.commit().await }
        },
        5,
    )
    .await
    .unwrap();
    let b = t.cluster.transactions().begin("app").await.unwrap();
    let send = tokio::spawn(async move { b.send("out", "secret").await });
    settle().await;
    t.cluster.crash().unwrap();
    assert!(matches!(send.await.unwrap(), Err(MiniKafkaError::Crashed)));
    t.cluster.replicate_all_once().unwrap();
    t.cluster
        .transactions()
        .resume("app")
        .unwrap()
        .abort()
        .await
        .unwrap();
    assert_eq!(committed(&t.cluster, &out), ["ok"]);
}

/// A commit whose future outlives a crash writes nothing more.
#[tokio::test]
async fn a_commit_interrupted_by_a_crash_writes_no_marker_afterwards() {
    let t = two(RuleSwitches::default(), 2);
    let tx = t.cluster.transactions().begin("tx").await.unwrap();
    for p in [0, 1] {
        let tx = tx.clone();
        drive(
            &t.cluster,
            async move { tx.send_record("out", Some(p), None, "v").await },
            5,
        )
        .await
        .unwrap();
    }
    let commit = tokio::spawn({
        let tx = tx.clone();
        async move { tx.commit().await }
    });
    settle().await;
    t.cluster.replicate_all_once().unwrap(); // marker 0 acknowledged, future not polled yet
    let report = t.cluster.crash().unwrap();
    assert!(report.markers_resent.is_empty());
    settle().await;
    assert!(matches!(
        commit.await.unwrap(),
        Err(MiniKafkaError::Crashed)
    ));
    assert_eq!(
        markers(&t, 1),
        [],
        "the book's recovery writes no marker, and neither does the dead commit"
    );
    assert_eq!(
        t.cluster.transactions().get("tx").unwrap().state,
        TransactionState::CompleteCommit
    );
}

/// Kafka rules: a new begin during an in-flight commit completes and fences
/// it; the old commit stops and the new instance is untouched.
#[tokio::test]
async fn fencing_an_in_flight_commit_leaves_the_new_instance_alone() {
    let t = two(
        RuleSwitches {
            fence_zombies: true,
            ..RuleSwitches::default()
        },
        1,
    );
    let out = tp("out", 0);
    let old = t.cluster.transactions().begin("app").await.unwrap();
    drive(
        &t.cluster,
        {
            let o = old.clone();
            async move { o.send("out", "v").await }
        },
        5,
    )
    .await
    .unwrap();
    let commit = tokio::spawn({
        let o = old.clone();
        async move { o.commit().await }
    });
    settle().await; // the COMMIT marker waits for acks=all
    let fresh = t.cluster.transactions().begin("app").await.unwrap();
    t.cluster.replicate_all_once().unwrap();
    let err = commit.await.unwrap().unwrap_err();
    assert!(
        matches!(err, MiniKafkaError::TransactionInterrupted { .. }),
        "{err}"
    );
    assert_eq!(
        t.cluster.transactions().get("app").unwrap().state,
        TransactionState::Ongoing
    );
    drive(
        &t.cluster,
        {
            let f = fresh.clone();
            async move { f.send("out", "w").await }
        },
        5,
    )
    .await
    .unwrap();
    drive(
        &t.cluster,
        {
            let f = fresh.clone();
            async move { f.commit().await }
        },
        5,
    )
    .await
    .unwrap();
    assert_eq!(
        markers(&t, 0).len(),
        2,
        "one marker per instance, none written twice"
    );
    assert_eq!(
        committed(&t.cluster, &out),
        ["v", "w"],
        "PREPARE_COMMIT was completed as a commit"
    );
    t.cluster.crash().unwrap();
    let states: Vec<_> = t.cluster.with_state(|s| {
        s.transactions()
            .instances()
            .iter()
            .map(|d| (d.state, d.producer.map(|p| p.1)))
            .collect()
    });
    assert_eq!(
        states,
        [
            (TransactionState::CompleteCommit, Some(0)),
            (TransactionState::CompleteCommit, Some(1))
        ]
    );
}

/// Acks that complete out of order: the lowest offset is the first offset,
/// so acknowledged, committed data is never lost.
#[tokio::test]
async fn out_of_order_acks_keep_the_lowest_first_offset() {
    let t = two(RuleSwitches::default(), 1);
    let out = tp("out", 0);
    let tx = t.cluster.transactions().begin("tx").await.unwrap();
    let first = tokio::spawn({
        let tx = tx.clone();
        async move { tx.send("out", "first").await }
    });
    settle().await; // offset 0, captured ISR {1,2}
    t.cluster.stop_broker(2).unwrap();
    t.clock.advance(10_001);
    t.cluster.replicate_all_once().unwrap(); // the round judges the ISR
    assert_eq!(
        tx.send("out", "second").await.unwrap().1,
        1,
        "captured ISR {{1}}: acknowledged at once"
    );
    t.cluster.start_broker(2).unwrap();
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(first.await.unwrap().unwrap().1, 0);
    assert_eq!(
        t.cluster.transactions().get("tx").unwrap().first_offsets,
        [(out.clone(), 0)]
    );
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
    assert_eq!(committed(&t.cluster, &out), ["first", "second"]);
}

/// A write appended but not yet acknowledged already holds the LSO back,
/// and commit waits for it.
#[tokio::test]
async fn an_unacknowledged_write_holds_the_lso_and_blocks_commit() {
    let t = two(RuleSwitches::default(), 1);
    let out = tp("out", 0);
    let tx = t.cluster.transactions().begin("tx").await.unwrap();
    let first = tokio::spawn({
        let tx = tx.clone();
        async move { tx.send("out", "first").await }
    });
    settle().await;
    t.cluster.stop_broker(2).unwrap();
    t.clock.advance(10_001);
    t.cluster.replicate_all_once().unwrap(); // the round judges the ISR
    t.append(&out, "later", AckMode::Leader).await.unwrap();
    assert_eq!(t.cluster.last_stable_offset(&out).unwrap(), 0);
    assert!(
        committed(&t.cluster, &out).is_empty(),
        "'later' waits behind the open write"
    );
    let err = tx.commit().await.unwrap_err();
    assert!(
        matches!(err, MiniKafkaError::SendsPending { count: 1, .. }),
        "{err}"
    );
    t.cluster.start_broker(2).unwrap();
    t.cluster.replicate_all_once().unwrap();
    first.await.unwrap().unwrap();
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
    assert_eq!(committed(&t.cluster, &out), ["first", "later"]);
}

/// An abort finds only a COMMIT marker of its instance (the journal lost the
/// decision): it writes its own ABORT marker.
#[tokio::test]
async fn an_abort_writes_its_marker_even_where_a_commit_marker_exists() {
    let t = TestCluster::new(&[1], 1);
    t.cluster.create_topic("out", 1, 1).unwrap();
    let tx = t.cluster.transactions().begin("tx").await.unwrap();
    tx.send("out", "v").await.unwrap();
    tx.commit_until(Some("offsets".parse().unwrap()))
        .await
        .unwrap();
    let frames = t.cluster.with_state(|s| {
        s.transactions()
            .journal_frames()
            .iter()
            .cloned()
            .collect::<Vec<_>>()
    });
    let keep = frames
        .iter()
        .find(|f| f.state != TransactionState::Ongoing)
        .unwrap()
        .offset;
    let size = t.cluster.with_state(|s| s.transactions().journal_size());
    t.cluster
        .tear(&TearTarget::Journal, &Tear::CutBytes(size - keep))
        .unwrap();
    assert_eq!(
        t.cluster.transactions().get("tx").unwrap().state,
        TransactionState::Ongoing
    );
    t.cluster
        .transactions()
        .resume("tx")
        .unwrap()
        .abort()
        .await
        .unwrap();
    assert_eq!(
        markers(&t, 0),
        [(1, ControlType::Commit), (2, ControlType::Abort)]
    );
    assert!(
        committed(&t.cluster, &tp("out", 0)).is_empty(),
        "the journal decides: aborted"
    );
}

/// Every send writes a journal frame, as in the book.
#[tokio::test]
async fn every_send_writes_a_journal_frame() {
    let t = TestCluster::new(&[1], 1);
    t.cluster.create_topic("out", 1, 1).unwrap();
    let tx = t.cluster.transactions().begin("tx").await.unwrap();
    let frames = || {
        t.cluster
            .with_state(|s| s.transactions().journal_frames().len())
    };
    assert_eq!(frames(), 1);
    tx.send("out", "a").await.unwrap();
    tx.send("out", "b").await.unwrap();
    assert_eq!(frames(), 3);
}
