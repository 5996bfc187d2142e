//! A partition log's memo (kept with a time-travel checkpoint) and carry
//! (handed from a crashed log to its reopen), and the scan that uses them.
//!
//! A log is opened in two phases: [`PartitionLog::scan`] reads and checks
//! every segment ([`ScannedLog`]), and [`ScannedLog::open`] repairs and
//! opens it, so an open scans every log before it repairs any. A carry
//! lets a crash's scan resume each segment after the bytes the last open
//! read, when the file still begins with them (same length at least, same
//! CRC32); a memo lets a restore open a checkpoint's copy without reading
//! a frame, when its files have the lengths the memo says. Either way the
//! log is the one a full scan gives. The summaries are a persistent list
//! (`imbl::Vector`), so taking and restoring copy no summary.

use std::fs;
use std::path::{Path, PathBuf};

use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::layout::{index_file_name, log_file_name};
use crate::engine::log::index::{ENTRY_LEN, IndexEntry, OffsetIndex};
use crate::engine::log::lineage::Lineage;
use crate::engine::log::partition_log::{BatchSummary, LogConfig, LogRecovery, PartitionLog};
use crate::engine::log::recovery::{Resume, ScannedSegment, SegmentPoint};
use crate::engine::log::segment::{Segment, open_rw};
use crate::engine::log::segment_swap::{SwapLeftovers, SwapRepair};
use crate::engine::vector_ext::VectorExt;
use imbl::Vector;

/// What a crash's reopen may reuse of a replica log: the recovery points
/// of its segments and the summaries of the log that crashed, moved out
/// of it. [`PartitionLog::scan_carrying`] trusts a
/// segment's summaries only where the file still begins with the bytes the
/// last open read (docs/engine-decisions.md, "A crash's recovery reads
/// what changed since the last one").
#[derive(Debug)]
pub struct LogCarry {
    points: Vec<SegmentPoint>,
    /// The crashed log's summaries; once [`ScannedLog::open_carrying`] lent
    /// the first `lent` of them to the new log, the rest.
    batches: Vector<BatchSummary>,
    lent: usize,
    /// The crashed log's lineage: a reader's fold of its first `k`
    /// summaries holds for the new log too when `k <= lent`
    /// (`reader_cache`, carried across a crash).
    lineage: Lineage,
}

impl LogCarry {
    /// Whether the first `k` summaries of `log`, opened with this carry,
    /// are the crashed log's first `k`: those it was lent, then those it
    /// read again from the files (the batches written since the last
    /// recovery point), compared one by one; O(k - lent).
    pub fn begins_log(&self, log: &PartitionLog, k: usize) -> bool {
        let summaries = log.batch_summaries();
        if k <= self.lent {
            return k <= summaries.len();
        }
        let rest = k - self.lent;
        k <= summaries.len()
            && rest <= self.batches.len()
            && summaries
                .iter_from(self.lent)
                .zip(self.batches.iter())
                .take(rest)
                .all(|(new, crashed)| new == crashed)
    }

    /// How many summaries the crashed log had.
    pub fn crashed_len(&self) -> usize {
        self.lent + self.batches.len()
    }

    /// The crashed log's lineage (see the field).
    pub fn lineage(&self) -> &Lineage {
        &self.lineage
    }
}

/// A log as a time-travel checkpoint keeps it in memory: what an open of
/// the checkpoint's copy would parse from its files, so that a restore
/// reads none of them ([`PartitionLog::scan_remembered`]).
/// Its summaries are a clone of the log's it was taken from (sharing all
/// of them), of the same [`Lineage`]: a restore hands both back, together
/// with the checkpoint's reader cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogMemo {
    batches: Vector<BatchSummary>,
    lineage: Lineage,
    /// Each segment: base offset, bytes, index entries.
    segments: Vec<(i64, u64, Vec<IndexEntry>)>,
    points: Vec<SegmentPoint>,
}

/// A log read and checked by [`PartitionLog::scan`], not yet opened.
#[derive(Debug)]
pub struct ScannedLog {
    dir: PathBuf,
    config: LogConfig,
    segments: Vec<ScannedSegment>,
    /// Batches of each segment taken from a [`LogCarry`] (0 for a segment
    /// scanned in full), in segment order.
    carried: Vec<usize>,
    /// Not read but checked against a checkpoint's memo
    /// ([`PartitionLog::scan_remembered`]): `segments` is empty.
    remembered: Option<LogMemo>,
    /// What an interrupted compaction swap left beside the log, repaired
    /// by the open (`segment_swap`).
    swap: SwapLeftovers,
}

impl ScannedLog {
    /// The segments found (an empty log gets one when opened).
    pub fn segment_count(&self) -> usize {
        match &self.remembered {
            Some(memo) => memo.segments.len().max(1),
            None => self.segments.len().max(1),
        }
    }

    /// Whether this log was checked against a checkpoint's memo instead of
    /// read ([`PartitionLog::scan_remembered`]).
    pub fn is_remembered(&self) -> bool {
        self.remembered.is_some()
    }

    /// Opens the scanned log: creates its directory if new, cuts the active
    /// segment's bad tail and reports it, writes indexes that differ.
    pub fn open(self) -> Result<(PartitionLog, LogRecovery)> {
        self.open_carrying(None)
    }

    /// [`Self::open`] of a log scanned with a carry: the batches the scan
    /// trusted are lent from `carry` (see [`PartitionLog::give_back`]),
    /// after every write the open makes succeeded, so a failed open leaves
    /// `carry` whole.
    pub fn open_carrying(
        self,
        carry: Option<&mut LogCarry>,
    ) -> Result<(PartitionLog, LogRecovery)> {
        if let Some(memo) = self.remembered {
            return PartitionLog::open_remembered(self.dir, self.config, memo);
        }
        let dir = &self.dir;
        let swap_repair = self.swap.repair(dir)?;
        let mut scanned_segments = self.segments;
        if swap_repair == Some(SwapRepair::RestoredBackup) {
            for segment in &mut scanned_segments {
                segment.relocate(dir);
            }
        }
        fs::create_dir_all(dir).map_err(|e| MiniKafkaError::io(dir, e))?;
        let scanned_on_open = scanned_segments
            .iter()
            .map(ScannedSegment::scanned_bytes)
            .sum();
        let mut opened = Vec::with_capacity(scanned_segments.len());
        for (scanned, &carried) in scanned_segments.into_iter().zip(&self.carried) {
            let point = scanned.point();
            let (segment, scan) = scanned.open()?;
            opened.push((segment, scan, point, carried));
        }
        let created = match opened.is_empty() {
            true => Some(Segment::create_for(
                dir,
                0,
                self.config.index_entries_reserved(),
            )?),
            false => None,
        };
        let trusted: usize = self.carried.iter().sum();
        let mut batches = Vector::new();
        if let Some(carry) = carry.filter(|_| trusted > 0) {
            let rest = carry.batches.split_off(trusted);
            batches = std::mem::replace(&mut carry.batches, rest);
            carry.lent = trusted;
        }
        let mut log = PartitionLog {
            dir: dir.clone(),
            config: self.config,
            segments: Vec::with_capacity(opened.len().max(1)),
            batches,
            lineage: Lineage::new(),
            points: Vec::with_capacity(opened.len()),
            scanned_on_open,
            frame: Vec::new(),
            offline: None,
            frames_read: Default::default(),
        };
        let mut recovery = LogRecovery {
            swap: swap_repair,
            ..LogRecovery::default()
        };
        for (segment, scan, (base_offset, len, crc), carried) in opened {
            log.points.push(SegmentPoint {
                base_offset,
                len,
                crc,
                batches: carried + scan.headers.len(),
            });
            log.batches.extend(
                scan.headers
                    .into_iter()
                    .map(|(h, len)| BatchSummary::from_header(h, len)),
            );
            if scan.truncated_bytes > 0 {
                recovery = LogRecovery {
                    truncated_bytes: scan.truncated_bytes,
                    reason: scan.reason,
                    swap: swap_repair,
                };
            }
            log.segments.push(segment);
        }
        log.segments.extend(created);
        Ok((log, recovery))
    }
}

/// The scan of segment `i` (at `base`) may resume after the batches the
/// carry's point for it names when they are the carry's batches from
/// `start` on: from the segment's base and `min_base` on, spanning exactly
/// the point's bytes. Returns the resume and how many batches it trusts.
fn resume_point(
    carry: &LogCarry,
    i: usize,
    base: i64,
    start: usize,
    min_base: i64,
    index_interval_bytes: u64,
) -> Option<(Resume, usize)> {
    let point = carry
        .points
        .get(i)
        .filter(|p| p.base_offset == base && p.batches > 0)?;
    let end = start.checked_add(point.batches)?;
    let last = carry.batches.get(end - 1)?;
    if carry.batches.get(start)?.base_offset < min_base.max(base) {
        return None;
    }
    let batches = carry.batches.iter_from(start).take(point.batches);
    // The index entries a scan finds in those bytes: the rule of
    // `segment::scan_frames`, on the positions the summaries' sizes give.
    let mut entries: Vec<IndexEntry> = Vec::new();
    let mut pos = 0u64;
    for b in batches {
        let last_entry = entries.last().map_or(0, |e| e.position);
        if pos - last_entry >= index_interval_bytes {
            entries.push(IndexEntry {
                relative_offset: u32::try_from(b.base_offset - base).ok()?,
                position: pos,
            });
        }
        pos += u64::from(b.size_bytes);
    }
    (pos == point.len).then(|| {
        let resume = Resume {
            len: point.len,
            crc: point.crc,
            entries,
            next_min: last.last_offset + 1,
        };
        (resume, point.batches)
    })
}

impl PartitionLog {
    /// Reads and checks every segment of the log in `dir` without writing
    /// anything (a missing `dir` is an empty log): a bad closed segment is
    /// an error here, before any repair of this or another log was made.
    pub fn scan(dir: &Path, config: LogConfig) -> Result<ScannedLog> {
        Self::scan_carrying(dir, config, None)
    }

    /// [`Self::scan`] after a crash: every segment is still read, but one
    /// whose file begins with the bytes `carry`'s point for it describes
    /// (same length at least, same CRC32) is validated only after them, its
    /// batches before them taken from `carry`. A segment that does not
    /// (torn, cut, rewritten, or new) and every segment after it are
    /// scanned in full. The result is the one a full scan gives.
    pub fn scan_carrying(
        dir: &Path,
        config: LogConfig,
        carry: Option<&LogCarry>,
    ) -> Result<ScannedLog> {
        // An interrupted compaction swap: where the segments are, and what
        // the open will repair (`segment_swap`).
        let swap = SwapLeftovers::find(dir)?;
        let carry = carry.filter(|_| swap.repair_kind() != Some(SwapRepair::RestoredBackup));
        let read_from = swap.read_from(dir);
        let mut bases = Vec::new();
        let entries = match fs::read_dir(&read_from) {
            Ok(entries) => Some(entries),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(MiniKafkaError::io(dir, e)),
        };
        for entry in entries.into_iter().flatten() {
            let entry = entry.map_err(|e| MiniKafkaError::io(dir, e))?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let Some(stem) = name.strip_suffix(".log") else {
                continue;
            };
            if stem.len() == 20 && stem.bytes().all(|b| b.is_ascii_digit()) {
                bases.push(stem.parse::<i64>().map_err(|_| {
                    MiniKafkaError::corrupt(entry.path(), "segment base offset out of range")
                })?);
            }
        }
        bases.sort_unstable();
        let mut segments: Vec<ScannedSegment> = Vec::with_capacity(bases.len());
        let mut carried = Vec::with_capacity(bases.len());
        let mut min_base = 0;
        // Batches trusted so far; `None` once a segment was scanned in full
        // (or resumed and then found more frames): later ones are too.
        let mut trusted = carry.map(|_| 0);
        for (i, &base) in bases.iter().enumerate() {
            let active = i + 1 == bases.len();
            let resume = match (carry, trusted) {
                (Some(c), Some(start)) => {
                    resume_point(c, i, base, start, min_base, config.index_interval_bytes)
                }
                _ => None,
            };
            let count = resume.as_ref().map_or(0, |(_, n)| *n);
            let scanned = Segment::scan(
                &read_from,
                base,
                active,
                min_base,
                config.index_interval_bytes,
                resume.map(|(r, _)| r),
            )?;
            let resumed = scanned.resumed();
            let grew = scanned.scanned_bytes() > 0;
            trusted = trusted.filter(|_| resumed && !grew).map(|t| t + count);
            carried.push(if resumed { count } else { 0 });
            if let Some(next) = scanned.next_offset() {
                min_base = next;
            }
            segments.push(scanned);
        }
        Ok(ScannedLog {
            dir: dir.to_path_buf(),
            config,
            segments,
            carried,
            remembered: None,
            swap,
        })
    }

    /// The in-memory state a time-travel checkpoint keeps of this log (see
    /// [`LogMemo`]); `None` for a log that went offline, whose summaries
    /// may not match its files. The caller flushed the log's files.
    pub fn memo(&self) -> Option<LogMemo> {
        if self.offline.is_some() {
            return None;
        }
        Some(LogMemo {
            batches: self.batches.clone(),
            lineage: self.lineage.clone(),
            segments: self
                .segments
                .iter()
                .map(|s| (s.base_offset(), s.size(), s.index().entries().to_vec()))
                .collect(),
            points: self.points.clone(),
        })
    }

    /// [`Self::scan`] of the copy of a time-travel checkpoint's directory
    /// taken with `memo`: instead of reading the segments, checks that the
    /// directory holds exactly the memo's segments, each a regular file of
    /// the memo's length, and each index a regular file of the length its
    /// entries take; reads no byte of them. `None` when it does not: the
    /// caller scans the log in full. Writes nothing either way.
    ///
    /// Why that is enough: the memo was taken from a quiet log whose files
    /// were flushed, and describes the files as the checkpoint copied
    /// them. The checkpoint's directory is private to
    /// the timeline and nothing writes in it; its closed segments and their
    /// indexes are hard links that every in-place writer unshares first
    /// (`shared_files`), and its active segments are copies. So its files
    /// hold the bytes the memo parsed from, and the restore's copy of them
    /// too. The lengths catch a file cut or grown by anything else. A real
    /// open from disk (a first open, a crash's reopen, `state --data-dir`)
    /// never comes here: it reads and checks every frame before repairing
    /// anything (SPEC §5).
    pub fn scan_remembered(
        dir: &Path,
        config: LogConfig,
        memo: &LogMemo,
    ) -> Result<Option<ScannedLog>> {
        let mut bases = Vec::new();
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(MiniKafkaError::io(dir, e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| MiniKafkaError::io(dir, e))?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if let Some(stem) = name.strip_suffix(".log")
                && stem.len() == 20
                && stem.bytes().all(|b| b.is_ascii_digit())
            {
                bases.push(stem.parse::<i64>().ok());
            }
        }
        bases.sort_unstable();
        let same_segments = bases.len() == memo.segments.len()
            && bases
                .iter()
                .zip(&memo.segments)
                .all(|(found, (base, _, _))| *found == Some(*base));
        if !same_segments {
            return Ok(None);
        }
        let regular_of_len = |path: &Path, len: u64| match fs::symlink_metadata(path) {
            Ok(m) => m.file_type().is_file() && m.len() == len,
            Err(_) => false,
        };
        for (base, size, index) in &memo.segments {
            let log = dir.join(log_file_name(*base));
            let index_path = dir.join(index_file_name(*base));
            let index_len = (index.len() * ENTRY_LEN) as u64;
            if !regular_of_len(&log, *size) || !regular_of_len(&index_path, index_len) {
                return Ok(None);
            }
        }
        Ok(Some(ScannedLog {
            dir: dir.to_path_buf(),
            config,
            segments: Vec::new(),
            carried: Vec::new(),
            remembered: Some(memo.clone()),
            swap: SwapLeftovers::default(),
        }))
    }

    /// Opens a log [`Self::scan_remembered`] checked: its segments' files
    /// with the memo's lengths and index entries, its summaries and
    /// recovery points the memo's (shared, not copied). Nothing to repair.
    pub(crate) fn open_remembered(
        dir: PathBuf,
        config: LogConfig,
        memo: LogMemo,
    ) -> Result<(PartitionLog, LogRecovery)> {
        let mut segments = Vec::with_capacity(memo.segments.len());
        for (base, size, entries) in memo.segments {
            segments.push(Segment::open_remembered(&dir, base, size, entries)?);
        }
        let log = PartitionLog {
            dir,
            config,
            segments,
            batches: memo.batches,
            lineage: memo.lineage,
            points: memo.points,
            scanned_on_open: 0,
            frame: Vec::new(),
            offline: None,
            frames_read: Default::default(),
        };
        Ok((log, LogRecovery::default()))
    }

    /// Moves this log's summaries out as a crash's recovery point (see
    /// [`LogCarry`]); `None` (nothing moved) for a log that went offline,
    /// whose summaries may not match its files.
    pub fn take_carry(&mut self) -> Option<LogCarry> {
        if self.offline.is_some() || self.points.is_empty() {
            return None;
        }
        // Its summaries are cut, all of them.
        let lineage = std::mem::replace(&mut self.lineage, Lineage::new());
        Some(LogCarry {
            points: self.points.clone(),
            batches: std::mem::take(&mut self.batches),
            lent: 0,
            lineage,
        })
    }

    /// Gives back to the log that crashed what [`Self::take_carry`] took,
    /// once no new log holds part of it (a reopen that failed).
    pub fn restore_carry(&mut self, carry: LogCarry) {
        debug_assert_eq!(carry.lent, 0, "given back first");
        self.batches = carry.batches;
    }

    /// Returns to `carry` the batches [`ScannedLog::open_carrying`] lent
    /// this log, leaving it none: `carry` is whole again (a reopen that
    /// failed after this log opened).
    pub fn give_back(&mut self, carry: &mut LogCarry) {
        if carry.lent == 0 {
            return;
        }
        self.lineage = Lineage::new(); // its summaries are cut, all of them
        let mut batches = std::mem::take(&mut self.batches);
        batches.truncate(carry.lent);
        batches.append(std::mem::take(&mut carry.batches));
        carry.batches = batches;
        carry.lent = 0;
    }

    /// Bytes the open that made this log validated frame by frame: every
    /// byte on a first open; after a crash only those written since the
    /// last recovery.
    pub fn scanned_on_open(&self) -> u64 {
        self.scanned_on_open
    }
}

impl Segment {
    /// Opens a segment whose bytes a time-travel checkpoint's memo
    /// describes (`PartitionLog::scan_remembered` checked the lengths):
    /// `size` bytes, `entries` its index. Reads no frame; the index file is
    /// checked against the entries as on any open (`OffsetIndex::open_rebuilt`).
    pub fn open_remembered(
        dir: &Path,
        base_offset: i64,
        size: u64,
        entries: Vec<IndexEntry>,
    ) -> Result<Self> {
        let path = dir.join(log_file_name(base_offset));
        let file = open_rw(&path, false)?;
        let index = OffsetIndex::open_rebuilt(&dir.join(index_file_name(base_offset)), entries)?;
        Ok(Self {
            base_offset,
            path,
            file,
            size,
            index,
        })
    }
}
