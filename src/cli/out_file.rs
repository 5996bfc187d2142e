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

    /// Writes `bytes` whole or not at all: into a new sibling `OUT.tmp`
    /// first, which then takes OUT's name, so a failed write (a full disk)
    /// leaves no part of a cast behind. Without `--force` the name is
    /// taken only if it is still free (a hard link, which never replaces),
    /// so a file that appeared since [`OutFile::refuse_existing`] is kept.
    pub fn write(&self, bytes: &[u8]) -> Result<(), SessionError> {
        use std::io::Write;
        let tmp = crate::engine::fsutil::tmp_sibling(&self.path);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| SessionError::io(&tmp, e))?;
        let named = file
            .write_all(bytes)
            .map_err(|e| SessionError::io(&tmp, e))
            .and_then(|()| self.name(&tmp));
        // Ours, whatever happened: after a rename it is gone already.
        let _ = std::fs::remove_file(&tmp);
        named
    }

    /// Gives the written `tmp` OUT's name.
    fn name(&self, tmp: &Path) -> Result<(), SessionError> {
        let io = |e: std::io::Error| SessionError::io(&self.path, e);
        if self.force {
            return std::fs::rename(tmp, &self.path).map_err(io);
        }
        match std::fs::hard_link(tmp, &self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(exists(&self.path)),
            // A file system without hard links: the name is checked, then
            // taken by a rename.
            Err(_) if std::fs::symlink_metadata(&self.path).is_ok() => Err(exists(&self.path)),
            Err(_) => std::fs::rename(tmp, &self.path).map_err(io),
        }
    }
}

fn exists(path: &Path) -> SessionError {
    SessionError::path(
        path,
        "already exists; --cast does not replace a file (give --force to replace it)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(path: &Path, force: bool) -> OutFile {
        OutFile {
            path: path.to_path_buf(),
            force,
        }
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_cast_is_written_whole_under_its_name_and_never_replaced_unasked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.cast");
        out(&path, false).write(b"first").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        assert_eq!(names(dir.path()), ["a.cast"], "no .tmp left");
        let refused = out(&path, false).write(b"second").unwrap_err();
        assert!(refused.to_string().contains("already exists"), "{refused}");
        assert_eq!(std::fs::read(&path).unwrap(), b"first", "kept");
        assert_eq!(names(dir.path()), ["a.cast"]);
        out(&path, true).write(b"third").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"third");
        assert_eq!(names(dir.path()), ["a.cast"]);
    }

    #[test]
    fn a_write_that_cannot_start_leaves_nothing_and_a_stranger_tmp_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-such-dir").join("a.cast");
        assert!(out(&missing, false).write(b"x").is_err());
        assert!(names(dir.path()).is_empty());
        // Someone else's a.cast.tmp is neither used nor removed.
        let path = dir.path().join("a.cast");
        std::fs::write(dir.path().join("a.cast.tmp"), b"theirs").unwrap();
        assert!(out(&path, false).write(b"x").is_err());
        assert_eq!(
            std::fs::read(dir.path().join("a.cast.tmp")).unwrap(),
            b"theirs"
        );
        assert_eq!(names(dir.path()), ["a.cast.tmp"]);
    }
}
