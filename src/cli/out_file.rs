//! `export --cast OUT [--force]`: a file export writes, which is never
//! replaced by surprise. As `--record` refuses an existing file unless
//! `--force` (`Record::refuse_existing`), so does `--cast`: a cast made by
//! hand, or another lesson's, is not lost to a repeated command line.

use std::path::{Path, PathBuf};

use crate::session::SessionError;

/// The file to write and whether an existing one may be replaced.
pub struct OutFile {
    pub path: PathBuf,
    pub force: bool,
}

impl OutFile {
    /// Refuses an existing file (or symlink, dangling or not) unless
    /// `--force`, before the recording is even read: nothing is written.
    pub fn refuse_existing(&self) -> Result<(), SessionError> {
        if !self.force && std::fs::symlink_metadata(&self.path).is_ok() {
            return Err(exists(&self.path));
        }
        Ok(())
    }

    /// Writes `bytes`. Without `--force` the file is created only if it is
    /// still absent, so one that appeared since [`OutFile::refuse_existing`]
    /// is kept.
    pub fn write(&self, bytes: &[u8]) -> Result<(), SessionError> {
        use std::io::Write;
        let io = |e: std::io::Error| SessionError::io(&self.path, e);
        if self.force {
            return std::fs::write(&self.path, bytes).map_err(io);
        }
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&self.path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => exists(&self.path),
                _ => io(e),
            })?;
        file.write_all(bytes).map_err(io)
    }
}

fn exists(path: &Path) -> SessionError {
    SessionError::path(
        path,
        "already exists; --cast does not replace a file (give --force to replace it)",
    )
}
