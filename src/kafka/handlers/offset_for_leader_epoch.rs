//! OffsetForLeaderEpoch (versions 2-4): where each asked leader epoch ends
//! in the partition leader's log ([`crate::engine::repl_support::epoch_end`],
//! Kafka's leader-epoch cache read from the batches' epochs). A consumer
//! asks it after a leader change, with the epoch of the last record it
//! read, to learn whether the new leader's log still holds that record
//! (KIP-320): an end offset below its position is a truncation, which it
//! reports or resets past instead of fetching on into records it never
//! saw. Reads only.
//!
//! Errors as Kafka 4.4's `Partition.lastOffsetForLeaderEpoch` gives them,
//! in its order: a `current_leader_epoch` (when not -1) below the
//! partition's is FENCED_LEADER_EPOCH, above it UNKNOWN_LEADER_EPOCH; then a
//! broker that does not lead the partition (or leads it stopped) is
//! NOT_LEADER_OR_FOLLOWER; a partition that does not exist
//! UNKNOWN_TOPIC_OR_PARTITION. An error answers epoch -1 and offset -1.
//! Every request is answered from the leader, as a consumer's is
//! (`replica_id` -1); the engine's followers replicate in process and never
//! ask.

use kafka_protocol::messages::offset_for_leader_epoch_response::{
    EpochEndOffset, OffsetForLeaderTopicResult,
};
use kafka_protocol::messages::{
    OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse, ResponseKind,
};

use super::{leader_check, topic_partition};
use crate::engine::repl_support::epoch_end::EpochEnd;
use crate::kafka::broker::{Answer, Broker, ClusterState};
use crate::kafka::errors::{code, name_of};

pub fn handle(
    worker: &mut dyn Broker,
    broker: u32,
    request: &OffsetForLeaderEpochRequest,
) -> Answer {
    let mut told = Vec::new();
    let topics = worker.read(|s| {
        request
            .topics
            .iter()
            .map(|t| {
                let name = t.topic.0.as_str();
                let partitions = t
                    .partitions
                    .iter()
                    .map(|p| {
                        let answer = epoch_end(
                            s,
                            broker,
                            name,
                            p.partition,
                            p.current_leader_epoch,
                            p.leader_epoch,
                        );
                        told.push(match answer {
                            Ok(e) => format!(
                                "{name}-{} epoch {}: epoch {} ends at {}",
                                p.partition, p.leader_epoch, e.leader_epoch, e.end_offset
                            ),
                            Err(c) => format!("{name}-{}: {}", p.partition, name_of(c)),
                        });
                        let (error, end) = match answer {
                            Ok(e) => (code::NONE, e),
                            Err(c) => (c, EpochEnd::UNDEFINED),
                        };
                        EpochEndOffset::default()
                            .with_partition(p.partition)
                            .with_error_code(error)
                            .with_leader_epoch(end.leader_epoch)
                            .with_end_offset(end.end_offset)
                    })
                    .collect();
                OffsetForLeaderTopicResult::default()
                    .with_topic(t.topic.clone())
                    .with_partitions(partitions)
            })
            .collect()
    });
    Answer::now(
        ResponseKind::OffsetForLeaderEpoch(
            OffsetForLeaderEpochResponse::default().with_topics(topics),
        ),
        told.join(", "),
    )
}

/// One partition's answer, or the Kafka code refusing it.
fn epoch_end(
    s: &ClusterState,
    broker: u32,
    topic: &str,
    partition: i32,
    current_leader_epoch: i32,
    leader_epoch: i32,
) -> Result<EpochEnd, i16> {
    let tp = topic_partition(topic, partition).ok_or(code::UNKNOWN_TOPIC_OR_PARTITION)?;
    let set = s
        .partition(&tp)
        .map_err(|_| code::UNKNOWN_TOPIC_OR_PARTITION)?;
    let current = i64::from(set.leader_epoch());
    match i64::from(current_leader_epoch) {
        -1 => {}
        asked if asked < current => return Err(code::FENCED_LEADER_EPOCH),
        asked if asked > current => return Err(code::UNKNOWN_LEADER_EPOCH),
        _ => {}
    }
    leader_check(s, &tp, broker)?;
    Ok(set.end_offset_for_epoch(leader_epoch))
}
