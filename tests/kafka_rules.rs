//! E14: the kafka rules, each switch on its own, against the book's rules.

mod common;

use common::{TestCluster, committed, tp};
use minikafka::engine::config::{RuleSwitches, Rules};
use minikafka::engine::transaction::TransactionState;
use minikafka::engine::{AckMode, ControlType, MiniKafkaConfig, MiniKafkaError};

fn cluster(rules: RuleSwitches) -> TestCluster {
    let t = TestCluster::with_config(&[1], |c| MiniKafkaConfig { rules, ..c });
    t.cluster.create_topic("out", 1, 1).unwrap();
    t
}

fn only(f: impl FnOnce(&mut RuleSwitches)) -> RuleSwitches {
    let mut s = RuleSwitches::default();
    f(&mut s);
    s
}

#[tokio::test]
async fn zombie_fencing_a_new_begin_aborts_and_fences_the_old_instance() {
    let t = cluster(only(|s| s.fence_zombies = true));
    let out = tp("out", 0);
    let zombie = t.cluster.transactions().begin("app").await.unwrap();
    zombie.send("out", b"from-zombie".to_vec()).await.unwrap();
    let fresh = t.cluster.transactions().begin("app").await.unwrap();
    assert_eq!(
        (zombie.producer_epoch(), fresh.producer_epoch()),
        (Some(0), Some(1))
    );
    let batches = t.cluster.leader_log(&out).unwrap().all_batches().unwrap();
    assert_eq!(
        batches.last().unwrap().control,
        Some(ControlType::Abort),
        "the old instance was aborted"
    );
    assert_eq!(
        batches[0].producer_epoch, 0,
        "transactional data carries the producer epoch"
    );
    for err in [
        zombie.send("out", b"late".to_vec()).await.unwrap_err(),
        zombie.commit().await.unwrap_err(),
    ] {
        assert!(
            matches!(
                err,
                MiniKafkaError::TransactionFenced {
                    epoch: 0,
                    current: 1,
                    ..
                }
            ),
            "{err}"
        );
    }
    fresh.send("out", b"from-fresh".to_vec()).await.unwrap();
    fresh.commit().await.unwrap();
    assert_eq!(committed(&t.cluster, &out), ["from-fresh"]);
}

#[tokio::test]
async fn the_books_rules_refuse_an_active_id_and_do_not_fence_zombies() {
    let t = cluster(RuleSwitches::default());
    let out = tp("out", 0);
    let first = t.cluster.transactions().begin("app").await.unwrap();
    assert!(matches!(
        t.cluster.transactions().begin("app").await,
        Err(MiniKafkaError::TransactionAlreadyActive { .. })
    ));
    first.commit().await.unwrap();
    let second = t.cluster.transactions().begin("app").await.unwrap();
    // The old handle is only an id: it writes into the new instance.
    first.send("out", b"zombie-write".to_vec()).await.unwrap();
    second.commit().await.unwrap();
    assert_eq!(
        committed(&t.cluster, &out),
        ["zombie-write"],
        "the book's documented limit"
    );
}

#[tokio::test]
async fn open_transactions_time_out_on_the_clock_under_the_kafka_rule() {
    let t = cluster(only(|s| s.transaction_timeout = true));
    let out = tp("out", 0);
    let tx = t.cluster.transactions().begin("slow").await.unwrap();
    tx.send("out", b"never-committed".to_vec()).await.unwrap();
    t.append(&out, "behind", AckMode::Leader).await.unwrap();
    t.clock.advance(59_999);
    t.cluster.tick().unwrap();
    assert_eq!(
        t.cluster.transactions().get("slow").unwrap().state,
        TransactionState::Ongoing
    );
    assert!(committed(&t.cluster, &out).is_empty());
    t.clock.advance(1);
    t.cluster.tick().unwrap();
    assert_eq!(
        t.cluster.transactions().get("slow").unwrap().state,
        TransactionState::CompleteAbort
    );
    assert_eq!(committed(&t.cluster, &out), ["behind"]);
    let last = t
        .cluster
        .leader_log(&out)
        .unwrap()
        .all_batches()
        .unwrap()
        .pop()
        .unwrap();
    assert_eq!(last.control, Some(ControlType::Abort));
    assert!(matches!(
        tx.commit().await,
        Err(MiniKafkaError::InvalidTransactionState { .. })
    ));
}

#[tokio::test]
async fn the_books_rules_have_no_transaction_timeout() {
    let t = cluster(RuleSwitches::default());
    let tx = t.cluster.transactions().begin("slow").await.unwrap();
    tx.send("out", b"v".to_vec()).await.unwrap();
    t.clock.advance(10 * 60_000);
    t.cluster.tick().unwrap();
    assert_eq!(
        t.cluster.transactions().get("slow").unwrap().state,
        TransactionState::Ongoing
    );
}

#[tokio::test]
async fn marker_resend_alone_repairs_missing_markers_on_recovery() {
    let t = cluster(only(|s| s.resend_markers_on_recovery = true));
    let out = tp("out", 0);
    let tx = t.cluster.transactions().begin("tx").await.unwrap();
    tx.send("out", b"v".to_vec()).await.unwrap();
    tx.commit_until(Some("prepare".parse().unwrap()))
        .await
        .unwrap();
    let report = t.cluster.last_recovery();
    assert_eq!(report.markers_resent.len(), 1);
    assert_eq!(
        (
            report.markers_resent[0].tp.clone(),
            report.markers_resent[0].offset
        ),
        (out.clone(), 1)
    );
    let batches = t.cluster.leader_log(&out).unwrap().all_batches().unwrap();
    assert_eq!(batches[1].control, Some(ControlType::Commit));
    // Recovering again re-sends nothing: the marker is there now.
    assert!(t.cluster.crash().unwrap().markers_resent.is_empty());
}

#[test]
fn the_kafka_rule_set_switches_everything_on() {
    let c = MiniKafkaConfig::new("/tmp/unused").with_rules(Rules::Kafka);
    assert_eq!(c.rules.rules(), Some(Rules::Kafka));
    assert!(c.rules.acks_all_by_high_watermark);
}

/// Kafka rules: a known transactional id's epochs live in the journal's
/// begin frames (as Kafka's `__transaction_state` holds them), so a begin
/// replaces `producer-identities.json` only for a new id; the epochs keep
/// rising across a reopen and a crash, and a zombie from before either is
/// still fenced.
#[tokio::test]
async fn a_known_ids_epochs_are_journaled_and_survive_a_reopen_and_a_crash() {
    let t = cluster(only(|s| s.fence_zombies = true));
    let file = t.dir.path().join("producer-identities.json");
    let begin_commit = |t: &TestCluster| {
        let cluster = t.cluster.clone();
        async move {
            let tx = cluster.transactions().begin("app").await.unwrap();
            tx.send("out", b"v".to_vec()).await.unwrap();
            let epoch = tx.producer_epoch();
            tx.commit().await.unwrap();
            epoch
        }
    };
    assert_eq!(begin_commit(&t).await, Some(0));
    let written = std::fs::read(&file).unwrap();
    assert_eq!(written, br#"{"transactional.id:app":[0,0]}"#);
    let inode = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&file).unwrap());
    assert_eq!(begin_commit(&t).await, Some(1));
    assert_eq!(begin_commit(&t).await, Some(2));
    assert_eq!(
        std::fs::read(&file).unwrap(),
        written,
        "known id: file untouched"
    );
    assert_eq!(
        std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&file).unwrap()),
        inode,
        "not even replaced by the same bytes"
    );
    assert_eq!(
        t.cluster
            .with_state(|s| s.identities().get("transactional.id:app")),
        Some((0, 2))
    );

    let t = t.reopen();
    assert_eq!(
        begin_commit(&t).await,
        Some(3),
        "taken back from the journal"
    );
    let zombie = t.cluster.transactions().begin("app").await.unwrap();
    assert_eq!(zombie.producer_epoch(), Some(4));
    t.cluster.crash().unwrap();
    let fresh = t.cluster.transactions().begin("app").await.unwrap();
    assert_eq!(fresh.producer_epoch(), Some(5), "after a crash too");
    let err = zombie.send("out", b"late".to_vec()).await.unwrap_err();
    assert!(
        matches!(
            err,
            MiniKafkaError::TransactionFenced {
                epoch: 4,
                current: 5,
                ..
            }
        ),
        "{err}"
    );
    fresh.commit().await.unwrap();
    assert_eq!(std::fs::read(&file).unwrap(), written);
}
