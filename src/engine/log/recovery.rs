//! A log's recovery at open, segment by segment (E2; the book's
//! `recovery.py` and the checks of its `Segment.open`): every frame of a
//! segment is read and checked before anything is repaired, so an open
//! that must refuse a directory refuses it untouched; the active segment's
//! bad tail is cut when the segment is opened, a bad closed segment is an
//! error. A crash's reopen may resume a segment's scan after the bytes the
//! last open read ([`Resume`], [`SegmentPoint`]; `time_travel/log.rs`).

use std::path::{Path, PathBuf};

use crate::engine::core::codec::{self, BatchHeader};
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::fsutil;
use crate::engine::layout::{index_file_name, log_file_name};
use crate::engine::log::index::{IndexEntry, OffsetIndex};
use crate::engine::log::segment::{Segment, keep_if_small, open_rw, relative_offset};
use crate::engine::shared_files;

/// A segment as the last open of its log read it: the recovery point a
/// crash's reopen checks. Its first `len` bytes, of CRC32 `crc`, hold its
/// first `batches` batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentPoint {
    pub base_offset: i64,
    pub len: u64,
    pub crc: u32,
    pub batches: usize,
}

/// Where a crash's reopen may resume the scan of a segment (its recovery
/// point): the segment's first `len` bytes, whose CRC32 is `crc`, were
/// read and checked by the last open and hold whole frames;
/// `entries` are the index entries a scan finds in them and `next_min` the
/// offset after their last batch. [`Segment::scan`] trusts them only when
/// the file still begins with exactly those bytes.
#[derive(Debug)]
pub struct Resume {
    pub len: u64,
    pub crc: u32,
    pub entries: Vec<IndexEntry>,
    pub next_min: i64,
}

thread_local! {
    /// The buffer segment scans read into, kept between segments: reading a
    /// data directory into one reused buffer instead of a fresh allocation
    /// per segment saves the page faults of new memory (P4).
    static SCAN_BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// What opening a segment found: its valid batches, and how many bytes of a
/// bad tail were cut (active segment only).
#[derive(Debug)]
pub struct SegmentScan {
    pub headers: Vec<(BatchHeader, u32)>,
    pub truncated_bytes: u64,
    pub reason: Option<String>,
}

/// A segment read and checked by [`Segment::scan`], not yet opened.
#[derive(Debug)]
pub struct ScannedSegment {
    dir: PathBuf,
    path: PathBuf,
    base_offset: i64,
    /// The batches found after the resumed prefix (all of them when the
    /// scan did not resume).
    headers: Vec<(BatchHeader, u32)>,
    entries: Vec<IndexEntry>,
    /// Bytes of whole valid frames.
    valid_len: u64,
    /// CRC32 of those bytes: the recovery point the next crash checks.
    crc: u32,
    /// Bytes at the start trusted from a [`Resume`] (0: scanned in full).
    resumed: u64,
    /// The offset after the last valid batch, `None` without one.
    next: Option<i64>,
    /// Bytes after them (the bad tail of an active segment).
    truncated_bytes: u64,
    reason: Option<String>,
}

impl ScannedSegment {
    /// The offset after the last valid batch, or `None` if it has none.
    pub fn next_offset(&self) -> Option<i64> {
        self.next
    }

    /// Whether the scan resumed from a [`Resume`] (its batches before it
    /// are the caller's to supply).
    pub fn resumed(&self) -> bool {
        self.resumed > 0
    }

    /// The base offset, the length and the CRC32 of the valid frames.
    pub fn point(&self) -> (i64, u64, u32) {
        (self.base_offset, self.valid_len, self.crc)
    }

    /// Bytes the scan validated frame by frame (after a resumed prefix).
    pub fn scanned_bytes(&self) -> u64 {
        self.valid_len + self.truncated_bytes - self.resumed
    }

    /// Moves the scanned segment to `dir` (the backup of an interrupted
    /// compaction swap renamed back to the live name, `segment_swap`).
    pub fn relocate(&mut self, dir: &Path) {
        self.path = dir.join(log_file_name(self.base_offset));
        self.dir = dir.to_path_buf();
    }

    /// Opens the scanned segment: cuts its bad tail (active segment only)
    /// and writes its index if the file on disk differs.
    pub fn open(self) -> Result<(Segment, SegmentScan)> {
        let Self {
            dir,
            path,
            base_offset,
            headers,
            entries,
            valid_len,
            truncated_bytes,
            reason,
            ..
        } = self;
        let mut file = open_rw(&path, false)?;
        if truncated_bytes > 0 {
            if shared_files::unshare(&path, &file)? {
                file = open_rw(&path, false)?;
            }
            fsutil::cut_back(&file, &path, valid_len).map_err(|e| MiniKafkaError::io(&path, e))?;
        }
        let index = OffsetIndex::open_rebuilt(&dir.join(index_file_name(base_offset)), entries)?;
        let segment = Segment {
            base_offset,
            path,
            file,
            size: valid_len,
            index,
        };
        Ok((
            segment,
            SegmentScan {
                headers,
                truncated_bytes,
                reason,
            },
        ))
    }
}

/// [`Segment::scan`] on the segment's bytes.
#[allow(clippy::too_many_arguments)] // the scan's inputs, passed through
fn scan_frames(
    dir: &Path,
    path: PathBuf,
    bytes: &[u8],
    base_offset: i64,
    active: bool,
    min_base_offset: i64,
    index_interval_bytes: u64,
    resume: Option<Resume>,
) -> Result<ScannedSegment> {
    let mut headers = Vec::new();
    let (mut entries, mut pos, mut next_min, start_crc) = match resume {
        Some(r) => (r.entries, r.len as usize, r.next_min, r.crc),
        None => (Vec::new(), 0, min_base_offset.max(base_offset), 0),
    };
    let resumed = pos;
    let mut failure = None;
    while pos < bytes.len() {
        match codec::validate(&bytes[pos..]) {
            Ok((header, _)) if relative_offset(base_offset, header.last_offset()).is_none() => {
                failure = Some(format!(
                    "batch at offset {} is not within 2^32 offsets of the segment base",
                    header.base_offset
                ));
                break;
            }
            Ok((header, len)) if header.base_offset >= next_min => {
                let last_entry = entries.last().map_or(0, |e: &IndexEntry| e.position);
                if pos as u64 - last_entry >= index_interval_bytes {
                    entries.push(IndexEntry {
                        relative_offset: relative_offset(base_offset, header.base_offset)
                            .expect("checked above"),
                        position: pos as u64,
                    });
                }
                next_min = header.last_offset() + 1;
                headers.push((header, len as u32));
                pos += len;
            }
            Ok((header, _)) => {
                failure = Some(format!(
                    "batch at offset {} does not follow offset {}",
                    header.base_offset,
                    next_min - 1
                ));
                break;
            }
            Err(e) => {
                failure = Some(e.to_string());
                break;
            }
        }
    }
    if let Some(reason) = &failure
        && !active
    {
        return Err(MiniKafkaError::corrupt(
            &path,
            format!("closed segment has an invalid frame at byte {pos}: {reason}"),
        ));
    }
    let mut crc = crc32fast::Hasher::new_with_initial_len(start_crc, resumed as u64);
    crc.update(&bytes[resumed..pos]);
    let next = (resumed > 0 || !headers.is_empty()).then_some(next_min);
    Ok(ScannedSegment {
        dir: dir.to_path_buf(),
        path,
        base_offset,
        headers,
        entries,
        valid_len: pos as u64,
        crc: crc.finalize(),
        resumed: resumed as u64,
        next,
        truncated_bytes: (bytes.len() - pos) as u64,
        reason: failure,
    })
}

impl Segment {
    /// Reads and checks an existing segment without writing anything.
    ///
    /// Every frame is validated (magic, length, CRC, payload structure,
    /// increasing offsets from `min_base_offset`). In the `active` segment the
    /// first bad frame and everything after it is the bad tail that
    /// [`ScannedSegment::open`] cuts; in a closed segment it is a
    /// [`MiniKafkaError::Corrupt`] naming the file and the byte position.
    /// Scanning every log before repairing any is what lets an open that
    /// must refuse a directory refuse it untouched.
    ///
    /// With `resume`, when the file begins with the bytes it describes (as
    /// long, same CRC32: one pass at memory speed), only the frames after
    /// them are validated; the scan is then the one a full scan gives, since
    /// each frame's check depends only on its bytes, the offset before it
    /// and the position of the last index entry. Otherwise the whole file
    /// is scanned and [`ScannedSegment::resumed`] says so.
    pub fn scan(
        dir: &Path,
        base_offset: i64,
        active: bool,
        min_base_offset: i64,
        index_interval_bytes: u64,
        resume: Option<Resume>,
    ) -> Result<ScannedSegment> {
        let path = dir.join(log_file_name(base_offset));
        let mut bytes = SCAN_BUFFER.take();
        bytes.clear();
        // A regular file only (a FIFO would block the open, a device be read
        // without end), and its index too, checked here so that an open that
        // must refuse one refuses before anything is written.
        let read = fsutil::read_regular_into(&path, u64::MAX, &mut bytes).and_then(|found| {
            if found {
                fsutil::require_regular_or_missing(&dir.join(index_file_name(base_offset)))
            } else {
                Err(MiniKafkaError::io(
                    &path,
                    std::io::Error::from(std::io::ErrorKind::NotFound),
                ))
            }
        });
        let result = read.and_then(|()| {
            let resume = resume.filter(|r| {
                usize::try_from(r.len)
                    .is_ok_and(|len| len <= bytes.len() && crc32fast::hash(&bytes[..len]) == r.crc)
            });
            scan_frames(
                dir,
                path,
                &bytes,
                base_offset,
                active,
                min_base_offset,
                index_interval_bytes,
                resume,
            )
        });
        keep_if_small(&mut bytes);
        SCAN_BUFFER.set(bytes);
        result
    }
}
