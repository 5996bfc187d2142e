//! Topic metadata (E3): round-robin replica assignment over the configured
//! broker ids, persisted atomically as `metadata.json` in the book's format:
//!
//! ```json
//! {"topics":{"out":{"partitions":{"0":{"leader_epoch":0,"leader_id":1,"replicas":[1,2]}}}},"version":1}
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::config::BrokerId;
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::fsutil;

pub use crate::engine::layout::METADATA_FILE;
/// The only metadata format version.
pub const METADATA_VERSION: u32 = 1;
/// Kafka's limit on topic name length.
pub const MAX_TOPIC_NAME_LEN: usize = 249;
pub use crate::engine::config::MAX_PARTITIONS;

/// The largest leader epoch: Kafka's leader epochs are int32 (the wire
/// protocol and its checkpoint files carry them so), so an epoch past
/// `i32::MAX` cannot be served, and one at it cannot grow. Refused rather
/// than wrapped, which would move the epoch backwards and unfence every
/// stale leader (issue 17, item 3).
pub const MAX_LEADER_EPOCH: u32 = i32::MAX as u32;

/// A topic and a partition number; displayed as `<topic>-<partition>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TopicPartition {
    pub topic: String,
    pub partition: u32,
}

impl TopicPartition {
    pub fn new(topic: impl Into<String>, partition: u32) -> Self {
        Self {
            topic: topic.into(),
            partition,
        }
    }
}

impl fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}

/// One partition's replicas, leader and leader epoch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionMetadata {
    pub leader_epoch: u32,
    pub leader_id: BrokerId,
    pub replicas: Vec<BrokerId>,
}

/// Which time a topic's records carry (Kafka's topic config
/// `message.timestamp.type`, spelled as Kafka spells its values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum TimestampType {
    /// The producer's timestamp, kept as sent (the book's only kind).
    #[default]
    CreateTime,
    /// The leader's clock when it appended the batch, over every record's.
    LogAppendTime,
}

impl TimestampType {
    /// Whether this is the default, left out of metadata.json and of the
    /// `create_topic` action so that both stay in the book's format.
    pub fn is_create_time(&self) -> bool {
        *self == TimestampType::CreateTime
    }
}

/// How a topic's closed segments are cleaned (Kafka's topic config
/// `cleanup.policy`, spelled as Kafka spells its values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CleanupPolicy {
    /// Whole segments are deleted by retention (the book's default).
    #[default]
    Delete,
    /// The book's `LogCompactor`: only each key's latest record stays.
    Compact,
    /// Both (Kafka's `compact,delete`, what Kafka Streams gives a windowed
    /// store's changelog): compacted, and whole segments past the topic's
    /// retention deleted.
    #[serde(rename = "compact,delete")]
    CompactDelete,
}

/// A topic's own settings (Kafka's topic configs `cleanup.policy`,
/// `retention.ms`, `retention.bytes`, `delete.retention.ms` and
/// `min.insync.replicas`), kept with the topic so that `mk-tui serve`
/// cleans it by itself and its replica sets apply its minimum ISR. The default (no
/// settings) is the book's topic, which no cleaner touches unasked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopicConfig {
    #[serde(default, skip_serializing_if = "CleanupPolicy::is_delete")]
    pub cleanup_policy: CleanupPolicy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention_bytes: Option<u64>,
    /// How long a tombstone outlives compaction (Kafka's default, one day,
    /// when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_retention_ms: Option<u64>,
    /// How many replicas an acks=all append needs in the ISR (Kafka's
    /// topic config `min.insync.replicas`), over the cluster's
    /// `MiniKafkaConfig::min_insync_replicas`; at least 1, applied capped
    /// at the topic's replication factor as Kafka applies it
    /// (`ClusterState::min_insync_replicas`). Not the book's
    /// (docs/book-differences.md): the cluster's applies when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_insync_replicas: Option<u32>,
}

/// Kafka's default `delete.retention.ms`: one day.
pub const DEFAULT_DELETE_RETENTION_MS: u64 = 86_400_000;

impl CleanupPolicy {
    pub fn is_delete(&self) -> bool {
        *self == CleanupPolicy::Delete
    }

    /// Whether the topic is compacted (`compact`, alone or with `delete`).
    pub fn compacts(&self) -> bool {
        matches!(self, CleanupPolicy::Compact | CleanupPolicy::CompactDelete)
    }

    /// Kafka's value: `delete`, `compact` or `compact,delete`.
    pub fn kafka_name(&self) -> &'static str {
        match self {
            CleanupPolicy::Delete => "delete",
            CleanupPolicy::Compact => "compact",
            CleanupPolicy::CompactDelete => "compact,delete",
        }
    }
}

/// Read by hand so that a bad value's message names the field.
impl<'de> Deserialize<'de> for CleanupPolicy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        match String::deserialize(d)?.as_str() {
            "delete" => Ok(CleanupPolicy::Delete),
            "compact" => Ok(CleanupPolicy::Compact),
            "compact,delete" => Ok(CleanupPolicy::CompactDelete),
            other => Err(serde::de::Error::custom(format!(
                "unknown cleanup_policy {other:?}: give \"delete\", \"compact\" or \"compact,delete\""
            ))),
        }
    }
}

impl TopicConfig {
    /// Whether no setting is given, so that metadata.json and the
    /// `create_topic` action stay in the book's format.
    pub fn is_default(&self) -> bool {
        *self == TopicConfig::default()
    }

    /// Whether retention applies by itself: a time or size limit is set.
    pub fn has_retention(&self) -> bool {
        self.retention_ms.is_some() || self.retention_bytes.is_some()
    }

    /// The tombstones' grace for compaction.
    pub fn delete_retention_ms(&self) -> u64 {
        self.delete_retention_ms
            .unwrap_or(DEFAULT_DELETE_RETENTION_MS)
    }
}

/// One topic's partitions, keyed by the partition number as a string (the
/// book's JSON; keys sort as strings, like Python's `sort_keys`), its
/// timestamp type, written only when it is LogAppendTime, and its cleaning
/// config, written only when one is set (the book's reader ignores a key
/// it does not know).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct TopicMetadata {
    pub partitions: BTreeMap<String, PartitionMetadata>,
    #[serde(default, skip_serializing_if = "TimestampType::is_create_time")]
    pub timestamp_type: TimestampType,
    #[serde(default, skip_serializing_if = "TopicConfig::is_default")]
    pub config: TopicConfig,
    /// For a topic created again under the name of a deleted one that
    /// transactions wrote to: the number of transaction instances the
    /// journal held then. Instances before it wrote to the deleted topic,
    /// never to this one, so the coordinator forgets what they wrote
    /// under this name (`core::cluster::delete`). Left out otherwise, the
    /// book's format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub txn_from: Option<usize>,
    /// The instances before [`Self::txn_from`] that had not ended when
    /// the topic was created: none of them wrote to the deleted topic (its
    /// name is refused while one that did is open), and they may write to
    /// this one, so they are kept. Left out when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub txn_kept: Vec<usize>,
}

impl TopicMetadata {
    /// Partition metadata in partition-number order.
    pub fn partitions(&self) -> Vec<(u32, &PartitionMetadata)> {
        let mut parts: Vec<(u32, &PartitionMetadata)> = self
            .partitions
            .iter()
            .filter_map(|(k, v)| k.parse().ok().map(|p| (p, v)))
            .collect();
        parts.sort_by_key(|(p, _)| *p);
        parts
    }

    /// [`Self::partitions`] to change: a planned topic's, before it is
    /// added (`ClusterState::ready_new_partitions` picks their leaders).
    pub fn partitions_mut(&mut self) -> Vec<(u32, &mut PartitionMetadata)> {
        let mut parts: Vec<(u32, &mut PartitionMetadata)> = self
            .partitions
            .iter_mut()
            .filter_map(|(k, v)| Some((k.parse().ok()?, v)))
            .collect();
        parts.sort_by_key(|(p, _)| *p);
        parts
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct MetadataFile {
    topics: BTreeMap<String, TopicMetadata>,
    /// The data directory's format version: a build refuses a directory whose
    /// version is newer than [`METADATA_VERSION`] before writing anything.
    version: u64,
}

/// [`MetadataFile`] as written: the same fields, borrowed.
#[derive(Serialize)]
struct MetadataFileRef<'a> {
    topics: &'a BTreeMap<String, TopicMetadata>,
    version: u64,
}

/// The cluster's topic metadata and the file that holds it.
#[derive(Debug, Clone)]
pub struct MetadataStore {
    path: PathBuf,
    topics: BTreeMap<String, TopicMetadata>,
    /// fsync replacements (`MiniKafkaConfig::sync_writes`).
    sync: bool,
}

impl MetadataStore {
    /// Loads `metadata.json` from `data_dir`, or starts empty if there is none.
    /// A corrupt file is an error naming it.
    pub fn open(data_dir: &Path) -> Result<Self> {
        let path = data_dir.join(METADATA_FILE);
        let topics = match fsutil::read_json_file::<MetadataFile>(&path)? {
            None => BTreeMap::new(),
            Some(file) if file.version != u64::from(METADATA_VERSION) => {
                return Err(MiniKafkaError::unsupported_version(
                    &path,
                    file.version,
                    METADATA_VERSION,
                ));
            }
            Some(file) => file.topics,
        };
        let store = Self {
            path,
            topics,
            sync: true,
        };
        store.check()?;
        Ok(store)
    }

    fn check(&self) -> Result<()> {
        for (name, topic) in &self.topics {
            validate_topic_name(name)
                .map_err(|e| MiniKafkaError::corrupt(&self.path, e.to_string()))?;
            for (key, partition) in &topic.partitions {
                let problem = if key.parse::<u32>().map(|p| p.to_string()) != Ok(key.clone()) {
                    Some("the key is not a partition number".to_string())
                } else if partition.replicas.is_empty() {
                    Some("it has no replicas".to_string())
                } else if !partition.replicas.contains(&partition.leader_id) {
                    Some(format!(
                        "its leader {} is not among its replicas {:?}",
                        partition.leader_id, partition.replicas
                    ))
                } else if let Some(twice) = repeated(&partition.replicas) {
                    Some(format!("broker {twice} is listed twice among its replicas"))
                } else if topic.config.min_insync_replicas == Some(0) {
                    Some(
                        "min_insync_replicas is 0: an acks=all append needs at least 1".to_string(),
                    )
                } else if partition.leader_epoch > MAX_LEADER_EPOCH {
                    Some(format!(
                        "leader_epoch {} is past the largest leader epoch, {MAX_LEADER_EPOCH} (Kafka's leader epochs are int32)",
                        partition.leader_epoch
                    ))
                } else {
                    None
                };
                if let Some(problem) = problem {
                    return Err(MiniKafkaError::corrupt(
                        &self.path,
                        format!("topic {name:?} partition {key:?}: {problem}"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The file this store writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// All topics by name.
    pub fn topics(&self) -> &BTreeMap<String, TopicMetadata> {
        &self.topics
    }

    /// One partition's metadata.
    pub fn partition(&self, tp: &TopicPartition) -> Option<&PartitionMetadata> {
        self.topics
            .get(&tp.topic)?
            .partitions
            .get(&tp.partition.to_string())
    }

    /// Adds a topic with round-robin assignment and persists.
    pub fn create_topic(
        &mut self,
        name: &str,
        partitions: u32,
        replication_factor: u32,
        broker_ids: &[BrokerId],
    ) -> Result<&TopicMetadata> {
        let topic = self.plan_topic(name, partitions, replication_factor, broker_ids)?;
        self.add_topic(name, topic)
    }

    /// The metadata `create_topic` would write (checked, replicas assigned),
    /// without writing it: the cluster scans the new topic's logs (left by an
    /// earlier incarnation, if any) before anything is written.
    pub fn plan_topic(
        &self,
        name: &str,
        partitions: u32,
        replication_factor: u32,
        broker_ids: &[BrokerId],
    ) -> Result<TopicMetadata> {
        validate_topic_name(name)?;
        if self.topics.contains_key(name) {
            return Err(MiniKafkaError::TopicAlreadyExists(name.to_string()));
        }
        if partitions == 0 || partitions > MAX_PARTITIONS {
            return Err(MiniKafkaError::InvalidPartitions(partitions));
        }
        let topic = TopicMetadata {
            partitions: (0..partitions)
                .map(|p| {
                    let replicas = assign_replicas(p, replication_factor, broker_ids)?;
                    Ok((
                        p.to_string(),
                        PartitionMetadata {
                            leader_epoch: 0,
                            leader_id: replicas[0],
                            replicas,
                        },
                    ))
                })
                .collect::<Result<_>>()?,
            timestamp_type: TimestampType::CreateTime,
            config: TopicConfig::default(),
            txn_from: None,
            txn_kept: Vec::new(),
        };
        Ok(topic)
    }

    /// Adds a planned topic and persists.
    pub fn add_topic(&mut self, name: &str, topic: TopicMetadata) -> Result<&TopicMetadata> {
        if self.topics.contains_key(name) {
            return Err(MiniKafkaError::TopicAlreadyExists(name.to_string()));
        }
        self.topics.insert(name.to_string(), topic);
        if let Err(e) = self.persist() {
            self.topics.remove(name);
            return Err(e);
        }
        Ok(&self.topics[name])
    }

    /// The partitions `count` would add to the topic `name` (Kafka's
    /// CreatePartitions), placed as [`Self::plan_topic`] places partitions
    /// of those numbers, with the topic's replication factor; without
    /// writing them. A topic that does not exist is
    /// [`MiniKafkaError::UnknownTopicOrPartition`], a count past the cap
    /// [`MiniKafkaError::InvalidPartitions`], one that is not more than
    /// the topic has [`MiniKafkaError::PartitionsNotIncreased`].
    pub fn plan_partitions(
        &self,
        name: &str,
        count: u32,
        broker_ids: &[BrokerId],
    ) -> Result<Vec<(u32, PartitionMetadata)>> {
        let topic = self
            .topics
            .get(name)
            .ok_or_else(|| MiniKafkaError::UnknownTopicOrPartition(name.to_string()))?;
        let current = topic.partitions.len() as u32;
        if count > MAX_PARTITIONS {
            return Err(MiniKafkaError::InvalidPartitions(count));
        }
        if count <= current {
            return Err(MiniKafkaError::PartitionsNotIncreased {
                topic: name.to_string(),
                current,
                requested: count,
            });
        }
        // Every partition of a topic has its replication factor (the
        // checked file has at least one replica per partition).
        let factor = topic
            .partitions()
            .first()
            .map_or(1, |(_, p)| p.replicas.len() as u32);
        (current..count)
            .map(|p| {
                let replicas = assign_replicas(p, factor, broker_ids)?;
                Ok((
                    p,
                    PartitionMetadata {
                        leader_epoch: 0,
                        leader_id: replicas[0],
                        replicas,
                    },
                ))
            })
            .collect()
    }

    /// Removes the topic `name` and persists (Kafka's DeleteTopics); on a
    /// failed write the topic is as it was. Returns what it held.
    pub fn remove_topic(&mut self, name: &str) -> Result<TopicMetadata> {
        let topic = self
            .topics
            .remove(name)
            .ok_or_else(|| MiniKafkaError::UnknownTopicOrPartition(name.to_string()))?;
        if let Err(e) = self.persist() {
            self.topics.insert(name.to_string(), topic);
            return Err(e);
        }
        Ok(topic)
    }

    /// Sets the topic `name`'s [`TopicMetadata::txn_from`] without
    /// writing (an open lowering it to the instances its journal still
    /// holds, written with [`Self::write`]).
    pub fn set_txn_from(&mut self, name: &str, from: usize) {
        if let Some(t) = self.topics.get_mut(name) {
            t.txn_from = Some(from);
            t.txn_kept.retain(|&i| i < from);
        }
    }

    /// Forgets the topic `name` without writing (an open finishing a
    /// deletion a crash cut short: it writes once every log was checked,
    /// with [`Self::write`]). Whether it was there.
    pub fn forget_topic(&mut self, name: &str) -> bool {
        self.topics.remove(name).is_some()
    }

    /// Writes the file as the store holds it.
    pub fn write(&self) -> Result<()> {
        self.persist()
    }

    /// Adds planned partitions to the topic `name` and persists; on a
    /// failed write the topic is as it was.
    pub fn add_partitions(&mut self, name: &str, added: &[(u32, PartitionMetadata)]) -> Result<()> {
        let topic = self
            .topics
            .get_mut(name)
            .ok_or_else(|| MiniKafkaError::UnknownTopicOrPartition(name.to_string()))?;
        for (p, meta) in added {
            topic.partitions.insert(p.to_string(), meta.clone());
        }
        if let Err(e) = self.persist() {
            let topic = self.topics.get_mut(name).expect("present above");
            for (p, _) in added {
                topic.partitions.remove(&p.to_string());
            }
            return Err(e);
        }
        Ok(())
    }

    /// Records a new leader and epoch for a partition and persists.
    pub fn set_leader(&mut self, tp: &TopicPartition, leader: BrokerId, epoch: u32) -> Result<()> {
        let entry = self
            .topics
            .get_mut(&tp.topic)
            .and_then(|t| t.partitions.get_mut(&tp.partition.to_string()))
            .ok_or_else(|| MiniKafkaError::UnknownTopicOrPartition(tp.to_string()))?;
        let previous = (entry.leader_id, entry.leader_epoch);
        entry.leader_id = leader;
        entry.leader_epoch = epoch;
        if let Err(e) = self.persist() {
            let entry = self
                .topics
                .get_mut(&tp.topic)
                .and_then(|t| t.partitions.get_mut(&tp.partition.to_string()))
                .expect("entry present above");
            (entry.leader_id, entry.leader_epoch) = previous;
            return Err(e);
        }
        Ok(())
    }

    /// Replaces a topic's cleaning config (Kafka's IncrementalAlterConfigs
    /// and AlterConfigs) and persists; the old config stays if the write
    /// fails, so memory and file agree.
    pub fn set_config(&mut self, topic: &str, config: TopicConfig) -> Result<()> {
        let entry = self
            .topics
            .get_mut(topic)
            .ok_or_else(|| MiniKafkaError::UnknownTopicOrPartition(topic.to_string()))?;
        let previous = std::mem::replace(&mut entry.config, config);
        if let Err(e) = self.persist() {
            self.topics
                .get_mut(topic)
                .expect("topic present above")
                .config = previous;
            return Err(e);
        }
        Ok(())
    }

    /// Whether replacements are fsynced (`MiniKafkaConfig::sync_writes`).
    pub fn set_sync(&mut self, sync: bool) {
        self.sync = sync;
    }

    fn persist(&self) -> Result<()> {
        // Borrowed, not cloned: the file holds every topic, so cloning the
        // map for each write doubled the O(topics) work of every creation
        // (issue 17 item 12).
        let file = MetadataFileRef {
            topics: &self.topics,
            version: u64::from(METADATA_VERSION),
        };
        fsutil::write_atomically(
            &self.path,
            fsutil::to_book_json(&file).as_bytes(),
            self.sync,
        )
    }
}

/// The first broker id that occurs twice in `replicas`, if any.
fn repeated(replicas: &[BrokerId]) -> Option<BrokerId> {
    let mut seen = std::collections::BTreeSet::new();
    replicas.iter().copied().find(|&b| !seen.insert(b))
}

/// Partition `p` gets `factor` replicas starting at broker index `p`, wrapping;
/// the first is the leader (FORMATS.md).
pub fn assign_replicas(p: u32, factor: u32, broker_ids: &[BrokerId]) -> Result<Vec<BrokerId>> {
    let n = broker_ids.len();
    if factor == 0 || factor as usize > n {
        return Err(MiniKafkaError::InvalidReplicationFactor { factor, brokers: n });
    }
    Ok((0..factor as usize)
        .map(|i| broker_ids[(p as usize + i) % n])
        .collect())
}

/// Kafka's topic name rules: 1..=249 characters of `[a-zA-Z0-9._-]`, not `.`
/// or `..`. These also keep the name safe as a directory name.
pub fn validate_topic_name(name: &str) -> Result<()> {
    let invalid = |reason| {
        Err(MiniKafkaError::InvalidTopicName {
            name: name.to_string(),
            reason,
        })
    };
    if name.is_empty() {
        return invalid("must not be empty");
    }
    if name.len() > MAX_TOPIC_NAME_LEN {
        return invalid("longer than 249 characters");
    }
    if name == "." || name == ".." {
        return invalid("'.' and '..' are reserved");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
    {
        return invalid("only ASCII letters, digits, '.', '_' and '-' are allowed");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kafka's three values, as metadata.json and a recording spell them.
    #[test]
    fn cleanup_policies_are_spelled_as_kafka_spells_them() {
        for (policy, json) in [
            (CleanupPolicy::Delete, r#""delete""#),
            (CleanupPolicy::Compact, r#""compact""#),
            (CleanupPolicy::CompactDelete, r#""compact,delete""#),
        ] {
            assert_eq!(serde_json::to_string(&policy).unwrap(), json);
            assert_eq!(serde_json::from_str::<CleanupPolicy>(json).unwrap(), policy);
            assert_eq!(format!("\"{}\"", policy.kafka_name()), json);
        }
        assert!(CleanupPolicy::CompactDelete.compacts() && CleanupPolicy::Compact.compacts());
        assert!(!CleanupPolicy::Delete.compacts());
        let err = serde_json::from_str::<CleanupPolicy>(r#""delete,compact""#).unwrap_err();
        assert!(err.to_string().contains("give"), "{err}");
    }

    #[test]
    fn round_robin_assignment_starts_at_partition_index() {
        let brokers = [1, 2, 3];
        assert_eq!(assign_replicas(0, 2, &brokers).unwrap(), vec![1, 2]);
        assert_eq!(assign_replicas(1, 2, &brokers).unwrap(), vec![2, 3]);
        assert_eq!(assign_replicas(2, 3, &brokers).unwrap(), vec![3, 1, 2]);
        assert_eq!(assign_replicas(4, 1, &brokers).unwrap(), vec![2]);
        assert!(matches!(
            assign_replicas(0, 4, &brokers),
            Err(MiniKafkaError::InvalidReplicationFactor {
                factor: 4,
                brokers: 3
            })
        ));
        assert!(assign_replicas(0, 0, &brokers).is_err());
    }

    #[test]
    fn topic_names_follow_kafka_rules() {
        for ok in ["out", "a.b_c-9", &"x".repeat(249)] {
            assert!(validate_topic_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", ".", "..", "a/b", "a b", "é", &"x".repeat(250)] {
            assert!(validate_topic_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn persisted_in_the_books_exact_format_and_reopened() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = MetadataStore::open(dir.path()).unwrap();
        store.create_topic("out", 1, 2, &[1, 2]).unwrap();
        let text = std::fs::read_to_string(dir.path().join(METADATA_FILE)).unwrap();
        assert_eq!(
            text,
            r#"{"topics":{"out":{"partitions":{"0":{"leader_epoch":0,"leader_id":1,"replicas":[1,2]}}}},"version":1}"#
        );
        store
            .set_leader(&TopicPartition::new("out", 0), 2, 1)
            .unwrap();
        let reopened = MetadataStore::open(dir.path()).unwrap();
        let p = reopened.partition(&TopicPartition::new("out", 0)).unwrap();
        assert_eq!(
            (p.leader_id, p.leader_epoch, p.replicas.clone()),
            (2, 1, vec![1, 2])
        );
    }

    #[test]
    fn a_topic_grows_by_partitions_placed_as_its_first_ones_and_only_grows() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = MetadataStore::open(dir.path()).unwrap();
        store.create_topic("t", 2, 2, &[1, 2, 3]).unwrap();
        let added = store.plan_partitions("t", 4, &[1, 2, 3]).unwrap();
        let placed: Vec<(u32, Vec<BrokerId>)> = added
            .iter()
            .map(|(p, m)| (*p, m.replicas.clone()))
            .collect();
        assert_eq!(placed, [(2, vec![3, 1]), (3, vec![1, 2])]);
        store.add_partitions("t", &added).unwrap();
        let reopened = MetadataStore::open(dir.path()).unwrap();
        assert_eq!(reopened.topics()["t"].partitions.len(), 4);
        let other = tempfile::tempdir().unwrap();
        let mut made = MetadataStore::open(other.path()).unwrap();
        made.create_topic("t", 4, 2, &[1, 2, 3]).unwrap();
        assert_eq!(reopened.topics()["t"], made.topics()["t"]);
        for (count, code) in [(4, "InvalidPartitions"), (3, "InvalidPartitions")] {
            let e = store.plan_partitions("t", count, &[1, 2, 3]).unwrap_err();
            assert!(
                matches!(e, MiniKafkaError::PartitionsNotIncreased { current: 4, .. }),
                "{e}"
            );
            assert_eq!(e.code(), code);
        }
        assert!(matches!(
            store.plan_partitions("t", MAX_PARTITIONS + 1, &[1, 2, 3]),
            Err(MiniKafkaError::InvalidPartitions(_))
        ));
        assert!(matches!(
            store.plan_partitions("none", 2, &[1]),
            Err(MiniKafkaError::UnknownTopicOrPartition(_))
        ));
    }

    #[test]
    fn partition_keys_sort_as_strings_like_python() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = MetadataStore::open(dir.path()).unwrap();
        store.create_topic("t", 11, 1, &[1]).unwrap();
        let text = std::fs::read_to_string(dir.path().join(METADATA_FILE)).unwrap();
        let i1 = text.find("\"1\":").unwrap();
        let i10 = text.find("\"10\":").unwrap();
        let i2 = text.find("\"2\":").unwrap();
        assert!(i1 < i10 && i10 < i2, "{text}");
        let parts: Vec<u32> = store.topics()["t"]
            .partitions()
            .iter()
            .map(|(p, _)| *p)
            .collect();
        assert_eq!(parts, (0..11).collect::<Vec<_>>());
    }

    #[test]
    fn corrupt_or_newer_metadata_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(METADATA_FILE), "{\"topics\":").unwrap();
        let err = MetadataStore::open(dir.path()).unwrap_err().to_string();
        assert!(err.contains("metadata.json"), "{err}");
        std::fs::write(
            dir.path().join(METADATA_FILE),
            r#"{"topics":{},"version":2}"#,
        )
        .unwrap();
        let err = MetadataStore::open(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("metadata.json") && err.contains("version 2"),
            "{err}"
        );
        std::fs::write(
            dir.path().join(METADATA_FILE),
            r#"{"topics":{"t":{"partitions":{"0":{"leader_epoch":0,"leader_id":9,"replicas":[1]}}}},"version":1}"#,
        )
        .unwrap();
        assert!(MetadataStore::open(dir.path()).is_err());
    }
}
