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

use super::state::ClusterState;
use crate::engine::config::{BrokerId, MiniKafkaConfig};
use crate::engine::consumer::OffsetStore;
use crate::engine::core::metadata::{
    MAX_LEADER_EPOCH, MetadataStore, PartitionMetadata, TopicPartition,
};
use crate::engine::core::partitioner::Partitioner;
use crate::engine::core::recovery::{
    LeaderReelection, LogPosition, LogTruncation, RecoveryReport, most_up_to_date,
};
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::log::PartitionLog;
use crate::engine::log::partition_log::{LogConfig, ScannedLog};
use crate::engine::producer::ProducerIdentities;
use crate::engine::replication::checkpoint::HighWatermarkCheckpoint;
use crate::engine::replication::{PartitionReplicaSet, Replica};
use crate::engine::transaction::TransactionCoordinator;
use crate::engine::transaction::coordinator::CoordinatorMemo;

/// The directory of one replica's log: `broker-<id>/<topic>-<partition>`.
pub fn replica_dir(config: &MiniKafkaConfig, broker: BrokerId, tp: &TopicPartition) -> PathBuf {
    config
        .data_dir
        .join(format!("broker-{broker}"))
        .join(tp.to_string())
}

impl ClusterState {
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
        check_open_files(metadata.path(), "its", &scanned, 0)?;
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
            partitions: Default::default(),
            partitioner: Partitioner::default(),
            stopped: BTreeSet::new(),
            last_recovery,
            config,
            down: None,
        };
        let mut reelected = Vec::new();
        for (tp, meta, logs) in scanned {
            let (set, reelection) = state.open_partition(&tp, &meta, logs, now_ms)?;
            state.partitions.insert_tracked(tp, set);
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
    pub(super) fn open_partition(
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
        if reelection.is_some() && meta.leader_epoch >= MAX_LEADER_EPOCH {
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
pub(super) fn check_open_files(
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
pub(super) fn open_segments(partitions: &BTreeMap<TopicPartition, PartitionReplicaSet>) -> u64 {
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

/// One partition's replica logs, read and checked but not opened.
pub(super) type ScannedPartition = (
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
pub(super) fn scan_partition(
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
    Ok(())
}

/// Reopens the data directory after a crash. If recovery fails, the process
/// could not restart: the stale state stays (for the dashboard to show) but
/// goes down, its pending acks fail with `Crashed`, and the error is
/// returned. Recovery may already have cut torn tails under the stale
/// state, so writing through it would corrupt the directory.
pub(super) fn reopen_or_go_down(
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
