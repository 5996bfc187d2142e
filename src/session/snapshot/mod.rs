//! `Snapshot`: the one read-only picture of the cluster and the session that
//! every screen is made from. `mk-tui state` prints its serde form (SPEC §5
//! keys, and more), the text state is a renderer of it ([`text`]), and every
//! pane draws from it (SPEC §2: panes are pure renderers of a snapshot). It is
//! made of plain data types of its own, with no engine type in it, so the ui
//! layer never names the engine and a saved state (`render --state FILE.json`)
//! or, later, an observer of a real Kafka cluster can fill it as well as the
//! embedded cluster does.
//!
//! One builder ([`build`]) fills it, reading the engine without changing it:
//! no ISR or timeout re-evaluation on read; time moves only through the
//! clock's actions. One function ([`fate`]) decides each batch's fate.

pub mod build;
pub mod diff;
pub mod fate;
pub mod groups;
pub mod heads;
pub mod source;
pub mod text;
mod unavailable_null;
pub mod values;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use build::{Bounds, build};
pub use diff::{Changes, PartitionChanges, diff};
pub use fate::Fate;
pub use groups::GroupSnapshot;
pub use source::{SavedState, SnapshotSource};
pub use values::Values;

use crate::session::recording::Caption;

/// The names [`Snapshot::unavailable`] gives the fields a source could not
/// see (docs/observe.md): one spelling for the observer that lists them
/// and the panes that then say `?` or "not visible".
pub mod field {
    pub const CLOCK_MS: &str = "clock_ms";
    /// An observation before its first refresh answered: the cluster's
    /// partitions are not known yet (not "none").
    pub const PARTITIONS: &str = "partitions";
    pub const TRANSACTIONS: &str = "transactions";
    pub const COMMITTED_OFFSETS: &str = "committed_offsets";
    pub const JOURNAL: &str = "journal";
    pub const LAST_RECOVERY: &str = "last_recovery";
    pub const PENDING: &str = "pending";
    pub const ERRORS: &str = "errors";
    pub const LOG_END_OFFSET: &str = "partitions[].log_end_offset";
    pub const BATCH_COUNT: &str = "partitions[].batch_count";
    pub const LEADER_EPOCH: &str = "partitions[].leader_epoch";
    pub const REPLICA_LOG_END_OFFSET: &str = "partitions[].replicas[].log_end_offset";
    pub const REPLICA_LAG: &str = "partitions[].replicas[].lag";
    pub const REPLICA_MS_SINCE_FETCH: &str = "partitions[].replicas[].ms_since_fetch";
    pub const REPLICA_LOG: &str = "partitions[].replicas[].log";
    pub const REPLICA_OFFSET_LAG: &str = "partitions[].replicas[].offset_lag";
    pub const REPLICA_LOG_SIZE: &str = "partitions[].replicas[].log_size_bytes";
    pub const BATCH_TRANSACTIONAL_ID: &str = "partitions[].batches[].transactional_id";
    pub const BATCH_EXPLANATION_ZH: &str = "partitions[].batches[].explanation_zh";
    pub const TXN_PARTITIONS: &str = "transactions[].partitions";
    pub const TXN_FIRST_OFFSETS: &str = "transactions[].first_offsets";
    pub const TXN_STAGED_OFFSETS: &str = "transactions[].staged_offsets";
    /// A topic's settings, read with DescribeConfigs.
    pub const TOPIC_CONFIG: &str = "partitions[].config";

    /// A partition where `group` has a transactional offset commit
    /// pending (OffsetFetch's UNSTABLE_OFFSET_COMMIT): its committed offset
    /// is the one before, and the staged one is not visible.
    pub fn pending_commit(group: &str, tp: &str) -> String {
        format!("{COMMITTED_OFFSETS}[{group}][{tp}] pending")
    }

    /// The (group, partition) of every [`pending_commit`] in `unavailable`.
    pub fn pending_commits(unavailable: &[String]) -> Vec<(&str, &str)> {
        unavailable
            .iter()
            .filter_map(|f| {
                let rest = f
                    .strip_prefix(COMMITTED_OFFSETS)?
                    .strip_suffix(" pending")?;
                let (group, tp) = rest
                    .strip_prefix('[')?
                    .strip_suffix(']')?
                    .split_once("][")?;
                Some((group, tp))
            })
            .collect()
    }

    /// A per-item name of a `[]` field: `at(TXN_PARTITIONS, "tx-1")` is
    /// `transactions[tx-1].partitions`, for a field one item lacks.
    pub fn at(field: &str, key: &str) -> String {
        field.replacen("[]", &format!("[{key}]"), 1)
    }
}

/// Offsets keyed by group, then by `<topic>-<partition>`.
pub type GroupOffsets = BTreeMap<String, BTreeMap<String, i64>>;

/// A field an observed cluster cannot fill is written `null` by `observe
/// --state` (src/observe/state_json.rs); read back (`render --state`), it
/// is the snapshot's default, which the panes draw as unknown since
/// `unavailable` names it.
fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// Everything the screens show after a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    pub step: usize,
    #[serde(deserialize_with = "null_as_default")]
    pub clock_ms: u64,
    pub rules: String,
    /// Every configured broker, in id order, whether it holds a replica or
    /// not.
    #[serde(default)]
    pub brokers: Vec<BrokerSnapshot>,
    pub partitions: Vec<PartitionSnapshot>,
    /// The latest instance of each transaction id, in id order.
    pub transactions: Vec<TransactionSnapshot>,
    pub committed_offsets: GroupOffsets,
    /// The consumer groups (E15), in group id order; absent from the JSON
    /// when there are none, so states saved before groups read the same.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupSnapshot>,
    #[serde(deserialize_with = "null_as_default")]
    pub journal: JournalSnapshot,
    pub last_recovery: Option<RecoverySnapshot>,
    pub consumers: Consumers,
    #[serde(deserialize_with = "null_as_default")]
    pub pending: Vec<PendingSnapshot>,
    /// The named producers with records waiting in their accumulators
    /// (E17), in name order; absent from the JSON when none waits, so
    /// states saved before read the same.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accumulators: Vec<AccumulatorSnapshot>,
    #[serde(deserialize_with = "null_as_default")]
    pub errors: Vec<ErrorSnapshot>,
    /// The last events, oldest first.
    #[serde(default)]
    pub events: Vec<EventSnapshot>,
    /// The recording's title (empty for a live session until the app names it).
    #[serde(default)]
    pub title: String,
    /// Steps in the recording being replayed (None when live).
    #[serde(default)]
    pub total_steps: Option<usize>,
    /// The current step's caption.
    #[serde(default)]
    pub caption: Option<Caption>,
    /// The recording's steps that have a caption (the replay's timeline
    /// marks them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub captioned_steps: Vec<usize>,
    /// The panes the lesson shows in presentation mode at this step: its
    /// last `present` hint up to here (empty: the dashboard picks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub present: Vec<String>,
    /// What the step changed, from the snapshot before it (empty at step 0
    /// or when the source does not know the step before).
    #[serde(default)]
    pub changes: Changes,
    /// For a step that crashed the cluster (`crash`, `tear`, a commit or
    /// abort with `crash_after`): what was on disk at the instant of the
    /// crash, before recovery ran (issue 13, item 3). The rest of the
    /// snapshot stays the state after recovery (SPEC §5). Absent for every
    /// other step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moment_of_death: Option<Box<Moment>>,
    /// True for the view of the moment of death itself
    /// ([`Snapshot::at_moment`]): the panes then draw the state before
    /// recovery, and the title says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub before_recovery: bool,
    /// The Kafka listeners of a live session with `--listen` (issue 14),
    /// one per broker; empty everywhere else (a replay has no clients).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listeners: Vec<ListenerSnapshot>,
    /// The client connections of those listeners, in the order they were
    /// accepted (the `clients` pane). Filled by the session from the
    /// server's connection registry, never from the engine: it is the
    /// room's view, not part of what a recording replays.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<ClientSnapshot>,
    /// The listeners' last request log lines, oldest first (one line per
    /// request, as `mk-tui serve` prints them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_log: Vec<String>,
    /// The listeners' fault armed now, by name (`drop-produce-response`
    /// after the dashboard's `D`, until the response it takes is dropped);
    /// the clients pane's title says so. None everywhere else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault_armed: Option<String>,
    /// The fields this snapshot could not fill, by name
    /// (`partitions[].log_end_offset`, `journal`, …): an observer of a real
    /// cluster (`mk-tui observe`, docs/observe.md) leaves them empty or at
    /// their default and lists them here, so nothing it shows is faked
    /// ([`Self::to_json`] writes the fields named by path as null).
    /// Empty, and absent from the JSON, for the embedded cluster.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unavailable: Vec<String>,
}

/// One broker's Kafka listener (`mk-tui --listen`): where it listens, and
/// whether it is open (a stopped broker's listener is closed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListenerSnapshot {
    pub broker: u32,
    /// `HOST:PORT`.
    pub address: String,
    pub open: bool,
}

/// One client connection to a Kafka listener, as the `clients` pane shows
/// it (docs/kafka-protocol.md "The clients pane").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientSnapshot {
    /// The connection's number, in accept order from 1.
    pub connection: u64,
    /// The broker whose listener took it.
    pub broker: u32,
    /// The client's address, `HOST:PORT`.
    pub peer: String,
    /// The `client.id` of its last request (empty before the first).
    pub client_id: String,
    /// Requests answered on it so far.
    pub requests: u64,
    /// The request being handled now, if any, as the pane says it:
    /// `Produce v9`, or `Produce v9 acks=all waiting` while its append
    /// waits for the followers.
    #[serde(default)]
    pub in_flight: Option<String>,
    /// The producer id, epoch and transactional id the connection was
    /// given by InitProducerId (none before, or for a plain producer).
    #[serde(default)]
    pub producer_id: Option<i64>,
    #[serde(default)]
    pub producer_epoch: Option<i16>,
    #[serde(default)]
    pub transactional_id: Option<String>,
    /// The consumer group the connection is a member of (serve's classic
    /// group protocol), none for a connection that never joined one.
    #[serde(default)]
    pub group: Option<ClientGroup>,
}

/// A connection's membership of a consumer group, as the clients pane
/// shows it: the server's, not the engine's (docs/kafka-mapping.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientGroup {
    pub group: String,
    pub member_id: String,
    /// The group's generation (the member's once it synced).
    pub generation: i32,
    /// The group's state, as Kafka names it (`Stable`,
    /// `PreparingRebalance`, ...).
    pub state: String,
    /// The partitions the leader assigned it, `topic-partition`, in the
    /// order the assignment lists them (empty until its SyncGroup).
    pub assignment: Vec<String>,
}

/// What was on disk at the instant a step crashed the cluster, before
/// anything was dropped or reopened (docs/dashboard.md "Crashes as
/// moments"): the partitions' logs and markers, the journal's frames, the
/// committed offsets (so whether staged offsets were published), and for a
/// tear the torn bytes. The in-memory state equals the disk here: every
/// append, frame and offset commit is written through before it returns.
/// Pending operations are not part of it: the crash drops them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Moment {
    pub clock_ms: u64,
    pub brokers: Vec<BrokerSnapshot>,
    pub partitions: Vec<PartitionSnapshot>,
    pub transactions: Vec<TransactionSnapshot>,
    pub committed_offsets: GroupOffsets,
    pub journal: JournalSnapshot,
    pub consumers: Consumers,
    /// What a tear did to its file before recovery ran (None for a crash).
    #[serde(default)]
    pub torn: Option<TornSnapshot>,
}

/// The bytes a tear cut from or appended to a file's tail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TornSnapshot {
    /// The file, relative to the data directory (`transactions.journal`,
    /// `broker-1/out-0/00000000000000000000.log`).
    pub file: String,
    pub size_before: u64,
    pub size_after: u64,
}

impl TornSnapshot {
    /// Bytes cut off the tail (0 for garbage appended).
    pub fn cut_bytes(&self) -> u64 {
        self.size_before.saturating_sub(self.size_after)
    }

    /// Bytes appended to the tail (0 for a cut).
    pub fn appended_bytes(&self) -> u64 {
        self.size_after.saturating_sub(self.size_before)
    }

    /// In short, the bytes first so a narrow pane keeps them:
    /// "−30 B transactions.journal (641→611 B)", "+16 B … (…)" for garbage.
    pub fn describe(&self) -> String {
        let change = if self.size_after < self.size_before {
            format!("−{}", self.cut_bytes())
        } else {
            format!("+{}", self.appended_bytes())
        };
        format!(
            "{change} B {} ({}→{} B)",
            self.file, self.size_before, self.size_after
        )
    }

    /// Whether journal frame `f` lost bytes to this tear (its line reaches
    /// past the torn end), when the torn file is the journal.
    pub fn tears_frame(&self, f: &JournalFrameSnapshot) -> bool {
        self.file == JOURNAL_FILE && f.offset + f.len > self.size_after
    }
}

/// The transaction journal's file name in the data directory.
pub const JOURNAL_FILE: &str = "transactions.journal";

/// One broker of the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrokerSnapshot {
    pub id: u32,
    /// Stopped brokers neither fetch nor lead.
    pub stopped: bool,
}

/// One partition, as its leader and replica set stand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionSnapshot {
    pub topic: String,
    pub partition: u32,
    pub leader: u32,
    #[serde(deserialize_with = "null_as_default")]
    pub leader_epoch: u32,
    pub isr: Vec<u32>,
    pub log_start_offset: i64,
    pub high_watermark: i64,
    pub last_stable_offset: i64,
    /// The leader's log end offset.
    #[serde(default, deserialize_with = "null_as_default")]
    pub log_end_offset: i64,
    pub replicas: Vec<ReplicaSnapshot>,
    /// Batches in the leader's log, whether or not `batches` holds them all.
    #[serde(default, deserialize_with = "null_as_default")]
    pub batch_count: usize,
    /// The newest batches (all of them in `mk-tui state`), in offset order.
    pub batches: Vec<BatchSnapshot>,
    /// The topic's cleaning config (`create_topic`'s `config`), left out
    /// when none is set.
    #[serde(
        default,
        skip_serializing_if = "TopicConfigSnapshot::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub config: TopicConfigSnapshot,
}

/// A topic's config as `create_topic` gave it, or `alter_topic_config`
/// changed it: `cleanup_policy` `"compact"` (left out for the default,
/// `"delete"`), the limits given, and `timestamp_type`
/// `"LogAppendTime"` (Kafka's `message.timestamp.type`; left out for the
/// default, `"CreateTime"`), and the topic's own `min_insync_replicas`
/// (left out when the cluster's applies).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopicConfigSnapshot {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleanup_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_retention_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_insync_replicas: Option<u32>,
}

impl TopicConfigSnapshot {
    /// Whether no setting is given (the book's topic).
    pub fn is_empty(&self) -> bool {
        *self == TopicConfigSnapshot::default()
    }
}

impl PartitionSnapshot {
    /// `<topic>-<partition>`, the key of every per-partition map.
    pub fn name(&self) -> String {
        partition_key(&self.topic, self.partition)
    }

    /// The batches a pane draws: the newest [`BATCH_WINDOW`] of those held,
    /// so a full snapshot and a frame's bounded one draw the same rows.
    pub fn window(&self) -> &[BatchSnapshot] {
        &self.batches[self.batches.len().saturating_sub(BATCH_WINDOW)..]
    }
}

/// How many batches of each partition a pane draws at most.
pub const BATCH_WINDOW: usize = 64;
/// How many record values of each batch a pane draws at most.
pub const VALUES_SHOWN: usize = 4;
/// How many journal frames, events and consumer values a frame carries.
pub const TAIL: usize = 64;

/// `<topic>-<partition>`.
pub fn partition_key(topic: &str, partition: u32) -> String {
    format!("{topic}-{partition}")
}

/// One replica of a partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaSnapshot {
    pub broker: u32,
    #[serde(default)]
    pub is_leader: bool,
    #[serde(deserialize_with = "null_as_default")]
    pub log_end_offset: i64,
    pub in_sync: bool,
    pub stopped: bool,
    /// Leader LEO minus this replica's LEO.
    #[serde(deserialize_with = "null_as_default")]
    pub lag: i64,
    /// Milliseconds since the replica last fetched (0 for the leader).
    #[serde(default, deserialize_with = "null_as_default")]
    pub ms_since_fetch: u64,
    /// The replica's own batches, newest last (all of them in `mk-tui
    /// state`, the newest [`BATCH_WINDOW`] in a frame): what this broker's
    /// log holds, which for a follower that lags is a shorter log, and for
    /// an old leader may end in a divergent tail (E6) until it fetches.
    #[serde(default, deserialize_with = "null_as_default")]
    pub log: Vec<ReplicaBatch>,
    /// DescribeLogDirs' offset lag of this replica, as its broker reports
    /// it: Kafka's `max(high watermark - log end offset, 0)`, not `lag`
    /// (docs/observe.md "Replica lag"). Only an observed cluster has it;
    /// None for the embedded cluster, whose `lag` says more, and where the
    /// broker was not asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_lag: Option<i64>,
    /// The bytes of this replica's log on its broker (DescribeLogDirs), for
    /// an observed cluster; None elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_size_bytes: Option<u64>,
}

impl ReplicaSnapshot {
    /// The batches a pane draws: the newest [`BATCH_WINDOW`] of those held.
    pub fn window(&self) -> &[ReplicaBatch] {
        &self.log[self.log.len().saturating_sub(BATCH_WINDOW)..]
    }
}

/// One batch of one replica's log: its range and identity (epoch, CRC),
/// from the log's in-memory summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaBatch {
    pub base_offset: i64,
    pub last_offset: i64,
    pub leader_epoch: u32,
    pub control: Option<ControlKind>,
    pub crc: u32,
    /// The leader does not hold this batch (E6): it comes after the last
    /// batch the replica shares with the leader (same offsets, epoch and
    /// CRC), so it sits at offsets the leader wrote differently, or beyond
    /// the leader's LEO. The replica truncates it when it next fetches; the
    /// leader's own batches are never divergent.
    #[serde(default)]
    pub divergent: bool,
    /// A divergent batch's records (its values are on no other replica):
    /// all of them in `mk-tui state`, the first [`VALUES_SHOWN`] of those a
    /// frame draws. Empty for the other batches, whose values are the
    /// leader's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<RecordSnapshot>,
}

impl ReplicaBatch {
    /// Whether the batch covers `offset`.
    pub fn covers(&self, offset: i64) -> bool {
        (self.base_offset..=self.last_offset).contains(&offset)
    }
}

/// Data or a control marker (SPEC §5 `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchKind {
    Data,
    Control,
}

/// A control marker's type (SPEC §5 `control`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlKind {
    Commit,
    Abort,
}

impl ControlKind {
    /// "commit" or "abort".
    pub fn name(self) -> &'static str {
        match self {
            ControlKind::Commit => "commit",
            ControlKind::Abort => "abort",
        }
    }
}

/// One record batch of a leader's log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchSnapshot {
    pub base_offset: i64,
    pub last_offset: i64,
    pub kind: BatchKind,
    pub control: Option<ControlKind>,
    pub transactional_id: Option<String>,
    pub producer_id: i64,
    #[serde(default)]
    pub producer_epoch: i32,
    #[serde(default)]
    pub base_sequence: i32,
    pub leader_epoch: u32,
    /// What becomes of the batch (one fate, computed in [`fate`]).
    pub fate: Fate,
    /// Why, in words: what the dashboard shows when the batch is selected.
    #[serde(default)]
    pub explanation: String,
    /// The same in Chinese (`--lang zh`).
    #[serde(
        default,
        skip_serializing_if = "String::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub explanation_zh: String,
    /// Its records: all of them in `mk-tui state`; in a frame only the first
    /// [`VALUES_SHOWN`] of the batches drawn (none for the others).
    pub records: Vec<RecordSnapshot>,
    /// Offsets of a data batch whose records key compaction removed
    /// (E16): the batch keeps its offsets, fewer records fill them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub compacted: i64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

impl BatchSnapshot {
    /// Offsets the batch covers.
    pub fn len(&self) -> i64 {
        self.last_offset - self.base_offset + 1
    }

    /// Always false: a batch covers at least one offset.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Its first [`VALUES_SHOWN`] values, `null` for none, and `…` when the
    /// batch holds more: what a frame reads of it, so a frame and
    /// `mk-tui state` show the same words.
    pub fn values_text(&self) -> String {
        self.values_text_with("null")
    }

    /// [`Self::values_text`], a tombstone's value written `null` (空值 in
    /// Chinese).
    pub fn values_text_with(&self, null: &str) -> String {
        self.values_text_of(&self.records, null)
    }

    /// [`Self::values_text_with`] of `records`, this batch's first records
    /// read beside the snapshot ([`Values`]).
    pub fn values_text_of(&self, records: &[RecordSnapshot], null: &str) -> String {
        let values: Vec<String> = records
            .iter()
            .take(VALUES_SHOWN)
            .map(|r| r.value_text_with(null))
            .collect();
        let more = if self.len() > values.len() as i64 {
            ", …"
        } else {
            ""
        };
        format!("{}{more}", values.join(", "))
    }
}

/// One record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordSnapshot {
    pub offset: i64,
    pub key: Option<String>,
    pub value: Option<String>,
    /// Its headers in order, as text (absent from the JSON when none, so
    /// a record without headers reads as the book's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, Option<String>)>,
}

impl RecordSnapshot {
    /// A record without headers.
    pub fn new(offset: i64, key: Option<String>, value: Option<String>) -> Self {
        Self {
            offset,
            key,
            value,
            headers: Vec::new(),
        }
    }

    /// Its value as the panes show it, with its headers after it in
    /// braces when it has any: `v0{trace=t1,flag}` (a null header value
    /// shows as its key alone).
    pub fn value_text(&self) -> String {
        self.value_text_with("null")
    }

    /// [`Self::value_text`], a null value written `null`.
    pub fn value_text_with(&self, null: &str) -> String {
        let value = self.value.as_deref().unwrap_or(null);
        if self.headers.is_empty() {
            return value.to_string();
        }
        let headers: Vec<String> = self
            .headers
            .iter()
            .map(|(k, v)| match v {
                Some(v) => format!("{k}={v}"),
                None => k.clone(),
            })
            .collect();
        format!("{value}{{{}}}", headers.join(","))
    }
}

/// A transaction's state: the journal's lowercase names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TxnState {
    Ongoing,
    PrepareCommit,
    PrepareAbort,
    CompleteCommit,
    CompleteAbort,
}

impl TxnState {
    /// The journal's lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            TxnState::Ongoing => "ongoing",
            TxnState::PrepareCommit => "prepare_commit",
            TxnState::PrepareAbort => "prepare_abort",
            TxnState::CompleteCommit => "complete_commit",
            TxnState::CompleteAbort => "complete_abort",
        }
    }

    /// ONGOING and PREPARE_*: the LSO stops at the transaction (E11).
    pub fn is_unstable(self) -> bool {
        !matches!(self, TxnState::CompleteCommit | TxnState::CompleteAbort)
    }
}

impl std::fmt::Display for TxnState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One transaction (its latest instance).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransactionSnapshot {
    pub id: String,
    pub state: TxnState,
    /// Touched partitions, in first-write order.
    pub partitions: Vec<String>,
    pub first_offsets: BTreeMap<String, i64>,
    #[serde(deserialize_with = "null_as_default")]
    pub staged_offsets: GroupOffsets,
    /// Kafka rules: the producer id the transaction writes with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub producer_id: Option<i64>,
    /// Kafka rules: the producer epoch its data batches carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub producer_epoch: Option<i32>,
    /// Transaction version 2: the epoch its end bumped the producer to
    /// (its markers carry it; the next transaction goes on with it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_producer_epoch: Option<i32>,
}

/// The transaction journal: its size and its newest frames.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalSnapshot {
    pub frames: usize,
    pub bytes: u64,
    /// The newest frames, oldest first, decoded (all of them in
    /// `mk-tui state`, the last [`TAIL`] in a frame).
    #[serde(default)]
    pub tail: Vec<JournalFrameSnapshot>,
}

/// One journal frame, decoded: the whole state of one transaction instance
/// at the time it was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalFrameSnapshot {
    /// 1-based frame number.
    pub number: usize,
    /// Byte offset of its line in `transactions.journal`.
    pub offset: u64,
    /// Bytes of the line, newline included.
    pub len: u64,
    /// The stored CRC-32 (verified when the journal was opened or written).
    pub crc: u32,
    /// The transaction as this frame recorded it.
    #[serde(flatten)]
    pub data: TransactionSnapshot,
}

/// What the last crash or tear's recovery did (SPEC §5 `last_recovery`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecoverySnapshot {
    pub journal_truncated_bytes: u64,
    #[serde(default)]
    pub journal_reason: Option<String>,
    pub logs_truncated: Vec<LogTruncationSnapshot>,
    pub leaders_reelected: Vec<ReelectionSnapshot>,
    /// Ids of the transactions recovery finished.
    pub completed: Vec<String>,
    /// The same, with the states they went from and to.
    #[serde(default)]
    pub completions: Vec<CompletionSnapshot>,
    pub markers_resent: Vec<MarkerSnapshot>,
    pub left_open: Vec<String>,
    /// Interrupted compaction swaps the open repaired (E16).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub swaps_repaired: Vec<SwapRepairSnapshot>,
}

/// A replica log beside which an interrupted compaction swap was repaired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwapRepairSnapshot {
    pub topic: String,
    pub partition: u32,
    pub broker: u32,
    /// `discarded_replacement`, `restored_backup` or `removed_backup`.
    pub repair: String,
    /// What it means, in words (en, zh).
    pub told: String,
    #[serde(default)]
    pub told_zh: String,
}

impl RecoverySnapshot {
    /// True when recovery repaired and finished nothing.
    pub fn is_clean(&self) -> bool {
        self.logs_truncated.is_empty()
            && self.leaders_reelected.is_empty()
            && self.journal_truncated_bytes == 0
            && self.completed.is_empty()
            && self.markers_resent.is_empty()
            && self.swaps_repaired.is_empty()
    }
}

/// A replica log whose bad tail recovery cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogTruncationSnapshot {
    pub topic: String,
    pub partition: u32,
    pub broker: u32,
    pub truncated_bytes: u64,
    #[serde(default)]
    pub reason: String,
}

/// A partition whose torn leader recovery replaced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReelectionSnapshot {
    pub topic: String,
    pub partition: u32,
    pub old_leader: u32,
    pub new_leader: u32,
    pub leader_epoch: u32,
}

/// A transaction recovery finished.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompletionSnapshot {
    pub id: String,
    pub from: TxnState,
    pub to: TxnState,
}

/// A control marker recovery wrote because it was missing (kafka rules).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MarkerSnapshot {
    pub txn: String,
    pub partition: String,
    pub control: ControlKind,
    pub offset: i64,
}

/// What a fresh consumer reads from offset 0, per partition, at each
/// isolation level (`null` for a record without a value).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Consumers {
    pub read_uncommitted: BTreeMap<String, Vec<Option<String>>>,
    pub read_committed: BTreeMap<String, Vec<Option<String>>>,
    /// How many records each list would hold unbounded, per partition,
    /// counted from the logs' in-memory batch summaries: a frame lists only
    /// a bounded head ([`TAIL`] values), but the consumers pane says the
    /// real count. Not in the state JSON (`mk-tui state` lists every value,
    /// so there the lists' lengths are the counts); a partition without an
    /// entry counts its list.
    #[serde(skip)]
    pub counts: BTreeMap<String, ReaderCounts>,
}

impl Consumers {
    /// The records a fresh consumer of partition `tp` reads at each
    /// isolation level: the counted number where the snapshot has one,
    /// else the length of its list.
    pub fn count(&self, tp: &str) -> ReaderCounts {
        self.counts.get(tp).copied().unwrap_or(ReaderCounts {
            read_uncommitted: self.read_uncommitted.get(tp).map_or(0, Vec::len),
            read_committed: self.read_committed.get(tp).map_or(0, Vec::len),
        })
    }
}

/// Records a fresh consumer reads from offset 0, at each isolation level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReaderCounts {
    pub read_uncommitted: usize,
    pub read_committed: usize,
}

/// A producer's accumulator (E17): its settings and the batch filling for
/// each partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccumulatorSnapshot {
    pub producer: String,
    pub batch_size: u64,
    pub linger_ms: u64,
    pub max_buffer_bytes: u64,
    /// Estimated bytes waiting in all partitions, against `max_buffer_bytes`.
    pub total_bytes: u64,
    pub batches: Vec<AccumulatingBatch>,
}

/// The records waiting for one partition: a batch filling.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccumulatingBatch {
    /// `<topic>-<partition>`.
    pub partition: String,
    /// The values, in order (UTF-8 text, other bytes escaped).
    pub records: Vec<Option<String>>,
    /// Their estimated bytes (the book's 39 + key + value each), against
    /// `batch_size`: sent at once when it gets there.
    pub bytes: u64,
    /// When the first record was added, on the engine clock.
    pub first_enqueue_ms: u64,
    /// When its linger runs out: the first `advance_clock` that reaches it
    /// sends the batch.
    pub linger_deadline_ms: u64,
}

/// An operation still waiting (SPEC §4: pending operations are state).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingSnapshot {
    pub action_step: usize,
    pub kind: String,
    pub txn: Option<String>,
    /// Replicas whose fetch it waits for.
    pub waiting_for: Vec<u32>,
    /// The step of an earlier pending action on the same transaction that
    /// this one waits behind.
    pub queued_behind: Option<usize>,
    /// What it waits on: the batches (and markers) of its own append or of
    /// its transaction, each `out-0@50-99`, so the pane can say what waits,
    /// not only for whom. Absent in states saved before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub batches: Vec<PendingBatch>,
    /// A commit's or abort's cut point (`prepare`, `marker:1`, …): the
    /// crash armed for when it runs (a new user's trial saw a waiting
    /// `X` with no sign of it). Absent for others and in states saved
    /// before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crash_after: Option<String>,
}

/// A batch an operation waits on: its partition and offsets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingBatch {
    pub partition: String,
    pub base_offset: i64,
    pub last_offset: i64,
    /// A COMMIT or ABORT marker (a commit waiting for its markers to
    /// replicate), which the pane names as one: `out-0@1 ◆COMMIT`. Absent
    /// for data and in states saved before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<ControlKind>,
}

impl PendingBatch {
    /// `out-0@50-99 (50)`, `out-0@7` for one offset, `out-0@1 ◆COMMIT` for
    /// a marker.
    pub fn text(&self) -> String {
        if let Some(c) = self.control {
            format!(
                "{}@{} ◆{}",
                self.partition,
                self.base_offset,
                c.name().to_uppercase()
            )
        } else if self.last_offset > self.base_offset {
            let n = self.last_offset - self.base_offset + 1;
            format!(
                "{}@{}-{} ({n})",
                self.partition, self.base_offset, self.last_offset
            )
        } else {
            format!("{}@{}", self.partition, self.base_offset)
        }
    }
}

/// Something a step did, in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventSnapshot {
    pub step: usize,
    pub text: String,
    /// The same in Chinese (`--lang zh`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub zh: String,
}

impl EventSnapshot {
    /// The text in Chinese (`zh`) or English.
    pub fn text_in(&self, zh: bool) -> &str {
        if zh && !self.zh.is_empty() {
            &self.zh
        } else {
            &self.text
        }
    }
}

/// A failed action, at the step that issued it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorSnapshot {
    pub step: usize,
    pub message: String,
    /// The error's name: Kafka's for an engine error (`NotEnoughReplicas`,
    /// `InvalidTxnState`, …), `InvalidAction` for an action refused before
    /// it ran.
    #[serde(default)]
    pub code: String,
    /// The message in Chinese (`--lang zh`); none for a line an observer
    /// recorded.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub zh: String,
}

impl Snapshot {
    /// Whether the source could not see `field` (named in
    /// [`Self::unavailable`], e.g. `partitions[].log_end_offset`): the
    /// panes then say so instead of drawing the default as if it were
    /// true.
    pub fn lacks(&self, field: &str) -> bool {
        self.unavailable.iter().any(|f| f == field)
    }

    /// Everything about a driver now ([`Bounds::FULL`]): `mk-tui state`.
    pub fn of(driver: &crate::session::Driver) -> Self {
        build(driver, &Bounds::FULL)
    }

    /// The snapshot as one line of JSON (`mk-tui state`, `observe --state`);
    /// an observed snapshot's unavailable fields are null there, and
    /// [`Self::from_json`] reads them back as their defaults.
    pub fn to_json(&self) -> String {
        unavailable_null::to_json(self)
    }

    /// A snapshot from the JSON `mk-tui state` printed.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The partition named `<topic>-<partition>`.
    pub fn partition(&self, name: &str) -> Option<&PartitionSnapshot> {
        self.partitions.iter().find(|p| p.name() == name)
    }

    /// The view of the moment of death of this step, if it crashed: this
    /// snapshot with the disk as it was at the instant of the crash in
    /// place of the state after recovery, no recovery report (none ran
    /// yet), no pending operations (the crash dropped them), no events of
    /// this step (they tell the recovery) and
    /// `before_recovery` set. Its `changes` are left to the caller (what
    /// the step did up to the crash is a diff against the step before).
    pub fn at_moment(&self) -> Option<Snapshot> {
        let m = self.moment_of_death.as_deref()?;
        Some(Snapshot {
            clock_ms: m.clock_ms,
            brokers: m.brokers.clone(),
            partitions: m.partitions.clone(),
            transactions: m.transactions.clone(),
            committed_offsets: m.committed_offsets.clone(),
            journal: m.journal.clone(),
            consumers: m.consumers.clone(),
            last_recovery: None,
            pending: Vec::new(),
            changes: Changes::default(),
            // The step's own sentence tells its recovery: not yet.
            events: self
                .events
                .iter()
                .filter(|e| e.step < self.step)
                .cloned()
                .collect(),
            before_recovery: true,
            ..self.clone()
        })
    }

    /// The step counter (docs/dashboard.md "Crashes as moments"): `4/9`,
    /// or for a step that crashed `4✝/9` at its moment of death and `4+/9`
    /// after its recovery; without the total when live.
    pub fn step_label(&self) -> String {
        let mark = match (self.before_recovery, self.moment_of_death.is_some()) {
            (true, _) => "✝",
            (false, true) => "+",
            (false, false) => "",
        };
        match self.total_steps {
            Some(total) => format!("{}{mark}/{total}", self.step),
            None => format!("{}{mark}", self.step),
        }
    }
}

/// The snapshot's names compare with their JSON spelling, as the state JSON
/// reads (`state.transactions[0].state == "ongoing"`).
macro_rules! eq_by_name {
    ($($t:ty),*) => {$(
        impl PartialEq<&str> for $t {
            fn eq(&self, other: &&str) -> bool {
                self.name() == *other
            }
        }
    )*};
}
eq_by_name!(TxnState, ControlKind, BatchKind, Fate);

impl BatchKind {
    /// "data" or "control".
    pub fn name(self) -> &'static str {
        match self {
            BatchKind::Data => "data",
            BatchKind::Control => "control",
        }
    }
}

/// Whose eyes a screen looks through: a plain copy of the consumer's
/// isolation level, so the ui names no engine type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    ReadUncommitted,
    #[default]
    ReadCommitted,
}

impl Isolation {
    /// "read_uncommitted" or "read_committed".
    pub fn name(self) -> &'static str {
        match self {
            Isolation::ReadUncommitted => "read_uncommitted",
            Isolation::ReadCommitted => "read_committed",
        }
    }

    /// The other level (the `i` key).
    pub fn toggled(self) -> Self {
        match self {
            Isolation::ReadUncommitted => Isolation::ReadCommitted,
            Isolation::ReadCommitted => Isolation::ReadUncommitted,
        }
    }

    /// Whether a consumer at this level reads a batch of `fate`.
    pub fn sees(self, fate: Fate) -> bool {
        match self {
            Isolation::ReadUncommitted => fate.read_uncommitted_sees(),
            Isolation::ReadCommitted => fate.read_committed_sees(),
        }
    }
}

/// Bytes as UTF-8 text; bytes that are not UTF-8 are escaped as `\xNN`.
pub fn text(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_utf8_text_with_other_bytes_escaped() {
        assert_eq!(text("pending é".as_bytes()), "pending é");
        assert_eq!(text(&[b'a', 0xff, b'b', 0xc3]), "a\\xffb\\xc3");
    }
}
