//! DeleteTopics (versions 1-6): refused for every topic, as Apache Kafka
//! refuses it with `delete.topic.enable=false`: TOPIC_DELETION_DISABLED
//! from v3, INVALID_REQUEST below (Kafka's `ControllerApis`), before
//! looking the topics up, with a message saying why (v5+). The engine has
//! no action that removes a topic and its logs (docs/kafka-differences.md,
//! "DeleteTopics"); answering keeps the client's connection, where an API
//! not served would close it.

use kafka_protocol::messages::delete_topics_response::DeletableTopicResult;
use kafka_protocol::messages::{DeleteTopicsRequest, DeleteTopicsResponse, ResponseKind};
use kafka_protocol::protocol::StrBytes;

use crate::kafka::broker::Answer;
use crate::kafka::errors::{code, name_of};

/// Why, in each topic's `error_message`.
const WHY: &str = "topic deletion is disabled in mk-tui serve: the engine has no action that \
                   removes a topic and its data (docs/kafka-differences.md)";

pub fn handle(request: &DeleteTopicsRequest, version: i16) -> Answer {
    let error = if version >= 3 {
        code::TOPIC_DELETION_DISABLED
    } else {
        code::INVALID_REQUEST
    };
    // v0-5 name topics in `topic_names`; v6 in `topics`, by name or id.
    let named: Vec<DeletableTopicResult> = if version >= 6 {
        request
            .topics
            .iter()
            .map(|t| {
                DeletableTopicResult::default()
                    .with_name(t.name.clone())
                    .with_topic_id(t.topic_id)
            })
            .collect()
    } else {
        request
            .topic_names
            .iter()
            .map(|n| DeletableTopicResult::default().with_name(Some(n.clone())))
            .collect()
    };
    let names: Vec<String> = named
        .iter()
        .map(|r| {
            r.name
                .as_ref()
                .map_or("(by id)".into(), |n| n.0.to_string())
        })
        .collect();
    let responses = named
        .into_iter()
        .map(|r| {
            let r = r.with_error_code(error);
            if version >= 5 {
                r.with_error_message(Some(StrBytes::from_static_str(WHY)))
            } else {
                r
            }
        })
        .collect();
    Answer::now(
        ResponseKind::DeleteTopics(DeleteTopicsResponse::default().with_responses(responses)),
        format!("{}: {}", names.join(", "), name_of(error)),
    )
}
