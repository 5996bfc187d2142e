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
//!
//! This file is the facade: the book's API, and the shared state and lock
//! every clone goes through. The rest of the module has one job per file:
//! `state.rs` (`ClusterState`, what a cluster is in memory), `open.rs`
//! (opening a directory and recovery after a crash), `lock.rs` (the data
//! directory's lock), `memo.rs` (time-travel checkpoints) and `handles.rs`
//! (the log, replica-set and offsets handles).

mod cleanup;
pub mod delete;
mod groups;
mod grow;
mod handles;
mod journal_sync;
mod lock;
mod memo;
mod open;
mod partitions;
pub mod reader_cache;
mod state;
mod topic_config;

pub use self::cleanup::{CompactionCut, CompactionOutcome, RetentionOutcome};
pub use self::handles::{LogHandle, OffsetsHandle, ReplicaSetHandle};
pub use self::lock::{LOCK_FILE, lock_shared};
pub use self::memo::ClusterMemo;
pub use self::open::replica_dir;
pub use self::state::ClusterState;

use std::collections::BTreeMap;
use std::fs;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use self::lock::{lock_data_dir, record_holder, restore_holder};
use self::open::{reopen_or_go_down, validate_config};
use crate::engine::clock::Clock;
use crate::engine::config::{BrokerId, MiniKafkaConfig};
use crate::engine::core::batch::RecordBatch;
use crate::engine::core::metadata::{
    MAX_LEADER_EPOCH, PartitionMetadata, TimestampType, TopicConfig, TopicPartition,
};
use crate::engine::core::record::ConsumerRecord;
use crate::engine::core::recovery::RecoveryReport;
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::fault::{self, Tear, TearReport, TearTarget};
use crate::engine::producer::Producer;
use crate::engine::replication::model::AppendFuture;
use crate::engine::replication::replica_set::FetchOutcome;
use crate::engine::replication::{AckMode, IsolationLevel};
use crate::engine::transaction::TransactionManager;

struct Shared {
    clock: Arc<dyn Clock>,
    state: Mutex<ClusterState>,
    /// Bumped by every crash, so a multi-step operation can tell that the
    /// state it started on is gone.
    generation: AtomicU64,
    /// The data directory's advisory lock, held for the cluster's lifetime
    /// (across crashes, which only replace `state`).
    _lock: fs::File,
    /// Called at the instant of every crash (see [`CrashObserver`]).
    observer: Mutex<Option<CrashObserver>>,
    /// Journaling steps that leave their sync to the caller
    /// (`journal_sync`).
    deferred: journal_sync::DeferredSyncs,
}

/// Sees the state at the instant of a crash, under the cluster's lock,
/// before anything is dropped or reopened: the moment of death that a
/// dashboard shows before the recovery (issue 13, item 3). For a tear it
/// is called after the tail was torn, with what the tear did. It must only
/// read (its `u64` is the clock's time): it runs inside every crash path (`crash`, `tear`, and a commit or
/// abort that crashes at its cut point, which goes through `crash`).
pub type CrashObserver = Arc<dyn Fn(&ClusterState, u64, Option<&TearReport>) + Send + Sync>;

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

/// Makes `broker-<id>/` for every configured broker that has none: a broker
/// that holds no replica yet is still part of the cluster, and the
/// directory is how a reopen by `--data-dir` alone (`state --data-dir`,
/// `serve --data-dir`) finds it (found trying `serve` as a new user: topics
/// at replication factor 2 left broker 3 of 3 without a directory, and the
/// reopened cluster had two brokers). After the open has checked
/// everything, so a refused directory stays as found.
fn keep_every_broker(config: &MiniKafkaConfig) -> Result<()> {
    for broker in &config.broker_ids {
        let dir = config.data_dir.join(format!("broker-{broker}"));
        if !dir.exists() {
            fs::create_dir(&dir).map_err(|e| MiniKafkaError::io(&dir, e))?;
        }
    }
    Ok(())
}

impl BrokerCluster {
    /// Opens (or creates) the cluster in `config.data_dir`, running recovery:
    /// see [`BrokerCluster::last_recovery`].
    pub fn open(config: MiniKafkaConfig, clock: impl Clock + 'static) -> Result<Self> {
        let clock: Arc<dyn Clock> = Arc::new(clock);
        validate_config(&config)?;
        let (lock, created) = lock_data_dir(&config.data_dir)?;
        let previous = record_holder(&lock);
        // The open refuses before it writes (see `scan_logs`); a lock file
        // this open created goes with it, one that was there gets back
        // what it held.
        let state = ClusterState::open(config.clone(), clock.now_ms()).inspect_err(|_| {
            if created {
                let _ = fs::remove_file(config.data_dir.join(LOCK_FILE));
            } else {
                restore_holder(&lock, &previous);
            }
        })?;
        keep_every_broker(&config)?;
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

    /// Installs (or, with `None`, removes) the observer every crash calls
    /// at its instant, before recovery.
    pub fn set_crash_observer(&self, observer: Option<CrashObserver>) {
        *self
            .shared
            .observer
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = observer;
    }

    /// Calls the crash observer, if any, on `state` as it is now.
    fn observe_crash(&self, state: &ClusterState, now: u64, torn: Option<&TearReport>) {
        let observer = self
            .shared
            .observer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(observer) = observer {
            observer(state, now, torn);
        }
    }

    /// Whether this is the cluster's only handle: dropping it closes every
    /// file (a time-travel restore reuses the directory only then,
    /// `Driver::into_scratch`).
    pub fn is_only_handle(&self) -> bool {
        Arc::strong_count(&self.shared) == 1 && Arc::weak_count(&self.shared) == 0
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
            // Untracked: an expiry that aborted nothing changed no partition.
            let expired = transactions.expire(partitions.untracked(), offsets, now);
            if !matches!(&expired, Ok(ids) if ids.is_empty()) {
                partitions.touch_all();
            }
            expired
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

    /// Closes this handle the way the book's `await cluster.close()` does,
    /// writing the HW checkpoint and returning its error, where dropping
    /// the last handle can only ignore it. Other clones keep the cluster
    /// open (their last drop writes the checkpoint again if an HW moved).
    pub fn close(self) -> Result<()> {
        self.flush()
    }

    /// One partition's replicas, leader and leader epoch, as `metadata.json`
    /// holds them (the book's `cluster.partition_metadata(tp)`).
    pub fn partition_metadata(&self, tp: &TopicPartition) -> Result<PartitionMetadata> {
        self.with_state(|s| {
            s.metadata()
                .partition(tp)
                .cloned()
                .ok_or_else(|| MiniKafkaError::UnknownTopicOrPartition(tp.to_string()))
        })
    }

    /// The leader's log end offset of `tp` (the book's
    /// `cluster.leader_log(tp).leo`), in one `Result`.
    pub fn log_end_offset(&self, tp: &TopicPartition) -> Result<i64> {
        self.leader_log(tp)?.log_end_offset()
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
        self.create_topic_stamped(
            name,
            partitions,
            replication_factor,
            TimestampType::CreateTime,
        )
    }

    /// [`Self::create_topic`] with the topic's timestamp type, kept in its
    /// metadata (LogAppendTime: the leader stamps what it appends).
    pub fn create_topic_stamped(
        &self,
        name: &str,
        partitions: u32,
        replication_factor: u32,
        timestamp_type: TimestampType,
    ) -> Result<()> {
        self.create_topic_configured(
            name,
            partitions,
            replication_factor,
            timestamp_type,
            TopicConfig::default(),
        )
    }

    /// [`Self::create_topic_stamped`] with the topic's cleaning config, kept
    /// in its metadata for a cleaner to follow (the engine cleans only when
    /// asked: the `retention` and `compact` actions).
    pub fn create_topic_configured(
        &self,
        name: &str,
        partitions: u32,
        replication_factor: u32,
        timestamp_type: TimestampType,
        config: TopicConfig,
    ) -> Result<()> {
        topic_config::check_topic_config(&config)?;
        self.mutate(|state, now| {
            let brokers = state.config.broker_ids.clone();
            let mut topic =
                state
                    .metadata
                    .plan_topic(name, partitions, replication_factor, &brokers)?;
            if let Some((from, kept)) = state.ready_name(name, partitions)? {
                topic.txn_from = Some(from);
                topic.txn_kept = kept;
            }
            topic.timestamp_type = timestamp_type;
            topic.config = config;
            // Its replicas on stopped brokers start stopped and out of the
            // ISR (`open_new_partitions`).
            let subject = format!("topic {name:?}: its");
            let scanned = state.ready_new_partitions(name, topic.partitions_mut(), &subject)?;
            let mark = topic.txn_from.map(|from| (from, topic.txn_kept.clone()));
            state.metadata.add_topic(name, topic)?;
            if let Some((from, kept)) = mark {
                state.transactions.forget_topic_before(name, from, &kept);
            }
            state.open_new_partitions(scanned, now)
        })
    }

    /// A topic's timestamp type, or `None` for a topic that does not exist.
    pub fn timestamp_type(&self, topic: &str) -> Option<TimestampType> {
        self.lock()
            .metadata
            .topics()
            .get(topic)
            .map(|t| t.timestamp_type)
    }

    /// Every topic's cleaning config, by name (the default for the book's
    /// topics).
    pub fn topic_configs(&self) -> BTreeMap<String, TopicConfig> {
        self.lock()
            .metadata
            .topics()
            .iter()
            .map(|(name, t)| (name.clone(), t.config))
            .collect()
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

    /// Number of partitions of `topic` (`UnknownTopicOrPartition` when
    /// there is no such topic).
    pub fn partition_count(&self, topic: &str) -> Result<u32> {
        self.lock().partition_count(topic)
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
    /// A read: it changes nothing (no ISR or timeout re-evaluation).
    pub fn last_stable_offset(&self, tp: &TopicPartition) -> Result<i64> {
        self.lock().last_stable_offset(tp)
    }

    /// The transaction coordinator (E10): `transactions().begin("tx-1")`.
    pub fn transactions(&self) -> TransactionManager {
        TransactionManager {
            cluster: self.clone(),
        }
    }

    /// The current leader's log of `tp`.
    pub fn leader_log(&self, tp: &TopicPartition) -> Result<LogHandle> {
        let broker = self.lock().partition(tp)?.leader_id();
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
                match set.fetch_followers_once(now) {
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
        self.mutate(|state, now| state.partition_mut(tp)?.fetch_followers_once(now))
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
    /// epoch; the coordinator's markers on `tp` become those the new leader
    /// holds. Returns the new leader epoch.
    pub fn promote(&self, tp: &TopicPartition, broker: BrokerId) -> Result<u32> {
        self.mutate(|state, now| {
            let current = state.partition(tp)?.leader_epoch();
            if current >= MAX_LEADER_EPOCH {
                // Refused, not wrapped to 0 (issue 17, item 3).
                return Err(MiniKafkaError::InvalidPromotion {
                    tp: tp.to_string(),
                    broker,
                    reason: format!(
                        "the leader epoch is already the largest, {MAX_LEADER_EPOCH} (Kafka's leader epochs are int32)"
                    ),
                });
            }
            let epoch = state.partition_mut(tp)?.promote(broker, now)?;
            state.metadata.set_leader(tp, broker, epoch)?;
            let ClusterState {
                transactions,
                partitions,
                ..
            } = state;
            let leader = &partitions[tp].leader().log;
            transactions.learn_markers(tp, leader);
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
        self.observe_crash(&state, now, None);
        let config = state.config.clone();
        let reopened = reopen_or_go_down(&mut state, config, now, true)?;
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
            TearTarget::Journal => {
                // A journal linked by a time-travel checkpoint gets its own
                // copy first: the cut may reach below the checkpoint's
                // length (`shared_files`).
                state.transactions.unshare_journal()?;
                state.transactions.journal_path().to_path_buf()
            }
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
        self.observe_crash(&state, now, Some(&torn));
        let reopened = reopen_or_go_down(&mut state, config, now, false)?;
        *state = reopened;
        self.shared.generation.fetch_add(1, Ordering::SeqCst);
        Ok((torn, state.last_recovery.clone()))
    }

    /// What recovery repaired when the cluster was last opened.
    pub fn last_recovery(&self) -> RecoveryReport {
        self.lock().last_recovery.clone()
    }
}
