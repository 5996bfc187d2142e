//! What IncrementalAlterConfigs and AlterConfigs share: one resource's
//! changes judged against the topic as it is, as Kafka 4.4's
//! `ConfigAdminManager` (on the broker) and `ConfigurationControlManager`
//! (on the controller) judge them, and the topic's whole new config
//! applied as one `alter_topic_config` step. A refused resource records
//! no step; `validate_only` judges and records nothing.
//!
//! Kafka's answers kept (measured on Kafka 4.4 in raw frames,
//! tests/serve/alter_configs.rs): duplicate config keys in one resource,
//! a null value but for DELETE, and a topic resource with an empty name
//! are INVALID_REQUEST; an unknown operation id UNKNOWN_SERVER_ERROR
//! without a message; a bad topic
//! name INVALID_TOPIC_EXCEPTION; a missing topic
//! UNKNOWN_TOPIC_OR_PARTITION; APPEND or SUBTRACT of a config that is not
//! a list (only `cleanup.policy` is), a bad value, or a config Kafka does
//! not know, INVALID_CONFIG. Serve's own refusals, each INVALID_CONFIG
//! naming the config (docs/kafka-differences.md, "IncrementalAlterConfigs
//! and AlterConfigs"): a Kafka topic config the engine does not keep
//! (the cluster's settings are fixed at serve's start), both cleanup
//! policies at once, and `message.timestamp.type` changed after the
//! topic's creation (a LogAppendTime topic's records carry the engine
//! clock, a CreateTime topic's Unix time: one log cannot mix the two).
//! A broker resource is refused with INVALID_REQUEST, as Kafka refuses a
//! broker config it cannot update dynamically: serve's configuration is
//! fixed at its start.

use crate::engine::core::metadata::{CleanupPolicy, TimestampType, TopicConfig};
use crate::kafka::broker::{Broker, validate_topic_name};
use crate::kafka::errors::{code, code_of};
use crate::kafka::handlers::create_topics::{
    CLEANUP_POLICY, DELETE_RETENTION_MS, MIN_INSYNC_REPLICAS, RETENTION_BYTES, RETENTION_MS,
    TIMESTAMP_TYPE, set_setting,
};
use crate::session::{Action, Outcome};

/// Kafka's `ConfigResource.Type` ids.
pub const TOPIC: i8 = 2;
pub const BROKER: i8 = 4;

/// Kafka's `AlterConfigOp.OpType` ids (IncrementalAlterConfigs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Set,
    Delete,
    Append,
    Subtract,
}

impl Op {
    pub fn from_id(id: i8) -> Option<Op> {
        match id {
            0 => Some(Op::Set),
            1 => Some(Op::Delete),
            2 => Some(Op::Append),
            3 => Some(Op::Subtract),
            _ => None,
        }
    }

    fn kafka_name(self) -> &'static str {
        match self {
            Op::Set => "SET",
            Op::Delete => "DELETE",
            Op::Append => "APPEND",
            Op::Subtract => "SUBTRACT",
        }
    }
}

/// One config change of a resource, as the request gives it.
#[derive(Debug, Clone, Copy)]
pub struct Change<'a> {
    pub name: &'a str,
    pub op: Op,
    pub value: Option<&'a str>,
}

/// A refusal: Kafka's code and message.
pub type Refusal = (i16, String);

/// Every topic config Kafka 4.4 knows (`TopicConfig`'s names): a change
/// of one serve does not keep is refused as not supported, of any other
/// name as Kafka refuses a name it does not know.
const KAFKA_TOPIC_CONFIGS: &[&str] = &[
    "cleanup.policy",
    "compression.gzip.level",
    "compression.lz4.level",
    "compression.type",
    "compression.zstd.level",
    "delete.retention.ms",
    "diskless.enable",
    "file.delete.delay.ms",
    "flush.messages",
    "flush.ms",
    "follower.replication.throttled.replicas",
    "index.interval.bytes",
    "leader.replication.throttled.replicas",
    "local.retention.bytes",
    "local.retention.ms",
    "max.compaction.lag.ms",
    "max.message.bytes",
    "message.downconversion.enable",
    "message.timestamp.after.max.ms",
    "message.timestamp.before.max.ms",
    "message.timestamp.difference.max.ms",
    "message.timestamp.type",
    "min.cleanable.dirty.ratio",
    "min.compaction.lag.ms",
    "min.insync.replicas",
    "preallocate",
    "remote.log.copy.disable",
    "remote.log.delete.on.disable",
    "remote.storage.enable",
    "retention.bytes",
    "retention.ms",
    "segment.bytes",
    "segment.index.bytes",
    "segment.jitter.ms",
    "segment.ms",
    "unclean.leader.election.enable",
];

/// Alters one resource: `whole` (AlterConfigs) replaces the topic's whole
/// set, configs not named going back to their defaults; otherwise
/// (IncrementalAlterConfigs) each change applies to the set as it is.
/// What the server's log says of it, or the refusal.
pub fn alter(
    worker: &mut dyn Broker,
    resource_type: i8,
    name: &str,
    changes: &[Change],
    whole: bool,
    validate_only: bool,
) -> Result<String, Refusal> {
    let mut seen = std::collections::BTreeSet::new();
    if !changes.iter().all(|c| seen.insert(c.name)) {
        return Err((
            code::INVALID_REQUEST,
            "Error due to duplicate config keys".into(),
        ));
    }
    // Kafka's broker refuses a null value before anything else but
    // duplicates, for every operation but DELETE.
    if let Some(c) = changes
        .iter()
        .find(|c| c.op != Op::Delete && c.value.is_none())
    {
        return Err((
            code::INVALID_REQUEST,
            format!("Null value not supported for : {}", c.name),
        ));
    }
    match resource_type {
        TOPIC => {}
        BROKER if changes.is_empty() => return Ok(format!("broker {name}: nothing to change")),
        BROKER => {
            let names: Vec<&str> = changes.iter().map(|c| c.name).collect();
            return Err((
                code::INVALID_REQUEST,
                format!(
                    "Cannot update these configs dynamically: [{}] (mk-tui serve's broker configs are fixed at its start)",
                    names.join(", ")
                ),
            ));
        }
        other => {
            return Err((
                code::INVALID_REQUEST,
                format!("Unsupported resource type: {other} (mk-tui serve alters topics (2) only)"),
            ));
        }
    }
    if name.is_empty() {
        return Err((
            code::INVALID_REQUEST,
            "Default topic resources are not allowed.".into(),
        ));
    }
    validate_topic_name(name).map_err(|e| (code::INVALID_TOPIC_EXCEPTION, e.to_string()))?;
    let current = worker
        .read(|s| {
            s.metadata()
                .topics()
                .get(name)
                .map(|t| (t.timestamp_type, t.config))
        })
        .ok_or_else(|| {
            (
                code::UNKNOWN_TOPIC_OR_PARTITION,
                format!("The topic '{name}' does not exist."),
            )
        })?;
    let next = changed(current, changes, whole)?;
    if next.0 != current.0 {
        return Err((
            code::INVALID_CONFIG,
            format!(
                "Invalid value {} for configuration {TIMESTAMP_TYPE}: mk-tui serve keeps a topic's timestamp type from its creation ({:?}): its log cannot mix the engine clock's times with Unix times (docs/kafka-differences.md)",
                kind_name(next.0),
                current.0
            ),
        ));
    }
    let action = Action::AlterTopicConfig {
        topic: name.to_string(),
        config: next.1,
    };
    if let Err(e) = worker.refuse(&action) {
        return Err((code::INVALID_CONFIG, e.to_string()));
    }
    if validate_only {
        return Ok(format!("topic {name}: valid"));
    }
    match worker.apply(&action) {
        Outcome::Error(e) => Err((
            e.engine().map_or(code::INVALID_REQUEST, code_of),
            e.to_string(),
        )),
        _ => Ok(format!("topic {name} altered")),
    }
}

fn kind_name(kind: TimestampType) -> &'static str {
    match kind {
        TimestampType::CreateTime => "CreateTime",
        TimestampType::LogAppendTime => "LogAppendTime",
    }
}

/// The topic's settings after `changes`, from `current` (or, `whole`,
/// from the defaults).
fn changed(
    current: (TimestampType, TopicConfig),
    changes: &[Change],
    whole: bool,
) -> Result<(TimestampType, TopicConfig), Refusal> {
    let defaults = (TimestampType::CreateTime, TopicConfig::default());
    let mut next = if whole { defaults } else { current };
    for c in changes {
        if !KAFKA_TOPIC_CONFIGS.contains(&c.name) {
            return Err((
                code::INVALID_CONFIG,
                format!("Unknown topic config name: {}", c.name),
            ));
        }
        match c.op {
            Op::Set => set_setting(&mut next, c.name, c.value)?,
            Op::Delete => reset(&mut next, c.name)?,
            Op::Append | Op::Subtract if c.name != CLEANUP_POLICY => {
                return Err((
                    code::INVALID_CONFIG,
                    format!(
                        "Can't {} to key {} because its type is not LIST.",
                        c.op.kafka_name(),
                        c.name
                    ),
                ));
            }
            Op::Append | Op::Subtract => {
                let policies = list_change(next.1.cleanup_policy, c.op, c.value);
                if policies.is_empty() {
                    return Err((
                        code::INVALID_CONFIG,
                        format!(
                            "Invalid value  for configuration {CLEANUP_POLICY}: mk-tui serve takes delete or compact, not none (docs/kafka-differences.md)"
                        ),
                    ));
                }
                set_setting(&mut next, c.name, Some(&policies.join(",")))?;
            }
        }
    }
    Ok(next)
}

/// `name` back to its default (DELETE): not set, as a new topic's.
fn reset(next: &mut (TimestampType, TopicConfig), name: &str) -> Result<(), Refusal> {
    let defaults = TopicConfig::default();
    let config = &mut next.1;
    match name {
        TIMESTAMP_TYPE => next.0 = TimestampType::CreateTime,
        CLEANUP_POLICY => config.cleanup_policy = defaults.cleanup_policy,
        RETENTION_MS => config.retention_ms = defaults.retention_ms,
        RETENTION_BYTES => config.retention_bytes = defaults.retention_bytes,
        DELETE_RETENTION_MS => config.delete_retention_ms = defaults.delete_retention_ms,
        MIN_INSYNC_REPLICAS => config.min_insync_replicas = defaults.min_insync_replicas,
        // A config serve does not keep: refused with set_setting's message.
        other => set_setting(next, other, None)?,
    }
    Ok(())
}

/// `cleanup.policy`'s list after APPEND (values not already there, in
/// order) or SUBTRACT (every value named removed), as Kafka's
/// `ConfigurationControlManager` changes a list config.
fn list_change(policy: CleanupPolicy, op: Op, value: Option<&str>) -> Vec<String> {
    let mut list: Vec<String> = policy.kafka_name().split(',').map(str::to_string).collect();
    let given = value
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty());
    for v in given {
        match op {
            Op::Append if !list.iter().any(|l| l == v) => list.push(v.to_string()),
            Op::Subtract => list.retain(|l| l != v),
            _ => {}
        }
    }
    list
}
