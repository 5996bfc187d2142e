//! Files for a log's next segment, made ahead of its roll on a helper
//! thread, so that an append that rolls a segment names two files instead
//! of creating them (issue 17, item 13; docs/performance.md, "P3").
//!
//! Why: with the book's 1 MiB segments a roll every 80 batches of P3 was
//! the largest single cost of an append. Creating a file on ext4 without a
//! journal (this machine's file system) costs 0.1-2 ms, not microseconds:
//! the inode allocator skips every free inode deleted in the last minute
//! (`recently_deleted`), reading its inode table block, and a machine that
//! runs builds and tests deletes thousands. That search is the kernel's,
//! and it is paid wherever the inode is allocated; here it is paid on a
//! helper thread while the log keeps appending.
//!
//! How: when a log's active segment is half full, [`Spare::request`] asks
//! the helper thread for two unnamed files in the log's directory
//! (`O_TMPFILE`); the roll takes them if they are ready ([`Spare::take`])
//! and gives them the segment's names ([`name`], `linkat`). Whenever a
//! spare is not ready, cannot be made (a file system without `O_TMPFILE`,
//! not Linux) or cannot be named (no `/proc`, a file already there), the
//! roll creates the files as before: the same names, the same bytes.
//!
//! An unnamed file is in no directory: a crash, a copy of the data
//! directory or a scan never sees one, and the kernel frees it when its
//! descriptor closes (when its log is dropped). At most [`MAX_SPARES`]
//! pairs are out in the process at once (a new request takes the oldest's
//! place), so spares take at most [`MAX_OPEN_FILES`] descriptors of the
//! margin the open-file check of a data directory leaves besides its
//! segments (`OTHER_OPEN_FILES`, 64).

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError, TryLockError, Weak};

/// Pairs of spare files that may be asked for or ready at once in the
/// process. A log that asks when this many are out takes the place of the
/// oldest (whose log then creates its files at its roll), so logs that
/// stopped appending with a half-full segment never keep the spares from
/// the logs that append.
pub const MAX_SPARES: usize = 4;

/// The descriptors spares may hold at once: two per pair, and one pair
/// more that the helper thread may be making for a place just taken over.
pub const MAX_OPEN_FILES: u64 = 2 * (MAX_SPARES as u64 + 1);

/// Two unnamed files in a log directory: the next segment's `.log` (open
/// for reading and appending, as `Segment::create` opens it) and `.index`
/// (open for reading and writing).
#[derive(Debug)]
pub struct SparePair {
    pub log: File,
    pub index: File,
}

/// Where a log's spare stands.
#[derive(Debug, Default)]
enum State {
    #[default]
    None,
    /// Asked for under this ticket; the helper thread has not made it yet.
    Asked(u64),
    Ready(SparePair),
}

/// A log's spare, shared with the helper thread (which fills it) and the
/// registry (which may take its place back).
#[derive(Debug, Default)]
struct Cell {
    state: Mutex<State>,
    made: Condvar,
}

impl Cell {
    /// The state, waiting for the lock: the helper thread's side (and
    /// tests'), which may wait for a log.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The state if nobody holds it: a log's side, which never waits for
    /// the helper thread (running at idle priority, it may be preempted
    /// while it holds the lock for the few instructions it needs it).
    fn try_lock(&self) -> Option<MutexGuard<'_, State>> {
        match self.state.try_lock() {
            Ok(state) => Some(state),
            Err(TryLockError::Poisoned(state)) => Some(state.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }
}

/// The spares asked for or ready, oldest first, by ticket.
static REGISTRY: Mutex<VecDeque<(u64, Weak<Cell>)>> = Mutex::new(VecDeque::new());
static NEXT_TICKET: AtomicU64 = AtomicU64::new(1);

fn registry() -> MutexGuard<'static, VecDeque<(u64, Weak<Cell>)>> {
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether `state` is the spare asked for under `ticket` (or made for it).
fn is_for(state: &State, ticket: u64) -> bool {
    match state {
        State::Asked(t) => *t == ticket,
        State::Ready(_) => true,
        State::None => false,
    }
}

/// Whether `cell` still holds the spare asked for under `ticket`; a cell
/// the helper thread is filling now does.
fn holds(cell: &Weak<Cell>, ticket: u64) -> bool {
    cell.upgrade()
        .is_some_and(|c| c.try_lock().is_none_or(|state| is_for(&state, ticket)))
}

/// Pairs of spare files asked for or ready now, for tests of the bound.
pub fn outstanding() -> usize {
    registry().iter().filter(|(t, c)| holds(c, *t)).count()
}

/// A request to the helper thread: the directory, and the cell to fill if
/// it still waits for this ticket.
type Job = (PathBuf, Weak<Cell>, u64);

/// The helper thread's queue, started on first use; `None` if the thread
/// could not be started (then every roll creates its files itself).
fn helper() -> Option<&'static Sender<Job>> {
    static HELPER: OnceLock<Option<Sender<Job>>> = OnceLock::new();
    HELPER
        .get_or_init(|| {
            let (jobs, queue) = mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("mk-tui-spare-segments".to_string())
                .spawn(move || {
                    idle_priority();
                    for (dir, cell, ticket) in queue {
                        make_for(&dir, &cell, ticket);
                    }
                })
                .ok()
                .map(|_| jobs)
        })
        .as_ref()
}

/// The helper thread's work: a pair in `dir` for `cell`, unless the cell no
/// longer waits for `ticket` (its log was dropped, took the pair's place
/// back, or gave its place up). A pair that cannot be made leaves the cell
/// empty: the roll creates its files, and the next half-full segment asks
/// again.
fn make_for(dir: &Path, cell: &Weak<Cell>, ticket: u64) {
    let wanted = |cell: &Cell| matches!(*cell.lock(), State::Asked(t) if t == ticket);
    if !cell.upgrade().is_some_and(|c| wanted(&c)) {
        return;
    }
    let made = make_pair(dir);
    let Some(cell) = cell.upgrade() else {
        return;
    };
    let mut state = cell.lock();
    if matches!(*state, State::Asked(t) if t == ticket) {
        *state = made.map_or(State::None, State::Ready);
    }
    drop(state);
    cell.made.notify_all();
}

/// Runs the calling thread (the helper) at `SCHED_IDLE`: it makes spares
/// on a core nothing else wants, and never preempts a log's thread (woken
/// at normal priority, it took the core of the append that asked, which
/// then waited for the file creation it meant to avoid). On a busy machine
/// spares are then rarely ready, and rolls create their files as before.
fn idle_priority() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: `param` is a valid sched_param; pid 0 is this thread.
        // Failing leaves the thread at normal priority, which still works.
        let _ = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    }
}

/// A log's spare for its next roll.
#[derive(Debug, Default)]
pub struct Spare {
    cell: Arc<Cell>,
}

impl Spare {
    /// Asks for a pair in `dir` unless one is asked for or ready already.
    /// When [`MAX_SPARES`] are out, the oldest one's place is taken.
    ///
    /// Never waits for the helper thread: if it holds a cell this needs,
    /// nothing is asked for now (the next append asks again).
    pub fn request(&mut self, dir: &Path) {
        if self.is_requested() {
            return;
        }
        let Some(helper) = helper() else {
            return;
        };
        let ticket = NEXT_TICKET.fetch_add(1, Ordering::Relaxed);
        let mut out = registry();
        out.retain(|(t, c)| holds(c, *t));
        while out.len() >= MAX_SPARES {
            let (t, oldest) = out.front().expect("len >= MAX_SPARES > 0");
            if let Some(oldest) = oldest.upgrade() {
                let Some(mut state) = oldest.try_lock() else {
                    return;
                };
                if is_for(&state, *t) {
                    *state = State::None;
                }
                drop(state);
                oldest.made.notify_all();
            }
            out.pop_front();
        }
        let Some(mut own) = self.cell.try_lock() else {
            return;
        };
        *own = State::Asked(ticket);
        drop(own);
        out.push_back((ticket, Arc::downgrade(&self.cell)));
        drop(out);
        if helper
            .send((dir.to_path_buf(), Arc::downgrade(&self.cell), ticket))
            .is_err()
            && let Some(mut own) = self.cell.try_lock()
        {
            *own = State::None;
        }
    }

    /// The pair asked for, if it is ready; never waits.
    pub fn take(&mut self) -> Option<SparePair> {
        let mut state = self.cell.try_lock()?;
        match std::mem::take(&mut *state) {
            State::Ready(pair) => Some(pair),
            other => {
                *state = other;
                None
            }
        }
    }

    /// Waits until the pair asked for is made (or could not be, or its
    /// place was taken); whether one is ready. For tests: a roll that must
    /// find its spare ready.
    pub fn wait(&mut self) -> bool {
        let state = self.cell.lock();
        let state = self
            .cell
            .made
            .wait_while(state, |s| matches!(s, State::Asked(_)))
            .unwrap_or_else(PoisonError::into_inner);
        matches!(*state, State::Ready(_))
    }

    /// Whether a pair is asked for or ready, and not yet taken.
    /// (A cell the helper thread is filling now is.)
    pub fn is_requested(&self) -> bool {
        self.cell
            .try_lock()
            .is_none_or(|state| !matches!(*state, State::None))
    }
}

/// Two unnamed files in `dir`.
#[cfg(target_os = "linux")]
fn make_pair(dir: &Path) -> io::Result<SparePair> {
    use std::fs::OpenOptions;
    use std::os::unix::fs::OpenOptionsExt;
    let unnamed =
        |options: &mut OpenOptions| options.custom_flags(libc::O_TMPFILE).mode(0o666).open(dir);
    let log = unnamed(OpenOptions::new().read(true).append(true))?;
    let index = unnamed(OpenOptions::new().read(true).write(true))?;
    Ok(SparePair { log, index })
}

#[cfg(not(target_os = "linux"))]
fn make_pair(_dir: &Path) -> io::Result<SparePair> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Gives the unnamed `file` the name `path`. Fails, changing nothing, if
/// anything is at `path` already (a symlink included: it is not followed).
#[cfg(target_os = "linux")]
pub fn name(file: &File, path: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    // linkat(2) with AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; through
    // /proc it needs nothing (open(2), O_TMPFILE).
    let from = CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
    let to = CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: both are NUL-terminated strings that outlive the call.
    let rc = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
pub fn name(_file: &File, _path: &Path) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn a_spare_pair_is_invisible_until_named_then_holds_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut spare = Spare::default();
        spare.request(dir.path());
        if !spare.wait() {
            // Another test holds every slot, or O_TMPFILE is unsupported:
            // nothing to check here (the roll falls back).
            return;
        }
        let mut pair = spare.take().expect("ready");
        assert!(!spare.is_requested());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let path = dir.path().join("00000000000000000000.log");
        name(&pair.log, &path).unwrap();
        pair.log.write_all(b"MKB1").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"MKB1");
        // A name already taken is refused, and nothing is replaced.
        assert_eq!(
            name(&pair.index, &path).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        let mut back = Vec::new();
        File::open(&path).unwrap().read_to_end(&mut back).unwrap();
        assert_eq!(back, b"MKB1");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_pair_in_a_missing_directory_is_not_made() {
        let dir = tempfile::tempdir().unwrap();
        let mut spare = Spare::default();
        spare.request(&dir.path().join("missing"));
        assert!(!spare.wait());
        assert!(!spare.is_requested(), "a failed pair is forgotten");
        assert!(spare.take().is_none());
    }

    #[test]
    fn no_more_than_max_spares_are_out_and_the_oldest_give_way() {
        let dir = tempfile::tempdir().unwrap();
        let mut spares: Vec<Spare> = (0..2 * MAX_SPARES).map(|_| Spare::default()).collect();
        for spare in &mut spares {
            spare.request(dir.path());
            assert!(outstanding() <= MAX_SPARES);
        }
        // Other tests' logs may take places too, never give them back.
        assert!(spares[..MAX_SPARES].iter().all(|s| !s.is_requested()));
        let ready = spares.iter_mut().map(Spare::wait).filter(|&r| r).count();
        assert!(ready <= MAX_SPARES, "{ready} ready");
        // None of them is in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
