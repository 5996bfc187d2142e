//! `OffsetStore` (E8): committed consumer-group offsets in one JSON file,
//! replaced atomically on every commit, in the book's format:
//!
//! ```json
//! {"groups":{"workers":[{"offset":7,"partition":0,"topic":"in"}]},"version":1}
//! ```
//!
//! A commit that changes nothing the file holds (a transaction that staged
//! no offsets, a consumer committing the position it committed last) is not
//! written again, once this store has itself written the file whole: the
//! book would replace it with the same bytes, two fsyncs for nothing
//! (docs/book-differences.md, "offsets.json"). The first commit after an
//! open always writes: a file found on disk may be one whose replacement
//! was never made durable (a crash between rename and the directory's
//! fsync), and a commit acknowledged on top of it must not depend on it.

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
    /// The file holds exactly `groups`, replaced whole by this store (with
    /// its fsyncs when `sync`): a commit that changes nothing skips the
    /// write. False after an open and after any failed replacement.
    written: bool,
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
            written: false,
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
    /// nothing, in memory as on disk. Nothing is written when the file this
    /// store wrote already holds every staged offset (see the module's
    /// comment).
    pub fn commit_groups(&mut self, staged: &BTreeMap<String, GroupOffsets>) -> Result<()> {
        if self.written && self.holds(staged) {
            return Ok(());
        }
        let mut next = self.groups.clone();
        for (group, offsets) in staged {
            let entry = next.entry(group.clone()).or_default();
            entry.extend(offsets.iter().map(|(tp, o)| (tp.clone(), *o)));
        }
        // Whatever a failed replacement left (the rename done, the
        // directory's fsync not), the next commit writes the file again.
        self.written = false;
        Self::persist(&self.path, &next, self.sync)?;
        self.groups = next;
        self.written = true;
        Ok(())
    }

    /// Deletes every committed offset of `group` (Kafka's DeleteGroups),
    /// in one atomic file replace, as a commit is written; how many it
    /// removed. A group the store does not hold is no write.
    pub fn delete_group(&mut self, group: &str) -> Result<usize> {
        let Some(removed) = self.groups.get(group).map(BTreeMap::len) else {
            return Ok(0);
        };
        let mut next = self.groups.clone();
        next.remove(group);
        self.written = false;
        Self::persist(&self.path, &next, self.sync)?;
        self.groups = next;
        self.written = true;
        Ok(removed)
    }

    /// Deletes `group`'s committed offsets of `partitions` (Kafka's
    /// OffsetDelete) in one atomic file replace, as a commit is written;
    /// the partitions it removed, in order. Partitions without a committed
    /// offset are skipped; nothing to remove is no write. The group stays,
    /// with no offsets if none is left, as Kafka keeps an empty group
    /// until its cleanup (docs/kafka-differences.md, "OffsetDelete").
    pub fn delete_offsets(
        &mut self,
        group: &str,
        partitions: &[TopicPartition],
    ) -> Result<Vec<TopicPartition>> {
        let Some(current) = self.groups.get(group) else {
            return Ok(Vec::new());
        };
        let mut removed: Vec<TopicPartition> = partitions
            .iter()
            .filter(|tp| current.contains_key(*tp))
            .cloned()
            .collect();
        removed.sort();
        removed.dedup();
        if removed.is_empty() {
            return Ok(removed);
        }
        let mut next = self.groups.clone();
        let offsets = next.get_mut(group).expect("held above");
        for tp in &removed {
            offsets.remove(tp);
        }
        self.written = false;
        Self::persist(&self.path, &next, self.sync)?;
        self.groups = next;
        self.written = true;
        Ok(removed)
    }

    /// Deletes every group's committed offsets of `topic` (Kafka's group
    /// coordinator drops them when the topic is deleted) in one atomic file
    /// replace, as a commit is written; how many it removed. Groups left
    /// without offsets stay, as [`Self::delete_offsets`] leaves them.
    /// Nothing to remove is no write.
    pub fn delete_topic(&mut self, topic: &str) -> Result<usize> {
        let next = self.without_topic(topic);
        let removed = self.count() - count(&next);
        if removed == 0 {
            return Ok(0);
        }
        self.written = false;
        Self::persist(&self.path, &next, self.sync)?;
        self.groups = next;
        self.written = true;
        Ok(removed)
    }

    /// Forgets `topic`'s committed offsets without writing (an open
    /// finishing a deletion a crash cut short; [`Self::write`] writes
    /// them). Whether any went.
    pub fn forget_topic(&mut self, topic: &str) -> bool {
        let next = self.without_topic(topic);
        let changed = count(&next) != self.count();
        if changed {
            self.groups = next;
            self.written = false;
        }
        changed
    }

    /// Replaces the file with what the store holds.
    pub fn write(&mut self) -> Result<()> {
        self.written = false;
        Self::persist(&self.path, &self.groups, self.sync)?;
        self.written = true;
        Ok(())
    }

    fn without_topic(&self, topic: &str) -> BTreeMap<String, GroupOffsets> {
        self.groups
            .iter()
            .map(|(g, offsets)| {
                let kept = offsets
                    .iter()
                    .filter(|(tp, _)| tp.topic != topic)
                    .map(|(tp, o)| (tp.clone(), *o))
                    .collect();
                (g.clone(), kept)
            })
            .collect()
    }

    fn count(&self) -> usize {
        count(&self.groups)
    }

    /// Whether committing `staged` would leave the offsets as they are:
    /// every staged group is already present (the book's `setdefault` adds
    /// an empty one to the file) with every staged offset.
    fn holds(&self, staged: &BTreeMap<String, GroupOffsets>) -> bool {
        staged.iter().all(|(group, offsets)| {
            self.groups.get(group).is_some_and(|current| {
                offsets
                    .iter()
                    .all(|(tp, offset)| current.get(tp) == Some(offset))
            })
        })
    }

    /// Whether replacements are fsynced (`MiniKafkaConfig::sync_writes`).
    /// Turning fsync on forgets what was written without it.
    pub fn set_sync(&mut self, sync: bool) {
        if sync && !self.sync {
            self.written = false;
        }
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

/// Committed offsets held, over every group.
fn count(groups: &BTreeMap<String, GroupOffsets>) -> usize {
    groups.values().map(BTreeMap::len).sum()
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
    fn a_deleted_group_is_gone_from_the_file_and_the_others_stay() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = OffsetStore::open(dir.path()).unwrap();
        let p0 = TopicPartition::new("in", 0);
        store
            .commit_many(
                "gone",
                &BTreeMap::from([(p0.clone(), 4), (TopicPartition::new("in", 1), 5)]),
            )
            .unwrap();
        store.commit("kept", p0.clone(), 7).unwrap();
        assert_eq!(store.delete_group("gone").unwrap(), 2);
        assert_eq!(store.get("gone", &p0), None);
        assert_eq!(
            std::fs::read_to_string(store.path()).unwrap(),
            r#"{"groups":{"kept":[{"offset":7,"partition":0,"topic":"in"}]},"version":1}"#
        );
        let before = inode(&store);
        assert_eq!(store.delete_group("gone").unwrap(), 0, "nothing left");
        assert_eq!(inode(&store), before, "nothing deleted, nothing written");
        let reopened = OffsetStore::open(dir.path()).unwrap();
        assert_eq!(reopened.get("gone", &p0), None);
        assert_eq!(reopened.get("kept", &p0), Some(7));
    }

    #[test]
    fn deleted_offsets_are_gone_from_the_file_and_the_rest_stay() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = OffsetStore::open(dir.path()).unwrap();
        let (a0, a1, b0) = (
            TopicPartition::new("a", 0),
            TopicPartition::new("a", 1),
            TopicPartition::new("b", 0),
        );
        store
            .commit_many(
                "g",
                &BTreeMap::from([(a0.clone(), 4), (a1.clone(), 5), (b0.clone(), 6)]),
            )
            .unwrap();
        store.commit("other", a0.clone(), 7).unwrap();
        let asked = [
            a1.clone(),
            TopicPartition::new("a", 9),
            a0.clone(),
            a0.clone(),
        ];
        assert_eq!(
            store.delete_offsets("g", &asked).unwrap(),
            [a0.clone(), a1.clone()],
            "the committed ones, once each, in order"
        );
        assert_eq!(
            std::fs::read_to_string(store.path()).unwrap(),
            r#"{"groups":{"g":[{"offset":6,"partition":0,"topic":"b"}],"other":[{"offset":7,"partition":0,"topic":"a"}]},"version":1}"#
        );
        let before = inode(&store);
        assert!(
            store
                .delete_offsets("g", std::slice::from_ref(&a0))
                .unwrap()
                .is_empty()
        );
        assert!(
            store
                .delete_offsets("nope", std::slice::from_ref(&a0))
                .unwrap()
                .is_empty()
        );
        assert_eq!(inode(&store), before, "nothing deleted, nothing written");
        assert_eq!(
            store
                .delete_offsets("g", std::slice::from_ref(&b0))
                .unwrap(),
            [b0]
        );
        let reopened = OffsetStore::open(dir.path()).unwrap();
        assert_eq!(
            reopened.groups().get("g"),
            Some(&BTreeMap::new()),
            "the group stays, with no offsets"
        );
        assert_eq!(reopened.get("other", &a0), Some(7));
    }

    #[test]
    fn a_failed_delete_changes_nothing_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = OffsetStore::open(dir.path()).unwrap();
        store.commit("g", TopicPartition::new("t", 0), 1).unwrap();
        std::fs::create_dir(fsutil::tmp_sibling(store.path())).unwrap();
        assert!(store.delete_group("g").is_err());
        assert_eq!(store.get("g", &TopicPartition::new("t", 0)), Some(1));
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

    /// The inode of `offsets.json`: every replacement makes a new one.
    fn inode(store: &OffsetStore) -> Option<u64> {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(store.path()).ok().map(|m| m.ino())
    }

    #[test]
    fn a_commit_that_changes_nothing_is_not_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = OffsetStore::open(dir.path()).unwrap();
        // The first commit of an open store writes, even with nothing
        // staged: the book's empty file appears.
        store.commit_groups(&BTreeMap::new()).unwrap();
        assert_eq!(
            std::fs::read_to_string(store.path()).unwrap(),
            r#"{"groups":{},"version":1}"#
        );
        let first = inode(&store);
        store.commit_groups(&BTreeMap::new()).unwrap();
        assert_eq!(inode(&store), first, "nothing staged, nothing written");
        let input = TopicPartition::new("in", 0);
        store.commit("workers", input.clone(), 7).unwrap();
        let seven = inode(&store);
        assert_ne!(seven, first, "a new offset is written");
        store.commit("workers", input.clone(), 7).unwrap();
        store.commit_groups(&BTreeMap::new()).unwrap();
        assert_eq!(inode(&store), seven, "the same offset again: not written");
        // An empty group the file lacks is new (the book's setdefault).
        store
            .commit_groups(&BTreeMap::from([("idle".to_string(), GroupOffsets::new())]))
            .unwrap();
        assert_ne!(inode(&store), seven);
        assert_eq!(
            std::fs::read_to_string(store.path()).unwrap(),
            r#"{"groups":{"idle":[],"workers":[{"offset":7,"partition":0,"topic":"in"}]},"version":1}"#
        );
        // Reopened, the store trusts nothing it did not write itself.
        let mut reopened = OffsetStore::open(dir.path()).unwrap();
        let before = inode(&reopened);
        reopened.commit("workers", input.clone(), 7).unwrap();
        assert_ne!(
            inode(&reopened),
            before,
            "first commit after an open writes"
        );
        assert_eq!(reopened.get("workers", &input), Some(7));
    }

    #[test]
    fn after_a_failed_write_the_same_offsets_are_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = OffsetStore::open(dir.path()).unwrap();
        let p = TopicPartition::new("t", 0);
        store.commit("g", p.clone(), 1).unwrap();
        let tmp = fsutil::tmp_sibling(store.path());
        std::fs::create_dir(&tmp).unwrap();
        assert!(store.commit("g", p.clone(), 2).is_err());
        std::fs::remove_dir(&tmp).unwrap();
        let before = inode(&store);
        store.commit("g", p.clone(), 1).unwrap();
        assert_ne!(inode(&store), before, "unknown after a failure: written");
        assert_eq!(store.get("g", &p), Some(1));
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
