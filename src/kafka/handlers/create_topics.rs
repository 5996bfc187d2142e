//! CreateTopics (versions 2-7): each topic becomes a `create_topic` action.
//! Refusals a broker would give are found first, from the cluster as it
//! is, so they carry Kafka's code: TOPIC_ALREADY_EXISTS,
//! INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR, INVALID_TOPIC_EXCEPTION,
//! and POLICY_VIOLATION past the session's caps on topics and replicas,
//! with a message naming the cap.
//! A partition or replication count of -1 takes the server's default: one
//! partition, and as many replicas as brokers, at most 3 (Kafka's default
//! is 1; replication is what the dashboard teaches). Manual replica
//! assignments and topic configs are refused (INVALID_REQUEST,
//! INVALID_CONFIG): the engine has neither.

use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::create_topics_response::CreatableTopicResult;
use kafka_protocol::messages::{CreateTopicsRequest, CreateTopicsResponse, ResponseKind};
use kafka_protocol::protocol::StrBytes;

use crate::engine::MiniKafkaError;
use crate::engine::core::metadata::validate_topic_name;
use crate::kafka::errors::{code, code_of, name_of};
use crate::kafka::worker::{Answer, Worker};
use crate::session::{Action, Outcome};

/// The most partitions one topic may have here: each is a directory per
/// replica, and a client's typo must not create a million of them.
pub const MAX_PARTITIONS: u32 = 256;

pub fn handle(worker: &mut Worker, request: &CreateTopicsRequest, version: i16) -> Answer {
    let mut outcomes = Vec::new();
    let topics = request
        .topics
        .iter()
        .map(|t| {
            let result = create_one(worker, t, request.validate_only);
            let name = t.name.0.to_string();
            let mut r = CreatableTopicResult::default().with_name(t.name.clone());
            match result {
                Ok((partitions, replication)) => {
                    outcomes.push(format!("{name} created"));
                    if version >= 5 {
                        r = r
                            .with_num_partitions(partitions as i32)
                            .with_replication_factor(replication as i16)
                            .with_configs(Some(Vec::new()));
                    }
                }
                Err((error, message)) => {
                    outcomes.push(format!("{name}: {}", name_of(error)));
                    r = r
                        .with_error_code(error)
                        .with_error_message(Some(StrBytes::from_string(message)));
                }
            }
            r
        })
        .collect();
    let response = CreateTopicsResponse::default().with_topics(topics);
    Answer::now(ResponseKind::CreateTopics(response), outcomes.join(", "))
}

/// Creates one topic (or only checks it, for `validate_only`): its
/// partition count and replication factor, or the Kafka code and message.
fn create_one(
    worker: &mut Worker,
    t: &CreatableTopic,
    validate_only: bool,
) -> Result<(u32, u32), (i16, String)> {
    let name = t.name.0.to_string();
    let refuse = |e: MiniKafkaError| (code_of(&e), e.to_string());
    if !t.assignments.is_empty() {
        return Err((
            code::INVALID_REQUEST,
            "manual replica assignments are not supported".into(),
        ));
    }
    if !t.configs.is_empty() {
        return Err((
            code::INVALID_CONFIG,
            "topic configs are not supported: the engine's settings are the cluster's".into(),
        ));
    }
    validate_topic_name(&name).map_err(refuse)?;
    let brokers = worker.brokers.len() as u32;
    let partitions = match t.num_partitions {
        -1 => 1,
        n if n < 1 || n as u32 > MAX_PARTITIONS => {
            return Err((
                code::INVALID_PARTITIONS,
                format!(
                    "invalid partition count {n}: give 1 to {MAX_PARTITIONS}; the cap is {MAX_PARTITIONS} partitions per topic"
                ),
            ));
        }
        n => n as u32,
    };
    let replication = match t.replication_factor {
        -1 => brokers.min(3),
        n if n < 1 || n as u32 > brokers => {
            return Err(refuse(MiniKafkaError::InvalidReplicationFactor {
                factor: n.max(0) as u32,
                brokers: brokers as usize,
            }));
        }
        n => n as u32,
    };
    if worker
        .driver
        .cluster()
        .topics()
        .iter()
        .any(|(n, _)| *n == name)
    {
        return Err(refuse(MiniKafkaError::TopicAlreadyExists(name)));
    }
    let action = Action::CreateTopic {
        name,
        partitions,
        replication_factor: replication,
    };
    // The caps a recording may use (docs/recording-format.md, "Limits"):
    // past them the driver would refuse the action, so the client is told
    // which cap, as Kafka's CreateTopicPolicy refuses with POLICY_VIOLATION
    // and a message.
    if let Err(e) = worker.driver.refuse(&action) {
        return Err((
            code::POLICY_VIOLATION,
            format!("{e} (mk-tui serve's cap, docs/kafka-protocol.md \"CreateTopics\")"),
        ));
    }
    if validate_only {
        return Ok((partitions, replication));
    }
    match worker.apply(&action) {
        Outcome::Error(e) => {
            let kafka = match e.engine() {
                // More files than the process may open (`ulimit -n`), said
                // in the message: a cap of this machine.
                Some(MiniKafkaError::TooLarge { .. }) => code::POLICY_VIOLATION,
                Some(engine) => code_of(engine),
                None => code::INVALID_REQUEST,
            };
            Err((kafka, e.to_string()))
        }
        _ => Ok((partitions, replication)),
    }
}
