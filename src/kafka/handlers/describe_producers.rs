//! DescribeProducers (version 0): a partition's active producers, as its
//! leader keeps them (E7's producer state of the leader replica; Kafka's
//! `ProducerStateManager.activeProducers`), each with the start of its open
//! transaction there ([`crate::kafka::txn_view`]). Asked of another
//! broker, NOT_LEADER_OR_FOLLOWER, as Kafka answers. Reads only (one
//! record batch read per producer, for its last timestamp).
//!
//! - `producer_id`, `producer_epoch`, `last_sequence`: the leader's producer
//!   state, from the producer's last data batch on the partition.
//! - `last_timestamp`: the newest record timestamp of that batch (the
//!   engine stamps records with its clock: ms since the cluster started).
//! - `coordinator_epoch`: the engine's coordinator never moves, so its epoch
//!   is 0; -1 (Kafka's value before any marker) until a marker of the
//!   producer is in the partition's log.
//! - `current_txn_start_offset`: the first offset of the producer's open
//!   transaction on the partition (its writes waiting for acks included)
//!   while it is `Ongoing` or `Prepare*`, the offset the LSO stops at; -1
//!   when none (where this differs from Kafka: `txn_view`).
//!
//! The book's transactions (`--rules minikafka`) carry no producer id, so
//! their batches are in no producer state. Each open one is listed as a
//! producer of id -1 (Kafka's `NO_PRODUCER_ID`), epoch -1, last sequence
//! -1, with its `current_txn_start_offset`, so that what holds the LSO
//! back is visible; two open book transactions on one partition are two
//! such entries, told apart only by DescribeTransactions' partitions
//! (docs/kafka-mapping.md).

use kafka_protocol::messages::describe_producers_response::{
    PartitionResponse, ProducerState, TopicResponse,
};
use kafka_protocol::messages::{
    DescribeProducersRequest, DescribeProducersResponse, ProducerId, ResponseKind, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::{leader_check, topic_partition};
use crate::kafka::broker::{Answer, Broker, ClusterState, TopicPartition};
use crate::kafka::errors::name_of;
use crate::kafka::txn_view::{TxnView, views};

pub fn handle(worker: &mut dyn Broker, broker: u32, request: &DescribeProducersRequest) -> Answer {
    let producers = worker.producers();
    let mut notes = Vec::new();
    let topics = worker.read(|s| {
        let txns = views(s, producers);
        request
            .topics
            .iter()
            .map(|t| {
                let name = t.name.0.to_string();
                let partitions = t
                    .partition_indexes
                    .iter()
                    .map(|&p| {
                        let r = PartitionResponse::default().with_partition_index(p);
                        let checked = topic_partition(&name, p)
                            .ok_or(crate::kafka::errors::code::UNKNOWN_TOPIC_OR_PARTITION)
                            .and_then(|tp| leader_check(s, &tp, broker).map(|()| tp));
                        match checked {
                            Ok(tp) => {
                                let active = active(s, &tp, &txns);
                                notes.push(format!("{tp}: {} producers", active.len()));
                                r.with_active_producers(active)
                            }
                            Err(e) => {
                                notes.push(format!("{name}-{p}: {}", name_of(e)));
                                r.with_error_code(e)
                            }
                        }
                    })
                    .collect();
                TopicResponse::default()
                    .with_name(TopicName(StrBytes::from_string(name)))
                    .with_partitions(partitions)
            })
            .collect()
    });
    let response = DescribeProducersResponse::default().with_topics(topics);
    Answer::now(ResponseKind::DescribeProducers(response), notes.join(", "))
}

/// The active producers of `tp` on its leader, by producer id, then the
/// book's open transactions there.
pub fn active(s: &ClusterState, tp: &TopicPartition, txns: &[TxnView]) -> Vec<ProducerState> {
    let Ok(set) = s.partition(tp) else {
        return Vec::new();
    };
    let leader = set.leader();
    let summaries = leader.log.batch_summaries();
    let mut out = Vec::new();
    for (&id, entry) in leader.producer_state.producers() {
        let Some(last) = entry.batches.back() else {
            continue;
        };
        let last_timestamp = leader
            .log
            .read_batch_heads(last.base_offset, 1, usize::MAX)
            .ok()
            .and_then(|v| v.into_iter().next())
            .and_then(|b| b.records.iter().map(|r| r.timestamp_ms).max())
            .unwrap_or(-1);
        let marked = summaries
            .iter()
            .any(|b| b.control.is_some() && b.producer_id == id);
        let start = txns
            .iter()
            .filter(|v| v.producer_id == id)
            .find_map(|v| v.starts.get(tp).copied())
            .unwrap_or(-1);
        out.push(
            ProducerState::default()
                .with_producer_id(ProducerId(id))
                .with_producer_epoch(entry.epoch)
                .with_last_sequence(last.last_sequence)
                .with_last_timestamp(last_timestamp)
                .with_coordinator_epoch(if marked { 0 } else { -1 })
                .with_current_txn_start_offset(start),
        );
    }
    for v in txns.iter().filter(|v| v.producer_id < 0) {
        if let Some(&start) = v.starts.get(tp) {
            out.push(
                ProducerState::default()
                    .with_producer_id(ProducerId(-1))
                    .with_producer_epoch(-1)
                    .with_last_sequence(-1)
                    .with_last_timestamp(-1)
                    .with_coordinator_epoch(-1)
                    .with_current_txn_start_offset(start),
            );
        }
    }
    out
}
