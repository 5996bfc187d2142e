//! DescribeProducers (version 0): a partition's active producers, as the
//! replica on the broker asked keeps them, leader or follower (E7's
//! producer state of that replica; Kafka's
//! `ProducerStateManager.activeProducers`, which every replica keeps, so
//! `kafka-transactions.sh find-hanging --broker-id N` asks broker N of
//! each partition it holds), each with the start of its open transaction
//! there ([`crate::kafka::txn_view`]). Asked of a broker holding no
//! replica of the partition (or a stopped one), NOT_LEADER_OR_FOLLOWER, as
//! Kafka answers. Reads only (one record batch read per producer, for its
//! last timestamp).
//!
//! - `producer_id`, `producer_epoch`, `last_sequence`: that replica's
//!   producer state, from the producer's last data batch it holds (a
//!   follower knows a producer once it has fetched one of its batches).
//! - `last_timestamp`: the newest record timestamp of that batch (the
//!   engine stamps records with its clock: ms since the cluster started).
//! - `coordinator_epoch`: the engine's coordinator never moves, so its epoch
//!   is 0; -1 (Kafka's value before any marker) until a marker of the
//!   producer is in the partition's log.
//! - `current_txn_start_offset`: the first offset of the producer's open
//!   transaction on the partition (its writes waiting for acks included)
//!   while it is `Ongoing` or `Prepare*`, the offset the LSO stops at; -1
//!   when none (where this differs from Kafka: `txn_view`). A follower
//!   lists it once it holds that offset (Kafka's follower learns of the
//!   transaction from the batch it fetches).
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

use super::topic_partition;
use crate::kafka::broker::{Answer, Broker, ClusterState, TopicPartition};
use crate::kafka::errors::{code, name_of};
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
                            .ok_or(code::UNKNOWN_TOPIC_OR_PARTITION)
                            .and_then(|tp| active(s, &tp, broker, &txns).map(|a| (tp, a)));
                        match checked {
                            Ok((tp, active)) => {
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

/// The active producers of `tp` on `broker`'s replica, by producer id,
/// then the book's open transactions there; UNKNOWN_TOPIC_OR_PARTITION
/// for no such partition, NOT_LEADER_OR_FOLLOWER where `broker` holds no
/// running replica of it.
fn active(
    s: &ClusterState,
    tp: &TopicPartition,
    broker: u32,
    txns: &[TxnView],
) -> Result<Vec<ProducerState>, i16> {
    let set = s
        .partition(tp)
        .map_err(|_| code::UNKNOWN_TOPIC_OR_PARTITION)?;
    let replica = set
        .replica(broker)
        .ok()
        .filter(|r| !r.stopped)
        .ok_or(code::NOT_LEADER_OR_FOLLOWER)?;
    // An open transaction's start is the engine's (one for every
    // replica); a replica that has not fetched that offset yet knows
    // nothing of it.
    let leo = replica.leo();
    let held = |start: &i64| *start < leo;
    let summaries = replica.log.batch_summaries();
    let mut out = Vec::new();
    for (&id, entry) in replica.producer_state.producers() {
        let Some(last) = entry.batches.back() else {
            continue;
        };
        let last_timestamp = replica
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
            .filter(held)
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
        if let Some(&start) = v.starts.get(tp).filter(|s| held(s)) {
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
    Ok(out)
}
