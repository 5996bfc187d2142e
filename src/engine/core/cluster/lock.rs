//! The data directory's advisory lock: one cluster writes one directory.
//! Its own file because it is the one piece of opening that must happen
//! before any read, and must be undone when an open is refused.

use std::fs;

use crate::engine::error::{MiniKafkaError, Result};

/// The advisory lock file under the data directory.
pub const LOCK_FILE: &str = ".mk-tui.lock";

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
    let (file, created) = match options.clone().create_new(true).open(&path) {
        Ok(file) => (file, true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => (
            options
                .open(&path)
                .map_err(|e| unwritable("write the lock file of", e))?,
            false,
        ),
        Err(e) => return Err(unwritable("write the lock file of", e)),
    };
    match file.try_lock() {
        Ok(()) => Ok((file, created)),
        Err(fs::TryLockError::WouldBlock) => Err(MiniKafkaError::DataDirLocked(dir.to_path_buf())),
        Err(fs::TryLockError::Error(e)) => Err(MiniKafkaError::io(&path, e)),
    }
}
