//! A topic's own `min.insync.replicas` (TopicConfig::min_insync_replicas,
//! not the book's: docs/book-differences.md) over the cluster's: an
//! acks=all append judged by the topic's value when it sets one, by the
//! cluster's otherwise (the topic's capped at its replication factor, as
//! Kafka 4.4 caps it); an alteration judged from the next append; kept in
//! metadata.json across a reopen.

mod common;

use common::{TestCluster, tp};
use minikafka::engine::MiniKafkaError;
use minikafka::engine::core::metadata::{TimestampType, TopicConfig};
use minikafka::engine::{AckMode, TopicPartition};

fn min_isr(n: u32) -> TopicConfig {
    TopicConfig {
        min_insync_replicas: Some(n),
        ..TopicConfig::default()
    }
}

/// Two brokers, the cluster's minimum ISR 1; topic `strict` (RF 2) sets
/// 2, `loose` (RF 2) sets none, `over` (RF 2) sets 5, more than its
/// replicas, which Kafka takes and applies as 2.
fn cluster() -> TestCluster {
    let t = TestCluster::new(&[1, 2], 1);
    for (name, config) in [
        ("strict", min_isr(2)),
        ("loose", TopicConfig::default()),
        ("over", min_isr(5)),
    ] {
        t.cluster
            .create_topic_configured(name, 1, 2, TimestampType::CreateTime, config)
            .unwrap();
    }
    t
}

/// Broker 2 stopped and, once the lag time has passed, out of every ISR
/// (broker 1 leads every partition: the first of each assignment).
fn shrink(t: &TestCluster) {
    t.cluster.stop_broker(2).unwrap();
    t.clock.advance(10_001);
    t.cluster.replicate_all_once().unwrap();
    for topic in ["strict", "loose", "over"] {
        let set = t.cluster.replica_set(&tp(topic, 0)).unwrap();
        assert_eq!(set.isr(), [1], "{topic}");
    }
}

/// Whether an acks=all append of `value` to `p` is refused as below the
/// ISR minimum (`Err(min)`), or completes once the followers fetch.
async fn acks_all(t: &TestCluster, p: &TopicPartition, value: &str) -> Result<(), usize> {
    let pending = t.append(p, value, AckMode::All);
    t.cluster.replicate_all_once().unwrap();
    match pending.await {
        Ok(_) => Ok(()),
        Err(MiniKafkaError::NotEnoughReplicas { min, .. }) => Err(min),
        Err(e) => panic!("{p}: {e}"),
    }
}

#[tokio::test]
async fn the_topics_minimum_refuses_what_the_clusters_would_take() {
    let t = cluster();
    let (strict, loose, over) = (tp("strict", 0), tp("loose", 0), tp("over", 0));
    // Every replica in the ISR: 5 is applied as the replication factor.
    assert_eq!(acks_all(&t, &over, "a").await, Ok(()));
    assert_eq!(acks_all(&t, &strict, "a").await, Ok(()));
    shrink(&t);
    assert_eq!(acks_all(&t, &strict, "b").await, Err(2));
    assert_eq!(acks_all(&t, &over, "b").await, Err(2));
    assert_eq!(acks_all(&t, &loose, "b").await, Ok(()));
    // acks=1 is not judged by the minimum.
    t.append(&strict, "c", AckMode::Leader).await.unwrap();
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(
        t.visible(&strict),
        ["a", "c"],
        "the refused append wrote nothing"
    );
    t.cluster.with_state(|s| {
        assert_eq!(s.min_insync_replicas("strict"), 2);
        assert_eq!(s.min_insync_replicas("loose"), 1);
        assert_eq!(s.min_insync_replicas("over"), 2);
        assert_eq!(s.partition(&strict).unwrap().min_insync_replicas(), 2);
    });
}

#[tokio::test]
async fn an_alteration_judges_the_next_append_and_a_reopen_keeps_it() {
    let t = cluster();
    shrink(&t);
    let (strict, loose) = (tp("strict", 0), tp("loose", 0));
    assert!(t.cluster.alter_topic_config("strict", min_isr(1)).unwrap());
    assert!(t.cluster.alter_topic_config("loose", min_isr(2)).unwrap());
    assert_eq!(acks_all(&t, &strict, "a").await, Ok(()));
    assert_eq!(acks_all(&t, &loose, "b").await, Err(2));

    let t = t.reopen();
    assert_eq!(t.cluster.topic_configs()["strict"], min_isr(1));
    assert_eq!(t.cluster.topic_configs()["loose"], min_isr(2));
    t.cluster.with_state(|s| {
        assert_eq!(s.partition(&strict).unwrap().min_insync_replicas(), 1);
        assert_eq!(s.partition(&loose).unwrap().min_insync_replicas(), 2);
    });
    if t.cluster.replica_set(&loose).unwrap().isr() != [1] {
        shrink(&t);
    }
    assert_eq!(acks_all(&t, &strict, "c").await, Ok(()));
    assert_eq!(acks_all(&t, &loose, "d").await, Err(2));

    // Back to no setting of its own: the cluster's 1 again.
    assert!(
        t.cluster
            .alter_topic_config("loose", TopicConfig::default())
            .unwrap()
    );
    assert_eq!(acks_all(&t, &loose, "e").await, Ok(()));
    let t = t.reopen();
    assert!(t.cluster.topic_configs()["loose"].is_default());
    assert_eq!(
        t.cluster
            .with_state(|s| s.partition(&loose).unwrap().min_insync_replicas()),
        1
    );
}

/// 0 is refused (Kafka's INVALID_CONFIG) at creation and at alteration,
/// with nothing written; a topic's partitions grown later take its value.
#[test]
fn zero_is_refused_and_grown_partitions_take_the_topics_value() {
    let t = cluster();
    let err = t
        .cluster
        .create_topic_configured("zero", 1, 2, TimestampType::CreateTime, min_isr(0))
        .unwrap_err();
    assert_eq!(err.code(), "InvalidConfig", "{err}");
    assert!(!t.cluster.topic_configs().contains_key("zero"));
    let err = t
        .cluster
        .alter_topic_config("strict", min_isr(0))
        .unwrap_err();
    assert_eq!(err.code(), "InvalidConfig", "{err}");
    assert_eq!(t.cluster.topic_configs()["strict"], min_isr(2));

    t.cluster.create_partitions("strict", 2).unwrap();
    let grown = tp("strict", 1);
    assert_eq!(
        t.cluster
            .with_state(|s| s.partition(&grown).unwrap().min_insync_replicas()),
        2
    );
}

/// A metadata.json whose topic sets 0 (written by hand) is refused as
/// corrupt, naming the file, rather than opened with no minimum.
#[test]
fn a_metadata_file_with_zero_is_corrupt() {
    let t = cluster();
    let config = t.cluster.config();
    let path = t.dir.path().join("metadata.json");
    drop(t.cluster);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(r#""min_insync_replicas":2"#), "{text}");
    std::fs::write(
        &path,
        text.replace(r#""min_insync_replicas":2"#, r#""min_insync_replicas":0"#),
    )
    .unwrap();
    let err = minikafka::engine::BrokerCluster::open(config, minikafka::engine::ManualClock::new())
        .unwrap_err();
    assert_eq!(err.code(), "Corrupt", "{err}");
    assert!(err.to_string().contains("min_insync_replicas"), "{err}");
}
