//! DescribeLogDirs (versions 1-4): the broker's one log directory (its
//! `broker-N` directory of the data directory) and the replicas it holds,
//! each with its size and offset lag (docs/kafka-protocol.md
//! *DescribeLogDirs*). Reads only.
//!
//! - `partition_size`: the bytes of the replica's log segments.
//! - `offset_lag`: Kafka's `getLogEndOffsetLag` for a current (not future)
//!   replica, `max(high watermark - log end offset, 0)`. The engine keeps
//!   one HW per partition, the leader's, so it is that HW here: how far
//!   this replica's LEO is below what consumers may read (0 for the leader
//!   and for every follower that has the HW). In Apache Kafka the HW is
//!   the broker's own copy, which a follower caps at its LEO, so Kafka's
//!   answer is 0 for every current replica. Neither is the leader's LEO
//!   minus this replica's (the snapshot's `lag`).
//! - `is_future_key`: false; the engine never moves a replica between
//!   directories (no future replicas, KIP-113).
//! - `total_bytes`, `usable_bytes` (v4): -1, unknown: the server does not
//!   ask the file system.
//!
//! A stopped broker's listener is closed, so it is never asked; should a
//! request reach it, its directory answers KAFKA_STORAGE_ERROR, as an
//! offline log directory does.

use kafka_protocol::messages::describe_log_dirs_response::{
    DescribeLogDirsPartition, DescribeLogDirsResult, DescribeLogDirsTopic,
};
use kafka_protocol::messages::{
    DescribeLogDirsRequest, DescribeLogDirsResponse, ResponseKind, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use crate::kafka::broker::{Answer, Broker, ClusterState, TopicPartition};
use crate::kafka::errors::code;

/// The replica of `tp` on `broker`: (size in bytes, offset lag), if the
/// broker holds one.
pub fn replica_dir(s: &ClusterState, tp: &TopicPartition, broker: u32) -> Option<(i64, i64)> {
    let set = s.partition(tp).ok()?;
    let r = set.replica(broker).ok()?;
    let size = i64::try_from(r.log.size_bytes()).unwrap_or(i64::MAX);
    let lag = (set.high_watermark() - r.leo()).max(0);
    Some((size, lag))
}

pub fn handle(worker: &mut dyn Broker, broker: u32, request: &DescribeLogDirsRequest) -> Answer {
    let mut replicas = 0;
    let result = worker.read(|s| {
        let dir = s.config().data_dir.join(format!("broker-{broker}"));
        let dir = StrBytes::from_string(dir.display().to_string());
        let result = DescribeLogDirsResult::default()
            .with_log_dir(dir)
            .with_total_bytes(-1)
            .with_usable_bytes(-1);
        if s.stopped_brokers().contains(&broker) {
            return result.with_error_code(code::KAFKA_STORAGE_ERROR);
        }
        // The partitions asked for (all when null), in (topic, partition)
        // order.
        let asked: Vec<TopicPartition> = match &request.topics {
            None => s.partitions().keys().cloned().collect(),
            Some(topics) => {
                let mut v: Vec<TopicPartition> = topics
                    .iter()
                    .flat_map(|t| {
                        t.partitions
                            .iter()
                            .filter_map(|&p| super::topic_partition(t.topic.0.as_str(), p))
                    })
                    .collect();
                v.sort();
                v.dedup();
                v
            }
        };
        let mut topics: Vec<DescribeLogDirsTopic> = Vec::new();
        for tp in asked {
            let Some((size, lag)) = replica_dir(s, &tp, broker) else {
                continue;
            };
            replicas += 1;
            let p = DescribeLogDirsPartition::default()
                .with_partition_index(i32::try_from(tp.partition).unwrap_or(i32::MAX))
                .with_partition_size(size)
                .with_offset_lag(lag)
                .with_is_future_key(false);
            match topics.last_mut() {
                Some(t) if t.name.0.as_str() == tp.topic => t.partitions.push(p),
                _ => topics.push(
                    DescribeLogDirsTopic::default()
                        .with_name(TopicName(StrBytes::from_string(tp.topic.clone())))
                        .with_partitions(vec![p]),
                ),
            }
        }
        result.with_topics(topics)
    });
    let outcome = if result.error_code == 0 {
        format!("{}: {replicas} replicas", result.log_dir.as_str())
    } else {
        format!("{}: KAFKA_STORAGE_ERROR (stopped)", result.log_dir.as_str())
    };
    let response = DescribeLogDirsResponse::default().with_results(vec![result]);
    Answer::now(ResponseKind::DescribeLogDirs(response), outcome)
}
