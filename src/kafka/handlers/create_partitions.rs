//! CreatePartitions (versions 0-3): grows topics, as Kafka 4.4's
//! controller does (`ControllerApis.createPartitions`,
//! `ReplicationControlManager.createPartitions`). One result per topic:
//!
//! - a name given twice in the request: INVALID_REQUEST, "Duplicate topic
//!   name.", once per such name, ahead of the others (as Kafka lists
//!   them), and the name is not grown;
//! - a topic that does not exist: UNKNOWN_TOPIC_OR_PARTITION;
//! - a count not above the topic's: INVALID_PARTITIONS with Kafka's
//!   message ("Topic already has 3 partition(s)." / "The topic t
//!   currently has 3 partition(s); 2 would not be an increase.");
//! - a count past the engine's 256 partitions per topic:
//!   INVALID_PARTITIONS naming the cap, as CreateTopics;
//! - manual replica assignments: INVALID_REQUEST, as CreateTopics refuses
//!   them (the new partitions are placed as `create_topic` places them);
//! - past a recording's replica cap: POLICY_VIOLATION naming it;
//! - otherwise one `create_partitions` action (a recorded step), unless
//!   `validate_only`, which changes nothing. A refusal is no step.
//!
//! `timeout_ms` is not waited on, as CreateTopics does not wait: the
//! growth is done when the answer goes (docs/kafka-differences.md).

use std::collections::BTreeSet;

use kafka_protocol::messages::create_partitions_request::CreatePartitionsTopic;
use kafka_protocol::messages::create_partitions_response::CreatePartitionsTopicResult;
use kafka_protocol::messages::{CreatePartitionsRequest, CreatePartitionsResponse, ResponseKind};
use kafka_protocol::protocol::StrBytes;

use super::create_topics::MAX_PARTITIONS;
use crate::kafka::broker::{Answer, Broker};
use crate::kafka::errors::{code, name_of};
use crate::kafka::steps::{self, StepEnd};
use crate::session::Action;

/// Kafka's message for a topic named twice in one request.
const DUPLICATE: &str = "Duplicate topic name.";

pub fn handle(worker: &mut dyn Broker, request: &CreatePartitionsRequest) -> Answer {
    let mut seen = BTreeSet::new();
    let mut twice = Vec::new();
    for t in &request.topics {
        if !seen.insert(t.name.0.as_str()) && !twice.contains(&t.name) {
            twice.push(t.name.clone());
        }
    }
    let mut results = Vec::new();
    let mut notes = Vec::new();
    for name in &twice {
        notes.push(format!("{}: {DUPLICATE}", name.0.as_str()));
        results.push(
            CreatePartitionsTopicResult::default()
                .with_name(name.clone())
                .with_error_code(code::INVALID_REQUEST)
                .with_error_message(Some(StrBytes::from_static_str(DUPLICATE))),
        );
    }
    for t in request.topics.iter().filter(|t| !twice.contains(&t.name)) {
        let (error, message, note) = grow_one(worker, t, request.validate_only);
        notes.push(format!(
            "{}: {}",
            t.name.0.as_str(),
            note.unwrap_or_else(|| name_of(error))
        ));
        results.push(
            CreatePartitionsTopicResult::default()
                .with_name(t.name.clone())
                .with_error_code(error)
                .with_error_message(message.map(StrBytes::from_string)),
        );
    }
    Answer::now(
        ResponseKind::CreatePartitions(CreatePartitionsResponse::default().with_results(results)),
        notes.join(", "),
    )
}

/// One topic's error code, the response's message, and what the request
/// log says of it if more than the code's name.
fn grow_one(
    worker: &mut dyn Broker,
    t: &CreatePartitionsTopic,
    validate_only: bool,
) -> (i16, Option<String>, Option<String>) {
    let topic = t.name.0.to_string();
    let refused = |error: i16, message: String| (error, Some(message.clone()), Some(message));
    let Some(current) = worker.read(|s| s.partition_count(&topic).ok()) else {
        // Kafka's controller throws UnknownTopicOrPartitionException
        // without a message, so the response carries none.
        return (code::UNKNOWN_TOPIC_OR_PARTITION, None, None);
    };
    let count = t.count;
    if count == current as i32 {
        return refused(
            code::INVALID_PARTITIONS,
            format!("Topic already has {current} partition(s)."),
        );
    }
    if count < current as i32 {
        return refused(
            code::INVALID_PARTITIONS,
            format!(
                "The topic {topic} currently has {current} partition(s); {count} would not be an increase."
            ),
        );
    }
    if count as u32 > MAX_PARTITIONS {
        return refused(
            code::INVALID_PARTITIONS,
            format!(
                "invalid partition count {count}: the cap is {MAX_PARTITIONS} partitions per topic"
            ),
        );
    }
    // An empty list is no assignment (kafka-protocol's default for the
    // field; Kafka's clients send null).
    if t.assignments.as_ref().is_some_and(|a| !a.is_empty()) {
        return refused(
            code::INVALID_REQUEST,
            "manual replica assignments are not supported: the new partitions are placed as CreateTopics places a topic's".into(),
        );
    }
    let action = Action::CreatePartitions {
        topic,
        count: count as u32,
    };
    // The caps a recording may use (docs/recording-format.md, "Limits"),
    // as CreateTopics answers them.
    if let Err(e) = worker.refuse(&action) {
        return refused(
            code::POLICY_VIOLATION,
            format!("{e} (mk-tui serve's cap, docs/kafka-protocol.md \"CreatePartitions\")"),
        );
    }
    if validate_only {
        return (code::NONE, None, Some("valid (validate_only)".into()));
    }
    match steps::apply(worker, &action) {
        (step, StepEnd::Done) => (
            code::NONE,
            None,
            Some(format!("{current} -> {count} partitions (step {step})")),
        ),
        (_, StepEnd::Failed((e, m))) => (e, Some(m.clone()), Some(format!("{}: {m}", name_of(e)))),
        // Never: the growth does not wait for anything.
        (step, StepEnd::Pending) => (
            code::REQUEST_TIMED_OUT,
            None,
            Some(format!(
                "create_partitions (step {step}) waits in the cluster"
            )),
        ),
    }
}
