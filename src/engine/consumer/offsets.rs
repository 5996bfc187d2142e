//! `OffsetStore` (E8): committed consumer-group offsets in one JSON file,
//! replaced atomically on every commit, in the book's format:
//!
//! ```json
//! {"groups":{"workers":[{"offset":7,"partition":0,"topic":"in"}]},"version":1}
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::core::metadata::TopicPartition;
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::fsutil;

pub use crate::engine::layout::OFFSETS_FILE;
/// The only offsets format version.
pub const OFFSETS_VERSION: u32 = 1;

/// Offsets of one group, by partition.
pub type GroupOffsets = BTreeMap<TopicPartition, i64>;

#[derive(Debug, Serialize, Deserialize)]
struct OffsetsFile {
    groups: BTreeMap<String, Vec<OffsetEntry>>,
    version: u64,
}

#[derive(Debug, Serialize, Deserialize)]
struct OffsetEntry {
    offset: i64,
    partition: u32,
    topic: String,
}

/// Committed offsets per consumer group, durable in `offsets.json`.
#[derive(Debug, Clone)]
pub struct OffsetStore {
    path: PathBuf,
    groups: BTreeMap<String, GroupOffsets>,
    /// fsync replacements (`MiniKafkaConfig::sync_writes`).
    sync: bool,
}

impl OffsetStore {
    /// Loads `offsets.json` from `data_dir`, or starts empty. A corrupt file is
    /// an error naming it.
    pub fn open(data_dir: &Path) -> Result<Self> {
        let path = data_dir.join(OFFSETS_FILE);
        let mut groups = BTreeMap::new();
        if let Some(file) = fsutil::read_json_file::<OffsetsFile>(&path)? {
            if file.version != u64::from(OFFSETS_VERSION) {
                return Err(MiniKafkaError::unsupported_version(
                    &path,
                    file.version,
                    OFFSETS_VERSION,
                ));
            }
            for (group, entries) in file.groups {
                let offsets: GroupOffsets = entries
                    .into_iter()
                    .map(|e| (TopicPartition::new(e.topic, e.partition), e.offset))
                    .collect();
                groups.insert(group, offsets);
            }
        }
        Ok(Self {
            path,
            groups,
            sync: true,
        })
    }

    /// The file this store writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The committed offset of `group` on `tp`, if any.
    pub fn get(&self, group: &str, tp: &TopicPartition) -> Option<i64> {
        self.groups.get(group)?.get(tp).copied()
    }

    /// Every group's committed offsets.
    pub fn groups(&self) -> &BTreeMap<String, GroupOffsets> {
        &self.groups
    }

    /// Commits one offset (one atomic file replace).
    pub fn commit(&mut self, group: &str, tp: TopicPartition, offset: i64) -> Result<()> {
        self.commit_many(group, &BTreeMap::from([(tp, offset)]))
    }

    /// Commits several offsets of one group in one atomic file replace.
    pub fn commit_many(&mut self, group: &str, offsets: &GroupOffsets) -> Result<()> {
        self.commit_groups(&BTreeMap::from([(group.to_string(), offsets.clone())]))
    }

    /// Commits offsets of several groups in one atomic file replace: all or
    /// nothing, in memory as on disk.
    pub fn commit_groups(&mut self, staged: &BTreeMap<String, GroupOffsets>) -> Result<()> {
        let mut next = self.groups.clone();
        for (group, offsets) in staged {
            let entry = next.entry(group.clone()).or_default();
            entry.extend(offsets.iter().map(|(tp, o)| (tp.clone(), *o)));
        }
        Self::persist(&self.path, &next, self.sync)?;
        self.groups = next;
        Ok(())
    }

    /// Whether replacements are fsynced (`MiniKafkaConfig::sync_writes`).
    pub fn set_sync(&mut self, sync: bool) {
        self.sync = sync;
    }

    fn persist(path: &Path, groups: &BTreeMap<String, GroupOffsets>, sync: bool) -> Result<()> {
        let file = OffsetsFile {
            groups: groups
                .iter()
                .map(|(g, offsets)| {
                    let entries = offsets
                        .iter()
                        .map(|(tp, &offset)| OffsetEntry {
                            offset,
                            partition: tp.partition,
                            topic: tp.topic.clone(),
                        })
                        .collect();
                    (g.clone(), entries)
                })
                .collect(),
            version: u64::from(OFFSETS_VERSION),
        };
        fsutil::write_atomically(path, fsutil::to_book_json(&file).as_bytes(), sync)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commits_are_durable_in_the_books_format() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = OffsetStore::open(dir.path()).unwrap();
        let input = TopicPartition::new("in", 0);
        assert_eq!(store.get("workers", &input), None);
        store.commit("workers", input.clone(), 7).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join(OFFSETS_FILE)).unwrap(),
            r#"{"groups":{"workers":[{"offset":7,"partition":0,"topic":"in"}]},"version":1}"#
        );
        store
            .commit_many(
                "workers",
                &BTreeMap::from([(TopicPartition::new("in", 1), 3), (input.clone(), 9)]),
            )
            .unwrap();
        let reopened = OffsetStore::open(dir.path()).unwrap();
        assert_eq!(reopened.get("workers", &input), Some(9));
        assert_eq!(
            reopened.get("workers", &TopicPartition::new("in", 1)),
            Some(3)
        );
        assert_eq!(reopened.get("other", &input), None);
    }

    #[test]
    fn corrupt_offsets_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(OFFSETS_FILE),
            "{\"groups\":{\"w\":[{\"offset\":\"x\"}]}}",
        )
        .unwrap();
        let err = OffsetStore::open(dir.path()).unwrap_err();
        assert!(matches!(err, MiniKafkaError::Corrupt { .. }));
        assert!(err.to_string().contains("offsets.json"), "{err}");
    }

    #[test]
    fn a_failed_write_changes_nothing_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = OffsetStore::open(dir.path()).unwrap();
        store.commit("g", TopicPartition::new("t", 0), 1).unwrap();
        // Make the temp file path a directory so the write fails.
        std::fs::create_dir(fsutil::tmp_sibling(store.path())).unwrap();
        assert!(store.commit("g", TopicPartition::new("t", 0), 2).is_err());
        assert_eq!(store.get("g", &TopicPartition::new("t", 0)), Some(1));
    }
}
