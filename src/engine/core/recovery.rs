//! `RecoveryReport`: what opening a data directory repaired (E2, E13). The
//! transaction layer adds its journal's findings to it.

use crate::engine::config::BrokerId;
use crate::engine::core::metadata::TopicPartition;

/// One replica log whose bad tail was cut on open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogTruncation {
    pub tp: TopicPartition,
    pub broker: BrokerId,
    pub truncated_bytes: u64,
    /// Why the first cut frame was invalid.
    pub reason: String,
}

/// Everything recovery did when the cluster was opened.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecoveryReport {
    /// Logs whose active segment had a bad tail, in partition and broker order.
    pub logs_truncated: Vec<LogTruncation>,
}

impl RecoveryReport {
    /// True when recovery repaired nothing.
    pub fn is_clean(&self) -> bool {
        self.logs_truncated.is_empty()
    }
}
