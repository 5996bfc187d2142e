//! DeleteTopics (versions 1-6): each topic named is one `delete_topic`
//! action (its partitions, their replicas' logs on every broker and its
//! groups' committed offsets go, crash-safe: `engine::core::cluster::delete`),
//! answered as Kafka 4.4's `ControllerApis.deleteTopics` answers:
//! - a topic that does not exist: UNKNOWN_TOPIC_OR_PARTITION, no step;
//! - a name given twice: INVALID_REQUEST ("Duplicate topic name.") for it,
//!   which is not deleted;
//! - a topic named by id only (v6): UNKNOWN_TOPIC_ID, no step (serve's
//!   topics have no ids: Metadata answers the null id, so a client has
//!   none to send);
//! - an empty name: INVALID_TOPIC_EXCEPTION, no step (Kafka never finds
//!   such a topic either, but says so as UNKNOWN_TOPIC_OR_PARTITION only
//!   for names it could hold).
//!
//! `error_message` (v5+) is Kafka's: null on success, the error's own
//! message otherwise. `timeout_ms` is read and ignored: the deletion is
//! done when the step is.

use std::collections::BTreeMap;

use kafka_protocol::messages::delete_topics_response::DeletableTopicResult;
use kafka_protocol::messages::{
    DeleteTopicsRequest, DeleteTopicsResponse, ResponseKind, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use crate::kafka::broker::{Answer, Broker};
use crate::kafka::errors::{code, name_of};
use crate::kafka::steps::{self, StepEnd};
use crate::session::Action;

/// Kafka's message for a duplicate name.
const DUPLICATE: &str = "Duplicate topic name.";

pub fn handle(worker: &mut dyn Broker, request: &DeleteTopicsRequest, version: i16) -> Answer {
    // v1-5 name topics in `topic_names`; v6 in `topics`, by name or id.
    let named: Vec<(Option<TopicName>, _)> = if version >= 6 {
        request
            .topics
            .iter()
            .map(|t| (t.name.clone(), t.topic_id))
            .collect()
    } else {
        request
            .topic_names
            .iter()
            .map(|n| (Some(n.clone()), Default::default()))
            .collect()
    };
    let mut times: BTreeMap<&str, usize> = BTreeMap::new();
    for (name, _) in &named {
        if let Some(n) = name {
            *times.entry(n.0.as_str()).or_default() += 1;
        }
    }
    let mut answered = std::collections::BTreeSet::new();
    let mut responses = Vec::new();
    let mut told = Vec::new();
    for (name, id) in &named {
        let (error, message) = match name {
            None => (code::UNKNOWN_TOPIC_ID, None),
            Some(n) if times[n.0.as_str()] > 1 => {
                if !answered.insert(n.0.to_string()) {
                    continue;
                }
                (code::INVALID_REQUEST, Some(DUPLICATE.to_string()))
            }
            Some(n) => delete_one(worker, n.0.as_str()),
        };
        let shown = name
            .as_ref()
            .map_or_else(|| format!("id {id}"), |n| n.0.to_string());
        told.push(match error {
            code::NONE => format!("{shown}: deleted"),
            e => format!("{shown}: {}", name_of(e)),
        });
        let message = match (error, message) {
            (code::NONE, _) => None,
            (_, Some(m)) => Some(m),
            (e, None) => Some(default_message(e).to_string()),
        };
        let result = DeletableTopicResult::default()
            .with_name(name.clone())
            .with_topic_id(*id)
            .with_error_code(error);
        responses.push(if version >= 5 {
            result.with_error_message(message.map(StrBytes::from_string))
        } else {
            result
        });
    }
    Answer::now(
        ResponseKind::DeleteTopics(DeleteTopicsResponse::default().with_responses(responses)),
        told.join(", "),
    )
}

/// One topic's deletion: its code, and the message of a refusal the
/// engine explained.
fn delete_one(worker: &mut dyn Broker, topic: &str) -> (i16, Option<String>) {
    if topic.is_empty() {
        return (code::INVALID_TOPIC_EXCEPTION, None);
    }
    if !worker.read(|s| s.metadata().topics().contains_key(topic)) {
        return (code::UNKNOWN_TOPIC_OR_PARTITION, None);
    }
    let action = Action::DeleteTopic {
        name: topic.to_string(),
    };
    match steps::apply(worker, &action) {
        (_, StepEnd::Done) => (code::NONE, None),
        (_, StepEnd::Failed((e, why))) => (e, Some(why)),
        // Never: a deletion does not wait.
        (_, StepEnd::Pending) => (code::REQUEST_TIMED_OUT, None),
    }
}

/// Kafka's own message for an error with no other (`Errors.message()`).
fn default_message(error: i16) -> &'static str {
    match error {
        code::UNKNOWN_TOPIC_OR_PARTITION => "This server does not host this topic-partition.",
        code::UNKNOWN_TOPIC_ID => "This server does not host this topic ID.",
        code::INVALID_TOPIC_EXCEPTION => {
            "The request attempted to perform an operation on an invalid topic."
        }
        _ => "The server experienced an unexpected error when processing the request.",
    }
}
