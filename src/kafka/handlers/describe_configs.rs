//! DescribeConfigs (versions 1-4, Kafka 4.4's range): a topic's configs
//! and the answering broker's, from what the engine keeps and serve runs
//! with ([`crate::kafka::configs`]), so `kafka-topics.sh --describe`,
//! `kafka-configs.sh --describe` and an AdminClient's `describe_configs`
//! work. Reads only: nothing is recorded.
//!
//! Each resource is answered as Kafka's `ConfigHelper` answers it:
//! - a topic (type 2): a bad name is INVALID_TOPIC_EXCEPTION, a missing
//!   topic UNKNOWN_TOPIC_OR_PARTITION (an empty message, as Kafka's);
//! - a broker (type 4): its own id gives its configs; an empty name the
//!   cluster's dynamic defaults (none: serve alters no broker config); another
//!   id, or a name that is not a number, INVALID_REQUEST with Kafka's
//!   message (a client sends a broker's resource to that broker);
//! - any other type (broker loggers, client metrics, groups):
//!   INVALID_REQUEST, naming the type, as Kafka answers a type it does not
//!   know; serve keeps none of their configs.
//!
//! `configuration_keys` null or empty asks for every config; a key serve
//! does not list is left out, as Kafka leaves out a key it does not know.
//! Synonyms are sent only when asked (`include_synonyms`), documentation
//! likewise (v3+, `include_documentation`).

use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResult, DescribeConfigsSynonym,
};
use kafka_protocol::messages::{DescribeConfigsRequest, DescribeConfigsResponse, ResponseKind};
use kafka_protocol::protocol::StrBytes;

use crate::kafka::broker::{Answer, Broker, validate_topic_name};
use crate::kafka::configs::{BrokerSettings, Entry, broker_entries, topic_entries};
use crate::kafka::errors::{code, name_of};

/// Kafka's `ConfigResource.Type` ids serve answers.
pub const TOPIC: i8 = 2;
pub const BROKER: i8 = 4;

pub fn handle(
    worker: &mut dyn Broker,
    broker: u32,
    request: &DescribeConfigsRequest,
    version: i16,
) -> Answer {
    let settings = BrokerSettings {
        id: broker,
        auto_create_topics: worker.auto_create_topics(),
        fetch_max_bytes: worker.fetch_max_bytes(),
    };
    let mut outcomes = Vec::new();
    let results = request
        .resources
        .iter()
        .map(|r| {
            let result = match describe(worker, &settings, r) {
                Ok(entries) => {
                    outcomes.push(format!(
                        "{} {}: {} configs",
                        kind_name(r.resource_type),
                        r.resource_name.as_str(),
                        entries.len()
                    ));
                    let configs = entries
                        .iter()
                        .map(|e| wire_entry(e, request, version))
                        .collect();
                    // Kafka's default message, an empty string.
                    DescribeConfigsResult::default()
                        .with_error_message(Some(StrBytes::default()))
                        .with_configs(configs)
                }
                Err((error, message)) => {
                    outcomes.push(format!(
                        "{} {}: {}",
                        kind_name(r.resource_type),
                        r.resource_name.as_str(),
                        name_of(error)
                    ));
                    DescribeConfigsResult::default()
                        .with_error_code(error)
                        .with_error_message(Some(StrBytes::from_string(
                            message.unwrap_or_default(),
                        )))
                }
            };
            result
                .with_resource_type(r.resource_type)
                .with_resource_name(r.resource_name.clone())
        })
        .collect();
    Answer::now(
        ResponseKind::DescribeConfigs(DescribeConfigsResponse::default().with_results(results)),
        outcomes.join(", "),
    )
}

fn kind_name(resource_type: i8) -> String {
    match resource_type {
        TOPIC => "topic".into(),
        BROKER => "broker".into(),
        other => format!("type {other}"),
    }
}

/// One resource's configs, filtered by its `configuration_keys`, or its
/// Kafka code and message.
fn describe(
    worker: &mut dyn Broker,
    settings: &BrokerSettings,
    r: &DescribeConfigsResource,
) -> Result<Vec<Entry>, (i16, Option<String>)> {
    let name = r.resource_name.as_str();
    let entries = match r.resource_type {
        TOPIC => {
            validate_topic_name(name)
                .map_err(|e| (code::INVALID_TOPIC_EXCEPTION, Some(e.to_string())))?;
            worker
                .read(|s| {
                    let topic = s.metadata().topics().get(name)?;
                    Some(topic_entries(topic, s.config()))
                })
                .ok_or((code::UNKNOWN_TOPIC_OR_PARTITION, None))?
        }
        BROKER if name.is_empty() => Vec::new(),
        BROKER => {
            let id: i64 = name.parse().map_err(|_| {
                (
                    code::INVALID_REQUEST,
                    Some(format!("Broker id must be an integer, but it is: {name}")),
                )
            })?;
            if id != i64::from(settings.id) {
                return Err((
                    code::INVALID_REQUEST,
                    Some(format!(
                        "Unexpected broker id, expected {} or empty string, but received {name}",
                        settings.id
                    )),
                ));
            }
            worker.read(|s| broker_entries(settings, s.config()))
        }
        other => {
            return Err((
                code::INVALID_REQUEST,
                Some(format!(
                    "Unsupported resource type: {other} (mk-tui serve describes topics (2) and brokers (4))"
                )),
            ));
        }
    };
    Ok(match r.configuration_keys.as_deref() {
        None | Some([]) => entries,
        Some(keys) => entries
            .into_iter()
            .filter(|e| keys.iter().any(|k| k.as_str() == e.name))
            .collect(),
    })
}

fn wire_entry(
    e: &Entry,
    request: &DescribeConfigsRequest,
    version: i16,
) -> DescribeConfigsResourceResult {
    let synonyms = if request.include_synonyms {
        e.synonyms
            .iter()
            .map(|s| {
                DescribeConfigsSynonym::default()
                    .with_name(StrBytes::from_static_str(s.name))
                    .with_value(s.value.clone().map(StrBytes::from_string))
                    .with_source(s.source as i8)
            })
            .collect()
    } else {
        Vec::new()
    };
    let documentation =
        (request.include_documentation && version >= 3).then(|| StrBytes::from_static_str(e.doc));
    DescribeConfigsResourceResult::default()
        .with_name(StrBytes::from_static_str(e.name))
        .with_value(e.value().map(|v| StrBytes::from_string(v.to_string())))
        .with_read_only(e.read_only)
        .with_config_source(e.source() as i8)
        .with_is_sensitive(false)
        .with_synonyms(synonyms)
        .with_config_type(e.config_type as i8)
        .with_documentation(documentation)
}
