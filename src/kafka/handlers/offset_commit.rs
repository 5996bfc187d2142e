//! OffsetCommit (versions 2-8): a consumer's commit of its offsets.
//!
//! SPEC §4's vocabulary publishes consumer offsets only through a
//! transaction's commit (E10: `send_offsets` stages, `commit` publishes to
//! the offset store, E8). So a plain OffsetCommit is a transaction of its
//! own, with no partitions: `begin`, `send_offsets` and `commit` of the
//! transactional id `offset-commit:GROUP`. The offset store ends as
//! Kafka's would; the journal shows the commit as that transaction's four
//! frames (ongoing, staged, prepare_commit, complete_commit), which is
//! what the dashboard's transactions pane lists too
//! (docs/kafka-protocol.md).
//!
//! A member of the group (`subscribe()`) commits with its member id and
//! generation, checked (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION); a consumer
//! that `assign()`s commits without, which is refused while the group has
//! a member, as Kafka refuses it. Commit metadata is not kept.

use kafka_protocol::messages::offset_commit_response::{
    OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use kafka_protocol::messages::{OffsetCommitRequest, OffsetCommitResponse, ResponseKind};

use crate::kafka::clock::RealTime;
use crate::kafka::errors::{code, name_of};
use crate::kafka::groups::Refusal;
use crate::kafka::steps::{self, Refused, StepEnd};
use crate::kafka::worker::{Answer, Worker};
use crate::session::Action;
use crate::session::action::OffsetSpec;

/// The transactional id a plain commit of `group` runs as.
pub fn commit_txn(group: &str) -> String {
    format!("offset-commit:{group}")
}

pub fn handle(worker: &mut Worker, request: &OffsetCommitRequest) -> Answer {
    let group = request.group_id.0.to_string();
    let member = request.member_id.to_string();
    let respond = |error: i16, outcome: String| {
        let topics = request
            .topics
            .iter()
            .map(|t| {
                OffsetCommitResponseTopic::default()
                    .with_name(t.name.clone())
                    .with_partitions(
                        t.partitions
                            .iter()
                            .map(|p| {
                                OffsetCommitResponsePartition::default()
                                    .with_partition_index(p.partition_index)
                                    .with_error_code(error)
                            })
                            .collect(),
                    )
            })
            .collect();
        Answer::now(
            ResponseKind::OffsetCommit(OffsetCommitResponse::default().with_topics(topics)),
            outcome,
        )
    };
    let member_check = if member.is_empty() {
        let has_member = worker.groups.get(&group, RealTime::now()).member.is_some();
        if has_member {
            Err(Refusal::UnknownMember)
        } else {
            Ok(())
        }
    } else {
        worker
            .groups
            .check(&group, &member, Some(request.generation_id_or_member_epoch))
            .map(drop)
    };
    if let Err(r) = member_check {
        let error = match r {
            Refusal::UnknownMember => code::UNKNOWN_MEMBER_ID,
            Refusal::IllegalGeneration => code::ILLEGAL_GENERATION,
        };
        return respond(
            error,
            format!("group {group:?} member {member:?}: {}", name_of(error)),
        );
    }
    let mut offsets = Vec::new();
    for t in &request.topics {
        for p in &t.partitions {
            let Ok(partition) = u32::try_from(p.partition_index) else {
                return respond(
                    code::UNKNOWN_TOPIC_OR_PARTITION,
                    format!("group {group:?}: partition {}", p.partition_index),
                );
            };
            offsets.push(OffsetSpec {
                topic: t.name.0.to_string(),
                partition,
                offset: p.committed_offset,
            });
        }
    }
    let listed = offsets
        .iter()
        .map(|o| format!("{}-{} = {}", o.topic, o.partition, o.offset))
        .collect::<Vec<_>>()
        .join(", ");
    let txn = commit_txn(&group);
    match commit(worker, &txn, &group, offsets) {
        Ok(()) => respond(
            code::NONE,
            format!("group {group:?}: committed {listed} (as transaction {txn:?})"),
        ),
        Err((e, m)) => respond(e, format!("group {group:?}: {}: {m}", name_of(e))),
    }
}

/// `begin`, `send_offsets`, `commit` of `txn`. None of them waits (no
/// partitions, so no marker waits for acks); one that did is reported.
fn commit(
    worker: &mut Worker,
    txn: &str,
    group: &str,
    offsets: Vec<OffsetSpec>,
) -> Result<(), Refused> {
    let actions = [
        Action::Begin { txn: txn.into() },
        Action::SendOffsets {
            txn: txn.into(),
            group: group.into(),
            offsets,
        },
        Action::Commit {
            txn: txn.into(),
            crash_after: None,
        },
    ];
    for action in &actions {
        match steps::apply(worker, action) {
            (_, StepEnd::Done) => {}
            (_, StepEnd::Failed(e)) => return Err(e),
            (step, StepEnd::Pending) => {
                return Err((
                    code::REQUEST_TIMED_OUT,
                    format!(
                        "{} of {txn:?} (step {step}) waits in the cluster; the commit completes when it does",
                        action.name()
                    ),
                ));
            }
        }
    }
    Ok(())
}
