//! The book's `journal.py`: `TransactionJournal` (E9). One line per state
//! change, `<crc32 of JSON, 8 lowercase hex digits> <JSON>\n`, each written,
//! flushed and fsynced (`append`). `recover` reads the lines in order and
//! cuts the file at the first line whose CRC, split or JSON is bad, or that
//! has no newline (a torn tail). Like the book, it does not resynchronise
//! past a bad line: every line after it is cut too, even if valid (E14 keeps
//! this limit in both rules).
//!
//! Beyond the book: an index of the frames (the journal pane), the CRC32 of
//! the bytes (a crash's carry, `time_travel::transactions`), and no more
//! frames once a failed write could not be cut back.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::fsutil;
use crate::engine::transaction::model::{TransactionData, TransactionState};
use crate::engine::txn_support::group_commit::{GroupCommit, JournalTicket};
use imbl::Vector;

pub use crate::engine::layout::JOURNAL_FILE;

/// One valid frame (line) of the journal, for the dashboard's journal pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalFrame {
    /// 1-based frame number.
    pub number: usize,
    /// Byte offset of the line in the file.
    pub offset: u64,
    /// Bytes of the line, newline included.
    pub len: u64,
    pub crc: u32,
    pub id: String,
    pub state: TransactionState,
}

/// What opening the journal repaired.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JournalRecovery {
    /// Bytes cut from the first bad line on.
    pub truncated_bytes: u64,
    /// Why the first cut line was bad.
    pub reason: Option<String>,
}

/// The transaction journal file (the book's `path`) and an index of its
/// frames.
#[derive(Debug)]
pub struct TransactionJournal {
    pub(crate) path: PathBuf,
    pub(crate) file: File,
    pub(crate) frames: Vector<JournalFrame>,
    pub(crate) size: u64,
    /// CRC32 of the file's first `size` bytes (what a crash's reopen
    /// checks before it trusts `frames`).
    pub(crate) crc: u32,
    /// fsync each frame (`MiniKafkaConfig::sync_writes`).
    pub(crate) sync: bool,
    /// Why the journal takes no more frames: a write failed and the cut
    /// back failed too (see [`MiniKafkaError::KafkaStorage`]).
    pub(crate) offline: Option<String>,
    /// Kafka rules: frames are synced by their waiters, outside the state
    /// lock (`group_commit`); `None`: each frame is synced as it is written.
    pub(crate) group: Option<Arc<GroupCommit>>,
}

impl TransactionJournal {
    /// The book's `TransactionJournal(path)` then `recover()`: opens (or
    /// creates) the journal in `data_dir`; returns the journal, every valid
    /// record in file order, and what was cut.
    pub fn open(data_dir: &Path) -> Result<(Self, Vec<TransactionData>, JournalRecovery)> {
        let path = data_dir.join(JOURNAL_FILE);
        let bytes = match fsutil::open_data_file(&path, OpenOptions::new().read(true))? {
            Some(mut file) => read_rest(&path, &mut file, 0)?,
            None => Vec::new(),
        };
        Self::recover(path, &bytes, (Vector::new(), 0, 0))
    }

    /// Appends the whole current state of one transaction as a frame: write,
    /// flush, fsync. Under group commit the fsync is left to the request's
    /// [`JournalTicket`], waited for outside the state lock.
    pub fn append(&mut self, data: &TransactionData) -> Result<&JournalFrame> {
        if let Some(reason) = &self.offline {
            return Err(MiniKafkaError::KafkaStorage {
                path: self.path.clone(),
                reason: reason.clone(),
            });
        }
        let group = self.group.clone();
        let writing = group.as_deref().map(GroupCommit::writing).transpose()?;
        let json = data.to_journal_json();
        let crc = crc32fast::hash(json.as_bytes());
        let line = format!("{crc:08x} {json}\n");
        let written = fsutil::write_all(&self.file, &self.path, line.as_bytes()).and_then(|()| {
            if self.sync && writing.is_none() {
                fsutil::sync_data(&self.file, &self.path)
            } else {
                Ok(())
            }
        });
        if let Err(e) = written {
            // Nothing after the last whole frame may stay: a later frame
            // appended behind a partial line would be cut with it by the
            // next open. If even the cut fails, the journal takes no more
            // frames.
            return Err(match fsutil::cut_back(&self.file, &self.path, self.size) {
                Ok(()) => MiniKafkaError::io(&self.path, e),
                Err(cut) => {
                    let failure = fsutil::storage_failure(&self.path, self.size, &e, &cut);
                    if let MiniKafkaError::KafkaStorage { reason, .. } = &failure {
                        self.offline = Some(reason.clone());
                    }
                    failure
                }
            });
        }
        self.frames.push_back(JournalFrame {
            number: self.frames.len() + 1,
            offset: self.size,
            len: line.len() as u64,
            crc,
            id: data.id.clone(),
            state: data.state,
        });
        self.crc = crc_after(self.crc, self.size, line.as_bytes());
        self.size += line.len() as u64;
        if let Some(writing) = writing {
            writing.wrote(self.size);
        }
        Ok(self.frames.back().expect("just pushed"))
    }

    /// Switches group commit on (Kafka rules, with `sync`) or off.
    pub fn set_group_commit(&mut self, on: bool) -> Result<()> {
        self.group = match on && self.sync {
            true => Some(GroupCommit::new(&self.file, &self.path, self.size)?),
            false => None,
        };
        Ok(())
    }

    /// What a request that wrote frames waits for before it is answered:
    /// every frame written so far durable (nothing under the book's rules,
    /// whose frames were synced as they were written).
    pub fn ticket(&self) -> JournalTicket {
        self.group
            .as_ref()
            .map_or_else(JournalTicket::none, GroupCommit::ticket)
    }

    /// The group commit in force, if any.
    pub fn group_commit(&self) -> Option<&Arc<GroupCommit>> {
        self.group.as_ref()
    }

    /// The book's `recover`: reads `bytes` line by line until the first bad
    /// line, cuts the file there, and returns the journal, the records read
    /// and what was cut. `bytes` are the file from byte `read.1` on, after
    /// the frames `read.0` whose bytes have the CRC32 `read.2` (all empty
    /// on a first open; a crash's reopen passes what it trusts).
    pub(crate) fn recover(
        path: PathBuf,
        bytes: &[u8],
        read: (Vector<JournalFrame>, u64, u32),
    ) -> Result<(Self, Vec<TransactionData>, JournalRecovery)> {
        let (mut frames, start, start_crc) = read;
        let (records, new_frames, valid, reason) = scan(bytes, start, frames.len());
        let size = start + valid as u64;
        let file = open_for_append(&path)?;
        let recovery = JournalRecovery {
            truncated_bytes: (bytes.len() - valid) as u64,
            reason,
        };
        if recovery.truncated_bytes > 0 {
            fsutil::cut_back(&file, &path, size).map_err(|e| MiniKafkaError::io(&path, e))?;
        }
        frames.extend(new_frames);
        let crc = crc_after(start_crc, start, &bytes[..valid]);
        let journal = Self {
            path,
            file,
            frames,
            size,
            crc,
            sync: true,
            offline: None,
            group: None,
        };
        Ok((journal, records, recovery))
    }
}

/// Opens the journal for appending (created if missing), refusing anything
/// but a regular file and never following a symlink.
pub(crate) fn open_for_append(path: &Path) -> Result<File> {
    fsutil::open_data_file(
        path,
        OpenOptions::new().create(true).read(true).append(true),
    )?
    .ok_or_else(|| MiniKafkaError::io(path, std::io::Error::from(std::io::ErrorKind::NotFound)))
}

/// The bytes of `file` from `start` up to the size it had when this read
/// began (a file that grows meanwhile is not read past it).
pub(crate) fn read_rest(path: &Path, file: &mut File, start: u64) -> Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let io = |e| MiniKafkaError::io(path, e);
    let len = file.metadata().map_err(io)?.len();
    let mut rest = Vec::with_capacity(usize::try_from(len.saturating_sub(start)).unwrap_or(0));
    file.seek(SeekFrom::Start(start)).map_err(io)?;
    file.take(len.saturating_sub(start))
        .read_to_end(&mut rest)
        .map_err(io)?;
    Ok(rest)
}

/// The CRC32 of `len` bytes whose CRC32 is `crc`, followed by `more`.
fn crc_after(crc: u32, len: u64, more: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new_with_initial_len(crc, len);
    hasher.update(more);
    hasher.finalize()
}

/// Reads the lines of `bytes`, which begin at byte `start` of the file
/// with frame `frames_before + 1`, until the first bad one. Returns the
/// records, their frames, the length of the valid lines in `bytes`, and why
/// the scan stopped early (if it did).
fn scan(
    bytes: &[u8],
    start: u64,
    frames_before: usize,
) -> (
    Vec<TransactionData>,
    Vec<JournalFrame>,
    usize,
    Option<String>,
) {
    let mut records = Vec::new();
    let mut frames = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let at = start + pos as u64;
        let number = frames_before + frames.len() + 1;
        let Some(newline) = bytes[pos..].iter().position(|&b| b == b'\n') else {
            let why = format!("frame {number} at byte {at} has no newline (torn write)");
            return (records, frames, pos, Some(why));
        };
        let line = &bytes[pos..pos + newline];
        match parse_line(line) {
            Ok((crc, data)) => {
                frames.push(JournalFrame {
                    number,
                    offset: at,
                    len: newline as u64 + 1,
                    crc,
                    id: data.id.clone(),
                    state: data.state,
                });
                records.push(data);
                pos += newline + 1;
            }
            Err(why) => {
                let why = format!("frame {number} at byte {at}: {why}");
                return (records, frames, pos, Some(why));
            }
        }
    }
    (records, frames, pos, None)
}

pub(crate) fn parse_line(line: &[u8]) -> std::result::Result<(u32, TransactionData), String> {
    let space = line
        .iter()
        .position(|&b| b == b' ')
        .ok_or("no space between CRC and JSON")?;
    let (hex, json) = (&line[..space], &line[space + 1..]);
    let hex_ok = hex.len() == 8 && hex.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    let stored = std::str::from_utf8(hex)
        .ok()
        .filter(|_| hex_ok)
        .and_then(|h| u32::from_str_radix(h, 16).ok())
        .ok_or("CRC is not 8 lowercase hex digits")?;
    let computed = crc32fast::hash(json);
    if stored != computed {
        return Err(format!(
            "CRC mismatch: stored {stored:08x}, computed {computed:08x}"
        ));
    }
    let data = TransactionData::from_journal_json(json).map_err(|e| format!("bad JSON: {e}"))?;
    Ok((stored, data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::core::metadata::TopicPartition;

    fn sample(state: TransactionState) -> TransactionData {
        let mut d = TransactionData::begin("tx-1");
        d.record_write(&TopicPartition::new("out", 0), 0);
        d.state = state;
        d
    }

    #[test]
    fn frames_are_crc_space_json_newline_and_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let (mut j, records, rec) = TransactionJournal::open(dir.path()).unwrap();
        assert!(records.is_empty() && rec.truncated_bytes == 0);
        j.append(&sample(TransactionState::Ongoing)).unwrap();
        j.append(&sample(TransactionState::PrepareCommit)).unwrap();
        let text = std::fs::read_to_string(dir.path().join(JOURNAL_FILE)).unwrap();
        let first = text.lines().next().unwrap();
        let (crc, json) = first.split_once(' ').unwrap();
        assert_eq!(crc, format!("{:08x}", crc32fast::hash(json.as_bytes())));
        assert_eq!(json, sample(TransactionState::Ongoing).to_journal_json());
        drop(j);
        let (j, records, rec) = TransactionJournal::open(dir.path()).unwrap();
        assert_eq!(rec, JournalRecovery::default());
        assert_eq!(records.len(), 2);
        assert_eq!(records[1].state, TransactionState::PrepareCommit);
        assert_eq!(j.frames()[1].offset, first.len() as u64 + 1);
        assert_eq!(j.size(), text.len() as u64);
    }

    #[test]
    fn a_torn_last_frame_is_truncated_at_every_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(JOURNAL_FILE);
        {
            let (mut j, _, _) = TransactionJournal::open(dir.path()).unwrap();
            j.append(&sample(TransactionState::Ongoing)).unwrap();
            j.append(&sample(TransactionState::CompleteCommit)).unwrap();
        }
        let intact = std::fs::read(&path).unwrap();
        let first_len = intact.iter().position(|&b| b == b'\n').unwrap() + 1;
        for cut in 1..=(intact.len() - first_len) {
            std::fs::write(&path, &intact[..intact.len() - cut]).unwrap();
            let (j, records, rec) = TransactionJournal::open(dir.path()).unwrap();
            let expected_cut = intact.len() - first_len - cut;
            assert_eq!(rec.truncated_bytes, expected_cut as u64, "cut {cut}");
            assert_eq!(
                records.len(),
                1,
                "cut {cut}: state falls back to the previous frame"
            );
            assert_eq!(records[0].state, TransactionState::Ongoing);
            assert_eq!(std::fs::read(&path).unwrap(), intact[..first_len]);
            assert_eq!(j.frames().len(), 1);
        }
    }

    #[test]
    fn no_resynchronisation_past_a_bad_middle_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(JOURNAL_FILE);
        {
            let (mut j, _, _) = TransactionJournal::open(dir.path()).unwrap();
            for s in [
                TransactionState::Ongoing,
                TransactionState::PrepareCommit,
                TransactionState::CompleteCommit,
            ] {
                j.append(&sample(s)).unwrap();
            }
        }
        let mut bytes = std::fs::read(&path).unwrap();
        let second = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
        bytes[second] = b'z'; // the second line's CRC is no longer hex
        std::fs::write(&path, &bytes).unwrap();
        let (_, records, rec) = TransactionJournal::open(dir.path()).unwrap();
        assert_eq!(records.len(), 1, "the valid third line is cut too");
        assert_eq!(rec.truncated_bytes, (bytes.len() - second) as u64);
        assert!(rec.reason.unwrap().contains("frame 2"));
    }

    #[test]
    fn bad_lines_of_every_kind_are_cut() {
        let good = sample(TransactionState::Ongoing).to_journal_json();
        let crc = format!("{:08x}", crc32fast::hash(good.as_bytes()));
        assert_ne!(
            crc,
            crc.to_uppercase(),
            "the uppercase case below needs a hex letter"
        );
        for bad in [
            format!("{crc}{good}\n"),
            format!("{crc} {}\n", &good[..good.len() - 1]),
            format!("00000000 {good}\n"),
            format!("{} {good}\n", crc.to_uppercase()),
            format!("{:08x} {{\"id\":1}}\n", crc32fast::hash(b"{\"id\":1}")),
            "\n".to_string(),
        ] {
            let (records, _, valid, reason) = scan(bad.as_bytes(), 0, 0);
            assert!(
                records.is_empty() && valid == 0 && reason.is_some(),
                "{bad:?}"
            );
        }
    }
}
