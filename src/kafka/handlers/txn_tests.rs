//! The transactional and idempotent handlers in process, on a one-broker
//! cluster: what a client library does not send on purpose (a retried
//! batch, a gap in the sequence, an old epoch), checked code by code.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::{
    AddPartitionsToTxnRequest, EndTxnRequest, InitProducerIdRequest, OffsetFetchRequest,
    ProduceRequest, ProducerId, RequestKind, ResponseKind, TopicName, TransactionalId,
};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

use crate::kafka::errors::code;
use crate::kafka::worker::{Advertised, Answer, Handled, Request, Worker};
use crate::session::Driver;
use crate::session::recording::Header;

fn worker(rules: &str) -> Worker {
    let header: Header = serde_json::from_value(serde_json::json!({
        "mk_recording": 1, "title": "t", "rules": rules,
        "cluster": {"brokers": [1], "topics": [{"name": "t", "partitions": 1, "replication_factor": 1}]},
    }))
    .unwrap();
    let driver = Driver::new(&header, None).unwrap();
    let brokers = vec![Advertised {
        broker: 1,
        host: "127.0.0.1".into(),
        port: 9092,
    }];
    Worker::new(driver, brokers, 0)
}

fn ask(w: &mut Worker, version: i16, body: RequestKind) -> ResponseKind {
    let request = Request {
        broker: 1,
        client_id: "test".into(),
        version,
        body,
    };
    let answer: Answer = match super::handle(w, request) {
        Handled::Now(a) => a,
        Handled::Continue(mut c) => c.poll(w).expect("one broker: nothing waits"),
        Handled::Wait(_) => panic!("one broker: nothing waits"),
    };
    answer.body.expect("a response")
}

fn init(w: &mut Worker, txn: Option<&str>) -> (i16, i64, i16) {
    let r = InitProducerIdRequest::default()
        .with_transactional_id(txn.map(|t| TransactionalId(StrBytes::from_string(t.into()))))
        .with_producer_id(ProducerId(-1))
        .with_producer_epoch(-1);
    match ask(w, 4, RequestKind::InitProducerId(r)) {
        ResponseKind::InitProducerId(r) => (r.error_code, r.producer_id.0, r.producer_epoch),
        other => panic!("{other:?}"),
    }
}

fn batch(pid: i64, epoch: i16, seq: i32, values: &[&str], transactional: bool) -> Bytes {
    let records: Vec<Record> = values
        .iter()
        .enumerate()
        .map(|(i, v)| Record {
            transactional,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: -1,
            producer_id: pid,
            producer_epoch: epoch,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: seq + i as i32,
            timestamp: 0,
            key: None,
            value: Some(Bytes::copy_from_slice(v.as_bytes())),
            headers: Default::default(),
        })
        .collect();
    let mut buf = BytesMut::new();
    let options = RecordEncodeOptions {
        version: 2,
        compression: Compression::None,
    };
    RecordBatchEncoder::encode(&mut buf, records.iter(), &options).unwrap();
    buf.freeze()
}

/// Produces `records` to t-0: (error code, base offset).
fn produce(w: &mut Worker, txn: Option<&str>, records: Bytes) -> (i16, i64) {
    let r = ProduceRequest::default()
        .with_transactional_id(txn.map(|t| TransactionalId(StrBytes::from_string(t.into()))))
        .with_acks(-1)
        .with_timeout_ms(1000)
        .with_topic_data(vec![
            TopicProduceData::default()
                .with_name(TopicName(StrBytes::from_static_str("t")))
                .with_partition_data(vec![
                    PartitionProduceData::default()
                        .with_index(0)
                        .with_records(Some(records)),
                ]),
        ]);
    match ask(w, 9, RequestKind::Produce(r)) {
        ResponseKind::Produce(r) => {
            let p = &r.responses[0].partition_responses[0];
            (p.error_code, p.base_offset)
        }
        other => panic!("{other:?}"),
    }
}

fn add_partition(w: &mut Worker, txn: &str, pid: i64, epoch: i16) -> i16 {
    let r = AddPartitionsToTxnRequest::default()
        .with_v3_and_below_transactional_id(TransactionalId(StrBytes::from_string(txn.into())))
        .with_v3_and_below_producer_id(ProducerId(pid))
        .with_v3_and_below_producer_epoch(epoch)
        .with_v3_and_below_topics(vec![
            AddPartitionsToTxnTopic::default()
                .with_name(TopicName(StrBytes::from_static_str("t")))
                .with_partitions(vec![0]),
        ]);
    match ask(w, 3, RequestKind::AddPartitionsToTxn(r)) {
        ResponseKind::AddPartitionsToTxn(r) => {
            r.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code
        }
        other => panic!("{other:?}"),
    }
}

fn end(w: &mut Worker, txn: &str, pid: i64, epoch: i16, commit: bool) -> i16 {
    let r = EndTxnRequest::default()
        .with_transactional_id(TransactionalId(StrBytes::from_string(txn.into())))
        .with_producer_id(ProducerId(pid))
        .with_producer_epoch(epoch)
        .with_committed(commit);
    match ask(w, 3, RequestKind::EndTxn(r)) {
        ResponseKind::EndTxn(r) => r.error_code,
        other => panic!("{other:?}"),
    }
}

fn log_end(w: &Worker) -> i64 {
    w.driver.cluster().with_state(|s| {
        s.partition(&crate::engine::TopicPartition::new("t", 0))
            .unwrap()
            .leader_replica()
            .log_end_offset()
    })
}

#[test]
fn an_idempotent_retry_gets_its_offset_and_appends_nothing() {
    let mut w = worker("minikafka");
    let (e, pid, epoch) = init(&mut w, None);
    assert_eq!((e, pid, epoch), (0, 1000, 0));
    let first = batch(pid, 0, 0, &["a", "b"], false);
    assert_eq!(produce(&mut w, None, first.clone()), (0, 0));
    assert_eq!(
        produce(&mut w, None, first),
        (0, 0),
        "a retry: the original offset"
    );
    assert_eq!(log_end(&w), 2, "and no duplicate");
    assert_eq!(
        produce(&mut w, None, batch(pid, 0, 5, &["c"], false)).0,
        code::OUT_OF_ORDER_SEQUENCE_NUMBER
    );
    assert_eq!(
        produce(&mut w, None, batch(pid, 1, 2, &["c"], false)).0,
        code::INVALID_PRODUCER_EPOCH
    );
    assert_eq!(
        produce(&mut w, None, batch(7, 0, 0, &["c"], false)).0,
        code::UNKNOWN_PRODUCER_ID
    );
    assert_eq!(log_end(&w), 2, "refusals append nothing");
    assert_eq!(
        produce(&mut w, None, batch(pid, 0, 2, &["c"], false)),
        (0, 2)
    );
}

#[test]
fn the_books_rules_wait_for_an_open_transaction_instead_of_fencing_it() {
    let mut w = worker("minikafka");
    let (e, pid, epoch) = init(&mut w, Some("a"));
    assert_eq!((e, pid, epoch), (0, 1000, 0));
    assert_eq!(
        produce(&mut w, Some("a"), batch(pid, 0, 0, &["x"], true)).0,
        code::INVALID_TXN_STATE,
        "a partition not added to the transaction"
    );
    assert_eq!(add_partition(&mut w, "a", pid, epoch), 0);
    assert_eq!(
        produce(&mut w, Some("a"), batch(pid, 0, 0, &["x"], true)),
        (0, 0)
    );
    assert_eq!(
        init(&mut w, Some("a")).0,
        code::CONCURRENT_TRANSACTIONS,
        "the book refuses begin of an active id"
    );
    assert_eq!(end(&mut w, "a", pid, epoch, true), 0);
    assert_eq!(end(&mut w, "a", pid, epoch, true), 0, "a retried commit");
    assert_eq!(end(&mut w, "a", pid, epoch, false), code::INVALID_TXN_STATE);
    assert_eq!(
        init(&mut w, Some("a")),
        (0, 1000, 1),
        "the next epoch, once it ended"
    );
    let r = OffsetFetchRequest::default()
        .with_group_id(kafka_protocol::messages::GroupId(
            StrBytes::from_static_str("g"),
        ))
        .with_topics(Some(vec![
            kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic::default()
                .with_name(TopicName(StrBytes::from_static_str("t")))
                .with_partition_indexes(vec![0]),
        ]));
    match ask(&mut w, 7, RequestKind::OffsetFetch(r)) {
        ResponseKind::OffsetFetch(r) => {
            assert_eq!(
                r.topics[0].partitions[0].committed_offset, -1,
                "none committed"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_kafka_rules_fence_an_old_epoch_with_the_engines_ids() {
    let mut w = worker("kafka");
    assert_eq!(
        init(&mut w, Some("a")),
        (0, 0, 0),
        "the engine's producer id"
    );
    let (_, pid, epoch) = init(&mut w, Some("a"));
    assert_eq!((pid, epoch), (0, 1));
    assert_eq!(add_partition(&mut w, "a", pid, 0), code::PRODUCER_FENCED);
    assert_eq!(add_partition(&mut w, "a", pid, 1), 0);
    assert_eq!(
        produce(&mut w, Some("a"), batch(pid, 0, 0, &["z"], true)).0,
        code::INVALID_PRODUCER_EPOCH
    );
    assert_eq!(
        produce(&mut w, Some("a"), batch(pid, 1, 0, &["f"], true)),
        (0, 0)
    );
    assert_eq!(end(&mut w, "a", pid, 0, true), code::PRODUCER_FENCED);
    assert_eq!(end(&mut w, "a", pid, 1, true), 0);
}
