//! Transaction version 2 over the wire (KIP-890), in process on a
//! one-broker cluster served with `--transaction-version 2`: the requests
//! a version 2 client sends (InitProducerId v5, Produce v12 with no
//! AddPartitionsToTxn, TxnOffsetCommit v5 with no AddOffsetsToTxn, EndTxn
//! v5) and those of a version 1 client against the same server.

use bytes::Bytes;
use kafka_protocol::messages::add_partitions_to_txn_request::{
    AddPartitionsToTxnTopic, AddPartitionsToTxnTransaction,
};
use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::txn_offset_commit_request::{
    TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
};
use kafka_protocol::messages::{
    AddPartitionsToTxnRequest, EndTxnRequest, GroupId, InitProducerIdRequest, OffsetFetchRequest,
    ProduceRequest, ProducerId, RequestKind, ResponseKind, TopicName, TransactionalId,
    TxnOffsetCommitRequest,
};
use kafka_protocol::protocol::StrBytes;

use super::txn_tests::{Harness, ask, batch, log_end, worker_with};
use crate::engine::{ControlType, TopicPartition};
use crate::kafka::errors::code;

fn s(t: &str) -> StrBytes {
    StrBytes::from_string(t.into())
}

fn served(version: u8) -> Harness {
    worker_with(
        "kafka",
        1,
        serde_json::json!({"transaction_version": version}),
    )
}

fn init(h: &mut Harness, txn: &str) -> (i16, i64, i16) {
    let r = InitProducerIdRequest::default()
        .with_transactional_id(Some(TransactionalId(s(txn))))
        .with_transaction_timeout_ms(60_000)
        .with_producer_id(ProducerId(-1))
        .with_producer_epoch(-1);
    match ask(h, 5, RequestKind::InitProducerId(r)) {
        ResponseKind::InitProducerId(r) => (r.error_code, r.producer_id.0, r.producer_epoch),
        other => panic!("{other:?}"),
    }
}

/// A transactional Produce of `records` to t-0 at `version`: (error, base
/// offset).
fn produce(h: &mut Harness, version: i16, txn: &str, records: Bytes) -> (i16, i64) {
    let r = ProduceRequest::default()
        .with_transactional_id(Some(TransactionalId(s(txn))))
        .with_acks(-1)
        .with_timeout_ms(1000)
        .with_topic_data(vec![
            TopicProduceData::default()
                .with_name(TopicName(s("t")))
                .with_partition_data(vec![
                    PartitionProduceData::default()
                        .with_index(0)
                        .with_records(Some(records)),
                ]),
        ]);
    match ask(h, version, RequestKind::Produce(r)) {
        ResponseKind::Produce(r) => {
            let p = &r.responses[0].partition_responses[0];
            (p.error_code, p.base_offset)
        }
        other => panic!("{other:?}"),
    }
}

/// EndTxn at `version`: (error, producer id, epoch) as answered.
fn end(
    h: &mut Harness,
    version: i16,
    txn: &str,
    pid: i64,
    epoch: i16,
    commit: bool,
) -> (i16, i64, i16) {
    let r = EndTxnRequest::default()
        .with_transactional_id(TransactionalId(s(txn)))
        .with_producer_id(ProducerId(pid))
        .with_producer_epoch(epoch)
        .with_committed(commit);
    match ask(h, version, RequestKind::EndTxn(r)) {
        ResponseKind::EndTxn(r) => (r.error_code, r.producer_id.0, r.producer_epoch),
        other => panic!("{other:?}"),
    }
}

fn add_v3(h: &mut Harness, txn: &str, pid: i64, epoch: i16) -> i16 {
    let r = AddPartitionsToTxnRequest::default()
        .with_v3_and_below_transactional_id(TransactionalId(s(txn)))
        .with_v3_and_below_producer_id(ProducerId(pid))
        .with_v3_and_below_producer_epoch(epoch)
        .with_v3_and_below_topics(vec![
            AddPartitionsToTxnTopic::default()
                .with_name(TopicName(s("t")))
                .with_partitions(vec![0]),
        ]);
    match ask(h, 3, RequestKind::AddPartitionsToTxn(r)) {
        ResponseKind::AddPartitionsToTxn(r) => {
            r.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code
        }
        other => panic!("{other:?}"),
    }
}

/// AddPartitionsToTxn v5 of t-0 (a broker's batch of one transaction).
fn add_v5(h: &mut Harness, txn: &str, pid: i64, epoch: i16, verify_only: bool) -> (i16, i16) {
    let r = AddPartitionsToTxnRequest::default().with_transactions(vec![
        AddPartitionsToTxnTransaction::default()
            .with_transactional_id(TransactionalId(s(txn)))
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(epoch)
            .with_verify_only(verify_only)
            .with_topics(vec![
                AddPartitionsToTxnTopic::default()
                    .with_name(TopicName(s("t")))
                    .with_partitions(vec![0]),
            ]),
    ]);
    match ask(h, 5, RequestKind::AddPartitionsToTxn(r)) {
        ResponseKind::AddPartitionsToTxn(r) => (
            r.error_code,
            r.results_by_transaction[0].topic_results[0].results_by_partition[0]
                .partition_error_code,
        ),
        other => panic!("{other:?}"),
    }
}

/// The control markers of t-0: (offset, commit?, producer epoch).
fn markers(h: &Harness) -> Vec<(i64, bool, i16)> {
    h.driver.cluster().with_state(|st| {
        let set = st.partition(&TopicPartition::new("t", 0)).unwrap();
        let batches = set.leader().log.read_batches(0, 1_000).unwrap();
        batches
            .iter()
            .filter_map(|b| {
                b.control.map(|c| {
                    (
                        b.base_offset,
                        c == ControlType::Commit,
                        b.producer_epoch as i16,
                    )
                })
            })
            .collect()
    })
}

/// A version 2 client: its Produce v12 opens the transaction and adds
/// the partition, EndTxn v5 answers the bumped epoch (the markers carry
/// it), the next transaction goes on with it, and a write of the old
/// epoch arriving after the end (the delayed write) is fenced with
/// nothing appended, as Kafka 4.4 answers it (docs/kafka-differences.md).
#[test]
fn a_version_2_client_goes_on_with_the_bumped_epoch_and_its_late_write_is_fenced() {
    let mut h = served(2);
    let (e, pid, epoch) = init(&mut h, "tx");
    assert_eq!((e, epoch), (0, 0));
    assert_eq!(
        produce(&mut h, 12, "tx", batch(pid, 0, 0, &["a"], true)),
        (0, 0),
        "no AddPartitionsToTxn: Produce v12 adds t-0"
    );
    let late = batch(pid, 0, 1, &["late"], true);
    assert_eq!(end(&mut h, 5, "tx", pid, 0, true), (0, pid, 1));
    assert_eq!(markers(&h), [(1, true, 1)], "the marker carries the bump");
    assert_eq!(
        produce(&mut h, 12, "tx", late),
        (code::INVALID_PRODUCER_EPOCH, -1),
        "the delayed write of epoch 0"
    );
    assert_eq!(log_end(&h), 2, "nothing appended");
    assert_eq!(
        produce(&mut h, 12, "tx", batch(pid, 1, 0, &["b"], true)),
        (0, 2),
        "the next transaction, at the bumped epoch"
    );
    assert_eq!(end(&mut h, 5, "tx", pid, 1, false), (0, pid, 2));
    assert_eq!(markers(&h), [(1, true, 1), (3, false, 2)]);
    assert_eq!(
        end(&mut h, 5, "tx", pid, 1, true),
        (code::PRODUCER_FENCED, -1, -1),
        "an EndTxn of the old epoch; an error answers no epoch"
    );
}

/// A new producer's InitProducerId after a version 2 end takes an epoch
/// past the bumped one, fencing the producer that holds it (Kafka:
/// 0, 1 after the commit, 2 for the new producer).
#[test]
fn init_producer_id_after_a_version_2_end_fences_the_bumped_epoch() {
    let mut h = served(2);
    let (_, pid, _) = init(&mut h, "tx");
    assert_eq!(
        produce(&mut h, 12, "tx", batch(pid, 0, 0, &["a"], true)).0,
        0
    );
    assert_eq!(end(&mut h, 5, "tx", pid, 0, true), (0, pid, 1));
    assert_eq!(init(&mut h, "tx"), (0, pid, 2), "the new producer");
    assert_eq!(
        produce(&mut h, 12, "tx", batch(pid, 1, 0, &["zombie"], true)).0,
        code::INVALID_PRODUCER_EPOCH
    );
    assert_eq!(end(&mut h, 5, "tx", pid, 1, true).0, code::PRODUCER_FENCED);
}

/// A version 1 client (librdkafka, kafka-python, Java against a version
/// 1 cluster) on a version 2 server: Produce v11 does not add its
/// partition, EndTxn v4 answers no epoch and the client keeps its own,
/// and its write delayed past the end is refused TRANSACTION_ABORTABLE
/// (INVALID_TXN_STATE below v11: the partition is in no open transaction,
/// Kafka's verification, KIP-890 part 1) instead of hanging the LSO.
#[test]
fn a_version_1_client_keeps_working_against_a_version_2_server() {
    let mut h = served(2);
    let (_, pid, epoch) = init(&mut h, "tx");
    assert_eq!(
        produce(&mut h, 11, "tx", batch(pid, epoch, 0, &["a"], true)).0,
        code::TRANSACTION_ABORTABLE,
        "v11 adds nothing: AddPartitionsToTxn first (v10 and below: INVALID_TXN_STATE)"
    );
    assert_eq!(add_v3(&mut h, "tx", pid, epoch), 0);
    assert_eq!(
        produce(&mut h, 11, "tx", batch(pid, epoch, 0, &["a"], true)),
        (0, 0)
    );
    assert_eq!(end(&mut h, 4, "tx", pid, epoch, true).0, 0);
    let lso = |h: &Harness| {
        h.driver
            .cluster()
            .with_state(|st| st.last_stable_offset(&TopicPartition::new("t", 0)).unwrap())
    };
    let (lso_before, end_before) = (lso(&h), log_end(&h));
    assert_eq!(lso_before, end_before, "the commit is stable");
    assert_eq!(
        produce(&mut h, 11, "tx", batch(pid, epoch, 1, &["late"], true)).0,
        code::TRANSACTION_ABORTABLE,
        "measured on Apache Kafka 4.4 (after a NOT_ENOUGH_REPLICAS while its coordinator completes)"
    );
    assert_eq!(
        produce(&mut h, 10, "tx", batch(pid, epoch, 1, &["late"], true)).0,
        code::INVALID_TXN_STATE,
        "v10 knows no TRANSACTION_ABORTABLE"
    );
    assert_eq!(log_end(&h), end_before, "nothing appended");
    assert_eq!(lso(&h), lso_before, "no hanging transaction");
    // Its next transaction, at the epoch it kept.
    assert_eq!(add_v3(&mut h, "tx", pid, epoch), 0);
    assert_eq!(
        produce(&mut h, 11, "tx", batch(pid, epoch, 1, &["b"], true)).0,
        0
    );
    assert_eq!(end(&mut h, 4, "tx", pid, epoch, true).0, 0);
}

/// TxnOffsetCommit v5 with no AddOffsetsToTxn adds its group (and opens
/// the transaction), and the commit publishes the offset.
#[test]
fn a_version_5_offset_commit_adds_its_group() {
    let mut h = served(2);
    let (_, pid, epoch) = init(&mut h, "tx");
    let commit = |h: &mut Harness, version: i16, epoch: i16| {
        let r = TxnOffsetCommitRequest::default()
            .with_transactional_id(TransactionalId(s("tx")))
            .with_group_id(GroupId(s("g")))
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(epoch)
            .with_generation_id(-1)
            .with_topics(vec![
                TxnOffsetCommitRequestTopic::default()
                    .with_name(TopicName(s("t")))
                    .with_partitions(vec![
                        TxnOffsetCommitRequestPartition::default().with_committed_offset(7),
                    ]),
            ]);
        match ask(h, version, RequestKind::TxnOffsetCommit(r)) {
            ResponseKind::TxnOffsetCommit(r) => r.topics[0].partitions[0].error_code,
            other => panic!("{other:?}"),
        }
    };
    // The first transaction was opened by InitProducerId; end it empty.
    assert_eq!(end(&mut h, 5, "tx", pid, epoch, false), (0, pid, 1));
    assert_eq!(
        commit(&mut h, 4, 1),
        code::INVALID_TXN_STATE,
        "v4 adds nothing: AddOffsetsToTxn first"
    );
    assert_eq!(commit(&mut h, 5, 1), 0, "v5 opens the transaction");
    assert_eq!(end(&mut h, 5, "tx", pid, 1, true), (0, pid, 2));
    let fetch = OffsetFetchRequest::default()
        .with_group_id(GroupId(s("g")))
        .with_topics(Some(vec![
            OffsetFetchRequestTopic::default()
                .with_name(TopicName(s("t")))
                .with_partition_indexes(vec![0]),
        ]));
    match ask(&mut h, 5, RequestKind::OffsetFetch(fetch)) {
        ResponseKind::OffsetFetch(r) => {
            assert_eq!(r.topics[0].partitions[0].committed_offset, 7);
        }
        other => panic!("{other:?}"),
    }
}

/// AddPartitionsToTxn v5 as a broker sends it: VerifyOnly answers whether
/// t-0 is in the open transaction; without it the partition is added.
#[test]
fn add_partitions_v5_verifies_or_adds() {
    let mut h = served(2);
    let (_, pid, epoch) = init(&mut h, "tx");
    assert_eq!(
        add_v5(&mut h, "tx", pid, epoch, true),
        (0, code::TRANSACTION_ABORTABLE),
        "not added yet"
    );
    assert_eq!(add_v5(&mut h, "tx", pid, epoch, false), (0, 0));
    assert_eq!(add_v5(&mut h, "tx", pid, epoch, true), (0, 0));
    assert_eq!(
        add_v5(&mut h, "tx", pid, epoch + 1, true),
        (0, code::PRODUCER_FENCED),
        "an epoch never given"
    );
    assert_eq!(
        produce(&mut h, 11, "tx", batch(pid, epoch, 0, &["a"], true)),
        (0, 0),
        "added by the batch: a v11 write goes in"
    );
}

/// Under version 1 an EndTxn v5 answers the epoch unchanged: nothing
/// bumps it.
#[test]
fn end_txn_v5_on_a_version_1_server_answers_the_same_epoch() {
    let mut h = served(1);
    let (_, pid, epoch) = init(&mut h, "tx");
    assert_eq!(
        produce(&mut h, 12, "tx", batch(pid, epoch, 0, &["a"], true)).0,
        0
    );
    assert_eq!(end(&mut h, 5, "tx", pid, epoch, true), (0, pid, epoch));
    assert_eq!(markers(&h), [(1, true, epoch)]);
}
