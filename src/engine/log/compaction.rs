//! `LogCompactor` and `CompactionResult` (E16), the book's
//! `log/compaction.py`: key compaction of the closed segments with
//! tombstones and `delete_retention_ms` (Kafka's `cleanup.policy=compact`
//! and `delete.retention.ms`).
//!
//! Every record keeps its offset: a record stays when it has no key or is
//! its key's latest in the whole log (active segment included); a
//! tombstone (a keyed record with a null value) that is its key's latest
//! stays until it is older than `delete_retention_ms`, so consumers have
//! time to see the delete. Control markers stay. The rewritten segments are
//! installed by [`PartitionLog::install_compacted_closed`], whose
//! `before_swap` hook is the crash-safety boundary (`segment_swap`).

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;

use crate::engine::clock::Clock;
use crate::engine::core::batch::RecordBatch;
use crate::engine::error::Result;
use crate::engine::log::partition_log::PartitionLog;

/// What a compaction did: the closed segments it read (by base offset) and
/// their user records before and after.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactionResult {
    pub source_segments: Vec<i64>,
    pub records_before: usize,
    pub records_after: usize,
}

/// The hook run between building the compacted log and swapping it in.
pub type BeforeSwap = Box<dyn FnMut() -> Result<()> + Send>;

/// Compacts a partition log's closed segments by key, on the engine clock.
pub struct LogCompactor {
    clock: Arc<dyn Clock>,
    delete_retention_ms: u64,
    before_swap: Option<BeforeSwap>,
}

impl std::fmt::Debug for LogCompactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogCompactor")
            .field("delete_retention_ms", &self.delete_retention_ms)
            .field("before_swap", &self.before_swap.is_some())
            .finish_non_exhaustive()
    }
}

impl LogCompactor {
    /// A compactor reading time from `clock` (`delete_retention_ms` is
    /// unsigned: the book's "cannot be negative" holds by type).
    pub fn new(clock: impl Clock + 'static, delete_retention_ms: u64) -> Self {
        Self::with_clock(Arc::new(clock), delete_retention_ms)
    }

    /// A compactor sharing the cluster's clock.
    pub fn with_clock(clock: Arc<dyn Clock>, delete_retention_ms: u64) -> Self {
        Self {
            clock,
            delete_retention_ms,
            before_swap: None,
        }
    }

    /// The same compactor calling `hook` at the swap boundary (the book's
    /// `before_swap`): its error stops the compaction with the log as it was.
    pub fn before_swap(mut self, hook: BeforeSwap) -> Self {
        self.before_swap = Some(hook);
        self
    }

    /// Compacts `log`'s closed segments (the book's `compact`).
    pub fn compact(&mut self, log: &mut PartitionLog) -> Result<CompactionResult> {
        let source: Vec<i64> = log
            .closed_segments()
            .iter()
            .map(|s| s.base_offset())
            .collect();
        if source.is_empty() {
            return Ok(CompactionResult::default());
        }
        let latest = latest_offsets(&log.all_batches()?);
        let mut compacted = Vec::new();
        let (mut records_before, mut records_after) = (0, 0);
        for segment in log.closed_segments() {
            for batch in segment.iter_batches()? {
                records_before += batch.records.len();
                if let Some(rewritten) = self.compact_batch(batch, &latest) {
                    records_after += rewritten.records.len();
                    compacted.push(rewritten);
                }
            }
        }
        let hook = self
            .before_swap
            .as_mut()
            .map(|h| h.as_mut() as &mut dyn FnMut() -> Result<()>);
        log.install_compacted_closed(&compacted, hook)?;
        Ok(CompactionResult {
            source_segments: source,
            records_before,
            records_after,
        })
    }

    /// The batch with only the records compaction keeps; `None` when none.
    fn compact_batch(
        &self,
        mut batch: RecordBatch,
        latest: &BTreeMap<Bytes, i64>,
    ) -> Option<RecordBatch> {
        if batch.is_control() {
            return Some(batch);
        }
        let now = i128::from(self.clock.now_ms());
        let base = batch.base_offset;
        batch.records.retain(|record| {
            let offset = base + i64::from(record.offset_delta);
            let Some(key) = &record.key else {
                return true;
            };
            let latest_of_key = latest.get(key) == Some(&offset);
            let expired_tombstone = record.value.is_none()
                && now - i128::from(record.timestamp_ms) > i128::from(self.delete_retention_ms);
            latest_of_key && !expired_tombstone
        });
        (!batch.records.is_empty()).then_some(batch)
    }
}

/// Each key's latest offset over `batches`.
fn latest_offsets(batches: &[RecordBatch]) -> BTreeMap<Bytes, i64> {
    let mut latest = BTreeMap::new();
    for batch in batches {
        for record in &batch.records {
            if let Some(key) = &record.key {
                latest.insert(
                    key.clone(),
                    batch.base_offset + i64::from(record.offset_delta),
                );
            }
        }
    }
    latest
}
