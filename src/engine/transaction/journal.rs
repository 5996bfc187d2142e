//! `TransactionJournal` (E9): one line per state change,
//! `<crc32 of JSON, 8 lowercase hex digits> <JSON>\n`, each written, flushed
//! and fsynced. `recover` reads lines in order and truncates the file at the
//! first line whose CRC, split or JSON is bad, or that has no newline (a torn
//! tail). Like the book, it does not resynchronise past a bad line: every line
//! after it is cut too, even if valid (E14 keeps this limit in both rules).

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::fsutil;
use crate::engine::shared_vec::SharedVec;
use crate::engine::transaction::model::{TransactionData, TransactionState};

/// The journal's file name under the data directory.
pub const JOURNAL_FILE: &str = "transactions.journal";

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

/// The journal's in-memory index, kept with a time-travel checkpoint so a
/// restore can reopen the checkpoint's copy without reading every frame
/// again (issue 7, P5). Its frames are shared in chunks with the journal
/// it was taken from and the ones restored from it (issue 17 item 11), so
/// taking it and restoring it copy no frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalMemo {
    frames: SharedVec<JournalFrame>,
    size: u64,
    crc: u32,
}

/// A crash's recovery point for the journal (issue 17 item 12): the frames
/// the process that crashed had read or written, the bytes they span and
/// the CRC32 of those bytes. [`TransactionJournal::reopen`] trusts them
/// when the file still starts with exactly those bytes (same CRC32), and
/// parses only the bytes after them (docs/engine-decisions.md, "A crash's
/// recovery reads what changed since the last one").
#[derive(Debug)]
pub struct JournalCarry {
    frames: SharedVec<JournalFrame>,
    size: u64,
    crc: u32,
}

/// The transaction journal file and an index of its frames.
#[derive(Debug)]
pub struct TransactionJournal {
    path: PathBuf,
    file: File,
    frames: SharedVec<JournalFrame>,
    size: u64,
    /// CRC32 of the file's first `size` bytes: what a crash's reopen checks
    /// before it trusts `frames` (see [`JournalCarry`]).
    crc: u32,
    /// fsync each frame (`MiniKafkaConfig::sync_writes`).
    sync: bool,
    /// Why the journal takes no more frames: a write failed and the cut
    /// back failed too (see [`MiniKafkaError::KafkaStorage`]).
    offline: Option<String>,
}

impl TransactionJournal {
    /// Opens (or creates) the journal in `data_dir` and recovers it: returns
    /// the journal, every valid record in file order, and what was cut.
    pub fn open(data_dir: &Path) -> Result<(Self, Vec<TransactionData>, JournalRecovery)> {
        let (journal, records, recovery) = Self::reopen(data_dir, &mut None)?;
        Ok((journal, records, recovery))
    }

    /// [`Self::open`] after a crash: when the file still begins with the
    /// bytes `carry` describes (as long, same CRC32), its frames are taken
    /// from `carry` (left `None`) and only the bytes after them are parsed;
    /// the records returned are then those of the tail alone. Otherwise
    /// `carry` is left as it is and the whole file is parsed. Either way the
    /// journal, the cut and its reason are those of a full open: the same
    /// bytes parse the same.
    pub fn reopen(
        data_dir: &Path,
        carry: &mut Option<JournalCarry>,
    ) -> Result<(Self, Vec<TransactionData>, JournalRecovery)> {
        let path = data_dir.join(JOURNAL_FILE);
        let (tail, start, trusted) = read_after(&path, carry.as_ref())?;
        let (start_crc, frames_before) = match carry.as_ref().filter(|_| trusted) {
            Some(c) => (c.crc, c.frames.len()),
            None => (0, 0),
        };
        let (records, tail_frames, valid, reason) = scan(&tail, start, frames_before);
        let valid_len = start + valid as u64;
        let file = open_for_append(&path)?;
        let recovery = JournalRecovery {
            truncated_bytes: (tail.len() - valid) as u64,
            reason,
        };
        if recovery.truncated_bytes > 0 {
            fsutil::cut_back(&file, &path, valid_len).map_err(|e| MiniKafkaError::io(&path, e))?;
        }
        let mut frames = match carry.take_if(|_| trusted) {
            Some(c) => c.frames,
            None => SharedVec::new(),
        };
        frames.extend(tail_frames);
        let crc = crc_after(start_crc, start, &tail[..valid]);
        let journal = Self {
            path,
            file,
            frames,
            size: valid_len,
            crc,
            sync: true,
            offline: None,
        };
        Ok((journal, records, recovery))
    }

    /// Moves this journal's frames out as a crash's recovery point (the
    /// journal keeps none: it is about to be dropped, or
    /// [`Self::restore_carry`] gives them back).
    pub fn take_carry(&mut self) -> JournalCarry {
        JournalCarry {
            frames: std::mem::take(&mut self.frames),
            size: self.size,
            crc: self.crc,
        }
    }

    /// Gives back what [`Self::take_carry`] took (a reopen that failed).
    pub fn restore_carry(&mut self, carry: JournalCarry) {
        self.frames = carry.frames;
    }

    /// Appends the whole current state of one transaction as a frame: write,
    /// flush, fsync.
    pub fn append(&mut self, data: &TransactionData) -> Result<&JournalFrame> {
        if let Some(reason) = &self.offline {
            return Err(MiniKafkaError::KafkaStorage {
                path: self.path.clone(),
                reason: reason.clone(),
            });
        }
        let json = data.to_journal_json();
        let crc = crc32fast::hash(json.as_bytes());
        let line = format!("{crc:08x} {json}\n");
        let written = fsutil::write_all(&self.file, &self.path, line.as_bytes()).and_then(|()| {
            if self.sync {
                fsutil::sync_data(&self.file, &self.path)
            } else {
                Ok(())
            }
        });
        if let Err(e) = written {
            // Nothing after the last whole frame may stay: a later frame
            // appended behind a partial line would be cut with it by the
            // next open (issue 17). If even the cut fails, the journal
            // takes no more frames.
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
        self.frames.push(JournalFrame {
            number: self.frames.len() + 1,
            offset: self.size,
            len: line.len() as u64,
            crc,
            id: data.id.clone(),
            state: data.state,
        });
        self.crc = crc_after(self.crc, self.size, line.as_bytes());
        self.size += line.len() as u64;
        Ok(self.frames.last().expect("just pushed"))
    }

    /// The transaction state frame `frame` holds, read back from the file
    /// (positioned read: the append position does not move). The snapshot
    /// decodes only the frames a screen shows, so this reads one line.
    pub fn read_frame(&self, frame: &JournalFrame) -> Result<TransactionData> {
        use std::os::unix::fs::FileExt;
        let len = usize::try_from(frame.len).unwrap_or(usize::MAX);
        let mut line = vec![0; len];
        self.file
            .read_exact_at(&mut line, frame.offset)
            .map_err(|e| MiniKafkaError::io(&self.path, e))?;
        let line = line.strip_suffix(b"\n").unwrap_or(&line);
        parse_line(line).map(|(_, data)| data).map_err(|why| {
            MiniKafkaError::corrupt(&self.path, format!("frame {}: {why}", frame.number))
        })
    }

    /// The index a restore needs (see [`JournalMemo`]).
    pub fn memo(&self) -> JournalMemo {
        JournalMemo {
            frames: self.frames.clone(),
            size: self.size,
            crc: self.crc,
        }
    }

    /// Opens the journal of a checkpoint's copy whose frames `memo` already
    /// holds, without reading them. `None` when the file is not the size the
    /// memo says: the caller then opens and recovers it in full.
    pub fn open_trusted(data_dir: &Path, memo: &JournalMemo) -> Result<Option<Self>> {
        let path = data_dir.join(JOURNAL_FILE);
        let size = match std::fs::symlink_metadata(&path) {
            Ok(m) if !m.file_type().is_file() => return Ok(None),
            Ok(m) => m.len(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
            Err(e) => return Err(MiniKafkaError::io(&path, e)),
        };
        if size != memo.size {
            return Ok(None);
        }
        let file = open_for_append(&path)?;
        Ok(Some(Self {
            path,
            file,
            frames: memo.frames.clone(),
            size: memo.size,
            crc: memo.crc,
            sync: true,
            offline: None,
        }))
    }

    /// Gives the file its own inode if a time-travel checkpoint links it
    /// (`shared_files`), and keeps writing and reading through the new
    /// one: called before a cut that may reach below the checkpoint's
    /// length (a torn-tail fault).
    pub fn unshare(&mut self) -> Result<()> {
        if crate::engine::shared_files::unshare(&self.path, &self.file)? {
            self.file = open_for_append(&self.path)?;
        }
        Ok(())
    }

    /// Whether frames are fsynced (`MiniKafkaConfig::sync_writes`).
    pub fn set_sync(&mut self, sync: bool) {
        self.sync = sync;
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every valid frame, oldest first.
    pub fn frames(&self) -> &SharedVec<JournalFrame> {
        &self.frames
    }

    /// Bytes in the file.
    pub fn size(&self) -> u64 {
        self.size
    }
}

/// Opens the journal for appending (created if missing), refusing anything
/// but a regular file and never following a symlink.
fn open_for_append(path: &Path) -> Result<File> {
    fsutil::open_data_file(
        path,
        OpenOptions::new().create(true).read(true).append(true),
    )?
    .ok_or_else(|| MiniKafkaError::io(path, std::io::Error::from(std::io::ErrorKind::NotFound)))
}

impl JournalCarry {
    /// A carry of no frames (it describes every file, trusting nothing).
    pub(crate) fn empty() -> Self {
        Self {
            frames: SharedVec::new(),
            size: 0,
            crc: 0,
        }
    }

    /// Whether its frames span exactly the bytes it names.
    fn is_consistent(&self) -> bool {
        self.frames.last().map_or(0, |f| f.offset + f.len) == self.size
    }
}

/// Bytes read at a time to check a carried prefix's CRC32.
const CHECK_CHUNK: usize = 256 << 10;

/// Reads the journal at `path`: a regular file only, up to the size it had
/// (issue 17, item 4); a missing one is empty. When `carry` describes the
/// file's first bytes (the file at least as long, their CRC32 the carry's:
/// one pass at memory speed, in chunks that are not kept) only the bytes
/// after them are returned, with their position and `true`; otherwise the
/// whole file, at 0, and `false`.
fn read_after(path: &Path, carry: Option<&JournalCarry>) -> Result<(Vec<u8>, u64, bool)> {
    use std::io::{Read, Seek, SeekFrom};
    use std::os::unix::fs::FileExt;
    let io = |e| MiniKafkaError::io(path, e);
    let Some(mut file) = fsutil::open_data_file(path, OpenOptions::new().read(true))? else {
        return Ok((Vec::new(), 0, false));
    };
    let len = file.metadata().map_err(io)?.len();
    let mut trusted = false;
    if let Some(c) = carry.filter(|c| c.is_consistent() && c.size <= len) {
        let mut hasher = crc32fast::Hasher::new();
        let mut chunk = vec![0; CHECK_CHUNK.min(usize::try_from(c.size).unwrap_or(CHECK_CHUNK))];
        let mut pos = 0;
        while pos < c.size {
            let n = chunk
                .len()
                .min(usize::try_from(c.size - pos).unwrap_or(usize::MAX));
            file.read_exact_at(&mut chunk[..n], pos).map_err(io)?;
            hasher.update(&chunk[..n]);
            pos += n as u64;
        }
        trusted = hasher.finalize() == c.crc;
    }
    let start = match (trusted, carry) {
        (true, Some(c)) => c.size,
        _ => 0,
    };
    let mut tail = Vec::with_capacity(usize::try_from(len - start).unwrap_or(0));
    file.seek(SeekFrom::Start(start)).map_err(io)?;
    file.take(len - start).read_to_end(&mut tail).map_err(io)?;
    Ok((tail, start, trusted))
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

fn parse_line(line: &[u8]) -> std::result::Result<(u32, TransactionData), String> {
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

    /// A restore trusts the memo only for the file it describes: the same
    /// frames as a full open, and `None` once the file changed size.
    #[test]
    fn a_trusted_open_matches_a_full_open_and_refuses_another_file() {
        let dir = tempfile::tempdir().unwrap();
        let (mut journal, _, _) = TransactionJournal::open(dir.path()).unwrap();
        journal.append(&sample(TransactionState::Ongoing)).unwrap();
        journal
            .append(&sample(TransactionState::PrepareCommit))
            .unwrap();
        let memo = journal.memo();
        drop(journal);
        let mut trusted = TransactionJournal::open_trusted(dir.path(), &memo)
            .unwrap()
            .expect("same size");
        let (full, _, _) = TransactionJournal::open(dir.path()).unwrap();
        assert_eq!(trusted.frames(), full.frames());
        assert_eq!(trusted.size(), full.size());
        // Appends continue at the end, as after a full open.
        trusted
            .append(&sample(TransactionState::CompleteCommit))
            .unwrap();
        let (reopened, records, _) = TransactionJournal::open(dir.path()).unwrap();
        assert_eq!(reopened.frames(), trusted.frames());
        assert_eq!(records.len(), 3);
        assert!(
            TransactionJournal::open_trusted(dir.path(), &memo)
                .unwrap()
                .is_none()
        );
    }

    /// A crash's reopen (issue 17 item 12) parses only the bytes after the
    /// carried frames when the file still begins with them, and opens what
    /// a full open opens: the same frames, cut and reason; a file that no
    /// longer begins with them is parsed in full and the carry kept.
    #[test]
    fn a_reopen_with_a_carry_parses_only_the_tail_and_matches_a_full_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(JOURNAL_FILE);
        let (mut j, _, _) = TransactionJournal::open(dir.path()).unwrap();
        j.append(&sample(TransactionState::Ongoing)).unwrap();
        j.append(&sample(TransactionState::PrepareCommit)).unwrap();
        let carried = j.take_carry();
        drop(j);
        let intact = std::fs::read(&path).unwrap();
        let third = format!("{}\n", {
            let json = sample(TransactionState::CompleteCommit).to_journal_json();
            format!("{:08x} {json}", crc32fast::hash(json.as_bytes()))
        });
        for (name, bytes, trusted) in [
            ("as written", intact.clone(), true),
            (
                "a frame more",
                [intact.clone(), third.into_bytes()].concat(),
                true,
            ),
            (
                "garbage after",
                [intact.clone(), b"zz{\n".to_vec()].concat(),
                true,
            ),
            ("last frame cut", intact[..intact.len() - 3].to_vec(), false),
            (
                "first byte changed",
                [b"f".as_slice(), &intact[1..]].concat(),
                false,
            ),
        ] {
            std::fs::write(&path, &bytes).unwrap();
            let (full, full_records, full_cut) = TransactionJournal::open(dir.path()).unwrap();
            std::fs::write(&path, &bytes).unwrap();
            let mut carry = Some(JournalCarry {
                frames: carried.frames.clone(),
                size: carried.size,
                crc: carried.crc,
            });
            let (j, records, cut) = TransactionJournal::reopen(dir.path(), &mut carry).unwrap();
            assert_eq!(j.frames(), full.frames(), "{name}");
            assert_eq!((j.size(), j.crc), (full.size(), full.crc), "{name}");
            assert_eq!(cut, full_cut, "{name}");
            assert_eq!(carry.is_none(), trusted, "{name}");
            let skipped = if trusted { 2 } else { 0 };
            assert_eq!(records, full_records[skipped..], "{name}");
        }
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
