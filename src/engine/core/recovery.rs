//! `RecoveryReport`: what opening a data directory repaired (E2, E13). The
//! transaction layer adds its journal's findings to it.

use crate::engine::config::BrokerId;
use crate::engine::core::batch::ControlType;
use crate::engine::core::metadata::TopicPartition;
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
}

impl RecoveryReport {
    /// True when recovery repaired and completed nothing.
    pub fn is_clean(&self) -> bool {
        self.logs_truncated.is_empty()
            && self.journal_truncated_bytes == 0
            && self.completed.is_empty()
            && self.markers_resent.is_empty()
    }
}
