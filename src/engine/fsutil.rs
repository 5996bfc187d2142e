//! Small file-system helpers shared by every persisted structure: the atomic
//! replace of E3/E8 (temp file, fsync, rename, fsync dir) and the book's JSON
//! style (compact, sorted keys, ASCII-only like Python's `json.dumps`).

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

use serde::Serialize;

use crate::engine::error::{MiniKafkaError, Result};

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

/// Replaces `path` with `bytes` atomically: write a `.tmp` sibling, fsync it,
/// rename it over the target, fsync the directory.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomically(path, bytes, true)
}

/// [`atomic_write`], with the fsyncs only when `sync` (see
/// `MiniKafkaConfig::sync_writes`): without them the replacement is still
/// atomic against a process crash, not against power loss.
pub fn write_atomically(path: &Path, bytes: &[u8], sync: bool) -> Result<()> {
    let tmp = tmp_sibling(path);
    {
        let mut file = File::create(&tmp).map_err(|e| MiniKafkaError::io(&tmp, e))?;
        file.write_all(bytes)
            .map_err(|e| MiniKafkaError::io(&tmp, e))?;
        if sync {
            file.sync_all().map_err(|e| MiniKafkaError::io(&tmp, e))?;
        }
    }
    fs::rename(&tmp, path).map_err(|e| MiniKafkaError::io(path, e))?;
    if sync && let Some(dir) = path.parent() {
        sync_dir(dir)?;
    }
    Ok(())
}

/// Replaces `path` with `bytes` by rename, without fsync: atomic against a
/// process crash (the page cache survives it), not against power loss. For
/// files that may lag behind safely, like Kafka's HW checkpoint.
pub fn replace_without_sync(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = tmp_sibling(path);
    fs::write(&tmp, bytes).map_err(|e| MiniKafkaError::io(&tmp, e))?;
    fs::rename(&tmp, path).map_err(|e| MiniKafkaError::io(path, e))
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

/// Reads a JSON file if it exists. A file that does not parse is a
/// [`MiniKafkaError::Corrupt`] naming the file, the line and the column.
pub fn read_json_file<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(MiniKafkaError::io(path, e)),
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
