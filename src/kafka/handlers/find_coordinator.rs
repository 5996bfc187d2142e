//! FindCoordinator (versions 0-4) for key types group (0) and transaction
//! (1): the coordinator of every group and transactional id is the first
//! configured broker that is running (docs/kafka-protocol.md). The engine
//! has one transaction coordinator and one offset store for the whole
//! cluster, so any broker could answer; naming one that is up keeps a
//! client's coordinator connection on a live listener. With every broker
//! stopped the answer is COORDINATOR_NOT_AVAILABLE, which clients retry.
//! Reads only.

use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::{
    BrokerId, FindCoordinatorRequest, FindCoordinatorResponse, ResponseKind,
};
use kafka_protocol::protocol::StrBytes;

use crate::kafka::broker::{Advertised, Answer, Broker};
use crate::kafka::errors::{code, name_of};

/// The broker that coordinates groups and transactions now: the first
/// configured one that is not stopped.
pub fn coordinator(worker: &dyn Broker) -> Option<Advertised> {
    let stopped = worker.stopped_brokers();
    worker
        .brokers()
        .iter()
        .find(|b| !stopped.contains(&b.broker))
        .cloned()
}

pub fn handle(worker: &mut dyn Broker, request: &FindCoordinatorRequest, version: i16) -> Answer {
    let found = coordinator(worker);
    let kind = |t: i8| match t {
        0 => Ok("group"),
        1 => Ok("transaction"),
        other => Err(format!(
            "key type {other} is not served (0 group, 1 transaction)"
        )),
    };
    let one = |key: &StrBytes| -> Coordinator {
        let c = Coordinator::default().with_key(key.clone());
        match (kind(request.key_type), &found) {
            (Err(message), _) => c
                .with_node_id(BrokerId(-1))
                .with_error_code(code::INVALID_REQUEST)
                .with_error_message(Some(StrBytes::from_string(message))),
            (Ok(_), None) => c
                .with_node_id(BrokerId(-1))
                .with_error_code(code::COORDINATOR_NOT_AVAILABLE)
                .with_error_message(Some(StrBytes::from_static_str("every broker is stopped"))),
            (Ok(_), Some(b)) => c
                .with_node_id(BrokerId(b.broker as i32))
                .with_host(StrBytes::from_string(b.host.clone()))
                .with_port(i32::from(b.port)),
        }
    };
    let what = kind(request.key_type).unwrap_or("unknown");
    if version >= 4 {
        let coordinators: Vec<Coordinator> = request.coordinator_keys.iter().map(one).collect();
        let outcome = coordinators
            .iter()
            .map(|c| match c.error_code {
                0 => format!("{what} {:?}: broker {}", c.key.as_str(), c.node_id.0),
                e => format!("{what} {:?}: {}", c.key.as_str(), name_of(e)),
            })
            .collect::<Vec<_>>()
            .join(", ");
        let response = FindCoordinatorResponse::default().with_coordinators(coordinators);
        return Answer::now(ResponseKind::FindCoordinator(response), outcome);
    }
    let c = one(&request.key);
    let outcome = match c.error_code {
        0 => format!("{what} {:?}: broker {}", request.key.as_str(), c.node_id.0),
        e => format!("{what} {:?}: {}", request.key.as_str(), name_of(e)),
    };
    let response = FindCoordinatorResponse::default()
        .with_error_code(c.error_code)
        .with_error_message(if version >= 1 { c.error_message } else { None })
        .with_node_id(c.node_id)
        .with_host(c.host)
        .with_port(c.port);
    Answer::now(ResponseKind::FindCoordinator(response), outcome)
}
