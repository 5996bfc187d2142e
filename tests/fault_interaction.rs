//! Issue 8 part 5 (E5, E12, E13): faults that meet other faults or work in
//! flight. A crash while acks=all appends are pending; a crash right after a
//! recovery (and a recovery interrupted half way), which must be idempotent;
//! and a tear followed by another tear (journal then journal, log then log,
//! journal then log), each keeping the valid prefix; and a promotion away
//! from a leader holding a waiting marker, then back to it.

mod common;

use std::fs;

use common::{TestCluster, committed, drive, tp, values};
use minikafka::engine::config::Rules;
use minikafka::engine::core::recovery::LeaderReelection;
use minikafka::engine::fault::{Tear, TearTarget};
use minikafka::engine::transaction::{CutPoint, EndOutcome, JournalFrame, TransactionState};
use minikafka::engine::{
    AckMode, BrokerCluster, ControlType, IsolationLevel, MiniKafkaError, RecordBatch,
    TopicPartition,
};
use minikafka::session::{Action, Driver, Snapshot};

fn cluster(brokers: &[u32], min_isr: usize, rules: Rules) -> TestCluster {
    TestCluster::with_config(brokers, |c| {
        c.with_min_insync_replicas(min_isr).with_rules(rules)
    })
}

/// `rules` with the clock-driven ISR: a promotion keeps the followers in
/// the ISR, so a partition can be promoted away and back without a fetch
/// in between. Under the book's evaluation at fetch a promotion leaves the
/// new leader alone in the ISR, and the fetch that lets the old leader
/// back first truncates what only it held (docs/book-differences.md); the
/// marker scans these tests check are still reached through the kafka
/// rules and this switch.
fn cluster_isr_by_clock(brokers: &[u32], min_isr: usize, rules: Rules) -> TestCluster {
    TestCluster::with_config(brokers, |c| {
        let mut c = c.with_min_insync_replicas(min_isr).with_rules(rules);
        c.rules.isr_by_clock = true;
        c
    })
}

fn uncommitted(cluster: &BrokerCluster, p: &TopicPartition) -> Vec<String> {
    common::read(cluster, p, IsolationLevel::ReadUncommitted)
}

fn log_tear(p: &TopicPartition, broker: u32) -> TearTarget {
    TearTarget::Log {
        tp: p.clone(),
        broker,
    }
}

fn leader_and_epoch(cluster: &BrokerCluster, p: &TopicPartition) -> (u32, u32) {
    let set = cluster.replica_set(p).unwrap();
    (set.leader_id(), set.leader_epoch())
}

fn journal_frames(cluster: &BrokerCluster) -> Vec<JournalFrame> {
    cluster.with_state(|s| {
        s.transactions()
            .journal_frames()
            .iter()
            .cloned()
            .collect::<Vec<_>>()
    })
}

fn markers(cluster: &BrokerCluster, p: &TopicPartition) -> usize {
    let log = cluster.leader_log(p).unwrap();
    log.all_batches()
        .unwrap()
        .iter()
        .filter(|b| b.is_control())
        .count()
}

/// Appends `value` with acks=all and completes it with one replication round.
async fn acked(t: &TestCluster, p: &TopicPartition, value: &str) -> i64 {
    let ack = t.append(p, value, AckMode::All);
    t.cluster.replicate_all_once().unwrap();
    ack.await.unwrap().base_offset().unwrap()
}

// ---------------------------------------------------------------------------
// A crash while acks are pending.

/// Pending acks=all appends fail with `Crashed`; the HW stays where the
/// acknowledged data ends (a batch boundary: no half batch is ever visible);
/// the directory reopens clean, and what the leader had written becomes
/// visible once replicated.
#[tokio::test]
async fn a_crash_fails_pending_acks_all_appends_and_shows_no_half_batch() {
    let t = cluster(&[1, 2, 3], 2, Rules::Minikafka);
    t.cluster.create_topic("t", 1, 3).unwrap();
    let p = tp("t", 0);
    assert_eq!(acked(&t, &p, "a0").await, 0);
    let two = t
        .cluster
        .append_batch(&p, RecordBatch::of_values(["p1a", "p1b"]), AckMode::All);
    // Broker 2 fetches it; broker 3 does not: the ack waits for broker 3.
    t.cluster
        .replica_set(&p)
        .unwrap()
        .replicate_follower(2)
        .unwrap();
    let one = t.append(&p, "p2", AckMode::All);
    let pending = t.cluster.replica_set(&p).unwrap().pending();
    assert_eq!(pending.len(), 2);
    assert_eq!(pending[0].waiting_for, [3]);
    assert_eq!(pending[1].waiting_for, [2, 3]);
    assert_eq!(uncommitted(&t.cluster, &p), ["a0"]);

    let report = t.cluster.crash().unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert!(matches!(two.await, Err(MiniKafkaError::Crashed)));
    assert!(matches!(one.await, Err(MiniKafkaError::Crashed)));
    assert!(t.cluster.replica_set(&p).unwrap().pending().is_empty());
    assert_eq!(t.cluster.replica_set(&p).unwrap().high_watermark(), 1);
    assert_eq!(uncommitted(&t.cluster, &p), ["a0"]);
    assert_eq!(committed(&t.cluster, &p), ["a0"]);
    assert_eq!(leader_and_epoch(&t.cluster, &p), (1, 0));

    // Replication moves the HW by whole batches only.
    let boundaries = [1, 3, 4];
    t.cluster
        .replica_set(&p)
        .unwrap()
        .replicate_follower(3)
        .unwrap();
    let hw = t.cluster.replica_set(&p).unwrap().high_watermark();
    assert!(boundaries.contains(&hw), "HW {hw} inside a batch");
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(uncommitted(&t.cluster, &p), ["a0", "p1a", "p1b", "p2"]);
    let again = t.cluster.crash().unwrap();
    assert!(again.is_clean(), "{again:?}");
    assert_eq!(uncommitted(&t.cluster, &p), ["a0", "p1a", "p1b", "p2"]);
}

/// An idempotent producer retries after a crash: its batch is answered with
/// the original offsets wherever it survived (on the leader, or on the
/// follower that recovery elected after a torn leader tail), and appended
/// once at the right offset where it did not.
#[tokio::test]
async fn idempotent_retries_after_a_crash_get_the_right_offsets() {
    let t = cluster(&[1, 2, 3], 2, Rules::Minikafka);
    t.cluster.create_topic("t", 1, 3).unwrap();
    let p = tp("t", 0);
    let mut producer = t.cluster.producer("p").unwrap().with_acks(AckMode::All);
    let replicate_to_2 = || {
        t.cluster
            .replica_set(&p)
            .unwrap()
            .replicate_follower(2)
            .unwrap()
    };

    let first = producer.send("t", Some(0), None, "r0").unwrap().1;
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(first.await.unwrap().offsets, Some((0, 0)));

    // 1. A plain crash while r1 waits: the leader kept it.
    let lost_ack = producer.send("t", Some(0), None, "r1").unwrap().1;
    replicate_to_2();
    t.cluster.crash().unwrap();
    assert!(matches!(lost_ack.await, Err(MiniKafkaError::Crashed)));
    let retry = producer.retry_last(&p).unwrap();
    t.cluster.replicate_all_once().unwrap();
    let r = retry.await.unwrap();
    assert_eq!((r.offsets, r.duplicate), (Some((1, 1)), true));

    // 2. r2 reached broker 2 only, then the leader's tail is torn: broker 2
    // is elected and answers the retry with r2's original offsets.
    let lost_ack = producer.send("t", Some(0), None, "r2").unwrap().1;
    replicate_to_2();
    let (_, report) = t
        .cluster
        .tear(&log_tear(&p, 1), &Tear::CutBytes(3))
        .unwrap();
    assert!(matches!(lost_ack.await, Err(MiniKafkaError::Crashed)));
    assert_eq!(
        report.leaders_reelected,
        [LeaderReelection {
            tp: p.clone(),
            old_leader: 1,
            new_leader: 2,
            leader_epoch: 1
        }]
    );
    let retry = producer.retry_last(&p).unwrap();
    t.cluster.replicate_all_once().unwrap();
    let r = retry.await.unwrap();
    assert_eq!((r.offsets, r.duplicate), (Some((2, 2)), true));

    // 3. r3 reached nobody but the leader, whose tail is then torn: no
    // replica holds it, so the retry appends it once, at offset 3.
    let lost_ack = producer.send("t", Some(0), None, "r3").unwrap().1;
    let (_, report) = t
        .cluster
        .tear(&log_tear(&p, 2), &Tear::CutBytes(3))
        .unwrap();
    assert!(matches!(lost_ack.await, Err(MiniKafkaError::Crashed)));
    assert_eq!(report.logs_truncated.len(), 1);
    assert!(
        report.leaders_reelected.is_empty(),
        "a tie keeps the leader"
    );
    assert_eq!(leader_and_epoch(&t.cluster, &p), (2, 1));
    let retry = producer.retry_last(&p).unwrap();
    t.cluster.replicate_all_once().unwrap();
    let r = retry.await.unwrap();
    assert_eq!((r.offsets, r.duplicate), (Some((3, 3)), false));

    t.cluster.replicate_all_once().unwrap();
    assert_eq!(uncommitted(&t.cluster, &p), ["r0", "r1", "r2", "r3"]);
    let leader = t.cluster.leader_log(&p).unwrap().all_batches().unwrap();
    for b in [1, 2, 3] {
        let held = t.cluster.replica_log(&p, b).unwrap().all_batches().unwrap();
        assert_eq!(held, leader, "broker {b} converged");
    }
}

// ---------------------------------------------------------------------------
// A crash during recovery.

/// A crash right after a torn-tail recovery finds nothing to repair: the
/// elected leader and its epoch stay, and so does every record.
#[tokio::test]
async fn a_crash_right_after_a_tear_recovery_repairs_nothing() {
    let t = cluster(&[1, 2], 2, Rules::Minikafka);
    t.cluster.create_topic("t", 1, 2).unwrap();
    let p = tp("t", 0);
    for v in ["a", "b", "c"] {
        acked(&t, &p, v).await;
    }
    let (_, first) = t
        .cluster
        .tear(&log_tear(&p, 1), &Tear::CutBytes(1))
        .unwrap();
    assert_eq!(first.logs_truncated.len(), 1);
    assert_eq!(first.leaders_reelected.len(), 1);
    assert_eq!(leader_and_epoch(&t.cluster, &p), (2, 1));
    let metadata = fs::read(t.dir.path().join("metadata.json")).unwrap();
    for _ in 0..2 {
        let again = t.cluster.crash().unwrap();
        assert!(again.is_clean(), "{again:?}");
        assert_eq!(leader_and_epoch(&t.cluster, &p), (2, 1));
        assert_eq!(
            fs::read(t.dir.path().join("metadata.json")).unwrap(),
            metadata
        );
        assert_eq!(uncommitted(&t.cluster, &p), ["a", "b", "c"]);
    }
    // A journal tear, then a crash: the same.
    let tx = t.cluster.transactions().begin("tx").await.unwrap();
    drop(tx);
    let (_, torn) = t
        .cluster
        .tear(&TearTarget::Journal, &Tear::default_garbage())
        .unwrap();
    assert!(torn.journal_truncated_bytes > 0);
    let again = t.cluster.crash().unwrap();
    assert!(again.is_clean(), "{again:?}");
    assert_eq!(again.left_open, ["tx"]);
}

/// Recovery cut a torn leader tail, then the process died before it could
/// write the new leader to `metadata.json`: the next recovery finds a clean
/// leader log that ends below the checkpointed HW, and still elects the
/// follower that holds the acknowledged records.
#[tokio::test]
async fn a_recovery_that_died_before_electing_elects_on_the_next_open() {
    let t = cluster(&[1, 2], 2, Rules::Minikafka);
    t.cluster.create_topic("t", 1, 2).unwrap();
    let p = tp("t", 0);
    for v in ["a", "b", "c"] {
        acked(&t, &p, v).await;
    }
    let leader = t.cluster.leader_log(&p).unwrap();
    let segment = leader.segment_paths().unwrap().pop().unwrap();
    let last = leader.batch_summaries().unwrap().pop().unwrap();
    let bytes = fs::read(&segment).unwrap();
    // What the first recovery left: the torn frame cut at its boundary.
    fs::write(&segment, &bytes[..bytes.len() - last.size_bytes as usize]).unwrap();
    let report = t.cluster.crash().unwrap();
    assert!(report.logs_truncated.is_empty(), "already cut");
    assert_eq!(
        report.leaders_reelected,
        [LeaderReelection {
            tp: p.clone(),
            old_leader: 1,
            new_leader: 2,
            leader_epoch: 1
        }]
    );
    assert_eq!(uncommitted(&t.cluster, &p), ["a", "b", "c"]);
    assert!(t.cluster.crash().unwrap().is_clean());
}

/// A recovery that fails part way (a corrupt closed segment in a later
/// partition) writes no leader election: `metadata.json` stays as it was
/// found, and the cluster is down (every operation refused) rather than
/// writing through a stale state. Once the damage is repaired, the next
/// recovery elects (the torn leader's log, already cut, ends below the
/// checkpointed HW).
#[tokio::test]
async fn a_recovery_that_fails_part_way_leaves_metadata_as_found() {
    let t = TestCluster::with_config(&[1, 2], |c| minikafka::engine::MiniKafkaConfig {
        segment_max_bytes: 200,
        ..c.with_min_insync_replicas(2)
    });
    t.cluster.create_topic("a", 1, 2).unwrap();
    t.cluster.create_topic("b", 1, 1).unwrap();
    let (a, b) = (tp("a", 0), tp("b", 0));
    for i in 0..3 {
        acked(&t, &a, &format!("a{i}")).await;
    }
    for i in 0..10 {
        t.append(&b, &format!("b{i}-{}", "x".repeat(40)), AckMode::Leader)
            .await
            .unwrap();
    }
    let closed = t.cluster.leader_log(&b).unwrap().segment_paths().unwrap()[0].clone();
    let good = fs::read(&closed).unwrap();
    let mut bad = good.clone();
    bad[20] ^= 0x55;
    fs::write(&closed, &bad).unwrap();
    let metadata = t.dir.path().join("metadata.json");
    let before = fs::read(&metadata).unwrap();
    let err = t
        .cluster
        .tear(&log_tear(&a, 1), &Tear::CutBytes(2))
        .unwrap_err();
    assert!(matches!(err, MiniKafkaError::Corrupt { .. }), "{err}");
    assert_eq!(fs::read(&metadata).unwrap(), before, "no election written");
    // The process could not restart: the cluster is down, and nothing is
    // written through the stale in-memory state (whose view of the logs the
    // tear changed under it); the failed recovery itself wrote nothing.
    let segment = t.cluster.leader_log(&a).unwrap().segment_paths().unwrap()[0].clone();
    let as_torn = fs::read(&segment).unwrap();
    let refused = t.append(&a, "while down", AckMode::Leader).await;
    assert!(
        matches!(refused, Err(MiniKafkaError::ClusterDown { .. })),
        "{refused:?}"
    );
    assert!(
        refused
            .unwrap_err()
            .to_string()
            .contains("00000000000000000000.log")
    );
    assert!(t.cluster.replicate_all_once().is_err());
    assert_eq!(fs::read(&segment).unwrap(), as_torn);

    fs::write(&closed, &good).unwrap();
    let report = t.cluster.crash().unwrap();
    // The failed recovery read every log before repairing any, so the torn
    // tail of `a` on broker 1 is cut only now.
    assert_eq!(
        report
            .logs_truncated
            .iter()
            .map(|l| (l.tp.clone(), l.broker))
            .collect::<Vec<_>>(),
        [(a.clone(), 1)],
        "{report:?}"
    );
    assert_eq!(
        report.leaders_reelected,
        [LeaderReelection {
            tp: a.clone(),
            old_leader: 1,
            new_leader: 2,
            leader_epoch: 1
        }]
    );
    assert_eq!(uncommitted(&t.cluster, &a), ["a0", "a1", "a2"]);
    assert_eq!(
        t.cluster.leader_log(&b).unwrap().log_end_offset().unwrap(),
        10
    );
}

/// A crash right after a recovery that completed a PREPARE_* transaction
/// (and, under the kafka rules, re-sent its markers) repairs nothing more;
/// and if that recovery died after its markers but before journaling
/// COMPLETE_* (its last frame torn away), the next one completes again
/// without a second marker. Commit and abort, both rules.
#[tokio::test]
async fn recovery_of_a_prepared_transaction_is_idempotent() {
    for rules in [Rules::Minikafka, Rules::Kafka] {
        for control in [ControlType::Commit, ControlType::Abort] {
            recovery_is_idempotent(rules, control).await;
        }
    }
}

async fn recovery_is_idempotent(rules: Rules, control: ControlType) {
    let cell = format!("{} {control:?}", rules.name());
    let t = cluster(&[1, 2], 1, rules);
    t.cluster.create_topic("out", 2, 2).unwrap();
    t.cluster.create_topic("in", 1, 1).unwrap();
    let outs = [tp("out", 0), tp("out", 1)];
    let tx = t.cluster.transactions().begin("tx").await.unwrap();
    for (p, v) in [(0, "x"), (1, "y")] {
        let tx = tx.clone();
        drive(
            &t.cluster,
            async move { tx.send_record("out", Some(p), None, v).await },
            5,
        )
        .await
        .unwrap();
    }
    tx.send_offsets("workers", [(tp("in", 0), 7)])
        .await
        .unwrap();
    let cut = Some(CutPoint::Prepare);
    let outcome = match control {
        ControlType::Commit => tx.commit_until(cut).await,
        ControlType::Abort => tx.abort_until(cut).await,
    }
    .unwrap();
    let EndOutcome::Crashed(first) = outcome else {
        panic!("{cell}: the cut point crashes");
    };
    assert_eq!(first.completed.len(), 1, "{cell}");
    let resent = if rules == Rules::Kafka { 2 } else { 0 };
    assert_eq!(first.markers_resent.len(), resent, "{cell}");
    let (state, expect_visible, offset) = match control {
        ControlType::Commit => (TransactionState::CompleteCommit, true, Some(7)),
        ControlType::Abort => (TransactionState::CompleteAbort, false, None),
    };
    let check = |what: &str| {
        let counts: Vec<usize> = outs.iter().map(|p| markers(&t.cluster, p)).collect();
        assert_eq!(counts, [resent / 2; 2], "{cell} {what}: markers");
        assert_eq!(
            t.cluster.transactions().get("tx").unwrap().state,
            state,
            "{cell} {what}"
        );
        let seen: Vec<Vec<String>> = outs.iter().map(|p| committed(&t.cluster, p)).collect();
        let expected: Vec<Vec<String>> = if expect_visible {
            vec![vec!["x".into()], vec!["y".into()]]
        } else {
            vec![vec![], vec![]]
        };
        assert_eq!(seen, expected, "{cell} {what}");
        assert_eq!(
            t.cluster.offsets().get("workers", &tp("in", 0)),
            offset,
            "{cell} {what}"
        );
    };
    check("after the first recovery");
    let frames = journal_frames(&t.cluster);

    let second = t.cluster.crash().unwrap();
    assert!(second.is_clean(), "{cell}: {second:?}");
    assert_eq!(
        journal_frames(&t.cluster),
        frames,
        "{cell}: nothing journaled"
    );
    check("after a second crash");

    // The first recovery's COMPLETE_* frame torn away: PREPARE_* again.
    let last = frames.last().unwrap();
    assert_eq!(last.state, state, "{cell}");
    let (_, third) = t
        .cluster
        .tear(&TearTarget::Journal, &Tear::CutBytes(last.len))
        .unwrap();
    assert_eq!(third.journal_truncated_bytes, 0, "{cell}: a clean cut");
    assert_eq!(third.completed.len(), 1, "{cell}");
    assert!(third.markers_resent.is_empty(), "{cell}: markers are there");
    assert_eq!(journal_frames(&t.cluster).len(), frames.len(), "{cell}");
    check("after recovering a torn recovery");
}

// ---------------------------------------------------------------------------
// A tear, then another tear.

/// Every tear of the journal keeps the valid prefix; a commit whose
/// COMPLETE_COMMIT is torn twice in a row is completed twice by recovery.
#[tokio::test]
async fn journal_tear_then_journal_tear() {
    let t = cluster(&[1], 1, Rules::Minikafka);
    t.cluster.create_topic("out", 1, 1).unwrap();
    let out = tp("out", 0);
    let tx = t.cluster.transactions().begin("done").await.unwrap();
    tx.send("out", b"kept".to_vec()).await.unwrap();
    tx.commit().await.unwrap();
    let path = t.dir.path().join("transactions.journal");
    for round in 1..=2 {
        let before = fs::read(&path).unwrap();
        let frames = journal_frames(&t.cluster);
        let last = frames.last().unwrap();
        assert_eq!(last.state, TransactionState::CompleteCommit);
        let (_, r) = t
            .cluster
            .tear(&TearTarget::Journal, &Tear::CutBytes(round))
            .unwrap();
        assert_eq!(r.journal_truncated_bytes, last.len - round, "round {round}");
        assert_eq!(
            r.completed.len(),
            1,
            "round {round}: PREPARE_COMMIT completed"
        );
        let after = fs::read(&path).unwrap();
        assert_eq!(
            after.len(),
            before.len(),
            "round {round}: one frame cut, one written"
        );
        assert_eq!(
            after[..last.offset as usize],
            before[..last.offset as usize]
        );
        assert_eq!(committed(&t.cluster, &out), ["kept"], "round {round}");
    }
    // Garbage, then a cut into the frame before it: each keeps its prefix.
    let tx = t.cluster.transactions().begin("open").await.unwrap();
    tx.send("out", b"pending".to_vec()).await.unwrap();
    let frames = journal_frames(&t.cluster);
    let garbage = b"0000 {\"id\"".to_vec();
    let (_, r) = t
        .cluster
        .tear(&TearTarget::Journal, &Tear::AppendGarbage(garbage.clone()))
        .unwrap();
    assert_eq!(r.journal_truncated_bytes, garbage.len() as u64);
    assert_eq!(journal_frames(&t.cluster), frames);
    let (_, r) = t
        .cluster
        .tear(&TearTarget::Journal, &Tear::CutBytes(7))
        .unwrap();
    let last = frames.last().unwrap();
    assert_eq!(r.journal_truncated_bytes, last.len - 7);
    assert_eq!(journal_frames(&t.cluster), frames[..frames.len() - 1]);
    let open = t.cluster.transactions().get("open").unwrap();
    assert_eq!(
        (open.state, open.partitions.len()),
        (TransactionState::Ongoing, 0),
        "the send's frame is gone"
    );
    assert_eq!(r.left_open, ["open"]);
    assert_eq!(committed(&t.cluster, &out), ["kept"]);
}

/// RF 3: the leader's tail is torn (broker 2 is elected), then the new
/// leader's tail is torn too (broker 3, the only full replica left, is
/// elected): every acknowledged record survives both. Then one follower is
/// torn twice in a row. All replicas converge.
#[tokio::test]
async fn log_tear_then_log_tear() {
    let t = cluster(&[1, 2, 3], 2, Rules::Minikafka);
    t.cluster.create_topic("t", 1, 3).unwrap();
    let p = tp("t", 0);
    let all: Vec<String> = (0..5).map(|i| format!("v{i}")).collect();
    for v in &all {
        acked(&t, &p, v).await;
    }
    let (_, r) = t
        .cluster
        .tear(&log_tear(&p, 1), &Tear::CutBytes(1))
        .unwrap();
    assert_eq!(
        (
            r.leaders_reelected[0].new_leader,
            r.leaders_reelected[0].leader_epoch
        ),
        (2, 1)
    );
    assert_eq!(uncommitted(&t.cluster, &p), all);
    let (_, r) = t
        .cluster
        .tear(&log_tear(&p, 2), &Tear::CutBytes(20))
        .unwrap();
    assert_eq!(r.logs_truncated.len(), 1);
    assert_eq!(r.logs_truncated[0].broker, 2);
    assert_eq!(
        r.leaders_reelected,
        [LeaderReelection {
            tp: p.clone(),
            old_leader: 2,
            new_leader: 3,
            leader_epoch: 2
        }]
    );
    assert_eq!(uncommitted(&t.cluster, &p), all);
    assert_eq!(
        t.cluster
            .replica_log(&p, 1)
            .unwrap()
            .log_end_offset()
            .unwrap(),
        4
    );
    assert_eq!(
        t.cluster
            .replica_log(&p, 2)
            .unwrap()
            .log_end_offset()
            .unwrap(),
        4
    );

    // Broker 1 torn twice more while a follower: it loses two more frames,
    // nobody is elected, and it catches up afterwards.
    for (round, leo) in [(1, 3), (2, 2)] {
        let (_, r) = t
            .cluster
            .tear(&log_tear(&p, 1), &Tear::CutBytes(5))
            .unwrap();
        assert!(r.leaders_reelected.is_empty(), "round {round}");
        assert_eq!(r.logs_truncated[0].broker, 1, "round {round}");
        let log = t.cluster.replica_log(&p, 1).unwrap();
        assert_eq!(log.log_end_offset().unwrap(), leo, "round {round}");
    }
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(acked(&t, &p, "after").await, 5);
    let leader = t.cluster.leader_log(&p).unwrap().all_batches().unwrap();
    for b in [1, 2, 3] {
        let held = t.cluster.replica_log(&p, b).unwrap().all_batches().unwrap();
        assert_eq!(held, leader, "broker {b} converged");
    }
    assert_eq!(
        values(
            &t.cluster
                .fetch(&p, 0, 100, IsolationLevel::ReadCommitted)
                .unwrap()
        )
        .len(),
        6
    );
}

/// A commit's COMPLETE_COMMIT frame is torn (recovery completes it), then
/// the leader log's last frame, the commit marker itself, is torn too: the
/// follower holding the marker is elected, and the commit stays visible.
#[tokio::test]
async fn journal_tear_then_log_tear() {
    for rules in [Rules::Minikafka, Rules::Kafka] {
        let cell = rules.name();
        let t = cluster(&[1, 2], 2, rules);
        t.cluster.create_topic("out", 1, 2).unwrap();
        let out = tp("out", 0);
        acked(&t, &out, "plain").await;
        let tx = t.cluster.transactions().begin("tx").await.unwrap();
        let send = tx.clone();
        drive(
            &t.cluster,
            async move { send.send("out", b"txd".to_vec()).await },
            5,
        )
        .await
        .unwrap();
        drive(&t.cluster, async move { tx.commit().await }, 10)
            .await
            .unwrap();
        assert_eq!(committed(&t.cluster, &out), ["plain", "txd"], "{cell}");

        let (_, r) = t
            .cluster
            .tear(&TearTarget::Journal, &Tear::CutBytes(2))
            .unwrap();
        assert!(r.journal_truncated_bytes > 0, "{cell}");
        assert_eq!(r.completed.len(), 1, "{cell}");
        assert!(
            r.markers_resent.is_empty(),
            "{cell}: the marker is in the log"
        );
        let summaries = t
            .cluster
            .leader_log(&out)
            .unwrap()
            .batch_summaries()
            .unwrap();
        assert_eq!(summaries.last().unwrap().control, Some(ControlType::Commit));

        let (_, r) = t
            .cluster
            .tear(&log_tear(&out, 1), &Tear::CutBytes(4))
            .unwrap();
        assert_eq!(r.logs_truncated[0].broker, 1, "{cell}");
        assert_eq!(r.leaders_reelected.len(), 1, "{cell}");
        assert_eq!(leader_and_epoch(&t.cluster, &out), (2, 1), "{cell}");
        assert_eq!(markers(&t.cluster, &out), 1, "{cell}: no second marker");
        assert_eq!(committed(&t.cluster, &out), ["plain", "txd"], "{cell}");
        assert!(t.cluster.crash().unwrap().is_clean(), "{cell}");
        t.cluster.replicate_all_once().unwrap();
        let leader = t.cluster.leader_log(&out).unwrap().all_batches().unwrap();
        let old = t
            .cluster
            .replica_log(&out, 1)
            .unwrap()
            .all_batches()
            .unwrap();
        assert_eq!(old, leader, "{cell}: the old leader caught up");
    }
}

// ---------------------------------------------------------------------------
// A promotion, then another, while a marker waits.

/// How the transaction whose marker a promotion forgot is finished.
#[derive(Debug, Clone, Copy)]
enum Finish {
    /// `commit` called again.
    Resume,
    /// Kafka rules: a fencing `begin` completes the PREPARE_COMMIT instance.
    Fence,
}

/// A COMMIT marker waits on broker 2, the leader, for broker 1 when a
/// promotion makes broker 1 the leader: its log lacks the marker, the
/// commit fails, and the coordinator forgets the marker. Broker 2, which
/// still holds it (it has not fetched since), is promoted back: "missing"
/// means missing from the current leader's log (engine-decisions.md), so
/// the coordinator knows the marker again and finishing the commit writes
/// no second one, whether `commit` is called again (both rules) or a
/// fencing `begin` completes it (kafka rules). The model-based tests found
/// it (`tests/model_based.rs::a_marker_a_promotion_forgot_is_found_again_when_its_holder_leads`).
#[tokio::test]
async fn a_marker_a_promotion_forgot_counts_again_once_its_holder_leads() {
    for (rules, finish) in [
        (Rules::Minikafka, Finish::Resume),
        (Rules::Kafka, Finish::Resume),
        (Rules::Kafka, Finish::Fence),
    ] {
        promoted_away_and_back(rules, finish).await;
    }
}

async fn promoted_away_and_back(rules: Rules, finish: Finish) {
    let cell = format!("{} {finish:?}", rules.name());
    let t = cluster_isr_by_clock(&[1, 2], 1, rules);
    t.cluster.create_topic("out", 1, 2).unwrap();
    let out = tp("out", 0);
    t.cluster.promote(&out, 2).unwrap();
    let tx = t.cluster.transactions().begin("tx-b").await.unwrap();
    let sent = drive(
        &t.cluster,
        {
            let tx = tx.clone();
            async move { tx.send("out", b"v3".to_vec()).await }
        },
        5,
    )
    .await
    .unwrap();
    assert_eq!(sent, (out.clone(), 0), "{cell}");

    let commit = tokio::spawn({
        let tx = tx.clone();
        async move { tx.commit().await }
    });
    for _ in 0..4 {
        tokio::task::yield_now().await;
    }
    assert!(
        !commit.is_finished(),
        "{cell}: the marker waits for broker 1"
    );
    let held = |broker: u32| -> Vec<Option<ControlType>> {
        let log = t.cluster.replica_log(&out, broker).unwrap();
        log.all_batches()
            .unwrap()
            .iter()
            .map(|b| b.control)
            .collect()
    };
    assert_eq!(held(2), [None, Some(ControlType::Commit)], "{cell}");
    assert_eq!(held(1), [None], "{cell}");

    t.cluster.promote(&out, 1).unwrap();
    let failed = commit.await.unwrap();
    assert!(failed.is_err(), "{cell}: the marker never reached broker 1");
    assert_eq!(
        t.cluster.transactions().get("tx-b").unwrap().state,
        TransactionState::PrepareCommit,
        "{cell}"
    );
    t.cluster.promote(&out, 2).unwrap();
    assert_eq!(leader_and_epoch(&t.cluster, &out).0, 2, "{cell}");
    let known = t
        .cluster
        .with_state(|s| s.transactions().markers_of("tx-b"));
    assert_eq!(
        known,
        [(out.clone(), 1)],
        "{cell}: the marker is known again"
    );

    match finish {
        Finish::Resume => drive(
            &t.cluster,
            {
                let tx = tx.clone();
                async move { tx.commit().await }
            },
            5,
        )
        .await
        .unwrap(),
        Finish::Fence => {
            t.cluster.transactions().begin("tx-b").await.unwrap();
        }
    }
    let states: Vec<TransactionState> = t.cluster.with_state(|s| {
        s.transactions()
            .instances()
            .iter()
            .map(|d| d.state)
            .collect()
    });
    let expected: &[TransactionState] = match finish {
        Finish::Resume => &[TransactionState::CompleteCommit],
        Finish::Fence => &[TransactionState::CompleteCommit, TransactionState::Ongoing],
    };
    assert_eq!(states, expected, "{cell}");
    assert_eq!(
        held(2),
        [None, Some(ControlType::Commit)],
        "{cell}: one marker"
    );
    assert_eq!(markers(&t.cluster, &out), 1, "{cell}");
    assert_eq!(committed(&t.cluster, &out), ["v3"], "{cell}");

    // A reopen finds the same single marker and writes nothing.
    let report = t.cluster.crash().unwrap();
    assert!(report.markers_resent.is_empty(), "{cell}: {report:?}");
    assert_eq!(markers(&t.cluster, &out), 1, "{cell}");
    assert_eq!(committed(&t.cluster, &out), ["v3"], "{cell}");
}

/// A marker after the instance's first one on a partition is still its
/// own when a promotion finds it again. A journal tear cuts tx's
/// PREPARE_ABORT after its ABORT marker reached the leader's log: tx is
/// ONGOING again, and its commit writes a COMMIT marker after the ABORT
/// one, which waits for broker 2. A promotion to broker 2 (which holds
/// neither marker) and back to broker 1 must find the COMMIT marker again
/// although the ABORT marker ended tx's range: the resumed commit waits for
/// it and writes no third marker. Giving a promotion's scan only each
/// instance's first marker wrote one (the model-based tests caught the
/// model doing so).
#[tokio::test]
async fn a_promotion_finds_again_a_marker_after_the_instances_first() {
    let t = cluster_isr_by_clock(&[1, 2], 1, Rules::Minikafka);
    t.cluster.create_topic("out", 1, 2).unwrap();
    let out = tp("out", 0);
    let tx = t.cluster.transactions().begin("tx").await.unwrap();
    drive(
        &t.cluster,
        {
            let tx = tx.clone();
            async move { tx.send("out", b"v7".to_vec()).await }
        },
        5,
    )
    .await
    .unwrap();
    let held = |broker: u32| -> Vec<Option<ControlType>> {
        let log = t.cluster.replica_log(&out, broker).unwrap();
        log.all_batches()
            .unwrap()
            .iter()
            .map(|b| b.control)
            .collect()
    };
    let abort = tokio::spawn({
        let tx = tx.clone();
        async move { tx.abort().await }
    });
    for _ in 0..4 {
        tokio::task::yield_now().await;
    }
    assert_eq!(held(1), [None, Some(ControlType::Abort)]);
    let prepare = journal_frames(&t.cluster).last().unwrap().clone();
    assert_eq!(prepare.state, TransactionState::PrepareAbort);
    let (_, report) = t
        .cluster
        .tear(&TearTarget::Journal, &Tear::CutBytes(prepare.len))
        .unwrap();
    assert_eq!(report.left_open, ["tx"]);
    assert!(matches!(abort.await.unwrap(), Err(MiniKafkaError::Crashed)));

    let tx = t.cluster.transactions().resume("tx").unwrap();
    let commit = tokio::spawn({
        let tx = tx.clone();
        async move { tx.commit().await }
    });
    for _ in 0..4 {
        tokio::task::yield_now().await;
    }
    assert!(!commit.is_finished(), "the marker waits for broker 2");
    let both = [None, Some(ControlType::Abort), Some(ControlType::Commit)];
    assert_eq!(held(1), both);
    assert_eq!(held(2), [None]);
    t.cluster.promote(&out, 2).unwrap();
    assert!(commit.await.unwrap().is_err(), "broker 2 lacks the marker");
    t.cluster.promote(&out, 1).unwrap();
    let known = t.cluster.with_state(|s| s.transactions().markers_of("tx"));
    assert_eq!(known, [(out.clone(), 1), (out.clone(), 2)]);

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
    assert_eq!(held(1), both, "no third marker");
    assert_eq!(held(2), both, "broker 2 caught up");
}

// ---------------------------------------------------------------------------
// The same through the session driver.

fn act(json: &str) -> Action {
    Action::from_json(&serde_json::from_str(json).unwrap()).unwrap()
}

/// `tear` and `crash` actions: the state JSON shows the re-election under
/// `last_recovery.leaders_reelected`, the new leader and epoch, and every
/// acknowledged value; a crash right after reports nothing.
#[test]
fn the_session_driver_reports_a_reelection_and_a_clean_crash_after_it() {
    let header = serde_json::from_value(serde_json::json!({
        "mk_recording": 1,
        "title": "torn leader",
        "rules": "minikafka",
        "cluster": {
            "brokers": [1, 2],
            "topics": [{"name": "out", "partitions": 1, "replication_factor": 2}],
            "config": {"min_insync_replicas": 2},
        },
    }))
    .unwrap();
    let mut d = Driver::new(&header, None).unwrap();
    for a in [
        r#"{"produce":{"topic":"out","partition":0,"value":"v1","acks":"all"}}"#,
        r#"{"replicate":{}}"#,
        r#"{"produce":{"topic":"out","partition":0,"value":"v2","acks":"all"}}"#,
        r#"{"replicate":{}}"#,
        r#"{"tear":{"target":{"topic":"out","partition":0,"broker":1},"cut_bytes":3}}"#,
    ] {
        d.apply(&act(a));
    }
    let s: serde_json::Value = serde_json::from_str(&Snapshot::of(&d).to_json()).unwrap();
    assert!(
        s["errors"].as_array().unwrap().is_empty(),
        "{}",
        s["errors"]
    );
    let out = &s["partitions"][0];
    assert_eq!(
        (out["leader"].as_u64(), out["leader_epoch"].as_u64()),
        (Some(2), Some(1))
    );
    let r = &s["last_recovery"];
    assert_eq!(
        r["leaders_reelected"],
        serde_json::json!([{"topic":"out","partition":0,"old_leader":1,"new_leader":2,"leader_epoch":1}])
    );
    assert_eq!(r["logs_truncated"][0]["broker"], 1);
    assert_eq!(
        s["consumers"]["read_uncommitted"]["out-0"],
        serde_json::json!(["v1", "v2"])
    );
    assert_eq!(
        s["consumers"]["read_committed"]["out-0"],
        serde_json::json!(["v1", "v2"])
    );

    d.apply(&act(r#"{"crash":{}}"#));
    let s: serde_json::Value = serde_json::from_str(&Snapshot::of(&d).to_json()).unwrap();
    let r = &s["last_recovery"];
    assert_eq!(r["leaders_reelected"], serde_json::json!([]));
    assert_eq!(r["logs_truncated"], serde_json::json!([]));
    assert_eq!(s["partitions"][0]["leader"], 2);
    assert_eq!(
        s["consumers"]["read_uncommitted"]["out-0"],
        serde_json::json!(["v1", "v2"])
    );
}
