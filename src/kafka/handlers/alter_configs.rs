//! AlterConfigs (versions 0-2, Kafka 4.4's range), the old whole-set API:
//! a topic resource's configs become the topic's whole set, every config
//! it does not name going back to its default, applied as one
//! `alter_topic_config` step ([`crate::kafka::topic_alter`]); kafka-python's
//! `alter_configs` and confluent-kafka's `alter_configs` send it.

use kafka_protocol::messages::alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::{AlterConfigsRequest, AlterConfigsResponse, ResponseKind};
use kafka_protocol::protocol::StrBytes;

use crate::kafka::broker::{Answer, Broker};
use crate::kafka::errors::name_of;
use crate::kafka::topic_alter::{Change, Op, alter};

pub fn handle(worker: &mut dyn Broker, request: &AlterConfigsRequest) -> Answer {
    let mut outcomes = Vec::new();
    let responses = request
        .resources
        .iter()
        .map(|r| {
            let name = r.resource_name.as_str();
            let changes: Vec<Change> = r
                .configs
                .iter()
                .map(|c| Change {
                    name: c.name.as_str(),
                    op: Op::Set,
                    value: c.value.as_ref().map(|v| v.as_str()),
                })
                .collect();
            let result = alter(
                worker,
                r.resource_type,
                name,
                &changes,
                true,
                request.validate_only,
            );
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
                    response
                        .with_error_code(error)
                        .with_error_message(Some(StrBytes::from_string(message)))
                }
            }
        })
        .collect();
    Answer::now(
        ResponseKind::AlterConfigs(AlterConfigsResponse::default().with_responses(responses)),
        outcomes.join(", "),
    )
}
