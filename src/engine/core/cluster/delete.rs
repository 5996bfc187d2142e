//! Kafka's DeleteTopics on the engine: a topic goes with its replicas'
//! logs on every broker and its groups' committed offsets. No call of the
//! book's (its topics live as long as the data directory); an extension
//! that `mk-tui serve` needs for `kafka-topics.sh --delete` and an
//! AdminClient's `deleteTopics`.
//!
//! Crash-safe in three writes, each atomic (docs/engine-decisions.md,
//! "Deleting a topic"):
//! 1. each replica directory `broker-N/<topic>-<p>` is renamed to
//!    `<topic>-<p>.deleting`: from the first rename on, the deletion is
//!    decided, and an open that finds such a directory finishes it (a
//!    topic's logs left under their own names would be picked up again by
//!    a `create_topic` of the same name, as the book's `create_topic` opens
//!    whatever logs an earlier incarnation left);
//! 2. `metadata.json` without the topic;
//! 3. `offsets.json` without its committed offsets;
//!
//! then the renamed directories are removed. A refusal before the first
//! rename, or a failed rename or metadata write (the renames undone),
//! leaves everything as it was.
//!
//! Transactions: a transaction still open with partitions of the topic
//! ends without markers there (Kafka's coordinator drops the markers of
//! deleted partitions), and the offsets it staged for the topic are
//! dropped. The transaction journal keeps, for good, which partitions each
//! transaction wrote and at which offsets, and reads a partition's batches
//! through that; Kafka tells a deleted topic's partitions from a new
//! one's by topic id, the journal cannot. So a topic created again under
//! the name of one that transactions wrote to records in `metadata.json`
//! how many transaction instances the journal held then (`txn_from`) and
//! which of them had not ended (`txn_kept`: they wrote nothing to the
//! deleted topic and may write to the new one), and the coordinator
//! forgets what the others wrote under the name, at the creation and at
//! every open after its replay. A transaction not yet ended that wrote to
//! the deleted topic holds the name until it ends
//! (`TopicInOpenTransaction`).

use std::fs;
use std::path::{Path, PathBuf};

use super::open::replica_dir;
use super::{BrokerCluster, ClusterState};
use crate::engine::config::MiniKafkaConfig;
use crate::engine::consumer::offsets::OffsetStore;
use crate::engine::core::metadata::{MetadataStore, TopicMetadata, TopicPartition};
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::fsutil;

/// The suffix of a replica directory whose topic is being deleted.
pub const DELETING_SUFFIX: &str = ".deleting";

/// What a deletion removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeletedTopic {
    /// The topic's partitions.
    pub partitions: u32,
    /// Replica logs removed, over every broker.
    pub replicas: usize,
    /// Committed offsets removed, over every group.
    pub offsets: usize,
}

impl BrokerCluster {
    /// Deletes `topic` (see the module's comment): its partitions, their
    /// replicas' logs on every broker, stopped or running, and every
    /// group's committed offsets of it. `UnknownTopicOrPartition` for a
    /// topic that does not exist changes nothing.
    pub fn delete_topic(&self, topic: &str) -> Result<DeletedTopic> {
        self.mutate(|state, _| state.delete_topic(topic))
    }
}

impl ClusterState {
    fn delete_topic(&mut self, topic: &str) -> Result<DeletedTopic> {
        let meta = self
            .metadata
            .topics()
            .get(topic)
            .cloned()
            .ok_or_else(|| MiniKafkaError::UnknownTopicOrPartition(topic.to_string()))?;
        let dirs: Vec<PathBuf> = replica_dirs(&self.config, topic, &meta)
            .into_iter()
            .filter(|dir| dir.exists())
            .collect();
        // 1. Decided: every replica directory renamed (undone on a failure).
        let mut marked: Vec<(PathBuf, PathBuf)> = Vec::new();
        for dir in &dirs {
            let to = deleting_path(dir);
            let renamed = remove_leftover(&to)
                .and_then(|()| fs::rename(dir, &to).map_err(|e| MiniKafkaError::io(dir, e)));
            if let Err(e) = renamed {
                unmark(&marked);
                return Err(e);
            }
            marked.push((dir.clone(), to));
        }
        if let Err(e) = self.sync_broker_dirs(&marked) {
            unmark(&marked);
            return Err(e);
        }
        // 2. The topic is gone from metadata.json.
        if let Err(e) = self.metadata.remove_topic(topic) {
            unmark(&marked);
            return Err(e);
        }
        let partitions = meta.partitions.len() as u32;
        for p in 0..partitions {
            let tp = TopicPartition::new(topic, p);
            // Its replica sets close their files; a write waiting on them
            // for acks=all ends, told its partition is gone.
            if let Some(mut set) = self.partitions.untracked().remove(&tp) {
                set.end_pending_as_deleted();
            }
            self.reader_cache.forget(&tp);
        }
        self.partitioner.forget(topic);
        // The offsets transactions staged for it go too, durably before
        // the answer (a replayed journal would stage them again).
        if self.transactions.drop_staged_topic(topic)? > 0
            && let Some(group) = self.transactions.journal_group_commit()
        {
            group.sync_all()?;
        }
        // 3. Its committed offsets. Should this write fail, the renamed
        // directories stay, and the next open finishes the deletion.
        let offsets = self.offsets.delete_topic(topic)?;
        for (_, to) in &marked {
            fs::remove_dir_all(to).map_err(|e| MiniKafkaError::io(to, e))?;
        }
        Ok(DeletedTopic {
            partitions,
            replicas: marked.len(),
            offsets,
        })
    }

    /// Makes the renames durable (`sync_writes`): each broker directory
    /// that holds a renamed replica directory.
    fn sync_broker_dirs(&self, marked: &[(PathBuf, PathBuf)]) -> Result<()> {
        if !self.config.sync_writes {
            return Ok(());
        }
        let parents: std::collections::BTreeSet<&Path> =
            marked.iter().filter_map(|(_, to)| to.parent()).collect();
        parents.into_iter().try_for_each(fsutil::sync_dir)
    }

    /// Readies the name `topic` for a new topic: removes what a deletion
    /// of an earlier one left behind (its renamed directories, when their
    /// removal failed: they are not the new topic's logs), and returns the
    /// new topic's [`TopicMetadata::txn_from`] and `txn_kept`: where
    /// transactions wrote to a deleted topic of that name, the journal's
    /// instances so far and those of them not yet ended (which wrote
    /// nothing to it, and may write to the new one). A transaction not yet ended that
    /// wrote there is refused (`TopicInOpenTransaction`): its markers and
    /// its LSO would be the new topic's. Logs an earlier incarnation left
    /// under the name's own directories (no deletion: the book's
    /// `create_topic` picks them up) keep their transactions.
    ///
    /// [`TopicMetadata::txn_from`]: crate::engine::core::metadata::TopicMetadata::txn_from
    pub(super) fn ready_name(&self, topic: &str, partitions: u32) -> Result<TxnMark> {
        if let Some(txn) = self.transactions.open_on(topic) {
            return Err(MiniKafkaError::TopicInOpenTransaction {
                topic: topic.to_string(),
                txn,
            });
        }
        for (dir, of) in deleting_dirs(&self.config)? {
            if of == topic {
                remove_leftover(&dir)?;
            }
        }
        if !self.transactions.touched(topic) {
            return Ok(None);
        }
        let leftover = self.config.broker_ids.iter().any(|&b| {
            (0..partitions)
                .any(|p| replica_dir(&self.config, b, &TopicPartition::new(topic, p)).exists())
        });
        Ok((!leftover).then(|| {
            (
                self.transactions.transactions.all().len(),
                self.transactions.unfinished(),
            )
        }))
    }
}

/// A new topic's [`TopicMetadata::txn_from`] and
/// [`TopicMetadata::txn_kept`], where it needs them.
///
/// [`TopicMetadata::txn_from`]: crate::engine::core::metadata::TopicMetadata::txn_from
/// [`TopicMetadata::txn_kept`]: crate::engine::core::metadata::TopicMetadata::txn_kept
pub(super) type TxnMark = Option<(usize, Vec<usize>)>;

/// Makes the coordinator forget what instances before each topic's
/// [`TopicMetadata::txn_from`] wrote under its name (an open, after the
/// journal was replayed). A journal that now holds fewer instances (a torn
/// tail cut the instances begun before the topic was created, and so every
/// one after) lowers the mark to what it holds, in `metadata` (written
/// with the open's other repairs); whether it lowered one.
///
/// [`TopicMetadata::txn_from`]: crate::engine::core::metadata::TopicMetadata::txn_from
pub(super) fn forget_earlier_topics(
    metadata: &mut MetadataStore,
    transactions: &mut crate::engine::transaction::TransactionCoordinator,
) -> bool {
    let held = transactions.transactions.all().len();
    let marked: Vec<(String, usize, Vec<usize>)> = metadata
        .topics()
        .iter()
        .filter_map(|(name, t)| {
            t.txn_from
                .map(|from| (name.clone(), from, t.txn_kept.clone()))
        })
        .collect();
    let mut lowered = false;
    for (name, from, kept) in marked {
        if held < from {
            metadata.set_txn_from(&name, held);
            lowered = true;
        }
        transactions.forget_topic_before(&name, from.min(held), &kept);
    }
    lowered
}

/// The directory of each replica of `topic` as `meta` places them, in
/// partition and assignment order.
fn replica_dirs(config: &MiniKafkaConfig, topic: &str, meta: &TopicMetadata) -> Vec<PathBuf> {
    meta.partitions()
        .into_iter()
        .flat_map(|(p, partition)| {
            let tp = TopicPartition::new(topic, p);
            partition
                .replicas
                .iter()
                .map(move |&broker| replica_dir(config, broker, &tp))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `dir` renamed as deleting.
fn deleting_path(dir: &Path) -> PathBuf {
    let mut name = dir.as_os_str().to_owned();
    name.push(DELETING_SUFFIX);
    PathBuf::from(name)
}

/// Removes a directory left by an earlier deletion, if any.
fn remove_leftover(dir: &Path) -> Result<()> {
    match fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(MiniKafkaError::io(dir, e)),
        _ => Ok(()),
    }
}

/// Renames the directories back (a deletion that failed before it was
/// written to metadata.json), best effort: an open finishes a deletion
/// whose directories could not be renamed back.
fn unmark(marked: &[(PathBuf, PathBuf)]) {
    for (dir, to) in marked.iter().rev() {
        let _ = fs::rename(to, dir);
    }
}

/// Every replica directory being deleted, with its topic, in the brokers'
/// directories of `config`, in name order.
pub(super) fn deleting_dirs(config: &MiniKafkaConfig) -> Result<Vec<(PathBuf, String)>> {
    let mut out = Vec::new();
    for broker in &config.broker_ids {
        let parent = config.data_dir.join(format!("broker-{broker}"));
        let entries = match fs::read_dir(&parent) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(MiniKafkaError::io(&parent, e)),
        };
        let mut found = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| MiniKafkaError::io(&parent, e))?;
            let name = entry.file_name();
            let Some(topic) = name.to_str().and_then(topic_of_deleting) else {
                continue;
            };
            found.push((entry.path(), topic.to_string()));
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

/// The topic of a replica directory named `<topic>-<p>.deleting`.
fn topic_of_deleting(name: &str) -> Option<&str> {
    let replica = name.strip_suffix(DELETING_SUFFIX)?;
    let (topic, partition) = replica.rsplit_once('-')?;
    (!topic.is_empty() && !partition.is_empty() && partition.bytes().all(|b| b.is_ascii_digit()))
        .then_some(topic)
}

/// An open's part of a deletion a crash cut short: every topic with a
/// directory being deleted is forgotten (before the logs are scanned), and
/// [`finish_deletions`] writes that once every log was checked. What it
/// found to remove: the renamed directories, and those of a topic still
/// listed that the crash left under their own names; and whether
/// metadata.json and offsets.json changed.
pub(super) fn forget_deleting(
    config: &MiniKafkaConfig,
    metadata: &mut MetadataStore,
    offsets: &mut OffsetStore,
) -> Result<Deletions> {
    let deleting = deleting_dirs(config)?;
    let mut dirs: Vec<PathBuf> = Vec::new();
    let (mut listed, mut committed) = (false, false);
    for (dir, topic) in &deleting {
        dirs.push(dir.clone());
        if let Some(meta) = metadata.topics().get(topic) {
            dirs.extend(replica_dirs(config, topic, meta));
        }
        listed |= metadata.forget_topic(topic);
        committed |= offsets.forget_topic(topic);
    }
    dirs.sort();
    dirs.dedup();
    let mut topics: Vec<String> = deleting.into_iter().map(|(_, t)| t).collect();
    topics.sort();
    topics.dedup();
    Ok(Deletions {
        topics,
        dirs,
        metadata: listed,
        offsets: committed,
    })
}

/// What an open finishes of deletions a crash cut short
/// ([`forget_deleting`]).
#[derive(Debug, Default)]
pub(super) struct Deletions {
    /// The topics, in name order, once each.
    pub(super) topics: Vec<String>,
    dirs: Vec<PathBuf>,
    metadata: bool,
    offsets: bool,
}

impl Deletions {
    /// The open changed metadata.json in memory otherwise too
    /// ([`forget_earlier_topics`]): it is written with the rest.
    pub(super) fn metadata_changed(&mut self) {
        self.metadata = true;
    }
}

/// Writes what [`forget_deleting`] forgot and removes the directories.
pub(super) fn finish_deletions(
    deletions: &Deletions,
    metadata: &MetadataStore,
    offsets: &mut OffsetStore,
) -> Result<()> {
    if deletions.metadata {
        metadata.write()?;
    }
    if deletions.offsets {
        offsets.write()?;
    }
    deletions
        .dirs
        .iter()
        .try_for_each(|dir| remove_leftover(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deleting_directory_names_its_topic() {
        assert_eq!(topic_of_deleting("t-0.deleting"), Some("t"));
        assert_eq!(topic_of_deleting("my-topic-12.deleting"), Some("my-topic"));
        assert_eq!(topic_of_deleting("a.b-3.deleting"), Some("a.b"));
        assert_eq!(topic_of_deleting("t-0"), None);
        assert_eq!(topic_of_deleting("t-x.deleting"), None);
        assert_eq!(topic_of_deleting("-0.deleting"), None);
        assert_eq!(topic_of_deleting("t-.deleting"), None);
    }
}
