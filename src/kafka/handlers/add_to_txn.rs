//! AddPartitionsToTxn (versions 0-3) and AddOffsetsToTxn (versions 0-3):
//! the client says what its transaction will write. The first of them in
//! a transaction opens it in the engine with a `begin` action
//! ([`txn_client::ensure_open`]); the partitions and groups are kept by
//! the server, which refuses a transactional produce to a partition not
//! added (INVALID_TXN_STATE; TRANSACTION_ABORTABLE from Produce v11), as
//! a broker does. The engine itself learns a partition from the
//! transaction's first `send` to it (E10).
//!
//! Versions 4 and 5 (KIP-890's broker-to-broker batches: a broker asks
//! the coordinator for its producers, several transactions at once) are
//! answered per transaction by [`verify_batch`]: `verify_only` checks
//! that the partitions are in the transaction (KIP-890 part 1, what a
//! broker asks before appending a version 1 client's batch); otherwise
//! they are added, opening the transaction if needed, as for a Produce v12
//! (part 2). No client sends these versions (`forClient` caps at 3); a
//! tool that speaks for a broker may.

use std::collections::BTreeSet;
use std::time::Duration;

use kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTransaction;
use kafka_protocol::messages::add_partitions_to_txn_response::{
    AddPartitionsToTxnPartitionResult, AddPartitionsToTxnResult, AddPartitionsToTxnTopicResult,
};
use kafka_protocol::messages::{
    AddOffsetsToTxnRequest, AddOffsetsToTxnResponse, AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse, ResponseKind, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::topic_partition;
use super::txn_client::{self, Opened};
use crate::kafka::broker::{Answer, Broker, Handled, TopicPartition};
use crate::kafka::clock::RealTime;
use crate::kafka::errors::{code, name_of};
use crate::kafka::steps::{AfterStep, Refused};

/// How long a `begin` may wait behind earlier work of the same id.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// Kafka's code for the partitions of a request not tried because another
/// partition of it was refused.
const OPERATION_NOT_ATTEMPTED: i16 = 55;

/// What to add once the transaction is open.
#[derive(Debug, Clone)]
enum Adding {
    Partitions(Vec<TopicPartition>),
    Group(String),
}

pub fn add_partitions(worker: &mut dyn Broker, request: &AddPartitionsToTxnRequest) -> Handled {
    let txn = request.v3_and_below_transactional_id.0.to_string();
    let asked: Vec<(String, i32)> = request
        .v3_and_below_topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(|p| (t.name.0.to_string(), *p)))
        .collect();
    let mut bad = BTreeSet::new();
    let mut tps = Vec::new();
    for (topic, p) in &asked {
        match topic_partition(topic, *p).filter(|tp| worker.read(|s| s.partition(tp).is_ok())) {
            Some(tp) => tps.push(tp),
            None => {
                bad.insert((topic.clone(), *p));
            }
        }
    }
    let respond =
        move |result: Result<(), Refused>, bad: &BTreeSet<(String, i32)>, outcome: String| {
            let mut topics: Vec<AddPartitionsToTxnTopicResult> = Vec::new();
            for t in &request_topics(&asked) {
                let results =
                    t.1.iter()
                        .map(|p| {
                            let error = match &result {
                                Err((e, _)) => *e,
                                Ok(()) if bad.contains(&(t.0.clone(), *p)) => {
                                    code::UNKNOWN_TOPIC_OR_PARTITION
                                }
                                Ok(()) if !bad.is_empty() => OPERATION_NOT_ATTEMPTED,
                                Ok(()) => code::NONE,
                            };
                            AddPartitionsToTxnPartitionResult::default()
                                .with_partition_index(*p)
                                .with_partition_error_code(error)
                        })
                        .collect();
                topics.push(
                    AddPartitionsToTxnTopicResult::default()
                        .with_name(TopicName(StrBytes::from_string(t.0.clone())))
                        .with_results_by_partition(results),
                );
            }
            let response =
                AddPartitionsToTxnResponse::default().with_results_by_topic_v3_and_below(topics);
            Answer::now(ResponseKind::AddPartitionsToTxn(response), outcome)
        };
    if let Err(e) = txn_client::check_producer(
        worker,
        &txn,
        request.v3_and_below_producer_id.0,
        request.v3_and_below_producer_epoch,
        code::PRODUCER_FENCED,
    ) {
        let outcome = refused(&txn, &e);
        return Handled::Now(respond(Err(e), &BTreeSet::new(), outcome));
    }
    if !bad.is_empty() {
        let outcome = format!("{txn:?}: UNKNOWN_TOPIC_OR_PARTITION: {bad:?}");
        return Handled::Now(respond(Ok(()), &bad, outcome));
    }
    let list = tps
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    open_then(
        worker,
        txn.clone(),
        Adding::Partitions(tps),
        move |result| {
            let outcome = match &result {
                Ok(()) => format!("{txn:?}: added {list}"),
                Err(e) => refused(&txn, e),
            };
            respond(result, &BTreeSet::new(), outcome)
        },
    )
}

pub fn add_offsets(worker: &mut dyn Broker, request: &AddOffsetsToTxnRequest) -> Handled {
    let txn = request.transactional_id.0.to_string();
    let group = request.group_id.0.to_string();
    let respond = |result: Result<(), Refused>, outcome: String| {
        let error = result.err().map_or(code::NONE, |(e, _)| e);
        let response = AddOffsetsToTxnResponse::default().with_error_code(error);
        Answer::now(ResponseKind::AddOffsetsToTxn(response), outcome)
    };
    let checked = txn_client::check_producer(
        worker,
        &txn,
        request.producer_id.0,
        request.producer_epoch,
        code::PRODUCER_FENCED,
    )
    .and_then(|()| {
        if group.is_empty() {
            Err((code::INVALID_GROUP_ID, "an empty group id".to_string()))
        } else {
            Ok(())
        }
    });
    if let Err(e) = checked {
        let outcome = refused(&txn, &e);
        return Handled::Now(respond(Err(e), outcome));
    }
    open_then(
        worker,
        txn.clone(),
        Adding::Group(group.clone()),
        move |result| {
            let outcome = match &result {
                Ok(()) => format!("{txn:?}: offsets of group {group:?} added"),
                Err(e) => refused(&txn, e),
            };
            respond(result, outcome)
        },
    )
}

/// Opens the client's transaction if it is not, adds what it asked, and
/// answers with `respond` (now, or once a pending `begin` finished).
fn open_then(
    worker: &mut dyn Broker,
    txn: String,
    adding: Adding,
    respond: impl FnOnce(Result<(), Refused>) -> Answer + Send + 'static,
) -> Handled {
    if let Some(p) = worker.producers_mut().transactional.get_mut(&txn) {
        p.attempting = true;
    }
    match txn_client::ensure_open(worker, &txn) {
        Err(e) => Handled::Now(respond(Err(e))),
        Ok(Opened::Open) => {
            add(worker, &txn, adding);
            Handled::Now(respond(Ok(())))
        }
        Ok(Opened::Pending(step)) => Handled::Continue(AfterStep::new(
            step,
            RealTime::now() + MAX_WAIT,
            Box::new(
                move |worker: &mut dyn Broker, result: Result<(), Refused>| {
                    if result.is_ok() {
                        txn_client::finish_begin(worker, &txn);
                        add(worker, &txn, adding);
                    }
                    respond(result.map_err(txn_client::coordinator_code))
                },
            ),
        )),
    }
}

fn add(worker: &mut dyn Broker, txn: &str, adding: Adding) {
    let Some(open) = worker
        .producers_mut()
        .transactional
        .get_mut(txn)
        .and_then(|p| p.open.as_mut())
    else {
        return;
    };
    match adding {
        Adding::Partitions(tps) => open.partitions.extend(tps),
        Adding::Group(g) => {
            open.groups.insert(g);
        }
    }
}

fn refused(txn: &str, (e, message): &Refused) -> String {
    format!("{txn:?}: {}: {message}", name_of(*e))
}

/// The request's partitions grouped by topic, in the request's order.
fn request_topics(asked: &[(String, i32)]) -> Vec<(String, Vec<i32>)> {
    let mut out: Vec<(String, Vec<i32>)> = Vec::new();
    for (t, p) in asked {
        match out.iter_mut().find(|(name, _)| name == t) {
            Some((_, ps)) => ps.push(*p),
            None => out.push((t.clone(), vec![*p])),
        }
    }
    out
}

/// AddPartitionsToTxn v4-v5: each transaction of the batch checked (and
/// added to, unless `verify_only`) on its own; the errors are per
/// partition, as Kafka's coordinator answers them (`KafkaApis`
/// `handleAddPartitionsToTxnRequest`).
pub fn verify_batch(worker: &mut dyn Broker, request: &AddPartitionsToTxnRequest) -> Answer {
    let mut notes = Vec::new();
    let results = request
        .transactions
        .iter()
        .map(|t| {
            let txn = t.transactional_id.0.to_string();
            let result = verify_one(worker, t);
            notes.push(match &result {
                Ok(()) if t.verify_only => format!("{txn:?}: verified"),
                Ok(()) => format!("{txn:?}: added"),
                Err(e) => refused(&txn, e),
            });
            let (error, in_txn) = match &result {
                Ok(()) => (code::NONE, None),
                Err((e, _)) => (*e, Some(*e)),
            };
            let open: BTreeSet<TopicPartition> = worker
                .producers()
                .transactional
                .get(&txn)
                .and_then(|p| p.open.as_ref())
                .map(|o| o.partitions.clone())
                .unwrap_or_default();
            let topic_results = t
                .topics
                .iter()
                .map(|topic| {
                    let partitions = topic
                        .partitions
                        .iter()
                        .map(|p| {
                            let added = topic_partition(&topic.name.0, *p)
                                .is_some_and(|tp| open.contains(&tp));
                            // Kafka's coordinator: TRANSACTION_ABORTABLE
                            // for a partition not in the transaction
                            // (`handleVerifyPartitionsInTransaction`).
                            let code = in_txn.unwrap_or(if added || error != code::NONE {
                                error
                            } else {
                                code::TRANSACTION_ABORTABLE
                            });
                            AddPartitionsToTxnPartitionResult::default()
                                .with_partition_index(*p)
                                .with_partition_error_code(code)
                        })
                        .collect();
                    AddPartitionsToTxnTopicResult::default()
                        .with_name(topic.name.clone())
                        .with_results_by_partition(partitions)
                })
                .collect();
            AddPartitionsToTxnResult::default()
                .with_transactional_id(t.transactional_id.clone())
                .with_topic_results(topic_results)
        })
        .collect();
    let response = AddPartitionsToTxnResponse::default().with_results_by_transaction(results);
    Answer::now(ResponseKind::AddPartitionsToTxn(response), notes.join(", "))
}

/// One transaction of a batch: its producer checked, then (unless only
/// verifying) its partitions added. A partition verified but not in the
/// transaction is TRANSACTION_ABORTABLE, set by the caller.
fn verify_one(worker: &mut dyn Broker, t: &AddPartitionsToTxnTransaction) -> Result<(), Refused> {
    let txn = t.transactional_id.0.to_string();
    txn_client::check_producer(
        worker,
        &txn,
        t.producer_id.0,
        t.producer_epoch,
        code::PRODUCER_FENCED,
    )?;
    let mut tps = Vec::new();
    for topic in &t.topics {
        for p in &topic.partitions {
            let tp = topic_partition(&topic.name.0, *p)
                .filter(|tp| worker.read(|s| s.partition(tp).is_ok()))
                .ok_or_else(|| {
                    (
                        code::UNKNOWN_TOPIC_OR_PARTITION,
                        format!("no partition {p} of {}", topic.name.0.as_str()),
                    )
                })?;
            tps.push(tp);
        }
    }
    if t.verify_only {
        let open = worker.producers().transactional[&txn].open.clone();
        return match open {
            Some(o) => txn_client::still_open(worker, &txn, &o)
                .map_err(|m| (code::TRANSACTION_ABORTABLE, m)),
            None => Err((
                code::TRANSACTION_ABORTABLE,
                format!("{txn:?} has no transaction open"),
            )),
        };
    }
    txn_client::open_implicitly(worker, &txn)?;
    add(worker, &txn, Adding::Partitions(tps));
    Ok(())
}
