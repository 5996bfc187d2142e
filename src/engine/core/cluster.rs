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
use crate::engine::core::recovery::{
    LeaderReelection, LogPosition, LogTruncation, RecoveryReport, most_up_to_date,
};
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::fault::{self, Tear, TearReport, TearTarget};
use crate::engine::log::partition_log::{LogConfig, ScannedLog};
use crate::engine::log::{BatchSummary, PartitionLog};
use crate::engine::producer::{Producer, ProducerIdentities};
use crate::engine::replication::checkpoint::HighWatermarkCheckpoint;
use crate::engine::replication::model::{
    AppendFuture, PendingAppendView, ReplicaStatus, TransactionVisibility,
};
use crate::engine::replication::replica_set::{FetchOutcome, ReplicaSetMemo, ReplicationSettings};
use crate::engine::replication::{AckMode, IsolationLevel, PartitionReplicaSet, Replica};
use crate::engine::transaction::coordinator::CoordinatorMemo;
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
    /// Set when a crash could not reopen the directory (E13): this state is
    /// stale (recovery may have cut logs under it), so every operation is
    /// refused until a crash reopens the directory.
    pub(crate) down: Option<String>,
}

impl ClusterState {
    /// Opens the data directory: metadata, offsets, identities, every replica
    /// log (repairing bad active-segment tails), and the HW checkpoint.
    fn open(config: MiniKafkaConfig, now_ms: u64) -> Result<Self> {
        Self::open_with(config, now_ms, true, None)
    }

    /// Opens the data directory; `recover` runs the transaction recovery of
    /// E12 (a time-travel restore skips it: its checkpoint is not a crash).
    /// A restore passes the coordinator's memo when its checkpoint kept one,
    /// and the journal is then not read again.
    fn open_with(
        config: MiniKafkaConfig,
        now_ms: u64,
        recover: bool,
        coordinator: Option<&CoordinatorMemo>,
    ) -> Result<Self> {
        validate_config(&config)?;
        let dir = &config.data_dir;
        fs::create_dir_all(dir).map_err(|e| MiniKafkaError::io(dir, e))?;
        let mut metadata = MetadataStore::open(dir)?;
        let mut offsets = OffsetStore::open(dir)?;
        let mut identities = ProducerIdentities::open(dir)?;
        let checkpoint = HighWatermarkCheckpoint::open(dir)?;
        // Every log is read and checked before anything is repaired (the
        // journal's tail, a segment's tail, an index): what must be refused
        // (a bad closed segment, a replica on an unconfigured broker) is
        // refused with the directory as found (SPEC §5), and each log is
        // read once (P4).
        let scanned = scan_logs(&config, &metadata)?;
        let mut last_recovery = RecoveryReport::default();
        let remembered = match coordinator {
            Some(memo) => TransactionCoordinator::open_from_memo(
                dir,
                config.rules,
                config.transaction_timeout_ms,
                memo,
            )?,
            None => None,
        };
        let mut transactions = match remembered {
            Some(transactions) => transactions,
            None => TransactionCoordinator::open(
                dir,
                config.rules,
                config.transaction_timeout_ms,
                &mut last_recovery,
            )?,
        };
        metadata.set_sync(config.sync_writes);
        offsets.set_sync(config.sync_writes);
        identities.set_sync(config.sync_writes);
        transactions.set_sync(config.sync_writes);
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
            down: None,
        };
        let mut reelected = Vec::new();
        for (tp, meta, logs) in scanned {
            let (set, reelection) = state.open_partition(&tp, &meta, logs, now_ms)?;
            state.partitions.insert(tp, set);
            reelected.extend(reelection);
        }
        // Persisted once every log opened: a recovery that fails part way
        // leaves metadata.json as it found it.
        for e in reelected {
            state
                .metadata
                .set_leader(&e.tp, e.new_leader, e.leader_epoch)?;
            state.last_recovery.leaders_reelected.push(e);
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

    /// Opens every scanned replica log of `tp` (repairing torn tails) and
    /// assembles its replica set; also returns the leader re-election
    /// recovery chose, for the caller to persist.
    fn open_partition(
        &mut self,
        tp: &TopicPartition,
        meta: &PartitionMetadata,
        logs: Vec<(BrokerId, ScannedLog)>,
        now_ms: u64,
    ) -> Result<(PartitionReplicaSet, Option<LeaderReelection>)> {
        let mut replicas = Vec::new();
        let mut leader_cut = false;
        for (broker, scanned) in logs {
            let (log, recovery) = scanned.open()?;
            if recovery.truncated_bytes > 0 {
                leader_cut |= broker == meta.leader_id;
                self.last_recovery.logs_truncated.push(LogTruncation {
                    tp: tp.clone(),
                    broker,
                    truncated_bytes: recovery.truncated_bytes,
                    reason: recovery.reason.unwrap_or_default(),
                });
            }
            replicas.push(Replica::new(broker, log, now_ms));
        }
        let checkpointed = self.checkpoint.get(tp);
        let reelection = reelect_if_truncated(tp, meta, &replicas, leader_cut, checkpointed);
        let (leader, leader_epoch) = reelection
            .as_ref()
            .map_or((meta.leader_id, meta.leader_epoch), |e| {
                (e.new_leader, e.leader_epoch)
            });
        // The checkpointed HW, or (for a directory without one) the lowest
        // LEO; `PartitionReplicaSet::new` clamps it to the leader's log.
        let hw = checkpointed.unwrap_or_else(|| {
            replicas
                .iter()
                .map(Replica::log_end_offset)
                .min()
                .unwrap_or(0)
        });
        let set = PartitionReplicaSet::new(
            tp.clone(),
            meta.replicas.clone(),
            replicas,
            leader,
            leader_epoch,
            hw,
            self.replication_settings(),
        );
        Ok((set, reelection))
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

    /// Writes the HW checkpoint if an HW moved. A cluster that is down
    /// writes nothing: its in-memory HWs describe logs its failed recovery
    /// may already have cut.
    fn persist_high_watermarks(&mut self) -> Result<()> {
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

/// E2, E13: a leader whose log recovery truncated (a torn tail cut now, or,
/// after a crash during an earlier recovery, a log end below the
/// checkpointed HW) may have lost batches its followers hold and that were
/// acknowledged with acks=all. The most up-to-date replica leads instead
/// (Raft's rule, ties keep the leader) under the next leader epoch, which
/// the caller persists atomically before anything can be appended, so
/// followers truncate to it rather than it to them.
fn reelect_if_truncated(
    tp: &TopicPartition,
    meta: &PartitionMetadata,
    replicas: &[Replica],
    leader_cut: bool,
    checkpointed_hw: Option<i64>,
) -> Option<LeaderReelection> {
    let leader_leo = replicas
        .iter()
        .find(|r| r.broker == meta.leader_id)
        .map_or(0, Replica::log_end_offset);
    if !leader_cut && checkpointed_hw.is_none_or(|hw| leader_leo >= hw) {
        return None;
    }
    let candidates: Vec<(BrokerId, LogPosition)> = replicas
        .iter()
        .map(|r| {
            let last_epoch = r.log.batch_summaries().last().map(|b| b.leader_epoch);
            (r.broker, (last_epoch, r.log_end_offset()))
        })
        .collect();
    let elected = most_up_to_date(meta.leader_id, &candidates);
    (elected != meta.leader_id).then(|| LeaderReelection {
        tp: tp.clone(),
        old_leader: meta.leader_id,
        new_leader: elected,
        leader_epoch: meta.leader_epoch + 1,
    })
}

/// One partition's replica logs, read and checked but not opened.
type ScannedPartition = (
    TopicPartition,
    PartitionMetadata,
    Vec<(BrokerId, ScannedLog)>,
);

/// Reads and checks every replica log the metadata names, writing nothing:
/// the first phase of an open (see `ClusterState::open_with`).
fn scan_logs(config: &MiniKafkaConfig, metadata: &MetadataStore) -> Result<Vec<ScannedPartition>> {
    let mut out = Vec::new();
    for (name, topic) in metadata.topics() {
        for (p, meta) in topic.partitions() {
            let tp = TopicPartition::new(name.clone(), p);
            let logs = scan_partition(config, metadata, &tp, meta)?;
            out.push((tp, meta.clone(), logs));
        }
    }
    Ok(out)
}

/// Reads and checks `tp`'s replica logs; a replica on a broker that is not
/// configured is an error naming `metadata.json`.
fn scan_partition(
    config: &MiniKafkaConfig,
    metadata: &MetadataStore,
    tp: &TopicPartition,
    meta: &PartitionMetadata,
) -> Result<Vec<(BrokerId, ScannedLog)>> {
    let log_config = LogConfig {
        segment_max_bytes: config.segment_max_bytes,
        index_interval_bytes: config.index_interval_bytes,
        fsync: config.fsync_log,
    };
    meta.replicas
        .iter()
        .map(|&broker| {
            if !config.broker_ids.contains(&broker) {
                return Err(MiniKafkaError::corrupt(
                    metadata.path(),
                    format!("{tp} has a replica on broker {broker}, which is not configured"),
                ));
            }
            let scanned = PartitionLog::scan(&replica_dir(config, broker, tp), log_config)?;
            Ok((broker, scanned))
        })
        .collect()
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

impl Drop for Shared {
    /// A clean close writes the HW checkpoint (as Kafka's clean shutdown
    /// does); an error here has no caller to go to, and only leaves the
    /// checkpoint older, which lowers the HW on the next open.
    fn drop(&mut self) {
        if let Ok(state) = self.state.get_mut() {
            let _ = state.persist_high_watermarks();
        }
    }
}

/// The advisory lock file under the data directory.
pub const LOCK_FILE: &str = ".mk-tui.lock";

/// Takes the data directory's exclusive advisory lock, so that two clusters
/// (two mk-tui processes, or two handles in one) never write one directory.
/// Also returns whether this call created the lock file, so that a failed
/// open can leave the directory as it found it.
fn lock_data_dir(dir: &std::path::Path) -> Result<(fs::File, bool)> {
    let unwritable = |action, source| MiniKafkaError::DataDirUnwritable {
        path: dir.to_path_buf(),
        action,
        source,
    };
    fs::create_dir_all(dir).map_err(|e| unwritable("create", e))?;
    let path = dir.join(LOCK_FILE);
    let mut options = fs::OpenOptions::new();
    options.write(true);
    let (file, created) = match options.clone().create_new(true).open(&path) {
        Ok(file) => (file, true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => (
            options
                .open(&path)
                .map_err(|e| unwritable("write the lock file of", e))?,
            false,
        ),
        Err(e) => return Err(unwritable("write the lock file of", e)),
    };
    match file.try_lock() {
        Ok(()) => Ok((file, created)),
        Err(fs::TryLockError::WouldBlock) => Err(MiniKafkaError::DataDirLocked(dir.to_path_buf())),
        Err(fs::TryLockError::Error(e)) => Err(MiniKafkaError::io(&path, e)),
    }
}

/// Reopens the data directory after a crash. If recovery fails, the process
/// could not restart: the stale state stays (for the dashboard to show) but
/// goes down, its pending acks fail with `Crashed`, and the error is
/// returned. Recovery may already have cut torn tails under the stale
/// state, so writing through it would corrupt the directory.
fn reopen_or_go_down(
    state: &mut ClusterState,
    config: MiniKafkaConfig,
    now_ms: u64,
) -> Result<ClusterState> {
    ClusterState::open(config, now_ms).inspect_err(|e| {
        state.down = Some(e.to_string());
        for set in state.partitions.values_mut() {
            set.drop_pending();
        }
    })
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
        let (lock, created) = lock_data_dir(&config.data_dir)?;
        // The open refuses before it writes (see `scan_logs`); a lock file
        // this open created goes with it.
        let state = ClusterState::open(config.clone(), clock.now_ms()).inspect_err(|_| {
            if created {
                let _ = fs::remove_file(config.data_dir.join(LOCK_FILE));
            }
        })?;
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
    /// rules) transaction timeouts up to the clock. Moved HWs are
    /// checkpointed by [`Self::flush`], not here: a rename per append would
    /// cost more than the append itself (issue 7, P3).
    pub(crate) fn mutate<R>(
        &self,
        f: impl FnOnce(&mut ClusterState, u64) -> Result<R>,
    ) -> Result<R> {
        let now = self.now_ms();
        let mut state = self.lock();
        if let Some(reason) = &state.down {
            return Err(MiniKafkaError::ClusterDown {
                reason: reason.clone(),
            });
        }
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
        result
    }

    /// Writes the HW checkpoint if an HW moved since it was last written.
    ///
    /// Operations only move HWs in memory; the checkpoint is written here, on
    /// a crash or tear (before the simulated process dies, so recovery reads
    /// what an immediate write would have left) and when the cluster is
    /// closed. The session driver calls it after every step. Like Kafka's
    /// periodic checkpoint, the file may lag inside a burst of operations; a
    /// lagging HW checkpoint only lowers the HW after a real process kill.
    pub fn flush(&self) -> Result<()> {
        self.lock().persist_high_watermarks()
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
            let topic =
                state
                    .metadata
                    .plan_topic(name, partitions, replication_factor, &brokers)?;
            // Logs an earlier incarnation left are scanned before anything
            // is written: a bad one refuses the topic with nothing changed.
            let mut scanned = Vec::new();
            for (p, meta) in topic.partitions() {
                let tp = TopicPartition::new(name, p);
                let logs = scan_partition(&state.config, &state.metadata, &tp, meta)?;
                scanned.push((tp, meta.clone(), logs));
            }
            state.metadata.add_topic(name, topic)?;
            for (tp, meta, logs) in scanned {
                let (set, reelection) = state.open_partition(&tp, &meta, logs, now)?;
                if let Some(e) = reelection {
                    // Logs left in the directory by an earlier incarnation.
                    state
                        .metadata
                        .set_leader(&e.tp, e.new_leader, e.leader_epoch)?;
                }
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
        state.persist_high_watermarks()?;
        let config = state.config.clone();
        let reopened = reopen_or_go_down(&mut state, config, now)?;
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
        state.persist_high_watermarks()?;
        let config = state.config.clone();
        let torn = fault::tear_file(&path, tear)?;
        let reopened = reopen_or_go_down(&mut state, config, now)?;
        *state = reopened;
        self.shared.generation.fetch_add(1, Ordering::SeqCst);
        Ok((torn, state.last_recovery.clone()))
    }

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
