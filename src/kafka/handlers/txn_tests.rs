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

use crate::kafka::broker::{Advertised, Answer, Handled, Request};
use crate::kafka::errors::code;
use crate::kafka::registry::Registry;
use crate::kafka::worker::{ServerState, Worker};
use crate::session::listeners::NoSteps;
use crate::session::recording::Header;
use crate::session::{Action, Driver};

/// A one-broker cluster and the server's state beside it.
pub(super) struct Harness {
    pub(super) driver: Driver,
    pub(super) state: ServerState,
    steps: NoSteps,
}

impl Harness {
    fn w(&mut self) -> Worker<'_> {
        self.state.worker(&mut self.driver, &mut self.steps)
    }
}

fn worker(rules: &str) -> Harness {
    worker_on(rules, 1)
}

/// A cluster of `brokers` brokers whose topic t has one partition on all
/// of them (led by broker 1).
pub(super) fn worker_on(rules: &str, brokers: u32) -> Harness {
    worker_with(rules, brokers, serde_json::json!({}))
}

/// [`worker_on`] with the header's `config`.
pub(super) fn worker_with(rules: &str, brokers: u32, config: serde_json::Value) -> Harness {
    let ids: Vec<u32> = (1..=brokers).collect();
    let header: Header = serde_json::from_value(serde_json::json!({
        "mk_recording": 1, "title": "t", "rules": rules,
        "cluster": {"brokers": ids, "topics": [{"name": "t", "partitions": 1, "replication_factor": brokers}], "config": config},
    }))
    .unwrap();
    let driver = Driver::new(&header, None).unwrap();
    let brokers = vec![Advertised {
        broker: 1,
        host: "127.0.0.1".into(),
        port: 9092,
    }];
    let gates = tokio::sync::watch::channel(Default::default()).0;
    Harness {
        driver,
        state: ServerState::new(brokers, 0, false, Registry::default(), gates),
        steps: NoSteps,
    }
}

pub(super) fn ask(h: &mut Harness, version: i16, body: RequestKind) -> ResponseKind {
    ask_answer(h, version, body).body.expect("a response")
}

/// [`ask`]'s whole answer: its body and its log line.
fn ask_answer(h: &mut Harness, version: i16, body: RequestKind) -> Answer {
    let request = Request {
        broker: 1,
        client_id: "test".into(),
        version,
        body,
        connection: 0,
    };
    let mut w = h.w();
    let answer: Answer = match super::handle(&mut w, request) {
        Handled::Now(a) => a,
        Handled::Continue(mut c) => c.poll(&mut w).expect("one broker: nothing waits"),
        Handled::Wait(_) | Handled::Fetch(_) => panic!("one broker: nothing waits"),
    };
    answer
}

pub(super) fn init(w: &mut Harness, txn: Option<&str>) -> (i16, i64, i16) {
    let r = InitProducerIdRequest::default()
        .with_transactional_id(txn.map(|t| TransactionalId(StrBytes::from_string(t.into()))))
        .with_transaction_timeout_ms(60_000)
        .with_producer_id(ProducerId(-1))
        .with_producer_epoch(-1);
    match ask(w, 4, RequestKind::InitProducerId(r)) {
        ResponseKind::InitProducerId(r) => (r.error_code, r.producer_id.0, r.producer_epoch),
        other => panic!("{other:?}"),
    }
}

pub(super) fn batch(pid: i64, epoch: i16, seq: i32, values: &[&str], transactional: bool) -> Bytes {
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
fn produce(w: &mut Harness, txn: Option<&str>, records: Bytes) -> (i16, i64) {
    let (code, base_offset, _) = produce_to(w, "t", txn, records);
    (code, base_offset)
}

/// (error code, base offset, log_append_time_ms) of a produce to
/// partition 0 of `topic`.
pub(super) fn produce_to(
    w: &mut Harness,
    topic: &str,
    txn: Option<&str>,
    records: Bytes,
) -> (i16, i64, i64) {
    let r = ProduceRequest::default()
        .with_transactional_id(txn.map(|t| TransactionalId(StrBytes::from_string(t.into()))))
        .with_acks(-1)
        .with_timeout_ms(1000)
        .with_topic_data(vec![
            TopicProduceData::default()
                .with_name(TopicName(StrBytes::from_string(topic.into())))
                .with_partition_data(vec![
                    PartitionProduceData::default()
                        .with_index(0)
                        .with_records(Some(records)),
                ]),
        ]);
    match ask(w, 9, RequestKind::Produce(r)) {
        ResponseKind::Produce(r) => {
            let p = &r.responses[0].partition_responses[0];
            (p.error_code, p.base_offset, p.log_append_time_ms)
        }
        other => panic!("{other:?}"),
    }
}

fn add_partition(w: &mut Harness, txn: &str, pid: i64, epoch: i16) -> i16 {
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

fn end(w: &mut Harness, txn: &str, pid: i64, epoch: i16, commit: bool) -> i16 {
    end_said(w, txn, pid, epoch, commit).0
}

/// An EndTxn's error code and its log line.
fn end_said(w: &mut Harness, txn: &str, pid: i64, epoch: i16, commit: bool) -> (i16, String) {
    let r = EndTxnRequest::default()
        .with_transactional_id(TransactionalId(StrBytes::from_string(txn.into())))
        .with_producer_id(ProducerId(pid))
        .with_producer_epoch(epoch)
        .with_committed(commit);
    let answer = ask_answer(w, 3, RequestKind::EndTxn(r));
    match answer.body {
        Some(ResponseKind::EndTxn(r)) => (r.error_code, answer.outcome),
        other => panic!("{other:?}"),
    }
}

/// A partition added to a transaction but never written gets no marker
/// (the engine learns of a partition at its first write, E10), and the
/// log line says so instead of counting it marked (a new user's trial:
/// "1 partition(s) marked" over a log with no marker).
#[test]
fn end_txns_log_line_counts_the_markers_written_not_the_partitions_added() {
    for rules in ["kafka", "minikafka"] {
        let mut h = worker(rules);
        let (_, pid, epoch) = init(&mut h, Some("tx"));
        assert_eq!(add_partition(&mut h, "tx", pid, epoch), 0, "{rules}");
        let (e, said) = end_said(&mut h, "tx", pid, epoch, false);
        assert_eq!(e, 0, "{rules}");
        assert!(
            said.ends_with(
                "done (0 partition(s) marked; 1 added but never written, so not marked)"
            ),
            "{rules}: {said}"
        );
        assert_eq!(log_end(&h), 0, "{rules}: no marker written");
        assert_eq!(add_partition(&mut h, "tx", pid, epoch), 0, "{rules}");
        let (e, _) = produce(&mut h, Some("tx"), batch(pid, epoch, 0, &["a"], true));
        assert_eq!(e, 0, "{rules}");
        let (e, said) = end_said(&mut h, "tx", pid, epoch, true);
        assert_eq!(e, 0, "{rules}");
        assert!(
            said.ends_with("done (1 partition(s) marked)"),
            "{rules}: {said}"
        );
        assert_eq!(log_end(&h), 2, "{rules}: the record and its marker");
    }
}

pub(super) fn log_end(w: &Harness) -> i64 {
    w.driver.cluster().with_state(|s| {
        s.partition(&crate::engine::TopicPartition::new("t", 0))
            .unwrap()
            .leader()
            .leo()
    })
}

/// A restart between the PREPARE of a client's commit and its answer:
/// the client retries EndTxn against a server whose table is empty. It is
/// answered as the transaction really ended (recovery completed it), and
/// an abort of it is refused.
#[test]
fn an_end_txn_retried_across_a_restart_is_answered_as_the_transaction_ends() {
    for rules in ["kafka", "minikafka"] {
        let mut h = worker(rules);
        let (e, pid, epoch) = init(&mut h, Some("tx"));
        assert_eq!(e, 0, "{rules}");
        assert_eq!(add_partition(&mut h, "tx", pid, epoch), 0, "{rules}");
        assert_eq!(
            produce(&mut h, Some("tx"), batch(pid, epoch, 0, &["a"], true)),
            (0, 0),
            "{rules}"
        );
        // The commit the client asked for reached its PREPARE, then the
        // process died (a crash at the cut point), and the server's table
        // of clients is gone with it.
        h.driver.apply(&Action::Commit {
            txn: "tx".into(),
            crash_after: Some(crate::engine::transaction::CutPoint::Prepare),
        });
        let gates = tokio::sync::watch::channel(Default::default()).0;
        h.state = ServerState::new(
            h.state.brokers.clone(),
            0,
            false,
            Registry::default(),
            gates,
        );
        assert_eq!(
            end(&mut h, "tx", pid, epoch, false),
            code::INVALID_TXN_STATE,
            "{rules}: an abort of a transaction decided committed"
        );
        assert_eq!(end(&mut h, "tx", pid, epoch, true), 0, "{rules}: the retry");
        assert_eq!(end(&mut h, "tx", pid, epoch, true), 0, "{rules}: and again");
        let (lso, hw) = h.driver.cluster().with_state(|s| {
            let tp = crate::engine::TopicPartition::new("t", 0);
            (
                s.last_stable_offset(&tp).unwrap(),
                s.partition(&tp).unwrap().high_watermark(),
            )
        });
        // The kafka rules' recovery wrote the COMMIT marker; the book's
        // completes the journal and leaves the marker missing (E13).
        let end = if rules == "kafka" { 2 } else { 1 };
        assert_eq!((lso, hw), (end, end), "{rules}: the record is stable");
        // The next transaction of the same client goes on.
        assert_eq!(add_partition(&mut h, "tx", pid, epoch), 0, "{rules}");
    }
}

/// The engine's producer state judges an idempotent client's batches
/// (E7), as Kafka's does: a retry gets its original offset, a gap is out
/// of order, a newer epoch starts again from 0 (KIP-360: an idempotent
/// client bumps its own epoch), an older one is fenced, and a producer id
/// the server never gave is taken as Kafka takes it.
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
        code::OUT_OF_ORDER_SEQUENCE_NUMBER,
        "a new epoch starts at sequence 0"
    );
    assert_eq!(log_end(&w), 2, "refusals append nothing");
    assert_eq!(
        produce(&mut w, None, batch(pid, 0, 2, &["c"], false)),
        (0, 2)
    );
    assert_eq!(
        produce(&mut w, None, batch(pid, 1, 0, &["d"], false)),
        (0, 3),
        "the epoch the client bumped itself"
    );
    assert_eq!(
        produce(&mut w, None, batch(pid, 0, 3, &["e"], false)).0,
        code::INVALID_PRODUCER_EPOCH,
        "the older epoch is fenced"
    );
    assert_eq!(
        produce(&mut w, None, batch(7, 0, 0, &["f"], false)),
        (0, 4),
        "an id this server never gave"
    );
    assert_eq!(log_end(&w), 5);
}

/// On a LogAppendTime topic an idempotent batch is answered with its
/// append time, and a retry of it with the same time, as Kafka answers
/// a duplicate with the original's; a CreateTime topic's is -1.
#[test]
fn a_retry_on_a_log_append_time_topic_gets_the_originals_append_time() {
    let mut w = worker("minikafka");
    w.driver.apply(&Action::CreateTopic {
        name: "lat".into(),
        partitions: 1,
        replication_factor: 1,
        timestamp_type: crate::engine::core::metadata::TimestampType::LogAppendTime,
        config: Default::default(),
    });
    let (_, pid, _) = init(&mut w, None);
    let first = batch(pid, 0, 0, &["a"], false);
    let (e, offset, appended) = produce_to(&mut w, "lat", None, first.clone());
    assert_eq!((e, offset), (0, 0));
    assert!(appended > 0, "a Unix time: {appended}");
    w.driver.apply(&Action::AdvanceClock { ms: 40 });
    assert_eq!(
        produce_to(&mut w, "lat", None, first),
        (0, 0, appended),
        "the retry: the original's offset and time"
    );
    let (_, _, later) = produce_to(&mut w, "lat", None, batch(pid, 0, 1, &["b"], false));
    assert_eq!(
        later,
        appended + 40,
        "the next batch, 40 ms on the engine clock"
    );
    let (e, _, create) = produce_to(&mut w, "t", None, batch(pid, 0, 0, &["c"], false));
    assert_eq!((e, create), (0, -1));
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

/// The log line of a transactional InitProducerId says what it fenced
/// only when there was an older epoch to fence.
#[test]
fn init_producer_ids_log_line_names_the_epoch_it_fenced_only_when_there_was_one() {
    let mut h = worker("kafka");
    let outcome = |h: &mut Harness| {
        let r = InitProducerIdRequest::default()
            .with_transactional_id(Some(TransactionalId(StrBytes::from_static_str("a"))))
            .with_transaction_timeout_ms(60_000)
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1);
        let request = Request {
            broker: 1,
            client_id: "test".into(),
            version: 4,
            body: RequestKind::InitProducerId(r),
            connection: 0,
        };
        let mut w = h.w();
        match super::handle(&mut w, request) {
            Handled::Now(a) => a.outcome,
            Handled::Continue(mut c) => c.poll(&mut w).expect("one broker").outcome,
            Handled::Wait(_) | Handled::Fetch(_) => panic!("one broker: nothing waits"),
        }
    };
    let first = outcome(&mut h);
    assert!(first.ends_with("producer id 0 epoch 0 (new)"), "{first}");
    let second = outcome(&mut h);
    assert!(
        second.ends_with(
            "producer id 0 epoch 1 (producer id 0 epoch 0 fenced; a transaction it left open is ended)"
        ),
        "{second}"
    );
}

/// Like [`ask`], at `version`, and the response must encode at it: a
/// field set that the version does not have fails the encoder, which the
/// client sees as a closed connection.
fn encodes(w: &mut Harness, version: i16, body: RequestKind) -> ResponseKind {
    let kind = ask(w, version, body);
    let mut buf = BytesMut::new();
    kind.encode(&mut buf, version)
        .unwrap_or_else(|e| panic!("{kind:?} at v{version}: {e}"));
    kind
}

fn versions(api: kafka_protocol::messages::ApiKey) -> std::ops::RangeInclusive<i16> {
    let (min, max) = super::supported(api).expect("served");
    min..=max
}

#[test]
fn every_served_version_of_the_responses_encodes() {
    use kafka_protocol::messages::add_offsets_to_txn_request::AddOffsetsToTxnRequest;
    use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
    use kafka_protocol::messages::offset_commit_request::{
        OffsetCommitRequestPartition, OffsetCommitRequestTopic,
    };
    use kafka_protocol::messages::txn_offset_commit_request::{
        TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
    };
    use kafka_protocol::messages::{
        ApiKey, FindCoordinatorRequest, GroupId, HeartbeatRequest, JoinGroupRequest,
        LeaveGroupRequest, ListOffsetsRequest, OffsetCommitRequest, SyncGroupRequest,
        TxnOffsetCommitRequest,
    };
    let mut w = worker("kafka");
    let s = |t: &str| StrBytes::from_string(t.into());
    for v in versions(ApiKey::FindCoordinator) {
        let r = FindCoordinatorRequest::default()
            .with_key(s("g"))
            .with_coordinator_keys(vec![s("g")]);
        encodes(&mut w, v, RequestKind::FindCoordinator(r));
    }
    for v in versions(ApiKey::InitProducerId) {
        let r = InitProducerIdRequest::default()
            .with_transactional_id(Some(TransactionalId(s("a"))))
            .with_transaction_timeout_ms(60_000)
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1);
        encodes(&mut w, v, RequestKind::InitProducerId(r));
    }
    let (_, pid, epoch) = init(&mut w, Some("a"));
    for v in versions(ApiKey::AddPartitionsToTxn) {
        let r = AddPartitionsToTxnRequest::default()
            .with_v3_and_below_transactional_id(TransactionalId(s("a")))
            .with_v3_and_below_producer_id(ProducerId(pid))
            .with_v3_and_below_producer_epoch(epoch)
            .with_v3_and_below_topics(vec![
                AddPartitionsToTxnTopic::default()
                    .with_name(TopicName(s("t")))
                    .with_partitions(vec![0]),
            ]);
        encodes(&mut w, v, RequestKind::AddPartitionsToTxn(r));
    }
    for v in versions(ApiKey::AddOffsetsToTxn) {
        let r = AddOffsetsToTxnRequest::default()
            .with_transactional_id(TransactionalId(s("a")))
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(epoch)
            .with_group_id(GroupId(s("g")));
        encodes(&mut w, v, RequestKind::AddOffsetsToTxn(r));
    }
    for v in versions(ApiKey::TxnOffsetCommit) {
        let r = TxnOffsetCommitRequest::default()
            .with_transactional_id(TransactionalId(s("a")))
            .with_group_id(GroupId(s("g")))
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(epoch)
            .with_topics(vec![
                TxnOffsetCommitRequestTopic::default()
                    .with_name(TopicName(s("t")))
                    .with_partitions(vec![
                        TxnOffsetCommitRequestPartition::default().with_committed_offset(1),
                    ]),
            ]);
        encodes(&mut w, v, RequestKind::TxnOffsetCommit(r));
    }
    for v in versions(ApiKey::OffsetFetch) {
        let r = OffsetFetchRequest::default()
            .with_group_id(GroupId(s("g")))
            .with_require_stable(v >= 7)
            .with_topics(Some(vec![
                kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic::default()
                    .with_name(TopicName(s("t")))
                    .with_partition_indexes(vec![0]),
            ]));
        encodes(&mut w, v, RequestKind::OffsetFetch(r));
    }
    for v in versions(ApiKey::EndTxn) {
        let r = EndTxnRequest::default()
            .with_transactional_id(TransactionalId(s("a")))
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(epoch)
            .with_committed(true);
        encodes(&mut w, v, RequestKind::EndTxn(r));
    }
    for v in versions(ApiKey::ListOffsets) {
        let r = ListOffsetsRequest::default().with_topics(vec![
            kafka_protocol::messages::list_offsets_request::ListOffsetsTopic::default()
                .with_name(TopicName(s("t")))
                .with_partitions(vec![
                    kafka_protocol::messages::list_offsets_request::ListOffsetsPartition::default()
                        .with_timestamp(-1),
                ]),
        ]);
        encodes(&mut w, v, RequestKind::ListOffsets(r));
    }
    for v in versions(ApiKey::JoinGroup) {
        let join = |id: &str| {
            JoinGroupRequest::default()
                .with_group_id(GroupId(s("g")))
                .with_session_timeout_ms(10_000)
                .with_member_id(s(id))
                .with_protocol_type(s("consumer"))
                .with_protocols(vec![
                    JoinGroupRequestProtocol::default()
                        .with_name(s("range"))
                        .with_metadata(Bytes::from_static(b"meta")),
                ])
        };
        // A nameless member is named: joined at once before v4, asked
        // to rejoin with the name from v4 (KIP-394).
        let first = match encodes(&mut w, v, RequestKind::JoinGroup(join(""))) {
            ResponseKind::JoinGroup(r) => r,
            other => panic!("{other:?}"),
        };
        let member = first.member_id.to_string();
        let joined = if v >= 4 {
            assert_eq!(first.error_code, code::MEMBER_ID_REQUIRED, "v{v}");
            match encodes(&mut w, v, RequestKind::JoinGroup(join(&member))) {
                ResponseKind::JoinGroup(r) => r,
                other => panic!("{other:?}"),
            }
        } else {
            first
        };
        assert_eq!(joined.error_code, 0, "v{v}");
        let generation = joined.generation_id;
        let sync = SyncGroupRequest::default()
            .with_group_id(GroupId(s("g")))
            .with_generation_id(generation)
            .with_member_id(s(&member));
        if versions(ApiKey::SyncGroup).contains(&v) {
            encodes(&mut w, v, RequestKind::SyncGroup(sync));
        }
        let beat = HeartbeatRequest::default()
            .with_group_id(GroupId(s("g")))
            .with_generation_id(generation)
            .with_member_id(s(&member));
        if versions(ApiKey::Heartbeat).contains(&v) {
            encodes(&mut w, v, RequestKind::Heartbeat(beat));
        }
        if versions(ApiKey::OffsetCommit).contains(&v) {
            let r = OffsetCommitRequest::default()
                .with_group_id(GroupId(s("g")))
                .with_generation_id_or_member_epoch(generation)
                .with_member_id(s(&member))
                .with_topics(vec![
                    OffsetCommitRequestTopic::default()
                        .with_name(TopicName(s("t")))
                        .with_partitions(vec![
                            OffsetCommitRequestPartition::default().with_committed_offset(2),
                        ]),
                ]);
            encodes(&mut w, v, RequestKind::OffsetCommit(r));
        }
        let leave_version = v.min(*versions(ApiKey::LeaveGroup).end());
        let leave = LeaveGroupRequest::default()
            .with_group_id(GroupId(s("g")))
            .with_member_id(if leave_version < 3 { s(&member) } else { s("") })
            .with_members(if leave_version >= 3 {
                vec![
                    kafka_protocol::messages::leave_group_request::MemberIdentity::default()
                        .with_member_id(s(&member)),
                ]
            } else {
                Vec::new()
            });
        encodes(&mut w, leave_version, RequestKind::LeaveGroup(leave));
    }
    for v in versions(ApiKey::DescribeGroups) {
        let r = kafka_protocol::messages::DescribeGroupsRequest::default()
            .with_groups(vec![GroupId(s("g")), GroupId(s("none"))]);
        match encodes(&mut w, v, RequestKind::DescribeGroups(r)) {
            ResponseKind::DescribeGroups(r) => {
                assert_eq!(r.groups[0].group_state.as_str(), "Empty", "v{v}");
                assert_eq!(r.groups[0].protocol_type.as_str(), "consumer", "v{v}");
                assert_eq!(r.groups[1].group_state.as_str(), "Dead", "v{v}");
                let missing = if v >= 6 { code::GROUP_ID_NOT_FOUND } else { 0 };
                assert_eq!(r.groups[1].error_code, missing, "v{v}");
            }
            other => panic!("{other:?}"),
        }
    }
    for v in versions(ApiKey::ConsumerGroupHeartbeat) {
        let r = kafka_protocol::messages::ConsumerGroupHeartbeatRequest::default()
            .with_group_id(GroupId(s("g")));
        match encodes(&mut w, v, RequestKind::ConsumerGroupHeartbeat(r)) {
            ResponseKind::ConsumerGroupHeartbeat(r) => {
                assert_eq!(r.error_code, code::UNSUPPORTED_VERSION)
            }
            other => panic!("{other:?}"),
        }
    }
    for v in versions(ApiKey::Produce) {
        let r = ProduceRequest::default()
            .with_acks(1)
            .with_timeout_ms(1000)
            .with_topic_data(vec![
                TopicProduceData::default()
                    .with_name(TopicName(s("t")))
                    .with_partition_data(vec![
                        PartitionProduceData::default()
                            .with_index(0)
                            .with_records(Some(batch(-1, -1, -1, &["p"], false))),
                    ]),
            ]);
        encodes(&mut w, v, RequestKind::Produce(r));
    }
    for v in versions(ApiKey::Fetch) {
        use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
        let r = kafka_protocol::messages::FetchRequest::default()
            .with_max_bytes(1 << 20)
            .with_isolation_level(1)
            .with_topics(vec![
                FetchTopic::default()
                    .with_topic(TopicName(s("t")))
                    .with_partitions(vec![
                        FetchPartition::default().with_partition_max_bytes(1 << 20),
                    ]),
            ]);
        encodes(&mut w, v, RequestKind::Fetch(r));
    }
    for v in versions(ApiKey::Metadata) {
        encodes(
            &mut w,
            v,
            RequestKind::Metadata(kafka_protocol::messages::MetadataRequest::default()),
        );
    }
    assert_eq!(
        w.driver.cluster().with_state(|s| s
            .offsets()
            .get("g", &crate::engine::TopicPartition::new("t", 0))),
        Some(2),
        "the members' commits are the engine's"
    );
}

#[test]
fn a_transaction_the_cluster_timed_out_fences_its_producer() {
    let mut h = worker("kafka");
    let (_, pid, epoch) = init(&mut h, Some("slow"));
    assert_eq!(add_partition(&mut h, "slow", pid, epoch), 0);
    assert_eq!(
        produce(&mut h, Some("slow"), batch(pid, epoch, 0, &["s"], true)),
        (0, 0)
    );
    // The kafka rules' transaction timeout (60 s on the engine's clock).
    h.w()
        .apply(&crate::session::Action::AdvanceClock { ms: 60_001 });
    let state = h
        .driver
        .cluster()
        .transactions()
        .get("slow")
        .map(|d| d.state);
    assert_eq!(
        state,
        Some(crate::engine::transaction::TransactionState::CompleteAbort),
        "the cluster aborted it"
    );
    assert_eq!(
        produce(&mut h, Some("slow"), batch(pid, epoch, 1, &["t"], true)).0,
        code::INVALID_PRODUCER_EPOCH,
        "a write into the ended transaction"
    );
    assert_eq!(end(&mut h, "slow", pid, epoch, true), code::PRODUCER_FENCED);
}

/// A retry of an acks=all batch whose original still waits for the
/// followers is not answered before the original is replicated (Kafka
/// answers a duplicate once the original is); once it is, a retry gets the
/// original offset at once. Nothing is appended twice.
#[test]
fn a_retry_of_a_pending_acks_all_batch_waits_for_its_original() {
    let mut h = worker_on("minikafka", 2);
    let (e, pid, _) = init(&mut h, None);
    assert_eq!(e, 0);
    let produce_request = |records: Bytes| {
        ProduceRequest::default()
            .with_acks(-1)
            .with_timeout_ms(30000)
            .with_topic_data(vec![
                TopicProduceData::default()
                    .with_name(TopicName(StrBytes::from_static_str("t")))
                    .with_partition_data(vec![
                        PartitionProduceData::default()
                            .with_index(0)
                            .with_records(Some(records)),
                    ]),
            ])
    };
    let first = batch(pid, 0, 0, &["a", "b"], false);
    let handled = |h: &mut Harness| {
        let request = Request {
            broker: 1,
            client_id: "test".into(),
            version: 9,
            body: RequestKind::Produce(produce_request(first.clone())),
            connection: 0,
        };
        super::handle(&mut h.w(), request)
    };
    let waits = |handled: Handled| match handled {
        Handled::Wait(w) => w.parts.iter().map(|(_, _, s)| s.len()).sum::<usize>(),
        Handled::Now(a) => panic!("answered at once: {}", a.outcome),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        waits(handled(&mut h)),
        1,
        "the original's two records are one batch, one append, and it waits"
    );
    assert_eq!(
        waits(handled(&mut h)),
        1,
        "the retry waits for the same append"
    );
    assert_eq!(log_end(&h), 2, "and appends nothing");
    h.driver.apply(&crate::session::Action::Replicate {
        broker: None,
        topic: None,
        partition: None,
    });
    assert!(h.driver.pending().is_empty(), "replicated");
    match handled(&mut h) {
        Handled::Now(a) => {
            let Some(ResponseKind::Produce(r)) = a.body else {
                panic!("{}", a.outcome)
            };
            let p = &r.responses[0].partition_responses[0];
            assert_eq!((p.error_code, p.base_offset), (0, 0), "{}", a.outcome);
        }
        other => panic!("answered at once after replication: {other:?}"),
    }
    assert_eq!(log_end(&h), 2);
}

/// InitProducerId v3+ naming an id and epoch (KIP-360): the current one
/// gets the next epoch; a fenced one is PRODUCER_FENCED and leaves the
/// newer producer's epoch as it was. Kafka would also accept a retry of a
/// bump by the epoch before it; this server keeps no previous epoch
/// (docs/kafka-differences.md, "InitProducerId retry of an epoch bump").
#[test]
fn init_producer_id_naming_a_fenced_epoch_is_fenced_not_bumped() {
    let mut h = worker("kafka");
    let (_, pid, first) = init(&mut h, Some("app"));
    let (_, _, second) = init(&mut h, Some("app"));
    let named = |epoch: i16| {
        RequestKind::InitProducerId(
            InitProducerIdRequest::default()
                .with_transactional_id(Some(TransactionalId(StrBytes::from_static_str("app"))))
                .with_transaction_timeout_ms(60_000)
                .with_producer_id(ProducerId(pid))
                .with_producer_epoch(epoch),
        )
    };
    let ResponseKind::InitProducerId(r) = ask(&mut h, 4, named(first)) else {
        panic!()
    };
    assert_eq!(r.error_code, code::PRODUCER_FENCED, "{r:?}");
    // The retry of a bump whose answer was lost names `second` after the
    // bump to `second + 1`: Kafka answers it, this server fences it.
    let ResponseKind::InitProducerId(r) = ask(&mut h, 4, named(second)) else {
        panic!()
    };
    assert_eq!((r.error_code, r.producer_epoch), (0, second + 1), "{r:?}");
    let ResponseKind::InitProducerId(r) = ask(&mut h, 4, named(second)) else {
        panic!()
    };
    assert_eq!(r.error_code, code::PRODUCER_FENCED, "{r:?}");
    // An empty transactional id is neither idempotent nor transactional.
    let empty = RequestKind::InitProducerId(
        InitProducerIdRequest::default()
            .with_transactional_id(Some(TransactionalId(StrBytes::from_static_str(""))))
            .with_transaction_timeout_ms(60_000)
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1),
    );
    let ResponseKind::InitProducerId(r) = ask(&mut h, 4, empty) else {
        panic!()
    };
    assert_eq!(r.error_code, code::INVALID_REQUEST, "{r:?}");
}

#[test]
fn a_transactional_offset_commit_is_fenced_by_the_groups_generation_and_member() {
    use kafka_protocol::messages::add_offsets_to_txn_request::AddOffsetsToTxnRequest;
    use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
    use kafka_protocol::messages::txn_offset_commit_request::{
        TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
    };
    use kafka_protocol::messages::{GroupId, JoinGroupRequest, TxnOffsetCommitRequest};
    let mut w = worker("kafka");
    let s = |t: &str| StrBytes::from_string(t.into());
    let join = JoinGroupRequest::default()
        .with_group_id(GroupId(s("g")))
        .with_session_timeout_ms(10_000)
        .with_protocol_type(s("consumer"))
        .with_protocols(vec![
            JoinGroupRequestProtocol::default()
                .with_name(s("range"))
                .with_metadata(Bytes::new()),
        ]);
    let (member, generation) = match ask(&mut w, 3, RequestKind::JoinGroup(join)) {
        ResponseKind::JoinGroup(r) => (r.member_id.to_string(), r.generation_id),
        other => panic!("{other:?}"),
    };
    assert_eq!(generation, 1);
    let (_, pid, epoch) = init(&mut w, Some("a"));
    let add = AddOffsetsToTxnRequest::default()
        .with_transactional_id(TransactionalId(s("a")))
        .with_producer_id(ProducerId(pid))
        .with_producer_epoch(epoch)
        .with_group_id(GroupId(s("g")));
    match ask(&mut w, 3, RequestKind::AddOffsetsToTxn(add)) {
        ResponseKind::AddOffsetsToTxn(r) => assert_eq!(r.error_code, 0),
        other => panic!("{other:?}"),
    }
    let mut commit = |member: &str, generation: i32| {
        let r = TxnOffsetCommitRequest::default()
            .with_transactional_id(TransactionalId(s("a")))
            .with_group_id(GroupId(s("g")))
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(epoch)
            .with_generation_id(generation)
            .with_member_id(s(member))
            .with_topics(vec![
                TxnOffsetCommitRequestTopic::default()
                    .with_name(TopicName(s("t")))
                    .with_partitions(vec![
                        TxnOffsetCommitRequestPartition::default().with_committed_offset(1),
                    ]),
            ]);
        match ask(&mut w, 3, RequestKind::TxnOffsetCommit(r)) {
            ResponseKind::TxnOffsetCommit(r) => r.topics[0].partitions[0].error_code,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(commit(&member, 0), code::ILLEGAL_GENERATION, "a zombie's");
    assert_eq!(commit("ghost", 1), code::UNKNOWN_MEMBER_ID);
    assert_eq!(
        commit("", -1),
        0,
        "no member named (before v3): not checked, as Kafka"
    );
    assert_eq!(commit(&member, 1), 0);
}
