//! `PartitionLog` (E2): one replica's log of one partition, as a list of
//! segments under `broker-<id>/<topic>-<partition>/`.
//!
//! Besides the files, the log keeps a compact [`BatchSummary`] per batch (the
//! fields of a batch header, no records). Producer state, leader-epoch
//! divergence, the LSO and the dashboard read these without touching disk;
//! record contents are read from the segments on demand, so memory stays
//! proportional to the number of batches, not to the bytes logged.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::engine::core::batch::{ControlType, RecordBatch};
use crate::engine::core::codec::{self, BatchHeader, Stamp};
use crate::engine::core::record::ConsumerRecord;
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::log::lineage::Lineage;
use crate::engine::log::recovery::SegmentPoint;
use crate::engine::log::segment::{Segment, keep_if_small};
use crate::engine::vector_ext::VectorExt;
use imbl::Vector;

/// Batches a fetch reads per round: enough to amortise a read, few enough
/// that a round's cost does not depend on the request's size.
const FETCH_ROUND_BATCHES: usize = 16;

/// The most index entries a new segment makes room for up front (16 KiB):
/// the book's 1 MiB segments with its 4 KiB index interval take 257; a
/// larger segment's index grows past this as it fills.
const INDEX_ENTRIES_RESERVED: usize = 1024;

/// The batch-level facts of one logged batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchSummary {
    pub base_offset: i64,
    pub last_offset: i64,
    pub leader_epoch: u32,
    pub producer_id: i64,
    pub producer_epoch: i32,
    pub base_sequence: i32,
    pub control: Option<ControlType>,
    pub transactional_id: Option<String>,
    pub record_count: u32,
    pub size_bytes: u32,
    /// The frame's CRC32 (see [`BatchHeader::crc`]).
    pub crc: u32,
}

impl BatchSummary {
    pub(crate) fn from_header(h: BatchHeader, size_bytes: u32) -> Self {
        Self {
            base_offset: h.base_offset,
            last_offset: h.last_offset(),
            leader_epoch: h.leader_epoch,
            producer_id: h.producer_id,
            producer_epoch: h.producer_epoch,
            base_sequence: h.base_sequence,
            control: h.control,
            transactional_id: h.transactional_id,
            record_count: h.record_count,
            size_bytes,
            crc: h.crc,
        }
    }

    /// The summary of a batch about to be written as `frame`.
    pub fn of(batch: &RecordBatch, frame: &[u8]) -> Self {
        Self {
            base_offset: batch.base_offset,
            last_offset: batch.last_offset(),
            leader_epoch: batch.leader_epoch,
            producer_id: batch.producer_id,
            producer_epoch: batch.producer_epoch,
            base_sequence: batch.base_sequence,
            control: batch.control,
            transactional_id: batch.transactional_id.clone(),
            record_count: batch.records.len() as u32,
            size_bytes: frame.len() as u32,
            crc: codec::frame_crc(frame),
        }
    }

    /// The sequence of the batch's last record.
    pub fn last_sequence(&self) -> i32 {
        self.base_sequence
            .wrapping_add((self.last_offset - self.base_offset) as i32)
    }
}

/// What opening a log repaired.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LogRecovery {
    /// Bytes cut from the active segment's bad tail.
    pub truncated_bytes: u64,
    /// Why the first cut frame was invalid.
    pub reason: Option<String>,
    /// What an interrupted compaction swap left and the open repaired.
    pub swap: Option<crate::engine::log::segment_swap::SwapRepair>,
}

/// Settings a log needs from the cluster configuration.
#[derive(Debug, Clone, Copy)]
pub struct LogConfig {
    pub segment_max_bytes: u64,
    pub index_interval_bytes: u64,
    pub fsync: bool,
}

impl LogConfig {
    /// How many index entries a new segment makes room for: as many as a
    /// full segment gets, at most [`INDEX_ENTRIES_RESERVED`].
    pub(crate) fn index_entries_reserved(&self) -> usize {
        let full = self.segment_max_bytes / self.index_interval_bytes.max(1);
        usize::try_from(full).map_or(INDEX_ENTRIES_RESERVED, |n| {
            n.saturating_add(1).min(INDEX_ENTRIES_RESERVED)
        })
    }
}

/// One replica's partition log.
#[derive(Debug)]
pub struct PartitionLog {
    pub(crate) dir: PathBuf,
    pub(crate) config: LogConfig,
    pub(crate) segments: Vec<Segment>,
    /// A persistent list: a time-travel checkpoint's memo
    /// (`time_travel/log.rs`) and the log restored from it are clones of
    /// it, sharing all of it.
    pub(crate) batches: Vector<BatchSummary>,
    /// Which history `batches` is: new on open and on every cut of it (see
    /// [`Lineage`]).
    pub(crate) lineage: Lineage,
    /// Each segment as the open read it (a crash's carry,
    /// `time_travel/log.rs`); segments rolled since have none.
    pub(crate) points: Vec<SegmentPoint>,
    /// Bytes the open validated frame by frame (all of them on a first
    /// open; after a crash, those written since the last recovery).
    pub(crate) scanned_on_open: u64,
    /// The frame being appended, reused: a fresh frame-sized allocation per
    /// append made glibc consolidate the caller's freed records each time
    /// (P3).
    pub(crate) frame: Vec<u8>,
    /// Why this log takes no more writes: a write failed and cutting it
    /// back failed too (see [`MiniKafkaError::KafkaStorage`]). A crash
    /// reopens the log and recovery cuts what the failed write left.
    pub(crate) offline: Option<(PathBuf, String)>,
    /// Frames read back from this log's segments (whole or their heads)
    /// since it was opened: what readers cost in disk reads, counted so
    /// that a test can hold a dashboard frame's reads to what it draws
    /// (`tests/frame_cost.rs`). Reading never changes the log otherwise.
    pub(crate) frames_read: AtomicU64,
}

impl PartitionLog {
    /// Frames read back from the segments since the log was opened (see
    /// the field).
    pub fn frames_read(&self) -> u64 {
        self.frames_read.load(Ordering::Relaxed)
    }

    /// Opens (or creates) the log in `dir`, checking every frame. A bad tail of
    /// the active segment is truncated and reported; a bad closed segment is an
    /// error. A [`Self::scan`] followed by its `open` (`time_travel/log.rs`).
    pub fn open(dir: &Path, config: LogConfig) -> Result<(Self, LogRecovery)> {
        Self::scan(dir, config)?.open()
    }

    /// The segments, oldest first.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    fn active(&self) -> &Segment {
        self.segments.last().expect("a log always has a segment")
    }

    /// The path of the active segment's `.log` file (the torn-tail target).
    pub fn active_segment_path(&self) -> &Path {
        self.active().path()
    }

    /// The first offset in the log: the first segment's base offset, as
    /// the book's `log_start_offset`. Retention moves it by deleting
    /// segments; compaction keeps it (the compacted segment keeps the old
    /// base even when its first records are gone).
    pub fn log_start_offset(&self) -> i64 {
        self.segments[0].base_offset()
    }

    /// The segments before the active one (the book's `closed_segments`):
    /// the only ones retention deletes and compaction rewrites.
    pub fn closed_segments(&self) -> &[Segment] {
        &self.segments[..self.segments.len() - 1]
    }

    /// The bytes of every segment's `.log` and `.index` (the book's
    /// `PartitionLog.size_bytes`, what retention by bytes measures;
    /// [`Self::size_bytes`] counts the `.log` files alone).
    pub fn total_size_bytes(&self) -> u64 {
        self.segments.iter().map(Segment::total_size_bytes).sum()
    }

    /// Deletes the closed segments starting at `base_offsets`, which must
    /// be a prefix of the closed segments (the book's
    /// `delete_closed_segments`): the log start offset moves to the first
    /// segment left. Returns the deleted bases, sorted.
    pub fn delete_closed_segments(&mut self, base_offsets: &[i64]) -> Result<Vec<i64>> {
        self.check_online()?;
        let requested: std::collections::BTreeSet<i64> = base_offsets.iter().copied().collect();
        let closed: Vec<i64> = self
            .closed_segments()
            .iter()
            .map(Segment::base_offset)
            .collect();
        let unknown: Vec<i64> = requested
            .iter()
            .copied()
            .filter(|b| !closed.contains(b))
            .collect();
        if !unknown.is_empty() {
            return Err(MiniKafkaError::InvalidCleanup(format!(
                "retention can delete closed segments only: {unknown:?}"
            )));
        }
        if requested.is_empty() {
            return Ok(Vec::new());
        }
        if !requested
            .iter()
            .copied()
            .eq(closed[..requested.len()].iter().copied())
        {
            return Err(MiniKafkaError::InvalidCleanup(
                "retention can delete a continuous prefix of closed segments only".into(),
            ));
        }
        let count = requested.len();
        let new_start = self.segments[count].base_offset();
        let first_kept = self.batches.partition_point(|b| b.base_offset < new_start);
        let removed: Vec<Segment> = self.segments.drain(..count).collect();
        self.batches = self.batches.split_off(first_kept);
        // Summaries left the front: a reader's cached prefix is not ours.
        self.lineage = Lineage::new();
        // The recovery points describe segments by position: the deleted
        // ones' go with them.
        self.points.drain(..count.min(self.points.len()));
        for segment in removed {
            segment.delete()?;
        }
        Ok(requested.into_iter().collect())
    }

    /// Closes the active segment and starts a new one at the LEO, if the
    /// active one holds data (the book's `roll`).
    pub fn roll(&mut self) -> Result<()> {
        self.check_online()?;
        if self.active().size() == 0 {
            return Ok(());
        }
        let leo = self.leo();
        self.segments.push(self.new_segment(leo)?);
        Ok(())
    }

    /// A new empty segment at `base_offset`, with room for the index
    /// entries a full segment gets (see [`LogConfig::index_entries_reserved`]).
    fn new_segment(&self, base_offset: i64) -> Result<Segment> {
        Segment::create_for(&self.dir, base_offset, self.config.index_entries_reserved())
    }

    /// Empties the log and starts it again at `offset` (Kafka's
    /// `truncateFullyAndStartAt`): a follower whose log ends before its
    /// leader's log start offset has nothing left to share with it.
    pub fn truncate_fully_and_start_at(&mut self, offset: i64) -> Result<()> {
        self.check_online()?;
        self.batches = self.batches.split_off(self.batches.len());
        self.lineage = Lineage::new();
        self.points.clear();
        for segment in std::mem::take(&mut self.segments) {
            if let Err(e) = segment.delete() {
                let reason = format!("emptying the log to start at {offset} failed ({e})");
                self.offline = Some((self.dir.clone(), reason));
                self.segments.push(self.new_segment(offset)?);
                return self.check_online();
            }
        }
        self.segments.push(self.new_segment(offset)?);
        Ok(())
    }

    /// The log end offset (LEO): the offset the next batch will get.
    pub fn leo(&self) -> i64 {
        self.batches
            .back()
            .map_or_else(|| self.active().base_offset(), |b| b.last_offset + 1)
    }

    /// Total bytes in all segments.
    pub fn size_bytes(&self) -> u64 {
        self.segments.iter().map(Segment::size).sum()
    }

    /// Appends a batch whose `base_offset` must be the LEO. Rolls a new
    /// segment when this frame would take the active one past
    /// `segment_max_bytes`.
    ///
    /// A write that fails is cut back: the log holds exactly the batches
    /// appended with `Ok`.
    pub fn append(&mut self, batch: &RecordBatch) -> Result<&BatchSummary> {
        self.check_online()?;
        batch.validate_batch()?;
        self.append_stamped(batch, Stamp::Keep)
    }

    /// As [`Self::append`], for a batch whose caller has already run
    /// [`RecordBatch::validate_batch`] on it (the leader, before its
    /// sequence check), with its timestamps set by `stamp` in the frame.
    /// The record rules ([`RecordBatch::validate_records`]) are checked
    /// while the frame is encoded, so the append walks the records once
    /// (P3); an error found before the encoding is returned after them, as
    /// [`RecordBatch::validate`] before the append would have ordered it.
    pub(crate) fn append_stamped(
        &mut self,
        batch: &RecordBatch,
        stamp: Stamp,
    ) -> Result<&BatchSummary> {
        if let Err(e) = self.check_appendable(batch) {
            batch.validate_records()?;
            return Err(e);
        }
        let mut frame = std::mem::take(&mut self.frame);
        frame.clear();
        let appended = match codec::encode_checked_into(batch, &mut frame, stamp) {
            Ok(()) => self.append_frame(batch, &frame),
            Err(why) => Err(MiniKafkaError::InvalidBatch(why.to_string())),
        };
        keep_if_small(&mut frame);
        self.frame = frame;
        appended?;
        Ok(self.batches.back().expect("just pushed"))
    }

    /// What refuses a validated batch before its frame is written: an
    /// offline log, offsets that overflow, a base offset that is not the
    /// LEO.
    fn check_appendable(&self, batch: &RecordBatch) -> Result<()> {
        self.check_online()?;
        batch.validate_offsets()?;
        let leo = self.leo();
        if batch.base_offset != leo {
            return Err(MiniKafkaError::InvalidBatch(format!(
                "base offset {} is not the log end offset {leo} of {}",
                batch.base_offset,
                self.dir.display()
            )));
        }
        Ok(())
    }

    /// Writes `batch`'s encoded `frame` to the active segment (rolling first
    /// if it is full) and records its summary.
    fn append_frame(&mut self, batch: &RecordBatch, frame: &[u8]) -> Result<()> {
        let active = self.active();
        let full = active.size() + frame.len() as u64 > self.config.segment_max_bytes;
        if active.size() > 0 && (full || !active.can_hold(batch.last_offset())) {
            self.segments.push(self.new_segment(batch.base_offset)?);
        }
        let config = self.config;
        let appended = self
            .segments
            .last_mut()
            .expect("a log always has a segment")
            .append(
                frame,
                batch.base_offset,
                config.index_interval_bytes,
                config.fsync,
            );
        if let Err(MiniKafkaError::KafkaStorage { path, reason }) = &appended {
            self.offline = Some((path.clone(), reason.clone()));
        }
        appended?;
        self.batches.push_back(BatchSummary::of(batch, frame));
        Ok(())
    }

    /// Records with offsets in `[offset, end_offset)`, at most `max_records`,
    /// control batches skipped. `offset` must lie in `log_start..=LEO`.
    pub fn fetch(
        &self,
        offset: i64,
        max_records: usize,
        end_offset: i64,
    ) -> Result<Vec<ConsumerRecord>> {
        self.check_offset(offset)?;
        self.fetch_filtered(offset, max_records, end_offset, |_| true)
    }

    /// As [`Self::fetch`], keeping only data batches for which `keep` is true.
    pub fn fetch_filtered(
        &self,
        offset: i64,
        max_records: usize,
        end_offset: i64,
        mut keep: impl FnMut(&RecordBatch) -> bool,
    ) -> Result<Vec<ConsumerRecord>> {
        let end_offset = end_offset.min(self.leo());
        let mut out = Vec::new();
        let mut next = offset;
        while out.len() < max_records && next < end_offset {
            // Read only as many batches as could fill the request (by their
            // record counts), so a large log costs no more than a small one.
            // At most 16 are counted: an unbounded request (`state` asks for
            // everything) would otherwise walk the rest of the log at every
            // round of 16, quadratic in the log's length.
            let wanted = max_records - out.len();
            let first = self.batches.partition_point(|b| b.last_offset < next);
            let mut records = 0usize;
            let count = self
                .batches
                .iter_from(first)
                .take(FETCH_ROUND_BATCHES)
                .take_while(|b| {
                    let more = records < wanted && b.base_offset < end_offset;
                    records += b.record_count as usize;
                    more
                })
                .count()
                .max(1);
            let batches = self.read_range(next, end_offset, count)?;
            let Some(last) = batches.last() else { break };
            next = last.next_offset();
            for batch in batches.iter().filter(|b| !b.is_control() && keep(b)) {
                for record in batch.consumer_records(offset) {
                    if record.offset >= end_offset || out.len() >= max_records {
                        break;
                    }
                    out.push(record);
                }
            }
        }
        Ok(out)
    }

    /// Whole batches from the one holding `from_offset`, at most `max_batches`.
    pub fn read_batches(&self, from_offset: i64, max_batches: usize) -> Result<Vec<RecordBatch>> {
        self.check_offset(from_offset)?;
        self.read_range(from_offset, self.leo(), max_batches)
    }

    /// As [`Self::read_batches`], but each batch keeps only its first
    /// `max_records` records, read without the rest of its frame: what the
    /// dashboard shows of a batch, at a cost that does not grow with the
    /// batch's size (SPEC §2: rendering costs O(what is visible)).
    pub fn read_batch_heads(
        &self,
        from_offset: i64,
        max_batches: usize,
        max_records: usize,
    ) -> Result<Vec<RecordBatch>> {
        self.check_offset(from_offset)?;
        self.read_range_with(from_offset, self.leo(), max_batches, Some(max_records))
    }

    /// Every batch in the log (the book's `all_batches`).
    pub fn all_batches(&self) -> Result<Vec<RecordBatch>> {
        self.read_range(self.log_start_offset(), self.leo(), usize::MAX)
    }

    /// Removes every batch at or past `offset`, which must be a batch boundary
    /// (a batch's base offset, or the LEO). Returns the bytes removed.
    pub fn truncate_to(&mut self, offset: i64) -> Result<u64> {
        self.check_online()?;
        let leo = self.leo();
        if offset >= leo {
            return if offset == leo {
                Ok(0)
            } else {
                self.check_offset(offset).map(|_| 0)
            };
        }
        let keep = self.batches.partition_point(|b| b.base_offset < offset);
        let boundary = self
            .batches
            .get(keep)
            .is_some_and(|b| b.base_offset == offset);
        if !boundary {
            return Err(MiniKafkaError::NotABatchBoundary {
                what: self.dir.display().to_string(),
                offset,
            });
        }
        let before = self.size_bytes();
        if let Err(e) = self.cut_segments(offset) {
            // Segments may be gone while their batches are still listed:
            // nothing more is written until a restart reads the log again.
            let reason = format!("a truncation to offset {offset} failed part way ({e})");
            self.offline = Some((self.dir.clone(), reason));
            self.check_online()?;
        }
        self.batches.truncate(keep);
        self.lineage = Lineage::new();
        Ok(before - self.size_bytes())
    }

    /// The file half of [`Self::truncate_to`]: drops the segments at or past
    /// `offset` and cuts the last one left.
    fn cut_segments(&mut self, offset: i64) -> Result<()> {
        while self.segments.len() > 1 && self.active().base_offset() >= offset {
            let segment = self.segments.pop().expect("len > 1");
            segment.delete()?;
        }
        let segment = self
            .segments
            .last_mut()
            .expect("a log always has a segment");
        let position = segment.position_of(offset)?.unwrap_or(segment.size());
        segment.truncate_to_position(position)
    }

    // Beyond the book: the readers the replica set, producer state and
    // dashboard use, and the helpers of the methods above.

    /// The directory holding this log's segments.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// One summary per batch, in offset order.
    pub fn batch_summaries(&self) -> &Vector<BatchSummary> {
        &self.batches
    }

    /// Which history [`Self::batch_summaries`] is (see [`Lineage`]).
    pub fn lineage(&self) -> &Lineage {
        &self.lineage
    }

    /// True when this log holds exactly `batch` (same offsets, epoch and CRC).
    pub fn holds(&self, batch: &BatchSummary) -> bool {
        self.summary_at(batch.base_offset).is_some_and(|s| {
            s.base_offset == batch.base_offset
                && s.last_offset == batch.last_offset
                && s.leader_epoch == batch.leader_epoch
                && s.crc == batch.crc
        })
    }

    /// The summary of the batch holding `offset`.
    pub fn summary_at(&self, offset: i64) -> Option<&BatchSummary> {
        let i = self.batches.partition_point(|b| b.last_offset < offset);
        self.batches.get(i).filter(|b| b.base_offset <= offset)
    }

    /// Refuses a write to a log that went offline.
    pub(crate) fn check_online(&self) -> Result<()> {
        match &self.offline {
            None => Ok(()),
            Some((path, reason)) => Err(MiniKafkaError::KafkaStorage {
                path: path.clone(),
                reason: reason.clone(),
            }),
        }
    }

    /// Whether a failed write took this log offline (and why).
    pub fn offline(&self) -> Option<&str> {
        self.offline.as_ref().map(|(_, reason)| reason.as_str())
    }

    /// Up to `max_batches` whole batches, starting with the one holding
    /// `from_offset` (or the first after it), stopping before the first batch
    /// that starts at or past `end_offset`.
    fn read_range(
        &self,
        from_offset: i64,
        end_offset: i64,
        max_batches: usize,
    ) -> Result<Vec<RecordBatch>> {
        self.read_range_with(from_offset, end_offset, max_batches, None)
    }

    /// [`Self::read_range`], keeping at most `max_records` records of each
    /// batch (read from the start of its frame only) when given.
    fn read_range_with(
        &self,
        from_offset: i64,
        end_offset: i64,
        max_batches: usize,
        max_records: Option<usize>,
    ) -> Result<Vec<RecordBatch>> {
        let mut out = Vec::new();
        if max_batches == 0 || from_offset >= end_offset {
            return Ok(out);
        }
        let first_segment = self
            .segments
            .partition_point(|s| s.base_offset() <= from_offset)
            .saturating_sub(1);
        for segment in &self.segments[first_segment..] {
            let Some(mut pos) = segment.position_of(from_offset)? else {
                continue;
            };
            while pos < segment.size() {
                self.frames_read.fetch_add(1, Ordering::Relaxed);
                let (batch, len) = match max_records {
                    Some(n) => segment.read_batch_head_at(pos, n)?,
                    None => segment.read_batch_at(pos)?,
                };
                if batch.base_offset >= end_offset {
                    return Ok(out);
                }
                out.push(batch);
                if out.len() >= max_batches {
                    return Ok(out);
                }
                pos += len;
            }
        }
        Ok(out)
    }

    pub(crate) fn check_offset(&self, offset: i64) -> Result<()> {
        let (start, end) = (self.log_start_offset(), self.leo());
        if offset < start || offset > end {
            return Err(MiniKafkaError::OffsetOutOfRange {
                what: self.dir.display().to_string(),
                offset,
                start,
                end,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn config(segment_max_bytes: u64) -> LogConfig {
        LogConfig {
            segment_max_bytes,
            index_interval_bytes: 128,
            fsync: false,
        }
    }

    fn append_values(log: &mut PartitionLog, values: &[&str]) {
        let mut b = RecordBatch::of_values(values.iter().copied());
        b.base_offset = log.leo();
        log.append(&b).unwrap();
    }

    #[test]
    fn append_fetch_and_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let (mut log, rec) = PartitionLog::open(dir.path(), config(1 << 20)).unwrap();
        assert_eq!(rec, LogRecovery::default());
        append_values(&mut log, &["a", "b"]);
        append_values(&mut log, &["c"]);
        assert_eq!(log.leo(), 3);
        let values: Vec<_> = log
            .fetch(1, 10, 3)
            .unwrap()
            .into_iter()
            .map(|r| (r.offset, r.value.unwrap()))
            .collect();
        assert_eq!(
            values,
            vec![(1, b"b".to_vec().into()), (2, b"c".to_vec().into())]
        );
        drop(log);
        let (log, rec) = PartitionLog::open(dir.path(), config(1 << 20)).unwrap();
        assert_eq!(rec.truncated_bytes, 0);
        assert_eq!(log.leo(), 3);
        assert_eq!(log.all_batches().unwrap().len(), 2);
    }

    #[test]
    fn rolls_segments_and_reads_across_them() {
        let dir = tempfile::tempdir().unwrap();
        let (mut log, _) = PartitionLog::open(dir.path(), config(300)).unwrap();
        for i in 0..20 {
            append_values(&mut log, &[&format!("value-{i:02}-{}", "x".repeat(40))]);
        }
        assert!(
            log.segments().len() > 3,
            "{} segments",
            log.segments().len()
        );
        assert!(log.segments().iter().all(|s| s.size() <= 300));
        let names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.contains(&"00000000000000000000.log".to_string()));
        assert!(names.contains(&"00000000000000000000.index".to_string()));
        let batches = log.read_batches(7, 3).unwrap();
        assert_eq!(
            batches.iter().map(|b| b.base_offset).collect::<Vec<_>>(),
            vec![7, 8, 9]
        );
        assert_eq!(log.fetch(0, 100, 20).unwrap().len(), 20);
        drop(log);
        let (log, _) = PartitionLog::open(dir.path(), config(300)).unwrap();
        assert_eq!(log.fetch(0, 100, 20).unwrap().len(), 20);
    }

    #[test]
    fn new_segments_make_room_for_a_full_segments_index_entries() {
        let book = |segment_max_bytes| LogConfig {
            segment_max_bytes,
            index_interval_bytes: 4096,
            fsync: false,
        };
        assert_eq!(book(1 << 20).index_entries_reserved(), 257);
        assert_eq!(
            book(1 << 30).index_entries_reserved(),
            INDEX_ENTRIES_RESERVED
        );
        assert_eq!(config(300).index_entries_reserved(), 3);
        let dir = tempfile::tempdir().unwrap();
        let (mut log, _) = PartitionLog::open(dir.path(), config(300)).unwrap();
        for i in 0..8 {
            append_values(&mut log, &[&format!("value-{i:02}-{}", "x".repeat(40))]);
        }
        assert!(log.segments().len() > 2);
        for segment in log.segments() {
            assert!(segment.index.entries_capacity() >= 3, "{segment:?}");
        }
    }

    #[test]
    fn a_fetch_reads_in_rounds_yet_returns_every_record_asked_for() {
        // More batches than one round reads, of 1 to 3 records each, so the
        // rounds end inside and at the edges of batches.
        let dir = tempfile::tempdir().unwrap();
        let (mut log, _) = PartitionLog::open(dir.path(), config(1 << 20)).unwrap();
        let mut expected = Vec::new();
        for i in 0..(FETCH_ROUND_BATCHES * 5 + 3) {
            let values: Vec<String> = (0..=i % 3).map(|j| format!("v{i}-{j}")).collect();
            expected.extend(values.iter().map(|v| v.clone().into_bytes()));
            append_values(
                &mut log,
                &values.iter().map(String::as_str).collect::<Vec<_>>(),
            );
        }
        let leo = log.leo();
        let values = |from: i64, max: usize| -> Vec<Vec<u8>> {
            log.fetch_filtered(from, max, leo, |_| true)
                .unwrap()
                .into_iter()
                .map(|r| r.value.unwrap().to_vec())
                .collect()
        };
        assert_eq!(values(0, usize::MAX), expected);
        for (from, max) in [
            (0, 1),
            (1, 16),
            (5, 17),
            (40, 33),
            (0, 100),
            (150, usize::MAX),
        ] {
            let from_index = from as usize;
            let end = from_index.saturating_add(max).min(expected.len());
            assert_eq!(
                values(from, max),
                expected[from_index..end],
                "from {from}, max {max}"
            );
        }
    }

    #[test]
    fn sparse_index_has_one_entry_per_interval_and_is_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let (mut log, _) = PartitionLog::open(dir.path(), config(1 << 20)).unwrap();
        for _ in 0..40 {
            append_values(&mut log, &["0123456789012345678901234567890123456789"]);
        }
        let entries = log.segments()[0].index().entries().to_vec();
        assert!(entries.len() >= 5, "{entries:?}");
        assert!(
            entries
                .windows(2)
                .all(|w| w[1].position - w[0].position >= 128)
        );
        let on_disk = fs::read(log.segments()[0].index().path()).unwrap();
        fs::write(log.segments()[0].index().path(), b"junk").unwrap();
        drop(log);
        let (log, _) = PartitionLog::open(dir.path(), config(1 << 20)).unwrap();
        assert_eq!(log.segments()[0].index().entries(), entries.as_slice());
        assert_eq!(fs::read(log.segments()[0].index().path()).unwrap(), on_disk);
        for offset in [0, 13, 39] {
            assert_eq!(log.read_batches(offset, 1).unwrap()[0].base_offset, offset);
        }
    }

    #[test]
    fn truncate_to_batch_boundaries_only() {
        let dir = tempfile::tempdir().unwrap();
        let (mut log, _) = PartitionLog::open(dir.path(), config(200)).unwrap();
        for _ in 0..6 {
            append_values(&mut log, &["aaaaaaaaaaaaaaaaaaaa", "b"]);
        }
        assert!(matches!(
            log.truncate_to(3),
            Err(MiniKafkaError::NotABatchBoundary { .. })
        ));
        let removed = log.truncate_to(4).unwrap();
        assert!(removed > 0);
        assert_eq!(log.leo(), 4);
        append_values(&mut log, &["new"]);
        let values: Vec<_> = log
            .fetch(0, 100, 100)
            .unwrap()
            .into_iter()
            .map(|r| r.value.unwrap())
            .collect();
        assert_eq!(values.last().unwrap(), &b"new"[..]);
        assert_eq!(values.len(), 5);
        drop(log);
        let (log, rec) = PartitionLog::open(dir.path(), config(200)).unwrap();
        assert_eq!(rec.truncated_bytes, 0);
        assert_eq!(log.leo(), 5);
        let (mut log, _) = (log, ());
        log.truncate_to(0).unwrap();
        assert_eq!((log.log_start_offset(), log.leo()), (0, 0));
        assert_eq!(log.segments().len(), 1);
    }

    /// A truncation (a follower cutting a divergent tail) whose file cut
    /// fails takes the log offline: refused until a reopen, which finds
    /// the log whole.
    #[test]
    fn a_truncation_that_fails_takes_the_log_offline() {
        use crate::engine::io_fault::{Effect, Errno, FileOp, inject};
        let dir = tempfile::tempdir().unwrap();
        let (mut log, _) = PartitionLog::open(dir.path(), config(1 << 20)).unwrap();
        for v in ["a", "b", "c"] {
            append_values(&mut log, &[v]);
        }
        let path = log.active_segment_path().to_path_buf();
        {
            let _fault = inject(&path, FileOp::Truncate, 1, Effect::Fail(Errno::Io));
            let err = log.truncate_to(1).unwrap_err();
            assert_eq!(err.code(), "KafkaStorageException", "{err}");
        }
        assert!(log.offline().is_some());
        let mut b = RecordBatch::of_values(["d"]);
        b.base_offset = log.leo();
        assert_eq!(log.append(&b).unwrap_err().code(), "KafkaStorageException");
        drop(log);
        let (log, recovery) = PartitionLog::open(dir.path(), config(1 << 20)).unwrap();
        assert_eq!(recovery, LogRecovery::default());
        assert_eq!(log.leo(), 3);
    }

    #[test]
    fn fetch_out_of_range_is_a_typed_error() {
        let dir = tempfile::tempdir().unwrap();
        let (mut log, _) = PartitionLog::open(dir.path(), config(1 << 20)).unwrap();
        append_values(&mut log, &["a"]);
        assert!(
            log.fetch(1, 10, 1).unwrap().is_empty(),
            "LEO itself is in range and empty"
        );
        assert!(matches!(
            log.fetch(2, 10, 2),
            Err(MiniKafkaError::OffsetOutOfRange { offset: 2, .. })
        ));
        assert!(matches!(
            log.fetch(-1, 10, 2),
            Err(MiniKafkaError::OffsetOutOfRange { .. })
        ));
    }
}
