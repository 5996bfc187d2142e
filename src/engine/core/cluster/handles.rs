//! The handles `BrokerCluster` hands out for one part of the cluster:
//! a replica's log (`leader_log`, `replica_log`), a partition's replica set
//! (`replica_set`) and the committed offsets (`offsets`), named as in the
//! book's examples. Each holds a clone of the cluster and no state of its
//! own, and goes through the cluster's lock: after a crash it reads the
//! reopened state.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::BrokerCluster;
use crate::engine::config::BrokerId;
use crate::engine::consumer::offsets::GroupOffsets;
use crate::engine::core::batch::RecordBatch;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::core::record::ConsumerRecord;
use crate::engine::error::Result;
use crate::engine::log::{BatchSummary, PartitionLog};
use crate::engine::repl_support::readers::{PendingAppendView, ReplicaStatus};
use crate::engine::replication::replica_set::FetchOutcome;
use crate::engine::replication::{IsolationLevel, PartitionReplicaSet};

/// A replica log of one partition on one broker (`leader_log`, `replica_log`).
#[derive(Debug, Clone)]
pub struct LogHandle {
    pub(super) cluster: BrokerCluster,
    pub(super) tp: TopicPartition,
    pub(super) broker: BrokerId,
}

impl LogHandle {
    fn with_log<R>(&self, f: impl FnOnce(&PartitionLog) -> Result<R>) -> Result<R> {
        let state = self.cluster.lock();
        f(&state.partition(&self.tp)?.replica(self.broker)?.log)
    }

    /// The broker holding this log.
    pub fn broker(&self) -> BrokerId {
        self.broker
    }

    /// Every batch, data and control.
    pub fn all_batches(&self) -> Result<Vec<RecordBatch>> {
        self.with_log(PartitionLog::all_batches)
    }

    /// Up to `max_batches` batches from the one holding `from_offset`.
    pub fn read_batches(&self, from_offset: i64, max_batches: usize) -> Result<Vec<RecordBatch>> {
        self.with_log(|log| log.read_batches(from_offset, max_batches))
    }

    /// Records up to the log end (not limited by the HW).
    pub fn fetch(&self, offset: i64, max_records: usize) -> Result<Vec<ConsumerRecord>> {
        self.with_log(|log| log.fetch(offset, max_records, log.leo()))
    }

    /// The batch summaries, without records.
    pub fn batch_summaries(&self) -> Result<Vec<BatchSummary>> {
        self.with_log(|log| Ok(log.batch_summaries().iter().cloned().collect()))
    }

    /// The log end offset.
    pub fn log_end_offset(&self) -> Result<i64> {
        self.with_log(|log| Ok(log.leo()))
    }

    /// The first offset.
    pub fn log_start_offset(&self) -> Result<i64> {
        self.with_log(|log| Ok(log.log_start_offset()))
    }

    /// The `.log` files, oldest first.
    pub fn segment_paths(&self) -> Result<Vec<PathBuf>> {
        self.with_log(|log| {
            Ok(log
                .segments()
                .iter()
                .map(|s| s.path().to_path_buf())
                .collect())
        })
    }
}

/// A partition's replica set (`replica_set`): ISR, HW, replicas, pending acks.
#[derive(Debug, Clone)]
pub struct ReplicaSetHandle {
    pub(super) cluster: BrokerCluster,
    pub(super) tp: TopicPartition,
}

impl ReplicaSetHandle {
    /// Reads the replica set as it stands, without the refresh path: a read
    /// never changes the engine (no ISR update, no transaction timeout; the
    /// clock's actions do those, issue 12), and it works while the cluster
    /// is down. Topics are never deleted and the handle was made for an
    /// existing partition, so the partition is there.
    fn read<R>(&self, f: impl FnOnce(&PartitionReplicaSet, u64) -> R) -> R {
        let now = self.cluster.now_ms();
        let state = self.cluster.lock();
        let set = state
            .partition(&self.tp)
            .expect("topics are never deleted: the handle's partition exists");
        f(set, now)
    }

    /// In-sync replicas as last evaluated (by an operation or the clock).
    pub fn isr(&self) -> Vec<BrokerId> {
        self.read(|s, _| s.isr().iter().copied().collect())
    }

    /// The high watermark.
    pub fn high_watermark(&self) -> i64 {
        self.read(|s, _| s.high_watermark())
    }

    /// The leader.
    pub fn leader_id(&self) -> BrokerId {
        self.read(|s, _| s.leader_id())
    }

    /// The leader epoch.
    pub fn leader_epoch(&self) -> u32 {
        self.read(|s, _| s.leader_epoch())
    }

    /// Every replica's status, in assignment order.
    pub fn replicas(&self) -> Vec<ReplicaStatus> {
        self.read(|s, now| s.replica_statuses(now))
    }

    /// Pending `acks=all` appends.
    pub fn pending(&self) -> Vec<PendingAppendView> {
        self.read(|s, _| s.pending_appends())
    }

    /// One fetch by one follower of this partition.
    pub fn replicate_follower(&self, broker: BrokerId) -> Result<FetchOutcome> {
        self.cluster.mutate(|state, now| {
            state
                .partition_mut(&self.tp)?
                .replicate_follower(broker, now)
        })
    }

    /// Consumer fetch through this replica set (the white-box read path).
    pub fn fetch(
        &self,
        offset: i64,
        max_records: usize,
        isolation: IsolationLevel,
    ) -> Result<Vec<ConsumerRecord>> {
        self.cluster.fetch(&self.tp, offset, max_records, isolation)
    }
}

/// Committed consumer offsets (`offsets()`): `get`, `commit`, `commit_many`.
#[derive(Debug, Clone)]
pub struct OffsetsHandle {
    pub(super) cluster: BrokerCluster,
}

impl OffsetsHandle {
    /// The committed offset of `group` on `tp`.
    pub fn get(&self, group: &str, tp: &TopicPartition) -> Option<i64> {
        self.cluster.lock().offsets.get(group, tp)
    }

    /// Commits one offset durably.
    pub fn commit(&self, group: &str, tp: &TopicPartition, offset: i64) -> Result<()> {
        self.cluster
            .mutate(|s, _| s.offsets.commit(group, tp.clone(), offset))
    }

    /// Commits several offsets of a group in one atomic replace.
    pub fn commit_many(&self, group: &str, offsets: &GroupOffsets) -> Result<()> {
        self.cluster
            .mutate(|s, _| s.offsets.commit_many(group, offsets))
    }

    /// All groups' committed offsets.
    pub fn all(&self) -> BTreeMap<String, GroupOffsets> {
        self.cluster.lock().offsets.groups().clone()
    }
}
