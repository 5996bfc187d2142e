//! OffsetCommit (versions 2-8): a consumer's commit of its offsets.
//!
//! A plain OffsetCommit is one `commit_offsets` action (the consumer's own
//! commit, E8: published at once, durably, outside any transaction), as
//! Kafka's group coordinator writes it; a transactional producer's offsets
//! go through TxnOffsetCommit (`send_offsets`) instead.
//!
//! A member of the group (`subscribe()`) commits with its member id and
//! generation, fenced as Kafka fences it ([`crate::kafka::groups::Groups::validate_commit`]:
//! UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS while the
//! group completes a rebalance); a consumer that `assign()`s commits with
//! generation -1 and no member id, accepted while the group has no
//! members, as Kafka accepts it. Commit metadata is not kept.

use kafka_protocol::messages::offset_commit_response::{
    OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use kafka_protocol::messages::{OffsetCommitRequest, OffsetCommitResponse, ResponseKind};

use crate::kafka::broker::{Answer, Broker};
use crate::kafka::clock::RealTime;
use crate::kafka::errors::{code, name_of};
use crate::kafka::steps::{self, StepEnd};
use crate::session::Action;
use crate::session::action::OffsetSpec;

pub fn handle(worker: &mut dyn Broker, request: &OffsetCommitRequest) -> Answer {
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
    let has_offsets = worker.read(|st| st.offsets().groups().contains_key(&group));
    if let Err(error) = worker.groups_mut().validate_commit(
        &group,
        (&member, request.group_instance_id.as_deref()),
        request.generation_id_or_member_epoch,
        false,
        has_offsets,
        RealTime::now(),
    ) {
        return respond(
            error,
            format!(
                "group {group:?} member {member:?} generation {}: {}",
                request.generation_id_or_member_epoch,
                name_of(error)
            ),
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
    let action = Action::CommitOffsets {
        group: group.clone(),
        offsets,
    };
    match steps::apply(worker, &action) {
        (_, StepEnd::Done) => respond(code::NONE, format!("group {group:?}: committed {listed}")),
        (_, StepEnd::Failed((e, m))) => respond(e, format!("group {group:?}: {}: {m}", name_of(e))),
        // Never: the commit does not wait for anything.
        (step, StepEnd::Pending) => respond(
            code::REQUEST_TIMED_OUT,
            format!("group {group:?}: commit_offsets (step {step}) waits in the cluster"),
        ),
    }
}
