//! The data directory's advisory lock: one cluster writes one directory.
//! Its own file because it is the one piece of opening that must happen
//! before any read, and must be undone when an open is refused.
//!
//! The writer holds the lock exclusively and writes its pid into the file as
//! soon as it holds it (putting back what was there if its open is refused);
//! `state --data-dir` takes it shared while it copies the directory, so it
//! never copies files a running mk-tui is writing, and names that mk-tui's pid
//! when it cannot.

use std::fs;
use std::io::{Read, Write};
use std::path::Path;

use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::fsutil;

pub use crate::engine::layout::LOCK_FILE;

/// Takes the data directory's exclusive advisory lock, so that two clusters
/// (two mk-tui processes, or two handles in one) never write one directory.
/// Also returns whether this call created the lock file, so that a failed
/// open can leave the directory as it found it.
pub(super) fn lock_data_dir(dir: &std::path::Path) -> Result<(fs::File, bool)> {
    let unwritable = |action, source| MiniKafkaError::DataDirUnwritable {
        path: dir.to_path_buf(),
        action,
        source,
    };
    fs::create_dir_all(dir).map_err(|e| unwritable("create", e))?;
    let path = dir.join(LOCK_FILE);
    let mut options = fs::OpenOptions::new();
    options.write(true);
    options.read(true);
    let (file, created) = match options.clone().create_new(true).open(&path) {
        Ok(file) => (file, true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            // Never through a symlink, never blocking on a FIFO.
            let file = match fsutil::open_data_file(&path, &options) {
                Ok(Some(file)) => file,
                Ok(None) => {
                    let gone = std::io::Error::from(std::io::ErrorKind::NotFound);
                    return Err(unwritable("write the lock file of", gone));
                }
                Err(MiniKafkaError::Io { source, .. }) => {
                    return Err(unwritable("write the lock file of", source));
                }
                Err(e) => return Err(e),
            };
            (file, false)
        }
        Err(e) => return Err(unwritable("write the lock file of", e)),
    };
    match file.try_lock() {
        Ok(()) => Ok((file, created)),
        Err(fs::TryLockError::WouldBlock) => Err(MiniKafkaError::DataDirLocked {
            path: dir.to_path_buf(),
            pid: holder_pid(&file),
        }),
        Err(fs::TryLockError::Error(e)) => Err(MiniKafkaError::io(&path, e)),
    }
}

/// Writes this process's pid into the lock file it holds, as soon as it
/// holds it (an open can take a while), so that another mk-tui refused by
/// the lock can name it. Returns what the file held before, for
/// [`restore_holder`] when the open is refused.
pub(super) fn record_holder(file: &fs::File) -> Vec<u8> {
    let mut previous = Vec::new();
    // Best effort: the lock, not its contents, is what excludes. A lock
    // file holds a pid; 64 bytes is more than any.
    let _ = rewind(file).and_then(|()| (&mut &*file).take(64).read_to_end(&mut previous));
    write_contents(file, format!("{}\n", std::process::id()).as_bytes());
    previous
}

/// Puts back what the lock file held before [`record_holder`]: a refused
/// open leaves the directory as it found it.
pub(super) fn restore_holder(file: &fs::File, previous: &[u8]) {
    write_contents(file, previous);
}

fn rewind(mut file: &fs::File) -> std::io::Result<()> {
    std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(0)).map(|_| ())
}

fn write_contents(mut file: &fs::File, bytes: &[u8]) {
    let _ = file
        .set_len(0)
        .and_then(|()| rewind(file))
        .and_then(|()| file.write_all(bytes));
}

/// The pid the holder wrote into the lock file, if it is readable.
fn holder_pid(mut file: &fs::File) -> Option<u32> {
    let mut text = String::new();
    std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(0)).ok()?;
    file.take(32).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// Takes the lock of the data directory `dir` in shared mode, for a reader
/// that copies the directory (`state --data-dir`): refused with
/// [`MiniKafkaError::DataDirLocked`] while a cluster holds it. Writes
/// nothing: a directory without a lock file (none was ever opened there)
/// has no writer, and `None` is returned. Hold the file while copying.
pub fn lock_shared(dir: &Path) -> Result<Option<fs::File>> {
    let path = dir.join(LOCK_FILE);
    let Some(file) = fsutil::open_data_file(&path, fs::OpenOptions::new().read(true))? else {
        return Ok(None);
    };
    match file.try_lock_shared() {
        Ok(()) => Ok(Some(file)),
        Err(fs::TryLockError::WouldBlock) => Err(MiniKafkaError::DataDirLocked {
            path: dir.to_path_buf(),
            pid: holder_pid(&file),
        }),
        Err(fs::TryLockError::Error(e)) => Err(MiniKafkaError::io(&path, e)),
    }
}
