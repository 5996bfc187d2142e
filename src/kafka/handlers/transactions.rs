//! ListTransactions (versions 0-1) and DescribeTransactions (version 0):
//! the engine's transaction coordinator as Kafka's admin client sees a
//! coordinator ([`crate::kafka::txn_view`], docs/kafka-mapping.md "Open
//! transactions over the admin APIs"). Reads only.
//!
//! The engine has one coordinator for every transactional id; the broker
//! FindCoordinator names (the first running one) answers for all of them.
//! As in Kafka, where each broker lists the ids of the coordinator
//! partitions it leads, ListTransactions on any other broker answers an
//! empty list (so a client that asks every broker and joins the answers,
//! as Kafka's admin client does, lists each id once), and
//! DescribeTransactions there answers NOT_COORDINATOR.
//!
//! ListTransactions v1's `duration_filter` keeps the transactions begun at
//! least that many ms ago on the engine's clock; the book's transactions
//! have no start time, so a duration filter keeps none of them. v2 (a
//! transactional id pattern, a regular expression) is not served.
//! DescribeTransactions' `transaction_start_time_ms` is a Unix time, as
//! clients read it (`kafka-transactions.sh --find-hanging` compares it
//! with theirs): the engine's `begin` time on its clock, as many ms before
//! the wall clock's now as it is before the engine's now (under serve the
//! engine's clock follows real time; in the dashboard it moves by keys, so
//! there the date is only as real as the lecture's clock).

use kafka_protocol::messages::describe_transactions_response::{
    TopicData, TransactionState as Described,
};
use kafka_protocol::messages::list_transactions_response::TransactionState as Listed;
use kafka_protocol::messages::{
    DescribeTransactionsRequest, DescribeTransactionsResponse, ListTransactionsRequest,
    ListTransactionsResponse, ProducerId, ResponseKind, TopicName, TransactionalId,
};
use kafka_protocol::protocol::StrBytes;

use super::find_coordinator::coordinator;
use crate::kafka::broker::{Answer, Broker};
use crate::kafka::clock::RealTime;
use crate::kafka::errors::{code, name_of};
use crate::kafka::txn_view::{KAFKA_STATES, TxnView, views};

/// Whether `broker` is the coordinator now.
fn coordinates(worker: &dyn Broker, broker: u32) -> bool {
    coordinator(worker).is_some_and(|c| c.broker == broker)
}

/// The engine's transactions, read once.
fn read(worker: &dyn Broker) -> Vec<TxnView> {
    let producers = worker.producers();
    worker.read(|s| views(s, producers))
}

/// The transaction timeout in ms: the engine's `transaction_timeout_ms`
/// under rules that time transactions out, else -1 (the book's never time
/// out).
fn timeout_ms(worker: &dyn Broker) -> i32 {
    let config = worker.config();
    if config.rules.transaction_timeout {
        i32::try_from(config.transaction_timeout_ms).unwrap_or(i32::MAX)
    } else {
        -1
    }
}

pub fn list(
    worker: &mut dyn Broker,
    broker: u32,
    request: &ListTransactionsRequest,
    version: i16,
) -> Answer {
    let unknown: Vec<StrBytes> = request
        .state_filters
        .iter()
        .filter(|f| !KAFKA_STATES.contains(&f.as_str()))
        .cloned()
        .collect();
    let now = i64::try_from(worker.clock_ms()).unwrap_or(i64::MAX);
    let duration = if version >= 1 {
        request.duration_filter
    } else {
        -1
    };
    let listed: Vec<TxnView> = if coordinates(worker, broker) {
        read(worker)
            .into_iter()
            .filter(|v| {
                request.state_filters.is_empty()
                    || request.state_filters.iter().any(|f| f.as_str() == v.state)
            })
            .filter(|v| {
                request.producer_id_filters.is_empty()
                    || request
                        .producer_id_filters
                        .iter()
                        .any(|p| p.0 == v.producer_id)
            })
            .filter(|v| duration < 0 || (v.start_ms >= 0 && now - v.start_ms >= duration))
            .collect()
    } else {
        Vec::new()
    };
    let outcome = if coordinates(worker, broker) {
        let names: Vec<String> = listed
            .iter()
            .map(|v| format!("{} {}", v.id, v.state))
            .collect();
        format!("{} transactions: {}", listed.len(), names.join(", "))
    } else {
        "not the coordinator: none listed here".to_string()
    };
    let response = ListTransactionsResponse::default()
        .with_unknown_state_filters(unknown)
        .with_transaction_states(
            listed
                .iter()
                .map(|v| {
                    Listed::default()
                        .with_transactional_id(TransactionalId(StrBytes::from_string(v.id.clone())))
                        .with_producer_id(ProducerId(v.producer_id))
                        .with_transaction_state(StrBytes::from_static_str(v.state))
                })
                .collect(),
        );
    Answer::now(ResponseKind::ListTransactions(response), outcome)
}

pub fn describe(
    worker: &mut dyn Broker,
    broker: u32,
    request: &DescribeTransactionsRequest,
) -> Answer {
    let here = coordinates(worker, broker);
    let all = if here { read(worker) } else { Vec::new() };
    let timeout = timeout_ms(worker);
    // Kafka's start time is a Unix time; the engine's is its clock. The
    // engine's clock follows real time under serve, so its `begin` was
    // (now - started) ms ago.
    let engine_now = i64::try_from(worker.clock_ms()).unwrap_or(i64::MAX);
    let unix_now = RealTime::unix_ms();
    let start = |ms: i64| {
        if ms < 0 {
            -1
        } else {
            unix_now - (engine_now - ms).max(0)
        }
    };
    let mut notes = Vec::new();
    let states = request
        .transactional_ids
        .iter()
        .map(|id| {
            let r = Described::default().with_transactional_id(id.clone());
            let error = if here {
                code::TRANSACTIONAL_ID_NOT_FOUND
            } else {
                code::NOT_COORDINATOR
            };
            let Some(v) = all.iter().find(|v| v.id == id.0.as_str()) else {
                notes.push(format!("{}: {}", id.0.as_str(), name_of(error)));
                return r
                    .with_error_code(error)
                    .with_producer_id(ProducerId(-1))
                    .with_producer_epoch(-1)
                    .with_transaction_start_time_ms(-1)
                    .with_transaction_state(StrBytes::default());
            };
            notes.push(format!("{} {}", v.id, v.state));
            let mut topics: Vec<TopicData> = Vec::new();
            for tp in &v.partitions {
                let p = i32::try_from(tp.partition).unwrap_or(i32::MAX);
                match topics.last_mut() {
                    Some(t) if t.topic.0.as_str() == tp.topic => t.partitions.push(p),
                    _ => topics.push(
                        TopicData::default()
                            .with_topic(TopicName(StrBytes::from_string(tp.topic.clone())))
                            .with_partitions(vec![p]),
                    ),
                }
            }
            r.with_transaction_state(StrBytes::from_static_str(v.state))
                .with_transaction_timeout_ms(timeout)
                .with_transaction_start_time_ms(start(v.start_ms))
                .with_producer_id(ProducerId(v.producer_id))
                .with_producer_epoch(v.producer_epoch)
                .with_topics(topics)
        })
        .collect();
    let response = DescribeTransactionsResponse::default().with_transaction_states(states);
    Answer::now(
        ResponseKind::DescribeTransactions(response),
        notes.join(", "),
    )
}
