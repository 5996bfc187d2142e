//! Retention and compaction on a cluster's partition (E16): the book's
//! `RetentionManager` and `LogCompactor` (`log/retention.rs`,
//! `log/compaction.rs`) run on each running replica's log, as each Kafka
//! broker's log manager and cleaner run on the logs it holds. The book
//! runs them on a lone log; what a cluster adds is written down in
//! docs/engine-decisions.md ("Retention and compaction in a cluster"):
//! a replica deletes only segments below the high watermark, and a
//! follower moves its log start up to its leader's when it fetches
//! (`PartitionReplicaSet::fetch_one`).

use std::collections::BTreeMap;

use super::BrokerCluster;
use crate::engine::config::BrokerId;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::core::recovery::RecoveryReport;
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::log::{CompactionResult, LogCompactor, RetentionManager};

/// What retention deleted on each replica, and the leader's log start after.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetentionOutcome {
    /// Each running replica's deleted segments (their base offsets).
    pub deleted: BTreeMap<BrokerId, Vec<i64>>,
    /// The leader's log start offset before and after.
    pub log_start_before: i64,
    pub log_start_offset: i64,
}

/// Where a compaction may be cut by a crash (E13, E16).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionCut {
    /// At the book's `before_swap`: the compacted log is written and
    /// fsynced beside the live one, nothing is swapped yet.
    BeforeSwap,
}

impl CompactionCut {
    /// The recording's spelling.
    pub fn name(self) -> &'static str {
        match self {
            CompactionCut::BeforeSwap => "before_swap",
        }
    }
}

impl std::str::FromStr for CompactionCut {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "before_swap" => Ok(CompactionCut::BeforeSwap),
            other => Err(format!(
                "unknown cut point {other:?}: the compaction's cut point is \"before_swap\""
            )),
        }
    }
}

/// What a compaction did on each running replica; with a cut, the
/// recovery of the crash that stopped it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactionOutcome {
    pub results: BTreeMap<BrokerId, CompactionResult>,
    pub crashed: Option<RecoveryReport>,
}

impl BrokerCluster {
    /// Applies retention to `tp` (the book's `RetentionManager.apply`) on
    /// every running replica: by time (`retention_ms`) and by bytes
    /// (`retention_bytes`), deleting closed segments below the high
    /// watermark, oldest first.
    pub fn apply_retention(
        &self,
        tp: &TopicPartition,
        retention_ms: Option<u64>,
        retention_bytes: Option<u64>,
    ) -> Result<RetentionOutcome> {
        if retention_ms.is_none() && retention_bytes.is_none() {
            return Err(MiniKafkaError::InvalidCleanup(
                "give retention_ms, retention_bytes or both".into(),
            ));
        }
        let manager = RetentionManager::with_clock(self.shared.clock.clone());
        self.mutate(|state, _| {
            let set = state.partition_mut(tp)?;
            let high_watermark = set.high_watermark();
            let mut outcome = RetentionOutcome {
                log_start_before: set.leader().log.log_start_offset(),
                ..RetentionOutcome::default()
            };
            for broker in set.assignment().to_vec() {
                let replica = set.replica_mut(broker)?;
                if replica.stopped {
                    continue;
                }
                let deleted = manager.apply_below(
                    &mut replica.log,
                    retention_ms,
                    retention_bytes,
                    high_watermark,
                )?;
                outcome.deleted.insert(broker, deleted);
            }
            outcome.log_start_offset = set.leader().log.log_start_offset();
            Ok(outcome)
        })
    }

    /// Kafka's DeleteRecords on `tp`: moves the leader's log start up to
    /// `offset` (`-1`: the high watermark) by deleting the closed segments
    /// wholly below it, as retention does; followers follow at their next
    /// fetch. The log start stays segment-aligned (the book's), so it may
    /// stop below `offset`. An offset past the high watermark is
    /// refused. Returns the leader's log start after.
    pub fn delete_records(&self, tp: &TopicPartition, offset: i64) -> Result<i64> {
        self.mutate(|state, _| {
            let set = state.partition_mut(tp)?;
            let high_watermark = set.high_watermark();
            let offset = if offset == -1 { high_watermark } else { offset };
            let leader = set.leader();
            let start = leader.log.log_start_offset();
            if offset < 0 || offset > high_watermark {
                return Err(MiniKafkaError::OffsetOutOfRange {
                    what: tp.to_string(),
                    offset,
                    start,
                    end: high_watermark,
                });
            }
            let broker = set.leader_id();
            let replica = set.replica_mut(broker)?;
            if replica.stopped {
                return Err(MiniKafkaError::LeaderNotAvailable {
                    tp: tp.to_string(),
                    broker,
                });
            }
            replica.delete_segments_below(offset)?;
            Ok(replica.log.log_start_offset())
        })
    }

    /// Compacts `tp`'s closed segments by key (the book's
    /// `LogCompactor.compact`) on every running replica, the leader first.
    /// With `cut`, the process crashes at that point of the first
    /// replica's compaction and the cluster recovers (E13).
    pub fn compact(
        &self,
        tp: &TopicPartition,
        delete_retention_ms: u64,
        cut: Option<CompactionCut>,
    ) -> Result<CompactionOutcome> {
        let clock = self.shared.clock.clone();
        let compacted = self.mutate(|state, _| {
            let set = state.partition_mut(tp)?;
            let mut order = vec![set.leader_id()];
            order.extend(set.assignment().iter().filter(|&&b| b != set.leader_id()));
            let mut results = BTreeMap::new();
            for broker in order {
                let replica = set.replica_mut(broker)?;
                if replica.stopped {
                    continue;
                }
                let mut compactor = LogCompactor::with_clock(clock.clone(), delete_retention_ms);
                if cut == Some(CompactionCut::BeforeSwap) {
                    compactor = compactor.before_swap(Box::new(|| Err(MiniKafkaError::Crashed)));
                }
                results.insert(broker, compactor.compact(&mut replica.log)?);
            }
            Ok(results)
        });
        match compacted {
            Ok(results) => Ok(CompactionOutcome {
                results,
                crashed: None,
            }),
            Err(MiniKafkaError::Crashed) if cut.is_some() => Ok(CompactionOutcome {
                results: BTreeMap::new(),
                crashed: Some(self.crash()?),
            }),
            Err(e) => Err(e),
        }
    }
}
