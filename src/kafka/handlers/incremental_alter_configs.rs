//! IncrementalAlterConfigs (versions 0-1, Kafka 4.4's range): SET, DELETE,
//! APPEND and SUBTRACT of a topic's configs, each resource judged and
//! applied on its own as one `alter_topic_config` step
//! ([`crate::kafka::topic_alter`]), so `kafka-configs.sh --alter` and an
//! AdminClient's `incrementalAlterConfigs` change what serve's cleaner
//! does. An unknown operation id is UNKNOWN_SERVER_ERROR without a
//! message, as Kafka 4.4 answers it.

use kafka_protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::{
    IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse, ResponseKind,
};
use kafka_protocol::protocol::StrBytes;

use crate::kafka::broker::{Answer, Broker};
use crate::kafka::errors::{code, name_of};
use crate::kafka::topic_alter::{Change, Op, alter};

pub fn handle(worker: &mut dyn Broker, request: &IncrementalAlterConfigsRequest) -> Answer {
    let mut outcomes = Vec::new();
    let responses = request
        .resources
        .iter()
        .map(|r| {
            let name = r.resource_name.as_str();
            let changes: Result<Vec<Change>, _> = r
                .configs
                .iter()
                .map(|c| {
                    // Kafka 4.4 fails on an unknown id: UNKNOWN_SERVER_ERROR,
                    // no message (its broker's log names it).
                    let op = Op::from_id(c.config_operation)
                        .ok_or((code::UNKNOWN_SERVER_ERROR, String::new()))?;
                    Ok(Change {
                        name: c.name.as_str(),
                        op,
                        value: c.value.as_ref().map(|v| v.as_str()),
                    })
                })
                .collect();
            let result = changes.and_then(|changes| {
                alter(
                    worker,
                    r.resource_type,
                    name,
                    &changes,
                    false,
                    request.validate_only,
                )
            });
            let response = AlterConfigsResourceResponse::default()
                .with_resource_type(r.resource_type)
                .with_resource_name(r.resource_name.clone());
            match result {
                Ok(said) => {
                    outcomes.push(said);
                    response
                }
                Err((error, message)) => {
                    outcomes.push(format!("{name}: {}", name_of(error)));
                    let message = (!message.is_empty()).then(|| StrBytes::from_string(message));
                    response.with_error_code(error).with_error_message(message)
                }
            }
        })
        .collect();
    Answer::now(
        ResponseKind::IncrementalAlterConfigs(
            IncrementalAlterConfigsResponse::default().with_responses(responses),
        ),
        outcomes.join(", "),
    )
}
