//! OffsetFetch (versions 1-7): a group's committed offsets from the
//! engine's offset store (E8), -1 where none is committed (a client's
//! "no committed offset": None in confluent-kafka's and kafka-python's
//! terms). Offsets staged by a transaction are not committed until it
//! commits (E10). With `require_stable` (v7, what a read_committed
//! consumer asks), a partition whose offset is staged in a transaction
//! that has not completed is answered UNSTABLE_OFFSET_COMMIT, which the
//! client retries, as Kafka answers it. Versions 8 and 9 (several groups
//! per request) are not served. Reads only.

use kafka_protocol::messages::offset_fetch_response::{
    OffsetFetchResponsePartition, OffsetFetchResponseTopic,
};
use kafka_protocol::messages::{OffsetFetchRequest, OffsetFetchResponse, ResponseKind, TopicName};
use kafka_protocol::protocol::StrBytes;

use crate::kafka::broker::{Answer, Broker, TopicPartition};
use crate::kafka::errors::code;

pub fn handle(worker: &mut dyn Broker, request: &OffsetFetchRequest, version: i16) -> Answer {
    let group = request.group_id.0.to_string();
    let stable = version >= 7 && request.require_stable;
    let mut notes = Vec::new();
    let topics = worker.read(|s| {
        let committed = s
            .offsets()
            .groups()
            .get(&group)
            .cloned()
            .unwrap_or_default();
        // Offsets staged by transactions that have not completed.
        let unstable: Vec<TopicPartition> = s
            .transactions()
            .current()
            .filter(|d| d.state.is_unstable())
            .filter_map(|d| d.staged_offsets.get(&group))
            .flat_map(|o| o.keys().cloned())
            .collect();
        let asked: Vec<(String, Vec<i32>)> = match &request.topics {
            Some(topics) => topics
                .iter()
                .map(|t| (t.name.0.to_string(), t.partition_indexes.clone()))
                .collect(),
            // All the group's committed offsets.
            None => {
                let mut all: Vec<(String, Vec<i32>)> = Vec::new();
                for tp in committed.keys() {
                    match all.iter_mut().find(|(t, _)| *t == tp.topic) {
                        Some((_, ps)) => ps.push(tp.partition as i32),
                        None => all.push((tp.topic.clone(), vec![tp.partition as i32])),
                    }
                }
                all
            }
        };
        asked
            .into_iter()
            .map(|(topic, partitions)| {
                let partitions = partitions
                    .into_iter()
                    .map(|p| {
                        let tp = u32::try_from(p)
                            .ok()
                            .map(|p| TopicPartition::new(&topic, p));
                        let offset = tp.as_ref().and_then(|tp| committed.get(tp)).copied();
                        let mut r = OffsetFetchResponsePartition::default()
                            .with_partition_index(p)
                            .with_committed_offset(offset.unwrap_or(-1))
                            .with_metadata(Some(StrBytes::default()));
                        if version >= 5 {
                            r = r.with_committed_leader_epoch(-1);
                        }
                        if stable && tp.as_ref().is_some_and(|tp| unstable.contains(tp)) {
                            notes.push(format!("{topic}-{p}: UNSTABLE_OFFSET_COMMIT"));
                            r = r
                                .with_error_code(code::UNSTABLE_OFFSET_COMMIT)
                                .with_committed_offset(-1);
                        } else {
                            notes.push(match offset {
                                Some(o) => format!("{topic}-{p} = {o}"),
                                None => format!("{topic}-{p}: none"),
                            });
                        }
                        r
                    })
                    .collect();
                OffsetFetchResponseTopic::default()
                    .with_name(TopicName(StrBytes::from_string(topic)))
                    .with_partitions(partitions)
            })
            .collect::<Vec<_>>()
    });
    let response = OffsetFetchResponse::default().with_topics(topics);
    let stable_note = if stable { " (require_stable)" } else { "" };
    Answer::now(
        ResponseKind::OffsetFetch(response),
        format!("group {group:?}{stable_note}: {}", notes.join(", ")),
    )
}
