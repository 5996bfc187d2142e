//! The sparse offset index (FORMATS.md "Index"): entries of
//! `relative_offset u32 | position u64`, one per `index_interval_bytes` of log,
//! strictly increasing in both fields. It is rebuilt from the log on open.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::fsutil;
use crate::engine::shared_files;

/// Bytes per index entry.
pub const ENTRY_LEN: usize = 12;

/// One index entry: a batch's offset relative to the segment base, and the
/// byte position of its frame in the segment file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexEntry {
    pub relative_offset: u32,
    pub position: u64,
}

/// A segment's sparse index, in memory and in its `.index` file.
#[derive(Debug)]
pub struct OffsetIndex {
    path: PathBuf,
    file: File,
    entries: Vec<IndexEntry>,
}

impl OffsetIndex {
    /// Writes a fresh index file holding `entries` (the rebuild on open).
    pub fn create(path: &Path, entries: Vec<IndexEntry>) -> Result<Self> {
        let file = open_index(path)?;
        let mut index = Self {
            path: path.to_path_buf(),
            file,
            entries,
        };
        index.rewrite()?;
        Ok(index)
    }

    /// Opens the index at `path` for the `entries` a segment scan rebuilt,
    /// rewriting the file only when its bytes differ: reopening a data
    /// directory reads indexes instead of rewriting each one (P4).
    /// The read is capped at the size those entries take: a file of another
    /// size differs without being read.
    pub fn open_rebuilt(path: &Path, entries: Vec<IndexEntry>) -> Result<Self> {
        let mut file = open_index(path)?;
        let expected = encode_entries(&entries);
        let len = file
            .metadata()
            .map_err(|e| MiniKafkaError::io(path, e))?
            .len();
        let same = len == expected.len() as u64 && {
            let mut existing = vec![0; expected.len()];
            file.read_exact(&mut existing)
                .map_err(|e| MiniKafkaError::io(path, e))?;
            existing == expected
        };
        let mut index = Self {
            path: path.to_path_buf(),
            file,
            entries,
        };
        if same {
            index
                .file
                .seek(SeekFrom::End(0))
                .map_err(|e| MiniKafkaError::io(path, e))?;
        } else {
            index.rewrite()?;
        }
        Ok(index)
    }

    /// Replaces the file's contents with the entries held in memory.
    fn rewrite(&mut self) -> Result<()> {
        self.unshare()?;
        let bytes = encode_entries(&self.entries);
        fsutil::set_len(&self.file, &self.path, 0)
            .and_then(|()| self.file.seek(SeekFrom::Start(0)).map(|_| ()))
            .and_then(|()| fsutil::write_all(&self.file, &self.path, &bytes))
            .map_err(|e| MiniKafkaError::io(&self.path, e))
    }

    /// Parses index bytes; a partial entry or a non-increasing one is corrupt.
    pub fn parse(bytes: &[u8]) -> std::result::Result<Vec<IndexEntry>, String> {
        if !bytes.len().is_multiple_of(ENTRY_LEN) {
            return Err(format!(
                "{} bytes is not a whole number of 12-byte entries",
                bytes.len()
            ));
        }
        let entries: Vec<IndexEntry> = bytes
            .chunks_exact(ENTRY_LEN)
            .map(|c| IndexEntry {
                relative_offset: u32::from_be_bytes(c[..4].try_into().unwrap()),
                position: u64::from_be_bytes(c[4..].try_into().unwrap()),
            })
            .collect();
        if entries
            .windows(2)
            .any(|w| w[1].relative_offset <= w[0].relative_offset || w[1].position <= w[0].position)
        {
            return Err("entries are not strictly increasing".to_string());
        }
        Ok(entries)
    }

    /// How many entries fit before the vector holding them regrows.
    #[cfg(test)]
    pub(crate) fn entries_capacity(&self) -> usize {
        self.entries.capacity()
    }

    /// Appends one entry to memory and file.
    /// A failed or short write is cut back to the entries before it, so
    /// the file always holds exactly the entries in memory; if
    /// the cut fails too, the error is [`MiniKafkaError::KafkaStorage`].
    pub fn append(&mut self, entry: IndexEntry) -> Result<()> {
        self.write_entries(&encode_entry(entry), &[entry])
    }

    /// Appends `entries` (which must follow the last entry, in order) in one
    /// write: a follower copying many frames at once indexes them together.
    /// Nothing is written when `entries` is empty.
    pub fn append_all(&mut self, entries: &[IndexEntry]) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        self.write_entries(&encode_entries(entries), entries)
    }

    /// Writes `bytes`, the encoding of `entries`, and keeps the entries:
    /// [`Self::append`]'s failure rules.
    fn write_entries(&mut self, bytes: &[u8], entries: &[IndexEntry]) -> Result<()> {
        if let Err(e) = fsutil::write_all(&self.file, &self.path, bytes) {
            let len = (self.entries.len() * ENTRY_LEN) as u64;
            return Err(
                match fsutil::cut_back(&self.file, &self.path, len)
                    .and_then(|()| (&self.file).seek(SeekFrom::Start(len)).map(|_| ()))
                {
                    Ok(()) => MiniKafkaError::io(&self.path, e),
                    Err(cut) => fsutil::storage_failure(&self.path, len, &e, &cut),
                },
            );
        }
        self.entries.extend_from_slice(entries);
        Ok(())
    }

    /// The position to start scanning from for `relative_offset`: the last
    /// entry at or below it, else the segment start.
    pub fn lookup(&self, relative_offset: u32) -> u64 {
        let idx = self
            .entries
            .partition_point(|e| e.relative_offset <= relative_offset);
        idx.checked_sub(1).map_or(0, |i| self.entries[i].position)
    }

    /// Drops entries at or past `position` (after a truncation).
    pub fn truncate_to_position(&mut self, position: u64) -> Result<()> {
        let keep = self.entries.partition_point(|e| e.position < position);
        self.entries.truncate(keep);
        self.unshare()?;
        let len = (keep * ENTRY_LEN) as u64;
        // Move the write position too: the file is not in append mode.
        fsutil::set_len(&self.file, &self.path, len)
            .and_then(|()| self.file.seek(SeekFrom::Start(len)))
            .map(|_| ())
            .map_err(|e| MiniKafkaError::io(&self.path, e))
    }

    /// Gives the file its own inode before an in-place write if a
    /// time-travel checkpoint links it (`shared_files`).
    fn unshare(&mut self) -> Result<()> {
        if shared_files::unshare(&self.path, &self.file)? {
            self.file = open_index(&self.path)?;
        }
        Ok(())
    }

    /// Position of the last entry, if any.
    pub fn last_position(&self) -> Option<u64> {
        self.entries.last().map(|e| e.position)
    }

    /// All entries.
    pub fn entries(&self) -> &[IndexEntry] {
        &self.entries
    }

    /// The index file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Opens (creating) an index file for reading and writing, refusing
/// anything but a regular file and never following a symlink.
fn open_index(path: &Path) -> Result<File> {
    fsutil::open_data_file(path, OpenOptions::new().create(true).read(true).write(true))?
        .ok_or_else(|| MiniKafkaError::io(path, std::io::Error::from(std::io::ErrorKind::NotFound)))
}

fn encode_entries(entries: &[IndexEntry]) -> Vec<u8> {
    entries.iter().flat_map(|e| encode_entry(*e)).collect()
}

fn encode_entry(entry: IndexEntry) -> [u8; ENTRY_LEN] {
    let mut out = [0; ENTRY_LEN];
    out[..4].copy_from_slice(&entry.relative_offset.to_be_bytes());
    out[4..].copy_from_slice(&entry.position.to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(relative_offset: u32, position: u64) -> IndexEntry {
        IndexEntry {
            relative_offset,
            position,
        }
    }

    #[test]
    fn lookup_finds_the_last_entry_at_or_below() {
        let dir = tempfile::tempdir().unwrap();
        let mut idx = OffsetIndex::create(&dir.path().join("0.index"), vec![e(10, 4100)]).unwrap();
        idx.append(e(20, 8200)).unwrap();
        assert_eq!(idx.lookup(0), 0);
        assert_eq!(idx.lookup(10), 4100);
        assert_eq!(idx.lookup(19), 4100);
        assert_eq!(idx.lookup(500), 8200);
        let bytes = std::fs::read(idx.path()).unwrap();
        assert_eq!(
            OffsetIndex::parse(&bytes).unwrap(),
            vec![e(10, 4100), e(20, 8200)]
        );
        idx.truncate_to_position(8200).unwrap();
        assert_eq!(std::fs::read(idx.path()).unwrap().len(), ENTRY_LEN);
    }

    #[test]
    fn partial_or_unordered_entries_are_corrupt() {
        assert!(OffsetIndex::parse(&[0; 13]).is_err());
        let mut bytes = encode_entry(e(5, 100)).to_vec();
        bytes.extend_from_slice(&encode_entry(e(4, 200)));
        assert!(OffsetIndex::parse(&bytes).is_err());
    }
}
