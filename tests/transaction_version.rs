//! The `transaction_version` rule switch (KIP-890): version 2 bumps the
//! producer epoch at every end and fences a late write of the old epoch;
//! version 1 lets the late write land after the marker and hang the LSO
//! until a marker of its id or the transaction timeout ends it (or forever
//! under the book's rules).

mod common;

use common::{TestCluster, committed, tp};
use minikafka::engine::config::{RuleSwitches, Rules, TransactionVersion};
use minikafka::engine::core::record::Record;
use minikafka::engine::{AckMode, ControlType, MiniKafkaConfig, MiniKafkaError, RecordBatch};

fn cluster(rules: RuleSwitches) -> TestCluster {
    let t = TestCluster::with_config(&[1], |c| MiniKafkaConfig {
        rules,
        transaction_timeout_ms: 1_000,
        ..c
    });
    t.cluster.create_topic("out", 1, 1).unwrap();
    t
}

fn kafka(version: TransactionVersion) -> RuleSwitches {
    RuleSwitches {
        transaction_version: version,
        ..Rules::Kafka.switches()
    }
}

fn record(value: &str) -> Vec<Record> {
    vec![Record {
        value: Some(value.as_bytes().to_vec().into()),
        ..Record::default()
    }]
}

fn markers(t: &TestCluster) -> Vec<(i64, ControlType, i16)> {
    let batches = t.cluster.leader_log(&tp("out", 0)).unwrap();
    let batches = batches.all_batches().unwrap();
    batches
        .iter()
        .filter_map(|b| {
            b.control
                .map(|c| (b.base_offset, c, b.producer_epoch as i16))
        })
        .collect()
}

/// One committed transaction of "app" writing "a".
async fn commit_one(t: &TestCluster) {
    let tx = t.cluster.transactions().begin("app").await.unwrap();
    tx.send("out", b"a".to_vec()).await.unwrap();
    tx.commit().await.unwrap();
}

#[tokio::test]
async fn version_2_bumps_the_epoch_at_each_end_and_the_next_transaction_goes_on_with_it() {
    let t = cluster(kafka(TransactionVersion::V2));
    let first = t.cluster.transactions().begin("app").await.unwrap();
    first.send("out", b"a".to_vec()).await.unwrap();
    first.commit().await.unwrap();
    let data = t.cluster.transactions().get("app").unwrap();
    assert_eq!(
        (data.producer, data.next_producer_epoch),
        (Some((0, 0)), Some(1))
    );
    assert_eq!(markers(&t), vec![(1, ControlType::Commit, 1)]);
    let second = t.cluster.transactions().begin("app").await.unwrap();
    assert_eq!(
        second.producer_epoch(),
        Some(1),
        "no new init: the bumped epoch"
    );
    second.send("out", b"b".to_vec()).await.unwrap();
    second.abort().await.unwrap();
    assert_eq!(
        markers(&t),
        vec![(1, ControlType::Commit, 1), (3, ControlType::Abort, 2)]
    );
    assert_eq!(committed(&t.cluster, &tp("out", 0)), vec!["a"]);
}

#[tokio::test]
async fn version_1_keeps_the_epoch_of_each_begin_and_writes_markers_with_it() {
    let t = cluster(kafka(TransactionVersion::V1));
    commit_one(&t).await;
    let data = t.cluster.transactions().get("app").unwrap();
    assert_eq!(
        (data.producer, data.next_producer_epoch),
        (Some((0, 0)), None)
    );
    assert_eq!(markers(&t), vec![(1, ControlType::Commit, 0)]);
}

#[tokio::test]
async fn version_2_fences_the_late_write_and_nothing_is_appended() {
    let t = cluster(kafka(TransactionVersion::V2));
    commit_one(&t).await;
    let err = (t.cluster.transactions())
        .late_send("app", "out", Some(0), record("late"))
        .unwrap_err();
    assert!(
        matches!(
            err,
            MiniKafkaError::InvalidProducerEpoch {
                producer_id: 0,
                epoch: 0,
                current: 1,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(err.code(), "InvalidProducerEpoch");
    let out = tp("out", 0);
    assert_eq!(
        t.cluster
            .leader_log(&out)
            .unwrap()
            .all_batches()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(t.cluster.last_stable_offset(&out).unwrap(), 2);
}

#[tokio::test]
async fn version_1_late_write_hangs_the_lso_until_the_transaction_timeout() {
    let t = cluster(kafka(TransactionVersion::V1));
    commit_one(&t).await;
    let out = tp("out", 0);
    let (_, at) = (t.cluster.transactions())
        .late_send("app", "out", Some(0), record("late"))
        .unwrap();
    assert_eq!(at, 2, "after the COMMIT marker at 1");
    let after = RecordBatch::new(record("after"));
    (t.cluster.append_batch(&out, after, AckMode::Leader))
        .await
        .unwrap();
    assert_eq!(t.cluster.last_stable_offset(&out).unwrap(), 2);
    assert_eq!(committed(&t.cluster, &out), vec!["a"]);
    t.clock.advance(999);
    t.cluster.tick().unwrap();
    assert_eq!(t.cluster.last_stable_offset(&out).unwrap(), 2, "not yet");
    t.clock.advance(1);
    t.cluster.tick().unwrap();
    assert_eq!(
        markers(&t),
        vec![(1, ControlType::Commit, 0), (4, ControlType::Abort, 0)]
    );
    assert_eq!(t.cluster.last_stable_offset(&out).unwrap(), 5);
    assert_eq!(committed(&t.cluster, &out), vec!["a", "after"]);
}

#[tokio::test]
async fn under_the_books_rules_the_late_write_hangs_forever() {
    let t = cluster(Rules::Minikafka.switches());
    commit_one(&t).await;
    let out = tp("out", 0);
    (t.cluster.transactions())
        .late_send("app", "out", Some(0), record("late"))
        .unwrap();
    t.clock.advance(10_000_000);
    t.cluster.tick().unwrap();
    assert_eq!(t.cluster.last_stable_offset(&out).unwrap(), 2);
}

#[tokio::test]
async fn a_later_marker_of_the_same_id_on_the_partition_ends_the_hang() {
    let t = cluster(Rules::Minikafka.switches());
    commit_one(&t).await;
    let out = tp("out", 0);
    (t.cluster.transactions())
        .late_send("app", "out", Some(0), record("late"))
        .unwrap();
    let next = t.cluster.transactions().begin("app").await.unwrap();
    next.send("out", b"b".to_vec()).await.unwrap();
    next.commit().await.unwrap();
    assert_eq!(t.cluster.last_stable_offset(&out).unwrap(), 5);
}

#[tokio::test]
async fn a_late_write_needs_an_ended_transaction() {
    let t = cluster(kafka(TransactionVersion::V1));
    let tx = t.cluster.transactions().begin("app").await.unwrap();
    tx.send("out", b"a".to_vec()).await.unwrap();
    let err = (t.cluster.transactions())
        .late_send("app", "out", Some(0), record("late"))
        .unwrap_err();
    assert_eq!(err.code(), "InvalidTransactionState", "{err}");
    assert!(err.to_string().contains("ongoing"), "{err}");
}

/// A new producer's `begin` (a served client's InitProducerId) under
/// version 2 takes an epoch past the one the last end bumped to, as
/// Kafka's InitProducerId bumps it; a plain `begin` goes on with the
/// bumped one.
#[tokio::test]
async fn version_2_a_new_producer_takes_an_epoch_past_the_bumped_one() {
    let t = cluster(kafka(TransactionVersion::V2));
    commit_one(&t).await;
    let fresh = t
        .cluster
        .transactions()
        .begin_new_producer("app")
        .await
        .unwrap();
    assert_eq!(fresh.producer_epoch(), Some(2), "past the bumped 1");
    fresh.abort().await.unwrap();
    let next = t.cluster.transactions().begin("app").await.unwrap();
    assert_eq!(next.producer_epoch(), Some(3), "the abort's bump, no init");
    next.abort().await.unwrap();
    // Version 1: every begin takes the next epoch, a new producer's too.
    let t = cluster(kafka(TransactionVersion::V1));
    commit_one(&t).await;
    let fresh = (t.cluster.transactions().begin_new_producer("app").await).unwrap();
    assert_eq!(fresh.producer_epoch(), Some(1));
}
