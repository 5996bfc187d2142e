//! The action vocabulary of SPEC §4: everything a key press, a recording step
//! or a test can do to the cluster. Serialised externally tagged, snake_case:
//! `{"begin":{"txn":"tx-1"}}`. Unknown fields are ignored; optional fields
//! have the defaults the spec states.
//!
//! `acks`, `crash_after` and the tear target are typed: they are
//! parsed when an action is read, so `mk-tui check` refuses `acks: "2"`
//! with the field named, and the driver never meets a bad spelling. On disk
//! they keep the spec's shapes: `"0"`/`"1"`/`"all"`, `"prepare"`/
//! `"marker:N"`/`"markers"`/`"offsets"`, and `"journal"` or
//! `{topic, partition, broker}`.

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::engine::AckMode;
use crate::engine::core::cluster::CompactionCut;
use crate::engine::core::metadata::{TimestampType, TopicConfig};
use crate::engine::transaction::CutPoint;
pub use crate::session::payload::Payload;

/// One action. Field names are the recording's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    CreateTopic {
        name: String,
        partitions: u32,
        replication_factor: u32,
        /// `"LogAppendTime"`: the leader stamps each appended record with
        /// its clock (Kafka's `message.timestamp.type`). Left out when
        /// `"CreateTime"`, the default, so the book's actions read as before.
        #[serde(default, skip_serializing_if = "TimestampType::is_create_time")]
        timestamp_type: TimestampType,
        /// The topic's config (`cleanup_policy`, `retention_ms`,
        /// `retention_bytes`, `delete_retention_ms`, kept in its metadata
        /// for `mk-tui serve`'s cleaner; `min_insync_replicas`, over the
        /// cluster's for acks=all appends). Left out when empty, the book's.
        #[serde(default, skip_serializing_if = "TopicConfig::is_default")]
        config: TopicConfig,
    },
    Produce {
        topic: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partition: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<String>,
        /// One record's value; or give `records` instead.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<String>,
        /// A whole batch: its records appended as one engine batch, at
        /// consecutive offsets, as a Kafka client's batch is (an extension
        /// of SPEC §4, docs/recording-format.md). Instead of `key`/`value`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        records: Vec<RecordSpec>,
        /// "0", "1" (default) or "all" ("-1" is read as "all").
        #[serde(default, skip_serializing_if = "Option::is_none", with = "spelled")]
        acks: Option<AckMode>,
        /// A named idempotent producer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        producer: Option<String>,
        /// A Kafka client's own producer id, epoch and first sequence,
        /// carried by the batch as the client sent it, for the engine's
        /// producer state (E7) to judge: instead of `producer`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wire: Option<WireIdentity>,
    },
    Begin {
        txn: String,
        /// A new producer of the id (Kafka's `initTransactions`, which a
        /// served client's InitProducerId is): under transaction version 2
        /// it takes a new epoch past the one the id's last end bumped to,
        /// fencing the producer that holds that one (KIP-890); a plain
        /// `begin` goes on with the bumped epoch. Under version 1 every
        /// `begin` takes a new epoch, so this changes nothing.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        init: bool,
    },
    Send {
        txn: String,
        topic: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partition: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<String>,
        /// One record's value; or give `records` instead.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<String>,
        /// A whole batch, one transactional engine batch (as `produce`'s).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        records: Vec<RecordSpec>,
        /// A Kafka client's producer id, epoch and first sequence (as
        /// `produce`'s): the transaction's producer must be this one, and
        /// its producer state (E7) judges the sequence. Only where the
        /// engine gives transactions a producer id (`--rules kafka`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wire: Option<WireIdentity>,
    },
    /// A Produce of `txn`'s last ended transaction, delayed in the network
    /// past its end (a retry arriving late), delivered now with that
    /// transaction's producer id and epoch: under transaction version 1 it
    /// lands after the marker and hangs the LSO (the hanging transaction);
    /// under version 2 it is fenced (InvalidProducerEpoch). Queued behind
    /// the transaction's other actions, so it arrives after a pending
    /// commit's marker. An extension of SPEC §4's table.
    LateSend {
        txn: String,
        topic: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partition: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<String>,
        value: String,
    },
    SendOffsets {
        txn: String,
        group: String,
        offsets: Vec<OffsetSpec>,
    },
    /// A consumer's own commit of its offsets, outside any transaction
    /// (Kafka's OffsetCommit; the book's `OffsetStore.commit`): published
    /// at once, durably (E8). Served Kafka clients make it
    /// (docs/kafka-protocol.md); an extension of SPEC §4's table.
    CommitOffsets {
        group: String,
        offsets: Vec<OffsetSpec>,
    },
    /// Kafka's DeleteGroups of one group: a group without members goes,
    /// with all its committed offsets (durably, as a commit is written);
    /// one with members is refused (`GroupNotEmpty`), an unknown one too
    /// (`GroupIdNotFound`). Served Kafka clients make it
    /// (docs/kafka-protocol.md); an extension of SPEC §4's table, which
    /// the book's rules accept as they accept `commit_offsets`.
    DeleteGroup {
        group: String,
    },
    /// Kafka's OffsetDelete: `group`'s committed offsets of `partitions`
    /// go (durably, as a commit is written); a partition with none is
    /// skipped. Refused for a topic a member of the group subscribes to
    /// (`GroupSubscribedToTopic`) and for an unknown group
    /// (`GroupIdNotFound`). Served Kafka clients make it
    /// (docs/kafka-protocol.md); an extension of SPEC §4's table, accepted
    /// under the book's rules as `delete_group` is.
    DeleteOffsets {
        group: String,
        partitions: Vec<PartitionSpec>,
    },
    Commit {
        txn: String,
        /// "prepare", "marker:N", "markers" or "offsets".
        #[serde(default, skip_serializing_if = "Option::is_none", with = "spelled")]
        crash_after: Option<CutPoint>,
    },
    Abort {
        txn: String,
        #[serde(default, skip_serializing_if = "Option::is_none", with = "spelled")]
        crash_after: Option<CutPoint>,
    },
    Replicate {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        broker: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        topic: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partition: Option<u32>,
    },
    AdvanceClock {
        ms: u64,
    },
    Crash {},
    Tear {
        target: TearTargetSpec,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cut_bytes: Option<u64>,
        /// `true` for the default garbage, or the garbage text itself.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        append_garbage: Option<GarbageSpec>,
    },
    StopBroker {
        broker: u32,
    },
    StartBroker {
        broker: u32,
    },
    Promote {
        topic: String,
        partition: u32,
        broker: u32,
    },
    /// A consumer joins (or re-joins) a group with its subscriptions: the
    /// book's `Consumer.subscribe`, one eager rebalance (E15).
    JoinGroup {
        group: String,
        member: String,
        topics: Vec<String>,
    },
    /// A member leaves its group (the book's `Consumer.close`): a rebalance.
    LeaveGroup {
        group: String,
        member: String,
    },
    /// A member's heartbeat at a generation: extends its session, or is
    /// refused (`IllegalGeneration`, `UnknownMember`).
    Heartbeat {
        group: String,
        member: String,
        generation: i32,
    },
    /// Kafka's SyncGroup (classic protocol, `--rules kafka`): the leader's
    /// brings `assignment` (member -> partitions), or, when it gives none,
    /// Kafka's RangeAssignor's over the members' subscriptions; a
    /// follower's before the leader's waits for its assignment.
    SyncGroup {
        group: String,
        member: String,
        generation: i32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        assignment: Option<BTreeMap<String, Vec<PartitionSpec>>>,
    },
    /// A member's offset commit at a generation, fenced by the coordinator
    /// (`IllegalGeneration`, `UnknownMember`, `NotPartitionOwner`) and
    /// durable in `offsets.json` once it passes.
    CommitGroupOffsets {
        group: String,
        member: String,
        generation: i32,
        offsets: Vec<OffsetSpec>,
    },
    /// A member's poll: it refreshes its assignment from the coordinator,
    /// then reads up to `max` records (default 500, Kafka's
    /// `max.poll.records`) from its partitions, advancing its positions.
    Poll {
        group: String,
        member: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max: Option<u32>,
    },
    /// The book's `RetentionManager.apply` on a partition (every partition
    /// of the topic when none is given), on every running replica (E16).
    Retention {
        topic: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partition: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retention_ms: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retention_bytes: Option<u64>,
    },
    /// The book's `LogCompactor.compact` on a partition (every partition of
    /// the topic when none is given) (E16); `crash_at: "before_swap"`
    /// crashes at the book's swap boundary and recovers (E13).
    Compact {
        topic: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partition: Option<u32>,
        delete_retention_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none", with = "spelled")]
        crash_at: Option<CompactionCut>,
    },
    /// Kafka's DeleteRecords (E16): the leader's log start moves up to
    /// `offset` (-1: the HW), segment by segment, as retention moves it.
    DeleteRecords {
        topic: String,
        partition: u32,
        offset: i64,
    },
    /// Kafka's IncrementalAlterConfigs or AlterConfigs of a topic: `config`
    /// is the topic's whole new config (`cleanup_policy`, `retention_ms`,
    /// `retention_bytes`, `delete_retention_ms`, `min_insync_replicas`), which
    /// replaces the old one durably in metadata.json; a setting left out
    /// goes back to its default. `mk-tui serve`'s cleaner follows it from
    /// its next tick. Served Kafka clients make it (docs/kafka-protocol.md);
    /// an extension of SPEC §4's table, which the book's rules accept as
    /// they accept `delete_group`.
    AlterTopicConfig {
        topic: String,
        #[serde(default)]
        config: TopicConfig,
    },
    /// Kafka's CreatePartitions: `topic` grows to `count` partitions, the
    /// new ones placed as `create_topic` places partitions of those
    /// numbers, with the topic's replication factor. A count not above the
    /// topic's is refused (`InvalidPartitions`), an unknown topic too
    /// (`UnknownTopicOrPartition`). Served Kafka clients make it
    /// (`kafka-topics.sh --alter --partitions`, docs/kafka-protocol.md); an
    /// extension of SPEC §4's table, which the book's rules accept.
    CreatePartitions {
        topic: String,
        count: u32,
    },
    /// Kafka's DeleteTopics of one topic: it goes with its replicas' logs
    /// on every broker and every group's committed offsets of it
    /// (crash-safe: `engine::core::cluster::delete`). An unknown topic is
    /// refused (`UnknownTopicOrPartition`). A transaction still open on it
    /// ends without markers there and holds the name until it ends
    /// (`TopicInOpenTransaction`). Served Kafka clients make it
    /// (`kafka-topics.sh --delete`, docs/kafka-protocol.md); an extension
    /// of SPEC §4's table, which the book's rules accept.
    DeleteTopic {
        name: String,
    },
    /// The book's `Producer.send` through its accumulator (E17): the
    /// record waits in the named producer's batch for its partition until
    /// the batch holds `batch_size` estimated bytes (then it is sent at
    /// once) or its first record has waited `linger_ms` on the engine
    /// clock (then the `advance_clock` that gets there sends it). The
    /// settings, the book's `cluster.producer(...)` arguments, apply from
    /// this step on; they default to the producer's (the book's 16384, 0
    /// and 1048576 for a new one).
    Accumulate {
        producer: String,
        topic: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partition: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<String>,
        value: String,
        /// "0", "1" (default) or "all", for the batches it sends.
        #[serde(default, skip_serializing_if = "Option::is_none", with = "spelled")]
        acks: Option<AckMode>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        batch_size: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        linger_ms: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_buffer_bytes: Option<u64>,
    },
    /// The book's `Producer.flush`: every batch waiting in the producer's
    /// accumulator is sent now, linger or not.
    Flush {
        producer: String,
    },
    Note {},
    /// Typed in [`crate::session::ui_step`].
    Ui(crate::session::ui_step::UiStep),
}

/// The names of every action, in the spec's order (for error messages).
pub const ACTION_NAMES: [&str; 34] = [
    "create_topic",
    "produce",
    "begin",
    "send",
    "late_send",
    "send_offsets",
    "commit_offsets",
    "delete_group",
    "delete_offsets",
    "commit",
    "abort",
    "replicate",
    "advance_clock",
    "crash",
    "tear",
    "stop_broker",
    "start_broker",
    "promote",
    "join_group",
    "leave_group",
    "heartbeat",
    "sync_group",
    "commit_group_offsets",
    "poll",
    "retention",
    "compact",
    "delete_records",
    "alter_topic_config",
    "create_partitions",
    "delete_topic",
    "accumulate",
    "flush",
    "note",
    "ui",
];

/// One partition of a `sync_group` assignment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionSpec {
    pub topic: String,
    pub partition: u32,
}

/// A `sync_group`'s own rules: a generation a join gave (at least 1: the
/// first join makes generation 1), and an assignment that names members
/// and topics (not empty) and each partition once.
fn check_sync(
    generation: i32,
    assignment: Option<&BTreeMap<String, Vec<PartitionSpec>>>,
) -> Result<(), FieldError> {
    if generation < 1 {
        return Err(FieldError::new(
            "action.sync_group.generation",
            format!("{generation} is not a generation a join gives (1 or more)"),
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    for (member, partitions) in assignment.into_iter().flatten() {
        let field = format!("action.sync_group.assignment.{member}");
        if member.is_empty() {
            return Err(FieldError::new(
                "action.sync_group.assignment",
                "a member id is not empty",
            ));
        }
        for (i, p) in partitions.iter().enumerate() {
            if p.topic.is_empty() {
                return Err(FieldError::new(
                    format!("{field}[{i}].topic"),
                    "a topic name is not empty",
                ));
            }
            if !seen.insert((&p.topic, p.partition)) {
                return Err(FieldError::new(
                    format!("{field}[{i}]"),
                    format!(
                        "{}-{} is assigned twice: a partition has one owner",
                        p.topic, p.partition
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The identity a Kafka client's batch carries on the wire (E7): which
/// producer sent it, at which epoch, and the sequence number of its first
/// record. Recorded with the action, so a replay judges the same batch the
/// same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireIdentity {
    pub producer_id: i64,
    pub epoch: i16,
    pub base_sequence: i32,
}

/// One record of a batch `produce` or `send` (`records: [...]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RecordSpecJson", into = "RecordSpecJson")]
pub struct RecordSpec {
    /// Any bytes (`Payload`: text in a recording when UTF-8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<Payload>,
    /// The value (empty for a tombstone); any bytes, as the key.
    pub value: Payload,
    /// A tombstone: the record's value is null (the book's `Record` with
    /// `value=None`), what key compaction deletes the key with (E16).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tombstone: bool,
    /// The producer's timestamp (Kafka's CreateTime), kept as given;
    /// absent (or 0, the book's rule) the leader stamps its clock's time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_ms: Option<i64>,
    /// The record's headers, in order (a key may repeat, as in Kafka).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<HeaderSpec>,
}

/// [`RecordSpec`] as a recording spells it: `value`, or `tombstone: true`
/// and no value.
#[derive(Serialize, Deserialize)]
struct RecordSpecJson {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key: Option<Payload>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value: Option<Payload>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    tombstone: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timestamp_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    headers: Vec<HeaderSpec>,
}

impl TryFrom<RecordSpecJson> for RecordSpec {
    type Error = String;

    fn try_from(r: RecordSpecJson) -> Result<Self, String> {
        let value = match (r.value, r.tombstone) {
            (Some(v), false) => v,
            (None, true) => Payload::default(),
            (None, false) => return Err("missing field `value`".into()),
            (Some(_), true) => return Err("a tombstone has no value".into()),
        };
        Ok(Self {
            key: r.key,
            value,
            tombstone: r.tombstone,
            timestamp_ms: r.timestamp_ms,
            headers: r.headers,
        })
    }
}

impl From<RecordSpec> for RecordSpecJson {
    fn from(r: RecordSpec) -> Self {
        Self {
            key: r.key,
            value: (!r.tombstone).then_some(r.value),
            tombstone: r.tombstone,
            timestamp_ms: r.timestamp_ms,
            headers: r.headers,
        }
    }
}

/// One record header: a text key (Kafka's header keys are strings) and a
/// value of any bytes, or null.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeaderSpec {
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Payload>,
}

impl RecordSpec {
    pub fn new(key: Option<Payload>, value: impl Into<Payload>) -> Self {
        Self {
            key,
            value: value.into(),
            tombstone: false,
            timestamp_ms: None,
            headers: Vec::new(),
        }
    }

    /// Its key's, value's and headers' bytes, a header at least one (as
    /// on the wire): what a batch's cap counts (`limits::MAX_BATCH_BYTES`).
    pub fn bytes(&self) -> usize {
        let headers: usize = self
            .headers
            .iter()
            .map(|h| (h.key.len() + h.value.as_ref().map_or(0, Payload::len)).max(1))
            .sum();
        self.key.as_ref().map_or(0, Payload::len) + self.value.len() + headers
    }

    /// Whether it carries more than a text key and a text value, so that
    /// only the `records` form of an action holds it.
    pub fn has_extras(&self) -> bool {
        self.timestamp_ms.is_some()
            || !self.headers.is_empty()
            || self.tombstone
            || !self.value.is_text()
            || self.key.as_ref().is_some_and(|k| !k.is_text())
    }
}

/// The records of a `produce` or `send`: its one `key`/`value`, or its
/// `records` (the fields' rule is [`Action::check`]'s).
pub fn payload<'a>(
    key: &'a Option<String>,
    value: &'a Option<String>,
    records: &'a [RecordSpec],
) -> Vec<(Option<&'a [u8]>, &'a [u8])> {
    match value {
        Some(v) => vec![(key.as_deref().map(str::as_bytes), v.as_bytes())],
        None => records
            .iter()
            .map(|r| (r.key.as_ref().map(Payload::as_bytes), r.value.as_bytes()))
            .collect(),
    }
}

/// The records of a `produce` or `send` whole, with their timestamps and
/// headers: its one `key`/`value` as a record, or its `records`.
pub fn payload_records(
    key: &Option<String>,
    value: &Option<String>,
    records: &[RecordSpec],
) -> Vec<RecordSpec> {
    match value {
        Some(v) => vec![RecordSpec::new(
            key.as_deref().map(Payload::from),
            v.as_str(),
        )],
        None => records.to_vec(),
    }
}

/// One staged offset of `send_offsets`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetSpec {
    pub topic: String,
    pub partition: u32,
    pub offset: i64,
}

/// `tear`'s target: `"journal"` or `{topic, partition, broker}` on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "serde_json::Value", into = "TearTargetJson")]
pub enum TearTargetSpec {
    /// `transactions.journal`.
    Journal,
    /// The active segment of one replica's log.
    Log {
        topic: String,
        partition: u32,
        broker: u32,
    },
}

/// The JSON shapes of [`TearTargetSpec`].
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum TearTargetJson {
    Named(String),
    Log {
        topic: String,
        partition: u32,
        broker: u32,
    },
}

impl From<TearTargetSpec> for TearTargetJson {
    fn from(t: TearTargetSpec) -> Self {
        match t {
            TearTargetSpec::Journal => TearTargetJson::Named("journal".into()),
            TearTargetSpec::Log {
                topic,
                partition,
                broker,
            } => TearTargetJson::Log {
                topic,
                partition,
                broker,
            },
        }
    }
}

impl TryFrom<serde_json::Value> for TearTargetSpec {
    type Error = String;

    fn try_from(value: serde_json::Value) -> Result<Self, String> {
        const EXPECTED: &str = "expected \"journal\" or {topic, partition, broker}";
        match value {
            serde_json::Value::String(name) if name == "journal" => Ok(TearTargetSpec::Journal),
            serde_json::Value::String(other) => {
                Err(format!("unknown target {other:?}: {EXPECTED}"))
            }
            serde_json::Value::Object(_) => match serde_json::from_value(value) {
                Ok(TearTargetJson::Log {
                    topic,
                    partition,
                    broker,
                }) => Ok(TearTargetSpec::Log {
                    topic,
                    partition,
                    broker,
                }),
                _ => Err(format!(
                    "{EXPECTED}: an object needs a topic (text), a partition and a broker (numbers)"
                )),
            },
            other => Err(format!("{EXPECTED}, got {other}")),
        }
    }
}

/// A value with a recording spelling: `"all"`, `"marker:2"`.
trait Spelled: std::str::FromStr<Err = String> {
    fn spelling(&self) -> String;
}

impl Spelled for AckMode {
    fn spelling(&self) -> String {
        self.name().to_string()
    }
}

impl Spelled for CompactionCut {
    fn spelling(&self) -> String {
        self.name().to_string()
    }
}

impl Spelled for CutPoint {
    fn spelling(&self) -> String {
        self.name()
    }
}

/// Parses an optional spelled field from its JSON value: absent or null is
/// `None`; anything but a known spelling is an error saying what is known.
fn parse_spelled<T: Spelled>(value: Option<serde_json::Value>) -> Result<Option<T>, String> {
    match value {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(text)) => text.parse().map(Some),
        Some(other) => Err(format!("expected a string, got {other}")),
    }
}

/// Serde for `Option<T: Spelled>` fields as their spelling.
mod spelled {
    use super::*;

    pub fn serialize<T: Spelled, S: Serializer>(
        value: &Option<T>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(v) => serializer.serialize_str(&v.spelling()),
            None => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, T: Spelled, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<T>, D::Error> {
        let value = Option::<serde_json::Value>::deserialize(deserializer)?;
        parse_spelled(value).map_err(D::Error::custom)
    }
}

/// A field of an action that is missing, malformed or past a limit: shown
/// as `field action.produce.acks: unknown acks "2": …`, after the file and
/// line (SPEC §5 "Errors").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The path of the field: `action`, `action.tear.target`,
    /// `cluster.topics[0].partitions`.
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "field {}: {}", self.field, self.message)
    }
}

impl std::error::Error for FieldError {}

/// Checks one typed field of a raw action body, so that a bad value is
/// reported with its own path rather than as the whole action's.
type FieldCheck = fn(serde_json::Value) -> Result<(), String>;

/// The typed fields of each action, checked field by field before the
/// whole action is deserialised (with the same parsers).
fn typed_fields(action: &str) -> &'static [(&'static str, FieldCheck)] {
    match action {
        "produce" => &[("acks", |v| parse_spelled::<AckMode>(Some(v)).map(drop))],
        "accumulate" => &[
            ("acks", |v| parse_spelled::<AckMode>(Some(v)).map(drop)),
            ("batch_size", |v| typed::<u64>(v)),
            ("linger_ms", |v| typed::<u64>(v)),
            ("max_buffer_bytes", |v| typed::<u64>(v)),
        ],
        "commit" | "abort" => &[("crash_after", |v| {
            parse_spelled::<CutPoint>(Some(v)).map(drop)
        })],
        "tear" => &[("target", |v| TearTargetSpec::try_from(v).map(drop))],
        "compact" => &[("crash_at", |v| {
            parse_spelled::<CompactionCut>(Some(v)).map(drop)
        })],
        "ui" => &[
            ("focus", |v| typed::<crate::session::ui_step::PaneName>(v)),
            ("select", |v| typed::<crate::session::ui_step::Selection>(v)),
            ("toggle", |v| typed::<crate::session::ui_step::Toggle>(v)),
        ],
        _ => &[],
    }
}

/// A field read with its type's own deserialiser, for [`typed_fields`].
fn typed<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> Result<(), String> {
    serde_json::from_value::<T>(v)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// `append_garbage`: `true` (a default garbage tail) or the bytes as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum GarbageSpec {
    Default(bool),
    Text(String),
}

impl Action {
    /// The partition the action names by topic and number, if it names
    /// one: what the dashboard follows after a step that changed nothing
    /// (a refused produce, a replicate with nothing to fetch).
    pub fn partition_named(&self) -> Option<(&str, u32)> {
        match self {
            Action::Produce {
                topic,
                partition: Some(p),
                ..
            }
            | Action::Send {
                topic,
                partition: Some(p),
                ..
            }
            | Action::Replicate {
                topic: Some(topic),
                partition: Some(p),
                ..
            }
            | Action::Retention {
                topic,
                partition: Some(p),
                ..
            }
            | Action::Compact {
                topic,
                partition: Some(p),
                ..
            }
            | Action::Promote {
                topic,
                partition: p,
                ..
            }
            | Action::DeleteRecords {
                topic,
                partition: p,
                ..
            } => Some((topic, *p)),
            _ => None,
        }
    }

    /// The action's name, as in recordings.
    pub fn name(&self) -> &'static str {
        match self {
            Action::CreateTopic { .. } => "create_topic",
            Action::Produce { .. } => "produce",
            Action::Begin { .. } => "begin",
            Action::Send { .. } => "send",
            Action::LateSend { .. } => "late_send",
            Action::SendOffsets { .. } => "send_offsets",
            Action::CommitOffsets { .. } => "commit_offsets",
            Action::DeleteGroup { .. } => "delete_group",
            Action::DeleteOffsets { .. } => "delete_offsets",
            Action::Commit { .. } => "commit",
            Action::Abort { .. } => "abort",
            Action::Replicate { .. } => "replicate",
            Action::AdvanceClock { .. } => "advance_clock",
            Action::Crash {} => "crash",
            Action::Tear { .. } => "tear",
            Action::StopBroker { .. } => "stop_broker",
            Action::StartBroker { .. } => "start_broker",
            Action::Promote { .. } => "promote",
            Action::JoinGroup { .. } => "join_group",
            Action::LeaveGroup { .. } => "leave_group",
            Action::Heartbeat { .. } => "heartbeat",
            Action::SyncGroup { .. } => "sync_group",
            Action::CommitGroupOffsets { .. } => "commit_group_offsets",
            Action::Poll { .. } => "poll",
            Action::Retention { .. } => "retention",
            Action::Compact { .. } => "compact",
            Action::DeleteRecords { .. } => "delete_records",
            Action::AlterTopicConfig { .. } => "alter_topic_config",
            Action::CreatePartitions { .. } => "create_partitions",
            Action::DeleteTopic { .. } => "delete_topic",
            Action::Accumulate { .. } => "accumulate",
            Action::Flush { .. } => "flush",
            Action::Note {} => "note",
            Action::Ui { .. } => "ui",
        }
    }

    /// The transaction an action works on, if any: such actions run in
    /// order per transaction (SPEC §4).
    pub fn txn(&self) -> Option<&str> {
        match self {
            Action::Begin { txn, .. }
            | Action::Send { txn, .. }
            | Action::LateSend { txn, .. }
            | Action::SendOffsets { txn, .. }
            | Action::Commit { txn, .. }
            | Action::Abort { txn, .. } => Some(txn),
            _ => None,
        }
    }

    /// Parses one action from JSON. A bare string names an action without
    /// fields (`"crash"`). Errors name the field (`action.produce.acks`), or
    /// `action` and list the valid actions. The action is also
    /// [checked](Self::check).
    pub fn from_json(value: &serde_json::Value) -> Result<Self, FieldError> {
        let whole = |message: String| FieldError::new("action", message);
        let normalised = match value {
            serde_json::Value::String(name) => serde_json::json!({ name.clone(): {} }),
            other => other.clone(),
        };
        let name = match &normalised {
            serde_json::Value::Object(map) if map.len() == 1 => {
                map.keys().next().cloned().unwrap_or_default()
            }
            _ => {
                return Err(whole(
                    "an action is an object with exactly one key, the action's name".to_string(),
                ));
            }
        };
        if !ACTION_NAMES.contains(&name.as_str()) {
            return Err(whole(format!(
                "unknown action {name:?}; valid actions: {}",
                ACTION_NAMES.join(", ")
            )));
        }
        let mut normalised = normalised;
        if normalised[&name].is_null() {
            normalised[&name] = serde_json::json!({});
        }
        for (field, check) in typed_fields(&name) {
            if let Some(v) = normalised[&name].get(field) {
                check(v.clone())
                    .map_err(|e| FieldError::new(format!("action.{name}.{field}"), e))?;
            }
        }
        let action: Action = serde_json::from_value(normalised)
            .map_err(|e| whole(format!("action {name:?}: {e}")))?;
        action.check()?;
        Ok(action)
    }

    /// The rules between an action's fields that serde cannot state: a tear
    /// gives exactly one of `cut_bytes` or `append_garbage` (and
    /// `append_garbage: false` tears nothing); `replicate` gives `topic` and
    /// `partition` together. The driver checks the same before applying.
    pub fn check(&self) -> Result<(), FieldError> {
        match self {
            Action::CreateTopic { config, .. } => {
                crate::session::cleanup::check_topic_config("create_topic", config)
            }
            Action::Tear {
                cut_bytes,
                append_garbage,
                ..
            } => match (cut_bytes, append_garbage) {
                (Some(_), None) | (None, Some(GarbageSpec::Text(_))) => Ok(()),
                (None, Some(GarbageSpec::Default(true))) => Ok(()),
                (None, Some(GarbageSpec::Default(false))) => Err(FieldError::new(
                    "action.tear.append_garbage",
                    "false appends nothing: give true (a default garbage tail) or the garbage text",
                )),
                _ => Err(FieldError::new(
                    "action.tear",
                    "give exactly one of cut_bytes or append_garbage",
                )),
            },
            Action::Produce {
                producer: Some(_),
                wire: Some(_),
                ..
            } => Err(FieldError::new(
                "action.produce.wire",
                "give producer (a named producer of the engine) or wire (a client's identity), not both",
            )),
            Action::Produce {
                key,
                value,
                records,
                wire,
                ..
            }
            | Action::Send {
                key,
                value,
                records,
                wire,
                ..
            } => {
                let field = format!("action.{}", self.name());
                if let Some(w) = wire
                    && (w.producer_id < 0 || w.epoch < 0 || w.base_sequence < 0)
                {
                    return Err(FieldError::new(
                        format!("{field}.wire"),
                        "producer_id, epoch and base_sequence are at least 0",
                    ));
                }
                match (value, records.is_empty()) {
                    (Some(_), true) => Ok(()),
                    (None, false) if key.is_none() => Ok(()),
                    (None, false) => Err(FieldError::new(
                        format!("{field}.key"),
                        "with records, each record has its own key",
                    )),
                    (Some(_), false) => Err(FieldError::new(
                        field,
                        "give value (one record) or records (a batch), not both",
                    )),
                    (None, true) => Err(FieldError::new(
                        field,
                        "give value (one record) or records (a non-empty batch)",
                    )),
                }
            }
            Action::Retention {
                retention_ms,
                retention_bytes,
                ..
            } => crate::session::cleanup::check_retention(*retention_ms, *retention_bytes),
            Action::Accumulate {
                producer,
                batch_size,
                max_buffer_bytes,
                ..
            } => {
                if producer.is_empty() {
                    return Err(FieldError::new(
                        "action.accumulate.producer",
                        "a producer name is not empty",
                    ));
                }
                // The book's `BatchAccumulator` `ValueError`s.
                if *batch_size == Some(0) {
                    return Err(FieldError::new(
                        "action.accumulate.batch_size",
                        "batch_size must be positive",
                    ));
                }
                if *max_buffer_bytes == Some(0) {
                    return Err(FieldError::new(
                        "action.accumulate.max_buffer_bytes",
                        "max_buffer_bytes must be positive",
                    ));
                }
                Ok(())
            }
            Action::Flush { producer } if producer.is_empty() => Err(FieldError::new(
                "action.flush.producer",
                "a producer name is not empty",
            )),
            Action::CreatePartitions { topic, .. } if topic.is_empty() => Err(FieldError::new(
                "action.create_partitions.topic",
                "a topic name is not empty",
            )),
            Action::CreatePartitions { count: 0, .. } => Err(FieldError::new(
                "action.create_partitions.count",
                "the partition count the topic grows to, at least 2",
            )),
            Action::DeleteTopic { name } if name.is_empty() => Err(FieldError::new(
                "action.delete_topic.name",
                "a topic name is not empty",
            )),
            Action::DeleteGroup { group } if group.is_empty() => Err(FieldError::new(
                "action.delete_group.group",
                "a group id is not empty",
            )),
            Action::AlterTopicConfig { topic, config } => {
                if topic.is_empty() {
                    return Err(FieldError::new(
                        "action.alter_topic_config.topic",
                        "a topic name is not empty",
                    ));
                }
                crate::session::cleanup::check_topic_config("alter_topic_config", config)
            }
            Action::DeleteOffsets { group, .. } if group.is_empty() => Err(FieldError::new(
                "action.delete_offsets.group",
                "a group id is not empty",
            )),
            Action::DeleteOffsets { partitions, .. } if partitions.is_empty() => Err(
                FieldError::new("action.delete_offsets.partitions", "at least one partition"),
            ),
            Action::DeleteRecords { offset, .. } if *offset < -1 => Err(FieldError::new(
                "action.delete_records.offset",
                "an offset, or -1 for the high watermark",
            )),
            Action::Replicate {
                topic, partition, ..
            } if topic.is_some() != partition.is_some() => Err(FieldError::new(
                "action.replicate",
                "give topic and partition together",
            )),
            Action::JoinGroup { group, member, .. }
            | Action::LeaveGroup { group, member }
            | Action::Heartbeat { group, member, .. }
            | Action::SyncGroup { group, member, .. }
            | Action::CommitGroupOffsets { group, member, .. }
            | Action::Poll { group, member, .. } => {
                let name = self.name();
                if group.is_empty() {
                    return Err(FieldError::new(
                        format!("action.{name}.group"),
                        "a group id is not empty",
                    ));
                }
                if member.is_empty() {
                    return Err(FieldError::new(
                        format!("action.{name}.member"),
                        "a member id is not empty",
                    ));
                }
                match self {
                    Action::SyncGroup {
                        generation,
                        assignment,
                        ..
                    } => check_sync(*generation, assignment.as_ref()),
                    _ => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn externally_tagged_snake_case_with_defaults() {
        let a = Action::from_json(
            &serde_json::json!({"send":{"txn":"tx-1","topic":"out","value":"pending","extra":1}}),
        )
        .unwrap();
        assert_eq!(
            a,
            Action::Send {
                txn: "tx-1".into(),
                topic: "out".into(),
                partition: None,
                key: None,
                value: Some("pending".into()),
                records: vec![],
                wire: None,
            }
        );
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"send":{"txn":"tx-1","topic":"out","value":"pending"}}"#
        );
        assert_eq!(
            Action::from_json(&serde_json::json!("crash")).unwrap(),
            Action::Crash {}
        );
        assert_eq!(
            Action::from_json(&serde_json::json!({"crash":null})).unwrap(),
            Action::Crash {}
        );
        assert_eq!(
            serde_json::to_string(&Action::Crash {}).unwrap(),
            r#"{"crash":{}}"#
        );
    }

    #[test]
    fn every_action_round_trips_and_has_its_name() {
        let all = [
            r#"{"create_topic":{"name":"t","partitions":2,"replication_factor":1}}"#,
            r#"{"produce":{"topic":"t","partition":1,"key":"k","value":"v","acks":"all","producer":"p"}}"#,
            r#"{"begin":{"txn":"x"}}"#,
            r#"{"send":{"txn":"x","topic":"t","partition":0,"key":"k","value":"v"}}"#,
            r#"{"late_send":{"txn":"x","topic":"t","partition":0,"value":"late"}}"#,
            r#"{"send_offsets":{"txn":"x","group":"g","offsets":[{"topic":"in","partition":0,"offset":7}]}}"#,
            r#"{"commit_offsets":{"group":"g","offsets":[{"topic":"in","partition":0,"offset":7}]}}"#,
            r#"{"delete_group":{"group":"g"}}"#,
            r#"{"alter_topic_config":{"topic":"t","config":{"cleanup_policy":"compact","retention_bytes":4096}}}"#,
            r#"{"alter_topic_config":{"topic":"t","config":{}}}"#,
            r#"{"delete_offsets":{"group":"g","partitions":[{"topic":"in","partition":0}]}}"#,
            r#"{"commit":{"txn":"x","crash_after":"marker:1"}}"#,
            r#"{"abort":{"txn":"x"}}"#,
            r#"{"replicate":{"broker":2,"topic":"t","partition":0}}"#,
            r#"{"advance_clock":{"ms":100}}"#,
            r#"{"crash":{}}"#,
            r#"{"tear":{"target":"journal","cut_bytes":5}}"#,
            r#"{"tear":{"target":{"topic":"t","partition":0,"broker":1},"append_garbage":true}}"#,
            r#"{"stop_broker":{"broker":2}}"#,
            r#"{"start_broker":{"broker":2}}"#,
            r#"{"promote":{"topic":"t","partition":0,"broker":2}}"#,
            r#"{"join_group":{"group":"g","member":"m","topics":["t"]}}"#,
            r#"{"leave_group":{"group":"g","member":"m"}}"#,
            r#"{"heartbeat":{"group":"g","member":"m","generation":1}}"#,
            r#"{"sync_group":{"group":"g","member":"m","generation":1,"assignment":{"m":[{"topic":"t","partition":0}]}}}"#,
            r#"{"commit_group_offsets":{"group":"g","member":"m","generation":1,"offsets":[{"topic":"t","partition":0,"offset":2}]}}"#,
            r#"{"poll":{"group":"g","member":"m","max":5}}"#,
            r#"{"retention":{"topic":"t","partition":0,"retention_ms":100,"retention_bytes":4096}}"#,
            r#"{"compact":{"topic":"t","delete_retention_ms":0,"crash_at":"before_swap"}}"#,
            r#"{"delete_records":{"topic":"t","partition":0,"offset":-1}}"#,
            r#"{"create_partitions":{"topic":"t","count":4}}"#,
            r#"{"delete_topic":{"name":"t"}}"#,
            r#"{"accumulate":{"producer":"p","topic":"t","partition":0,"key":"k","value":"v","acks":"all","batch_size":68,"linger_ms":10,"max_buffer_bytes":4096}}"#,
            r#"{"flush":{"producer":"p"}}"#,
            r#"{"note":{}}"#,
            r#"{"ui":{"focus":"journal"}}"#,
        ];
        let mut names = std::collections::BTreeSet::new();
        for text in all {
            let a = Action::from_json(&serde_json::from_str(text).unwrap()).unwrap();
            assert_eq!(serde_json::to_string(&a).unwrap(), text);
            assert!(text.contains(a.name()));
            names.insert(a.name());
        }
        assert_eq!(names.len(), ACTION_NAMES.len(), "every action kind covered");
    }

    #[test]
    fn errors_name_the_action_or_list_the_valid_ones() {
        let err = Action::from_json(&serde_json::json!({"explode":{}})).unwrap_err();
        assert_eq!(err.field, "action");
        assert!(
            err.message.contains("unknown action \"explode\"")
                && err.message.contains("create_topic, produce"),
            "{err}"
        );
        let err = Action::from_json(&serde_json::json!({"begin":{}})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "field action: action \"begin\": missing field `txn`"
        );
        assert!(Action::from_json(&serde_json::json!({"a":{},"b":{}})).is_err());
    }

    /// The typed fields are parsed when the action is read; a bad value is
    /// refused with the field's path, and a good one keeps its spelling.
    #[test]
    fn typed_fields_are_parsed_on_reading_and_name_their_field() {
        let bad = |json: serde_json::Value| Action::from_json(&json).unwrap_err().to_string();
        assert_eq!(
            bad(serde_json::json!({"produce":{"topic":"t","value":"v","acks":"2"}})),
            "field action.produce.acks: unknown acks \"2\": expected \"0\", \"1\" or \"all\""
        );
        assert_eq!(
            bad(serde_json::json!({"produce":{"topic":"t","value":"v","acks":1}})),
            "field action.produce.acks: expected a string, got 1"
        );
        assert!(
            bad(serde_json::json!({"commit":{"txn":"x","crash_after":"whenever"}}))
                .starts_with("field action.commit.crash_after: unknown cut point \"whenever\"")
        );
        assert!(
            bad(serde_json::json!({"abort":{"txn":"x","crash_after":"marker:x"}}))
                .starts_with("field action.abort.crash_after: unknown cut point")
        );
        assert_eq!(
            bad(serde_json::json!({"tear":{"target":"jornal","cut_bytes":1}})),
            "field action.tear.target: unknown target \"jornal\": expected \"journal\" or {topic, partition, broker}"
        );
        assert!(
            bad(serde_json::json!({"tear":{"target":{"topic":"t"},"cut_bytes":1}})).starts_with(
                "field action.tear.target: expected \"journal\" or {topic, partition, broker}: "
            )
        );
        assert!(
            bad(serde_json::json!({"tear":{"target":7,"cut_bytes":1}}))
                .starts_with("field action.tear.target: ")
        );
        let a = Action::from_json(
            &serde_json::json!({"produce":{"topic":"t","value":"v","acks":"-1"}}),
        )
        .unwrap();
        assert!(matches!(
            a,
            Action::Produce {
                acks: Some(AckMode::All),
                ..
            }
        ));
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"produce":{"topic":"t","value":"v","acks":"all"}}"#,
            "\"-1\" is read as all and written as \"all\""
        );
        let a = Action::from_json(&serde_json::json!({"commit":{"txn":"x","crash_after":null}}))
            .unwrap();
        assert_eq!(
            a,
            Action::Commit {
                txn: "x".into(),
                crash_after: None
            }
        );
        let a =
            Action::from_json(&serde_json::json!({"abort":{"txn":"x","crash_after":"offsets"}}))
                .unwrap();
        assert!(matches!(
            a,
            Action::Abort {
                crash_after: Some(CutPoint::Offsets),
                ..
            }
        ));
        // The same types come through serde directly (a `Step`).
        let step: serde_json::Result<Action> =
            serde_json::from_str(r#"{"tear":{"target":"jornal","cut_bytes":1}}"#);
        assert!(step.is_err());
    }

    #[test]
    fn fields_that_do_not_go_together_are_refused() {
        let bad = |json: serde_json::Value| Action::from_json(&json).unwrap_err().to_string();
        assert_eq!(
            bad(serde_json::json!({"tear":{"target":"journal"}})),
            "field action.tear: give exactly one of cut_bytes or append_garbage"
        );
        assert_eq!(
            bad(
                serde_json::json!({"tear":{"target":"journal","cut_bytes":1,"append_garbage":true}})
            ),
            "field action.tear: give exactly one of cut_bytes or append_garbage"
        );
        assert!(
            bad(serde_json::json!({"tear":{"target":"journal","append_garbage":false}}))
                .starts_with("field action.tear.append_garbage: false appends nothing")
        );
        assert_eq!(
            bad(serde_json::json!({"replicate":{"topic":"out"}})),
            "field action.replicate: give topic and partition together"
        );
        assert!(Action::from_json(&serde_json::json!({"replicate":{"broker":2}})).is_ok());
    }

    /// `produce` and `send` carry one record (`key`/`value`) or a batch
    /// (`records`), never both and never neither.
    #[test]
    fn one_record_or_a_batch() {
        let text = r#"{"produce":{"topic":"t","partition":0,"records":[{"key":"k","value":"a"},{"value":"b"}],"acks":"all"}}"#;
        let a = Action::from_json(&serde_json::from_str(text).unwrap()).unwrap();
        assert_eq!(serde_json::to_string(&a).unwrap(), text);
        let Action::Produce {
            key,
            value,
            records,
            ..
        } = &a
        else {
            panic!("{a:?}")
        };
        assert_eq!(
            payload(key, value, records),
            vec![(Some(&b"k"[..]), &b"a"[..]), (None, &b"b"[..])]
        );
        let send = r#"{"send":{"txn":"x","topic":"t","records":[{"value":"a"}]}}"#;
        let a = Action::from_json(&serde_json::from_str(send).unwrap()).unwrap();
        assert_eq!(serde_json::to_string(&a).unwrap(), send);
        let bad = |json: serde_json::Value| Action::from_json(&json).unwrap_err().to_string();
        assert_eq!(
            bad(serde_json::json!({"send":{"txn":"x","topic":"t"}})),
            "field action.send: give value (one record) or records (a non-empty batch)"
        );
        assert_eq!(
            bad(serde_json::json!({"produce":{"topic":"t","records":[]}})),
            "field action.produce: give value (one record) or records (a non-empty batch)"
        );
        assert_eq!(
            bad(serde_json::json!({"produce":{"topic":"t","value":"v","records":[{"value":"w"}]}})),
            "field action.produce: give value (one record) or records (a batch), not both"
        );
        assert_eq!(
            bad(serde_json::json!({"produce":{"topic":"t","key":"k","records":[{"value":"w"}]}})),
            "field action.produce.key: with records, each record has its own key"
        );
        assert!(
            bad(serde_json::json!({"produce":{"topic":"t","records":[{"key":"k"}]}}))
                .contains("missing field `value`")
        );
    }
}
