//! One handler per Kafka API (docs/kafka-protocol.md). Each runs on the
//! driver thread over a [`Broker`], reads the cluster without changing it,
//! and changes it only through actions applied by the driver.
//!
//! [`SUPPORTED`] is what ApiVersions advertises: exactly the APIs and
//! versions handled here. Versions are capped below the newest where the
//! newer ones need what this server does not keep (topic ids from Fetch
//! v13 and Produce v13, batched FindCoordinator).

pub mod add_to_txn;
#[cfg(test)]
mod admin_tests;
pub mod alter_configs;
#[cfg(test)]
mod alter_configs_tests;
pub mod api_versions;
pub mod create_partitions;
#[cfg(test)]
mod create_partitions_tests;
pub mod create_topics;
pub mod delete_groups;
#[cfg(test)]
mod delete_groups_tests;
pub mod delete_records;
pub mod delete_topics;
pub mod describe_cluster;
pub mod describe_configs;
#[cfg(test)]
mod describe_configs_tests;
pub mod describe_log_dirs;
pub mod describe_producers;
pub mod end_txn;
pub mod fetch;
pub mod find_coordinator;
pub mod groups;
pub mod incremental_alter_configs;
pub mod init_producer_id;
pub mod list_groups;
pub mod list_offsets;
pub mod metadata;
pub mod offset_commit;
pub mod offset_delete;
#[cfg(test)]
mod offset_delete_tests;
pub mod offset_fetch;
pub mod offset_for_leader_epoch;
#[cfg(test)]
mod offset_for_leader_epoch_tests;
pub mod produce;
pub mod producer_produce;
pub mod transactions;
pub mod txn_client;
pub mod txn_offset_commit;
#[cfg(test)]
mod txn_tests;
#[cfg(test)]
mod txn_v2_tests;
pub mod unsupported;

use kafka_protocol::messages::{ApiKey, RequestKind};

use crate::kafka::broker::{
    Answer, Broker, ClusterState, FetchWait, Handled, Request, TimestampType, TopicPartition,
};
use crate::kafka::errors::code;

/// The APIs this server answers, with the versions it handles.
pub const SUPPORTED: &[(ApiKey, i16, i16)] = &[
    (ApiKey::Produce, 3, 12),
    (ApiKey::Fetch, 4, 12),
    (ApiKey::ListOffsets, 1, 10),
    (ApiKey::Metadata, 1, 12),
    (ApiKey::ApiVersions, 0, 4),
    (ApiKey::CreateTopics, 2, 7),
    (ApiKey::DeleteTopics, 1, 6),
    (ApiKey::OffsetFetch, 1, 7),
    (ApiKey::FindCoordinator, 0, 4),
    (ApiKey::InitProducerId, 0, 5),
    (ApiKey::AddPartitionsToTxn, 0, 5),
    (ApiKey::AddOffsetsToTxn, 0, 4),
    (ApiKey::EndTxn, 0, 5),
    (ApiKey::TxnOffsetCommit, 0, 5),
    (ApiKey::OffsetCommit, 2, 8),
    (ApiKey::JoinGroup, 0, 9),
    (ApiKey::SyncGroup, 0, 5),
    (ApiKey::Heartbeat, 0, 4),
    (ApiKey::LeaveGroup, 0, 5),
    (ApiKey::DescribeGroups, 0, 6),
    (ApiKey::ConsumerGroupHeartbeat, 0, 1),
    (ApiKey::DescribeProducers, 0, 0),
    (ApiKey::DescribeTransactions, 0, 0),
    (ApiKey::ListTransactions, 0, 1),
    (ApiKey::ListGroups, 0, 5),
    (ApiKey::DescribeLogDirs, 1, 4),
    (ApiKey::DeleteRecords, 0, 2),
    (ApiKey::DescribeConfigs, 1, 4),
    (ApiKey::DeleteGroups, 0, 2),
    (ApiKey::AlterConfigs, 0, 2),
    (ApiKey::IncrementalAlterConfigs, 0, 1),
    (ApiKey::CreatePartitions, 0, 3),
    (ApiKey::OffsetDelete, 0, 0),
    (ApiKey::OffsetForLeaderEpoch, 2, 4),
    (ApiKey::DescribeCluster, 0, 2),
];

/// The versions of `api` this server handles, if it handles it.
pub fn supported(api: ApiKey) -> Option<(i16, i16)> {
    SUPPORTED
        .iter()
        .find(|(k, _, _)| *k == api)
        .map(|&(_, min, max)| (min, max))
}

/// Handles one decoded request of a supported API and version.
pub fn handle(worker: &mut dyn Broker, request: Request) -> Handled {
    let Request {
        broker,
        client_id,
        version,
        body,
        connection,
    } = request;
    match body {
        RequestKind::Metadata(r) => Handled::Now(metadata::handle(worker, &r, version)),
        RequestKind::CreateTopics(r) => Handled::Now(create_topics::handle(worker, &r, version)),
        RequestKind::CreatePartitions(r) => Handled::Now(create_partitions::handle(worker, &r)),
        RequestKind::DeleteTopics(r) => Handled::Now(delete_topics::handle(worker, &r, version)),
        RequestKind::Produce(r) => produce::handle(worker, broker, r, version),
        RequestKind::Fetch(r) => {
            let answer = fetch::handle(worker, broker, &r, version);
            if answer.empty_fetch && r.max_wait_ms > 0 {
                Handled::Fetch(Box::new(FetchWait {
                    broker,
                    version,
                    request: r,
                }))
            } else {
                Handled::Now(answer)
            }
        }
        RequestKind::ListOffsets(r) => {
            Handled::Now(list_offsets::handle(worker, broker, &r, version))
        }
        RequestKind::ApiVersions(r) => Handled::Now(api_versions::handle(
            &r,
            version,
            worker.config().rules.transaction_version,
        )),
        RequestKind::FindCoordinator(r) => {
            Handled::Now(find_coordinator::handle(worker, &r, version))
        }
        RequestKind::InitProducerId(r) => init_producer_id::handle(worker, &client_id, &r, version),
        RequestKind::AddPartitionsToTxn(r) if version >= 4 => {
            Handled::Now(add_to_txn::verify_batch(worker, &r))
        }
        RequestKind::AddPartitionsToTxn(r) => add_to_txn::add_partitions(worker, &r),
        RequestKind::AddOffsetsToTxn(r) => add_to_txn::add_offsets(worker, &r),
        RequestKind::EndTxn(r) => end_txn::handle(worker, &r, version),
        RequestKind::TxnOffsetCommit(r) => txn_offset_commit::handle(worker, &r, version),
        RequestKind::OffsetFetch(r) => Handled::Now(offset_fetch::handle(worker, &r, version)),
        RequestKind::OffsetCommit(r) => Handled::Now(offset_commit::handle(worker, &r)),
        RequestKind::JoinGroup(r) => groups::join(worker, &client_id, connection, &r, version),
        RequestKind::SyncGroup(r) => groups::sync(worker, &r, version),
        RequestKind::Heartbeat(r) => Handled::Now(groups::heartbeat(worker, &r)),
        RequestKind::LeaveGroup(r) => Handled::Now(groups::leave(worker, &r, version)),
        RequestKind::ConsumerGroupHeartbeat(r) => Handled::Now(groups::consumer_heartbeat(&r)),
        RequestKind::DescribeGroups(r) => {
            Handled::Now(groups::describe(worker, broker, &r, version))
        }
        RequestKind::DeleteRecords(r) => Handled::Now(delete_records::handle(worker, &r)),
        RequestKind::DeleteGroups(r) => Handled::Now(delete_groups::handle(worker, broker, &r)),
        RequestKind::AlterConfigs(r) => Handled::Now(alter_configs::handle(worker, &r)),
        RequestKind::IncrementalAlterConfigs(r) => {
            Handled::Now(incremental_alter_configs::handle(worker, &r))
        }
        RequestKind::OffsetDelete(r) => Handled::Now(offset_delete::handle(worker, broker, &r)),
        RequestKind::OffsetForLeaderEpoch(r) => {
            Handled::Now(offset_for_leader_epoch::handle(worker, broker, &r))
        }
        RequestKind::DescribeCluster(r) => {
            Handled::Now(describe_cluster::handle(worker, &r, version))
        }
        RequestKind::DescribeLogDirs(r) => {
            Handled::Now(describe_log_dirs::handle(worker, broker, &r))
        }
        RequestKind::DescribeConfigs(r) => {
            Handled::Now(describe_configs::handle(worker, broker, &r, version))
        }
        RequestKind::DescribeProducers(r) => {
            Handled::Now(describe_producers::handle(worker, broker, &r))
        }
        RequestKind::DescribeTransactions(r) => {
            Handled::Now(transactions::describe(worker, broker, &r))
        }
        RequestKind::ListGroups(r) => {
            Handled::Now(list_groups::handle(worker, broker, &r, version))
        }
        RequestKind::ListTransactions(r) => {
            Handled::Now(transactions::list(worker, broker, &r, version))
        }
        other => Handled::Now(Answer {
            body: None,
            outcome: format!("no handler for {other:?}"),
            empty_fetch: false,
            close: false,
        }),
    }
}

/// Why a partition cannot be served by `broker` now, as a Kafka code: it
/// does not exist, its leader is another broker, or its leader is stopped.
pub fn leader_check(s: &ClusterState, tp: &TopicPartition, broker: u32) -> Result<(), i16> {
    let set = s
        .partition(tp)
        .map_err(|_| code::UNKNOWN_TOPIC_OR_PARTITION)?;
    if set.leader_id() != broker || set.leader().stopped {
        return Err(code::NOT_LEADER_OR_FOLLOWER);
    }
    Ok(())
}

/// A topic-partition from a request's topic name and partition index (a
/// negative index names no partition).
pub fn topic_partition(topic: &str, partition: i32) -> Option<TopicPartition> {
    u32::try_from(partition)
        .ok()
        .map(|p| TopicPartition::new(topic, p))
}

/// A produce response's `log_append_time_ms` for a batch `topic` just
/// took: Kafka's -1 for a CreateTime topic; for a LogAppendTime one the
/// time the leader stamped it with (the engine clock now, as a Unix time,
/// see [`Broker::append_time_origin`]).
pub fn log_append_time(worker: &mut dyn Broker, topic: &str) -> i64 {
    match worker.timestamp_type(topic) {
        Some(TimestampType::LogAppendTime) => {
            let now = i64::try_from(worker.clock_ms()).unwrap_or(i64::MAX);
            worker.append_time_origin().saturating_add(now)
        }
        _ => -1,
    }
}

/// [`log_append_time`] for an idempotent retry answered as a duplicate:
/// Kafka gives the original batch's append time, here the stamp of the
/// record at `offset` in the leader's log (as a Unix time); -1 for a
/// CreateTime topic.
pub fn log_append_time_of(worker: &mut dyn Broker, tp: &TopicPartition, offset: i64) -> i64 {
    if worker.timestamp_type(&tp.topic) != Some(TimestampType::LogAppendTime) {
        return -1;
    }
    let stamp = worker.read(|s| {
        let log = &s.partition(tp).ok()?.leader().log;
        let batches = log.read_batches(offset, 1).ok()?;
        let batch = batches.first()?;
        let record = batch
            .records
            .iter()
            .find(|r| batch.base_offset + i64::from(r.offset_delta) == offset)?;
        Some(record.timestamp_ms)
    });
    stamp.map_or(-1, |t| worker.append_time_origin().saturating_add(t))
}
