//! `RetentionManager` (E16), the book's `log/retention.py`: deletes closed
//! segments by time and by bytes, oldest first, advancing the log start
//! offset through [`PartitionLog::delete_closed_segments`]. The active
//! segment is never deleted.

use std::sync::Arc;

use crate::engine::clock::Clock;
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::log::partition_log::PartitionLog;
use crate::engine::log::segment::Segment;

/// Applies retention limits to a partition log, on the engine's clock.
#[derive(Debug, Clone)]
pub struct RetentionManager {
    clock: Arc<dyn Clock>,
}

impl RetentionManager {
    /// A manager reading time from `clock`.
    pub fn new(clock: impl Clock + 'static) -> Self {
        Self {
            clock: Arc::new(clock),
        }
    }

    /// A manager sharing the cluster's clock.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        Self { clock }
    }

    /// Deletes the closed segments the limits select (the book's `apply`):
    /// by time, the oldest segments whose newest record is older than
    /// `retention_ms`, stopping at the first that is not; then by bytes,
    /// more of the oldest until the log's `.log` and `.index` bytes are
    /// within `retention_bytes`. Returns the deleted segments' bases.
    pub fn apply(
        &self,
        log: &mut PartitionLog,
        retention_ms: Option<u64>,
        retention_bytes: Option<u64>,
    ) -> Result<Vec<i64>> {
        let selected = self.select(log, retention_ms, retention_bytes)?;
        log.delete_closed_segments(&selected)
    }

    /// [`Self::apply`] deleting only segments whose every offset lies
    /// below `high_watermark`: a replica in a cluster never deletes what
    /// consumers cannot read yet, or what followers may still fetch
    /// (Kafka's rule; the book applies retention to a lone log).
    pub fn apply_below(
        &self,
        log: &mut PartitionLog,
        retention_ms: Option<u64>,
        retention_bytes: Option<u64>,
        high_watermark: i64,
    ) -> Result<Vec<i64>> {
        let selected = self.select(log, retention_ms, retention_bytes)?;
        let segments = log.segments();
        let below = selected
            .iter()
            .enumerate()
            .take_while(|(i, _)| {
                segments
                    .get(i + 1)
                    .is_some_and(|next| next.base_offset() <= high_watermark)
            })
            .count();
        log.delete_closed_segments(&selected[..below])
    }

    /// The bases of the closed segments the limits select, oldest first.
    pub fn select(
        &self,
        log: &PartitionLog,
        retention_ms: Option<u64>,
        retention_bytes: Option<u64>,
    ) -> Result<Vec<i64>> {
        if retention_bytes == Some(0) {
            return Err(MiniKafkaError::InvalidCleanup(
                "retention_bytes must be positive".into(),
            ));
        }
        let closed = log.closed_segments();
        let mut selected: Vec<&Segment> = Vec::new();
        if let Some(retention_ms) = retention_ms {
            let boundary = i128::from(self.clock.now_ms()) - i128::from(retention_ms);
            for segment in closed {
                if i128::from(segment.max_timestamp_ms()?) >= boundary {
                    break;
                }
                selected.push(segment);
            }
        }
        if let Some(retention_bytes) = retention_bytes {
            let mut total =
                log.total_size_bytes() - selected.iter().map(|s| s.total_size_bytes()).sum::<u64>();
            for segment in &closed[selected.len()..] {
                if total <= retention_bytes {
                    break;
                }
                selected.push(segment);
                total -= segment.total_size_bytes();
            }
        }
        Ok(selected.iter().map(|s| s.base_offset()).collect())
    }
}
