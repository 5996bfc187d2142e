//! Where the session's temporary directories go: every
//! private data directory (the demo's, the copy `state --data-dir` opens,
//! time-travel checkpoints) is made inside one directory per process,
//! `$TMPDIR/mk-tui-<pid>-XXXXXX`, so that a signal can remove them all at
//! once. Each one is still a [`TempDir`] removed when dropped; the
//! per-process parent is removed by [`remove_all`], which the command line
//! calls at exit and on SIGTERM, SIGINT, SIGHUP and SIGQUIT.

use std::path::PathBuf;
use std::sync::Mutex;

use tempfile::TempDir;

/// A parent directory made on first use, and removable at once.
pub struct Scratch {
    root: Mutex<Option<PathBuf>>,
}

/// The process's own.
static PROCESS: Scratch = Scratch::new();

impl Scratch {
    pub const fn new() -> Self {
        Self {
            root: Mutex::new(None),
        }
    }

    /// A new temporary directory inside the parent (made if needed).
    pub fn tempdir(&self) -> std::io::Result<TempDir> {
        let mut root = self
            .root
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let parent = match &*root {
            Some(p) if p.is_dir() => p.clone(),
            _ => {
                let made = tempfile::Builder::new()
                    .prefix(&format!("mk-tui-{}-", std::process::id()))
                    .tempdir()?
                    .keep();
                *root = Some(made.clone());
                made
            }
        };
        tempfile::Builder::new()
            .prefix("session-")
            .tempdir_in(parent)
    }

    /// Removes the parent and everything in it. Safe to call more than
    /// once, and from a signal-watching thread: the next
    /// [`Self::tempdir`] makes a new parent.
    pub fn remove_all(&self) {
        let mut root = self
            .root
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(p) = root.take() {
            let _ = std::fs::remove_dir_all(p);
        }
    }
}

impl Default for Scratch {
    fn default() -> Self {
        Self::new()
    }
}

/// A new private temporary directory inside the process's parent.
pub fn tempdir() -> std::io::Result<TempDir> {
    PROCESS.tempdir()
}

/// Removes the process's parent and everything in it.
pub fn remove_all() {
    PROCESS.remove_all();
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_tempdir_goes_under_one_parent_that_remove_all_removes() {
        let scratch = super::Scratch::new();
        let a = scratch.tempdir().unwrap();
        let b = scratch.tempdir().unwrap();
        let parent = a.path().parent().unwrap().to_path_buf();
        assert_eq!(b.path().parent().unwrap(), parent);
        assert!(
            parent
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("mk-tui-{}-", std::process::id()))
        );
        scratch.remove_all();
        assert!(!parent.exists() && !a.path().exists());
        drop((a, b)); // a TempDir whose directory is gone drops quietly
        let c = scratch.tempdir().unwrap();
        assert_ne!(
            c.path().parent().unwrap(),
            parent,
            "a new parent after remove_all"
        );
        scratch.remove_all();
    }
}
