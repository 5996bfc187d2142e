//! JoinGroup (versions 0-9), SyncGroup (0-5), Heartbeat (0-4), LeaveGroup
//! (0-5) and DescribeGroups (0-5): Kafka's classic group protocol, for
//! groups of any number of members ([`crate::kafka::groups`] decides, as
//! Kafka's group coordinator). A JoinGroup waits until the rebalance
//! completes and a follower's SyncGroup until the leader's: both are a
//! [`Continue`], polled until the group answers their ticket. None of
//! this changes the engine (no action): membership is the server's.

use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::leave_group_response::MemberResponse;
use kafka_protocol::messages::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, DescribeGroupsRequest,
    DescribeGroupsResponse, HeartbeatRequest, HeartbeatResponse, JoinGroupRequest,
    JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse, ResponseKind, SyncGroupRequest,
    SyncGroupResponse,
};
use kafka_protocol::protocol::StrBytes;

use super::find_coordinator::coordinator;
use crate::kafka::broker::{Answer, Broker, Continue, Handled, IdError};
use crate::kafka::clock::RealTime;
use crate::kafka::errors::{code, name_of};
use crate::kafka::groups::{
    GroupState, Join, JoinReply, MAX_SESSION, Reply, Started, Sync, SyncReply, Ticket,
};
use crate::kafka::registry::ConnectionId;

/// How long past its rebalance timeout a waiting JoinGroup or SyncGroup is
/// kept: the group answers it by then; this only bounds a lost ticket.
const SLACK: Duration = Duration::from_secs(5);

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

pub fn join(
    worker: &mut dyn Broker,
    client_id: &str,
    connection: ConnectionId,
    r: &JoinGroupRequest,
    version: i16,
) -> Handled {
    let group = r.group_id.0.to_string();
    if group.is_empty() {
        let reply = JoinReply::error(code::INVALID_GROUP_ID, &r.member_id);
        return Handled::Now(join_answer(&group, &reply, version));
    }
    if let Err(why) = reserve_generation(worker, &group) {
        let reply = JoinReply::error(code::COORDINATOR_NOT_AVAILABLE, &r.member_id);
        let mut answer = join_answer(&group, &reply, version);
        answer.outcome = format!("{}: no generation reserved: {why}", answer.outcome);
        return Handled::Now(answer);
    }
    let instance = r
        .group_instance_id
        .as_ref()
        .filter(|_| version >= 5)
        .map(|id| id.to_string());
    // A new member's number is written down before the member hears it,
    // so a restarted server never names a new member as it named one of
    // its last life (whose client may still hold the id).
    let new_member_number = if r.member_id.is_empty() {
        match worker.producer_ids().and_then(|ids| ids.allocate_member()) {
            Ok(n) => n,
            Err(why) => {
                let reply = JoinReply::error(code::COORDINATOR_NOT_AVAILABLE, "");
                let mut answer = join_answer(&group, &reply, version);
                answer.outcome = format!("{}: no member id given: {why}", answer.outcome);
                return Handled::Now(answer);
            }
        }
    } else {
        0
    };
    let session = Duration::from_millis(r.session_timeout_ms.max(0) as u64).min(MAX_SESSION);
    // v0 has no rebalance timeout: the session timeout serves (as Kafka).
    let rebalance = if version >= 1 && r.rebalance_timeout_ms >= 0 {
        Duration::from_millis(r.rebalance_timeout_ms as u64).min(MAX_SESSION)
    } else {
        session
    };
    let j = Join {
        group: group.clone(),
        member_id: r.member_id.to_string(),
        client_id: client_id.to_string(),
        client_host: worker.client_host(connection),
        connection,
        session,
        rebalance,
        protocol_type: r.protocol_type.to_string(),
        protocols: r
            .protocols
            .iter()
            .map(|p| (p.name.to_string(), p.metadata.clone()))
            .collect(),
        instance_id: instance.clone(),
        require_known_member: version >= 4,
        supports_skip_assignment: version >= 9,
        new_member_number,
    };
    // The log line names a static member's instance: its member id
    // changes each time it rejoins, its instance does not.
    let note = instance.map(|id| format!(" (static member {id:?})"));
    match worker.groups_mut().join(j, RealTime::now()) {
        Started::Now(reply) => Handled::Now(noting(
            join_answer(&group, &reply, version),
            note.as_deref(),
        )),
        Started::Wait(ticket) => Handled::Continue(Box::new(JoinWait {
            group,
            ticket,
            version,
            deadline: RealTime::now() + rebalance + SLACK,
            note,
        })),
    }
}

/// Reserves, in the server's file, the generation a JoinGroup of `group`
/// can be answered with, and starts new groups above the last life's
/// reservations: a member of the last life never outranks one of this
/// life by its generation ([`crate::kafka::producer_ids`]).
fn reserve_generation(worker: &mut dyn Broker, group: &str) -> Result<(), IdError> {
    let current = worker.groups().group(group).map(|g| g.generation);
    let ids = worker.producer_ids()?;
    let floor = ids.generation_floor();
    ids.reserve_generation(current.unwrap_or(floor).max(floor).saturating_add(1))?;
    worker.groups_mut().set_generation_floor(floor);
    Ok(())
}

/// A JoinGroup waiting for its group's rebalance.
#[derive(Debug)]
struct JoinWait {
    group: String,
    ticket: Ticket,
    version: i16,
    deadline: Instant,
    /// What the log line adds: a static member's instance.
    note: Option<String>,
}

impl Continue for JoinWait {
    fn poll(&mut self, broker: &mut dyn Broker) -> Option<Answer> {
        match broker.groups_mut().take(self.ticket)? {
            Reply::Join(reply) => Some(noting(
                join_answer(&self.group, &reply, self.version),
                self.note.as_deref(),
            )),
            Reply::Sync(_) => None,
        }
    }

    fn deadline(&self) -> Instant {
        self.deadline
    }

    fn timed_out(self: Box<Self>, broker: &mut dyn Broker) -> Answer {
        broker.groups_mut().abandon(self.ticket);
        let reply = JoinReply::error(code::REBALANCE_IN_PROGRESS, "");
        join_answer(&self.group, &reply, self.version)
    }
}

/// `answer` with `note` (if any) at the end of its log line.
fn noting(mut answer: Answer, note: Option<&str>) -> Answer {
    answer.outcome.push_str(note.unwrap_or_default());
    answer
}

fn join_answer(group: &str, reply: &JoinReply, version: i16) -> Answer {
    let mut response = JoinGroupResponse::default()
        .with_error_code(reply.error)
        .with_generation_id(reply.generation)
        .with_protocol_name(reply.protocol.as_deref().map(s))
        .with_leader(s(&reply.leader))
        .with_member_id(s(&reply.member_id))
        .with_members(
            reply
                .members
                .iter()
                .map(|(id, metadata)| {
                    JoinGroupResponseMember::default()
                        .with_member_id(s(id))
                        .with_metadata(metadata.clone())
                })
                .collect(),
        );
    if version < 7 && response.protocol_name.is_none() {
        // Not nullable before v7.
        response.protocol_name = Some(StrBytes::default());
    }
    if version >= 7 {
        response = response.with_protocol_type(reply.protocol_type.as_deref().map(s));
    }
    if version >= 9 {
        response = response.with_skip_assignment(reply.skip_assignment);
    }
    let outcome = if reply.error != code::NONE {
        format!(
            "group {group:?}: {:?}: {}",
            reply.member_id,
            name_of(reply.error)
        )
    } else {
        let role = if reply.skip_assignment {
            format!(
                "its leader, {} member(s), no rebalance: the assignment stands",
                reply.members.len()
            )
        } else if reply.leader == reply.member_id {
            format!("its leader, {} member(s)", reply.members.len())
        } else {
            format!("leader {:?}", reply.leader)
        };
        format!(
            "group {group:?}: {:?} joined, generation {}, protocol {:?}, {role}",
            reply.member_id,
            reply.generation,
            reply.protocol.as_deref().unwrap_or("")
        )
    };
    Answer::now(ResponseKind::JoinGroup(response), outcome)
}

pub fn sync(worker: &mut dyn Broker, r: &SyncGroupRequest, version: i16) -> Handled {
    let group = r.group_id.0.to_string();
    let member = r.member_id.to_string();
    let request = Sync {
        group: group.clone(),
        member_id: member.clone(),
        instance_id: r.group_instance_id.as_ref().map(|id| id.to_string()),
        generation: r.generation_id,
        protocol_type: r.protocol_type.as_ref().map(|t| t.to_string()),
        protocol: r.protocol_name.as_ref().map(|t| t.to_string()),
        assignments: r
            .assignments
            .iter()
            .map(|a| (a.member_id.to_string(), a.assignment.clone()))
            .collect(),
    };
    let rebalance = worker
        .groups()
        .group(&group)
        .and_then(|g| g.members.get(&member))
        .map_or(MAX_SESSION, |m| m.rebalance);
    match worker.groups_mut().sync(request, RealTime::now()) {
        Started::Now(reply) => Handled::Now(sync_answer(&group, &member, &reply, version)),
        Started::Wait(ticket) => Handled::Continue(Box::new(SyncWait {
            group,
            member,
            ticket,
            version,
            deadline: RealTime::now() + rebalance + SLACK,
        })),
    }
}

/// A SyncGroup waiting for the leader's.
#[derive(Debug)]
struct SyncWait {
    group: String,
    member: String,
    ticket: Ticket,
    version: i16,
    deadline: Instant,
}

impl Continue for SyncWait {
    fn poll(&mut self, broker: &mut dyn Broker) -> Option<Answer> {
        match broker.groups_mut().take(self.ticket)? {
            Reply::Sync(reply) => {
                Some(sync_answer(&self.group, &self.member, &reply, self.version))
            }
            Reply::Join(_) => None,
        }
    }

    fn deadline(&self) -> Instant {
        self.deadline
    }

    fn timed_out(self: Box<Self>, broker: &mut dyn Broker) -> Answer {
        broker.groups_mut().abandon(self.ticket);
        sync_answer(
            &self.group,
            &self.member,
            &Err(code::REBALANCE_IN_PROGRESS),
            self.version,
        )
    }
}

fn sync_answer(group: &str, member: &str, reply: &SyncReply, version: i16) -> Answer {
    let (response, outcome) = match reply {
        Ok((assignment, protocol_type, protocol)) => {
            let mut response = SyncGroupResponse::default().with_assignment(assignment.clone());
            if version >= 5 {
                response = response
                    .with_protocol_type(protocol_type.as_deref().map(s))
                    .with_protocol_name(protocol.as_deref().map(s));
            }
            (
                response,
                format!(
                    "group {group:?}: {member:?} assigned {} byte(s)",
                    assignment.len()
                ),
            )
        }
        Err(error) => (
            SyncGroupResponse::default()
                .with_error_code(*error)
                .with_assignment(Bytes::new()),
            format!("group {group:?}: {member:?}: {}", name_of(*error)),
        ),
    };
    Answer::now(ResponseKind::SyncGroup(response), outcome)
}

pub fn heartbeat(worker: &mut dyn Broker, r: &HeartbeatRequest) -> Answer {
    let group = r.group_id.0.to_string();
    let member = r.member_id.to_string();
    // Kafka's group coordinator checks the group id before the member.
    let error = if group.is_empty() {
        code::INVALID_GROUP_ID
    } else {
        worker.groups_mut().heartbeat(
            &group,
            &member,
            r.group_instance_id.as_deref(),
            r.generation_id,
            RealTime::now(),
        )
    };
    Answer::now(
        ResponseKind::Heartbeat(HeartbeatResponse::default().with_error_code(error)),
        format!("group {group:?}: {member:?}: {}", name_of(error)),
    )
}

pub fn leave(worker: &mut dyn Broker, r: &LeaveGroupRequest, version: i16) -> Answer {
    let group = r.group_id.0.to_string();
    let leaving: Vec<(String, Option<String>)> = if version >= 3 {
        r.members
            .iter()
            .map(|m| {
                (
                    m.member_id.to_string(),
                    m.group_instance_id.as_ref().map(|id| id.to_string()),
                )
            })
            .collect()
    } else {
        vec![(r.member_id.to_string(), None)]
    };
    // Kafka's group coordinator checks the group id before the members.
    let codes = if group.is_empty() {
        vec![code::INVALID_GROUP_ID; leaving.len()]
    } else {
        worker
            .groups_mut()
            .leave_identified(&group, &leaving, RealTime::now())
    };
    let outcome = leaving
        .iter()
        .zip(&codes)
        .map(|((m, instance), e)| {
            let who = match instance {
                Some(id) => format!("{m:?} (static member {id:?})"),
                None => format!("{m:?}"),
            };
            if *e == 0 {
                format!("{who} left")
            } else {
                format!("{who}: {}", name_of(*e))
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    let response = if version >= 3 {
        LeaveGroupResponse::default().with_members(
            leaving
                .iter()
                .zip(&codes)
                .map(|((m, instance), e)| {
                    MemberResponse::default()
                        .with_member_id(s(m))
                        .with_group_instance_id(instance.as_deref().map(s))
                        .with_error_code(*e)
                })
                .collect(),
        )
    } else {
        LeaveGroupResponse::default().with_error_code(codes[0])
    };
    Answer::now(
        ResponseKind::LeaveGroup(response),
        format!("group {group:?}: {outcome}"),
    )
}

/// DescribeGroups: each group's state, protocol type and protocol, and
/// its members (client id, host; their metadata and assignment while
/// Stable, as Kafka gives them). A group the server has no member record
/// of is Empty if it has committed or staged offsets, else Dead (v6:
/// GROUP_ID_NOT_FOUND).
pub fn describe(
    worker: &mut dyn Broker,
    broker: u32,
    r: &DescribeGroupsRequest,
    version: i16,
) -> Answer {
    let here = coordinator(worker).is_some_and(|c| c.broker == broker);
    let mut described = Vec::new();
    let mut outcome = Vec::new();
    for id in &r.groups {
        let name = id.0.to_string();
        let mut d = DescribedGroup::default()
            .with_group_id(id.clone())
            .with_authorized_operations(i32::MIN);
        if !here {
            d = d.with_error_code(code::NOT_COORDINATOR);
            outcome.push(format!("{name}: NOT_COORDINATOR"));
            described.push(d);
            continue;
        }
        let has_offsets = worker.read(|st| {
            st.offsets().groups().contains_key(&name)
                || st
                    .transactions()
                    .current()
                    .any(|t| t.staged_offsets.contains_key(&name))
        });
        match worker.groups().group(&name) {
            Some(g) => {
                let stable = g.state == GroupState::Stable;
                let protocol = g.protocol.clone().unwrap_or_default();
                d = d
                    .with_group_state(s(g.state.name()))
                    .with_protocol_type(s(g.protocol_type.as_deref().unwrap_or("")))
                    .with_protocol_data(s(if stable { &protocol } else { "" }))
                    .with_members(
                        g.members
                            .values()
                            .map(|m| {
                                let mut dm = DescribedGroupMember::default()
                                    .with_member_id(s(&m.id))
                                    .with_client_id(s(&m.client_id))
                                    .with_client_host(s(&m.client_host));
                                if version >= 4 {
                                    dm = dm.with_group_instance_id(m.instance_id.as_deref().map(s));
                                }
                                if stable {
                                    dm = dm
                                        .with_member_metadata(m.metadata(&protocol))
                                        .with_member_assignment(m.assignment.clone());
                                }
                                dm
                            })
                            .collect(),
                    );
                outcome.push(format!(
                    "{name}: {} generation {}, {} member(s)",
                    g.state.name(),
                    g.generation,
                    g.members.len()
                ));
            }
            None if has_offsets => {
                d = d.with_group_state(s("Empty"));
                outcome.push(format!("{name}: Empty"));
            }
            None => {
                d = d.with_group_state(s("Dead"));
                if version >= 6 {
                    d = d
                        .with_error_code(code::GROUP_ID_NOT_FOUND)
                        .with_error_message(Some(s(&format!("Group {name} not found."))));
                }
                outcome.push(format!("{name}: Dead"));
            }
        }
        described.push(d);
    }
    Answer::now(
        ResponseKind::DescribeGroups(DescribeGroupsResponse::default().with_groups(described)),
        format!("described {}", outcome.join(", ")),
    )
}

/// What a KIP-848 consumer (`group.protocol=consumer`) is told: the
/// consumer group protocol is not served, as Kafka answers it when the
/// protocol is off (UNSUPPORTED_VERSION), with a message saying what to
/// set instead. It is advertised so that the client asks and reports the
/// answer: librdkafka, not finding it, waits in silence without ever
/// joining.
pub fn consumer_heartbeat(r: &ConsumerGroupHeartbeatRequest) -> Answer {
    let message =
        "mk-tui serve speaks Kafka's classic group protocol only: set group.protocol=classic";
    let response = ConsumerGroupHeartbeatResponse::default()
        .with_error_code(code::UNSUPPORTED_VERSION)
        .with_error_message(Some(s(message)))
        .with_member_epoch(-1);
    Answer::now(
        ResponseKind::ConsumerGroupHeartbeat(response),
        format!(
            "group {:?}: ConsumerGroupHeartbeat (KIP-848): UNSUPPORTED_VERSION, the classic protocol only",
            r.group_id.0.as_str()
        ),
    )
}
