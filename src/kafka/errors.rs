//! Engine errors as Kafka error codes: each [`MiniKafkaError`] variant maps to
//! the code a real broker answers in the same situation, so a client's retry
//! logic reacts as it would against Kafka (a retriable NOT_LEADER_OR_FOLLOWER,
//! a fatal PRODUCER_FENCED).

use kafka_protocol::error::ResponseError;

use crate::engine::MiniKafkaError;

/// The Kafka error code for an engine error.
pub fn code_of(e: &MiniKafkaError) -> i16 {
    use MiniKafkaError as E;
    let kafka = match e {
        E::InvalidTopicName { .. } => ResponseError::InvalidTopicException,
        E::TopicAlreadyExists(_) => ResponseError::TopicAlreadyExists,
        E::TopicInOpenTransaction { .. } => ResponseError::PolicyViolation,
        E::InvalidPartitions(_) | E::PartitionsNotIncreased { .. } => {
            ResponseError::InvalidPartitions
        }
        E::InvalidReplicationFactor { .. } => ResponseError::InvalidReplicationFactor,
        E::UnknownTopicOrPartition(_) => ResponseError::UnknownTopicOrPartition,
        E::OffsetOutOfRange { .. } => ResponseError::OffsetOutOfRange,
        // A stopped leader: Kafka has no leader to send to until one is
        // elected, which the client waits out by refreshing metadata.
        E::LeaderNotAvailable { .. } => ResponseError::NotLeaderOrFollower,
        E::BrokerStopped { .. } | E::UnknownBroker(_) => ResponseError::BrokerNotAvailable,
        E::NotEnoughReplicas { .. } => ResponseError::NotEnoughReplicas,
        E::NotEnoughReplicasAfterAppend { .. } => ResponseError::NotEnoughReplicasAfterAppend,
        E::FencedLeaderEpoch { .. } => ResponseError::FencedLeaderEpoch,
        E::NotLeaderOrFenced { .. } => ResponseError::NotLeaderOrFollower,
        E::OutOfOrderSequence { .. } => ResponseError::OutOfOrderSequenceNumber,
        E::ProducerFenced { .. } | E::TransactionFenced { .. } => ResponseError::ProducerFenced,
        E::InvalidProducerEpoch { .. } => ResponseError::InvalidProducerEpoch,
        E::TransactionAlreadyActive { .. }
        | E::InvalidTransactionState { .. }
        | E::SendsPending { .. }
        | E::TransactionInterrupted { .. } => ResponseError::InvalidTxnState,
        E::TransactionInProgress(_) => ResponseError::ConcurrentTransactions,
        E::InvalidTransactionalId(_) | E::UnknownTransaction(_) => {
            ResponseError::InvalidProducerIdMapping
        }
        E::InvalidBatch(_) => ResponseError::InvalidRecord,
        E::Corrupt { .. } => ResponseError::CorruptMessage,
        E::InvalidConfig(_) => ResponseError::InvalidConfig,
        E::InvalidGroupId(_) => ResponseError::InvalidGroupId,
        E::UnknownMember { .. } => ResponseError::UnknownMemberId,
        // Kafka's broker does not check who owns a partition at OffsetCommit;
        // the stale owner the book's check stops is the one Kafka fences
        // with ILLEGAL_GENERATION.
        E::IllegalGeneration { .. } | E::NotPartitionOwner { .. } => {
            ResponseError::IllegalGeneration
        }
        E::RebalanceInProgress(_) => ResponseError::RebalanceInProgress,
        E::GroupNotEmpty { .. } => ResponseError::NonEmptyGroup,
        E::GroupIdNotFound(_) => ResponseError::GroupIdNotFound,
        E::GroupSubscribedToTopic { .. } => ResponseError::GroupSubscribedToTopic,
        // A DeleteRecords past the high watermark, a bad retention setting.
        E::InvalidCleanup(_) => ResponseError::InvalidRequest,
        // A client's own buffer (Kafka's BufferExhaustedException): served
        // clients keep theirs, so no request meets it.
        E::ProducerBufferFull { .. } => ResponseError::InvalidRequest,
        // The cluster cannot serve until it is reopened: retriable, as a
        // broker that is restarting.
        E::Crashed | E::ClusterDown { .. } => ResponseError::NotLeaderOrFollower,
        E::NotABatchBoundary { .. }
        | E::InvalidPromotion { .. }
        | E::Io { .. }
        | E::DataDirLocked { .. }
        | E::DataDirUnwritable { .. }
        | E::NewerFormat { .. }
        | E::KafkaStorage { .. }
        | E::NotARegularFile { .. }
        | E::TooLarge { .. } => ResponseError::KafkaStorageError,
    };
    kafka.code()
}

/// The Kafka error code for an engine error known only by its name
/// ([`MiniKafkaError::code`]): what the driver keeps of a failure that
/// came after its step (a pending `send`, `commit` or `begin`). The same
/// mapping as [`code_of`]; a name not listed is UNKNOWN_SERVER_ERROR.
pub fn code_of_name(name: &str) -> i16 {
    let kafka = match name {
        "InvalidTopicName" => ResponseError::InvalidTopicException,
        "TopicAlreadyExists" => ResponseError::TopicAlreadyExists,
        "TopicInOpenTransaction" => ResponseError::PolicyViolation,
        "InvalidPartitions" => ResponseError::InvalidPartitions,
        "InvalidReplicationFactor" => ResponseError::InvalidReplicationFactor,
        "OffsetOutOfRange" => ResponseError::OffsetOutOfRange,
        "InvalidConfig" => ResponseError::InvalidConfig,
        "UnknownTopicOrPartition" => ResponseError::UnknownTopicOrPartition,
        "LeaderNotAvailable" | "NotLeaderOrFenced" | "Crashed" | "ClusterDown" => {
            ResponseError::NotLeaderOrFollower
        }
        "BrokerStopped" | "UnknownBroker" => ResponseError::BrokerNotAvailable,
        "NotEnoughReplicas" => ResponseError::NotEnoughReplicas,
        "NotEnoughReplicasAfterAppend" => ResponseError::NotEnoughReplicasAfterAppend,
        "FencedLeaderEpoch" => ResponseError::FencedLeaderEpoch,
        "OutOfOrderSequence" => ResponseError::OutOfOrderSequenceNumber,
        "ProducerFenced" | "TransactionFenced" => ResponseError::ProducerFenced,
        "InvalidProducerEpoch" => ResponseError::InvalidProducerEpoch,
        "TransactionAlreadyActive"
        | "InvalidTransactionState"
        | "SendsPending"
        | "TransactionInterrupted" => ResponseError::InvalidTxnState,
        "TransactionInProgress" => ResponseError::ConcurrentTransactions,
        "InvalidTransactionalId" | "UnknownTransaction" => ResponseError::InvalidProducerIdMapping,
        "InvalidGroupId" => ResponseError::InvalidGroupId,
        "UnknownMember" => ResponseError::UnknownMemberId,
        "IllegalGeneration" | "NotPartitionOwner" => ResponseError::IllegalGeneration,
        "RebalanceInProgress" => ResponseError::RebalanceInProgress,
        "GroupNotEmpty" => ResponseError::NonEmptyGroup,
        "GroupIdNotFound" => ResponseError::GroupIdNotFound,
        "GroupSubscribedToTopic" => ResponseError::GroupSubscribedToTopic,
        "InvalidBatch" => ResponseError::InvalidRecord,
        "Corrupt" => ResponseError::CorruptMessage,
        "Io" | "DataDirLocked" | "DataDirUnwritable" | "NewerFormat" | "NotABatchBoundary"
        | "InvalidPromotion" => ResponseError::KafkaStorageError,
        _ => ResponseError::UnknownServerError,
    };
    kafka.code()
}

/// The name of an error code for the request log (`NOT_ENOUGH_REPLICAS`).
pub fn name_of(code: i16) -> String {
    if code == 0 {
        return "NONE".into();
    }
    match ResponseError::try_from_code(code) {
        Some(ResponseError::Unknown(_)) | None => format!("error {code}"),
        Some(e) => screaming(&format!("{e:?}")),
    }
}

/// `NotEnoughReplicas` -> `NOT_ENOUGH_REPLICAS`.
fn screaming(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// Kafka's codes used by the handlers by name.
pub mod code {
    use kafka_protocol::error::ResponseError;

    pub const NONE: i16 = 0;
    pub const UNKNOWN_SERVER_ERROR: i16 = ResponseError::UnknownServerError.code();
    pub const UNKNOWN_TOPIC_OR_PARTITION: i16 = ResponseError::UnknownTopicOrPartition.code();
    pub const UNKNOWN_TOPIC_ID: i16 = ResponseError::UnknownTopicId.code();
    pub const OFFSET_OUT_OF_RANGE: i16 = ResponseError::OffsetOutOfRange.code();
    pub const NOT_LEADER_OR_FOLLOWER: i16 = ResponseError::NotLeaderOrFollower.code();
    pub const LEADER_NOT_AVAILABLE: i16 = ResponseError::LeaderNotAvailable.code();
    pub const FENCED_LEADER_EPOCH: i16 = ResponseError::FencedLeaderEpoch.code();
    pub const UNKNOWN_LEADER_EPOCH: i16 = ResponseError::UnknownLeaderEpoch.code();
    pub const REQUEST_TIMED_OUT: i16 = ResponseError::RequestTimedOut.code();
    pub const UNSUPPORTED_VERSION: i16 = ResponseError::UnsupportedVersion.code();
    pub const INVALID_REQUEST: i16 = ResponseError::InvalidRequest.code();
    pub const INVALID_RECORD: i16 = ResponseError::InvalidRecord.code();
    pub const INVALID_TOPIC_EXCEPTION: i16 = ResponseError::InvalidTopicException.code();
    pub const INVALID_TRANSACTION_TIMEOUT: i16 = ResponseError::InvalidTransactionTimeout.code();
    pub const CORRUPT_MESSAGE: i16 = ResponseError::CorruptMessage.code();
    pub const UNSUPPORTED_COMPRESSION_TYPE: i16 = ResponseError::UnsupportedCompressionType.code();
    pub const UNSUPPORTED_FOR_MESSAGE_FORMAT: i16 =
        ResponseError::UnsupportedForMessageFormat.code();
    pub const INVALID_REQUIRED_ACKS: i16 = ResponseError::InvalidRequiredAcks.code();
    pub const INVALID_REPLICATION_FACTOR: i16 = ResponseError::InvalidReplicationFactor.code();
    pub const INVALID_CONFIG: i16 = ResponseError::InvalidConfig.code();
    pub const INVALID_PARTITIONS: i16 = ResponseError::InvalidPartitions.code();
    pub const POLICY_VIOLATION: i16 = ResponseError::PolicyViolation.code();
    pub const COORDINATOR_NOT_AVAILABLE: i16 = ResponseError::CoordinatorNotAvailable.code();
    pub const NOT_COORDINATOR: i16 = ResponseError::NotCoordinator.code();
    pub const TRANSACTIONAL_ID_NOT_FOUND: i16 = ResponseError::TransactionalIdNotFound.code();
    pub const KAFKA_STORAGE_ERROR: i16 = ResponseError::KafkaStorageError.code();
    pub const OUT_OF_ORDER_SEQUENCE_NUMBER: i16 = ResponseError::OutOfOrderSequenceNumber.code();
    pub const INVALID_PRODUCER_EPOCH: i16 = ResponseError::InvalidProducerEpoch.code();
    pub const INVALID_TXN_STATE: i16 = ResponseError::InvalidTxnState.code();
    pub const INVALID_PRODUCER_ID_MAPPING: i16 = ResponseError::InvalidProducerIdMapping.code();
    pub const CONCURRENT_TRANSACTIONS: i16 = ResponseError::ConcurrentTransactions.code();
    pub const UNKNOWN_PRODUCER_ID: i16 = ResponseError::UnknownProducerId.code();
    pub const UNSTABLE_OFFSET_COMMIT: i16 = ResponseError::UnstableOffsetCommit.code();
    pub const PRODUCER_FENCED: i16 = ResponseError::ProducerFenced.code();
    pub const TRANSACTION_ABORTABLE: i16 = ResponseError::TransactionAbortable.code();
    pub const INVALID_GROUP_ID: i16 = ResponseError::InvalidGroupId.code();
    pub const UNKNOWN_MEMBER_ID: i16 = ResponseError::UnknownMemberId.code();
    pub const ILLEGAL_GENERATION: i16 = ResponseError::IllegalGeneration.code();
    pub const INCONSISTENT_GROUP_PROTOCOL: i16 = ResponseError::InconsistentGroupProtocol.code();
    pub const MEMBER_ID_REQUIRED: i16 = ResponseError::MemberIdRequired.code();
    pub const FENCED_INSTANCE_ID: i16 = ResponseError::FencedInstanceId.code();
    pub const MISMATCHED_ENDPOINT_TYPE: i16 = ResponseError::MismatchedEndpointType.code();
    pub const UNSUPPORTED_ENDPOINT_TYPE: i16 = ResponseError::UnsupportedEndpointType.code();
    pub const GROUP_ID_NOT_FOUND: i16 = ResponseError::GroupIdNotFound.code();
    pub const GROUP_SUBSCRIBED_TO_TOPIC: i16 = ResponseError::GroupSubscribedToTopic.code();
    pub const NON_EMPTY_GROUP: i16 = ResponseError::NonEmptyGroup.code();
    pub const REBALANCE_IN_PROGRESS: i16 = ResponseError::RebalanceInProgress.code();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_errors_map_to_the_codes_a_broker_answers() {
        let cases = [
            (
                MiniKafkaError::NotEnoughReplicas {
                    tp: "t-0".into(),
                    isr: 1,
                    min: 2,
                },
                19,
            ),
            (
                MiniKafkaError::NotEnoughReplicasAfterAppend {
                    tp: "t-0".into(),
                    offset: 3,
                    isr: 1,
                    min: 2,
                },
                20,
            ),
            (MiniKafkaError::UnknownTopicOrPartition("t-9".into()), 3),
            (
                MiniKafkaError::LeaderNotAvailable {
                    tp: "t-0".into(),
                    broker: 1,
                },
                6,
            ),
            (
                MiniKafkaError::FencedLeaderEpoch {
                    tp: "t-0".into(),
                    request: 1,
                    current: 2,
                },
                74,
            ),
            (
                MiniKafkaError::OutOfOrderSequence {
                    tp: "t-0".into(),
                    producer_id: 1,
                    expected: 2,
                    got: 5,
                },
                45,
            ),
            (
                MiniKafkaError::ProducerFenced {
                    tp: "t-0".into(),
                    producer_id: 1,
                    epoch: 0,
                    current: 1,
                },
                90,
            ),
            (MiniKafkaError::TopicAlreadyExists("t".into()), 36),
            (
                MiniKafkaError::InvalidReplicationFactor {
                    factor: 4,
                    brokers: 3,
                },
                38,
            ),
            (MiniKafkaError::InvalidPartitions(0), 37),
            (
                MiniKafkaError::PartitionsNotIncreased {
                    topic: "t".into(),
                    current: 3,
                    requested: 2,
                },
                37,
            ),
        ];
        for (e, expected) in cases {
            assert_eq!(code_of(&e), expected, "{e}");
            assert_eq!(code_of_name(e.code()), expected, "by name: {e}");
        }
    }

    #[test]
    fn codes_are_named_as_in_kafka() {
        assert_eq!(name_of(0), "NONE");
        assert_eq!(name_of(19), "NOT_ENOUGH_REPLICAS");
        assert_eq!(name_of(35), "UNSUPPORTED_VERSION");
        assert_eq!(name_of(-1), "UNKNOWN_SERVER_ERROR");
        assert_eq!(name_of(12345), "error 12345");
    }
}
