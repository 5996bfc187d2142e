//! Opening a data directory, and reopening it after a crash (SPEC §3 E13,
//! §5). Kept apart from the facade because its one job, recovery, has one
//! rule every change must keep: every log is read and checked before anything
//! is repaired, so a directory that must be refused is refused as found.
//!
//! The open runs in two phases: `scan_logs` reads every replica log the
//! metadata names and writes nothing; only then does
//! `ClusterState::open_with` repair tails, re-elect leaders whose log was
//! cut, run the transaction recovery of E12 and persist what changed.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use super::delete;
use super::memo::RememberedLogs;
use super::reader_cache::{LeaderAt, PrefixFold};
use super::state::ClusterState;
use crate::engine::config::{BrokerId, MiniKafkaConfig};
use crate::engine::consumer::OffsetStore;
use crate::engine::consumer::group::GroupCoordinator;
use crate::engine::core::metadata::{
    MAX_LEADER_EPOCH, MetadataStore, PartitionMetadata, TopicPartition,
};
use crate::engine::core::partitioner::Partitioner;
use crate::engine::core::recovery::{
    LeaderReelection, LogPosition, LogTruncation, RecoveryReport, SwapRepaired, most_up_to_date,
};
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::log::PartitionLog;
use crate::engine::log::partition_log::LogConfig;
use crate::engine::producer::ProducerIdentities;
use crate::engine::repl_support::checkpoint::HighWatermarkCheckpoint;
use crate::engine::replication::{PartitionReplicaSet, Replica};
use crate::engine::time_travel::log::{LogCarry, ScannedLog};
use crate::engine::time_travel::transactions::{CoordinatorCarry, CoordinatorMemo};
use crate::engine::transaction::TransactionCoordinator;
use crate::engine::txn_support::instances::Markers as KnownMarkers;

/// The directory of one replica's log: `broker-<id>/<topic>-<partition>`.
pub fn replica_dir(config: &MiniKafkaConfig, broker: BrokerId, tp: &TopicPartition) -> PathBuf {
    config
        .data_dir
        .join(format!("broker-{broker}"))
        .join(tp.to_string())
}

/// What a crash's reopen may reuse of the state it replaces (issue 17 item
/// 12; docs/engine-decisions.md, "A crash's recovery reads what changed
/// since the last one"): the coordinator's replayed journal and each
/// replica log's summaries, moved out of the crashed state. Each is
/// trusted only where the file still begins with the bytes it came from.
#[derive(Debug, Default)]
pub(super) struct Carried {
    coordinator: Option<CoordinatorCarry>,
    logs: BTreeMap<(TopicPartition, BrokerId), LogCarry>,
    /// The markers the crashed coordinator knew (when nothing was in
    /// flight), and each partition's leader then: kept where the reopened
    /// coordinator is the carried one and the leader's log is the crashed
    /// one ([`carried_log_is`]).
    markers: Option<KnownMarkers>,
    leaders: BTreeMap<TopicPartition, BrokerId>,
}

/// Where an open finds the coordinator's markers.
#[derive(Debug, Clone, Copy)]
struct MarkerSource {
    /// The coordinator came from a checkpoint's memo, with the markers it
    /// knew then.
    known: bool,
    /// The coordinator is the crashed one's carried state with nothing
    /// replayed after it: where a leader's log is the crashed one too, the
    /// markers the crashed coordinator knew there hold.
    carried: bool,
}

/// Whether markers were carried, `tp`'s leader is the crashed state's and
/// its log is the crashed log, summary for summary (those it was lent, then
/// the ones it read again compared one by one): the markers known there
/// then are the log's.
fn carried_log_is(carried: &Carried, tp: &TopicPartition, set: &PartitionReplicaSet) -> bool {
    let leader = set.leader_id();
    if carried.markers.is_none() || carried.leaders.get(tp) != Some(&leader) {
        return false;
    }
    let Some(carry) = carried.logs.get(&(tp.clone(), leader)) else {
        return false;
    };
    let log = &set.leader().log;
    let crashed = carry.crashed_len();
    log.batch_summaries().len() == crashed && carry.begins_log(log, crashed)
}

impl ClusterState {
    /// Moves out what a crash's reopen may reuse (see [`Carried`]).
    pub(super) fn take_carried(&mut self) -> Carried {
        // Markers are carried only from a coordinator with no commit, abort
        // or send in flight (as a time-travel checkpoint's are): none of
        // its markers can be half written.
        let markers = match self.transactions.is_quiet() {
            true => Some(self.transactions.carry_markers()),
            false => None,
        };
        let coordinator = self.transactions.take_carry();
        let mut leaders = BTreeMap::new();
        let mut logs = BTreeMap::new();
        for (tp, set) in self.partitions.untracked().iter_mut() {
            leaders.insert(tp.clone(), set.leader_id());
            for broker in set.assignment().to_vec() {
                if let Some(carry) = set
                    .replica_mut(broker)
                    .ok()
                    .and_then(|r| r.log.take_carry())
                {
                    logs.insert((tp.clone(), broker), carry);
                }
            }
        }
        Carried {
            coordinator,
            logs,
            markers,
            leaders,
        }
    }

    /// Gives back what [`Self::take_carried`] took (a reopen that failed:
    /// this stale state is what the dashboard keeps showing).
    pub(super) fn restore_carried(&mut self, carried: Carried) {
        if let Some(carry) = carried.coordinator {
            self.transactions.restore_carry(carry);
        }
        let partitions = self.partitions.untracked();
        for ((tp, broker), carry) in carried.logs {
            if let Some(replica) = partitions
                .get_mut(&tp)
                .and_then(|set| set.replica_mut(broker).ok())
            {
                replica.log.restore_carry(carry);
            }
        }
    }

    /// Keeps `tp`'s reader `fold` of the crashed state in this reopened
    /// one, where its leader's log trusted the folded summaries from
    /// `carried` (`ReaderCache::carry_across_crash`).
    fn carry_fold(&self, tp: &TopicPartition, fold: &PrefixFold, carried: &Carried) {
        let Ok(set) = self.partition(tp) else {
            return;
        };
        let leader = set.leader();
        let Some(carry) = carried.logs.get(&(tp.clone(), set.leader_id())) else {
            return;
        };
        if leader.stopped {
            return;
        }
        let at = LeaderAt {
            leader: set.leader_id(),
            leader_epoch: set.leader_epoch(),
            log_start: leader.log.log_start_offset().max(0),
        };
        self.reader_cache.carry_across_crash(
            tp,
            fold,
            carry.lineage(),
            |k| carry.begins_log(&leader.log, k),
            at,
            &leader.log,
        );
    }

    /// Returns to `carried` what this state's logs were lent from it.
    fn give_back(&mut self, carried: &mut Carried) {
        for ((tp, broker), carry) in carried.logs.iter_mut() {
            if let Some(replica) = self
                .partitions
                .untracked()
                .get_mut(tp)
                .and_then(|set| set.replica_mut(*broker).ok())
            {
                replica.log.give_back(carry);
            }
        }
    }

    /// Opens the data directory: metadata, offsets, identities, every replica
    /// log (repairing bad active-segment tails), and the HW checkpoint.
    pub(super) fn open(config: MiniKafkaConfig, now_ms: u64) -> Result<Self> {
        Self::open_with(config, now_ms, true, None)
    }

    /// Opens the data directory; `recover` runs the transaction recovery of
    /// E12 (a time-travel restore skips it: its checkpoint is not a crash).
    /// A restore passes the coordinator's memo when its checkpoint kept one,
    /// and the journal is then not read again.
    pub(super) fn open_with(
        config: MiniKafkaConfig,
        now_ms: u64,
        recover: bool,
        coordinator: Option<&CoordinatorMemo>,
    ) -> Result<Self> {
        Self::open_carrying(
            config,
            now_ms,
            recover,
            Remembered {
                coordinator,
                logs: None,
            },
            &mut Carried::default(),
        )
    }

    /// [`Self::open_with`] after a crash, reusing what `carried` holds of
    /// the crashed state where the files still begin with the bytes it was
    /// read from (see [`Carried`]). What it takes it gives back when the
    /// open fails, for the stale state to keep showing.
    pub(super) fn open_carrying(
        config: MiniKafkaConfig,
        now_ms: u64,
        recover: bool,
        remembered: Remembered<'_>,
        carried: &mut Carried,
    ) -> Result<Self> {
        let Remembered { coordinator, logs } = remembered;
        validate_config(&config)?;
        let dir = &config.data_dir;
        fs::create_dir_all(dir).map_err(|e| MiniKafkaError::io(dir, e))?;
        let mut metadata = MetadataStore::open(dir)?;
        let mut offsets = OffsetStore::open(dir)?;
        let mut identities = ProducerIdentities::open(dir)?;
        let checkpoint = HighWatermarkCheckpoint::open(dir)?;
        // A topic deletion a crash cut short is finished: its topics are
        // not opened, and the deletion is written once everything was
        // checked (`finish_open`).
        let mut deletions = delete::forget_deleting(&config, &mut metadata, &mut offsets)?;
        // Every log is read and checked before anything is repaired (the
        // journal's tail, a segment's tail, an index): what must be refused
        // (a bad closed segment, a replica on an unconfigured broker) is
        // refused with the directory as found (SPEC §5), and each log is
        // read once (P4).
        let scanned = scan_logs(&config, &metadata, carried, logs)?;
        check_open_files(metadata.path(), "its", &scanned, 0)?;
        let mut last_recovery = RecoveryReport {
            deletions_finished: deletions.topics.clone(),
            ..RecoveryReport::default()
        };
        let had_carry = carried.coordinator.is_some();
        let remembered = match coordinator {
            Some(memo) => TransactionCoordinator::open_from_memo(
                dir,
                config.rules,
                config.transaction_timeout_ms,
                memo,
            )?,
            None => None,
        };
        // A coordinator from a checkpoint's memo knows its markers.
        let markers_known = remembered.is_some();
        let mut transactions = match remembered {
            Some(transactions) => transactions,
            None => TransactionCoordinator::reopen(
                dir,
                config.rules,
                config.transaction_timeout_ms,
                &mut last_recovery,
                &mut carried.coordinator,
            )?,
        };
        let took_carry = had_carry && carried.coordinator.is_none();
        // Topics created again under a deleted name: the coordinator
        // forgets what earlier transactions wrote under it.
        if delete::forget_earlier_topics(&mut metadata, &mut transactions) {
            deletions.metadata_changed();
        }
        // Kafka rules: a known transactional id's later epochs are in the
        // journal's frames only.
        for (name, identity) in transactions.journaled_identities() {
            identities.learn(&name, identity);
        }
        metadata.set_sync(config.sync_writes);
        offsets.set_sync(config.sync_writes);
        identities.set_sync(config.sync_writes);
        transactions.set_sync(config.sync_writes);
        transactions.set_group_commit(config.rules.group_commit_journal)?;
        let mut state = Self {
            metadata,
            offsets,
            identities,
            transactions,
            checkpoint,
            partitions: Default::default(),
            partitioner: Partitioner::default(),
            stopped: BTreeSet::new(),
            last_recovery,
            down: None,
            reader_cache: Default::default(),
            groups: GroupCoordinator::with_protocol(
                config.group_session_timeout_ms,
                config.rules.group_protocol,
            ),
            config,
        };
        // The reopened coordinator's instances are the crashed one's, with
        // no frame replayed after them: the markers it knew still have
        // their owners.
        let same_instances = took_carry && state.transactions.replayed_on_open() == 0;
        let markers = MarkerSource {
            known: markers_known,
            carried: same_instances,
        };
        // The deletions a crash cut short are written first, once every log
        // was checked.
        let finished = delete::finish_deletions(&deletions, &state.metadata, &mut state.offsets)
            .and_then(|()| state.finish_open(scanned, now_ms, recover, markers, logs, carried));
        match finished {
            Ok(()) => Ok(state),
            Err(e) => {
                if took_carry {
                    carried.coordinator = state.transactions.carry_back();
                }
                state.give_back(carried);
                Err(e)
            }
        }
    }

    /// The second phase of an open, once every log was read and checked and
    /// the journal replayed: repairs, re-elections, the recovery of E12.
    /// `markers_known`: the coordinator came from a checkpoint's memo, with
    /// the markers it knew then, so they are not looked for in the logs.
    fn finish_open(
        &mut self,
        scanned: Vec<ScannedPartition>,
        now_ms: u64,
        recover: bool,
        markers: MarkerSource,
        remembered: Option<&RememberedLogs>,
        carried: &mut Carried,
    ) -> Result<()> {
        let state = self;
        let mut reelected = Vec::new();
        for (tp, meta, logs) in scanned {
            let (set, reelection) =
                state.open_partition_carrying(&tp, &meta, logs, now_ms, remembered, carried)?;
            state.partitions.insert_tracked(tp, set);
            reelected.extend(reelection);
        }
        // A repair changed a log or a leader since the memo's markers.
        let repaired = !reelected.is_empty() || !state.last_recovery.logs_truncated.is_empty();
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
        } = &mut *state;
        if !markers.known || repaired {
            for (tp, set) in partitions.iter() {
                let log = &set.leader().log;
                match markers.carried && !repaired {
                    true if carried_log_is(carried, tp, set) => {
                        let on_tp = carried.markers.as_mut().and_then(|m| m.remove(tp));
                        transactions.adopt_markers(tp, on_tp, log)
                    }
                    _ => transactions.learn_markers(tp, log),
                }
            }
        }
        if recover {
            transactions.recover(partitions, offsets, now_ms, last_recovery)?;
            // Kafka rules: an ONGOING transaction found past its timeout
            // aborts now, not at whatever engine call comes next (a read of
            // the state would otherwise change it half way through).
            transactions.expire(partitions, offsets, now_ms)?;
        }
        state.update_all(now_ms);
        state.persist_high_watermarks()
    }

    /// Readies the partitions of `topic` that a new topic
    /// (`create_topic`) or a growth (`create_partitions`) brings, before
    /// `metadata.json` names them; the caller then adds them to the
    /// metadata and opens what this returns with
    /// [`Self::open_new_partitions`]. One function for both, so the two ways
    /// a partition comes into being cannot drift apart:
    ///
    /// - each partition (in `partitions`' order, its number and planned
    ///   metadata) is led by its first running replica, as Kafka elects from
    ///   live replicas (with no broker stopped the plan's leader stays: the
    ///   book's placement);
    /// - the logs an earlier topic of the name left under its directories
    ///   are read and checked, and the files they all need counted against
    ///   the process's limit, before anything is written: a bad log, or
    ///   too many files (partitions whose files cannot all be opened would
    ///   be half made, issue 17), refuses the topic or the growth with
    ///   nothing changed. `subject` names the replicas in that refusal.
    pub(super) fn ready_new_partitions<'a>(
        &self,
        topic: &str,
        partitions: impl IntoIterator<Item = (u32, &'a mut PartitionMetadata)>,
        subject: &str,
    ) -> Result<Vec<ScannedPartition>> {
        let mut scanned = Vec::new();
        for (p, meta) in partitions {
            if let Some(&running) = meta.replicas.iter().find(|b| !self.stopped.contains(b)) {
                meta.leader_id = running;
            }
            let tp = TopicPartition::new(topic, p);
            let logs = scan_partition(&self.config, &self.metadata, &tp, meta)?;
            scanned.push((tp, meta.clone(), logs));
        }
        check_open_files(
            self.metadata.path(),
            subject,
            &scanned,
            open_segments(&self.partitions),
        )?;
        Ok(scanned)
    }

    /// Opens the partitions a new topic or a growth brings, once
    /// `metadata.json` names them: each scanned partition's replica set
    /// (its replicas on stopped brokers opened stopped), a leader
    /// re-election recovery chose over logs an earlier incarnation left
    /// written back, the set tracked.
    pub(super) fn open_new_partitions(
        &mut self,
        scanned: Vec<ScannedPartition>,
        now_ms: u64,
    ) -> Result<()> {
        for (tp, meta, logs) in scanned {
            let (mut set, reelection) = self.open_partition(&tp, &meta, logs, now_ms)?;
            for &b in meta.replicas.iter().filter(|b| self.stopped.contains(b)) {
                set.open_stopped(b, now_ms);
            }
            if let Some(e) = reelection {
                self.metadata
                    .set_leader(&e.tp, e.new_leader, e.leader_epoch)?;
            }
            self.partitions.insert_tracked(tp, set);
        }
        Ok(())
    }

    /// Opens every scanned replica log of `tp` (repairing torn tails) and
    /// assembles its replica set; also returns the leader re-election
    /// recovery chose, for the caller to persist.
    pub(super) fn open_partition(
        &mut self,
        tp: &TopicPartition,
        meta: &PartitionMetadata,
        logs: Vec<(BrokerId, ScannedLog)>,
        now_ms: u64,
    ) -> Result<(PartitionReplicaSet, Option<LeaderReelection>)> {
        self.open_partition_carrying(tp, meta, logs, now_ms, None, &mut Carried::default())
    }

    /// [`Self::open_partition`] of logs scanned with `carried`'s carries:
    /// on an error, what the logs opened so far were lent goes back. A log
    /// checked against a checkpoint's memo (`remembered`) gets the producer
    /// state the memo kept with it.
    fn open_partition_carrying(
        &mut self,
        tp: &TopicPartition,
        meta: &PartitionMetadata,
        logs: Vec<(BrokerId, ScannedLog)>,
        now_ms: u64,
        remembered: Option<&RememberedLogs>,
        carried: &mut Carried,
    ) -> Result<(PartitionReplicaSet, Option<LeaderReelection>)> {
        let mut replicas: Vec<Replica> = Vec::new();
        let give_back = |replicas: &mut Vec<Replica>, carried: &mut Carried| {
            for r in replicas {
                if let Some(carry) = carried.logs.get_mut(&(tp.clone(), r.broker)) {
                    r.log.give_back(carry);
                }
            }
        };
        let mut leader_cut = false;
        for (broker, scanned) in logs {
            let producers = remembered
                .filter(|_| scanned.is_remembered())
                .and_then(|r| r.get(&(tp.clone(), broker)))
                .map(|m| m.producers.clone());
            let carry = carried.logs.get_mut(&(tp.clone(), broker));
            let (log, recovery) = match scanned.open_carrying(carry) {
                Ok(opened) => opened,
                Err(e) => {
                    give_back(&mut replicas, carried);
                    return Err(e);
                }
            };
            if let Some(repair) = recovery.swap {
                self.last_recovery.swaps_repaired.push(SwapRepaired {
                    tp: tp.clone(),
                    broker,
                    repair,
                });
            }
            if recovery.truncated_bytes > 0 {
                leader_cut |= broker == meta.leader_id;
                self.last_recovery.logs_truncated.push(LogTruncation {
                    tp: tp.clone(),
                    broker,
                    truncated_bytes: recovery.truncated_bytes,
                    reason: recovery.reason.unwrap_or_default(),
                });
            }
            replicas.push(match producers.filter(|_| recovery.truncated_bytes == 0) {
                Some(state) => Replica::with_producer_state(broker, log, state, now_ms),
                None => Replica::new(broker, log, now_ms),
            });
        }
        let checkpointed = self.checkpoint.get(tp);
        let reelection = reelect_if_truncated(tp, meta, &replicas, leader_cut, checkpointed);
        if reelection.is_some() && meta.leader_epoch >= MAX_LEADER_EPOCH {
            give_back(&mut replicas, carried);
            return Err(MiniKafkaError::corrupt(
                self.metadata.path(),
                format!(
                    "{tp} needs a new leader, but its leader epoch is already the largest, {MAX_LEADER_EPOCH}"
                ),
            ));
        }
        let (leader, leader_epoch) = reelection
            .as_ref()
            .map_or((meta.leader_id, meta.leader_epoch), |e| {
                (e.new_leader, e.leader_epoch)
            });
        // The checkpointed HW, or (for a directory without one) the lowest
        // LEO; `PartitionReplicaSet::new` clamps it to the leader's log.
        let hw =
            checkpointed.unwrap_or_else(|| replicas.iter().map(Replica::leo).min().unwrap_or(0));
        let set = PartitionReplicaSet::new(
            tp.clone(),
            meta.replicas.clone(),
            replicas,
            leader,
            leader_epoch,
            hw,
            self.replication_settings(&tp.topic),
        )
        .with_timestamp_type(
            self.metadata
                .topics()
                .get(&tp.topic)
                .map(|t| t.timestamp_type)
                .unwrap_or_default(),
        );
        Ok((set, reelection))
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
        .map_or(0, Replica::leo);
    if !leader_cut && checkpointed_hw.is_none_or(|hw| leader_leo >= hw) {
        return None;
    }
    let candidates: Vec<(BrokerId, LogPosition)> = replicas
        .iter()
        .map(|r| {
            let last_epoch = r.log.batch_summaries().last().map(|b| b.leader_epoch);
            (r.broker, (last_epoch, r.leo()))
        })
        .collect();
    let elected = most_up_to_date(meta.leader_id, &candidates);
    (elected != meta.leader_id).then(|| LeaderReelection {
        tp: tp.clone(),
        old_leader: meta.leader_id,
        new_leader: elected,
        leader_epoch: meta.leader_epoch.saturating_add(1),
    })
}

/// Files an open keeps besides its segments: the journal, the lock,
/// standard streams, the runtime's and a server's sockets, a recording.
const OTHER_OPEN_FILES: u64 = 64;

/// Refuses, before anything is created, a directory whose replicas would
/// need more open files than this process may have (two per segment: the
/// log and its index stay open). Today's alternative was an open that
/// failed with "Too many open files" after creating thousands of broker
/// directories (issue 17, item 3).
///
/// `subject` names the replicas in the message ("its" for the directory's,
/// a topic for a new topic's); `open_segments` are those already open.
fn check_open_files(
    metadata: &std::path::Path,
    subject: &str,
    scanned: &[ScannedPartition],
    open_segments: u64,
) -> Result<()> {
    let replicas: usize = scanned.iter().map(|(_, _, logs)| logs.len()).sum();
    let segments: u64 = scanned
        .iter()
        .flat_map(|(_, _, logs)| logs.iter().map(|(_, log)| log.segment_count() as u64))
        .sum();
    let needed = 2 * (segments + open_segments) + OTHER_OPEN_FILES;
    let limit = open_file_limit();
    if needed > limit {
        return Err(MiniKafkaError::TooLarge {
            path: metadata.to_path_buf(),
            reason: format!(
                "{subject} {replicas} replicas need {needed} open files (two per segment), more than this process may open ({limit}; see `ulimit -n`)"
            ),
        });
    }
    Ok(())
}

/// Segments the open logs of `partitions` hold (each keeps two files open).
fn open_segments(partitions: &BTreeMap<TopicPartition, PartitionReplicaSet>) -> u64 {
    partitions
        .values()
        .flat_map(|set| {
            set.assignment()
                .iter()
                .filter_map(|&b| set.replica(b).ok())
                .map(|r| r.log.segments().len() as u64)
        })
        .sum()
}

/// The soft `RLIMIT_NOFILE` of this process.
fn open_file_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
        limit.rlim_cur
    } else {
        u64::MAX
    }
}

/// What a time-travel restore's open may take from the checkpoint's memo
/// instead of reading the files (issue 17 item 11): the coordinator's
/// state, and each replica log's parsed state. A real open from disk has
/// neither.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Remembered<'a> {
    pub(super) coordinator: Option<&'a CoordinatorMemo>,
    pub(super) logs: Option<&'a RememberedLogs>,
}

/// One partition's replica logs, read and checked but not opened.
pub(super) type ScannedPartition = (
    TopicPartition,
    PartitionMetadata,
    Vec<(BrokerId, ScannedLog)>,
);

/// Reads and checks every replica log the metadata names, writing nothing:
/// the first phase of an open (see `ClusterState::open_with`).
/// A log whose carry in `carried` matches is validated only after it; a
/// log of a checkpoint's copy whose files match the memo `remembered`
/// kept of it is not read at all (`PartitionLog::scan_remembered`).
fn scan_logs(
    config: &MiniKafkaConfig,
    metadata: &MetadataStore,
    carried: &Carried,
    remembered: Option<&RememberedLogs>,
) -> Result<Vec<ScannedPartition>> {
    let mut out = Vec::new();
    for (name, topic) in metadata.topics() {
        for (p, meta) in topic.partitions() {
            let tp = TopicPartition::new(name.clone(), p);
            let logs = scan_partition_carrying(config, metadata, &tp, meta, carried, remembered)?;
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
    scan_partition_carrying(config, metadata, tp, meta, &Carried::default(), None)
}

/// [`scan_partition`] with the carries of a crash's reopen.
fn scan_partition_carrying(
    config: &MiniKafkaConfig,
    metadata: &MetadataStore,
    tp: &TopicPartition,
    meta: &PartitionMetadata,
    carried: &Carried,
    remembered: Option<&RememberedLogs>,
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
            let dir = replica_dir(config, broker, tp);
            if let Some(memo) = remembered.and_then(|r| r.get(&(tp.clone(), broker)))
                && let Some(scanned) = PartitionLog::scan_remembered(&dir, log_config, &memo.log)?
            {
                return Ok((broker, scanned));
            }
            let carry = carried.logs.get(&(tp.clone(), broker));
            let scanned = PartitionLog::scan_carrying(&dir, log_config, carry)?;
            Ok((broker, scanned))
        })
        .collect()
}

pub(super) fn validate_config(config: &MiniKafkaConfig) -> Result<()> {
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
    if config.group_session_timeout_ms == 0 {
        return Err(invalid("group_session_timeout_ms must be positive".into()));
    }
    Ok(())
}

/// Reopens the data directory after a crash. If recovery fails, the process
/// could not restart: the stale state stays (for the dashboard to show) but
/// goes down, its pending acks fail with `Crashed`, and the error is
/// returned. Recovery may already have cut torn tails under the stale
/// state, so writing through it would corrupt the directory.
///
/// `keep_folds`: the readers' folds (`reader_cache`) of prefixes the
/// reopened logs trusted go on (a plain crash: the journal replays as it
/// was). A tear passes `false`: a torn journal may lose the frames that
/// decided a folded batch.
pub(super) fn reopen_or_go_down(
    state: &mut ClusterState,
    config: MiniKafkaConfig,
    now_ms: u64,
    keep_folds: bool,
) -> Result<ClusterState> {
    // A crash keeps nothing in memory (E13) but what the reopen checks
    // against the files before trusting it: the journal's frames and their
    // replay, each log's summaries, where the files still begin with the
    // bytes they came from (issue 17 item 12).
    let folds = keep_folds.then(|| state.reader_cache.folds());
    let mut carried = state.take_carried();
    let reopened =
        ClusterState::open_carrying(config, now_ms, true, Remembered::default(), &mut carried);
    match &reopened {
        Ok(new) => {
            new.reader_cache.count_from(&state.reader_cache);
            for (tp, fold) in folds.iter().flatten() {
                new.carry_fold(tp, fold, &carried);
            }
        }
        Err(_) => state.restore_carried(carried),
    }
    reopened.inspect_err(|e| {
        state.down = Some(e.to_string());
        for set in state.partitions.values_mut() {
            set.drop_pending();
        }
    })
}
