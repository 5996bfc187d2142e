//! What the dashboard, the Kafka edge and the cluster's handles read of a
//! replica set beyond the book's state: accessors, each replica's status
//! and the pending `acks=all` appends, as plain values.

use crate::engine::config::BrokerId;
use crate::engine::core::metadata::{TimestampType, TopicPartition};
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::replication::{PartitionReplicaSet, Replica};

/// One replica as the dashboard shows it (SPEC §6 replicas pane).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaStatus {
    pub broker: BrokerId,
    pub is_leader: bool,
    pub log_start_offset: i64,
    pub log_end_offset: i64,
    /// Leader LEO minus this replica's LEO.
    pub lag: i64,
    /// Milliseconds since the last fetch (0 for the leader).
    pub ms_since_fetch: u64,
    pub in_sync: bool,
    pub stopped: bool,
    /// False until a follower has fetched under the current leader epoch.
    pub epoch_current: bool,
}

/// A pending `acks=all` append (SPEC §6 pending pane).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingAppendView {
    pub tp: TopicPartition,
    pub base_offset: i64,
    pub last_offset: i64,
    pub leader_epoch: u32,
    /// Replicas of the captured ISR that do not have the batch yet.
    pub waiting_for: Vec<BrokerId>,
}

impl PartitionReplicaSet {
    /// The partition.
    pub fn topic_partition(&self) -> &TopicPartition {
        &self.tp
    }

    /// The current leader epoch.
    pub fn leader_epoch(&self) -> u32 {
        self.leader_epoch
    }

    /// The high watermark: consumers read below it.
    pub fn high_watermark(&self) -> i64 {
        self.high_watermark
    }

    /// Brokers in assignment order.
    pub fn assignment(&self) -> &[BrokerId] {
        &self.assignment
    }

    /// The topic's timestamp type.
    pub fn timestamp_type(&self) -> TimestampType {
        self.timestamp_type
    }

    /// One replica.
    pub fn replica(&self, broker: BrokerId) -> Result<&Replica> {
        self.replicas
            .get(&broker)
            .ok_or_else(|| self.not_a_replica(broker))
    }

    /// Mutable access to one replica, for fault injection (tear a tail).
    pub fn replica_mut(&mut self, broker: BrokerId) -> Result<&mut Replica> {
        let err = self.not_a_replica(broker);
        self.replicas.get_mut(&broker).ok_or(err)
    }

    fn not_a_replica(&self, broker: BrokerId) -> MiniKafkaError {
        MiniKafkaError::UnknownTopicOrPartition(format!("{} on broker {broker}", self.tp))
    }

    /// Every replica as the dashboard shows it, in assignment order.
    pub fn replica_statuses(&self, now_ms: u64) -> Vec<ReplicaStatus> {
        let leader_leo = self.leader_leo();
        self.assignment
            .iter()
            .map(|b| {
                let r = &self.replicas[b];
                let is_leader = *b == self.leader_id;
                ReplicaStatus {
                    broker: *b,
                    is_leader,
                    log_start_offset: r.log.log_start_offset(),
                    log_end_offset: r.leo(),
                    lag: leader_leo - r.leo(),
                    ms_since_fetch: if is_leader {
                        0
                    } else {
                        now_ms.saturating_sub(r.last_fetch_ms)
                    },
                    in_sync: self.isr.contains(b),
                    stopped: r.stopped,
                    epoch_current: r.leader_epoch_seen == Some(self.leader_epoch),
                }
            })
            .collect()
    }

    /// Pending `acks=all` appends and the replicas each still waits for.
    pub fn pending_appends(&self) -> Vec<PendingAppendView> {
        self.pending
            .iter()
            .map(|p| PendingAppendView {
                tp: self.tp.clone(),
                base_offset: p.base_offset,
                last_offset: p.last_offset,
                leader_epoch: p.leader_epoch,
                waiting_for: p
                    .required
                    .iter()
                    .copied()
                    .filter(|&b| !self.has_batch(b, p.last_offset))
                    .collect(),
            })
            .collect()
    }
}
