//! `GroupCoordinator` (the book's `minikafka/consumer/group.py`, E15):
//! consumer-group membership, round-robin assignment and generation
//! fencing, with the book's one eager server-side rebalance: every join,
//! leave or expiry bumps the generation and assigns every partition again
//! at once, so a group is only ever `Empty` or `Stable` between calls
//! (`PreparingRebalance` lasts inside the call). Kafka's JoinGroup/SyncGroup
//! round trips, revocation and KIP-429's cooperative rebalance are not
//! modelled (docs/kafka-mapping.md, "Consumer groups").
//!
//! Membership is in memory, as the book keeps it: a crash drops every
//! group (the coordinator starts empty on open), while the offsets a member
//! committed are in `offsets.json` through the [`OffsetStore`]. Time is the
//! engine clock's, passed in as `now_ms`: a member's deadline is the clock
//! at its join or last heartbeat plus the session timeout, and
//! [`GroupCoordinator::expire_members`] removes those strictly past it.
//!
//! Under `--rules kafka` ([`GroupProtocol::Classic`]) the same coordinator
//! runs Kafka's classic protocol instead (`classic.rs`): the states gain
//! `CompletingRebalance`, a group has a leader, and the assignment comes
//! from the leader's SyncGroup.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::config::GroupProtocol;
use crate::engine::consumer::assignor::round_robin_assign;
use crate::engine::consumer::offsets::{GroupOffsets, OffsetStore};
use crate::engine::core::metadata::TopicPartition;
use crate::engine::error::{MiniKafkaError, Result};

/// The book's `GroupState`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum GroupState {
    Empty,
    PreparingRebalance,
    /// Kafka's classic protocol only: the join is answered, a new
    /// generation has a leader, and the leader's SyncGroup is awaited.
    CompletingRebalance,
    Stable,
}

impl GroupState {
    /// The book's value: `empty`, `preparing_rebalance`, `stable` (and
    /// `completing_rebalance`, Kafka's, in the same spelling).
    pub fn name(self) -> &'static str {
        match self {
            Self::Empty => "empty",
            Self::PreparingRebalance => "preparing_rebalance",
            Self::CompletingRebalance => "completing_rebalance",
            Self::Stable => "stable",
        }
    }
}

/// One member: what it subscribes to and when its session ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMember {
    pub member_id: String,
    pub subscriptions: BTreeSet<String>,
    pub deadline_ms: u64,
    /// Classic protocol: where it stands in the rebalance (always the
    /// default under the book's eager one).
    pub classic: ClassicMember,
}

/// A member's part in a classic rebalance, as serve's coordinator
/// (src/kafka/groups.rs) keeps it: Kafka's awaiting-join and
/// awaiting-sync futures and its pending-sync set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClassicMember {
    /// It (re)joined this PreparingRebalance: its JoinGroup waits for the
    /// rest of the group (or the rebalance timeout).
    pub awaiting_join: bool,
    /// Its SyncGroup came before the leader's: it waits for its
    /// assignment.
    pub awaiting_sync: bool,
    /// It got this generation's join answer and has not synced yet: it is
    /// removed if it does not sync within the rebalance timeout.
    pub pending_sync: bool,
}

/// One partition that changed owner at a rebalance (`None`: no owner).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionMove {
    pub tp: TopicPartition,
    pub from: Option<String>,
    pub to: Option<String>,
}

/// What the last rebalance of a group did (not in the book, which keeps
/// only the new assignment: kept so the dashboard can show what moved).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rebalance {
    /// The generation it made.
    pub generation: i32,
    /// Partitions whose owner changed, in partition order.
    pub moved: Vec<PartitionMove>,
}

/// One group (the book's `Group`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub group_id: String,
    pub generation: i32,
    pub state: GroupState,
    pub members: BTreeMap<String, GroupMember>,
    pub assignment: BTreeMap<String, Vec<TopicPartition>>,
    pub last_rebalance: Option<Rebalance>,
    /// Classic protocol: the member whose SyncGroup brings the assignment
    /// (None under the book's protocol, where the coordinator assigns).
    pub leader: Option<String>,
    /// Classic protocol, PreparingRebalance: when the join completes with
    /// whoever rejoined.
    pub rebalance_deadline_ms: Option<u64>,
    /// Classic protocol, after a join: when members that did not sync are
    /// removed.
    pub sync_deadline_ms: Option<u64>,
    /// Classic protocol: the last generation's assignment, void since the
    /// join completed, kept until the leader's sync to say what moved.
    pub(super) superseded: BTreeMap<String, Vec<TopicPartition>>,
}

impl Group {
    pub(super) fn new(group_id: &str) -> Self {
        Self {
            group_id: group_id.to_string(),
            generation: 0,
            state: GroupState::Empty,
            members: BTreeMap::new(),
            assignment: BTreeMap::new(),
            last_rebalance: None,
            leader: None,
            rebalance_deadline_ms: None,
            sync_deadline_ms: None,
            superseded: BTreeMap::new(),
        }
    }

    /// The member that owns `tp` in this generation, if any.
    pub fn owner(&self, tp: &TopicPartition) -> Option<&str> {
        self.assignment
            .iter()
            .find(|(_, owned)| owned.contains(tp))
            .map(|(member, _)| member.as_str())
    }
}

/// A member's generation and partitions (the book's `JoinResult`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinResult {
    pub generation: i32,
    pub assignment: Vec<TopicPartition>,
}

/// Every topic's partition numbers, as the book's `topic_partitions()`
/// callback gives them.
pub type TopicPartitions = BTreeMap<String, Vec<u32>>;

/// The book's `GroupCoordinator`, over the engine clock's time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupCoordinator {
    pub(super) session_timeout_ms: u64,
    pub(super) protocol: GroupProtocol,
    pub(super) groups: BTreeMap<String, Group>,
}

impl GroupCoordinator {
    /// An empty coordinator (the book's, made at every open).
    pub fn new(session_timeout_ms: u64) -> Self {
        Self::with_protocol(session_timeout_ms, GroupProtocol::EagerServer)
    }

    /// An empty coordinator speaking `protocol`.
    pub fn with_protocol(session_timeout_ms: u64, protocol: GroupProtocol) -> Self {
        Self {
            session_timeout_ms,
            protocol,
            groups: BTreeMap::new(),
        }
    }

    /// The protocol its groups rebalance with.
    pub fn protocol(&self) -> GroupProtocol {
        self.protocol
    }

    /// The session timeout every member's deadline is counted with.
    pub fn session_timeout_ms(&self) -> u64 {
        self.session_timeout_ms
    }

    /// Every group, by id (an empty group stays, as in the book).
    pub fn groups(&self) -> &BTreeMap<String, Group> {
        &self.groups
    }

    /// One group.
    pub fn group(&self, group_id: &str) -> Option<&Group> {
        self.groups.get(group_id)
    }

    /// Forgets `group_id` if it has no members (Kafka's DeleteGroups; the
    /// caller refused a group with members). Whether it was known.
    pub fn remove_empty(&mut self, group_id: &str) -> bool {
        let empty = self
            .groups
            .get(group_id)
            .is_some_and(|g| g.members.is_empty());
        empty && self.groups.remove(group_id).is_some()
    }

    /// Adds (or re-adds) `member_id` with its subscriptions, rebalances, and
    /// returns its generation and partitions. Refuses empty ids and topics
    /// that do not exist (the book's `ValueError`s).
    pub fn join(
        &mut self,
        group_id: &str,
        member_id: &str,
        subscriptions: &BTreeSet<String>,
        topics: &TopicPartitions,
        now_ms: u64,
    ) -> Result<JoinResult> {
        if group_id.is_empty() || member_id.is_empty() {
            return Err(MiniKafkaError::InvalidGroupId(
                "group and member IDs cannot be empty".to_string(),
            ));
        }
        let missing: Vec<&str> = subscriptions
            .iter()
            .filter(|t| !topics.contains_key(*t))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(MiniKafkaError::UnknownTopicOrPartition(format!(
                "(subscribed topics {missing:?})"
            )));
        }
        if self.protocol == GroupProtocol::Classic {
            return self.classic_join(group_id, member_id, subscriptions, now_ms);
        }
        let deadline_ms = now_ms.saturating_add(self.session_timeout_ms);
        let group = self
            .groups
            .entry(group_id.to_string())
            .or_insert_with(|| Group::new(group_id));
        group.members.insert(
            member_id.to_string(),
            GroupMember {
                member_id: member_id.to_string(),
                subscriptions: subscriptions.clone(),
                deadline_ms,
                classic: ClassicMember::default(),
            },
        );
        rebalance(group, topics);
        self.assignment(group_id, member_id)
    }

    /// Removes `member_id` and rebalances; an unknown group or member is
    /// no error (the book returns). Returns whether it was a member.
    pub fn leave(
        &mut self,
        group_id: &str,
        member_id: &str,
        topics: &TopicPartitions,
        now_ms: u64,
    ) -> bool {
        if self.protocol == GroupProtocol::Classic {
            return self.classic_leave(group_id, member_id, now_ms);
        }
        let Some(group) = self.groups.get_mut(group_id) else {
            return false;
        };
        if group.members.remove(member_id).is_none() {
            return false;
        }
        rebalance(group, topics);
        true
    }

    /// Extends `member_id`'s session to the clock plus the timeout, if its
    /// generation is the group's (checked before the member, as the book
    /// does). Returns the new deadline.
    pub fn heartbeat(
        &mut self,
        group_id: &str,
        member_id: &str,
        generation: i32,
        now_ms: u64,
    ) -> Result<u64> {
        if self.protocol == GroupProtocol::Classic {
            return self.classic_heartbeat(group_id, member_id, generation, now_ms);
        }
        let timeout = self.session_timeout_ms;
        let group = require_group(&mut self.groups, group_id)?;
        validate_generation(group, generation)?;
        let member = group
            .members
            .get_mut(member_id)
            .ok_or_else(|| unknown_member(group_id, member_id))?;
        member.deadline_ms = now_ms.saturating_add(timeout);
        Ok(member.deadline_ms)
    }

    /// Removes every member whose deadline the clock has passed (strictly:
    /// `now > deadline`), rebalancing each group that lost one. Returns
    /// (group, member) pairs in group then member order.
    pub fn expire_members(
        &mut self,
        topics: &TopicPartitions,
        now_ms: u64,
    ) -> Vec<(String, String)> {
        if self.protocol == GroupProtocol::Classic {
            return self.classic_tick(now_ms);
        }
        let mut expired = Vec::new();
        for (group_id, group) in &mut self.groups {
            let removed: Vec<String> = group
                .members
                .values()
                .filter(|m| now_ms > m.deadline_ms)
                .map(|m| m.member_id.clone())
                .collect();
            for member_id in &removed {
                group.members.remove(member_id);
                expired.push((group_id.clone(), member_id.clone()));
            }
            if !removed.is_empty() {
                rebalance(group, topics);
            }
        }
        expired
    }

    /// `member_id`'s generation and partitions now.
    pub fn assignment(&self, group_id: &str, member_id: &str) -> Result<JoinResult> {
        let group = self
            .groups
            .get(group_id)
            .ok_or_else(|| unknown_group(group_id))?;
        let Some(member) = group.members.get(member_id) else {
            return Err(unknown_member(group_id, member_id));
        };
        // Classic: a member has its partitions once its own SyncGroup
        // brought them.
        let unsynced = member.classic.pending_sync || member.classic.awaiting_sync;
        if group.state != GroupState::Stable || unsynced {
            return Err(MiniKafkaError::RebalanceInProgress(group_id.to_string()));
        }
        Ok(JoinResult {
            generation: group.generation,
            assignment: group.assignment.get(member_id).cloned().unwrap_or_default(),
        })
    }

    /// A group's state.
    pub fn state(&self, group_id: &str) -> Result<GroupState> {
        self.groups
            .get(group_id)
            .map(|g| g.state)
            .ok_or_else(|| unknown_group(group_id))
    }

    /// Commits `offsets` for `member_id` through the offset store, fenced
    /// as the book fences it: the group is stable, the generation is the
    /// group's, the member is in it, and it owns every partition named.
    pub fn commit(
        &mut self,
        group_id: &str,
        member_id: &str,
        generation: i32,
        offsets: &GroupOffsets,
        store: &mut OffsetStore,
        now_ms: u64,
    ) -> Result<()> {
        if self.protocol == GroupProtocol::Classic {
            self.classic_validate_commit(group_id, member_id, generation, now_ms)?;
            return check_owner(&self.groups[group_id], member_id, offsets)
                .and_then(|()| store.commit_many(group_id, offsets));
        }
        let group = self
            .groups
            .get(group_id)
            .ok_or_else(|| unknown_group(group_id))?;
        if group.state != GroupState::Stable {
            return Err(MiniKafkaError::RebalanceInProgress(group_id.to_string()));
        }
        validate_generation(group, generation)?;
        if !group.members.contains_key(member_id) {
            return Err(unknown_member(group_id, member_id));
        }
        check_owner(group, member_id, offsets)?;
        store.commit_many(group_id, offsets)
    }
}

/// The engine's fencing beyond Kafka's (the book's): a member commits only
/// partitions its assignment holds.
fn check_owner(group: &Group, member_id: &str, offsets: &GroupOffsets) -> Result<()> {
    let owned = group.assignment.get(member_id);
    match offsets
        .keys()
        .find(|tp| !owned.is_some_and(|o| o.contains(tp)))
    {
        Some(tp) => Err(MiniKafkaError::NotPartitionOwner {
            group: group.group_id.clone(),
            member: member_id.to_string(),
            tp: tp.to_string(),
        }),
        None => Ok(()),
    }
}

pub(super) fn unknown_group(group_id: &str) -> MiniKafkaError {
    MiniKafkaError::UnknownMember {
        group: group_id.to_string(),
        member: None,
    }
}

pub(super) fn unknown_member(group_id: &str, member_id: &str) -> MiniKafkaError {
    MiniKafkaError::UnknownMember {
        group: group_id.to_string(),
        member: Some(member_id.to_string()),
    }
}

fn require_group<'a>(
    groups: &'a mut BTreeMap<String, Group>,
    group_id: &str,
) -> Result<&'a mut Group> {
    groups
        .get_mut(group_id)
        .ok_or_else(|| unknown_group(group_id))
}

/// Kafka carries the generation in heartbeats and offset commits: a
/// membership change bumps it, fencing a stale owner before it can commit
/// progress for a partition now assigned elsewhere.
pub(super) fn validate_generation(group: &Group, generation: i32) -> Result<()> {
    if generation == group.generation {
        Ok(())
    } else {
        Err(MiniKafkaError::IllegalGeneration {
            group: group.group_id.clone(),
            generation,
            current: group.generation,
        })
    }
}

/// The book's `_rebalance`: a new generation and a fresh round-robin
/// assignment, done at once; an empty group has no assignment.
fn rebalance(group: &mut Group, topics: &TopicPartitions) {
    group.state = GroupState::PreparingRebalance;
    group.generation = group.generation.saturating_add(1);
    let before = std::mem::take(&mut group.assignment);
    if group.members.is_empty() {
        group.state = GroupState::Empty;
    } else {
        let subscriptions = group
            .members
            .iter()
            .map(|(id, m)| (id.clone(), m.subscriptions.clone()))
            .collect();
        group.assignment = round_robin_assign(&subscriptions, topics);
        group.state = GroupState::Stable;
    }
    group.last_rebalance = Some(Rebalance {
        generation: group.generation,
        moved: moves(&before, &group.assignment),
    });
}

/// The partitions whose owner differs between two assignments.
pub(super) fn moves(
    before: &BTreeMap<String, Vec<TopicPartition>>,
    after: &BTreeMap<String, Vec<TopicPartition>>,
) -> Vec<PartitionMove> {
    let owners = |a: &BTreeMap<String, Vec<TopicPartition>>| -> BTreeMap<TopicPartition, String> {
        a.iter()
            .flat_map(|(m, tps)| tps.iter().map(move |tp| (tp.clone(), m.clone())))
            .collect()
    };
    let (old, new) = (owners(before), owners(after));
    let every: BTreeSet<&TopicPartition> = old.keys().chain(new.keys()).collect();
    every
        .into_iter()
        .filter(|tp| old.get(*tp) != new.get(*tp))
        .map(|tp| PartitionMove {
            tp: tp.clone(),
            from: old.get(tp).cloned(),
            to: new.get(tp).cloned(),
        })
        .collect()
}
