//! One log segment (E2): `<20-digit base offset>.log` holding concatenated MKB1
//! frames, with its sparse `.index`. A segment knows byte positions; offsets
//! and batches above it belong to [`super::PartitionLog`].

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::engine::core::batch::RecordBatch;
use crate::engine::core::codec::{self, FRAME_HEADER_LEN};
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::fsutil;
use crate::engine::layout::{index_file_name, log_file_name};
use crate::engine::log::index::{ENTRY_LEN, IndexEntry, OffsetIndex};
use crate::engine::shared_files;

/// Bytes of a frame needed to learn its offsets: the frame header plus the
/// payload fields up to and including `last_offset_delta`.
const OFFSETS_PREFIX_LEN: usize = FRAME_HEADER_LEN + 34;

/// Reused buffers (the scan buffer, a log's frame buffer) keep at most this
/// much between uses: a 1 GiB segment or a huge batch is not held forever.
pub const REUSED_BUFFER_MAX: usize = 8 << 20;

/// Drops `buffer`'s memory if it grew past [`REUSED_BUFFER_MAX`].
pub fn keep_if_small(buffer: &mut Vec<u8>) {
    if buffer.capacity() > REUSED_BUFFER_MAX {
        *buffer = Vec::new();
    }
}

/// How much of a large frame [`Segment::read_batch_head_at`] reads first.
pub const HEAD_READ_BYTES: usize = 4096;

/// One open segment: file handles, size and index.
#[derive(Debug)]
pub struct Segment {
    pub(crate) base_offset: i64,
    pub(crate) path: PathBuf,
    pub(crate) file: File,
    pub(crate) size: u64,
    pub(crate) index: OffsetIndex,
}

impl Segment {
    /// Creates an empty segment in `dir`.
    pub fn create(dir: &Path, base_offset: i64) -> Result<Self> {
        Self::create_for(dir, base_offset, 0)
    }

    /// As [`Self::create`], with room for `index_entries` index entries
    /// made at once: the entries vector regrowing while frames are
    /// appended was a large allocation on the append path, which made
    /// glibc consolidate the records the caller had just freed (P3).
    pub fn create_for(dir: &Path, base_offset: i64, index_entries: usize) -> Result<Self> {
        let path = dir.join(log_file_name(base_offset));
        let file = open_rw(&path, true)?;
        let index = OffsetIndex::create(
            &dir.join(index_file_name(base_offset)),
            Vec::with_capacity(index_entries),
        )?;
        Ok(Self {
            base_offset,
            path,
            file,
            size: 0,
            index,
        })
    }

    /// The first offset this segment may hold.
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    /// Bytes in the `.log` file.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The `.log` file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The sparse index.
    pub fn index(&self) -> &OffsetIndex {
        &self.index
    }

    /// True when a batch ending at `last_offset` can go in this segment: its
    /// offsets must stay within `u32` of the base for the index.
    pub fn can_hold(&self, last_offset: i64) -> bool {
        relative_offset(self.base_offset, last_offset).is_some()
    }

    /// Appends one encoded frame whose batch starts at `batch_base_offset`,
    /// adding an index entry when `index_interval_bytes` have passed since the
    /// last one.
    pub fn append(
        &mut self,
        frame: &[u8],
        batch_base_offset: i64,
        index_interval_bytes: u64,
        fsync: bool,
    ) -> Result<()> {
        let entry = self.index_entry_due(self.size, batch_base_offset, index_interval_bytes);
        let entries = entry.as_slice();
        self.write_frames(frame, entries, fsync)
    }

    /// Appends `frames`, whole frames laid end to end, in one write:
    /// `starts` gives each frame's batch base offset and length, in order.
    /// The index gets the entries [`Self::append`] would have made frame by
    /// frame, in one write too. On failure nothing of the run is left.
    pub fn append_run(
        &mut self,
        frames: &[u8],
        starts: &[(i64, u64)],
        index_interval_bytes: u64,
        fsync: bool,
    ) -> Result<()> {
        let mut entries = Vec::new();
        let mut last_entry = self.index.last_position();
        let mut position = self.size;
        for &(base_offset, len) in starts {
            let since_entry = position - last_entry.unwrap_or(0);
            if position > 0 && since_entry >= index_interval_bytes {
                entries.push(self.entry_at(position, base_offset));
                last_entry = Some(position);
            }
            position += len;
        }
        debug_assert_eq!(position - self.size, frames.len() as u64);
        self.write_frames(frames, &entries, fsync)
    }

    /// The index entry a frame written at `position` gets, if
    /// `index_interval_bytes` have passed since the last entry.
    fn index_entry_due(
        &self,
        position: u64,
        batch_base_offset: i64,
        index_interval_bytes: u64,
    ) -> Option<IndexEntry> {
        let since_entry = position - self.index.last_position().unwrap_or(0);
        (position > 0 && since_entry >= index_interval_bytes)
            .then(|| self.entry_at(position, batch_base_offset))
    }

    fn entry_at(&self, position: u64, batch_base_offset: i64) -> IndexEntry {
        IndexEntry {
            relative_offset: relative_offset(self.base_offset, batch_base_offset)
                .expect("PartitionLog rolls before an offset leaves u32 range"),
            position,
        }
    }

    /// Writes the index `entries` then `frames` at the end of the segment.
    fn write_frames(&mut self, frames: &[u8], entries: &[IndexEntry], fsync: bool) -> Result<()> {
        if let [entry] = entries {
            self.index.append(*entry)?;
        } else {
            self.index.append_all(entries)?;
        }
        let written = fsutil::write_all(&self.file, &self.path, frames).and_then(|()| {
            if fsync {
                fsutil::sync_data(&self.file, &self.path)
            } else {
                Ok(())
            }
        });
        if let Err(e) = written {
            // Cut back to the last whole frame (and drop the index entries
            // just added for these): a partial frame left in place would
            // make every later frame unreadable to followers and cut at the
            // next open.
            let cut = fsutil::cut_back(&self.file, &self.path, self.size);
            let index = self.index.truncate_to_position(self.size);
            return Err(match (cut, index) {
                (Ok(()), Ok(())) => MiniKafkaError::io(&self.path, e),
                (Err(cut), _) => fsutil::storage_failure(&self.path, self.size, &e, &cut),
                (Ok(()), Err(index)) => MiniKafkaError::KafkaStorage {
                    path: self.index.path().to_path_buf(),
                    reason: format!(
                        "a write to {} failed ({e}) and cutting its index back failed ({index})",
                        self.path.display()
                    ),
                },
            });
        }
        self.size += frames.len() as u64;
        Ok(())
    }

    /// The byte position of the first frame whose last offset is at or past
    /// `offset`, found through the sparse index and a forward scan of frame
    /// headers. `None` if every frame in this segment ends before it.
    pub fn position_of(&self, offset: i64) -> Result<Option<u64>> {
        // An offset below this segment's base starts at its first frame.
        let relative = u32::try_from((offset - self.base_offset).max(0)).unwrap_or(u32::MAX);
        let mut pos = self.index.lookup(relative);
        while pos < self.size {
            let (_, last, len) = self.offsets_at(pos)?;
            if last >= offset {
                return Ok(Some(pos));
            }
            pos += len;
        }
        Ok(None)
    }

    /// Base offset, last offset and frame length of the frame at `pos`.
    fn offsets_at(&self, pos: u64) -> Result<(i64, i64, u64)> {
        let mut buf = [0u8; OFFSETS_PREFIX_LEN];
        self.read_exact_at(&mut buf, pos)?;
        let payload_len = u32::from_be_bytes(buf[4..8].try_into().unwrap()) as u64;
        let p = &buf[FRAME_HEADER_LEN..];
        let base = i64::from_be_bytes(p[1..9].try_into().unwrap());
        let last_delta = i32::from_be_bytes(p[30..34].try_into().unwrap());
        Ok((
            base,
            base.saturating_add(i64::from(last_delta)),
            FRAME_HEADER_LEN as u64 + payload_len,
        ))
    }

    /// Decodes the frame at `pos`; returns it and its length.
    pub fn read_batch_at(&self, pos: u64) -> Result<(RecordBatch, u64)> {
        let mut head = [0u8; FRAME_HEADER_LEN];
        self.read_exact_at(&mut head, pos)?;
        let total = FRAME_HEADER_LEN + u32::from_be_bytes(head[4..8].try_into().unwrap()) as usize;
        let mut frame = vec![0u8; total];
        self.read_exact_at(&mut frame, pos)?;
        let (batch, len) = codec::decode(&frame).map_err(|e| {
            MiniKafkaError::corrupt(
                &self.path,
                format!("frame at byte {pos} changed on disk: {e}"),
            )
        })?;
        Ok((batch, len as u64))
    }

    /// The batch at `pos` with at most `max_records` of its records, reading
    /// only the start of the frame when that holds them (see
    /// [`codec::decode_head`]); a frame whose first records do not fit in
    /// [`HEAD_READ_BYTES`] is read whole and checked.
    pub fn read_batch_head_at(&self, pos: u64, max_records: usize) -> Result<(RecordBatch, u64)> {
        let mut head = [0u8; FRAME_HEADER_LEN];
        self.read_exact_at(&mut head, pos)?;
        let payload_len = u32::from_be_bytes(head[4..8].try_into().unwrap()) as usize;
        let total = (FRAME_HEADER_LEN + payload_len) as u64;
        if payload_len > HEAD_READ_BYTES {
            let mut prefix = vec![0u8; HEAD_READ_BYTES];
            self.read_exact_at(&mut prefix, pos + FRAME_HEADER_LEN as u64)?;
            if let Ok(batch) = codec::decode_head(&prefix, max_records) {
                return Ok((batch, total));
            }
        }
        let (mut batch, len) = self.read_batch_at(pos)?;
        batch.records.truncate(max_records);
        Ok((batch, len))
    }

    /// Appends the `len` bytes at `pos` to `out` as they are on disk (whole
    /// frames, which the caller checks): one read for a run of frames.
    pub fn read_bytes_at(&self, pos: u64, len: usize, out: &mut Vec<u8>) -> Result<()> {
        let start = out.len();
        out.resize(start + len, 0);
        self.read_exact_at(&mut out[start..], pos)
    }

    pub(crate) fn read_exact_at(&self, buf: &mut [u8], pos: u64) -> Result<()> {
        self.file
            .read_exact_at(buf, pos)
            .map_err(|e| MiniKafkaError::io(&self.path, e))
    }

    /// Cuts the segment at byte `position` (a frame boundary).
    /// A closed segment shared with a time-travel checkpoint gets its own
    /// copy first (`shared_files`).
    pub fn truncate_to_position(&mut self, position: u64) -> Result<()> {
        if shared_files::unshare(&self.path, &self.file)? {
            self.file = open_rw(&self.path, false)?;
        }
        fsutil::set_len(&self.file, &self.path, position)
            .map_err(|e| MiniKafkaError::io(&self.path, e))?;
        self.index.truncate_to_position(position)?;
        self.size = position;
        Ok(())
    }

    /// Bytes of the `.log` and `.index` files together (the book's
    /// `Segment.total_size_bytes`, what retention by bytes counts).
    pub fn total_size_bytes(&self) -> u64 {
        self.size + (self.index.entries().len() * ENTRY_LEN) as u64
    }

    /// The largest record timestamp in the segment, -1 when it holds no
    /// record (the book's `Segment.max_timestamp_ms`, what retention by time
    /// compares). Read from the frames: the batch summaries carry no
    /// timestamps, and only retention asks, for closed segments.
    pub fn max_timestamp_ms(&self) -> Result<i64> {
        let mut max = -1;
        let mut pos = 0;
        while pos < self.size {
            let (batch, len) = self.read_batch_at(pos)?;
            for record in &batch.records {
                max = max.max(record.timestamp_ms);
            }
            pos += len;
        }
        Ok(max)
    }

    /// Every batch in the segment, in order (the book's `iter_batches`).
    pub fn iter_batches(&self) -> Result<Vec<RecordBatch>> {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < self.size {
            let (batch, len) = self.read_batch_at(pos)?;
            out.push(batch);
            pos += len;
        }
        Ok(out)
    }

    /// Removes the segment's files.
    pub fn delete(self) -> Result<()> {
        fs::remove_file(&self.path).map_err(|e| MiniKafkaError::io(&self.path, e))?;
        let index = self.index.path().to_path_buf();
        match fs::remove_file(&index) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(MiniKafkaError::io(&index, e))
            }
            _ => Ok(()),
        }
    }
}

/// `offset - base` as an index's `u32` relative offset, if it fits.
pub(crate) fn relative_offset(base: i64, offset: i64) -> Option<u32> {
    offset.checked_sub(base).and_then(|d| u32::try_from(d).ok())
}

/// Opens a segment file for reading and appending, refusing anything but a
/// regular file and never following a symlink.
pub(crate) fn open_rw(path: &Path, create: bool) -> Result<File> {
    fsutil::open_data_file(
        path,
        OpenOptions::new().read(true).append(true).create(create),
    )?
    .ok_or_else(|| MiniKafkaError::io(path, std::io::Error::from(std::io::ErrorKind::NotFound)))
}
