//! Where a driver's cluster keeps its files: a directory a user names
//! (which must be empty or absent for a new cluster), a private temporary
//! one (deleted with the driver), or a private copy of a user's directory
//! (`state --data-dir`, which must not change it).
//!
//! The copy is byte for byte. The engine's `shared_files::copy_sharing`
//! hard-links the files it never writes in place, which is right for
//! time travel's own checkpoints but not for a user's directory: another
//! process may write those files in place, and recovery on the copy would
//! then write through the links into the original.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::engine::MiniKafkaError;
use crate::engine::config::BrokerId;
use crate::engine::core::cluster::{LOCK_FILE, lock_shared};
use crate::session::error::{Result, SessionError};

/// Directories deeper than this are refused: a symlink loop.
const MAX_COPY_DEPTH: usize = 32;

/// A new private temporary directory (see [`crate::session::scratch`]).
pub fn scratch() -> Result<TempDir> {
    crate::session::scratch::tempdir()
        .map_err(|e| SessionError::os("cannot create a temporary directory", e))
}

/// The directory a new cluster opens in: `given`, which must be empty or
/// absent, or else a private temporary one (returned, to keep alive).
pub fn fresh(given: Option<&Path>) -> Result<(PathBuf, Option<TempDir>)> {
    match given {
        Some(dir) => {
            let empty = std::fs::read_dir(dir).map_or(true, |mut d| d.next().is_none());
            if !empty {
                return Err(SessionError::path(
                    dir,
                    "data directory must be empty or absent",
                ));
            }
            Ok((dir.to_path_buf(), None))
        }
        None => {
            let temp = scratch()?;
            Ok((temp.path().to_path_buf(), Some(temp)))
        }
    }
}

/// A private temporary copy of the data directory `dir`, made under its
/// shared lock (never a copy of files a running mk-tui is writing).
/// Errors name `dir`, not the copy.
pub fn private_copy(dir: &Path) -> Result<TempDir> {
    if !dir.exists() {
        return Err(SessionError::path(dir, "no such data directory"));
    }
    if !dir.is_dir() {
        return Err(SessionError::path(dir, "not a directory"));
    }
    let _shared = lock_shared(dir)?;
    let temp = scratch()?;
    copy_tree(dir, temp.path(), 0).map_err(|e| SessionError::Copy(e).of_copy(temp.path(), dir))?;
    Ok(temp)
}

/// The broker ids of a data directory (its `broker-N` directories and the
/// replicas its metadata names; broker 1 when there are none), read only.
pub fn brokers_in(dir: &Path) -> Result<Vec<BrokerId>> {
    let mut ids = std::collections::BTreeSet::new();
    let entries = std::fs::read_dir(dir).map_err(|e| SessionError::io(dir, e))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if let Some(id) = name
            .to_str()
            .and_then(|n| n.strip_prefix("broker-"))
            .and_then(|n| n.parse().ok())
        {
            ids.insert(id);
        }
    }
    if let Ok(store) = crate::engine::core::metadata::MetadataStore::open(dir) {
        for topic in store.topics().values() {
            for (_, p) in topic.partitions() {
                ids.extend(p.replicas.iter().copied());
            }
        }
    }
    if ids.is_empty() {
        ids.insert(1);
    }
    Ok(ids.into_iter().collect())
}

/// Copies a directory tree, leaving out the data directory's lock file.
///
/// Only regular files and directories are copied; a symlink to a directory
/// (a broker directory on another disk) is followed, as the in-place open
/// follows it. Anything else (a FIFO, a device, a symlink to a file) is
/// refused naming the entry, with the line the in-place open gives it:
/// copying it could block forever or never end.
fn copy_tree(from: &Path, to: &Path, depth: usize) -> std::io::Result<()> {
    let named = |path: &Path, e: std::io::Error| {
        std::io::Error::new(e.kind(), format!("{}: cannot copy: {e}", path.display()))
    };
    if depth > MAX_COPY_DEPTH {
        return Err(std::io::Error::other(format!(
            "{}: directories nest more than {MAX_COPY_DEPTH} deep (a symlink loop?)",
            from.display()
        )));
    }
    std::fs::create_dir_all(to).map_err(|e| named(to, e))?;
    for entry in std::fs::read_dir(from).map_err(|e| named(from, e))? {
        let entry = entry.map_err(|e| named(from, e))?;
        let name = entry.file_name();
        if name == LOCK_FILE {
            continue;
        }
        let source = entry.path();
        let target = to.join(&name);
        let kind = entry.file_type().map_err(|e| named(&source, e))?;
        let followed = if kind.is_symlink() {
            std::fs::metadata(&source).ok().map(|m| m.file_type())
        } else {
            Some(kind)
        };
        match followed {
            Some(t) if t.is_dir() => copy_tree(&source, &target, depth + 1)?,
            _ if kind.is_file() => {
                std::fs::copy(&source, &target).map_err(|e| named(&source, e))?;
            }
            _ => {
                return Err(std::io::Error::other(
                    MiniKafkaError::NotARegularFile {
                        path: source,
                        kind: crate::engine::fsutil::kind_of(kind),
                    }
                    .to_string(),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_fresh_directory_is_made_or_kept() {
        let (dir, temp) = fresh(None).unwrap();
        assert!(dir.is_dir() && temp.is_some());
        drop(temp);
        assert!(!dir.exists(), "a private directory goes with its TempDir");

        let parent = tempfile::tempdir().unwrap();
        let absent = parent.path().join("data");
        let (dir, temp) = fresh(Some(&absent)).unwrap();
        assert_eq!((dir, temp.is_none()), (absent.clone(), true));

        std::fs::create_dir(&absent).unwrap();
        std::fs::write(absent.join("x"), b"1").unwrap();
        let e = fresh(Some(&absent)).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: data directory must be empty or absent",
                absent.display()
            )
        );
        assert!(absent.join("x").exists(), "a user's directory is kept");
    }

    #[test]
    fn a_copy_is_private_and_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let broker = dir.path().join("broker-2");
        std::fs::create_dir(&broker).unwrap();
        std::fs::write(broker.join("a.log"), b"bytes").unwrap();
        std::fs::write(dir.path().join(LOCK_FILE), b"").unwrap();
        let copy = private_copy(dir.path()).unwrap();
        let copied = copy.path().join("broker-2/a.log");
        assert_eq!(std::fs::read(&copied).unwrap(), b"bytes");
        let (a, b) = (
            std::fs::metadata(broker.join("a.log")).unwrap(),
            std::fs::metadata(&copied).unwrap(),
        );
        assert_ne!(a.ino(), b.ino(), "copied, never linked");
        assert!(!copy.path().join(LOCK_FILE).exists());
        assert_eq!(brokers_in(copy.path()).unwrap(), vec![2]);
    }

    #[test]
    fn bad_paths_are_named() {
        let parent = tempfile::tempdir().unwrap();
        let missing = parent.path().join("nope");
        assert_eq!(
            private_copy(&missing).unwrap_err().to_string(),
            format!("{}: no such data directory", missing.display())
        );
        let file = parent.path().join("file");
        std::fs::write(&file, b"").unwrap();
        assert_eq!(
            private_copy(&file).unwrap_err().to_string(),
            format!("{}: not a directory", file.display())
        );
        assert!(brokers_in(&missing).is_err());
        // A FIFO is refused (copying it could block forever), named in
        // the user's directory, not in the private copy.
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("broker-1");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = private_copy(dir.path()).unwrap_err().to_string();
        assert!(e.starts_with(&fifo.display().to_string()), "{e}");
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(brokers_in(empty.path()).unwrap(), vec![1]);
    }
}
