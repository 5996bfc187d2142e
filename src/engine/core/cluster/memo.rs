//! Time-travel checkpoints (SPEC §4): `ClusterMemo` is what a quiet
//! cluster holds in memory that its data directory does not, and
//! `BrokerCluster::memo` / `BrokerCluster::restore` take and rebuild it.
//! Kept apart from the book's API in the facade: the book has no time travel.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use super::lock::lock_data_dir;
use super::open::validate_config;
use super::state::ClusterState;
use super::{BrokerCluster, Shared};
use crate::engine::clock::Clock;
use crate::engine::config::{BrokerId, MiniKafkaConfig};
use crate::engine::core::metadata::TopicPartition;
use crate::engine::core::partitioner::Partitioner;
use crate::engine::core::recovery::RecoveryReport;
use crate::engine::error::Result;
use crate::engine::replication::PartitionReplicaSet;
use crate::engine::replication::replica_set::ReplicaSetMemo;
use crate::engine::transaction::coordinator::CoordinatorMemo;

/// The in-memory state of a quiet cluster that its data directory does not
/// hold: with a copy of the directory, enough to rebuild the cluster exactly
/// (time-travel checkpoints, SPEC §4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterMemo {
    partitions: BTreeMap<TopicPartition, ReplicaSetMemo>,
    stopped: BTreeSet<BrokerId>,
    partitioner: Partitioner,
    last_recovery: RecoveryReport,
    /// The transaction coordinator's state, so a restore need not read the
    /// journal again (issue 7, P5); `None` once forgotten to save memory.
    transactions: Option<Arc<CoordinatorMemo>>,
}

impl ClusterMemo {
    /// Drops the coordinator's state: a restore from this memo then reads
    /// the journal, as a reopen does. A timeline keeps it only in its newest
    /// checkpoints, so memory does not grow with history squared.
    pub fn forget_transactions(&mut self) {
        self.transactions = None;
    }
}

impl BrokerCluster {
    /// The in-memory state a checkpoint needs, if the cluster is quiet (no
    /// pending `acks=all` append, no commit or send in flight, not down);
    /// else `None`.
    pub fn memo(&self) -> Option<ClusterMemo> {
        let state = self.lock();
        let quiet = state.partitions.values().all(PartitionReplicaSet::is_quiet)
            && state.transactions.is_quiet()
            && state.down.is_none();
        quiet.then(|| ClusterMemo {
            partitions: state
                .partitions
                .iter()
                .map(|(tp, s)| (tp.clone(), s.memo()))
                .collect(),
            stopped: state.stopped.clone(),
            partitioner: state.partitioner.clone(),
            last_recovery: state.last_recovery.clone(),
            transactions: Some(Arc::new(state.transactions.memo())),
        })
    }

    /// Opens a copy of a quiet cluster's data directory with the memo taken
    /// with it: the same cluster, as it was, without recovery.
    pub fn restore(
        config: MiniKafkaConfig,
        clock: impl Clock + 'static,
        memo: &ClusterMemo,
    ) -> Result<Self> {
        let clock: Arc<dyn Clock> = Arc::new(clock);
        validate_config(&config)?;
        let (lock, _) = lock_data_dir(&config.data_dir)?;
        let mut state =
            ClusterState::open_with(config, clock.now_ms(), false, memo.transactions.as_deref())?;
        for (tp, m) in &memo.partitions {
            state.partition_mut(tp)?.restore(m);
        }
        state.stopped = memo.stopped.clone();
        state.partitioner = memo.partitioner.clone();
        state.last_recovery = memo.last_recovery.clone();
        Ok(Self {
            shared: Arc::new(Shared {
                clock,
                state: Mutex::new(state),
                generation: AtomicU64::new(0),
                _lock: lock,
                observer: Mutex::new(None),
            }),
        })
    }
}
