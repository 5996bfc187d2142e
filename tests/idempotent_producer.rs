//! E7: producer id, epoch and per-partition sequence; exact retries return the
//! original offsets; gaps and old epochs are refused; the state is rebuilt
//! from the log on restart.

mod common;

use common::{TestCluster, tp, values};
use minikafka::engine::core::record::Record;
use minikafka::engine::{AckMode, IsolationLevel, MiniKafkaError, RecordBatch};

#[tokio::test]
async fn an_exact_retry_returns_the_original_offsets_without_a_second_copy() {
    let t = TestCluster::new(&[1], 1);
    t.cluster.create_topic("t", 1, 1).unwrap();
    let p = tp("t", 0);
    let mut producer = t.cluster.producer("p").unwrap();
    assert_eq!((producer.producer_id(), producer.epoch()), (0, 0));
    let first = producer
        .send_records(&p, vec![Record::value("a"), Record::value("b")])
        .unwrap()
        .await
        .unwrap();
    assert_eq!((first.offsets, first.duplicate), (Some((0, 1)), false));
    let retry = producer.retry_last(&p).unwrap().await.unwrap();
    assert_eq!((retry.offsets, retry.duplicate), (Some((0, 1)), true));
    assert_eq!(t.visible(&p), ["a", "b"], "no second copy");
    let next = producer
        .send(&p.topic, Some(0), None, "c")
        .unwrap()
        .1
        .await
        .unwrap();
    assert_eq!(next.offsets, Some((2, 2)));
    let batches = t.cluster.leader_log(&p).unwrap().all_batches().unwrap();
    let seqs: Vec<(i64, i32, i32)> = batches
        .iter()
        .map(|b| (b.producer_id, b.producer_epoch, b.base_sequence))
        .collect();
    assert_eq!(seqs, [(0, 0, 0), (0, 0, 2)]);
}

#[tokio::test]
async fn a_sequence_gap_is_out_of_order_and_appends_nothing() {
    let t = TestCluster::new(&[1], 1);
    t.cluster.create_topic("t", 1, 1).unwrap();
    let p = tp("t", 0);
    let ok = RecordBatch::of_values(["a"]).with_producer(7, 0, 0);
    t.cluster
        .append_batch(&p, ok, AckMode::Leader)
        .await
        .unwrap();
    let gap = RecordBatch::of_values(["c"]).with_producer(7, 0, 2);
    let err = t
        .cluster
        .append_batch(&p, gap, AckMode::Leader)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            MiniKafkaError::OutOfOrderSequence {
                producer_id: 7,
                expected: 1,
                got: 2,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(t.visible(&p), ["a"]);
}

#[tokio::test]
async fn retries_are_deduplicated_for_the_last_five_batches() {
    let t = TestCluster::new(&[1], 1);
    t.cluster.create_topic("t", 1, 1).unwrap();
    let p = tp("t", 0);
    let batches: Vec<RecordBatch> = (0..7)
        .map(|i| RecordBatch::of_values([format!("v{i}")]).with_producer(3, 0, i))
        .collect();
    for b in &batches {
        t.cluster
            .append_batch(&p, b.clone(), AckMode::Leader)
            .await
            .unwrap();
    }
    for (i, b) in batches.iter().enumerate().skip(2) {
        let r = t
            .cluster
            .append_batch(&p, b.clone(), AckMode::Leader)
            .await
            .unwrap();
        assert_eq!(
            (r.offsets, r.duplicate),
            (Some((i as i64, i as i64)), true),
            "batch {i}"
        );
    }
    let too_old = t
        .cluster
        .append_batch(&p, batches[1].clone(), AckMode::Leader)
        .await;
    assert!(matches!(
        too_old,
        Err(MiniKafkaError::OutOfOrderSequence { .. })
    ));
    assert_eq!(t.visible(&p).len(), 7);
}

#[tokio::test]
async fn idempotence_and_fencing_survive_a_restart() {
    let t = TestCluster::new(&[1, 2], 1);
    t.cluster.create_topic("t", 1, 2).unwrap();
    let p = tp("t", 0);
    let mut old = t.cluster.producer("orders").unwrap();
    old.send_records(&p, vec![Record::value("once")])
        .unwrap()
        .await
        .unwrap();
    t.cluster.replicate_all_once().unwrap();
    // A restart of the process: every in-memory structure is rebuilt from disk
    // (the producer handle lives in the client and survives it).
    t.cluster.crash().unwrap();
    // Producer state was rebuilt from the log: the retry is recognised.
    let retry = old.retry_last(&p).unwrap().await.unwrap();
    assert_eq!((retry.offsets, retry.duplicate), (Some((0, 0)), true));
    // Reopening the name bumps the epoch, durably, and fences the old handle.
    let mut new = t.cluster.producer("orders").unwrap();
    assert_eq!((new.producer_id(), new.epoch()), (old.producer_id(), 1));
    new.send_records(&p, vec![Record::value("new epoch")])
        .unwrap()
        .await
        .unwrap();
    t.cluster.crash().unwrap();
    let err = old
        .send_records(&p, vec![Record::value("zombie")])
        .unwrap_err();
    assert!(
        matches!(
            err,
            MiniKafkaError::ProducerFenced {
                epoch: 0,
                current: 1,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        t.visible(&p),
        ["once"],
        "HW: the follower has not fetched the new record yet"
    );
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(t.visible(&p), ["once", "new epoch"]);
    // The follower rebuilt the same producer state from its own log.
    t.cluster.stop_broker(1).unwrap();
    t.cluster.promote(&p, 2).unwrap();
    let retry = new.retry_last(&p).unwrap().await.unwrap();
    assert_eq!((retry.offsets, retry.duplicate), (Some((1, 1)), true));
}

#[tokio::test]
async fn keyed_records_go_to_crc32_of_the_key_and_keyless_round_robin() {
    let t = TestCluster::new(&[1], 1);
    t.cluster.create_topic("t", 4, 1).unwrap();
    let mut producer = t.cluster.producer("p").unwrap().with_acks(AckMode::All);
    let (chosen, ack) = producer.send("t", None, Some(b"user-42"), "x").unwrap();
    ack.await.unwrap();
    assert_eq!(chosen.partition, crc32fast::hash(b"user-42") % 4);
    let keyless: Vec<u32> = (0..5)
        .map(|_| producer.send("t", None, None, "y").unwrap().0.partition)
        .collect();
    assert_eq!(keyless, [0, 1, 2, 3, 0]);
    let records = t
        .cluster
        .fetch(&chosen, 0, 10, IsolationLevel::ReadUncommitted)
        .unwrap();
    assert_eq!(records[0].key.as_deref(), Some(&b"user-42"[..]));
    assert!(values(&records).contains(&"x".to_string()));
    assert!(matches!(
        producer.send("t", Some(4), None, "z"),
        Err(MiniKafkaError::UnknownTopicOrPartition(_))
    ));
    assert!(matches!(
        producer.send("nope", None, None, "z"),
        Err(MiniKafkaError::UnknownTopicOrPartition(_))
    ));
}

/// The leader checks a batch's records while it encodes the frame, after
/// the sequence check (P3: one walk over the records); a batch with a
/// broken record is still refused as invalid before any sequence error or
/// duplicate answer, as when the whole batch was validated first.
#[tokio::test]
async fn an_invalid_record_is_refused_before_the_sequence_check() {
    let t = TestCluster::new(&[1], 1);
    t.cluster.create_topic("t", 1, 1).unwrap();
    let p = tp("t", 0);
    let broken = |sequence| {
        let mut b = RecordBatch::of_values(["x", "y"]).with_producer(7, 0, sequence);
        b.records[1].offset_delta = 0;
        b
    };
    let is_invalid = |err: &MiniKafkaError| {
        matches!(err, MiniKafkaError::InvalidBatch(why)
            if why == "record offset deltas must increase within last_offset_delta")
    };
    // In sequence: refused by the encoding, nothing written.
    let err = t
        .cluster
        .append_batch(&p, broken(0), AckMode::Leader)
        .await
        .unwrap_err();
    assert!(is_invalid(&err), "{err}");
    assert!(t.visible(&p).is_empty());
    let ok = RecordBatch::of_values(["a", "b"]).with_producer(7, 0, 0);
    t.cluster
        .append_batch(&p, ok, AckMode::Leader)
        .await
        .unwrap();
    // Out of sequence, and an exact retry's sequence: invalid first.
    for sequence in [5, 0] {
        let err = t
            .cluster
            .append_batch(&p, broken(sequence), AckMode::Leader)
            .await
            .unwrap_err();
        assert!(is_invalid(&err), "sequence {sequence}: {err}");
    }
    assert_eq!(t.visible(&p), ["a", "b"]);
}
