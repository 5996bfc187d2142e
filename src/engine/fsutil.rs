//! Small file-system helpers shared by every persisted structure: the atomic
//! replace of E3/E8 (temp file, fsync, rename, fsync dir), the book's JSON
//! style (compact, sorted keys, ASCII-only like Python's `json.dumps`), the
//! write primitives every data file goes through (so a failed or short
//! write can be injected and is cut back: docs/reliability.md, "Write
//! failures"), and opens that refuse anything but a regular file.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::Serialize;

use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::io_fault::{self, Effect, FileOp};

/// Serialises `value` as the book's Python code does:
/// `json.dumps(value, sort_keys=True, separators=(",", ":"))`.
///
/// Key order comes from the types (structs with fields in alphabetical order
/// and `BTreeMap`s); non-ASCII characters are escaped as `\uXXXX` because
/// Python's `ensure_ascii` default does so.
pub fn to_book_json<T: Serialize>(value: &T) -> String {
    let text = serde_json::to_string(value).expect("engine types always serialise");
    escape_non_ascii(&text)
}

/// Escapes every non-ASCII character as `\uXXXX` (UTF-16 surrogate pairs past
/// the BMP). Outside strings valid JSON has only ASCII, so this is safe on a
/// whole document.
pub fn escape_non_ascii(text: &str) -> String {
    if text.is_ascii() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for ch in text.chars() {
        if ch.is_ascii() {
            out.push(ch);
        } else {
            let mut units = [0u16; 2];
            for unit in ch.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// The most bytes a JSON file of the data directory (`metadata.json`,
/// `offsets.json`, `producer-identities.json`) or the HW checkpoint may
/// hold. The caps of docs/recording-format.md keep them to kilobytes; a
/// file past this is not one mk-tui wrote, and is refused rather than read.
pub const MAX_JSON_BYTES: u64 = 64 << 20;

// ---------------------------------------------------------------------------
// Writes. Every write, fsync and truncate of a data file goes through these,
// so that a test can make any of them fail (`io_fault`); `hook` is the path
// the fault names (the target's own name for a `.tmp` write).
// ---------------------------------------------------------------------------

/// `write_all` of `bytes` to `file`, or the injected failure due for `hook`.
pub fn write_all(mut file: &File, hook: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if bytes.is_empty() {
        return Ok(());
    }
    match io_fault::check(hook, FileOp::Write) {
        None => file.write_all(bytes),
        Some(Effect::Fail(errno)) => Err(errno.error()),
        Some(Effect::Short { written, errno }) => {
            file.write_all(&bytes[..written.min(bytes.len())])?;
            Err(errno.error())
        }
    }
}

/// `fdatasync`, or the injected failure due for `hook`.
pub fn sync_data(file: &File, hook: &Path) -> std::io::Result<()> {
    match io_fault::check(hook, FileOp::Sync) {
        None => file.sync_data(),
        Some(Effect::Fail(errno) | Effect::Short { errno, .. }) => Err(errno.error()),
    }
}

/// `ftruncate`, or the injected failure due for `hook`.
pub fn set_len(file: &File, hook: &Path, len: u64) -> std::io::Result<()> {
    match io_fault::check(hook, FileOp::Truncate) {
        None => file.set_len(len),
        Some(Effect::Fail(errno) | Effect::Short { errno, .. }) => Err(errno.error()),
    }
}

/// Cuts `file` back to `len` bytes, its last good length, after a write
/// that failed or was short, and fsyncs the cut: what was not wholly
/// written is not left for later writes to land behind (issue 17).
pub fn cut_back(file: &File, hook: &Path, len: u64) -> std::io::Result<()> {
    set_len(file, hook, len)?;
    match io_fault::check(hook, FileOp::Sync) {
        None => file.sync_all(),
        Some(Effect::Fail(errno) | Effect::Short { errno, .. }) => Err(errno.error()),
    }
}

/// The error of a write to `path` that failed (`write`) and could not be
/// undone either (`cut`): the file holds bytes nobody acknowledged, so its
/// owner goes offline (Kafka's `KafkaStorageException`).
pub fn storage_failure(
    path: &Path,
    len: u64,
    write: &std::io::Error,
    cut: &std::io::Error,
) -> MiniKafkaError {
    MiniKafkaError::KafkaStorage {
        path: path.to_path_buf(),
        reason: format!(
            "a write failed ({write}) and cutting the file back to its last good length, {len} bytes, failed too ({cut})"
        ),
    }
}

/// Replaces `path` with `bytes` atomically: write a `.tmp` sibling, fsync it,
/// rename it over the target, fsync the directory.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomically(path, bytes, true)
}

/// [`atomic_write`], with the fsyncs only when `sync` (see
/// `MiniKafkaConfig::sync_writes`): without them the replacement is still
/// atomic against a process crash, not against power loss.
///
/// A write that fails leaves the target as it was and no `.tmp` behind.
pub fn write_atomically(path: &Path, bytes: &[u8], sync: bool) -> Result<()> {
    let tmp = tmp_sibling(path);
    let written = create_tmp(&tmp).and_then(|file| {
        write_all(&file, path, bytes)?;
        if sync {
            sync_data(&file, path)?;
        }
        Ok(())
    });
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(MiniKafkaError::io(&tmp, e));
    }
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(MiniKafkaError::io(path, e));
    }
    if sync && let Some(dir) = path.parent() {
        sync_dir(dir)?;
    }
    Ok(())
}

/// Replaces `path` with `bytes` by rename, without fsync: atomic against a
/// process crash (the page cache survives it), not against power loss. For
/// files that may lag behind safely, like Kafka's HW checkpoint.
pub fn replace_without_sync(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomically(path, bytes, false)
}

/// Creates the `.tmp` sibling `tmp` afresh: a stale one (left by a crash,
/// or planted) is removed first, and the new one is created with
/// `O_CREAT|O_EXCL|O_NOFOLLOW`, so a write never goes through a symlink to
/// a file outside the data directory (issue 17, item 2).
pub(crate) fn create_tmp(tmp: &Path) -> std::io::Result<File> {
    match fs::remove_file(tmp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(tmp)
}

/// The `.tmp` sibling that [`atomic_write`] writes first.
pub fn tmp_sibling(path: &Path) -> std::path::PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// fsyncs a directory so that a rename or a new file in it is durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    let handle = OpenOptions::new()
        .read(true)
        .open(dir)
        .map_err(|e| MiniKafkaError::io(dir, e))?;
    handle.sync_all().map_err(|e| MiniKafkaError::io(dir, e))
}

// ---------------------------------------------------------------------------
// Opens and reads. A data file must be a regular file: a FIFO would block an
// open forever, a device (an index symlinked to /dev/zero) would be read
// without end (issue 17, item 4).
// ---------------------------------------------------------------------------

/// What a file type is, for a message: "a FIFO", "a directory".
pub fn kind_of(file_type: fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_file() {
        "a regular file"
    } else if file_type.is_dir() {
        "a directory"
    } else if file_type.is_symlink() {
        "a symbolic link"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Refuses `path` unless `metadata` (from `lstat` or `fstat`) is a regular
/// file's.
pub fn require_regular(path: &Path, metadata: &fs::Metadata) -> Result<()> {
    if metadata.file_type().is_file() {
        Ok(())
    } else {
        Err(MiniKafkaError::NotARegularFile {
            path: path.to_path_buf(),
            kind: kind_of(metadata.file_type()),
        })
    }
}

/// Refuses `path` if something other than a regular file is there (without
/// following a symlink); a missing path is fine. For files an open will
/// write later, checked before anything is written.
pub fn require_regular_or_missing(path: &Path) -> Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) => require_regular(path, &m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(MiniKafkaError::io(path, e)),
    }
}

/// Opens the data file `path` with `options` plus `O_NOFOLLOW|O_NONBLOCK`
/// (so a symlink or a FIFO cannot make the open follow or block), and
/// refuses it unless it is a regular file. `Ok(None)`: it does not exist
/// (and `options` does not create it).
pub fn open_data_file(path: &Path, options: &OpenOptions) -> Result<Option<File>> {
    let mut options = options.clone();
    options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::ENXIO)) => {
            // ELOOP: the last component is a symlink; ENXIO: a FIFO opened
            // for writing with no reader. Name what is there.
            return Err(match fs::symlink_metadata(path) {
                Ok(m) if !m.file_type().is_file() => MiniKafkaError::NotARegularFile {
                    path: path.to_path_buf(),
                    kind: kind_of(m.file_type()),
                },
                _ => MiniKafkaError::io(path, e),
            });
        }
        Err(e) => return Err(MiniKafkaError::io(path, e)),
    };
    let metadata = file.metadata().map_err(|e| MiniKafkaError::io(path, e))?;
    require_regular(path, &metadata)?;
    Ok(Some(file))
}

/// Reads the regular file `path` into `buf` (cleared first), refusing one
/// of more than `max` bytes; `Ok(false)` if it does not exist. The read is
/// capped at the size `fstat` gave, so a file growing meanwhile cannot make
/// it read without end.
pub fn read_regular_into(path: &Path, max: u64, buf: &mut Vec<u8>) -> Result<bool> {
    buf.clear();
    let Some(file) = open_data_file(path, OpenOptions::new().read(true))? else {
        return Ok(false);
    };
    let len = file
        .metadata()
        .map_err(|e| MiniKafkaError::io(path, e))?
        .len();
    if len > max {
        return Err(MiniKafkaError::corrupt(
            path,
            format!("{len} bytes, more than the {max} bytes such a file can hold"),
        ));
    }
    buf.reserve(usize::try_from(len).unwrap_or(0));
    file.take(len)
        .read_to_end(buf)
        .map_err(|e| MiniKafkaError::io(path, e))?;
    Ok(true)
}

/// [`read_regular_into`] into a new buffer; `None` if `path` does not exist.
pub fn read_regular(path: &Path, max: u64) -> Result<Option<Vec<u8>>> {
    let mut buf = Vec::new();
    Ok(read_regular_into(path, max, &mut buf)?.then_some(buf))
}

/// Reads a JSON file if it exists. A file that does not parse is a
/// [`MiniKafkaError::Corrupt`] naming the file, the line and the column.
pub fn read_json_file<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>> {
    let Some(bytes) = read_regular(path, MAX_JSON_BYTES)? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        // serde_json ends its message with the position; say it once, first.
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = full.strip_suffix(&suffix).unwrap_or(&full);
        MiniKafkaError::corrupt(
            path,
            format!("line {} column {}: {message}", e.line(), e.column()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn book_json_is_compact_sorted_and_ascii() {
        let mut m = BTreeMap::new();
        m.insert("zeta", "é😀");
        m.insert("alpha", "x");
        assert_eq!(
            to_book_json(&m),
            r#"{"alpha":"x","zeta":"\u00e9\ud83d\ude00"}"#
        );
        let back: BTreeMap<String, String> = serde_json::from_str(&to_book_json(&m)).unwrap();
        assert_eq!(back["zeta"], "é😀");
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_tmp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        atomic_write(&path, b"one").unwrap();
        atomic_write(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert!(!tmp_sibling(&path).exists());
    }

    /// Issue 17, items 2 and 4: a stale `.tmp` symlink is replaced, not
    /// written through; a FIFO or a symlink in place of a data file is
    /// refused naming it, without blocking.
    #[test]
    fn tmp_files_never_follow_symlinks_and_reads_refuse_what_is_not_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        fs::write(&outside, b"keep").unwrap();
        let path = dir.path().join("f.json");
        std::os::unix::fs::symlink(&outside, tmp_sibling(&path)).unwrap();
        atomic_write(&path, b"new").unwrap();
        assert_eq!(fs::read(&outside).unwrap(), b"keep");
        assert_eq!(fs::read(&path).unwrap(), b"new");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let err = read_regular(&link, 100).unwrap_err().to_string();
        assert!(
            err.ends_with("link: is a symbolic link, not a regular file"),
            "{err}"
        );
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        // On a thread, so that a regression that blocks fails the test.
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let read = read_regular(&fifo, 100).unwrap_err().to_string();
            let write = open_data_file(&fifo, OpenOptions::new().write(true))
                .unwrap_err()
                .to_string();
            let _ = send.send((read, write));
        });
        let (read, write) = receive
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("opening a FIFO blocked");
        for err in [read, write] {
            assert!(
                err.ends_with("fifo: is a FIFO, not a regular file"),
                "{err}"
            );
        }
        fs::write(&path, vec![b' '; 101]).unwrap();
        let err = read_regular(&path, 100).unwrap_err().to_string();
        assert!(err.contains("101 bytes, more than the 100"), "{err}");
        assert!(
            read_regular(&dir.path().join("none"), 100)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn unparsable_json_names_file_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("offsets.json");
        fs::write(&path, "{\n  \"groups\": [").unwrap();
        let err = read_json_file::<serde_json::Value>(&path)
            .unwrap_err()
            .to_string();
        assert!(err.contains("offsets.json"), "{err}");
        assert!(err.contains("line 2"), "{err}");
        assert!(
            read_json_file::<serde_json::Value>(&dir.path().join("none"))
                .unwrap()
                .is_none()
        );
    }
}
