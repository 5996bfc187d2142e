//! A write delayed past its transaction's end, on the wire: a producer's
//! Produce built before its EndTxn and delivered after it (what a Produce
//! held on the network does), at transaction version 2 (InitProducerId
//! v5, Produce v12, EndTxn v5) and at version 1 (InitProducerId v4,
//! AddPartitionsToTxn v3, Produce v11, EndTxn v4). What each server
//! answers the late Produce, and whether it lands.

use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::{
    AddPartitionsToTxnRequest, BrokerId, EndTxnRequest, InitProducerIdRequest, ListOffsetsRequest,
    ProducerId, TopicName, TransactionalId,
};
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

use super::wire::{self, Conn};
use super::{coordinator, s, settled, wait_for_topic};

/// CONCURRENT_TRANSACTIONS and NOT_ENOUGH_REPLICAS (Kafka's verification
/// while its coordinator settles), and NOT_LEADER_OR_FOLLOWER (a broker
/// Kafka's metadata already names the leader of a topic just created may
/// not have taken the partition yet: CI saw it once), retried, as a
/// client retries them.
const RETRIED: [i16; 3] = [51, 19, 6];

fn txn_batch(pid: i64, epoch: i16, sequence: i32, value: &str) -> Bytes {
    let record = Record {
        transactional: true,
        control: false,
        delete_horizon: false,
        partition_leader_epoch: -1,
        producer_id: pid,
        producer_epoch: epoch,
        timestamp_type: TimestampType::Creation,
        offset: 0,
        sequence,
        timestamp: 0,
        key: None,
        value: Some(Bytes::copy_from_slice(value.as_bytes())),
        headers: Default::default(),
    };
    let mut buf = BytesMut::new();
    let options = RecordEncodeOptions {
        version: 2,
        compression: Compression::None,
    };
    RecordBatchEncoder::encode(&mut buf, [record].iter(), &options).unwrap();
    buf.freeze()
}

fn produce(conn: &mut Conn, version: i16, txn: &str, topic: &str, records: Bytes) -> i16 {
    let request =
        wire::produce(topic, 0, -1, records).with_transactional_id(Some(TransactionalId(s(txn))));
    let r = conn.call(&request, version).expect("Produce answered");
    wire::produced(&r).0
}

/// The log end of `topic`-0 as its leader answers ListOffsets latest at
/// read_uncommitted (the high watermark).
fn log_end(conn: &mut Conn, topic: &str) -> i64 {
    let request = ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_topics(vec![
            ListOffsetsTopic::default()
                .with_name(TopicName(s(topic)))
                .with_partitions(vec![ListOffsetsPartition::default().with_timestamp(-1)]),
        ]);
    let r = conn.call(&request, 5).expect("ListOffsets answered");
    r.topics[0].partitions[0].offset
}

/// One run at `version` (1 or 2) of transactional id `txn` on `topic`-0:
/// `late CODE` (the late Produce's error code, once no longer retriable), `end epoch step N` (what
/// EndTxn v5 moved the epoch by; 0 at version 1, which answers none) and
/// `appended N` (what the late Produce added to the log).
pub fn delayed_write(
    bootstrap: u16,
    port_of_broker: &dyn Fn(i32) -> u16,
    topic: &str,
    txn: &str,
    version: u8,
) -> Vec<String> {
    wait_for_topic(bootstrap, topic);
    let leader = {
        let mut conn = Conn::connect(bootstrap, "metadata");
        port_of_broker(wire::leaders(&mut conn, topic)[0])
    };
    let mut coord = Conn::connect(coordinator(bootstrap, txn, 1), "delayed");
    let mut data = Conn::connect(leader, "delayed");
    let v2 = version == 2;
    let (pid, epoch) = settled("InitProducerId", || {
        let request = InitProducerIdRequest::default()
            .with_transactional_id(Some(TransactionalId(s(txn))))
            .with_transaction_timeout_ms(60_000)
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1);
        let r = coord
            .call(&request, if v2 { 5 } else { 4 })
            .expect("InitProducerId answered");
        if r.error_code != 0 {
            return Err(r.error_code);
        }
        Ok((r.producer_id.0, r.producer_epoch))
    });
    if !v2 {
        let request = AddPartitionsToTxnRequest::default()
            .with_v3_and_below_transactional_id(TransactionalId(s(txn)))
            .with_v3_and_below_producer_id(ProducerId(pid))
            .with_v3_and_below_producer_epoch(epoch)
            .with_v3_and_below_topics(vec![
                AddPartitionsToTxnTopic::default()
                    .with_name(TopicName(s(topic)))
                    .with_partitions(vec![0]),
            ]);
        settled("AddPartitionsToTxn", || {
            let r = coord
                .call(&request, 3)
                .expect("AddPartitionsToTxn answered");
            match r.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code {
                0 => Ok(()),
                c => Err(c),
            }
        });
    }
    let produce_version = if v2 { 12 } else { 11 };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let code = produce(
            &mut data,
            produce_version,
            txn,
            topic,
            txn_batch(pid, epoch, 0, "a"),
        );
        if code == 0 {
            break;
        }
        assert!(
            RETRIED.contains(&code) && Instant::now() < deadline,
            "the transaction's Produce: {code}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // Built now, delivered after the end.
    let late = txn_batch(pid, epoch, 1, "late");
    let end = EndTxnRequest::default()
        .with_transactional_id(TransactionalId(s(txn)))
        .with_producer_id(ProducerId(pid))
        .with_producer_epoch(epoch)
        .with_committed(true);
    let r = coord
        .call(&end, if v2 { 5 } else { 4 })
        .expect("EndTxn answered");
    assert_eq!(r.error_code, 0, "EndTxn");
    let step = if v2 { r.producer_epoch - epoch } else { 0 };
    // Kafka answers EndTxn before its marker is written: wait for the
    // record and the marker (2) before delivering the late write.
    let mut end_before = 0;
    for _ in 0..100 {
        end_before = log_end(&mut data, topic);
        if end_before >= 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // Retried as a client retries a retriable answer (Kafka's
    // verification answers a version 1 producer NOT_ENOUGH_REPLICAS while
    // the coordinator cannot say yet), for at most 15 s.
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut answers = Vec::new();
    let code = loop {
        let code = produce(&mut data, produce_version, txn, topic, late.clone());
        answers.push(code);
        if !RETRIED.contains(&code) || Instant::now() > deadline {
            break code;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    println!("{txn}: the late Produce was answered {answers:?}");
    std::thread::sleep(Duration::from_millis(300));
    let appended = log_end(&mut data, topic) - end_before;
    vec![
        format!("late {code}"),
        format!("end epoch step {step}"),
        format!("appended {appended}"),
    ]
}
