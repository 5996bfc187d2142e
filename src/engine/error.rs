//! Typed engine errors. Every variant renders as one line that names what went
//! wrong and where (a file, a topic-partition, a broker), so the CLI and the
//! dashboard can show it as is.

use std::path::PathBuf;

use crate::engine::config::{BrokerId, MAX_PARTITIONS};

/// Result with [`MiniKafkaError`].
pub type Result<T, E = MiniKafkaError> = std::result::Result<T, E>;

/// Everything the engine can refuse or fail at.
#[derive(Debug, thiserror::Error)]
pub enum MiniKafkaError {
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),
    #[error("invalid topic name {name:?}: {reason}")]
    InvalidTopicName { name: String, reason: &'static str },
    #[error("topic {0:?} already exists")]
    TopicAlreadyExists(String),
    #[error("invalid partition count {0}: a topic has from 1 to {MAX_PARTITIONS} partitions")]
    InvalidPartitions(u32),
    /// Kafka's INVALID_PARTITIONS of a CreatePartitions: a topic's
    /// partitions only grow.
    #[error(
        "topic {topic:?} has {current} partition(s): its partitions only grow, and {requested} is not more"
    )]
    PartitionsNotIncreased {
        topic: String,
        current: u32,
        requested: u32,
    },
    #[error(
        "invalid replication factor {factor}: must be between 1 and the {brokers} configured broker(s)"
    )]
    InvalidReplicationFactor { factor: u32, brokers: usize },
    #[error("unknown topic or partition {0}")]
    UnknownTopicOrPartition(String),
    /// The name of a deleted topic that a transaction not yet ended wrote
    /// to: the journal tells a name's topics apart by the transactions
    /// that ended before the new one was created
    /// (`engine::core::cluster::delete`), so the name waits for it.
    #[error(
        "topic {topic:?} cannot be created again yet: transaction {txn:?} wrote to the topic deleted under that name and has not ended; commit or abort it, then create the topic (a transaction left open times out at the cluster's transaction_timeout_ms, not at the client's transaction.timeout.ms)"
    )]
    TopicInOpenTransaction { topic: String, txn: String },
    #[error("unknown broker {0}")]
    UnknownBroker(BrokerId),
    #[error("offset {offset} out of range for {what}: valid offsets are {start}..={end}")]
    OffsetOutOfRange {
        what: String,
        offset: i64,
        start: i64,
        end: i64,
    },
    #[error("cannot truncate {what} to offset {offset}: not a batch boundary")]
    NotABatchBoundary { what: String, offset: i64 },
    #[error("leader broker {broker} of {tp} is stopped")]
    LeaderNotAvailable { tp: String, broker: BrokerId },
    #[error("broker {broker} is stopped")]
    BrokerStopped { broker: BrokerId },
    #[error("not enough replicas for {tp}: ISR has {isr}, min.insync.replicas is {min}")]
    NotEnoughReplicas { tp: String, isr: usize, min: usize },
    #[error(
        "not enough replicas after append to {tp} at offset {offset}: ISR shrank to {isr}, min.insync.replicas is {min}"
    )]
    NotEnoughReplicasAfterAppend {
        tp: String,
        offset: i64,
        isr: usize,
        min: usize,
    },
    #[error("fenced leader epoch on {tp}: request has epoch {request}, leader epoch is {current}")]
    FencedLeaderEpoch {
        tp: String,
        request: u32,
        current: u32,
    },
    #[error(
        "append to {tp} at offset {offset} fenced: leader changed (epoch {old} -> {new}) before it was acknowledged"
    )]
    NotLeaderOrFenced {
        tp: String,
        offset: i64,
        old: u32,
        new: u32,
    },
    #[error("cannot promote broker {broker} for {tp}: {reason}")]
    InvalidPromotion {
        tp: String,
        broker: BrokerId,
        reason: String,
    },
    #[error(
        "out of order sequence on {tp} for producer {producer_id}: expected {expected}, got {got}"
    )]
    OutOfOrderSequence {
        tp: String,
        producer_id: i64,
        expected: i32,
        got: i32,
    },
    #[error("producer {producer_id} fenced on {tp}: epoch {epoch} is older than {current}")]
    ProducerFenced {
        tp: String,
        producer_id: i64,
        epoch: i32,
        current: i32,
    },
    #[error(
        "producer {producer_id} fenced on {tp}: epoch {epoch} ended with its transaction (transaction version 2 bumped it to {current})"
    )]
    InvalidProducerEpoch {
        tp: String,
        producer_id: i64,
        epoch: i32,
        current: i32,
    },
    #[error("transaction {id:?} is already active ({state}): commit or abort it first")]
    TransactionAlreadyActive { id: String, state: String },
    #[error("invalid group request: {0}")]
    InvalidGroupId(String),
    #[error("unknown member: {}", unknown_member(group, member.as_deref()))]
    UnknownMember {
        group: String,
        member: Option<String>,
    },
    #[error(
        "illegal generation for group {group:?}: generation {generation} does not match {current}"
    )]
    IllegalGeneration {
        group: String,
        generation: i32,
        current: i32,
    },
    #[error("group {0:?} is rebalancing: rejoin, or ask for its assignment again")]
    RebalanceInProgress(String),
    /// Kafka's NON_EMPTY_GROUP: a group with members cannot be deleted.
    #[error("group {group:?} is not empty: {members} member(s) must leave before it is deleted")]
    GroupNotEmpty { group: String, members: usize },
    /// Kafka's GROUP_ID_NOT_FOUND: no group of this id to delete.
    #[error("group {0:?} not found: it has no members and no committed offsets")]
    GroupIdNotFound(String),
    /// Kafka's GROUP_SUBSCRIBED_TO_TOPIC: OffsetDelete of a topic a member
    /// of the group subscribes to.
    #[error(
        "group {group:?} is subscribed to topic {topic:?}: its offsets cannot be deleted while a member subscribes to it"
    )]
    GroupSubscribedToTopic { group: String, topic: String },
    #[error(
        "member {member:?} of group {group:?} does not own {tp}: it may commit only its own partitions"
    )]
    NotPartitionOwner {
        group: String,
        member: String,
        tp: String,
    },
    #[error("invalid transactional id {0:?}: it must not be empty")]
    InvalidTransactionalId(String),
    #[error("unknown transaction {0:?}")]
    UnknownTransaction(String),
    #[error("cannot {operation} transaction {id:?}: it is {state}, not {expected}")]
    InvalidTransactionState {
        id: String,
        operation: &'static str,
        state: String,
        expected: &'static str,
    },
    #[error("transaction {id:?} handle fenced: producer epoch {epoch} is older than {current}")]
    TransactionFenced {
        id: String,
        epoch: i32,
        current: i32,
    },
    #[error("a commit or abort of transaction {0:?} is already in progress")]
    TransactionInProgress(String),
    #[error(
        "transaction {id:?} has {count} send(s) still waiting for acks=all: wait for them before commit or abort"
    )]
    SendsPending { id: String, count: usize },
    #[error(
        "the {operation} of transaction {id:?} was interrupted: another begin or a timeout completed it first"
    )]
    TransactionInterrupted { id: String, operation: &'static str },
    #[error("invalid batch: {0}")]
    InvalidBatch(String),
    /// The book's `ProducerBufferFull`: a record the producer's accumulator
    /// has no room for (E17).
    #[error(
        "producer accumulator is full: {total_bytes} bytes waiting, {adding} more would pass max_buffer_bytes {max_buffer_bytes}"
    )]
    ProducerBufferFull {
        total_bytes: u64,
        adding: u64,
        max_buffer_bytes: u64,
    },
    /// A retention or compaction request the book's `RetentionManager` or
    /// `LogCompactor` refuses (its `ValueError`s).
    #[error("invalid log cleanup: {0}")]
    InvalidCleanup(String),
    #[error("corrupt {path}: {reason}")]
    Corrupt { path: PathBuf, reason: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Another cluster holds the data directory's lock; `pid` is the
    /// holder's, as it wrote it into the lock file (issue 17, item 5).
    #[error(
        "data directory {} is in use by another mk-tui ({})",
        path.display(),
        match pid {
            Some(pid) => format!("pid {pid}"),
            None => "its lock file .mk-tui.lock is held".to_string(),
        }
    )]
    DataDirLocked { path: PathBuf, pid: Option<u32> },
    /// The data directory cannot be created or its lock file written: the
    /// directory (or a parent) is not writable, or a parent is a file.
    #[error("cannot {action} data directory {path}: {source}")]
    DataDirUnwritable {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// A file whose format version is newer than this build reads: written
    /// by a newer mk-tui. Refused before anything is written.
    #[error(
        "{path}: written by a newer mk-tui (format version {found}; this build reads version {supported}): upgrade mk-tui to open it"
    )]
    NewerFormat {
        path: PathBuf,
        found: u64,
        supported: u32,
    },
    /// A write failed and could not be undone (issue 17): the file holds
    /// bytes nobody acknowledged, so the log or journal that owns it takes
    /// no more writes until the cluster restarts (a crash reopens it and
    /// recovery cuts the bad tail), as Kafka takes a log directory offline.
    #[error(
        "{path} is offline (KafkaStorageException): {reason}; it takes no more writes until the cluster restarts"
    )]
    KafkaStorage { path: PathBuf, reason: String },
    /// A data directory larger than this process can open: refused before
    /// anything is created (issue 17, item 3).
    #[error("{path}: {reason}")]
    TooLarge { path: PathBuf, reason: String },
    /// A data file that is a FIFO, a device, a directory or a symlink:
    /// opening or reading it could block or never end (issue 17, item 4).
    #[error("{path}: is {kind}, not a regular file")]
    NotARegularFile { path: PathBuf, kind: &'static str },
    #[error("operation dropped: the cluster crashed before it completed")]
    Crashed,
    #[error(
        "the cluster is down: its recovery failed ({reason}); repair the data directory and crash again to reopen it"
    )]
    ClusterDown { reason: String },
}

/// The book raises `UnknownMember` for an unknown group too
/// (`_require_group`): "unknown group workers".
fn unknown_member(group: &str, member: Option<&str>) -> String {
    match member {
        Some(member) => format!("{member:?} is not a member of group {group:?}"),
        None => format!("unknown group {group:?}"),
    }
}

impl MiniKafkaError {
    /// The variant's name, as a stable machine-readable code: most are
    /// Kafka's own error names (`NotEnoughReplicas`, `ProducerFenced`), so
    /// the state JSON and the dashboard can tell errors apart without
    /// reading their text.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidConfig { .. } => "InvalidConfig",
            Self::InvalidTopicName { .. } => "InvalidTopicName",
            Self::TopicAlreadyExists { .. } => "TopicAlreadyExists",
            Self::InvalidPartitions { .. } => "InvalidPartitions",
            // Kafka's name for both.
            Self::PartitionsNotIncreased { .. } => "InvalidPartitions",
            Self::InvalidReplicationFactor { .. } => "InvalidReplicationFactor",
            Self::UnknownTopicOrPartition { .. } => "UnknownTopicOrPartition",
            Self::TopicInOpenTransaction { .. } => "TopicInOpenTransaction",
            Self::UnknownBroker { .. } => "UnknownBroker",
            Self::OffsetOutOfRange { .. } => "OffsetOutOfRange",
            Self::NotABatchBoundary { .. } => "NotABatchBoundary",
            Self::LeaderNotAvailable { .. } => "LeaderNotAvailable",
            Self::BrokerStopped { .. } => "BrokerStopped",
            Self::NotEnoughReplicas { .. } => "NotEnoughReplicas",
            Self::NotEnoughReplicasAfterAppend { .. } => "NotEnoughReplicasAfterAppend",
            Self::FencedLeaderEpoch { .. } => "FencedLeaderEpoch",
            Self::NotLeaderOrFenced { .. } => "NotLeaderOrFenced",
            Self::InvalidPromotion { .. } => "InvalidPromotion",
            Self::OutOfOrderSequence { .. } => "OutOfOrderSequence",
            Self::ProducerFenced { .. } => "ProducerFenced",
            Self::InvalidProducerEpoch { .. } => "InvalidProducerEpoch",
            Self::TransactionAlreadyActive { .. } => "TransactionAlreadyActive",
            Self::InvalidGroupId { .. } => "InvalidGroupId",
            Self::UnknownMember { .. } => "UnknownMember",
            Self::IllegalGeneration { .. } => "IllegalGeneration",
            Self::RebalanceInProgress { .. } => "RebalanceInProgress",
            Self::GroupNotEmpty { .. } => "GroupNotEmpty",
            Self::GroupIdNotFound { .. } => "GroupIdNotFound",
            Self::GroupSubscribedToTopic { .. } => "GroupSubscribedToTopic",
            Self::NotPartitionOwner { .. } => "NotPartitionOwner",
            Self::InvalidTransactionalId { .. } => "InvalidTransactionalId",
            Self::UnknownTransaction { .. } => "UnknownTransaction",
            Self::InvalidTransactionState { .. } => "InvalidTransactionState",
            Self::TransactionFenced { .. } => "TransactionFenced",
            Self::TransactionInProgress { .. } => "TransactionInProgress",
            Self::SendsPending { .. } => "SendsPending",
            Self::TransactionInterrupted { .. } => "TransactionInterrupted",
            Self::InvalidBatch { .. } => "InvalidBatch",
            Self::ProducerBufferFull { .. } => "ProducerBufferFull",
            Self::InvalidCleanup { .. } => "InvalidCleanup",
            Self::Corrupt { .. } => "Corrupt",
            Self::Io { .. } => "Io",
            Self::DataDirLocked { .. } => "DataDirLocked",
            Self::DataDirUnwritable { .. } => "DataDirUnwritable",
            Self::NewerFormat { .. } => "NewerFormat",
            Self::KafkaStorage { .. } => "KafkaStorageException",
            Self::NotARegularFile { .. } => "NotARegularFile",
            Self::TooLarge { .. } => "TooLarge",
            Self::Crashed { .. } => "Crashed",
            Self::ClusterDown { .. } => "ClusterDown",
        }
    }
    /// Wraps an I/O error with the path it happened on.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }

    /// The error for a file of format version `found` when this build reads
    /// `supported`: a newer version is [`Self::NewerFormat`], an older one
    /// corrupt (version 1 is the first).
    pub fn unsupported_version(path: impl Into<PathBuf>, found: u64, supported: u32) -> Self {
        let path = path.into();
        if found > u64::from(supported) {
            Self::NewerFormat {
                path,
                found,
                supported,
            }
        } else {
            Self::corrupt(
                path,
                format!(
                    "format version {found} is not supported (this build reads version {supported})"
                ),
            )
        }
    }

    /// A corrupt file, named.
    pub fn corrupt(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Self::Corrupt {
            path: path.into(),
            reason: reason.into(),
        }
    }
}
