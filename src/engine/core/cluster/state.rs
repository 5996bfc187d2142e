//! `ClusterState`: the whole in-memory state behind one `BrokerCluster`'s
//! mutex, with its read-only accessors (what views and tests read through
//! `BrokerCluster::with_state`). Kept apart from the facade so that what a
//! cluster *is* can be read without the operations that change it; opening
//! it from a directory is in `open.rs`.

use std::collections::{BTreeMap, BTreeSet};

use super::partitions::Partitions;
use crate::engine::config::{BrokerId, MiniKafkaConfig};
use crate::engine::consumer::OffsetStore;
use crate::engine::consumer::group::{GroupCoordinator, TopicPartitions};
use crate::engine::core::metadata::{MetadataStore, TopicPartition};
use crate::engine::core::partitioner::Partitioner;
use crate::engine::core::recovery::RecoveryReport;
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::producer::ProducerIdentities;
use crate::engine::repl_support::checkpoint::HighWatermarkCheckpoint;
use crate::engine::repl_support::readers::PendingAppendView;
use crate::engine::replication::PartitionReplicaSet;
use crate::engine::replication::model::TransactionVisibility;
use crate::engine::replication::replica_set::ReplicationSettings;
use crate::engine::transaction::TransactionCoordinator;

/// The whole in-memory state of a cluster. Dropping it is a crash: nothing is
/// buffered, so everything written so far is on disk.
#[derive(Debug)]
pub struct ClusterState {
    pub(crate) config: MiniKafkaConfig,
    pub(crate) metadata: MetadataStore,
    pub(crate) partitions: Partitions,
    pub(crate) offsets: OffsetStore,
    pub(crate) identities: ProducerIdentities,
    pub(crate) transactions: TransactionCoordinator,
    pub(crate) partitioner: Partitioner,
    pub(crate) stopped: BTreeSet<BrokerId>,
    pub(crate) checkpoint: HighWatermarkCheckpoint,
    pub(crate) last_recovery: RecoveryReport,
    /// Set when a crash could not reopen the directory (E13): this state is
    /// stale (recovery may have cut logs under it), so every operation is
    /// refused until a crash reopens the directory.
    pub(crate) down: Option<String>,
    /// Folds of the leaders' summaries kept for readers (`reader_cache`).
    pub(crate) reader_cache: super::reader_cache::ReaderCache,
    /// Consumer-group membership (E15): in memory only, as the book's
    /// coordinator is, so a crash starts it empty.
    pub(crate) groups: GroupCoordinator,
}

impl ClusterState {
    /// The replication settings of `topic`'s replica sets: the cluster's,
    /// with the topic's own `min.insync.replicas` when it sets one.
    pub(super) fn replication_settings(&self, topic: &str) -> ReplicationSettings {
        ReplicationSettings {
            replica_lag_max_offsets: self.config.replica_lag_max_offsets,
            replica_lag_time_ms: self.config.replica_lag_time_ms,
            replica_fetch_max_bytes: self.config.replica_fetch_max_bytes,
            min_insync_replicas: self.min_insync_replicas(topic),
            acks_all_completion: self.config.rules.acks_all_completion(),
            isr_evaluation: self.config.rules.isr_evaluation(),
        }
    }

    /// The minimum ISR of an acks=all append to `topic`: the topic's own
    /// (metadata.json) capped at its replication factor, as Kafka 4.4's
    /// `Partition.effectiveMinIsr` caps it (a topic whose minimum is above
    /// its replica count takes acks=all with every replica in the ISR,
    /// measured on the reference: tests/serve/min_isr.rs); else the
    /// cluster's, uncapped, as the book applies it.
    pub fn min_insync_replicas(&self, topic: &str) -> usize {
        let cluster = self.config.min_insync_replicas;
        let Some(t) = self.metadata.topics().get(topic) else {
            return cluster;
        };
        match t.config.min_insync_replicas {
            None => cluster,
            Some(own) => {
                let factor = t.partitions().first().map_or(1, |(_, p)| p.replicas.len());
                (own as usize).min(factor)
            }
        }
    }

    /// Writes the HW checkpoint if an HW moved. A cluster that is down
    /// writes nothing: its in-memory HWs describe logs its failed recovery
    /// may already have cut.
    pub(super) fn persist_high_watermarks(&mut self) -> Result<()> {
        if self.down.is_some() {
            return Ok(());
        }
        let current = self
            .partitions
            .iter()
            .map(|(tp, set)| (tp.clone(), set.high_watermark()))
            .collect();
        self.checkpoint.write_if_changed(current)
    }

    /// The readers' cache of folds over the leaders' summaries (see
    /// `reader_cache`).
    pub fn reader_cache(&self) -> &super::reader_cache::ReaderCache {
        &self.reader_cache
    }

    /// The configuration the cluster was opened with.
    pub fn config(&self) -> &MiniKafkaConfig {
        &self.config
    }

    /// Topic metadata.
    pub fn metadata(&self) -> &MetadataStore {
        &self.metadata
    }

    /// Every partition's replica set, in topic-partition order.
    pub fn partitions(&self) -> &BTreeMap<TopicPartition, PartitionReplicaSet> {
        &self.partitions
    }

    /// One partition's replica set.
    pub fn partition(&self, tp: &TopicPartition) -> Result<&PartitionReplicaSet> {
        self.partitions
            .get(tp)
            .ok_or_else(|| MiniKafkaError::UnknownTopicOrPartition(tp.to_string()))
    }

    /// The transaction coordinator's state (E10-E12).
    pub fn transactions(&self) -> &TransactionCoordinator {
        &self.transactions
    }

    /// The last stable offset of `tp` (E11).
    pub fn last_stable_offset(&self, tp: &TopicPartition) -> Result<i64> {
        let hw = self.partition(tp)?.high_watermark();
        Ok(self.transactions.last_stable_offset(tp, hw))
    }

    /// Chooses the partition for a record (SPEC §4 defaults): the given one,
    /// else `crc32(key) mod partitions`, else round-robin per topic.
    pub(crate) fn choose_partition(
        &mut self,
        topic: &str,
        partition: Option<u32>,
        key: Option<&[u8]>,
    ) -> Result<TopicPartition> {
        let count = self.partition_count(topic)?;
        let p = match partition {
            Some(p) if p < count => p,
            Some(p) => {
                return Err(MiniKafkaError::UnknownTopicOrPartition(format!(
                    "{topic}-{p}"
                )));
            }
            None => self.partitioner.choose(topic, key, count),
        };
        Ok(TopicPartition::new(topic, p))
    }

    pub(crate) fn partition_mut(
        &mut self,
        tp: &TopicPartition,
    ) -> Result<&mut PartitionReplicaSet> {
        self.partitions
            .get_tracked(tp)
            .ok_or_else(|| MiniKafkaError::UnknownTopicOrPartition(tp.to_string()))
    }

    /// Committed consumer offsets.
    pub fn offsets(&self) -> &OffsetStore {
        &self.offsets
    }

    /// The consumer-group coordinator (E15).
    pub fn groups(&self) -> &GroupCoordinator {
        &self.groups
    }

    /// Every topic's partition numbers, as the group coordinator assigns
    /// them (the book's `cluster._topic_partitions`).
    pub fn topic_partition_numbers(&self) -> TopicPartitions {
        self.metadata
            .topics()
            .iter()
            .map(|(name, t)| {
                (
                    name.clone(),
                    t.partitions().into_iter().map(|(p, _)| p).collect(),
                )
            })
            .collect()
    }

    /// Named producer identities.
    pub fn identities(&self) -> &ProducerIdentities {
        &self.identities
    }

    /// Stopped brokers.
    pub fn stopped_brokers(&self) -> &BTreeSet<BrokerId> {
        &self.stopped
    }

    /// What recovery repaired when this state was opened.
    pub fn last_recovery(&self) -> &RecoveryReport {
        &self.last_recovery
    }

    /// Number of partitions of `topic`.
    pub fn partition_count(&self, topic: &str) -> Result<u32> {
        self.metadata
            .topics()
            .get(topic)
            .map(|t| t.partitions.len() as u32)
            .ok_or_else(|| MiniKafkaError::UnknownTopicOrPartition(topic.to_string()))
    }

    /// Pending `acks=all` appends of every partition.
    pub fn pending_appends(&self) -> Vec<PendingAppendView> {
        self.partitions
            .values()
            .flat_map(|s| s.pending_appends())
            .collect()
    }

    pub(super) fn check_broker(&self, broker: BrokerId) -> Result<()> {
        if self.config.broker_ids.contains(&broker) {
            Ok(())
        } else {
            Err(MiniKafkaError::UnknownBroker(broker))
        }
    }

    /// Brings every ISR, HW and pending ack up to `now_ms`, visiting only
    /// the partitions that may have changed (see `partitions.rs`).
    pub(super) fn update_all(&mut self, now_ms: u64) {
        self.partitions.update(now_ms);
    }
}
