//! OffsetDelete (version 0): deletes a group's committed offsets of some
//! partitions, as Kafka's group coordinator does
//! (`GroupCoordinatorService.deleteOffsets`,
//! `OffsetMetadataManager.deleteOffsets`, `ClassicGroup.validateOffsetDelete`
//! and `isSubscribedToTopic`). The group's own errors answer the whole
//! request, with no partitions:
//!
//! - an empty id: INVALID_GROUP_ID;
//! - a broker that is not the coordinator FindCoordinator names:
//!   NOT_COORDINATOR;
//! - a group neither the server (members seen) nor the engine (committed
//!   offsets, recorded `join_group`s) knows: GROUP_ID_NOT_FOUND;
//! - a group that is not `Empty` and whose members are not of the
//!   `consumer` protocol type: NON_EMPTY_GROUP.
//!
//! Else each partition in the request's order: UNKNOWN_TOPIC_OR_PARTITION
//! for one the cluster does not have (Kafka's `KafkaApis` answers it
//! before the coordinator); GROUP_SUBSCRIBED_TO_TOPIC where a member
//! subscribes to the topic (the server's members by their JoinGroup
//! metadata as of the current generation, the engine's by their recorded
//! subscriptions); NONE for the rest, whether an offset was committed or
//! not. Those with a committed offset go in one `delete_offsets` action (a
//! recorded step, durable in `offsets.json` as a commit is); none to
//! delete is no step, and a refusal changes nothing.

use kafka_protocol::messages::offset_delete_response::{
    OffsetDeleteResponsePartition, OffsetDeleteResponseTopic,
};
use kafka_protocol::messages::{OffsetDeleteRequest, OffsetDeleteResponse, ResponseKind};

use super::find_coordinator::coordinator;
use crate::engine::TopicPartition;
use crate::kafka::broker::{Answer, Broker};
use crate::kafka::clock::RealTime;
use crate::kafka::errors::{code, name_of};
use crate::kafka::steps::{self, StepEnd};
use crate::session::Action;
use crate::session::action::PartitionSpec;

pub fn handle(worker: &mut dyn Broker, broker: u32, request: &OffsetDeleteRequest) -> Answer {
    let group = request.group_id.0.to_string();
    let here = coordinator(worker).is_some_and(|c| c.broker == broker);
    let names: Vec<String> = request
        .topics
        .iter()
        .map(|t| t.name.0.to_string())
        .collect();
    let subscribed = match check_group(worker, here, &group, &names) {
        Ok(subscribed) => subscribed,
        Err(error) => return refused(&group, error, None),
    };
    // Each partition's code, and the partitions to delete.
    let mut answers: Vec<(usize, i32, i16)> = Vec::new();
    let mut delete: Vec<TopicPartition> = Vec::new();
    for (t, topic) in request.topics.iter().enumerate() {
        let name = topic.name.0.to_string();
        for p in &topic.partitions {
            let tp = u32::try_from(p.partition_index)
                .ok()
                .map(|i| TopicPartition::new(&name, i));
            let error = match &tp {
                Some(tp) if worker.read(|s| s.partition(tp).is_ok()) => {
                    if subscribed.contains(&name) {
                        code::GROUP_SUBSCRIBED_TO_TOPIC
                    } else {
                        // A partition named twice is deleted once.
                        if !delete.contains(tp) {
                            delete.push(tp.clone());
                        }
                        code::NONE
                    }
                }
                _ => code::UNKNOWN_TOPIC_OR_PARTITION,
            };
            answers.push((t, p.partition_index, error));
        }
    }
    let committed: Vec<TopicPartition> = worker.read(|s| {
        delete
            .iter()
            .filter(|tp| s.offsets().get(&group, tp).is_some())
            .cloned()
            .collect()
    });
    let step = if committed.is_empty() {
        "no committed offset to delete".to_string()
    } else {
        let action = Action::DeleteOffsets {
            group: group.clone(),
            partitions: committed
                .iter()
                .map(|tp| PartitionSpec {
                    topic: tp.topic.clone(),
                    partition: tp.partition,
                })
                .collect(),
        };
        match steps::apply(worker, &action) {
            (step, StepEnd::Done) => format!("deleted (step {step})"),
            (_, StepEnd::Failed((e, m))) => return refused(&group, e, Some(m)),
            // Never: the deletion does not wait for anything.
            (step, StepEnd::Pending) => {
                let m = format!("delete_offsets (step {step}) waits in the cluster");
                return refused(&group, code::REQUEST_TIMED_OUT, Some(m));
            }
        }
    };
    let mut topics: Vec<OffsetDeleteResponseTopic> = request
        .topics
        .iter()
        .map(|t| OffsetDeleteResponseTopic::default().with_name(t.name.clone()))
        .collect();
    let mut notes = Vec::new();
    for (t, partition, error) in answers {
        notes.push(format!(
            "{}-{partition}: {}",
            request.topics[t].name.0.as_str(),
            name_of(error)
        ));
        topics[t].partitions.push(
            OffsetDeleteResponsePartition::default()
                .with_partition_index(partition)
                .with_error_code(error),
        );
    }
    Answer::now(
        ResponseKind::OffsetDelete(OffsetDeleteResponse::default().with_topics(topics)),
        format!("group {group:?}: {}; {step}", notes.join(", ")),
    )
}

/// The group's own checks, in Kafka's order; then which of `topics` a
/// member of the group subscribes to.
fn check_group(
    worker: &mut dyn Broker,
    here: bool,
    group: &str,
    topics: &[String],
) -> Result<Vec<String>, i16> {
    if group.is_empty() {
        return Err(code::INVALID_GROUP_ID);
    }
    if !here {
        return Err(code::NOT_COORDINATOR);
    }
    // The engine's group: its recorded members' subscriptions, or none
    // when only committed offsets make it.
    let engine: Option<Vec<String>> = worker.read(|s| match s.groups().group(group) {
        Some(g) => Some(
            g.members
                .values()
                .flat_map(|m| m.subscriptions.iter().cloned())
                .collect(),
        ),
        None => s.offsets().groups().contains_key(group).then(Vec::new),
    });
    let server = worker
        .groups_mut()
        .validate_offset_delete(group, RealTime::now())?;
    if server.is_none() && engine.is_none() {
        return Err(code::GROUP_ID_NOT_FOUND);
    }
    let engine = engine.unwrap_or_default();
    Ok(topics
        .iter()
        .filter(|t| server.is_some_and(|g| g.is_subscribed_to(t)) || engine.contains(t))
        .cloned()
        .collect())
}

/// The whole request refused with `error` (Kafka answers the group's
/// error alone, with no partitions).
fn refused(group: &str, error: i16, message: Option<String>) -> Answer {
    Answer::now(
        ResponseKind::OffsetDelete(OffsetDeleteResponse::default().with_error_code(error)),
        format!(
            "group {group:?}: {}",
            message.unwrap_or_else(|| name_of(error).to_string())
        ),
    )
}
