//! `MiniKafkaConfig` with the book's defaults (FORMATS.md, "Defaults of the
//! book's configuration").

use std::path::PathBuf;

/// Broker identifiers as configured (`broker_ids`).
pub type BrokerId = u32;

/// When a pending `acks=all` append completes (E5, E14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AcksAllCompletion {
    /// The book: every replica in the ISR captured at append time has the batch.
    #[default]
    CapturedIsr,
    /// Real Kafka: the high watermark has passed the batch, as the ISR changes.
    HighWatermark,
}

/// Cluster configuration. Field names and defaults follow the book.
#[derive(Debug, Clone, PartialEq)]
pub struct MiniKafkaConfig {
    /// Root of the on-disk layout (FORMATS.md "Directory layout").
    pub data_dir: PathBuf,
    /// Broker ids in configured order; replica assignment is round-robin over them.
    pub broker_ids: Vec<BrokerId>,
    /// A segment rolls when the next frame would take it past this size.
    pub segment_max_bytes: u64,
    /// One sparse index entry per this many bytes of log.
    pub index_interval_bytes: u64,
    /// A follower further behind than this many offsets leaves the ISR.
    pub replica_lag_max_offsets: u64,
    /// A follower that has not fetched for longer than this leaves the ISR.
    pub replica_lag_time_ms: u64,
    /// A follower fetch returns whole batches up to about this many bytes.
    pub replica_fetch_max_bytes: u64,
    /// `acks=all` needs at least this many replicas in the ISR.
    pub min_insync_replicas: usize,
    /// Kept for parity with the book's configuration (consumer groups).
    pub group_session_timeout_ms: u64,
    /// Open transactions time out after this long (kafka rules only, E14).
    pub transaction_timeout_ms: u64,
    /// When a pending `acks=all` append completes.
    pub acks_all_completion: AcksAllCompletion,
    /// fsync each log append. The book flushes but does not fsync the log.
    pub fsync_log: bool,
}

impl MiniKafkaConfig {
    /// The book's defaults on `data_dir`.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            broker_ids: vec![1],
            segment_max_bytes: 1024 * 1024,
            index_interval_bytes: 4096,
            replica_lag_max_offsets: 10_000,
            replica_lag_time_ms: 10_000,
            replica_fetch_max_bytes: 1024 * 1024,
            min_insync_replicas: 1,
            group_session_timeout_ms: 10_000,
            transaction_timeout_ms: 60_000,
            acks_all_completion: AcksAllCompletion::CapturedIsr,
            fsync_log: false,
        }
    }

    /// The same configuration with these broker ids.
    pub fn with_brokers(mut self, ids: impl IntoIterator<Item = BrokerId>) -> Self {
        self.broker_ids = ids.into_iter().collect();
        self
    }

    /// The same configuration with this `min_insync_replicas`.
    pub fn with_min_insync_replicas(mut self, n: usize) -> Self {
        self.min_insync_replicas = n;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_book() {
        let c = MiniKafkaConfig::new("/tmp/x");
        assert_eq!(c.broker_ids, vec![1]);
        assert_eq!(c.segment_max_bytes, 1 << 20);
        assert_eq!(c.index_interval_bytes, 4096);
        assert_eq!(c.replica_lag_max_offsets, 10_000);
        assert_eq!(c.replica_lag_time_ms, 10_000);
        assert_eq!(c.replica_fetch_max_bytes, 1 << 20);
        assert_eq!(c.min_insync_replicas, 1);
        assert_eq!(c.group_session_timeout_ms, 10_000);
        assert!(!c.fsync_log);
    }
}
