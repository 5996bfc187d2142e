//! `RecoveryReport`: what opening a data directory repaired (E2, E13). The
//! transaction layer adds its journal's findings to it.

use crate::engine::config::BrokerId;
use crate::engine::core::batch::ControlType;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::log::segment_swap::SwapRepair;
use crate::engine::transaction::model::TransactionState;

/// One replica log whose bad tail was cut on open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogTruncation {
    pub tp: TopicPartition,
    pub broker: BrokerId,
    pub truncated_bytes: u64,
    /// Why the first cut frame was invalid.
    pub reason: String,
}

/// A replica log beside which an interrupted compaction swap was found
/// and repaired on open (E16; `log/segment_swap.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwapRepaired {
    pub tp: TopicPartition,
    pub broker: BrokerId,
    pub repair: SwapRepair,
}

/// A partition whose leader lost part of its log to recovery (E2, E13), so
/// the most up-to-date replica was elected in its place: acknowledged data
/// that followers hold survives a torn leader tail (docs/engine-decisions.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderReelection {
    pub tp: TopicPartition,
    pub old_leader: BrokerId,
    pub new_leader: BrokerId,
    /// The new leader epoch, persisted in `metadata.json`.
    pub leader_epoch: u32,
}

/// A transaction that recovery finished (E12).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletedTransaction {
    pub id: String,
    /// The state it was found in (PREPARE_*).
    pub from: TransactionState,
    /// The state recovery left it in (COMPLETE_*).
    pub to: TransactionState,
}

/// A control marker that recovery wrote because it was missing (kafka rules).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResentMarker {
    pub id: String,
    pub tp: TopicPartition,
    pub control: ControlType,
    pub offset: i64,
}

/// Everything recovery did when the cluster was opened.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecoveryReport {
    /// Logs whose active segment had a bad tail, in partition and broker order.
    pub logs_truncated: Vec<LogTruncation>,
    /// Partitions whose truncated leader was replaced, in partition order.
    pub leaders_reelected: Vec<LeaderReelection>,
    /// Bytes cut from the transaction journal's bad tail.
    pub journal_truncated_bytes: u64,
    /// Why the first cut journal line was bad.
    pub journal_reason: Option<String>,
    /// PREPARE_* transactions that recovery completed.
    pub completed: Vec<CompletedTransaction>,
    /// Markers that recovery re-sent (kafka rules only).
    pub markers_resent: Vec<ResentMarker>,
    /// ONGOING transactions found open; they can be aborted (E14).
    pub left_open: Vec<String>,
    /// Interrupted compaction swaps repaired, in partition and broker order.
    pub swaps_repaired: Vec<SwapRepaired>,
    /// Topics whose deletion a crash cut short and the open finished, in
    /// name order (`core::cluster::delete`).
    pub deletions_finished: Vec<String>,
}

impl RecoveryReport {
    /// True when recovery repaired, elected and completed nothing.
    pub fn is_clean(&self) -> bool {
        self.logs_truncated.is_empty()
            && self.leaders_reelected.is_empty()
            && self.journal_truncated_bytes == 0
            && self.completed.is_empty()
            && self.markers_resent.is_empty()
            && self.swaps_repaired.is_empty()
            && self.deletions_finished.is_empty()
    }
}

/// How up to date a replica's log is, by Raft's rule: the leader epoch of
/// its last batch first (`None` for an empty log), then its log end offset.
pub type LogPosition = (Option<u32>, i64);

/// The replica to lead after the current leader's log was truncated by
/// recovery: the most up to date of `candidates` (broker, position), given
/// in assignment order. Ties keep `current`, then the first in assignment
/// order, so the choice is a pure function of the logs.
pub fn most_up_to_date(current: BrokerId, candidates: &[(BrokerId, LogPosition)]) -> BrokerId {
    let start = candidates
        .iter()
        .find(|(b, _)| *b == current)
        .map_or((current, (None, i64::MIN)), |c| *c);
    candidates
        .iter()
        .fold(start, |best, c| if c.1 > best.1 { *c } else { best })
        .0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_epoch_ranks_before_the_log_end_and_ties_keep_the_leader() {
        // A longer log of an older epoch loses to a shorter one of a newer epoch.
        let c = [(1, (Some(0), 9)), (2, (Some(1), 5)), (3, (Some(1), 4))];
        assert_eq!(most_up_to_date(1, &c), 2);
        // A tie keeps the current leader...
        let c = [(1, (Some(2), 7)), (2, (Some(2), 7)), (3, (Some(1), 3))];
        assert_eq!(most_up_to_date(2, &c), 2);
        assert_eq!(most_up_to_date(1, &c), 1);
        // ...and among others, the first in assignment order.
        let c = [(1, (None, 0)), (3, (Some(0), 4)), (2, (Some(0), 4))];
        assert_eq!(most_up_to_date(1, &c), 3);
        // An empty log ranks below any batch.
        let c = [(1, (None, 0)), (2, (Some(0), 1))];
        assert_eq!(most_up_to_date(1, &c), 2);
    }
}
