//! A topic's own `min.insync.replicas` (TopicConfig::min_insync_replicas,
//! not the book's: docs/book-differences.md) over the cluster's: an
//! acks=all append judged by the topic's value when it sets one, by the
//! cluster's otherwise; an alteration judged from the next append; kept in
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

/// Two brokers, the cluster's minimum ISR 1; topic `strict` (RF 2) sets 3,
/// more than its replicas, which Kafka takes too; `loose` (RF 2) sets none.
fn cluster() -> TestCluster {
    let t = TestCluster::new(&[1, 2], 1);
    t.cluster
        .create_topic_configured("strict", 1, 2, TimestampType::CreateTime, min_isr(3))
        .unwrap();
    t.cluster.create_topic("loose", 1, 2).unwrap();
    t
}

/// Whether an acks=all append of `value` to `p` is refused as below the
/// ISR minimum `min` (with the full ISR of 2), or completes once the
/// followers fetch.
async fn acks_all(t: &TestCluster, p: &TopicPartition, value: &str) -> Result<(), usize> {
    let pending = t.append(p, value, AckMode::All);
    t.cluster.replicate_all_once().unwrap();
    match pending.await {
        Ok(_) => Ok(()),
        Err(MiniKafkaError::NotEnoughReplicas { isr: 2, min, .. }) => Err(min),
        Err(e) => panic!("{p}: {e}"),
    }
}

#[tokio::test]
async fn the_topics_minimum_refuses_what_the_clusters_would_take() {
    let t = cluster();
    let (strict, loose) = (tp("strict", 0), tp("loose", 0));
    assert_eq!(acks_all(&t, &strict, "a").await, Err(3));
    assert_eq!(acks_all(&t, &loose, "b").await, Ok(()));
    // acks=1 is not judged by the minimum.
    t.append(&strict, "c", AckMode::Leader).await.unwrap();
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(
        t.visible(&strict),
        ["c"],
        "the refused append wrote nothing"
    );
    t.cluster.with_state(|s| {
        assert_eq!(s.min_insync_replicas("strict"), 3);
        assert_eq!(s.min_insync_replicas("loose"), 1);
        assert_eq!(s.partition(&strict).unwrap().min_insync_replicas(), 3);
    });
}

#[tokio::test]
async fn an_alteration_judges_the_next_append_and_a_reopen_keeps_it() {
    let t = cluster();
    let (strict, loose) = (tp("strict", 0), tp("loose", 0));
    assert!(t.cluster.alter_topic_config("strict", min_isr(2)).unwrap());
    assert!(t.cluster.alter_topic_config("loose", min_isr(3)).unwrap());
    assert_eq!(acks_all(&t, &strict, "a").await, Ok(()));
    assert_eq!(acks_all(&t, &loose, "b").await, Err(3));

    let t = t.reopen();
    assert_eq!(t.cluster.topic_configs()["strict"], min_isr(2));
    assert_eq!(acks_all(&t, &strict, "c").await, Ok(()));
    assert_eq!(acks_all(&t, &loose, "d").await, Err(3));

    // Back to no setting of its own: the cluster's 1 again.
    assert!(
        t.cluster
            .alter_topic_config("loose", TopicConfig::default())
            .unwrap()
    );
    assert_eq!(acks_all(&t, &loose, "e").await, Ok(()));
    let t = t.reopen();
    assert!(t.cluster.topic_configs()["loose"].is_default());
    assert_eq!(acks_all(&t, &loose, "f").await, Ok(()));
}

/// 0 is refused (Kafka's INVALID_CONFIG) at creation and at alteration,
/// with nothing written; a topic's partitions grown later take its value.
#[tokio::test]
async fn zero_is_refused_and_grown_partitions_take_the_topics_value() {
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
    assert_eq!(t.cluster.topic_configs()["strict"], min_isr(3));

    t.cluster.create_partitions("strict", 2).unwrap();
    assert_eq!(acks_all(&t, &tp("strict", 1), "a").await, Err(3));
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
    assert!(text.contains(r#""min_insync_replicas":3"#), "{text}");
    std::fs::write(
        &path,
        text.replace(r#""min_insync_replicas":3"#, r#""min_insync_replicas":0"#),
    )
    .unwrap();
    let err = minikafka::engine::BrokerCluster::open(config, minikafka::engine::ManualClock::new())
        .unwrap_err();
    assert_eq!(err.code(), "Corrupt", "{err}");
    assert!(err.to_string().contains("min_insync_replicas"), "{err}");
}
