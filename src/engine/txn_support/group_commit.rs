//! Kafka rules (`RuleSwitches::group_commit_journal`): the journal's
//! frames are written under the cluster's state lock, as before, but their
//! `fdatasync` runs outside it, shared by every frame written so far
//! (leader/follower group commit). A request takes a [`JournalTicket`] (how
//! far the journal reached once its frames were written) and waits on it
//! after the state lock is released: the first waiter whose frames are not
//! yet durable becomes the leader and syncs everything written up to then;
//! the others wait on a condition variable for the "synced up to" position
//! to pass their ticket, and lead the next sync if it does not. So N
//! concurrent transactions pay about one sync per round instead of one per
//! frame, as Kafka's `__transaction_state` appends share one log flush.
//!
//! A sync that fails fails every waiter whose frames it was to cover (and
//! every later one); the journal is cut back to its last synced length (no
//! later frame may land behind bytes whose durability is unknown) and takes
//! no more frames until a crash reopens it, as Kafka takes a log directory
//! offline on an I/O error (`KafkaStorageException`).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::fsutil;

/// The shared sync of one journal file.
#[derive(Debug)]
pub struct GroupCommit {
    progress: Mutex<Progress>,
    synced: Condvar,
    /// The journal's file (its own descriptor: a sync runs while the state
    /// lock, which guards the journal, is free).
    file: File,
    path: PathBuf,
}

/// How far the journal was written and synced.
#[derive(Debug, Default)]
struct Progress {
    /// Bytes of whole frames in the file.
    written: u64,
    /// Bytes known durable.
    synced: u64,
    /// A leader's `fdatasync` is running.
    syncing: bool,
    /// Why the journal takes no more frames: a sync failed.
    failed: Option<String>,
    /// `fdatasync` calls made (for tests and `perf_report`).
    syncs: u64,
}

/// How far the journal must be durable before a request is answered.
#[derive(Debug, Clone)]
pub struct JournalTicket {
    group: Option<Arc<GroupCommit>>,
    upto: u64,
}

impl JournalTicket {
    /// Nothing to wait for (the book's rules: every frame was synced as it
    /// was written).
    pub fn none() -> Self {
        Self {
            group: None,
            upto: 0,
        }
    }

    /// Whether there is a sync to wait for (group commit is on).
    pub fn waits(&self) -> bool {
        self.group.is_some()
    }

    /// Waits until every byte before the ticket is durable, syncing it if
    /// no other thread is. Call it without the state lock.
    pub fn wait(&self) -> Result<()> {
        match &self.group {
            Some(group) => group.wait_synced(self.upto),
            None => Ok(()),
        }
    }
}

/// The lock held while a frame is written: a failing sync cuts the file
/// back under it, so a write never races a cut.
pub(crate) struct Writing<'a>(MutexGuard<'a, Progress>);

impl Writing<'_> {
    /// The frame is whole in the file, which is now `end` bytes long.
    pub(crate) fn wrote(mut self, end: u64) {
        self.0.written = end;
    }
}

impl GroupCommit {
    /// The group commit of `file` at `path`, whose `size` bytes are taken
    /// as synced (a later sync covers them anyway: `fdatasync` syncs the
    /// whole file).
    pub fn new(file: &File, path: &Path, size: u64) -> Result<Arc<Self>> {
        let file = file.try_clone().map_err(|e| MiniKafkaError::io(path, e))?;
        Ok(Arc::new(Self {
            progress: Mutex::new(Progress {
                written: size,
                synced: size,
                ..Progress::default()
            }),
            synced: Condvar::new(),
            file,
            path: path.to_path_buf(),
        }))
    }

    fn lock(&self) -> MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the write lock, or refuses (the journal is offline after a
    /// failed sync).
    pub(crate) fn writing(&self) -> Result<Writing<'_>> {
        let progress = self.lock();
        match &progress.failed {
            Some(reason) => Err(self.offline(reason)),
            None => Ok(Writing(progress)),
        }
    }

    /// The ticket of everything written so far.
    pub fn ticket(self: &Arc<Self>) -> JournalTicket {
        JournalTicket {
            upto: self.lock().written,
            group: Some(Arc::clone(self)),
        }
    }

    /// `fdatasync` calls made so far.
    pub fn syncs(&self) -> u64 {
        self.lock().syncs
    }

    /// Bytes known durable.
    pub fn synced(&self) -> u64 {
        self.lock().synced
    }

    fn offline(&self, reason: &str) -> MiniKafkaError {
        MiniKafkaError::KafkaStorage {
            path: self.path.clone(),
            reason: reason.to_string(),
        }
    }

    /// Whether frames were written that no sync has covered yet.
    pub fn unsynced(&self) -> bool {
        let progress = self.lock();
        progress.written > progress.synced
    }

    /// One `fdatasync` of the whole file now, even if every frame this
    /// group knows of is durable: after a simulated crash the reopened
    /// journal takes its bytes as synced, but frames a deferred step wrote
    /// before the crash may still be only in the page cache
    /// (`BrokerCluster::sync_journal`). A failure is handled as any
    /// leader's (cut back, offline).
    pub(crate) fn sync_all(&self) -> Result<()> {
        let upto = self.lock().written;
        self.wait_synced_from(upto, true)
    }

    fn wait_synced(&self, upto: u64) -> Result<()> {
        self.wait_synced_from(upto, false)
    }

    /// `force`: lead one sync even if `upto` is already counted durable
    /// (once: the sync this call leads or waits for covers it).
    fn wait_synced_from(&self, upto: u64, mut force: bool) -> Result<()> {
        let mut progress = self.lock();
        loop {
            if progress.synced >= upto && !force {
                return Ok(());
            }
            if let Some(reason) = &progress.failed {
                return Err(self.offline(reason));
            }
            if progress.syncing {
                progress = self
                    .synced
                    .wait(progress)
                    .unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            // The leader: sync every frame written so far, lock released.
            force = false;
            progress.syncing = true;
            let target = progress.written;
            drop(progress);
            let result = fsutil::sync_data(&self.file, &self.path);
            progress = self.lock();
            progress.syncing = false;
            progress.syncs += 1;
            match result {
                Ok(()) => progress.synced = progress.synced.max(target),
                Err(e) => {
                    // Under the lock: no frame is written meanwhile.
                    let synced = progress.synced;
                    let cut = fsutil::cut_back(&self.file, &self.path, synced);
                    progress.written = synced;
                    progress.failed = Some(match cut {
                        Ok(()) => format!(
                            "an fdatasync failed ({e}); the journal was cut back to its last synced length, {synced} bytes"
                        ),
                        Err(cut) => format!(
                            "an fdatasync failed ({e}) and cutting the journal back to its last synced length, {synced} bytes, failed too ({cut})"
                        ),
                    });
                }
            }
            self.synced.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::io_fault::{Effect, Errno, FileOp, inject};
    use std::io::Write;

    fn journal() -> (tempfile::TempDir, PathBuf, File) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap();
        (dir, path, file)
    }

    fn write(group: &GroupCommit, mut file: &File, end: u64, bytes: &[u8]) {
        let writing = group.writing().unwrap();
        file.write_all(bytes).unwrap();
        writing.wrote(end);
    }

    #[test]
    fn one_sync_covers_every_frame_written_before_it() {
        let (_dir, path, file) = journal();
        let group = GroupCommit::new(&file, &path, 0).unwrap();
        write(&group, &file, 4, b"abc\n");
        let first = group.ticket();
        write(&group, &file, 8, b"def\n");
        let second = group.ticket();
        first.wait().unwrap();
        assert_eq!(group.syncs(), 1);
        assert_eq!(group.synced(), 8, "the leader synced both frames");
        second.wait().unwrap();
        assert_eq!(
            group.syncs(),
            1,
            "the second waiter found its frame durable"
        );
        group.ticket().wait().unwrap();
        assert_eq!(group.syncs(), 1, "nothing new: no sync");
    }

    #[test]
    fn concurrent_waiters_share_syncs() {
        let (_dir, path, file) = journal();
        let group = GroupCommit::new(&file, &path, 0).unwrap();
        let file = Arc::new(file);
        let end = Arc::new(Mutex::new(0u64));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (group, file, end) = (group.clone(), file.clone(), end.clone());
                std::thread::spawn(move || {
                    for _ in 0..25 {
                        let ticket = {
                            let mut end = end.lock().unwrap();
                            *end += 4;
                            write(&group, &file, *end, b"xyz\n");
                            group.ticket()
                        };
                        ticket.wait().unwrap();
                        assert!(group.synced() >= ticket.upto);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(group.synced(), 400);
        assert!(group.syncs() <= 100, "never more syncs than frames");
    }

    #[test]
    fn a_failed_sync_fails_its_waiters_cuts_back_and_refuses_later_frames() {
        let (_dir, path, file) = journal();
        let group = GroupCommit::new(&file, &path, 0).unwrap();
        write(&group, &file, 4, b"abc\n");
        group.ticket().wait().unwrap();
        write(&group, &file, 8, b"def\n");
        let ticket = group.ticket();
        {
            let _fault = inject(&path, FileOp::Sync, 1, Effect::Fail(Errno::Io));
            let err = ticket.wait().unwrap_err().to_string();
            assert!(err.contains("fdatasync failed"), "{err}");
        }
        assert_eq!(std::fs::read(&path).unwrap(), b"abc\n", "cut back");
        assert!(ticket.wait().is_err(), "a second wait fails too");
        assert!(group.writing().is_err(), "no frame lands after the cut");
        let durable = JournalTicket {
            group: Some(group.clone()),
            upto: 4,
        };
        durable.wait().unwrap();
    }
}
