//! `BrokerCluster`: the book's facade over topics, replica sets, offsets and
//! producers (SPEC §3 E2-E8, the API of the book's examples).
//!
//! A `BrokerCluster` is a cheap handle (clone it freely) over one shared state
//! behind a mutex that is never held across an `.await`. Appends happen when
//! `append_batch` is called; the returned future only reports the outcome, so
//! an `acks=all` append can be pending while the caller drives replication:
//!
//! ```no_run
//! # async fn demo() -> minikafka::engine::Result<()> {
//! use minikafka::engine::*;
//! let clock = ManualClock::new();
//! let dir = tempfile::tempdir().unwrap();
//! let cluster = BrokerCluster::open(MiniKafkaConfig::new(dir.path()).with_brokers([1, 2]), clock)?;
//! cluster.create_topic("out", 1, 2)?;
//! let tp = TopicPartition::new("out", 0);
//! let ack = cluster.append_batch(&tp, RecordBatch::of_values(["v"]), AckMode::All);
//! cluster.replicate_all_once()?; // the follower fetches; the ack completes
//! assert_eq!(ack.await?.base_offset(), Some(0));
//! # Ok(()) }
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::engine::clock::Clock;
use crate::engine::config::{BrokerId, MiniKafkaConfig};
use crate::engine::consumer::OffsetStore;
use crate::engine::consumer::offsets::GroupOffsets;
use crate::engine::core::batch::RecordBatch;
use crate::engine::core::metadata::{MetadataStore, PartitionMetadata, TopicPartition};
use crate::engine::core::partitioner::Partitioner;
use crate::engine::core::record::ConsumerRecord;
use crate::engine::core::recovery::{LogTruncation, RecoveryReport};
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::fault::{self, Tear, TearReport, TearTarget};
use crate::engine::log::partition_log::LogConfig;
use crate::engine::log::{BatchSummary, PartitionLog};
use crate::engine::producer::{Producer, ProducerIdentities};
use crate::engine::replication::checkpoint::HighWatermarkCheckpoint;
use crate::engine::replication::model::{
    AppendFuture, PendingAppendView, ReplicaStatus, TransactionVisibility,
};
use crate::engine::replication::replica_set::{FetchOutcome, ReplicaSetMemo, ReplicationSettings};
use crate::engine::replication::{AckMode, IsolationLevel, PartitionReplicaSet, Replica};
use crate::engine::transaction::{TransactionCoordinator, TransactionManager};

/// The directory of one replica's log: `broker-<id>/<topic>-<partition>`.
pub fn replica_dir(config: &MiniKafkaConfig, broker: BrokerId, tp: &TopicPartition) -> PathBuf {
    config
        .data_dir
        .join(format!("broker-{broker}"))
        .join(tp.to_string())
}

/// The whole in-memory state of a cluster. Dropping it is a crash: nothing is
/// buffered, so everything written so far is on disk.
#[derive(Debug)]
pub struct ClusterState {
    pub(crate) config: MiniKafkaConfig,
    pub(crate) metadata: MetadataStore,
    pub(crate) partitions: BTreeMap<TopicPartition, PartitionReplicaSet>,
    pub(crate) offsets: OffsetStore,
    pub(crate) identities: ProducerIdentities,
    pub(crate) transactions: TransactionCoordinator,
    pub(crate) partitioner: Partitioner,
    pub(crate) stopped: BTreeSet<BrokerId>,
    pub(crate) checkpoint: HighWatermarkCheckpoint,
    pub(crate) last_recovery: RecoveryReport,
}

impl ClusterState {
    /// Opens the data directory: metadata, offsets, identities, every replica
    /// log (repairing bad active-segment tails), and the HW checkpoint.
    fn open(config: MiniKafkaConfig, now_ms: u64) -> Result<Self> {
        Self::open_with(config, now_ms, true)
    }

    /// Opens the data directory; `recover` runs the transaction recovery of
    /// E12 (a time-travel restore skips it: its checkpoint is not a crash).
    fn open_with(config: MiniKafkaConfig, now_ms: u64, recover: bool) -> Result<Self> {
        validate_config(&config)?;
        let dir = &config.data_dir;
        fs::create_dir_all(dir).map_err(|e| MiniKafkaError::io(dir, e))?;
        let metadata = MetadataStore::open(dir)?;
        let offsets = OffsetStore::open(dir)?;
        let identities = ProducerIdentities::open(dir)?;
        let checkpoint = HighWatermarkCheckpoint::open(dir)?;
        let mut last_recovery = RecoveryReport::default();
        let transactions = TransactionCoordinator::open(
            dir,
            config.rules,
            config.transaction_timeout_ms,
            &mut last_recovery,
        )?;
        let mut state = Self {
            metadata,
            offsets,
            identities,
            transactions,
            checkpoint,
            partitions: BTreeMap::new(),
            partitioner: Partitioner::default(),
            stopped: BTreeSet::new(),
            last_recovery,
            config,
        };
        let existing: Vec<(TopicPartition, PartitionMetadata)> = state
            .metadata
            .topics()
            .iter()
            .flat_map(|(name, topic)| {
                topic
                    .partitions()
                    .into_iter()
                    .map(|(p, meta)| (TopicPartition::new(name.clone(), p), meta.clone()))
            })
            .collect();
        for (tp, meta) in existing {
            let set = state.open_partition(&tp, &meta, now_ms)?;
            state.partitions.insert(tp, set);
        }
        let Self {
            transactions,
            partitions,
            offsets,
            last_recovery,
            ..
        } = &mut state;
        transactions.attach_markers(partitions);
        if recover {
            transactions.recover(partitions, offsets, now_ms, last_recovery)?;
            // Kafka rules: an ONGOING transaction found past its timeout
            // aborts now, not at whatever engine call comes next (a read of
            // the state would otherwise change it half way through).
            transactions.expire(partitions, offsets, now_ms)?;
        }
        state.update_all(now_ms);
        state.persist_high_watermarks()?;
        Ok(state)
    }

    fn open_partition(
        &mut self,
        tp: &TopicPartition,
        meta: &PartitionMetadata,
        now_ms: u64,
    ) -> Result<PartitionReplicaSet> {
        let mut replicas = Vec::new();
        for &broker in &meta.replicas {
            if !self.config.broker_ids.contains(&broker) {
                return Err(MiniKafkaError::corrupt(
                    self.metadata.path(),
                    format!("{tp} has a replica on broker {broker}, which is not configured"),
                ));
            }
            let (log, recovery) =
                PartitionLog::open(&replica_dir(&self.config, broker, tp), self.log_config())?;
            if recovery.truncated_bytes > 0 {
                self.last_recovery.logs_truncated.push(LogTruncation {
                    tp: tp.clone(),
                    broker,
                    truncated_bytes: recovery.truncated_bytes,
                    reason: recovery.reason.unwrap_or_default(),
                });
            }
            replicas.push(Replica::new(broker, log, now_ms));
        }
        // The checkpointed HW, or (for a directory without one) the lowest LEO.
        let hw = self.checkpoint.get(tp).unwrap_or_else(|| {
            replicas
                .iter()
                .map(Replica::log_end_offset)
                .min()
                .unwrap_or(0)
        });
        Ok(PartitionReplicaSet::new(
            tp.clone(),
            meta.replicas.clone(),
            replicas,
            meta.leader_id,
            meta.leader_epoch,
            hw,
            self.replication_settings(),
        ))
    }

    fn log_config(&self) -> LogConfig {
        LogConfig {
            segment_max_bytes: self.config.segment_max_bytes,
            index_interval_bytes: self.config.index_interval_bytes,
            fsync: self.config.fsync_log,
        }
    }

    fn replication_settings(&self) -> ReplicationSettings {
        ReplicationSettings {
            replica_lag_max_offsets: self.config.replica_lag_max_offsets,
            replica_lag_time_ms: self.config.replica_lag_time_ms,
            replica_fetch_max_bytes: self.config.replica_fetch_max_bytes,
            min_insync_replicas: self.config.min_insync_replicas,
            acks_all_completion: self.config.rules.acks_all_completion(),
        }
    }

    fn persist_high_watermarks(&mut self) -> Result<()> {
        let current = self
            .partitions
            .iter()
            .map(|(tp, set)| (tp.clone(), set.high_watermark()))
            .collect();
        self.checkpoint.write_if_changed(current)
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
            .get_mut(tp)
            .ok_or_else(|| MiniKafkaError::UnknownTopicOrPartition(tp.to_string()))
    }

    /// Committed consumer offsets.
    pub fn offsets(&self) -> &OffsetStore {
        &self.offsets
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

    fn check_broker(&self, broker: BrokerId) -> Result<()> {
        if self.config.broker_ids.contains(&broker) {
            Ok(())
        } else {
            Err(MiniKafkaError::UnknownBroker(broker))
        }
    }

    fn update_all(&mut self, now_ms: u64) {
        for set in self.partitions.values_mut() {
            set.update(now_ms);
        }
    }
}

/// The in-memory state of a quiet cluster that its data directory does not
/// hold: with a copy of the directory, enough to rebuild the cluster exactly
/// (time-travel checkpoints, SPEC §4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterMemo {
    partitions: BTreeMap<TopicPartition, ReplicaSetMemo>,
    stopped: BTreeSet<BrokerId>,
    partitioner: Partitioner,
    last_recovery: RecoveryReport,
}

fn validate_config(config: &MiniKafkaConfig) -> Result<()> {
    let invalid = MiniKafkaError::InvalidConfig;
    if config.broker_ids.is_empty() {
        return Err(invalid("configuration needs at least one broker id".into()));
    }
    let unique: BTreeSet<_> = config.broker_ids.iter().collect();
    if unique.len() != config.broker_ids.len() {
        return Err(invalid(format!(
            "broker ids {:?} repeat",
            config.broker_ids
        )));
    }
    if config.min_insync_replicas == 0 {
        return Err(invalid("min_insync_replicas must be at least 1".into()));
    }
    Ok(())
}

struct Shared {
    clock: Arc<dyn Clock>,
    state: Mutex<ClusterState>,
    /// Bumped by every crash, so a multi-step operation can tell that the
    /// state it started on is gone.
    generation: AtomicU64,
    /// The data directory's advisory lock, held for the cluster's lifetime
    /// (across crashes, which only replace `state`).
    _lock: fs::File,
}

/// The advisory lock file under the data directory.
pub const LOCK_FILE: &str = ".mk-tui.lock";

/// Takes the data directory's exclusive advisory lock, so that two clusters
/// (two mk-tui processes, or two handles in one) never write one directory.
fn lock_data_dir(dir: &std::path::Path) -> Result<fs::File> {
    fs::create_dir_all(dir).map_err(|e| MiniKafkaError::io(dir, e))?;
    let path = dir.join(LOCK_FILE);
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| MiniKafkaError::io(&path, e))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(fs::TryLockError::WouldBlock) => Err(MiniKafkaError::DataDirLocked(dir.to_path_buf())),
        Err(fs::TryLockError::Error(e)) => Err(MiniKafkaError::io(&path, e)),
    }
}

/// A MiniKafka cluster over one data directory. Clones share the cluster.
#[derive(Clone)]
pub struct BrokerCluster {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for BrokerCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrokerCluster")
            .field("data_dir", &self.lock().config.data_dir)
            .finish_non_exhaustive()
    }
}

impl BrokerCluster {
    /// Opens (or creates) the cluster in `config.data_dir`, running recovery:
    /// see [`BrokerCluster::last_recovery`].
    pub fn open(config: MiniKafkaConfig, clock: impl Clock + 'static) -> Result<Self> {
        let clock: Arc<dyn Clock> = Arc::new(clock);
        validate_config(&config)?;
        let lock = lock_data_dir(&config.data_dir)?;
        let state = ClusterState::open(config, clock.now_ms())?;
        Ok(Self {
            shared: Arc::new(Shared {
                clock,
                state: Mutex::new(state),
                generation: AtomicU64::new(0),
                _lock: lock,
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, ClusterState> {
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The cluster clock's time.
    pub fn now_ms(&self) -> u64 {
        self.shared.clock.now_ms()
    }

    /// Runs `f` on the current state (read-only; for views and tests).
    pub fn with_state<R>(&self, f: impl FnOnce(&ClusterState) -> R) -> R {
        f(&self.lock())
    }

    /// Runs `f` on the state, mutably, without the clock bookkeeping.
    pub(crate) fn with_state_mut<R>(&self, f: impl FnOnce(&mut ClusterState) -> R) -> R {
        f(&mut self.lock())
    }

    /// How many times this cluster crashed.
    pub fn generation(&self) -> u64 {
        self.shared.generation.load(Ordering::SeqCst)
    }

    /// Runs `f` on the state after bringing ISR, HW, pending acks and (kafka
    /// rules) transaction timeouts up to the clock, then checkpoints any HW
    /// that moved.
    pub(crate) fn mutate<R>(
        &self,
        f: impl FnOnce(&mut ClusterState, u64) -> Result<R>,
    ) -> Result<R> {
        let now = self.now_ms();
        let mut state = self.lock();
        state.update_all(now);
        let expired = {
            let ClusterState {
                transactions,
                partitions,
                offsets,
                ..
            } = &mut *state;
            transactions.expire(partitions, offsets, now)
        };
        expired?;
        let result = f(&mut state, now);
        state.update_all(now);
        let persisted = state.persist_high_watermarks();
        let value = result?;
        persisted?;
        Ok(value)
    }

    /// The configuration.
    pub fn config(&self) -> MiniKafkaConfig {
        self.lock().config.clone()
    }

    /// Re-evaluates every ISR, HW and pending ack at the clock's time (after
    /// the clock moved).
    pub fn tick(&self) -> Result<()> {
        self.mutate(|_, _| Ok(()))
    }

    /// Creates a topic with round-robin replica assignment (E3).
    pub fn create_topic(&self, name: &str, partitions: u32, replication_factor: u32) -> Result<()> {
        self.mutate(|state, now| {
            let brokers = state.config.broker_ids.clone();
            let topic = state
                .metadata
                .create_topic(name, partitions, replication_factor, &brokers)?
                .clone();
            for (p, meta) in topic.partitions() {
                let tp = TopicPartition::new(name, p);
                let set = state.open_partition(&tp, meta, now)?;
                state.partitions.insert(tp, set);
            }
            Ok(())
        })
    }

    /// Topic names and partition counts.
    pub fn topics(&self) -> Vec<(String, u32)> {
        self.lock()
            .metadata
            .topics()
            .iter()
            .map(|(n, t)| (n.clone(), t.partitions.len() as u32))
            .collect()
    }

    /// Every topic-partition, in order.
    pub fn topic_partitions(&self) -> Vec<TopicPartition> {
        self.lock().partitions.keys().cloned().collect()
    }

    /// Appends `batch` to `tp`'s leader with the given acks (E5). The append
    /// happens now; the future resolves when the acks are satisfied (or with
    /// the error that stopped it).
    pub fn append_batch(
        &self,
        tp: &TopicPartition,
        batch: RecordBatch,
        acks: AckMode,
    ) -> AppendFuture {
        self.try_append(tp, batch, acks, None)
            .unwrap_or_else(|e| AppendFuture::ready(Err(e)))
    }

    /// As [`Self::append_batch`], but an error found before appending is
    /// returned directly, and a stale `expected_leader_epoch` is fenced (E6).
    pub fn try_append(
        &self,
        tp: &TopicPartition,
        batch: RecordBatch,
        acks: AckMode,
        expected_leader_epoch: Option<u32>,
    ) -> Result<AppendFuture> {
        self.mutate(|state, now| {
            state
                .partition_mut(tp)?
                .append(batch, acks, now, expected_leader_epoch)
        })
    }

    /// Chooses the partition for a record (SPEC §4 defaults): the given one,
    /// else `crc32(key) mod partitions`, else round-robin per topic.
    pub fn choose_partition(
        &self,
        topic: &str,
        partition: Option<u32>,
        key: Option<&[u8]>,
    ) -> Result<TopicPartition> {
        self.lock().choose_partition(topic, partition, key)
    }

    /// Reads records from `offset` on (E4, E11). `read_uncommitted` stops at
    /// the HW; `read_committed` at the LSO, skipping control batches and
    /// transactional data that is not committed.
    pub fn fetch(
        &self,
        tp: &TopicPartition,
        offset: i64,
        max_records: usize,
        isolation: IsolationLevel,
    ) -> Result<Vec<ConsumerRecord>> {
        self.mutate(|state, _| {
            state
                .partition(tp)?
                .fetch(offset, max_records, isolation, &state.transactions)
        })
    }

    /// The last stable offset of `tp` (E11): where `read_committed` stops.
    pub fn last_stable_offset(&self, tp: &TopicPartition) -> Result<i64> {
        self.mutate(|state, _| state.last_stable_offset(tp))
    }

    /// The transaction coordinator (E10): `transactions().begin("tx-1")`.
    pub fn transactions(&self) -> TransactionManager {
        TransactionManager::new(self.clone())
    }

    /// The current leader's log of `tp`.
    pub fn leader_log(&self, tp: &TopicPartition) -> Result<LogHandle> {
        let broker = self.lock().partition(tp)?.leader();
        Ok(LogHandle {
            cluster: self.clone(),
            tp: tp.clone(),
            broker,
        })
    }

    /// Broker `broker`'s replica log of `tp`.
    pub fn replica_log(&self, tp: &TopicPartition, broker: BrokerId) -> Result<LogHandle> {
        self.lock().partition(tp)?.replica(broker)?;
        Ok(LogHandle {
            cluster: self.clone(),
            tp: tp.clone(),
            broker,
        })
    }

    /// A handle on `tp`'s replica set (ISR, HW, replicas, pending acks).
    pub fn replica_set(&self, tp: &TopicPartition) -> Result<ReplicaSetHandle> {
        self.lock().partition(tp)?;
        Ok(ReplicaSetHandle {
            cluster: self.clone(),
            tp: tp.clone(),
        })
    }

    /// One fetch by every follower of every partition (the book's
    /// `replicate_all_once`).
    pub fn replicate_all_once(&self) -> Result<FetchOutcome> {
        self.mutate(|state, now| {
            let mut total = FetchOutcome::default();
            let mut first_error = None;
            for set in state.partitions.values_mut() {
                match set.replicate_once(now) {
                    Ok(o) => total.add(o),
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                }
            }
            first_error.map_or(Ok(total), Err)
        })
    }

    /// One fetch by `broker` for every partition it follows.
    pub fn replicate_broker(&self, broker: BrokerId) -> Result<FetchOutcome> {
        self.mutate(|state, now| {
            state.check_broker(broker)?;
            let mut total = FetchOutcome::default();
            for set in state.partitions.values_mut() {
                if set.assignment().contains(&broker) {
                    total.add(set.replicate_follower(broker, now)?);
                }
            }
            Ok(total)
        })
    }

    /// One fetch by every follower of one partition.
    pub fn replicate_partition(&self, tp: &TopicPartition) -> Result<FetchOutcome> {
        self.mutate(|state, now| state.partition_mut(tp)?.replicate_once(now))
    }

    /// Stops a broker (E6): it stops fetching and cannot lead; if it leads a
    /// partition, appends there fail until another replica is promoted.
    pub fn stop_broker(&self, broker: BrokerId) -> Result<()> {
        self.set_stopped(broker, true)
    }

    /// Restarts a stopped broker.
    pub fn start_broker(&self, broker: BrokerId) -> Result<()> {
        self.set_stopped(broker, false)
    }

    fn set_stopped(&self, broker: BrokerId, stopped: bool) -> Result<()> {
        self.mutate(|state, now| {
            state.check_broker(broker)?;
            if stopped {
                state.stopped.insert(broker);
            } else {
                state.stopped.remove(&broker);
            }
            for set in state.partitions.values_mut() {
                set.set_stopped(broker, stopped, now);
            }
            Ok(())
        })
    }

    /// Makes `broker` the leader of `tp` (E6) and persists the new leader and
    /// epoch. Returns the new leader epoch.
    pub fn promote(&self, tp: &TopicPartition, broker: BrokerId) -> Result<u32> {
        self.mutate(|state, now| {
            let epoch = state.partition_mut(tp)?.promote(broker, now)?;
            state.metadata.set_leader(tp, broker, epoch)?;
            let ClusterState {
                transactions,
                partitions,
                ..
            } = state;
            let leader = &partitions[tp].leader_replica().log;
            transactions.forget_lost_markers(tp, leader);
            Ok(epoch)
        })
    }

    /// Committed consumer offsets (E8).
    pub fn offsets(&self) -> OffsetsHandle {
        OffsetsHandle {
            cluster: self.clone(),
        }
    }

    /// A named idempotent producer (E7). Opening a name again bumps its epoch
    /// and fences older handles of that name.
    pub fn producer(&self, name: &str) -> Result<Producer> {
        let (producer_id, epoch) = self.mutate(|state, _| state.identities.init(name))?;
        Ok(Producer::new(self.clone(), name, producer_id, epoch))
    }

    /// Crashes the process (E13): drops every in-memory structure and pending
    /// operation (their futures fail with [`MiniKafkaError::Crashed`]), then
    /// reopens the data directory and runs recovery. Stopped brokers come back
    /// up: the whole process restarted.
    pub fn crash(&self) -> Result<RecoveryReport> {
        let now = self.now_ms();
        let mut state = self.lock();
        let config = state.config.clone();
        let reopened = ClusterState::open(config, now)?;
        *state = reopened;
        self.shared.generation.fetch_add(1, Ordering::SeqCst);
        Ok(state.last_recovery.clone())
    }

    /// Tears the tail of the journal or of one replica's active segment
    /// (E13): the cluster crashes, the file is damaged as asked, and the
    /// cluster reopens and recovers.
    pub fn tear(&self, target: &TearTarget, tear: &Tear) -> Result<(TearReport, RecoveryReport)> {
        let now = self.now_ms();
        let mut state = self.lock();
        let path = match target {
            TearTarget::Journal => state.transactions.journal_path().to_path_buf(),
            TearTarget::Log { tp, broker } => state
                .partition(tp)?
                .replica(*broker)?
                .log
                .active_segment_path()
                .to_path_buf(),
        };
        let config = state.config.clone();
        let torn = fault::tear_file(&path, tear)?;
        let reopened = ClusterState::open(config, now)?;
        *state = reopened;
        self.shared.generation.fetch_add(1, Ordering::SeqCst);
        Ok((torn, state.last_recovery.clone()))
    }

    /// The in-memory state a checkpoint needs, if the cluster is quiet (no
    /// pending `acks=all` append, no commit or send in flight); else `None`.
    pub fn memo(&self) -> Option<ClusterMemo> {
        let state = self.lock();
        let quiet = state.partitions.values().all(PartitionReplicaSet::is_quiet)
            && state.transactions.is_quiet();
        quiet.then(|| ClusterMemo {
            partitions: state
                .partitions
                .iter()
                .map(|(tp, s)| (tp.clone(), s.memo()))
                .collect(),
            stopped: state.stopped.clone(),
            partitioner: state.partitioner.clone(),
            last_recovery: state.last_recovery.clone(),
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
        let lock = lock_data_dir(&config.data_dir)?;
        let mut state = ClusterState::open_with(config, clock.now_ms(), false)?;
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
            }),
        })
    }

    /// What recovery repaired when the cluster was last opened.
    pub fn last_recovery(&self) -> RecoveryReport {
        self.lock().last_recovery.clone()
    }
}

/// A replica log of one partition on one broker (`leader_log`, `replica_log`).
#[derive(Debug, Clone)]
pub struct LogHandle {
    cluster: BrokerCluster,
    tp: TopicPartition,
    broker: BrokerId,
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
        self.with_log(|log| log.fetch(offset, max_records, log.log_end_offset()))
    }

    /// The batch summaries, without records.
    pub fn batch_summaries(&self) -> Result<Vec<BatchSummary>> {
        self.with_log(|log| Ok(log.batch_summaries().to_vec()))
    }

    /// The log end offset.
    pub fn log_end_offset(&self) -> Result<i64> {
        self.with_log(|log| Ok(log.log_end_offset()))
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
    cluster: BrokerCluster,
    tp: TopicPartition,
}

impl ReplicaSetHandle {
    fn read<R>(&self, f: impl FnOnce(&PartitionReplicaSet, u64) -> R) -> R {
        self.cluster
            .mutate(|state, now| Ok(f(state.partition(&self.tp)?, now)))
            .expect("the partition exists: checked when the handle was made")
    }

    /// In-sync replicas at the clock's time.
    pub fn isr(&self) -> Vec<BrokerId> {
        self.read(|s, _| s.isr().iter().copied().collect())
    }

    /// The high watermark.
    pub fn high_watermark(&self) -> i64 {
        self.read(|s, _| s.high_watermark())
    }

    /// The leader.
    pub fn leader(&self) -> BrokerId {
        self.read(|s, _| s.leader())
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
    cluster: BrokerCluster,
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
