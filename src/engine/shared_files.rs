//! Copies of a quiet data directory that share the files no one writes in
//! place (time travel's checkpoints and restores, SPEC §4).
//!
//! A time-travel checkpoint is a copy of the data directory, and a step back
//! makes a copy of a checkpoint to run on. Copied byte for byte, each costs
//! the bytes logged so far and a new inode per file (on ext4 a new inode is
//! searched for past every recently deleted one): a step back would grow
//! with history. Most of those files are never written again in place:
//!
//! - a *closed* segment, every `.log` of a log directory but the one with
//!   the highest base offset (appends go to the last segment only, a roll
//!   makes a new one), and its `.index`;
//! - `metadata.json`, `offsets.json`, `producer-identities.json` and
//!   `replication-offset-checkpoint`, which are only ever replaced whole by
//!   rename ([`fsutil::write_atomically`]), which leaves the old inode to
//!   whoever else links it.
//!
//! Those are hard-linked into the copy; everything else (the active
//! segment and its index, the transaction journal, anything unknown) is
//! copied. The one way a linked file is written in place again is a
//! truncation that reaches into a closed segment (a follower truncating to
//! its new leader, `PartitionLog::truncate_to`) or a rewrite of a closed
//! segment's index: each of those calls [`unshare`] first, which gives the
//! writer a private copy and leaves the other links as they were.
//!
//! The transaction journal grows with history and is appended in place, so
//! a checkpoint copies it; a *restore* links the checkpoint's journal
//! instead and cuts it back to the length it had when the checkpoint was
//! taken ([`restore_sharing`]). That is safe because of who links a
//! checkpoint's journal: the checkpoint, and the drivers restored from it,
//! of which only the newest is alive (a timeline drops the one it
//! replaces, and dropping writes no journal); a checkpoint taken from such
//! a driver copies the journal, never links it. The bytes past the
//! checkpoint's length are the replaced driver's, and nothing writes below
//! it: the journal is appended to (a failed append cuts back to the
//! driver's own length, at or past the checkpoint's), recovery cuts only a
//! torn tail past the valid frames, and the one cut that can reach below,
//! a torn-tail fault (`BrokerCluster::tear`), makes the journal
//! [`unshare`] first, through its own handle.
//!
//! A restore may copy into the directory of a driver that was dropped (a
//! time-travel timeline keeps two for reuse): what is already the source's
//! inode stays, a private file (one link) is written over in place, anything
//! else there is unlinked first, and whatever the source lacks is removed (but
//! the lock file). Writing in place is safe because a file with one link is
//! that dead driver's alone: checkpoints copy active segments and link
//! everything else, so a file any other directory shares has more links. It
//! creates no inode, which on ext4 is slow right after many deletes (a step
//! back that deleted and created a directory tree would pay it each time).
//!
//! A file that cannot be linked (another file system, a link limit) is
//! copied. `state --data-dir` still copies a user's directory byte for
//! byte: another process may write those files in place.

use std::fs::{self, File};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::fsutil;
use crate::engine::layout::{
    CHECKPOINT_FILE, IDENTITIES_FILE, JOURNAL_FILE as JOURNAL, LOCK_FILE, METADATA_FILE,
    OFFSETS_FILE,
};

/// Files only ever replaced whole by rename.
const REPLACED_WHOLE: [&str; 4] = [
    METADATA_FILE,
    OFFSETS_FILE,
    IDENTITIES_FILE,
    CHECKPOINT_FILE,
];

/// Directories deeper than this are refused: a symlink loop.
const MAX_DEPTH: usize = 32;

/// What [`copy_sharing`] did, for tests and benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CopyStats {
    pub linked: usize,
    pub copied: usize,
    pub copied_bytes: u64,
    /// The length of the journal at the top of the directory, if it has one.
    pub journal_len: Option<u64>,
}

/// Copies the data directory `from` into `to` (created), leaving out the
/// lock file and hard-linking the files no one writes in place (see the
/// module's comment). Only directories and regular files are copied; a
/// symlinked directory is followed, as the in-place open follows it;
/// anything else is refused naming the entry.
pub fn copy_sharing(from: &Path, to: &Path) -> std::io::Result<CopyStats> {
    let mut stats = CopyStats::default();
    copy_tree(from, to, 0, None, &mut stats)?;
    Ok(stats)
}

/// [`copy_sharing`] for a restore of a checkpoint whose journal was
/// `journal_len` bytes long when it was taken (its [`CopyStats`]): the
/// journal is linked too, and cut back to that length (see the module's
/// comment). A journal shorter than that is an error naming it.
pub fn restore_sharing(from: &Path, to: &Path, journal_len: u64) -> std::io::Result<CopyStats> {
    let mut stats = CopyStats::default();
    copy_tree(from, to, 0, Some(journal_len), &mut stats)?;
    Ok(stats)
}

/// Links the checkpoint's journal `source` as `target` (already linked
/// when `same`) and cuts it back to `len`; false if it cannot be linked
/// (the caller copies it).
fn take_journal(source: &Path, target: &Path, len: u64, same: bool) -> std::io::Result<bool> {
    if !same && fs::hard_link(source, target).is_err() {
        return Ok(false);
    }
    let file = fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(target)
        .map_err(|e| named(target, e))?;
    let found = file.metadata().map_err(|e| named(target, e))?.len();
    if found < len {
        return Err(std::io::Error::other(format!(
            "{}: the checkpoint's journal is {found} bytes, shorter than the {len} it had",
            source.display()
        )));
    }
    if found > len {
        file.set_len(len).map_err(|e| named(target, e))?;
    }
    Ok(true)
}

/// Whether two files' metadata name the same inode.
fn same_inode(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// Removes `target` if something is there (`existing`), so that a link
/// or a copy can take its name.
fn clear(target: &Path, existing: Option<&fs::Metadata>) -> std::io::Result<()> {
    match existing {
        Some(m) if m.file_type().is_dir() => fs::remove_dir_all(target),
        Some(_) => fs::remove_file(target),
        None => Ok(()),
    }
    .map_err(|e| named(target, e))
}

/// Copies `source`'s bytes over `target`, a regular file no other
/// directory links, in place: no new inode (see [`restore_sharing`]).
fn overwrite(source: &Path, target: &Path) -> std::io::Result<u64> {
    let mut from = fs::File::open(source).map_err(|e| named(source, e))?;
    let mut to = fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(target)
        .map_err(|e| named(target, e))?;
    let len = std::io::copy(&mut from, &mut to).map_err(|e| named(target, e))?;
    to.set_len(len).map_err(|e| named(target, e))?;
    Ok(len)
}

fn named(path: &Path, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{}: cannot copy: {e}", path.display()))
}

fn copy_tree(
    from: &Path,
    to: &Path,
    depth: usize,
    journal_len: Option<u64>,
    stats: &mut CopyStats,
) -> std::io::Result<()> {
    if depth > MAX_DEPTH {
        return Err(std::io::Error::other(format!(
            "{}: directories nest more than {MAX_DEPTH} deep (a symlink loop?)",
            from.display()
        )));
    }
    fs::create_dir_all(to).map_err(|e| named(to, e))?;
    let mut entries = Vec::new();
    for entry in fs::read_dir(from).map_err(|e| named(from, e))? {
        let entry = entry.map_err(|e| named(from, e))?;
        entries.push((
            entry.file_name(),
            entry.file_type().map_err(|e| named(from, e))?,
        ));
    }
    // The active segment: the highest base offset among the `.log` files.
    let active = entries
        .iter()
        .filter_map(|(name, _)| segment_base(name.to_str()?, ".log"))
        .max();
    // A reused target (`restore_sharing` into a disposed copy's directory)
    // keeps only what the source has, and its lock file.
    let names: std::collections::BTreeSet<_> = entries.iter().map(|(n, _)| n.clone()).collect();
    for entry in fs::read_dir(to).map_err(|e| named(to, e))? {
        let entry = entry.map_err(|e| named(to, e))?;
        let name = entry.file_name();
        if name != LOCK_FILE && !names.contains(&name) {
            let path = entry.path();
            clear(&path, fs::symlink_metadata(&path).ok().as_ref())?;
        }
    }
    for (name, kind) in entries {
        if name == LOCK_FILE {
            continue;
        }
        let source = from.join(&name);
        let target = to.join(&name);
        let followed = if kind.is_symlink() {
            fs::metadata(&source).ok().map(|m| m.file_type())
        } else {
            Some(kind)
        };
        match followed {
            Some(t) if t.is_dir() => {
                if let Some(m) = fs::symlink_metadata(&target).ok().filter(|m| !m.is_dir()) {
                    clear(&target, Some(&m))?;
                }
                copy_tree(&source, &target, depth + 1, None, stats)?
            }
            _ if kind.is_file() => {
                let text = name.to_str().unwrap_or_default();
                let closed = [".log", ".index"]
                    .iter()
                    .filter_map(|suffix| segment_base(text, suffix))
                    .any(|base| active.is_some_and(|a| base < a));
                let journal = depth == 0 && text == JOURNAL;
                let linkable = closed || REPLACED_WHOLE.contains(&text);
                // What a reused target holds under this name (nothing in a
                // fresh one), and whether it is the source's inode already.
                let existing = fs::symlink_metadata(&target).ok();
                let same = match &existing {
                    Some(m) if m.file_type().is_file() => {
                        let source_meta = fs::metadata(&source).map_err(|e| named(&source, e))?;
                        same_inode(&source_meta, m)
                    }
                    _ => false,
                };
                let linked = match journal_len {
                    Some(len) if journal => {
                        stats.journal_len = Some(len);
                        if !same {
                            clear(&target, existing.as_ref())?;
                        }
                        take_journal(&source, &target, len, same)?
                    }
                    _ if linkable && same => true,
                    _ if linkable => {
                        clear(&target, existing.as_ref())?;
                        fs::hard_link(&source, &target).is_ok()
                    }
                    _ => false,
                };
                // A private file of a reused target (one link, not the
                // source's) is written over in place: no new inode, which
                // this file system makes slow to find right after deletes.
                let private = existing.as_ref().is_some_and(|m| {
                    m.file_type().is_file() && m.nlink() == 1 && !same && !linkable
                }) && !(journal && journal_len.is_some());
                if linked {
                    stats.linked += 1;
                } else {
                    let len = if private {
                        overwrite(&source, &target)?
                    } else {
                        if fs::symlink_metadata(&target).is_ok() {
                            clear(&target, fs::symlink_metadata(&target).ok().as_ref())?;
                        }
                        fs::copy(&source, &target).map_err(|e| named(&source, e))?
                    };
                    if journal {
                        let keep = journal_len.unwrap_or(len);
                        if keep != len {
                            fs::OpenOptions::new()
                                .write(true)
                                .open(&target)
                                .and_then(|f| f.set_len(keep))
                                .map_err(|e| named(&target, e))?;
                        }
                        stats.journal_len = Some(keep);
                    }
                    stats.copied_bytes += len;
                    stats.copied += 1;
                }
            }
            _ => {
                return Err(std::io::Error::other(
                    MiniKafkaError::NotARegularFile {
                        path: source,
                        kind: fsutil::kind_of(kind),
                    }
                    .to_string(),
                ));
            }
        }
    }
    Ok(())
}

/// The base offset of a segment file named `<20 digits><suffix>`.
fn segment_base(name: &str, suffix: &str) -> Option<u64> {
    let digits = name.strip_suffix(suffix)?;
    (digits.len() == 20 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// Gives `path` its own inode if another directory links it (a checkpoint
/// sharing a closed segment, see the module's comment), so that writing it
/// in place changes no other copy: copies it to its `.tmp` sibling and
/// renames that over it. Returns whether it did; the caller then reopens
/// its handle, which still points at the shared inode.
pub fn unshare(path: &Path, file: &File) -> Result<bool> {
    let links = file
        .metadata()
        .map_err(|e| MiniKafkaError::io(path, e))?
        .nlink();
    if links <= 1 {
        return Ok(false);
    }
    let tmp = fsutil::tmp_sibling(path);
    let copied = fsutil::create_tmp(&tmp).and_then(|mut out| {
        let mut source = File::open(path)?;
        std::io::copy(&mut source, &mut out)?;
        Ok(())
    });
    if let Err(e) = copied.and_then(|()| fs::rename(&tmp, path)) {
        let _ = fs::remove_file(&tmp);
        return Err(MiniKafkaError::io(path, e));
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ino(path: &Path) -> u64 {
        fs::metadata(path).unwrap().ino()
    }

    #[test]
    fn links_closed_segments_and_whole_replaced_files_and_copies_the_rest() {
        let from = tempfile::tempdir().unwrap();
        let log = from.path().join("broker-1").join("out-0");
        fs::create_dir_all(&log).unwrap();
        for base in [0u64, 40, 90] {
            fs::write(log.join(format!("{base:020}.log")), format!("log {base}")).unwrap();
            fs::write(log.join(format!("{base:020}.index")), format!("idx {base}")).unwrap();
        }
        fs::write(from.path().join(METADATA_FILE), "{}").unwrap();
        fs::write(from.path().join("transactions.journal"), "j").unwrap();
        fs::write(from.path().join(LOCK_FILE), "pid").unwrap();
        let to = tempfile::tempdir().unwrap();
        let stats = copy_sharing(from.path(), &to.path().join("copy")).unwrap();
        let copy = to.path().join("copy");
        let copied_log = copy.join("broker-1").join("out-0");
        for base in [0u64, 40] {
            for ext in ["log", "index"] {
                let name = format!("{base:020}.{ext}");
                assert_eq!(
                    ino(&log.join(&name)),
                    ino(&copied_log.join(&name)),
                    "{name}"
                );
            }
        }
        for name in ["00000000000000000090.log", "00000000000000000090.index"] {
            assert_ne!(ino(&log.join(name)), ino(&copied_log.join(name)), "{name}");
            assert_eq!(
                fs::read(log.join(name)).unwrap(),
                fs::read(copied_log.join(name)).unwrap()
            );
        }
        assert_eq!(
            ino(&from.path().join(METADATA_FILE)),
            ino(&copy.join(METADATA_FILE))
        );
        let journal = "transactions.journal";
        assert_ne!(ino(&from.path().join(journal)), ino(&copy.join(journal)));
        assert!(!copy.join(LOCK_FILE).exists());
        assert_eq!(
            stats,
            CopyStats {
                linked: 5,
                copied: 3,
                copied_bytes: "log 90".len() as u64 + "idx 90".len() as u64 + 1,
                journal_len: Some(1),
            }
        );
    }

    #[test]
    fn a_restore_links_the_journal_and_cuts_it_back_to_the_checkpoints_length() {
        let checkpoint = tempfile::tempdir().unwrap();
        let journal = checkpoint.path().join(JOURNAL);
        fs::write(&journal, "frame 1\n").unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let first = scratch.path().join("first");
        let stats = restore_sharing(checkpoint.path(), &first, 8).unwrap();
        assert_eq!(
            (stats.linked, stats.copied, stats.journal_len),
            (1, 0, Some(8))
        );
        assert_eq!(ino(&journal), ino(&first.join(JOURNAL)));
        // The restored driver appends; the next restore gets the
        // checkpoint's 8 bytes back.
        fs::OpenOptions::new()
            .append(true)
            .open(first.join(JOURNAL))
            .and_then(|mut f| std::io::Write::write_all(&mut f, b"frame 2\n"))
            .unwrap();
        fs::remove_dir_all(&first).unwrap();
        let second = scratch.path().join("second");
        restore_sharing(checkpoint.path(), &second, 8).unwrap();
        assert_eq!(fs::read(second.join(JOURNAL)).unwrap(), b"frame 1\n");
        // A journal shorter than the checkpoint's length was damaged.
        let err = restore_sharing(checkpoint.path(), &scratch.path().join("third"), 9).unwrap_err();
        assert!(err.to_string().contains("shorter than the 9"), "{err}");
    }

    /// A restore into a dropped driver's directory gives the checkpoint's
    /// files exactly: it keeps what is linked already, writes private files
    /// over in place (same inode), never writes a file another directory
    /// links, removes what the checkpoint lacks and keeps the lock file.
    #[test]
    fn a_restore_into_a_used_directory_reuses_its_inodes_and_writes_no_shared_file() {
        let checkpoint = tempfile::tempdir().unwrap();
        let log = checkpoint.path().join("broker-1").join("out-0");
        fs::create_dir_all(&log).unwrap();
        let closed = "00000000000000000000.log";
        let active = "00000000000000000040.log";
        fs::write(log.join(closed), "closed").unwrap();
        fs::write(log.join(active), "active").unwrap();
        fs::write(checkpoint.path().join(JOURNAL), "frame 1\n").unwrap();
        fs::write(checkpoint.path().join(METADATA_FILE), "{}").unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path().join("restored");
        restore_sharing(checkpoint.path(), &dir, 8).unwrap();
        let used = dir.join("broker-1").join("out-0");
        let active_ino = ino(&used.join(active));
        // The driver that ran there appended, rolled a segment, wrote
        // metadata by rename, and a file another directory links took the
        // active segment's name.
        fs::write(used.join(active), "active and more").unwrap();
        fs::write(used.join("00000000000000000090.log"), "rolled").unwrap();
        fs::write(dir.join(LOCK_FILE), "pid").unwrap();
        fs::remove_file(dir.join(METADATA_FILE)).unwrap();
        fs::write(dir.join(METADATA_FILE), "{\"new\": 1}").unwrap();
        let other = scratch.path().join("other.log");
        fs::write(&other, "someone else's").unwrap();
        let stray = dir.join("broker-2");
        fs::create_dir_all(&stray).unwrap();
        fs::hard_link(&other, stray.join("x.log")).unwrap();

        restore_sharing(checkpoint.path(), &dir, 8).unwrap();
        assert_eq!(fs::read(used.join(active)).unwrap(), b"active");
        assert_eq!(ino(&used.join(active)), active_ino, "written over in place");
        assert_eq!(ino(&used.join(closed)), ino(&log.join(closed)));
        assert_eq!(
            ino(&dir.join(METADATA_FILE)),
            ino(&checkpoint.path().join(METADATA_FILE))
        );
        assert_eq!(fs::read(dir.join(JOURNAL)).unwrap(), b"frame 1\n");
        assert!(!used.join("00000000000000000090.log").exists());
        assert!(!stray.exists(), "what the checkpoint lacks is removed");
        assert_eq!(fs::read(&other).unwrap(), b"someone else's");
        assert!(dir.join(LOCK_FILE).exists());
        assert_eq!(
            fs::read(log.join(active)).unwrap(),
            b"active",
            "checkpoint unchanged"
        );

        // A linked file under a private file's name is replaced, not
        // written: its other link keeps its bytes.
        fs::remove_file(used.join(active)).unwrap();
        fs::hard_link(&other, used.join(active)).unwrap();
        restore_sharing(checkpoint.path(), &dir, 8).unwrap();
        assert_eq!(fs::read(used.join(active)).unwrap(), b"active");
        assert_eq!(fs::read(&other).unwrap(), b"someone else's");
    }

    #[test]
    fn unshare_gives_the_writer_its_own_inode_and_leaves_the_other_link() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.log");
        let b = dir.path().join("b.log");
        fs::write(&a, "shared bytes").unwrap();
        fs::hard_link(&a, &b).unwrap();
        let file = File::open(&a).unwrap();
        assert!(unshare(&a, &file).unwrap());
        assert_ne!(ino(&a), ino(&b));
        fs::OpenOptions::new()
            .write(true)
            .open(&a)
            .unwrap()
            .set_len(3)
            .unwrap();
        assert_eq!(fs::read(&b).unwrap(), b"shared bytes");
        assert_eq!(fs::read(&a).unwrap(), b"sha");
        // A file with one link is left alone.
        let file = File::open(&a).unwrap();
        assert!(!unshare(&a, &file).unwrap());
    }
}
