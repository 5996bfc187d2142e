//! DescribeCluster (versions 0-2, KIP-700): the cluster id, a controller
//! and the brokers, as a Kafka 4.4 broker answers it
//! (`AuthHelper.computeDescribeClusterResponse` with the broker endpoint
//! type). Reads only.
//!
//! - The brokers are those running; a stopped broker is what Kafka calls
//!   fenced (it stopped heartbeating to the controller), listed only when
//!   v2's `include_fenced_brokers` asks, with `is_fenced`. Metadata lists
//!   every broker (docs/kafka-protocol.md, *Stopping and starting a
//!   broker*).
//! - `controller_id`: the first running broker, as Metadata names it;
//!   Kafka's broker names a random live broker.
//! - An endpoint type other than the broker's (1) is refused as Kafka
//!   refuses it: `MISMATCHED_ENDPOINT_TYPE` for the controller's (2),
//!   `UNSUPPORTED_ENDPOINT_TYPE` for an unknown one, `INVALID_REQUEST`
//!   for either at v0, with Kafka's messages.
//! - `cluster_authorized_operations`: Kafka's default (`i32::MIN`) unless
//!   asked; asked, every operation Kafka allows on the cluster without an
//!   authorizer.

use kafka_protocol::messages::describe_cluster_response::DescribeClusterBroker;
use kafka_protocol::messages::{
    BrokerId, DescribeClusterRequest, DescribeClusterResponse, ResponseKind,
};
use kafka_protocol::protocol::StrBytes;

use super::metadata::CLUSTER_ID;
use crate::kafka::broker::{Answer, Broker};
use crate::kafka::errors::{code, name_of};

/// Kafka's `EndpointType.BROKER`.
const BROKER_ENDPOINT: i8 = 1;
/// Kafka's `EndpointType.CONTROLLER`.
const CONTROLLER_ENDPOINT: i8 = 2;

/// The cluster operations Kafka allows without an authorizer
/// (`AclEntry.supportedOperations(CLUSTER)` as a bit field of
/// `AclOperation` codes): CREATE 5, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9,
/// DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12.
const CLUSTER_OPERATIONS: i32 =
    (1 << 5) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12);

pub fn handle(worker: &mut dyn Broker, r: &DescribeClusterRequest, version: i16) -> Answer {
    let name = |t: i8| {
        if t == BROKER_ENDPOINT {
            "BROKER"
        } else {
            "CONTROLLER"
        }
    };
    let refusal = match r.endpoint_type {
        BROKER_ENDPOINT => None,
        CONTROLLER_ENDPOINT => Some((
            code::MISMATCHED_ENDPOINT_TYPE,
            format!(
                "The request was sent to an endpoint of type {}, but we wanted an endpoint of type {}",
                name(BROKER_ENDPOINT),
                name(CONTROLLER_ENDPOINT)
            ),
        )),
        other => Some((
            code::UNSUPPORTED_ENDPOINT_TYPE,
            format!("Unsupported endpoint type {other}"),
        )),
    };
    if let Some((error, message)) = refusal {
        let error = if version == 0 {
            code::INVALID_REQUEST
        } else {
            error
        };
        let response = DescribeClusterResponse::default()
            .with_error_code(error)
            .with_error_message(Some(StrBytes::from_string(message.clone())));
        return Answer::now(
            ResponseKind::DescribeCluster(response),
            format!("{}: {message}", name_of(error)),
        );
    }
    let stopped = worker.stopped_brokers();
    let fenced_too = version >= 2 && r.include_fenced_brokers;
    let brokers: Vec<DescribeClusterBroker> = worker
        .brokers()
        .iter()
        .filter(|b| fenced_too || !stopped.contains(&b.broker))
        .map(|b| {
            let broker = DescribeClusterBroker::default()
                .with_broker_id(BrokerId(b.broker as i32))
                .with_host(StrBytes::from_string(b.host.clone()))
                .with_port(i32::from(b.port));
            if version >= 2 {
                broker.with_is_fenced(stopped.contains(&b.broker))
            } else {
                broker
            }
        })
        .collect();
    let controller = worker
        .brokers()
        .iter()
        .find(|b| !stopped.contains(&b.broker))
        .map_or(-1, |b| b.broker as i32);
    let mut response = DescribeClusterResponse::default()
        .with_cluster_id(StrBytes::from_static_str(CLUSTER_ID))
        .with_controller_id(BrokerId(controller))
        .with_brokers(brokers)
        .with_cluster_authorized_operations(if r.include_cluster_authorized_operations {
            CLUSTER_OPERATIONS
        } else {
            i32::MIN
        });
    if version >= 1 {
        response = response.with_endpoint_type(BROKER_ENDPOINT);
    }
    let outcome = format!(
        "{} broker(s), controller {controller}",
        response.brokers.len()
    );
    Answer::now(ResponseKind::DescribeCluster(response), outcome)
}
