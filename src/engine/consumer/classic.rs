//! The [`GroupCoordinator`] under Kafka's classic group protocol
//! ([`GroupProtocol::Classic`], `--rules kafka`): the state machine of
//! Apache Kafka's `ClassicGroup`, as `mk-tui serve` runs it for real
//! clients (src/kafka/groups.rs; tests/classic_groups_differential.rs
//! drives both with the same calls), over the engine clock.
//!
//! A join to an Empty, Stable or CompletingRebalance group prepares a
//! rebalance (PreparingRebalance): it completes when every known member
//! has rejoined or the rebalance timeout passes (those that did not rejoin
//! are removed); the leader stays if it rejoined, else the first member by
//! id leads; the generation is bumped; then CompletingRebalance until the
//! leader's SyncGroup brings every member's assignment (Stable). A
//! recording has no requests that hang: a `join_group` or `sync_group`
//! that would wait in Kafka returns at once, the member marked
//! `awaiting_join` or `awaiting_sync`, and the later call that completes
//! the rebalance or brings the assignment answers it (the Groups pane
//! shows the member waiting).
//!
//! The engine names its members (the recording's `member`), where Kafka's
//! coordinator hands out ids (KIP-394); one timeout, the cluster's
//! `group_session_timeout_ms`, serves as both the session and the
//! rebalance timeout (Kafka's `session.timeout.ms` and
//! `max.poll.interval.ms` are a member's own); a deadline is reached when
//! the clock gets to it (Kafka's timers fire at the deadline, where the
//! book expires strictly after it).

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::config::GroupProtocol;
use crate::engine::consumer::group::{
    ClassicMember, Group, GroupCoordinator, GroupMember, GroupState, JoinResult, Rebalance,
    TopicPartitions, moves, unknown_group, unknown_member, validate_generation,
};
use crate::engine::consumer::range_assignor::range_assign;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::error::{MiniKafkaError, Result};

/// A leader's assignment: each member's partitions.
pub type Assignment = BTreeMap<String, Vec<TopicPartition>>;

/// What a SyncGroup did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncOutcome {
    /// The member has its assignment (the leader's, or a follower's once
    /// the leader synced). `delivered`: the followers whose waiting
    /// SyncGroup the leader's answered, in id order.
    Assigned {
        generation: i32,
        assignment: Vec<TopicPartition>,
        delivered: Vec<String>,
    },
    /// A follower before the leader: it waits for the assignment.
    Waiting { generation: i32 },
}

impl GroupCoordinator {
    /// Classic JoinGroup: the member is added (or its subscriptions
    /// updated) and the group prepares a rebalance unless nothing changed
    /// (a follower of a Stable group rejoining with the same
    /// subscriptions is answered its current generation, as Kafka does).
    /// The answer: the generation once the join completed, or -1 while
    /// the member waits for the others (Kafka's JoinGroup hangs there);
    /// the assignment is always empty: it comes with SyncGroup.
    pub(super) fn classic_join(
        &mut self,
        group_id: &str,
        member_id: &str,
        subscriptions: &BTreeSet<String>,
        now_ms: u64,
    ) -> Result<JoinResult> {
        self.tick_group(group_id, now_ms);
        let session = self.session_timeout_ms;
        let group = self
            .groups
            .entry(group_id.to_string())
            .or_insert_with(|| Group::new(group_id));
        let unchanged = group
            .members
            .get(member_id)
            .map(|m| &m.subscriptions == subscriptions);
        let is_leader = group.leader.as_deref() == Some(member_id);
        let rebalances = match (unchanged, group.state) {
            (None, _) => {
                group.members.insert(
                    member_id.to_string(),
                    GroupMember {
                        member_id: member_id.to_string(),
                        subscriptions: subscriptions.clone(),
                        deadline_ms: now_ms.saturating_add(session),
                        classic: ClassicMember {
                            awaiting_join: true,
                            ..ClassicMember::default()
                        },
                    },
                );
                if group.leader.is_none() {
                    group.leader = Some(member_id.to_string());
                }
                group.state != GroupState::PreparingRebalance
            }
            (Some(true), GroupState::CompletingRebalance) => false,
            (Some(true), GroupState::Stable) if !is_leader => false,
            (Some(_), state) => {
                let m = group.members.get_mut(member_id).expect("known");
                m.subscriptions = subscriptions.clone();
                m.classic.awaiting_join = true;
                state != GroupState::PreparingRebalance
            }
        };
        if rebalances {
            self.prepare_rebalance(group_id, now_ms);
        }
        self.try_complete_join(group_id, now_ms);
        let group = &self.groups[group_id];
        let waiting = group
            .members
            .get(member_id)
            .is_some_and(|m| m.classic.awaiting_join);
        Ok(JoinResult {
            generation: if waiting { -1 } else { group.generation },
            assignment: Vec::new(),
        })
    }

    /// Classic SyncGroup. The leader's brings `assignment` (or, when it
    /// gives none, [`range_assign`]'s over the members' subscriptions and
    /// `topics`) to every member, answering those waiting; a follower's
    /// before it waits. In Stable, any member's gets its assignment.
    pub fn sync(
        &mut self,
        group_id: &str,
        member_id: &str,
        generation: i32,
        assignment: Option<&Assignment>,
        topics: &TopicPartitions,
        now_ms: u64,
    ) -> Result<SyncOutcome> {
        if self.protocol != GroupProtocol::Classic {
            return Err(MiniKafkaError::InvalidGroupId(
                "sync_group is Kafka's classic protocol: run under --rules kafka (the book's coordinator assigns at the join)".to_string(),
            ));
        }
        let session = self.session_timeout_ms;
        let group = self.member_at_generation(group_id, member_id, generation, now_ms)?;
        let is_leader = group.leader.as_deref() == Some(member_id);
        match group.state {
            GroupState::Empty => Err(unknown_member(group_id, member_id)),
            GroupState::PreparingRebalance => {
                Err(MiniKafkaError::RebalanceInProgress(group_id.to_string()))
            }
            GroupState::CompletingRebalance if is_leader => {
                let given = match assignment {
                    Some(a) => {
                        check_assignment(group, a, topics)?;
                        a.clone()
                    }
                    None => {
                        let subscriptions = group
                            .members
                            .iter()
                            .map(|(id, m)| (id.clone(), m.subscriptions.clone()))
                            .collect();
                        range_assign(&subscriptions, topics)
                    }
                };
                let before = std::mem::take(&mut group.superseded);
                group.assignment = group
                    .members
                    .keys()
                    .map(|m| (m.clone(), given.get(m).cloned().unwrap_or_default()))
                    .collect();
                let moved = moves(&before, &group.assignment);
                group.last_rebalance = Some(Rebalance {
                    generation: group.generation,
                    moved,
                });
                let mut delivered = Vec::new();
                for m in group.members.values_mut() {
                    if m.classic.awaiting_sync {
                        m.classic.awaiting_sync = false;
                        delivered.push(m.member_id.clone());
                    }
                }
                group.state = GroupState::Stable;
                synced(group, member_id, now_ms, session);
                Ok(SyncOutcome::Assigned {
                    generation,
                    assignment: group.assignment[member_id].clone(),
                    delivered,
                })
            }
            GroupState::CompletingRebalance => {
                synced(group, member_id, now_ms, session);
                let m = group.members.get_mut(member_id).expect("known");
                m.classic.awaiting_sync = true;
                Ok(SyncOutcome::Waiting { generation })
            }
            GroupState::Stable => {
                synced(group, member_id, now_ms, session);
                Ok(SyncOutcome::Assigned {
                    generation,
                    assignment: group.assignment.get(member_id).cloned().unwrap_or_default(),
                    delivered: Vec::new(),
                })
            }
        }
    }

    /// Classic Heartbeat: extends the session; in PreparingRebalance the
    /// answer is RebalanceInProgress (the member must rejoin).
    pub(super) fn classic_heartbeat(
        &mut self,
        group_id: &str,
        member_id: &str,
        generation: i32,
        now_ms: u64,
    ) -> Result<u64> {
        let session = self.session_timeout_ms;
        let group = self.member_at_generation(group_id, member_id, generation, now_ms)?;
        let m = group.members.get_mut(member_id).expect("known");
        m.deadline_ms = now_ms.saturating_add(session);
        match group.state {
            GroupState::PreparingRebalance => {
                Err(MiniKafkaError::RebalanceInProgress(group_id.to_string()))
            }
            GroupState::Empty => Err(unknown_member(group_id, member_id)),
            GroupState::CompletingRebalance | GroupState::Stable => Ok(m.deadline_ms),
        }
    }

    /// Classic LeaveGroup: the member goes and the group rebalances
    /// without it. Whether it was a member.
    pub(super) fn classic_leave(&mut self, group_id: &str, member_id: &str, now_ms: u64) -> bool {
        self.tick_group(group_id, now_ms);
        let known = self
            .groups
            .get(group_id)
            .is_some_and(|g| g.members.contains_key(member_id));
        if known {
            self.remove_members(group_id, &[member_id.to_string()], now_ms);
        }
        known
    }

    /// Kafka's `validateOffsetCommit` for a member's commit: the member,
    /// then the generation; a commit in CompletingRebalance waits out the
    /// sync (RebalanceInProgress). One in PreparingRebalance passes, at the
    /// generation the members still hold. It counts as a heartbeat.
    pub(super) fn classic_validate_commit(
        &mut self,
        group_id: &str,
        member_id: &str,
        generation: i32,
        now_ms: u64,
    ) -> Result<()> {
        let session = self.session_timeout_ms;
        let group = self.member_at_generation(group_id, member_id, generation, now_ms)?;
        if group.state == GroupState::CompletingRebalance {
            return Err(MiniKafkaError::RebalanceInProgress(group_id.to_string()));
        }
        let m = group.members.get_mut(member_id).expect("known");
        m.deadline_ms = now_ms.saturating_add(session);
        Ok(())
    }

    /// Runs every group's timeouts due at `now_ms` (Kafka's timers):
    /// sessions, rebalances and syncs. The members removed (their session
    /// ran out, they did not sync, or a rebalance timed out without their
    /// rejoin), as (group, member) pairs in group then member order.
    pub(super) fn classic_tick(&mut self, now_ms: u64) -> Vec<(String, String)> {
        let ids: Vec<String> = self.groups.keys().cloned().collect();
        let mut removed = Vec::new();
        for id in ids {
            let before: Vec<String> = self.groups[&id].members.keys().cloned().collect();
            self.tick_group(&id, now_ms);
            let after = &self.groups[&id].members;
            removed.extend(
                before
                    .into_iter()
                    .filter(|m| !after.contains_key(m))
                    .map(|m| (id.clone(), m)),
            );
        }
        removed
    }

    /// One group's timeouts: members whose session ran out (not while
    /// their join or sync waits, as Kafka's), members that did not sync
    /// by the sync deadline, and a rebalance whose timeout passed.
    /// The group of `member_id` at `generation`, once the group's timeouts
    /// due at `now_ms` have run: the checks SyncGroup, Heartbeat and
    /// OffsetCommit share, in Kafka's order (group, member, generation).
    fn member_at_generation(
        &mut self,
        group_id: &str,
        member_id: &str,
        generation: i32,
        now_ms: u64,
    ) -> Result<&mut Group> {
        self.tick_group(group_id, now_ms);
        let group = self
            .groups
            .get_mut(group_id)
            .ok_or_else(|| unknown_group(group_id))?;
        if !group.members.contains_key(member_id) {
            return Err(unknown_member(group_id, member_id));
        }
        validate_generation(group, generation)?;
        Ok(group)
    }

    fn tick_group(&mut self, group_id: &str, now_ms: u64) {
        let Some(group) = self.groups.get_mut(group_id) else {
            return;
        };
        let mut gone: Vec<String> = group
            .members
            .values()
            .filter(|m| {
                !m.classic.awaiting_join && !m.classic.awaiting_sync && now_ms >= m.deadline_ms
            })
            .map(|m| m.member_id.clone())
            .collect();
        if group.sync_deadline_ms.is_some_and(|t| now_ms >= t) {
            group.sync_deadline_ms = None;
            for m in group.members.values().filter(|m| m.classic.pending_sync) {
                if !gone.contains(&m.member_id) {
                    gone.push(m.member_id.clone());
                }
            }
        }
        gone.sort();
        if gone.is_empty() {
            self.try_complete_join(group_id, now_ms);
        } else {
            self.remove_members(group_id, &gone, now_ms);
        }
    }

    /// Removes `members` (left, or timed out); a new leader if the leader
    /// went; the group rebalances without them.
    fn remove_members(&mut self, group_id: &str, members: &[String], now_ms: u64) {
        let Some(group) = self.groups.get_mut(group_id) else {
            return;
        };
        for m in members {
            group.members.remove(m);
            group.assignment.remove(m);
        }
        elect_if_gone(group);
        match group.state {
            GroupState::Stable | GroupState::CompletingRebalance => {
                self.prepare_rebalance(group_id, now_ms);
                self.try_complete_join(group_id, now_ms);
            }
            GroupState::PreparingRebalance => self.try_complete_join(group_id, now_ms),
            GroupState::Empty => {}
        }
    }

    /// PreparingRebalance: waiting syncs are told to rejoin (an assignment
    /// not yet given is void), the join completes when all have rejoined
    /// or at the rebalance timeout.
    fn prepare_rebalance(&mut self, group_id: &str, now_ms: u64) {
        let timeout = self.session_timeout_ms;
        let Some(group) = self.groups.get_mut(group_id) else {
            return;
        };
        if group.state == GroupState::CompletingRebalance {
            group.assignment.clear();
        }
        for m in group.members.values_mut() {
            m.classic.awaiting_sync = false;
            m.classic.pending_sync = false;
        }
        group.rebalance_deadline_ms = Some(now_ms.saturating_add(timeout));
        group.sync_deadline_ms = None;
        group.state = GroupState::PreparingRebalance;
    }

    /// Completes the join once every member rejoined, or at the timeout.
    fn try_complete_join(&mut self, group_id: &str, now_ms: u64) {
        let Some(group) = self.groups.get(group_id) else {
            return;
        };
        if group.state != GroupState::PreparingRebalance {
            return;
        }
        let all_joined = group.members.values().all(|m| m.classic.awaiting_join);
        let timed_out = group.rebalance_deadline_ms.is_some_and(|t| now_ms >= t);
        if all_joined || timed_out {
            self.complete_join(group_id, now_ms);
        }
    }

    /// The members that did not rejoin are removed; a new generation with
    /// its leader; every member is answered and owes a SyncGroup.
    fn complete_join(&mut self, group_id: &str, now_ms: u64) {
        let (session, timeout) = (self.session_timeout_ms, self.session_timeout_ms);
        let group = self.groups.get_mut(group_id).expect("known");
        group.members.retain(|_, m| m.classic.awaiting_join);
        elect_if_gone(group);
        group.generation = group.generation.saturating_add(1);
        group.rebalance_deadline_ms = None;
        let before = std::mem::take(&mut group.assignment);
        if !before.is_empty() {
            group.superseded = before;
        }
        if group.members.is_empty() {
            group.state = GroupState::Empty;
            group.leader = None;
            let before = std::mem::take(&mut group.superseded);
            group.last_rebalance = Some(Rebalance {
                generation: group.generation,
                moved: moves(&before, &group.assignment),
            });
            return;
        }
        group.state = GroupState::CompletingRebalance;
        group.sync_deadline_ms = Some(now_ms.saturating_add(timeout));
        for m in group.members.values_mut() {
            m.classic = ClassicMember {
                pending_sync: true,
                ..ClassicMember::default()
            };
            m.deadline_ms = now_ms.saturating_add(session);
        }
    }
}

/// A member's SyncGroup arrived: it no longer owes one, and it counts as
/// a heartbeat; the sync deadline goes once no one owes one.
fn synced(group: &mut Group, member_id: &str, now_ms: u64, session: u64) {
    if let Some(m) = group.members.get_mut(member_id) {
        m.classic.pending_sync = false;
        m.deadline_ms = now_ms.saturating_add(session);
    }
    if group.state == GroupState::Stable && group.members.values().all(|m| !m.classic.pending_sync)
    {
        group.sync_deadline_ms = None;
    }
}

/// The leader left: the first member by id leads (Kafka picks any).
fn elect_if_gone(group: &mut Group) {
    if group
        .leader
        .as_ref()
        .is_some_and(|l| !group.members.contains_key(l))
    {
        group.leader = group.members.keys().next().cloned();
    }
}

/// A leader's explicit assignment names members of this generation and
/// partitions that exist, each at most once (Kafka's coordinator takes any
/// bytes; the engine refuses what its consumers could not read).
fn check_assignment(group: &Group, given: &Assignment, topics: &TopicPartitions) -> Result<()> {
    let mut seen = BTreeSet::new();
    for (member, tps) in given {
        if !group.members.contains_key(member) {
            return Err(MiniKafkaError::InvalidGroupId(format!(
                "sync_group assignment names {member:?}, not a member of group {:?} at generation {}",
                group.group_id, group.generation
            )));
        }
        for tp in tps {
            let exists = topics
                .get(&tp.topic)
                .is_some_and(|ps| ps.contains(&tp.partition));
            if !exists {
                return Err(MiniKafkaError::UnknownTopicOrPartition(format!(
                    "{tp} (in the sync_group assignment for {member:?})"
                )));
            }
            if !seen.insert(tp.clone()) {
                return Err(MiniKafkaError::InvalidGroupId(format!(
                    "sync_group assignment gives {tp} to more than one member"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "classic_tests.rs"]
mod tests;
