//! The consumer-group steps of the [`Driver`] (E15): `join_group`,
//! `leave_group`, `heartbeat`, `sync_group` (Kafka's classic protocol,
//! `--rules kafka`), `commit_group_offsets`, `poll`, `delete_group` and
//! `delete_offsets` (Kafka's DeleteGroups and OffsetDelete), and the
//! session expiry an `advance_clock` runs. Each member's client side (the
//! book's `Consumer`: its generation, local assignment and positions) is
//! the driver's, as a producer's is; the coordinator's side is the
//! engine's. Both live in memory only: a crash drops the groups (the
//! engine's coordinator starts empty, as the book's does) and with them
//! the members' clients (they lived in the crashed process).

use std::collections::{BTreeMap, BTreeSet};

use super::Driver;
use crate::engine::config::GroupProtocol;
use crate::engine::consumer::group::GroupState;
use crate::engine::consumer::offsets::GroupOffsets;
use crate::engine::consumer::{Assignment, Consumer, SyncOutcome};
use crate::engine::{MiniKafkaError, TopicPartition};
use crate::session::action::Action;
use crate::session::narrate_classic::{self, AssignedBy};
use crate::session::narrate_groups;
use crate::session::outcome::ActionError;
use crate::session::said::Said;

/// Kafka's `max.poll.records` default: a `poll` without `max`.
pub const DEFAULT_POLL_MAX: u32 = 500;

/// One record a member's last poll returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Polled {
    pub tp: TopicPartition,
    pub offset: i64,
    /// The value as text (bytes that are not UTF-8 as `\xNN`, as the
    /// snapshot shows every value), None for a null value.
    pub value: Option<String>,
}

/// A group member's client: the book's `Consumer` and what its last poll
/// returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberClient {
    pub consumer: Consumer,
    pub last_poll: Vec<Polled>,
}

/// Members' clients by (group, member).
pub type MemberClients = BTreeMap<(String, String), MemberClient>;

impl Driver {
    /// Every member's client, by (group, member).
    pub fn members(&self) -> &MemberClients {
        &self.members
    }

    /// Runs one consumer-group action; its sentence on success.
    pub(super) fn start_group(&mut self, action: &Action) -> Result<Said, ActionError> {
        let cluster = self.cluster.clone();
        let key = |g: &str, m: &str| (g.to_string(), m.to_string());
        let classic = cluster.with_state(|s| s.groups().protocol()) == GroupProtocol::Classic;
        match action {
            Action::JoinGroup {
                group,
                member,
                topics,
            } => {
                let topics: BTreeSet<String> = topics.iter().cloned().collect();
                let client =
                    self.members
                        .entry(key(group, member))
                        .or_insert_with(|| MemberClient {
                            consumer: Consumer::new(group, member),
                            last_poll: Vec::new(),
                        });
                let joined = client.consumer.subscribe(&cluster, &topics);
                if joined.is_err() && client.consumer.generation().is_none() {
                    self.members.remove(&key(group, member));
                }
                joined?;
                let g = cluster.group(group).expect("joined above");
                if classic {
                    return Ok(narrate_classic::joined(&g, member));
                }
                Ok(narrate_groups::rebalanced(&g))
            }
            Action::LeaveGroup { group, member } => {
                let was = cluster.leave_group(group, member)?;
                self.members.remove(&key(group, member));
                if classic && let (true, Some(g)) = (was, cluster.group(group)) {
                    return Ok(narrate_classic::left(member, &g));
                }
                Ok(narrate_groups::left(
                    member,
                    was,
                    cluster.group(group).as_ref(),
                    group,
                ))
            }
            Action::Heartbeat {
                group,
                member,
                generation,
            } => {
                let deadline = cluster.heartbeat(group, member, *generation)?;
                Ok(narrate_groups::heartbeat(member, *generation, deadline))
            }
            Action::SyncGroup {
                group,
                member,
                generation,
                assignment,
            } => {
                let given: Option<Assignment> = assignment.as_ref().map(|a| {
                    a.iter()
                        .map(|(m, ps)| {
                            let tps = ps
                                .iter()
                                .map(|p| TopicPartition::new(&p.topic, p.partition))
                                .collect();
                            (m.clone(), tps)
                        })
                        .collect()
                });
                let before = cluster.group(group);
                let outcome = cluster.sync_group(group, member, *generation, given.as_ref())?;
                let g = cluster.group(group).expect("synced above");
                let made = before
                    .filter(|b| {
                        b.state == GroupState::CompletingRebalance
                            && b.leader.as_deref() == Some(member.as_str())
                    })
                    .map(|_| match given {
                        Some(_) => AssignedBy::Given,
                        None => AssignedBy::RangeAssignor,
                    });
                if let SyncOutcome::Assigned {
                    generation,
                    assignment,
                    delivered,
                } = &outcome
                {
                    self.take_assignment(group, member, *generation, assignment.clone());
                    for m in delivered {
                        let theirs = g.assignment.get(m).cloned().unwrap_or_default();
                        self.take_assignment(group, m, *generation, theirs);
                    }
                }
                Ok(narrate_classic::synced(&g, member, &outcome, made))
            }
            Action::CommitGroupOffsets {
                group,
                member,
                generation,
                offsets,
            } => {
                let commit: GroupOffsets = offsets
                    .iter()
                    .map(|o| (TopicPartition::new(&o.topic, o.partition), o.offset))
                    .collect();
                cluster.commit_group_offsets(group, member, *generation, &commit)?;
                let list: Vec<(TopicPartition, i64)> = commit.into_iter().collect();
                Ok(narrate_groups::committed(group, member, *generation, &list))
            }
            Action::Poll { group, member, max } => {
                let client = self.members.get_mut(&key(group, member)).ok_or_else(|| {
                    MiniKafkaError::UnknownMember {
                        group: group.clone(),
                        member: Some(member.clone()),
                    }
                })?;
                client.consumer.refresh_assignment(&cluster)?;
                let max = max.unwrap_or(DEFAULT_POLL_MAX) as usize;
                let read = client.consumer.poll(&cluster, max)?;
                client.last_poll = read
                    .iter()
                    .map(|(tp, r)| Polled {
                        tp: tp.clone(),
                        offset: r.offset,
                        value: r.value.as_ref().map(|v| crate::session::snapshot::text(v)),
                    })
                    .collect();
                let offsets: Vec<(TopicPartition, i64)> =
                    read.iter().map(|(tp, r)| (tp.clone(), r.offset)).collect();
                let positions: Vec<(TopicPartition, i64)> = client
                    .consumer
                    .positions()
                    .iter()
                    .map(|(tp, p)| (tp.clone(), *p))
                    .collect();
                Ok(narrate_groups::polled(member, &offsets, &positions))
            }
            Action::DeleteGroup { group } => {
                let removed = cluster.delete_group(group)?;
                Ok(narrate_groups::deleted(group, removed))
            }
            Action::DeleteOffsets { group, partitions } => {
                let asked: Vec<TopicPartition> = partitions
                    .iter()
                    .map(|p| TopicPartition::new(&p.topic, p.partition))
                    .collect();
                let removed = cluster.delete_offsets(group, &asked)?;
                Ok(narrate_groups::offsets_deleted(group, &removed))
            }
            _ => Err(MiniKafkaError::InvalidConfig(format!(
                "{} is not a consumer-group action",
                action.name()
            ))
            .into()),
        }
    }

    /// A member's client takes the generation and partitions its SyncGroup
    /// answered (a member without a client, made by no join of this
    /// driver, has none to update).
    fn take_assignment(
        &mut self,
        group: &str,
        member: &str,
        generation: i32,
        assignment: Vec<TopicPartition>,
    ) {
        if let Some(client) = self
            .members
            .get_mut(&(group.to_string(), member.to_string()))
        {
            client.consumer.take_assignment(generation, assignment);
        }
    }

    /// After the clock moved: the coordinator expires every member whose
    /// session it passed (the book's `expire_group_members`, run here
    /// whenever time moves, since only `advance_clock` moves it). The
    /// sentence, if any expired.
    pub(super) fn expire_members(&mut self) -> Result<Option<Said>, ActionError> {
        // No member, nothing to expire: a cluster without groups (every
        // served one: `serve` answers Kafka's group APIs elsewhere) moves
        // its clock exactly as before, with no second pass over the state.
        let members = self
            .cluster
            .with_state(|s| s.groups().groups().values().any(|g| !g.members.is_empty()));
        if !members {
            return Ok(None);
        }
        let expired = self.cluster.expire_group_members()?;
        if expired.is_empty() {
            return Ok(None);
        }
        let ids: BTreeSet<&String> = expired.iter().map(|(g, _)| g).collect();
        let groups: Vec<_> = ids.iter().filter_map(|g| self.cluster.group(g)).collect();
        let (timeout, protocol) = self
            .cluster
            .with_state(|s| (s.groups().session_timeout_ms(), s.groups().protocol()));
        if protocol == GroupProtocol::Classic {
            return Ok(Some(narrate_classic::removed(&expired, timeout, &groups)));
        }
        Ok(Some(narrate_groups::expired(&expired, timeout, &groups)))
    }

    /// A crash dropped the groups: the members' clients go with them.
    pub(super) fn forget_members_if_crashed(&mut self, generation_before: u64) {
        if self.cluster.generation() != generation_before {
            self.members.clear();
        }
    }
}
