//! CreateTopics (versions 2-7): each topic becomes a `create_topic` action.
//! Refusals a broker would give are found first, from the cluster as it
//! is, so they carry Kafka's code: TOPIC_ALREADY_EXISTS,
//! INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR, INVALID_TOPIC_EXCEPTION,
//! and POLICY_VIOLATION past the session's caps on topics and replicas,
//! with a message naming the cap.
//! A partition or replication count of -1 takes the server's default: one
//! partition, and as many replicas as brokers, at most 3 (Kafka's default
//! is 1; replication is what the dashboard teaches). Manual replica
//! assignments are refused (INVALID_REQUEST), and so is every topic config
//! but `message.timestamp.type` (INVALID_CONFIG, naming the config): the
//! engine keeps a topic's timestamp type and no other setting.

use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::create_topics_response::CreatableTopicResult;
use kafka_protocol::messages::{CreateTopicsRequest, CreateTopicsResponse, ResponseKind};
use kafka_protocol::protocol::StrBytes;

use crate::kafka::broker::{Answer, Broker, MiniKafkaError, TimestampType, validate_topic_name};
use crate::kafka::errors::{code, code_of, name_of};
use crate::session::{Action, Outcome};

/// The most partitions one topic may have here: each is a directory per
/// replica, and a client's typo must not create a million of them.
pub const MAX_PARTITIONS: u32 = 256;

pub fn handle(worker: &mut dyn Broker, request: &CreateTopicsRequest, version: i16) -> Answer {
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

/// Kafka's topic config for the timestamp a topic's records carry, the
/// one topic config the engine keeps (in the topic's metadata).
const TIMESTAMP_TYPE: &str = "message.timestamp.type";

/// The topic's timestamp type from its configs: `message.timestamp.type`
/// is taken with Kafka's two values; any other config is refused with
/// INVALID_CONFIG naming it, since the engine's settings are the cluster's.
fn timestamp_type(t: &CreatableTopic) -> Result<TimestampType, (i16, String)> {
    let mut kind = TimestampType::CreateTime;
    for config in &t.configs {
        let name = config.name.as_str();
        let value = config.value.as_ref().map(|v| v.as_str());
        kind = match (name, value) {
            (TIMESTAMP_TYPE, Some("CreateTime")) => TimestampType::CreateTime,
            (TIMESTAMP_TYPE, Some("LogAppendTime")) => TimestampType::LogAppendTime,
            (TIMESTAMP_TYPE, v) => {
                return Err((
                    code::INVALID_CONFIG,
                    format!(
                        "invalid value {} for configuration {TIMESTAMP_TYPE}: expected CreateTime or LogAppendTime",
                        v.unwrap_or("null")
                    ),
                ));
            }
            (other, _) => {
                return Err((
                    code::INVALID_CONFIG,
                    format!(
                        "topic config {other} is not supported: the engine's settings are the cluster's; only {TIMESTAMP_TYPE} is kept"
                    ),
                ));
            }
        };
    }
    Ok(kind)
}

/// Creates one topic (or only checks it, for `validate_only`): its
/// partition count and replication factor, or the Kafka code and message.
fn create_one(
    worker: &mut dyn Broker,
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
    let timestamp_type = timestamp_type(t)?;
    validate_topic_name(&name).map_err(refuse)?;
    let brokers = worker.brokers().len() as u32;
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
    if worker.topic_names().contains(&name) {
        return Err(refuse(MiniKafkaError::TopicAlreadyExists(name)));
    }
    let action = Action::CreateTopic {
        name,
        partitions,
        replication_factor: replication,
        timestamp_type,
    };
    // The caps a recording may use (docs/recording-format.md, "Limits"):
    // past them the driver would refuse the action, so the client is told
    // which cap, as Kafka's CreateTopicPolicy refuses with POLICY_VIOLATION
    // and a message.
    if let Err(e) = worker.refuse(&action) {
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

#[cfg(test)]
mod tests {
    use kafka_protocol::messages::create_topics_request::CreatableTopicConfig;

    use super::*;

    fn with_configs(configs: &[(&str, Option<&str>)]) -> CreatableTopic {
        CreatableTopic::default().with_configs(
            configs
                .iter()
                .map(|(name, value)| {
                    CreatableTopicConfig::default()
                        .with_name(StrBytes::from_string(name.to_string()))
                        .with_value(value.map(|v| StrBytes::from_string(v.to_string())))
                })
                .collect(),
        )
    }

    /// `message.timestamp.type` takes Kafka's two values; any other
    /// config, or value, is INVALID_CONFIG with a message naming it.
    #[test]
    fn only_the_timestamp_type_config_is_taken() {
        let kind = |configs: &[(&str, Option<&str>)]| timestamp_type(&with_configs(configs));
        assert_eq!(kind(&[]), Ok(TimestampType::CreateTime));
        assert_eq!(
            kind(&[(TIMESTAMP_TYPE, Some("LogAppendTime"))]),
            Ok(TimestampType::LogAppendTime)
        );
        assert_eq!(
            kind(&[(TIMESTAMP_TYPE, Some("CreateTime"))]),
            Ok(TimestampType::CreateTime)
        );
        for (configs, named) in [
            (&[("retention.ms", Some("1000"))][..], "retention.ms"),
            (
                &[
                    (TIMESTAMP_TYPE, Some("LogAppendTime")),
                    ("cleanup.policy", Some("compact")),
                ][..],
                "cleanup.policy",
            ),
            (&[(TIMESTAMP_TYPE, Some("WallTime"))][..], "WallTime"),
            (&[(TIMESTAMP_TYPE, None)][..], TIMESTAMP_TYPE),
        ] {
            let (code, message) = kind(configs).unwrap_err();
            assert_eq!(code, code::INVALID_CONFIG, "{configs:?}");
            assert!(message.contains(named), "{message}");
        }
    }
}
