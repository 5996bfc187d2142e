//! DeleteGroups (versions 0-2): deletes consumer groups with all their
//! committed offsets, as Kafka's group coordinator does
//! (`GroupCoordinatorService.deleteGroups`, `ClassicGroup.validateDeleteGroup`).
//! One result per group id, in the request's order:
//!
//! - an empty id: INVALID_GROUP_ID;
//! - a broker that is not the coordinator FindCoordinator names:
//!   NOT_COORDINATOR (the client asks the coordinator again);
//! - a group the server has members of, or that is rebalancing:
//!   NON_EMPTY_GROUP;
//! - a group neither the engine (committed offsets, a group of recorded
//!   `join_group`s) nor the server (members seen) knows:
//!   GROUP_ID_NOT_FOUND, with no step (a refusal changes nothing);
//! - a group only the server knows (members that left without
//!   committing): forgotten here, NONE, with no step, as its joins were
//!   never steps;
//! - otherwise one `delete_group` action (a recorded step, durable in
//!   `offsets.json` as a commit is): the engine deletes the group and all
//!   its committed offsets.

use kafka_protocol::messages::delete_groups_response::DeletableGroupResult;
use kafka_protocol::messages::{DeleteGroupsRequest, DeleteGroupsResponse, ResponseKind};

use super::find_coordinator::coordinator;
use crate::kafka::broker::{Answer, Broker};
use crate::kafka::clock::RealTime;
use crate::kafka::errors::{code, name_of};
use crate::kafka::steps::{self, StepEnd};
use crate::session::Action;

pub fn handle(worker: &mut dyn Broker, broker: u32, request: &DeleteGroupsRequest) -> Answer {
    let here = coordinator(worker).is_some_and(|c| c.broker == broker);
    let mut results = Vec::new();
    let mut notes = Vec::new();
    for id in &request.groups_names {
        let group = id.0.to_string();
        let (error, note) = delete_one(worker, here, &group);
        notes.push(format!(
            "{group:?}: {}",
            note.unwrap_or_else(|| name_of(error))
        ));
        results.push(
            DeletableGroupResult::default()
                .with_group_id(id.clone())
                .with_error_code(error),
        );
    }
    Answer::now(
        ResponseKind::DeleteGroups(DeleteGroupsResponse::default().with_results(results)),
        notes.join(", "),
    )
}

/// One group's error code, and what the request log says of it if more
/// than the code's name.
fn delete_one(worker: &mut dyn Broker, here: bool, group: &str) -> (i16, Option<String>) {
    if group.is_empty() {
        return (code::INVALID_GROUP_ID, None);
    }
    if !here {
        return (code::NOT_COORDINATOR, None);
    }
    if worker.groups_mut().not_empty(group, RealTime::now()) {
        return (code::NON_EMPTY_GROUP, None);
    }
    let in_engine = worker
        .read(|s| s.offsets().groups().contains_key(group) || s.groups().group(group).is_some());
    if !in_engine {
        // Nothing to delete in the engine: no step, as a refusal or a
        // read records none (the engine's own answer would be the same
        // GroupIdNotFound).
        if worker.groups_mut().forget_empty(group) {
            return (code::NONE, Some("deleted (no committed offsets)".into()));
        }
        return (code::GROUP_ID_NOT_FOUND, None);
    }
    let action = Action::DeleteGroup {
        group: group.to_string(),
    };
    match steps::apply(worker, &action) {
        (step, StepEnd::Done) => {
            worker.groups_mut().forget_empty(group);
            (code::NONE, Some(format!("deleted (step {step})")))
        }
        (_, StepEnd::Failed((e, m))) => (e, Some(format!("{}: {m}", name_of(e)))),
        // Never: the deletion does not wait for anything.
        (step, StepEnd::Pending) => (
            code::REQUEST_TIMED_OUT,
            Some(format!("delete_group (step {step}) waits in the cluster")),
        ),
    }
}
