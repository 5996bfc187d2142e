//! DeleteRecords (versions 0-2): each partition's request is one
//! `delete_records` action (E16): the leader's log start moves up to the
//! offset (-1: the high watermark) by deleting the closed segments wholly
//! below it, as retention does, and followers follow at their next fetch.
//! The answer's low watermark is the log start after: segment-aligned, as
//! the book's log start is, so it may be below the offset asked for
//! (docs/kafka-differences.md, "DeleteRecords"). An offset past the HW is
//! OFFSET_OUT_OF_RANGE, an unknown partition UNKNOWN_TOPIC_OR_PARTITION.

use kafka_protocol::messages::delete_records_response::{
    DeleteRecordsPartitionResult, DeleteRecordsTopicResult,
};
use kafka_protocol::messages::{DeleteRecordsRequest, DeleteRecordsResponse, ResponseKind};

use crate::engine::TopicPartition;
use crate::kafka::broker::{Answer, Broker};
use crate::kafka::errors::{code, name_of};
use crate::kafka::steps::{self, StepEnd};
use crate::session::Action;

pub fn handle(worker: &mut dyn Broker, request: &DeleteRecordsRequest) -> Answer {
    let mut topics = Vec::new();
    let mut told = Vec::new();
    for t in &request.topics {
        let topic = t.name.0.to_string();
        let mut partitions = Vec::new();
        for p in &t.partitions {
            let (error, low) = match u32::try_from(p.partition_index) {
                Err(_) => (code::UNKNOWN_TOPIC_OR_PARTITION, -1),
                Ok(partition) => {
                    let action = Action::DeleteRecords {
                        topic: topic.clone(),
                        partition,
                        offset: p.offset,
                    };
                    match steps::apply(worker, &action) {
                        (_, StepEnd::Done) => {
                            let tp = TopicPartition::new(&topic, partition);
                            (code::NONE, worker.read(|s| log_start(s, &tp)))
                        }
                        (_, StepEnd::Failed((e, _))) => (e, -1),
                        // Never: the deletion does not wait.
                        (_, StepEnd::Pending) => (code::REQUEST_TIMED_OUT, -1),
                    }
                }
            };
            told.push(format!(
                "{topic}-{} to {}: {}",
                p.partition_index,
                p.offset,
                if error == code::NONE {
                    format!("log start {low}")
                } else {
                    name_of(error).to_string()
                }
            ));
            partitions.push(
                DeleteRecordsPartitionResult::default()
                    .with_partition_index(p.partition_index)
                    .with_low_watermark(low)
                    .with_error_code(error),
            );
        }
        topics.push(
            DeleteRecordsTopicResult::default()
                .with_name(t.name.clone())
                .with_partitions(partitions),
        );
    }
    Answer::now(
        ResponseKind::DeleteRecords(DeleteRecordsResponse::default().with_topics(topics)),
        told.join(", "),
    )
}

fn log_start(state: &crate::engine::core::cluster::ClusterState, tp: &TopicPartition) -> i64 {
    state
        .partition(tp)
        .map_or(-1, |set| set.leader().log.log_start_offset())
}
