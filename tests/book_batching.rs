//! The book's `tests/producer/test_batching.py`, ported onto the engine's
//! `Producer` and its `BatchAccumulator` (E17): each test names the book's.
//! The book awaits one future per record; here a flushed batch has one
//! append future, and a record's offset is its batch's base plus its
//! place in the batch, as the book's `RecordMetadata` computes it.

mod common;

use common::{TestCluster, tp};
use minikafka::engine::{AckMode, MiniKafkaError};

/// `test_linger_flushes_one_partition_batch`: two records wait; nothing is
/// sent before `linger_ms` has passed on the clock, then both go as one
/// batch at offsets 0 and 1.
#[tokio::test]
async fn test_linger_flushes_one_partition_batch() {
    let t = TestCluster::new(&[1], 1);
    t.clock.advance(100);
    t.cluster.create_topic("events", 1, 1).unwrap();
    let mut producer = t.cluster.producer("p").unwrap();
    producer.set_batching(4096, 10, 1_048_576).unwrap();
    let now = || minikafka::engine::Clock::now_ms(&t.clock);
    let (first, sent) = producer
        .accumulate("events", None, Some(b"k"), Some(b"1".to_vec()), now())
        .unwrap();
    assert!(sent.is_none(), "not full: it waits");
    let (_, sent) = producer
        .accumulate("events", None, Some(b"k"), Some(b"2".to_vec()), now())
        .unwrap();
    assert!(sent.is_none());
    assert!(
        producer.run_due_flushes(now()).is_empty(),
        "not done before linger"
    );
    assert_eq!(
        t.cluster
            .leader_log(&first)
            .unwrap()
            .all_batches()
            .unwrap()
            .len(),
        0
    );
    t.clock.advance(10);
    let mut sent = producer.run_due_flushes(now());
    assert_eq!(sent.len(), 1);
    let batch = sent.remove(0);
    assert_eq!((batch.tp.clone(), batch.records), (tp("events", 0), 2));
    let appended = batch.append.unwrap().await.unwrap();
    assert_eq!(appended.base_offset(), Some(0));
    assert_eq!(
        appended.last_offset(),
        Some(1),
        "the second record's offset"
    );
    assert_eq!(
        t.cluster
            .leader_log(&first)
            .unwrap()
            .all_batches()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(t.visible(&first), ["1", "2"]);
}

/// `test_batch_size_flushes_without_waiting_for_linger`: with
/// `batch_size=68` two one-byte records (40 estimated bytes each) fill
/// the batch, which is sent at once although linger is 1000 ms.
#[tokio::test]
async fn test_batch_size_flushes_without_waiting_for_linger() {
    let t = TestCluster::new(&[1], 1);
    t.cluster.create_topic("events", 1, 1).unwrap();
    let mut producer = t.cluster.producer("p").unwrap();
    producer.set_batching(68, 1000, 1_048_576).unwrap();
    let (_, sent) = producer
        .accumulate("events", None, None, Some(b"a".to_vec()), 0)
        .unwrap();
    assert!(sent.is_none());
    let (p, sent) = producer
        .accumulate("events", None, None, Some(b"b".to_vec()), 0)
        .unwrap();
    let sent = sent.expect("the batch is full: sent without waiting");
    assert_eq!(sent.records, 2);
    let appended = sent.append.unwrap().await.unwrap();
    assert_eq!(appended.offsets, Some((0, 1)));
    assert_eq!(
        t.cluster
            .leader_log(&p)
            .unwrap()
            .all_batches()
            .unwrap()
            .len(),
        1
    );
    assert!(producer.flush().is_empty(), "close: nothing left to send");
}

/// `test_producer_buffer_is_bounded`: with `max_buffer_bytes=40` one
/// one-byte record fills the buffer; a 20-byte one is refused with
/// `ProducerBufferFull`, and a flush still sends the first.
#[tokio::test]
async fn test_producer_buffer_is_bounded() {
    let t = TestCluster::new(&[1], 1);
    t.cluster.create_topic("events", 1, 1).unwrap();
    let mut producer = t.cluster.producer("p").unwrap();
    producer.set_batching(4096, 1000, 40).unwrap();
    producer
        .accumulate("events", None, None, Some(b"a".to_vec()), 0)
        .unwrap();
    let err = producer
        .accumulate("events", None, None, Some(vec![b'b'; 20]), 0)
        .unwrap_err();
    assert!(
        matches!(err, MiniKafkaError::ProducerBufferFull { .. }),
        "{err}"
    );
    let sent = producer.flush();
    assert_eq!(sent.len(), 1);
    let appended = sent
        .into_iter()
        .next()
        .unwrap()
        .append
        .unwrap()
        .await
        .unwrap();
    assert_eq!(appended.offsets, Some((0, 0)), "only the first record");
}

/// Beyond the book's tests: a keyless batch moves the sticky partition on,
/// the batch carries the producer's id and sequence (E7), and acks=all
/// leaves its append waiting for the follower.
#[tokio::test]
async fn sticky_partition_moves_on_when_a_keyless_batch_closes() {
    let t = TestCluster::new(&[1, 2], 1);
    t.cluster.create_topic("events", 2, 2).unwrap();
    let mut producer = t.cluster.producer("p").unwrap().with_acks(AckMode::All);
    producer.set_batching(4096, 0, 1_048_576).unwrap();
    let (a, _) = producer
        .accumulate("events", None, None, Some(b"x".to_vec()), 0)
        .unwrap();
    assert_eq!(a, tp("events", 0));
    let sent = producer.run_due_flushes(0);
    assert_eq!(sent.len(), 1, "linger 0: due at once");
    let (b, _) = producer
        .accumulate("events", None, None, Some(b"y".to_vec()), 0)
        .unwrap();
    assert_eq!(b, tp("events", 1), "the next keyless batch goes on");
    let batches = t.cluster.leader_log(&a).unwrap().all_batches().unwrap();
    assert_eq!(
        (batches[0].producer_id, batches[0].base_sequence),
        (producer.producer_id(), 0)
    );
    assert_eq!(producer.accumulator().total_bytes, 40);
    assert_eq!(producer.drop_accumulated(), 1, "a crash drops what waits");
    assert!(producer.flush().is_empty());
}

/// The book's `tests/unit/test_partitioner.py`
/// `test_keyed_partition_is_stable`: `crc32(key) mod partitions`, the same
/// every time.
#[test]
fn test_keyed_partition_is_stable() {
    use minikafka::engine::producer::partitioner::StickyPartitioner;
    let mut p = StickyPartitioner::default();
    let expected = crc32fast::hash(b"user-42") % 3;
    assert_eq!(p.choose(3, Some(b"user-42")), expected);
    assert_eq!(p.choose(3, Some(b"user-42")), p.choose(3, Some(b"user-42")));
}

/// `test_keyless_partition_is_sticky_until_batch_closes`.
#[test]
fn test_keyless_partition_is_sticky_until_batch_closes() {
    use minikafka::engine::producer::partitioner::StickyPartitioner;
    let mut p = StickyPartitioner::default();
    let first = p.choose(3, None);
    assert_eq!(p.choose(3, None), first);
    p.on_batch_closed(3, first);
    assert_eq!(p.choose(3, None), (first + 1) % 3);
}

/// The book's `tests/reliability/test_shutdown.py`
/// `test_crash_does_not_drain_buffered_producer`, through the session: a
/// record waiting out a 1,000 ms linger is dropped by a crash, never
/// written, and the accumulator is empty after it.
#[test]
fn test_crash_does_not_drain_buffered_producer() {
    use minikafka::session::recording::Header;
    use minikafka::session::{Action, Driver, Outcome, Snapshot};
    let header: Header = serde_json::from_value(serde_json::json!({
        "mk_recording": 1, "rules": "minikafka",
        "cluster": {"brokers": [1], "topics": [{"name": "events", "partitions": 1, "replication_factor": 1}]},
    }))
    .unwrap();
    let mut driver = Driver::new(&header, None).unwrap();
    let act = |json| Action::from_json(&json).unwrap();
    let sent = driver.apply(&act(serde_json::json!({"accumulate":
        {"producer": "p", "topic": "events", "value": "lost", "linger_ms": 1000}})));
    assert!(matches!(sent, Outcome::Ok), "{sent:?}");
    assert_eq!(Snapshot::of(&driver).accumulators.len(), 1);
    driver.apply(&act(serde_json::json!("crash")));
    let s = Snapshot::of(&driver);
    assert!(s.accumulators.is_empty(), "the crash dropped what waited");
    driver.apply(&act(serde_json::json!({"advance_clock": {"ms": 1000}})));
    let s = Snapshot::of(&driver);
    assert_eq!(
        s.partitions[0].replicas[0].log_end_offset, 0,
        "never written"
    );
    // A flush after the crash has nothing to send.
    let flushed = driver.apply(&act(serde_json::json!({"flush": {"producer": "p"}})));
    assert!(matches!(flushed, Outcome::Ok), "{flushed:?}");
    assert_eq!(
        Snapshot::of(&driver).partitions[0].replicas[0].log_end_offset,
        0
    );
}
