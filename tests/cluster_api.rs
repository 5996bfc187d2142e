//! E3, E8 and the public API: topic creation and its errors, offsets, close
//! and reopen of every persisted structure, and bad input that must give typed
//! errors with clear messages (never a panic).

mod common;

use common::{TestCluster, tp};
use minikafka::engine::{
    AckMode, BrokerCluster, IsolationLevel, ManualClock, MiniKafkaConfig, MiniKafkaError,
};

#[test]
fn create_topic_assigns_round_robin_and_persists() {
    let t = TestCluster::new(&[1, 2, 3], 1);
    t.cluster.create_topic("out", 4, 2).unwrap();
    let assignment = |p| {
        t.cluster
            .replica_set(&tp("out", p))
            .unwrap()
            .replicas()
            .iter()
            .map(|r| r.broker)
            .collect::<Vec<_>>()
    };
    assert_eq!(assignment(0), [1, 2]);
    assert_eq!(assignment(1), [2, 3]);
    assert_eq!(assignment(2), [3, 1]);
    assert_eq!(assignment(3), [1, 2]);
    assert_eq!(t.cluster.replica_set(&tp("out", 2)).unwrap().leader_id(), 3);
    for (broker, p) in [(1, 0), (2, 0), (3, 2), (1, 2)] {
        assert!(
            t.dir
                .path()
                .join(format!("broker-{broker}/out-{p}/00000000000000000000.log"))
                .exists()
        );
    }
    let t = t.reopen();
    assert_eq!(t.cluster.topics(), [("out".to_string(), 4)]);
    assert_eq!(t.cluster.replica_set(&tp("out", 1)).unwrap().leader_id(), 2);
}

#[test]
fn topic_creation_errors_are_typed_and_leave_nothing_behind() {
    let t = TestCluster::new(&[1, 2], 1);
    let err = t.cluster.create_topic("bad/name", 1, 1).unwrap_err();
    assert!(
        matches!(err, MiniKafkaError::InvalidTopicName { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("bad/name"));
    let err = t.cluster.create_topic("t", 1, 3).unwrap_err();
    assert!(
        matches!(
            err,
            MiniKafkaError::InvalidReplicationFactor {
                factor: 3,
                brokers: 2
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("2 configured broker"));
    assert!(matches!(
        t.cluster.create_topic("t", 0, 1),
        Err(MiniKafkaError::InvalidPartitions(0))
    ));
    assert!(t.cluster.topics().is_empty());
    assert!(!t.dir.path().join("broker-1/t-0").exists());
    t.cluster.create_topic("t", 1, 1).unwrap();
    assert!(matches!(
        t.cluster.create_topic("t", 1, 1),
        Err(MiniKafkaError::TopicAlreadyExists(_))
    ));
}

#[tokio::test]
async fn unknown_partitions_and_out_of_range_fetches_are_typed_errors() {
    let t = TestCluster::new(&[1], 1);
    t.cluster.create_topic("t", 1, 1).unwrap();
    let err = t
        .append(&tp("t", 1), "x", AckMode::Leader)
        .await
        .unwrap_err();
    assert!(
        matches!(err, MiniKafkaError::UnknownTopicOrPartition(ref s) if s == "t-1"),
        "{err}"
    );
    assert!(
        t.cluster
            .fetch(&tp("nope", 0), 0, 1, IsolationLevel::ReadUncommitted)
            .is_err()
    );
    t.append(&tp("t", 0), "x", AckMode::Leader).await.unwrap();
    let err = t
        .cluster
        .fetch(&tp("t", 0), 5, 1, IsolationLevel::ReadUncommitted)
        .unwrap_err();
    assert!(
        matches!(
            err,
            MiniKafkaError::OffsetOutOfRange {
                offset: 5,
                start: 0,
                end: 1,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "offset 5 out of range for t-0: valid offsets are 0..=1"
    );
    assert!(
        t.cluster
            .fetch(&tp("t", 0), 1, 1, IsolationLevel::ReadUncommitted)
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        t.cluster.stop_broker(4),
        Err(MiniKafkaError::UnknownBroker(4))
    ));
    assert!(t.cluster.replica_log(&tp("t", 0), 2).is_err());
}

#[test]
fn committed_offsets_survive_reopen() {
    let t = TestCluster::new(&[1], 1);
    let input = tp("in", 0);
    assert_eq!(t.cluster.offsets().get("workers", &input), None);
    t.cluster.offsets().commit("workers", &input, 7).unwrap();
    t.cluster
        .offsets()
        .commit_many(
            "workers",
            &[(tp("in", 1), 3), (input.clone(), 8)].into_iter().collect(),
        )
        .unwrap();
    let t = t.reopen();
    assert_eq!(t.cluster.offsets().get("workers", &input), Some(8));
    assert_eq!(t.cluster.offsets().get("workers", &tp("in", 1)), Some(3));
}

#[test]
fn corrupt_metadata_or_offsets_files_name_the_file() {
    for (file, text) in [
        ("metadata.json", "{\"topics\":{"),
        ("offsets.json", "[1,2]"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(file), text).unwrap();
        let err =
            BrokerCluster::open(MiniKafkaConfig::new(dir.path()), ManualClock::new()).unwrap_err();
        assert!(matches!(err, MiniKafkaError::Corrupt { .. }), "{err}");
        let message = err.to_string();
        assert!(message.contains(file), "{message}");
        assert!(!message.contains('\n'), "one line: {message}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join(file)).unwrap(),
            text,
            "left unchanged"
        );
    }
}

#[test]
fn metadata_naming_an_unconfigured_broker_is_refused() {
    let t = TestCluster::new(&[1, 2], 1);
    t.cluster.create_topic("t", 1, 2).unwrap();
    let dir = t.dir;
    drop(t.cluster);
    let err = BrokerCluster::open(
        MiniKafkaConfig::new(dir.path()).with_brokers([1]),
        ManualClock::new(),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("broker 2, which is not configured"),
        "{err}"
    );
}

#[test]
fn a_data_directory_is_opened_by_one_cluster_at_a_time() {
    let t = TestCluster::new(&[1], 1);
    let err =
        BrokerCluster::open(MiniKafkaConfig::new(t.dir.path()), ManualClock::new()).unwrap_err();
    assert!(matches!(err, MiniKafkaError::DataDirLocked { .. }), "{err}");
    assert!(err.to_string().contains("in use"), "{err}");
    let dir = t.dir;
    drop(t.cluster);
    BrokerCluster::open(MiniKafkaConfig::new(dir.path()), ManualClock::new())
        .expect("free again after drop");
}

#[test]
fn invalid_configurations_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let open = |c: MiniKafkaConfig| {
        BrokerCluster::open(c, ManualClock::new())
            .unwrap_err()
            .to_string()
    };
    assert!(
        open(MiniKafkaConfig::new(dir.path()).with_brokers([])).contains("at least one broker")
    );
    assert!(open(MiniKafkaConfig::new(dir.path()).with_brokers([1, 1])).contains("repeat"));
    assert!(
        open(MiniKafkaConfig::new(dir.path()).with_min_insync_replicas(0))
            .contains("min_insync_replicas")
    );
}

#[tokio::test]
async fn crash_drops_pending_acks_and_keeps_what_was_written() {
    let t = TestCluster::new(&[1, 2], 1);
    t.cluster.create_topic("t", 1, 2).unwrap();
    let p = tp("t", 0);
    let pending = t.append(&p, "in-flight", AckMode::All);
    let report = t.cluster.crash().unwrap();
    assert!(report.is_clean());
    assert!(matches!(pending.await, Err(MiniKafkaError::Crashed)));
    assert!(t.cluster.replica_set(&p).unwrap().pending().is_empty());
    assert_eq!(
        t.cluster.leader_log(&p).unwrap().log_end_offset().unwrap(),
        1,
        "the leader's append is on disk"
    );
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(t.visible(&p), ["in-flight"]);
}

/// Issue 16, item 5: what a reader of the book reaches for, in one call each
/// (`close()` with its error, `partition_metadata`, `log_end_offset`, a
/// `Record` with a timestamp, `tx.send` to a named partition).
#[tokio::test]
async fn the_books_calls_have_one_call_each() {
    use minikafka::engine::RecordBatch;
    use minikafka::engine::core::record::Record;
    let t = TestCluster::new(&[1, 2], 1);
    t.cluster.create_topic("out", 2, 2).unwrap();
    let p1 = tp("out", 1);
    let meta = t.cluster.partition_metadata(&p1).unwrap();
    assert_eq!(
        (meta.replicas, meta.leader_id, meta.leader_epoch),
        (vec![2, 1], 2, 0)
    );
    assert!(matches!(
        t.cluster.partition_metadata(&tp("out", 7)),
        Err(MiniKafkaError::UnknownTopicOrPartition(_))
    ));
    let record = Record::new(Some(b"k".to_vec().into()), None, 1234);
    assert_eq!((record.timestamp_ms, record.value.clone()), (1234, None));
    assert_eq!(Record::value("v").with_timestamp(7).timestamp_ms, 7);
    t.cluster
        .append_batch(&p1, RecordBatch::new(vec![record]), AckMode::Leader)
        .await
        .unwrap();
    assert_eq!(t.cluster.log_end_offset(&p1).unwrap(), 1);
    let stamped = t.cluster.leader_log(&p1).unwrap().all_batches().unwrap();
    assert_eq!(
        stamped[0].records[0].timestamp_ms, 1234,
        "an explicit timestamp is kept"
    );
    let tx = t.cluster.transactions().begin("tx").await.unwrap();
    let sending = tokio::spawn({
        let tx = tx.clone();
        async move { tx.send_to("out", 1, "x").await }
    });
    for _ in 0..4 {
        tokio::task::yield_now().await;
    }
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(sending.await.unwrap().unwrap(), (p1.clone(), 1));
    t.cluster.replicate_all_once().unwrap();
    let dir = t.dir.path().to_path_buf();
    t.cluster.close().unwrap();
    assert!(
        dir.join("replication-offset-checkpoint").exists(),
        "close wrote the HW checkpoint"
    );
}
