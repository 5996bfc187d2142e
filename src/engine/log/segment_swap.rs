//! The swap that installs a compacted log (the book's
//! `PartitionLog.install_compacted_closed`, `log/partition_log.py`) and its
//! repair on open.
//!
//! The book builds the replacement in a sibling directory
//! (`.<name>.compact-<token>`: the compacted closed segments as one segment
//! at the old log start, then a copy of the active segment), fsyncs it,
//! calls `before_swap`, renames the live directory to `.<name>.backup-<token>`
//! and the replacement to the live name, fsyncs the parent and removes the
//! backup. Each rename is atomic, the pair is not: the book notes that a
//! crash between them leaves only the backup, and its open does not look
//! for it. Here the open does ([`SwapRepair`]): a replacement left behind
//! (a crash before the swap, `before_swap` the cut point) is removed and the
//! live log stays authoritative; a backup beside a live directory (a crash
//! after the second rename) is removed; a backup without a live directory
//! (a crash between the renames) is renamed back. Either way the log is
//! the one before the compaction or the one after it, whole: nothing lost,
//! nothing doubled. The token is fixed (`mk`), so the names to look for are
//! known and the run is deterministic.

use std::fs;
use std::path::{Path, PathBuf};

use crate::engine::core::batch::RecordBatch;
use crate::engine::core::codec;
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::fsutil;
use crate::engine::layout::log_file_name;
use crate::engine::log::partition_log::PartitionLog;
use crate::engine::log::segment::Segment;

/// The token of the sibling directories' names (the book's is a UUID).
const SWAP_TOKEN: &str = "mk";

/// The replacement and backup directories of the log in `dir`.
fn swap_dirs(dir: &Path) -> Result<(PathBuf, PathBuf)> {
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Err(MiniKafkaError::InvalidCleanup(format!(
            "{} has no parent directory to build a compacted log in",
            dir.display()
        )));
    };
    let name = name.to_string_lossy();
    Ok((
        parent.join(format!(".{name}.compact-{SWAP_TOKEN}")),
        parent.join(format!(".{name}.backup-{SWAP_TOKEN}")),
    ))
}

fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

fn remove_tree(path: &Path) -> Result<()> {
    match fs::remove_dir_all(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(MiniKafkaError::io(path, e)),
        _ => Ok(()),
    }
}

/// What an open found of an interrupted swap, and repairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwapRepair {
    /// A replacement built but never swapped in: removed; the live log,
    /// untouched, stays authoritative (a crash at `before_swap`).
    DiscardedReplacement,
    /// The live log renamed away and the replacement not yet in its place:
    /// the original is renamed back.
    RestoredBackup,
    /// The swap done but its backup not yet removed: removed.
    RemovedBackup,
}

impl SwapRepair {
    /// The state JSON's name.
    pub fn name(self) -> &'static str {
        match self {
            SwapRepair::DiscardedReplacement => "discarded_replacement",
            SwapRepair::RestoredBackup => "restored_backup",
            SwapRepair::RemovedBackup => "removed_backup",
        }
    }

    /// A short English phrase for the recovery report.
    pub fn describe(self) -> &'static str {
        match self {
            SwapRepair::DiscardedReplacement => {
                "an unswapped compaction was discarded; the log before it stands"
            }
            SwapRepair::RestoredBackup => {
                "a compaction interrupted between its renames: the log before it was restored"
            }
            SwapRepair::RemovedBackup => {
                "a finished compaction's backup was removed; the compacted log stands"
            }
        }
    }

    /// The same in Chinese.
    pub fn describe_zh(self) -> &'static str {
        match self {
            SwapRepair::DiscardedReplacement => "未完成交换的压缩结果已丢弃，压缩前的日志保持有效",
            SwapRepair::RestoredBackup => "压缩在两次重命名之间中断：已恢复压缩前的日志",
            SwapRepair::RemovedBackup => "已完成的压缩留下的备份已删除，压缩后的日志有效",
        }
    }
}

/// The leftovers of a swap beside the log in `dir`, found without writing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SwapLeftovers {
    replacement: Option<PathBuf>,
    backup: Option<PathBuf>,
    live: bool,
}

impl SwapLeftovers {
    /// Looks for the replacement and backup of the log in `dir`.
    pub fn find(dir: &Path) -> Result<Self> {
        let (replacement, backup) = swap_dirs(dir)?;
        Ok(Self {
            replacement: exists(&replacement).then_some(replacement),
            backup: exists(&backup).then_some(backup),
            live: exists(dir),
        })
    }

    /// Where the log's segments are to be read: the backup when the live
    /// directory is gone (it is renamed back on open), else `dir`.
    pub fn read_from(&self, dir: &Path) -> PathBuf {
        match (&self.backup, self.live) {
            (Some(backup), false) => backup.clone(),
            _ => dir.to_path_buf(),
        }
    }

    /// What [`Self::repair`] will do, if anything.
    pub fn repair_kind(&self) -> Option<SwapRepair> {
        match (&self.backup, self.live, &self.replacement) {
            (Some(_), false, _) => Some(SwapRepair::RestoredBackup),
            (Some(_), true, _) => Some(SwapRepair::RemovedBackup),
            (None, _, Some(_)) => Some(SwapRepair::DiscardedReplacement),
            (None, _, None) => None,
        }
    }

    /// Repairs the directory as [`Self::repair_kind`] says.
    pub fn repair(&self, dir: &Path) -> Result<Option<SwapRepair>> {
        let kind = self.repair_kind();
        if let (Some(backup), false) = (&self.backup, self.live) {
            fs::rename(backup, dir).map_err(|e| MiniKafkaError::io(backup, e))?;
        } else if let Some(backup) = &self.backup {
            remove_tree(backup)?;
        }
        if let Some(replacement) = &self.replacement {
            remove_tree(replacement)?;
        }
        if kind.is_some()
            && let Some(parent) = dir.parent()
        {
            fsutil::sync_dir(parent)?;
        }
        Ok(kind)
    }
}

impl PartitionLog {
    /// Replaces the closed segments with one segment holding
    /// `compacted_batches` (which keep their offsets: gaps stay gaps), at
    /// the old log start, and keeps the active segment as it is (the book's
    /// `install_compacted_closed`). `before_swap` runs once the replacement
    /// is durable and before the live log is touched: an error from it
    /// (the book's injected failure, the crash cut point) leaves the live
    /// log authoritative, the replacement removed.
    pub fn install_compacted_closed(
        &mut self,
        compacted_batches: &[RecordBatch],
        before_swap: Option<&mut dyn FnMut() -> Result<()>>,
    ) -> Result<()> {
        self.check_online()?;
        if self.closed_segments().is_empty() {
            return Ok(());
        }
        let (replacement, backup) = swap_dirs(&self.dir)?;
        remove_tree(&replacement)?;
        let built = self.build_replacement(&replacement, compacted_batches);
        if let Err(e) = built.and_then(|()| before_swap.map_or(Ok(()), |hook| hook())) {
            // An in-process failure cleans up as the book's does; a crash
            // here leaves the replacement for the open to remove.
            if !matches!(e, MiniKafkaError::Crashed) {
                let _ = remove_tree(&replacement);
            }
            return Err(e);
        }
        fs::rename(&self.dir, &backup).map_err(|e| MiniKafkaError::io(&self.dir, e))?;
        if let Err(e) = fs::rename(&replacement, &self.dir) {
            let _ = fs::rename(&backup, &self.dir);
            return Err(MiniKafkaError::io(&replacement, e));
        }
        if let Some(parent) = self.dir.parent() {
            fsutil::sync_dir(parent)?;
        }
        match PartitionLog::open(&self.dir, self.config) {
            Ok((reopened, _)) => *self = reopened,
            Err(e) => {
                let reason = format!("reopening the compacted log failed ({e})");
                self.offline = Some((self.dir.clone(), reason));
                return Err(e);
            }
        }
        remove_tree(&backup)
    }

    /// Writes the replacement directory: the compacted segment, then a
    /// copy of the active one, each fsynced, and the directory.
    fn build_replacement(&self, dir: &Path, compacted_batches: &[RecordBatch]) -> Result<()> {
        fs::create_dir_all(dir).map_err(|e| MiniKafkaError::io(dir, e))?;
        let interval = self.config.index_interval_bytes;
        let mut compacted = Segment::create(dir, self.log_start_offset())?;
        let mut frame = Vec::new();
        for batch in compacted_batches {
            batch.validate()?;
            frame.clear();
            codec::encode_into(batch, &mut frame);
            compacted.append(&frame, batch.base_offset, interval, false)?;
        }
        fsutil::sync_data(&compacted.file, &compacted.path)
            .map_err(|e| MiniKafkaError::io(&compacted.path, e))?;
        // The active segment byte for byte (its index is rebuilt on open).
        let active = self.segments.last().expect("a log always has a segment");
        let copy = dir.join(log_file_name(active.base_offset()));
        fs::copy(active.path(), &copy).map_err(|e| MiniKafkaError::io(&copy, e))?;
        fs::File::open(&copy)
            .and_then(|f| f.sync_all())
            .map_err(|e| MiniKafkaError::io(&copy, e))?;
        fsutil::sync_dir(dir)
    }
}
