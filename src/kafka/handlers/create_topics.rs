//! CreateTopics (versions 2-7): each topic becomes a `create_topic` action.
//! Refusals a broker would give are found first, from the cluster as it
//! is, so they carry Kafka's code: TOPIC_ALREADY_EXISTS,
//! INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR, INVALID_TOPIC_EXCEPTION,
//! and POLICY_VIOLATION past the session's caps on topics and replicas,
//! with a message naming the cap.
//! A partition or replication count of -1 takes the server's default: one
//! partition, and as many replicas as brokers, at most 3 (Kafka's default
//! is 1; replication is what the dashboard teaches). Manual replica
//! assignments are refused (INVALID_REQUEST). The engine keeps
//! `message.timestamp.type`, `cleanup.policy`, `retention.ms`,
//! `retention.bytes`, `delete.retention.ms` and `min.insync.replicas`
//! with the topic (the cleaning ones for the server's cleaner,
//! [`crate::kafka::cleaner`]); Kafka's configs that only lay out or tune a
//! broker's files (`segment.bytes`, `compression.type`, …) are taken and
//! not kept ([`crate::kafka::unkept_configs`]), as frameworks such as
//! Kafka Streams set them; any other config is refused (INVALID_CONFIG,
//! naming it).
//! From v5 the response lists the created topic's configs as
//! DescribeConfigs answers them ([`crate::kafka::configs`]).

use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::create_topics_response::{
    CreatableTopicConfigs, CreatableTopicResult,
};
use kafka_protocol::messages::{
    CreateTopicsRequest, CreateTopicsResponse, ResponseKind, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use crate::engine::core::metadata::{CleanupPolicy, TopicConfig, TopicMetadata};
use crate::kafka::broker::{Answer, Broker, MiniKafkaError, TimestampType, validate_topic_name};
use crate::kafka::configs::topic_entries;
use crate::kafka::errors::{code, code_of, name_of};
use crate::kafka::unkept_configs::taken_not_kept;
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
                Ok(Created {
                    partitions,
                    replication,
                    settings,
                    not_kept,
                }) => {
                    // validate_only creates nothing: the line says so.
                    let created = if request.validate_only {
                        "would be created (validate_only: nothing created)"
                    } else {
                        "created"
                    };
                    outcomes.push(if not_kept.is_empty() {
                        format!("{name} {created}")
                    } else {
                        format!(
                            "{name} {created} ({} taken, not kept: the cluster's settings apply)",
                            not_kept.join(", ")
                        )
                    });
                    if version >= 5 {
                        r = r
                            .with_num_partitions(partitions as i32)
                            .with_replication_factor(replication as i16)
                            .with_configs(Some(created_configs(worker, settings)));
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

/// A topic's settings: its timestamp type and its config.
type Settings = (TimestampType, TopicConfig);

/// What [`create_one`] made (or, validating only, would make).
struct Created {
    partitions: u32,
    replication: u32,
    settings: Settings,
    /// The configs taken without being kept ([`taken_not_kept`]), `name=value`.
    not_kept: Vec<String>,
}

/// The v5+ response's configs of a topic created with `settings`: what
/// DescribeConfigs then answers (its name, value, source), as Kafka fills
/// them in, without synonyms or documentation.
fn created_configs(
    worker: &dyn Broker,
    (timestamp_type, config): Settings,
) -> Vec<CreatableTopicConfigs> {
    let topic = TopicMetadata {
        timestamp_type,
        config,
        ..TopicMetadata::default()
    };
    topic_entries(&topic, &worker.config())
        .iter()
        .map(|e| {
            CreatableTopicConfigs::default()
                .with_name(StrBytes::from_static_str(e.name))
                .with_value(e.value().map(|v| StrBytes::from_string(v.to_string())))
                .with_read_only(e.read_only)
                .with_config_source(e.source() as i8)
                .with_is_sensitive(false)
        })
        .collect()
}

/// Kafka's topic configs the engine keeps (in the topic's metadata).
pub(crate) const TIMESTAMP_TYPE: &str = "message.timestamp.type";
pub(crate) const CLEANUP_POLICY: &str = "cleanup.policy";
pub(crate) const RETENTION_MS: &str = "retention.ms";
pub(crate) const RETENTION_BYTES: &str = "retention.bytes";
pub(crate) const MIN_INSYNC_REPLICAS: &str = "min.insync.replicas";
pub(crate) const DELETE_RETENTION_MS: &str = "delete.retention.ms";

/// The topic's settings from its configs, with Kafka's values:
/// `message.timestamp.type` (CreateTime, LogAppendTime), `cleanup.policy`
/// (delete, compact), `retention.ms` and `retention.bytes` (-1: no limit),
/// `delete.retention.ms`, `min.insync.replicas` (from 1; above the
/// replication factor is taken, as Kafka takes it). A bad value, or any
/// other config, is refused
/// with INVALID_CONFIG naming it, since the engine's other settings are
/// the cluster's; but Kafka's configs that only lay out or tune a
/// broker's files (`segment.bytes`, `compression.type`, …) are taken,
/// their values checked, and not kept ([`taken_not_kept`]): they come
/// back named `name=value` beside the settings.
fn topic_settings(t: &CreatableTopic) -> Result<(Settings, Vec<String>), (i16, String)> {
    let mut settings = (TimestampType::CreateTime, TopicConfig::default());
    let mut not_kept = Vec::new();
    for c in &t.configs {
        let (name, value) = (c.name.as_str(), c.value.as_ref().map(|v| v.as_str()));
        if taken_not_kept(name, value)? {
            not_kept.push(format!("{name}={}", value.unwrap_or("null")));
            continue;
        }
        set_setting(&mut settings, name, value)?;
    }
    Ok((settings, not_kept))
}

/// Sets one of the kept configs, `name`, to `value` in `settings` (a
/// topic's timestamp type and cleaning config), with Kafka's values;
/// CreateTopics, IncrementalAlterConfigs and AlterConfigs share it. A bad
/// value is INVALID_CONFIG in Kafka's shape (`Invalid value V for
/// configuration N: why`); a config the engine does not keep,
/// INVALID_CONFIG naming it.
pub(crate) fn set_setting(
    (kind, config): &mut Settings,
    name: &str,
    value: Option<&str>,
) -> Result<(), (i16, String)> {
    let invalid = |expected: &str| {
        (
            code::INVALID_CONFIG,
            format!(
                "Invalid value {} for configuration {name}: {expected}",
                value.unwrap_or("null")
            ),
        )
    };
    // -1 is Kafka's "no limit"; a limit is at least `min`.
    let limit = |min: i64| -> Result<Option<u64>, (i16, String)> {
        match value.and_then(|v| v.parse::<i64>().ok()) {
            Some(-1) => Ok(None),
            Some(n) if n >= min => Ok(Some(n as u64)),
            _ => Err(invalid(&format!(
                "expected -1 (no limit) or a whole number from {min}"
            ))),
        }
    };
    match name {
        TIMESTAMP_TYPE => {
            *kind = match value {
                Some("CreateTime") => TimestampType::CreateTime,
                Some("LogAppendTime") => TimestampType::LogAppendTime,
                _ => return Err(invalid("expected CreateTime or LogAppendTime")),
            }
        }
        CLEANUP_POLICY => {
            config.cleanup_policy = match value {
                Some("delete") => CleanupPolicy::Delete,
                Some("compact") => CleanupPolicy::Compact,
                // Kafka's list, in either order.
                Some("compact,delete" | "delete,compact") => CleanupPolicy::CompactDelete,
                _ => return Err(invalid("String must be one of: compact, delete")),
            }
        }
        RETENTION_MS => config.retention_ms = limit(0)?,
        // The book's retention refuses a size limit of 0.
        RETENTION_BYTES => config.retention_bytes = limit(1)?,
        DELETE_RETENTION_MS => {
            config.delete_retention_ms = Some(
                limit(0)?
                    .ok_or_else(|| invalid("expected a whole number of milliseconds from 0"))?,
            )
        }
        // Kafka's ConfigDef: an INT (trimmed), at least 1, in its words.
        MIN_INSYNC_REPLICAS => {
            let n = value
                .and_then(|v| v.trim().parse::<i32>().ok())
                .ok_or_else(|| invalid("Not a number of type INT"))?;
            if n < 1 {
                return Err(invalid("Value must be at least 1"));
            }
            config.min_insync_replicas = Some(n as u32);
        }
        other => {
            return Err((
                code::INVALID_CONFIG,
                format!(
                    "topic config {other} is not supported: the engine's settings are the cluster's; only {TIMESTAMP_TYPE}, {CLEANUP_POLICY}, {RETENTION_MS}, {RETENTION_BYTES}, {DELETE_RETENTION_MS} and {MIN_INSYNC_REPLICAS} are kept"
                ),
            ));
        }
    }
    Ok(())
}

/// Creates the missing topic `name` that a Metadata request asked for, as
/// Kafka's `auto.create.topics.enable` does: as CreateTopics creates a
/// topic given no partition count or replication factor (one partition;
/// the replication factor [`create_one`] gives by default). The Kafka code
/// of a topic that cannot be made (a bad name: INVALID_TOPIC_EXCEPTION; a
/// cap: POLICY_VIOLATION), and the message the server's log shows.
pub(crate) fn auto_create(worker: &mut dyn Broker, name: &str) -> Result<(), (i16, String)> {
    let topic = CreatableTopic::default()
        .with_name(TopicName(StrBytes::from_string(name.to_string())))
        .with_num_partitions(-1)
        .with_replication_factor(-1);
    create_one(worker, &topic, false).map(|_| ())
}

/// Creates one topic (or only checks it, for `validate_only`): its
/// partition count, replication factor and settings, or the Kafka code
/// and message.
fn create_one(
    worker: &mut dyn Broker,
    t: &CreatableTopic,
    validate_only: bool,
) -> Result<Created, (i16, String)> {
    let name = t.name.0.to_string();
    let refuse = |e: MiniKafkaError| (code_of(&e), e.to_string());
    if !t.assignments.is_empty() {
        return Err((
            code::INVALID_REQUEST,
            "manual replica assignments are not supported".into(),
        ));
    }
    let ((timestamp_type, config), not_kept) = topic_settings(t)?;
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
    let existing = worker.topic_names();
    if existing.contains(&name) {
        return Err(refuse(MiniKafkaError::TopicAlreadyExists(name)));
    }
    // Kafka refuses a name that differs from an existing one only in '.'
    // against '_': its metric names would be the same.
    let metric = |n: &str| n.replace('.', "_");
    if let Some(other) = existing.iter().find(|e| metric(e) == metric(&name)) {
        return Err((
            code::INVALID_TOPIC_EXCEPTION,
            format!(
                "topic {name:?} collides with existing topic {other:?} ('.' and '_' are one in Kafka's metric names)"
            ),
        ));
    }
    let created = Created {
        partitions,
        replication,
        settings: (timestamp_type, config),
        not_kept,
    };
    let action = Action::CreateTopic {
        name,
        partitions,
        replication_factor: replication,
        timestamp_type,
        config,
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
        return Ok(created);
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
        _ => Ok(created),
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

    /// Kafka Streams' repartition topic configs: the kept ones kept, the
    /// others taken and named, and the topic's settings as without them.
    #[test]
    fn configs_that_only_tune_files_are_taken_and_named_not_kept() {
        let ((kind, config), not_kept) = topic_settings(&with_configs(&[
            (CLEANUP_POLICY, Some("delete")),
            ("segment.bytes", Some("52428800")),
            (RETENTION_MS, Some("-1")),
            (TIMESTAMP_TYPE, Some("CreateTime")),
            ("compression.type", Some("lz4")),
        ]))
        .unwrap();
        assert_eq!(kind, TimestampType::CreateTime);
        assert_eq!(config.retention_ms, None);
        assert_eq!(not_kept, ["segment.bytes=52428800", "compression.type=lz4"]);
        let (code, message) =
            topic_settings(&with_configs(&[("segment.bytes", Some("1"))])).unwrap_err();
        assert_eq!(code, code::INVALID_CONFIG);
        assert!(message.contains("segment.bytes"), "{message}");
    }

    /// `message.timestamp.type` takes Kafka's two values; any other
    /// config, or value, is INVALID_CONFIG with a message naming it.
    #[test]
    fn only_the_kept_configs_are_taken() {
        let kind = |configs: &[(&str, Option<&str>)]| {
            topic_settings(&with_configs(configs)).map(|((kind, _), _)| kind)
        };
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
            (
                &[("remote.storage.enable", Some("true"))][..],
                "remote.storage.enable",
            ),
            (
                &[
                    (TIMESTAMP_TYPE, Some("LogAppendTime")),
                    (CLEANUP_POLICY, Some("shred")),
                ][..],
                "shred",
            ),
            (
                &[(CLEANUP_POLICY, Some("compact,shred"))][..],
                CLEANUP_POLICY,
            ),
            (&[(CLEANUP_POLICY, None)][..], CLEANUP_POLICY),
            (&[(RETENTION_MS, Some("-2"))][..], RETENTION_MS),
            (&[(RETENTION_MS, Some("soon"))][..], RETENTION_MS),
            (&[(RETENTION_BYTES, Some("0"))][..], RETENTION_BYTES),
            (
                &[(DELETE_RETENTION_MS, Some("-1"))][..],
                DELETE_RETENTION_MS,
            ),
            (&[(TIMESTAMP_TYPE, Some("WallTime"))][..], "WallTime"),
            (&[(TIMESTAMP_TYPE, None)][..], TIMESTAMP_TYPE),
            (
                &[(MIN_INSYNC_REPLICAS, Some("0"))][..],
                "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1",
            ),
            (
                &[(MIN_INSYNC_REPLICAS, Some("two"))][..],
                "Invalid value two for configuration min.insync.replicas: Not a number of type INT",
            ),
            (
                &[(MIN_INSYNC_REPLICAS, Some("2147483648"))][..],
                "Not a number of type INT",
            ),
        ] {
            let (code, message) = kind(configs).unwrap_err();
            assert_eq!(code, code::INVALID_CONFIG, "{configs:?}");
            assert!(message.contains(named), "{message}");
        }
    }

    /// The cleaning configs land in the topic's config; -1 is no limit.
    #[test]
    fn the_cleaning_configs_are_kept() {
        let config = |configs: &[(&str, Option<&str>)]| {
            topic_settings(&with_configs(configs)).map(|((_, config), _)| config)
        };
        assert_eq!(config(&[]), Ok(TopicConfig::default()));
        // Kafka's list of both, in either order (a windowed store's
        // changelog in Kafka Streams).
        for both in ["compact,delete", "delete,compact"] {
            assert_eq!(
                config(&[(CLEANUP_POLICY, Some(both))]).map(|c| c.cleanup_policy),
                Ok(CleanupPolicy::CompactDelete)
            );
        }
        assert_eq!(
            config(&[
                (CLEANUP_POLICY, Some("compact")),
                (DELETE_RETENTION_MS, Some("250")),
                (RETENTION_MS, Some("-1")),
                (RETENTION_BYTES, Some("4096")),
                (MIN_INSYNC_REPLICAS, Some(" 3")),
            ]),
            Ok(TopicConfig {
                cleanup_policy: CleanupPolicy::Compact,
                retention_ms: None,
                retention_bytes: Some(4096),
                delete_retention_ms: Some(250),
                min_insync_replicas: Some(3),
            })
        );
        assert_eq!(
            config(&[(CLEANUP_POLICY, Some("delete")), (RETENTION_MS, Some("0"))]),
            Ok(TopicConfig {
                retention_ms: Some(0),
                ..TopicConfig::default()
            })
        );
    }

    /// In process: CreateTopics with `cleanup.policy=compact` creates the
    /// topic with its config in metadata.json; an unknown policy is
    /// INVALID_CONFIG and creates nothing.
    #[test]
    fn create_topics_keeps_the_cleaning_config_in_the_topics_metadata() {
        use kafka_protocol::messages::{RequestKind, TopicName};

        let mut h = crate::kafka::handlers::admin_tests::cluster("kafka");
        let mut ask = |name: &str, policy: &str| {
            let topic = with_configs(&[
                (CLEANUP_POLICY, Some(policy)),
                (DELETE_RETENTION_MS, Some("0")),
            ])
            .with_name(TopicName(StrBytes::from_string(name.into())))
            .with_num_partitions(1)
            .with_replication_factor(2);
            let body =
                RequestKind::CreateTopics(CreateTopicsRequest::default().with_topics(vec![topic]));
            match h.ask(1, 7, body) {
                ResponseKind::CreateTopics(r) => r.topics[0].error_code,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(ask("cmp", "compact"), code::NONE);
        assert_eq!(ask("bad", "shred"), code::INVALID_CONFIG);
        let metadata = crate::engine::core::metadata::METADATA_FILE;
        let file: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(h.driver.data_dir().join(metadata)).unwrap(),
        )
        .unwrap();
        assert_eq!(
            file["topics"]["cmp"]["config"],
            serde_json::json!({"cleanup_policy": "compact", "delete_retention_ms": 0})
        );
        assert!(file["topics"].get("bad").is_none(), "{file}");
        assert!(
            file["topics"]["t"].get("config").is_none(),
            "the book's topic: {file}"
        );
    }
}
