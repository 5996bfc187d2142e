//! JoinGroup (versions 0-9), SyncGroup (0-5), Heartbeat (0-4) and
//! LeaveGroup (0-5) for groups of one member ([`crate::kafka::groups`]):
//! enough for a consumer's `subscribe()`. The one member is the leader;
//! its JoinGroup is answered at once with itself as the only member and
//! its first protocol (its assignor), a new generation each time; its
//! SyncGroup carries the assignment it made, which is answered back. A
//! second member while the first is alive gets GROUP_MAX_SIZE_REACHED.
//! None of this changes the engine (no action): membership is the
//! server's.

use std::time::Duration;

use bytes::Bytes;
use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::leave_group_response::MemberResponse;
use kafka_protocol::messages::{
    HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest,
    LeaveGroupResponse, ResponseKind, SyncGroupRequest, SyncGroupResponse,
};
use kafka_protocol::protocol::StrBytes;

use crate::kafka::broker::{Answer, Broker};
use crate::kafka::clock::RealTime;
use crate::kafka::errors::{code, name_of};
use crate::kafka::groups::{MAX_SESSION, Member, Refusal};

fn refusal_code(r: Refusal) -> i16 {
    match r {
        Refusal::UnknownMember => code::UNKNOWN_MEMBER_ID,
        Refusal::IllegalGeneration => code::ILLEGAL_GENERATION,
    }
}

pub fn join(
    worker: &mut dyn Broker,
    client_id: &str,
    r: &JoinGroupRequest,
    version: i16,
) -> Answer {
    let group = r.group_id.0.to_string();
    let refuse = |error: i16, member: &str, outcome: String| {
        let response = JoinGroupResponse::default()
            .with_error_code(error)
            .with_generation_id(-1)
            .with_member_id(StrBytes::from_string(member.to_string()));
        Answer::now(ResponseKind::JoinGroup(response), outcome)
    };
    if group.is_empty() {
        return refuse(code::INVALID_GROUP_ID, "", "an empty group id".into());
    }
    let Some(protocol) = r.protocols.first() else {
        return refuse(
            code::INCONSISTENT_GROUP_PROTOCOL,
            "",
            format!("group {group:?}: no protocol offered"),
        );
    };
    let mut member_id = r.member_id.to_string();
    if member_id.is_empty() {
        member_id = worker.groups_mut().new_member_id(client_id);
        if version >= 4 {
            // KIP-394: the member rejoins with the id it was given.
            let outcome = format!("group {group:?}: MEMBER_ID_REQUIRED, named {member_id:?}");
            return refuse(code::MEMBER_ID_REQUIRED, &member_id, outcome);
        }
    }
    let now = RealTime::now();
    let g = worker.groups_mut().get(&group, now);
    if let Some(other) = g.member.as_ref().filter(|m| m.id != member_id) {
        let outcome = format!(
            "group {group:?}: GROUP_MAX_SIZE_REACHED: {:?} (client {:?}) is its one member; this server keeps one consumer per group: use assign(), or another group",
            other.id, other.client_id
        );
        return refuse(code::GROUP_MAX_SIZE_REACHED, &member_id, outcome);
    }
    let session = Duration::from_millis(r.session_timeout_ms.max(0) as u64).min(MAX_SESSION);
    g.generation += 1;
    let generation = g.generation;
    g.member = Some(Member {
        id: member_id.clone(),
        client_id: client_id.to_string(),
        session,
        last_seen: now,
        protocol_type: r.protocol_type.to_string(),
        protocol: protocol.name.to_string(),
        metadata: protocol.metadata.clone(),
        assignment: None,
    });
    let mut response = JoinGroupResponse::default()
        .with_generation_id(generation)
        .with_protocol_name(Some(protocol.name.clone()))
        .with_leader(StrBytes::from_string(member_id.clone()))
        .with_member_id(StrBytes::from_string(member_id.clone()))
        .with_members(vec![
            JoinGroupResponseMember::default()
                .with_member_id(StrBytes::from_string(member_id.clone()))
                .with_metadata(protocol.metadata.clone()),
        ]);
    if version >= 7 {
        response = response.with_protocol_type(Some(r.protocol_type.clone()));
    }
    Answer::now(
        ResponseKind::JoinGroup(response),
        format!(
            "group {group:?}: {member_id:?} joined, generation {generation}, protocol {:?}, its leader",
            protocol.name.as_str()
        ),
    )
}

pub fn sync(worker: &mut dyn Broker, r: &SyncGroupRequest, version: i16) -> Answer {
    let group = r.group_id.0.to_string();
    let member = r.member_id.to_string();
    let result = worker
        .groups_mut()
        .check(&group, &member, Some(r.generation_id))
        .map(|g| {
            let m = g.member.as_mut().expect("checked");
            let mine = r
                .assignments
                .iter()
                .find(|a| a.member_id.as_str() == member)
                .map(|a| a.assignment.clone())
                .unwrap_or_default();
            m.assignment = Some(mine.clone());
            (mine, m.protocol.clone())
        });
    let (response, outcome) = match result {
        Ok((assignment, protocol)) => {
            let mut response = SyncGroupResponse::default().with_assignment(assignment.clone());
            if version >= 5 {
                response = response
                    .with_protocol_type(r.protocol_type.clone())
                    .with_protocol_name(Some(StrBytes::from_string(protocol)));
            }
            (
                response,
                format!(
                    "group {group:?}: {member:?} generation {} assigned itself {} byte(s)",
                    r.generation_id,
                    assignment.len()
                ),
            )
        }
        Err(e) => {
            let error = refusal_code(e);
            (
                SyncGroupResponse::default()
                    .with_error_code(error)
                    .with_assignment(Bytes::new()),
                format!("group {group:?}: {member:?}: {}", name_of(error)),
            )
        }
    };
    Answer::now(ResponseKind::SyncGroup(response), outcome)
}

pub fn heartbeat(worker: &mut dyn Broker, r: &HeartbeatRequest) -> Answer {
    let group = r.group_id.0.to_string();
    let member = r.member_id.to_string();
    let error = match worker
        .groups_mut()
        .check(&group, &member, Some(r.generation_id))
    {
        Ok(_) => code::NONE,
        Err(e) => refusal_code(e),
    };
    Answer::now(
        ResponseKind::Heartbeat(HeartbeatResponse::default().with_error_code(error)),
        format!("group {group:?}: {member:?}: {}", name_of(error)),
    )
}

pub fn leave(worker: &mut dyn Broker, r: &LeaveGroupRequest, version: i16) -> Answer {
    let group = r.group_id.0.to_string();
    let leaving: Vec<String> = if version >= 3 {
        r.members.iter().map(|m| m.member_id.to_string()).collect()
    } else {
        vec![r.member_id.to_string()]
    };
    let results: Vec<(String, i16)> = leaving
        .into_iter()
        .map(|m| {
            let error = if worker.groups_mut().leave(&group, &m) {
                code::NONE
            } else {
                code::UNKNOWN_MEMBER_ID
            };
            (m, error)
        })
        .collect();
    let outcome = results
        .iter()
        .map(|(m, e)| format!("{m:?} {}", if *e == 0 { "left" } else { "unknown" }))
        .collect::<Vec<_>>()
        .join(", ");
    let response = if version >= 3 {
        LeaveGroupResponse::default().with_members(
            results
                .iter()
                .map(|(m, e)| {
                    MemberResponse::default()
                        .with_member_id(StrBytes::from_string(m.clone()))
                        .with_error_code(*e)
                })
                .collect(),
        )
    } else {
        LeaveGroupResponse::default().with_error_code(results[0].1)
    };
    Answer::now(
        ResponseKind::LeaveGroup(response),
        format!("group {group:?}: {outcome}"),
    )
}
