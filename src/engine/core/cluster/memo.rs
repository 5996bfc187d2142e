//! Time-travel checkpoints (SPEC §4): `ClusterMemo` is what a quiet
//! cluster holds in memory that its data directory does not, and
//! `BrokerCluster::memo` / `BrokerCluster::restore` take and rebuild it.
//! Kept apart from the book's API in the facade: the book has no time travel.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use super::lock::lock_data_dir;
use super::open::{Remembered, validate_config};
use super::reader_cache::{PrefixFold, ReaderCache};
use super::state::ClusterState;
use super::{BrokerCluster, Shared};
use crate::engine::clock::Clock;
use crate::engine::config::{BrokerId, MiniKafkaConfig};
use crate::engine::consumer::group::GroupCoordinator;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::core::partitioner::Partitioner;
use crate::engine::core::recovery::RecoveryReport;
use crate::engine::error::Result;
use crate::engine::producer::ProducerStateManager;
use crate::engine::replication::PartitionReplicaSet;
use crate::engine::time_travel::log::LogMemo;
use crate::engine::time_travel::replication::ReplicaSetMemo;
use crate::engine::time_travel::transactions::CoordinatorMemo;

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
    /// Each replica log's parsed state, so a restore need not read the
    /// logs again (issue 17 item 11); `None` once forgotten.
    logs: Option<Arc<RememberedLogs>>,
    /// The readers' folds (`reader_cache`): the first frame after a
    /// restore finds them, as the frame before the checkpoint did.
    reader_folds: BTreeMap<TopicPartition, PrefixFold>,
    /// The consumer groups, which live only in memory (E15).
    groups: GroupCoordinator,
}

/// A replica's state that an open parses from its log's files, as a
/// checkpoint keeps it (issue 17 item 11).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaMemo {
    pub(super) log: LogMemo,
    /// What `Replica::new` rebuilds from the log's summaries.
    pub(super) producers: ProducerStateManager,
}

/// Every replica log's [`ReplicaMemo`], by partition and broker.
pub type RememberedLogs = BTreeMap<(TopicPartition, BrokerId), ReplicaMemo>;

impl ClusterMemo {
    /// Drops the state parsed from the files (the coordinator's and the
    /// logs'): a restore from this memo then reads the journal and the
    /// logs, as a reopen does. A timeline keeps it only in its newest
    /// checkpoints, so memory stays bounded by those, not by history.
    pub fn forget_parsed(&mut self) {
        self.transactions = None;
        self.logs = None;
        self.reader_folds.clear();
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
            logs: Some(Arc::new(
                state
                    .partitions
                    .iter()
                    .flat_map(|(tp, set)| {
                        set.assignment().iter().filter_map(move |&b| {
                            let replica = set.replica(b).ok()?;
                            let memo = ReplicaMemo {
                                log: replica.log.memo()?,
                                producers: replica.producer_state.clone(),
                            };
                            Some(((tp.clone(), b), memo))
                        })
                    })
                    .collect(),
            )),
            reader_folds: state.reader_cache.folds(),
            groups: state.groups.clone(),
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
        let remembered = Remembered {
            coordinator: memo.transactions.as_deref(),
            logs: memo.logs.as_deref(),
        };
        let mut state = ClusterState::open_carrying(
            config,
            clock.now_ms(),
            false,
            remembered,
            &mut Default::default(),
        )?;
        for (tp, m) in &memo.partitions {
            state.partition_mut(tp)?.restore(m);
        }
        state.stopped = memo.stopped.clone();
        state.partitioner = memo.partitioner.clone();
        state.last_recovery = memo.last_recovery.clone();
        state.reader_cache = ReaderCache::with(memo.reader_folds.clone());
        state.groups = memo.groups.clone();
        Ok(Self {
            shared: Arc::new(Shared {
                clock,
                state: Mutex::new(state),
                generation: AtomicU64::new(0),
                _lock: lock,
                observer: Mutex::new(None),
                deferred: Default::default(),
            }),
        })
    }
}
