//! Injected write failures, for tests only: "the Nth write to file X fails
//! with ENOSPC or EIO, or writes only K bytes", and the same for an fsync or a
//! truncate. Every write, fsync and truncate of a file the engine keeps
//! (journal, segments, indexes, the JSON files, the HW checkpoint) goes
//! through [`crate::engine::fsutil`]'s primitives, which ask [`check`] first;
//! so a test can make any one of them fail at a chosen moment,
//! deterministically, without a full disk.
//!
//! The registry is process-wide (a failure may be met on any thread), but a
//! fault names one path, and tests use their own temporary directories, so
//! tests running in parallel do not see each other's faults. Without the
//! `testkit` feature the registry is not built and [`check`] is a constant
//! `None`: a release binary has no injection point at all.

use std::path::Path;
#[cfg(any(test, feature = "testkit"))]
use std::path::PathBuf;

/// The operation a fault targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOp {
    /// A `write(2)` of one whole buffer (one frame, line, entry or file).
    Write,
    /// An `fsync(2)`/`fdatasync(2)`.
    Sync,
    /// An `ftruncate(2)`: also the cut back after a failed write.
    Truncate,
}

/// The `errno` an injected failure reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Errno {
    /// `ENOSPC`: the file system is full.
    NoSpace,
    /// `EIO`: the device failed.
    Io,
}

impl Errno {
    /// The error `std` would report for this errno.
    pub fn error(self) -> std::io::Error {
        std::io::Error::from_raw_os_error(match self {
            Errno::NoSpace => libc::ENOSPC,
            Errno::Io => libc::EIO,
        })
    }
}

/// What the failing operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Nothing reaches the file; the call fails with this errno.
    Fail(Errno),
    /// (Writes only; elsewhere as `Fail`.) The first `written` bytes reach
    /// the file, then the write fails with `errno`: a short write, as a
    /// filling disk (`ENOSPC`) or a failing device (`EIO`) makes.
    Short { written: usize, errno: Errno },
}

#[cfg(any(test, feature = "testkit"))]
mod registry {
    use super::*;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    pub(super) struct Armed {
        pub id: u64,
        pub path: PathBuf,
        pub op: FileOp,
        /// Operations still to let through before the failing one.
        pub skip: u64,
        /// How many operations fail from then on (`u64::MAX`: all).
        pub times: u64,
        pub effect: Effect,
    }

    pub(super) static ARMED: AtomicUsize = AtomicUsize::new(0);
    pub(super) static FAULTS: Mutex<Vec<Armed>> = Mutex::new(Vec::new());
    pub(super) static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

    pub(super) fn check(path: &Path, op: FileOp) -> Option<Effect> {
        if ARMED.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut faults = FAULTS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let armed = faults
            .iter_mut()
            .find(|a| a.op == op && a.path == path && a.times > 0)?;
        if armed.skip > 0 {
            armed.skip -= 1;
            return None;
        }
        armed.times -= 1;
        Some(armed.effect)
    }
}

/// An installed fault; dropping it removes the fault.
#[cfg(any(test, feature = "testkit"))]
#[derive(Debug)]
#[must_use = "the fault is removed when the guard is dropped"]
pub struct FaultGuard {
    id: u64,
}

#[cfg(any(test, feature = "testkit"))]
impl Drop for FaultGuard {
    fn drop(&mut self) {
        use std::sync::atomic::Ordering;
        let mut faults = registry::FAULTS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        faults.retain(|a| a.id != self.id);
        registry::ARMED.store(faults.len(), Ordering::Release);
    }
}

/// Makes the `nth` (1-based, counted from now) `op` on `path` fail with
/// `effect`, once. `path` is the file as the engine names it: for a file
/// replaced atomically (`metadata.json`, `offsets.json`, the HW checkpoint)
/// its own name, not its `.tmp` sibling.
#[cfg(any(test, feature = "testkit"))]
pub fn inject(path: impl Into<PathBuf>, op: FileOp, nth: u64, effect: Effect) -> FaultGuard {
    inject_times(path, op, nth, 1, effect)
}

/// As [`inject`], but `times` operations fail from the `nth` on
/// (`u64::MAX`: every one until the guard is dropped, a disk that stays
/// full).
#[cfg(any(test, feature = "testkit"))]
pub fn inject_times(
    path: impl Into<PathBuf>,
    op: FileOp,
    nth: u64,
    times: u64,
    effect: Effect,
) -> FaultGuard {
    use std::sync::atomic::Ordering;
    assert!(nth >= 1, "operations are counted from 1");
    let id = registry::NEXT_ID.fetch_add(1, Ordering::Relaxed) as u64;
    let mut faults = registry::FAULTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    faults.push(registry::Armed {
        id,
        path: path.into(),
        op,
        skip: nth - 1,
        times,
        effect,
    });
    registry::ARMED.store(faults.len(), Ordering::Release);
    FaultGuard { id }
}

/// The injected outcome of the next `op` on `path`, if a fault is due.
pub(crate) fn check(path: &Path, op: FileOp) -> Option<Effect> {
    #[cfg(any(test, feature = "testkit"))]
    {
        registry::check(path, op)
    }
    #[cfg(not(any(test, feature = "testkit")))]
    {
        let _ = (path, op);
        None
    }
}
