//! TxnOffsetCommit (versions 0-5): the offsets of the client's
//! send_offsets_to_transaction() as a `send_offsets` action (E10): staged
//! in the transaction (journaled), published to the offset store only by
//! its commit, discarded by its abort. The group must have been added with
//! AddOffsetsToTxn first (INVALID_TXN_STATE otherwise). The generation and
//! member of the consumer group (v3) are checked as Kafka checks them
//! (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID: a zombie member's offsets are
//! fenced), see [`crate::kafka::groups::Groups::validate_commit`].
//!
//! Version 5 is transaction version 2's (KIP-890): the client sends no
//! AddOffsetsToTxn, and the commit adds its group itself, opening the
//! transaction if the client's first write in it is this one
//! ([`txn_client::open_implicitly`]), as Kafka's
//! `txnOffsetCommitRequestVersionToTransactionSupportedOperation` gives
//! version 5 ADD_PARTITION. Versions 4-5 take TRANSACTION_ABORTABLE.

use std::time::Duration;

use kafka_protocol::messages::txn_offset_commit_response::{
    TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic,
};
use kafka_protocol::messages::{ResponseKind, TxnOffsetCommitRequest, TxnOffsetCommitResponse};

use super::txn_client;
use crate::kafka::broker::{Answer, Broker, Handled};
use crate::kafka::clock::RealTime;
use crate::kafka::errors::{code, name_of};
use crate::kafka::steps::{self, AfterStep, Refused, StepEnd};
use crate::session::Action;
use crate::session::action::OffsetSpec;

/// How long staging may wait behind the transaction's pending sends.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// The first version that adds its group to the transaction itself.
pub const IMPLICIT_ADD_VERSION: i16 = 5;

pub fn handle(worker: &mut dyn Broker, request: &TxnOffsetCommitRequest, version: i16) -> Handled {
    let txn = request.transactional_id.0.to_string();
    let group = request.group_id.0.to_string();
    let topics = request.topics.clone();
    let answer = move |result: Result<(), Refused>, outcome: String| {
        let error = result.err().map_or(code::NONE, |(e, _)| e);
        let response = TxnOffsetCommitResponse::default().with_topics(
            topics
                .iter()
                .map(|t| {
                    TxnOffsetCommitResponseTopic::default()
                        .with_name(t.name.clone())
                        .with_partitions(
                            t.partitions
                                .iter()
                                .map(|p| {
                                    TxnOffsetCommitResponsePartition::default()
                                        .with_partition_index(p.partition_index)
                                        .with_error_code(error)
                                })
                                .collect(),
                        )
                })
                .collect(),
        );
        Answer::now(ResponseKind::TxnOffsetCommit(response), outcome)
    };
    let offsets: Result<Vec<OffsetSpec>, Refused> = request
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(move |p| (t, p)))
        .map(|(t, p)| {
            let topic = t.name.0.to_string();
            // Kafka's group coordinator takes no offset for a partition
            // that does not exist: the client's transaction must abort.
            let count = worker.read(|s| s.partition_count(&topic).ok());
            let partition = u32::try_from(p.partition_index)
                .ok()
                .filter(|p| count.is_some_and(|n| *p < n))
                .ok_or_else(|| {
                    (
                        code::UNKNOWN_TOPIC_OR_PARTITION,
                        format!("no partition {topic}-{}", p.partition_index),
                    )
                })?;
            Ok(OffsetSpec {
                topic,
                partition,
                offset: p.committed_offset,
            })
        })
        .collect();
    let checked = txn_client::check_producer(
        worker,
        &txn,
        request.producer_id.0,
        request.producer_epoch,
        code::INVALID_PRODUCER_EPOCH,
    )
    .and_then(|()| {
        if version >= IMPLICIT_ADD_VERSION {
            txn_client::open_implicitly(worker, &txn)?;
        }
        let open = worker.producers().transactional[&txn].open.as_ref();
        match open {
            Some(o) => {
                txn_client::still_open(worker, &txn, o).map_err(|m| (code::INVALID_TXN_STATE, m))
            }
            None => Err((
                code::INVALID_TXN_STATE,
                format!("{txn:?} has no transaction open (AddOffsetsToTxn)"),
            )),
        }
    })
    .and_then(|()| {
        // The group's own fencing (v3 names the member and generation;
        // before, -1 and no member: not checked), as Kafka's group
        // coordinator checks a transactional commit.
        let has_offsets = worker.read(|st| st.offsets().groups().contains_key(&group));
        worker
            .groups_mut()
            .validate_commit(
                &group,
                (&request.member_id, request.group_instance_id.as_deref()),
                request.generation_id,
                true,
                has_offsets,
                RealTime::now(),
            )
            .map_err(|e| {
                (
                    e,
                    format!(
                        "member {:?} generation {} of group {group:?}",
                        request.member_id.as_str(),
                        request.generation_id
                    ),
                )
            })
    })
    .and(offsets);
    // A group the client added before a restart is not known after it
    // (AddOffsetsToTxn is the server's, not the journal's): the offsets
    // of an open transaction add their group, as Kafka's group
    // coordinator takes a transactional offset commit without asking the
    // transaction coordinator (and transaction version 2 adds it).
    if checked.is_ok()
        && let Some(o) = worker
            .producers_mut()
            .transactional
            .get_mut(&txn)
            .and_then(|p| p.open.as_mut())
    {
        o.groups.insert(group.clone());
    }
    let offsets = match checked {
        Ok(o) => o,
        Err(e) => {
            let outcome = format!("{txn:?} group {group:?}: {}: {}", name_of(e.0), e.1);
            return Handled::Now(answer(Err(e), outcome));
        }
    };
    let listed = offsets
        .iter()
        .map(|o| format!("{}-{} → {}", o.topic, o.partition, o.offset))
        .collect::<Vec<_>>()
        .join(", ");
    let action = Action::SendOffsets {
        txn: txn.clone(),
        group: group.clone(),
        offsets,
    };
    let (step, end) = steps::apply(worker, &action);
    let finish = move |_: &mut dyn Broker, result: Result<(), Refused>| {
        let outcome = match &result {
            Ok(()) => format!("{txn:?} group {group:?}: staged {listed}"),
            Err((e, m)) => format!("{txn:?} group {group:?}: {}: {m}", name_of(*e)),
        };
        answer(result, outcome)
    };
    match end {
        StepEnd::Pending => Handled::Continue(AfterStep::new(
            step,
            RealTime::now() + MAX_WAIT,
            Box::new(finish),
        )),
        StepEnd::Done => Handled::Now(finish(worker, Ok(()))),
        StepEnd::Failed(e) => Handled::Now(finish(worker, Err(e))),
    }
}
