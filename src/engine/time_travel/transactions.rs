//! The transaction journal's and coordinator's memo (kept with a time-travel
//! checkpoint) and carry (handed from a crashed state to its reopen).
//!
//! A memo is the coordinator's state without its file: a restore opens the
//! checkpoint's copy of the journal without reading a frame when the file
//! is the size the memo says. A carry is the crashed coordinator's state,
//! moved out: the reopen trusts it when the file still begins with the
//! bytes it was replayed from (same length at least, same CRC32), and
//! replays only the frames after them onto it. Replay is a fold of
//! `TransactionInstances::apply` over the frames, and the carry is that
//! fold over its prefix, so the result is a full open's. Their lists are
//! persistent (`imbl::Vector`), so taking and restoring copy no frame.

use std::fs::OpenOptions;
use std::path::Path;

use crate::engine::config::RuleSwitches;
use crate::engine::core::recovery::RecoveryReport;
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::fsutil;
use crate::engine::transaction::journal::{
    JOURNAL_FILE, JournalFrame, JournalRecovery, TransactionJournal, open_for_append, read_rest,
};
use crate::engine::transaction::manager::TransactionCoordinator;
use crate::engine::transaction::model::TransactionData;
use crate::engine::txn_support::instances::TransactionInstances;
use imbl::Vector;

/// The journal's in-memory index, kept with a time-travel checkpoint so a
/// restore can reopen the checkpoint's copy without reading every frame
/// again (P5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalMemo {
    frames: Vector<JournalFrame>,
    size: u64,
    crc: u32,
}

/// A crash's recovery point for the journal: the frames the process that
/// crashed had read or written, the bytes they span and their CRC32.
#[derive(Debug)]
pub struct JournalCarry {
    frames: Vector<JournalFrame>,
    size: u64,
    crc: u32,
}

/// A quiet coordinator's state without its file, kept with a time-travel
/// checkpoint (see [`TransactionCoordinator::open_from_memo`]), markers
/// included: a restore keeps them instead of finding them again in every
/// leader's batch summaries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoordinatorMemo {
    journal: JournalMemo,
    transactions: TransactionInstances,
    /// The hanging late writes: in no file, so kept here for a restore.
    late_writes: Vec<crate::engine::txn_support::late_writes::LateWrite>,
}

/// A crash's recovery point for the coordinator: the state its journal's
/// frames replay to (markers aside: an open finds them in the logs), moved
/// out of the coordinator that crashed, with the journal's carry.
#[derive(Debug)]
pub struct CoordinatorCarry {
    journal: JournalCarry,
    transactions: TransactionInstances,
    /// Instances the carry holds as journaled, with the state the crashed
    /// coordinator held in memory (see [`TransactionCoordinator::take_carry`]).
    unjournaled: Vec<(usize, TransactionData)>,
}

impl TransactionJournal {
    /// [`Self::open`] after a crash: when the file still begins with the
    /// bytes `carry` describes (as long, same CRC32), its frames are taken
    /// from `carry` (left `None`) and only the bytes after them are parsed;
    /// the records returned are then those of the tail alone. Otherwise
    /// `carry` is left as it is and the whole file is parsed. Either way the
    /// journal, the cut and its reason are those of a full open.
    pub fn reopen(
        data_dir: &Path,
        carry: &mut Option<JournalCarry>,
    ) -> Result<(Self, Vec<TransactionData>, JournalRecovery)> {
        let path = data_dir.join(JOURNAL_FILE);
        let (tail, trusted) = read_after(&path, carry.as_ref())?;
        let read = match carry.take_if(|_| trusted) {
            Some(c) => (c.frames, c.size, c.crc),
            None => (Vector::new(), 0, 0),
        };
        Self::recover(path, &tail, read)
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
            group: None,
        }))
    }

    /// Gives the file its own inode if a time-travel checkpoint links it
    /// (`shared_files`), and keeps writing and reading through the new
    /// one: called before a cut that may reach below the checkpoint's
    /// length (a torn-tail fault).
    pub fn unshare(&mut self) -> Result<()> {
        if crate::engine::shared_files::unshare(&self.path, &self.file)? {
            self.file = open_for_append(&self.path)?;
            // Syncs go to the new inode.
            self.set_group_commit(self.group.is_some())?;
        }
        Ok(())
    }
}

impl JournalCarry {
    /// A carry of no frames (it describes every file, trusting nothing).
    pub(crate) fn empty() -> Self {
        Self {
            frames: Vector::new(),
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

/// Reads the journal at `path`: a regular file only, up to the size it had;
/// a missing one is empty. When `carry` describes the file's first bytes
/// (the file at least as long, their CRC32 the carry's: one pass at memory
/// speed, in chunks that are not kept) only the bytes after them are
/// returned, with `true`; otherwise the whole file and `false`.
fn read_after(path: &Path, carry: Option<&JournalCarry>) -> Result<(Vec<u8>, bool)> {
    use std::os::unix::fs::FileExt;
    let io = |e| MiniKafkaError::io(path, e);
    let Some(mut file) = fsutil::open_data_file(path, OpenOptions::new().read(true))? else {
        return Ok((Vec::new(), false));
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
    Ok((read_rest(path, &mut file, start)?, trusted))
}

impl CoordinatorCarry {
    /// Lends the journal's part to [`TransactionJournal::reopen`] (an empty
    /// one is left until it is put back).
    fn take_journal(&mut self) -> JournalCarry {
        std::mem::replace(&mut self.journal, JournalCarry::empty())
    }
}

impl TransactionCoordinator {
    /// [`Self::open`] after a crash, from the state `carry` holds when the
    /// journal still begins with the frames it was replayed from (then
    /// `carry` is taken and only the frames after them are replayed onto
    /// it); otherwise `carry` stays and the whole journal is replayed.
    pub fn reopen(
        data_dir: &Path,
        rules: RuleSwitches,
        timeout_ms: u64,
        report: &mut RecoveryReport,
        carry: &mut Option<CoordinatorCarry>,
    ) -> Result<Self> {
        let mut journal_carry = carry.as_mut().map(|c| c.take_journal());
        let opened = TransactionJournal::reopen(data_dir, &mut journal_carry);
        let used = carry.is_some() && journal_carry.is_none();
        if let (Some(c), Some(j)) = (carry.as_mut(), journal_carry) {
            c.journal = j;
        }
        let (journal, records, recovery) = opened?;
        let transactions = match carry.take_if(|_| used) {
            Some(c) => c.transactions,
            None => TransactionInstances::default(),
        };
        Ok(Self::replay(
            journal,
            transactions,
            (records, recovery),
            (rules, timeout_ms),
            report,
        ))
    }

    /// Moves out the state a crash's reopen may start from (see
    /// [`CoordinatorCarry`]), leaving this coordinator without instances
    /// (its markers stay) until [`Self::restore_carry`] gives them back.
    /// `None` (and nothing moved) when an instance's journaled state cannot
    /// be read back.
    ///
    /// Only an instance in flight can differ from its last frame (an abort
    /// discards its staged offsets in memory before COMPLETE_ABORT is
    /// journaled): those are read back from the journal, so the carry is
    /// exactly what replaying the journal gives.
    pub fn take_carry(&mut self) -> Option<CoordinatorCarry> {
        let mut journaled = Vec::new();
        for &index in &self.in_flight {
            let id = &self.transactions.instance(index).id;
            let frame = self.journal.frames().iter().rev().find(|f| &f.id == id)?;
            let data = self.journal.read_frame(frame).ok()?;
            journaled.push((index, data));
        }
        let mut transactions = std::mem::take(&mut self.transactions);
        self.transactions.markers = std::mem::take(&mut transactions.markers);
        let unjournaled = journaled
            .into_iter()
            .map(|(index, data)| {
                let was = std::mem::replace(&mut transactions.instances[index], data);
                (index, was)
            })
            .collect();
        Some(CoordinatorCarry {
            journal: self.journal.take_carry(),
            transactions,
            unjournaled,
        })
    }

    /// Gives back what [`Self::take_carry`] took (a reopen that failed, so
    /// this coordinator's state stays the one shown).
    pub fn restore_carry(&mut self, carry: CoordinatorCarry) {
        let CoordinatorCarry {
            journal,
            mut transactions,
            unjournaled,
        } = carry;
        for (index, data) in unjournaled {
            transactions.instances[index] = data;
        }
        self.journal.restore_carry(journal);
        transactions.markers = std::mem::take(&mut self.transactions.markers);
        self.transactions = transactions;
    }

    /// The state a reopen that used the carry leaves (it replayed frames
    /// onto it), as a carry again: given back to the crashed coordinator
    /// when the reopen fails later.
    pub fn carry_back(&mut self) -> Option<CoordinatorCarry> {
        self.in_flight.clear();
        self.take_carry()
    }

    /// The state a checkpoint keeps (the caller checked [`Self::is_quiet`]:
    /// nothing in flight, nothing pending). Its lists are clones of this
    /// coordinator's, sharing all of them.
    pub fn memo(&self) -> CoordinatorMemo {
        CoordinatorMemo {
            journal: self.journal.memo(),
            transactions: self.transactions.clone(),
            late_writes: self.late_writes.clone(),
        }
    }

    /// The coordinator of a checkpoint's copy, from the memo taken with it:
    /// what [`Self::open`] would rebuild by reading the journal, without
    /// reading it, so a step back costs the checkpoint interval and not the
    /// journal's length (P5). `None` when the journal file is not the one
    /// the memo describes.
    pub fn open_from_memo(
        data_dir: &Path,
        rules: RuleSwitches,
        timeout_ms: u64,
        memo: &CoordinatorMemo,
    ) -> Result<Option<Self>> {
        let Some(journal) = TransactionJournal::open_trusted(data_dir, &memo.journal)? else {
            return Ok(None);
        };
        let mut report = RecoveryReport::default();
        let mut coordinator = Self::replay(
            journal,
            memo.transactions.clone(),
            (Vec::new(), JournalRecovery::default()),
            (rules, timeout_ms),
            &mut report,
        );
        coordinator.late_writes = memo.late_writes.clone();
        Ok(Some(coordinator))
    }

    /// Gives the journal file its own inode if a time-travel checkpoint
    /// links it (see [`TransactionJournal::unshare`]).
    pub fn unshare_journal(&mut self) -> Result<()> {
        self.journal.unshare()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::core::metadata::TopicPartition;
    use crate::engine::transaction::model::TransactionState;

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
}
