//! The consumer groups of a [`super::Snapshot`] (E15): each group's state,
//! generation and members (subscriptions, assignment, session deadline,
//! the positions and last poll of the member's client), each assigned or
//! committed partition's owner, committed offset, high watermark (the
//! book's `visible_end`) and lag, and what the last rebalance moved. Plain
//! data, no engine type, as every part of the snapshot.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::engine::TopicPartition;
use crate::engine::config::GroupProtocol;
use crate::engine::consumer::group::GroupState;
use crate::engine::core::cluster::ClusterState;
use crate::session::driver::MemberClients;

/// One consumer group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupSnapshot {
    pub group: String,
    /// The book's `GroupState`: `empty`, `preparing_rebalance`, `stable`
    /// (and Kafka's `completing_rebalance` under `--rules kafka`).
    pub state: String,
    pub generation: i32,
    pub session_timeout_ms: u64,
    pub members: Vec<MemberSnapshot>,
    /// Every partition of the topics its members subscribe to, and every
    /// one it has a committed offset on, in partition order.
    pub partitions: Vec<GroupPartitionSnapshot>,
    #[serde(default)]
    pub last_rebalance: Option<RebalanceSnapshot>,
    /// Kafka's classic protocol (`--rules kafka`): the member whose
    /// SyncGroup brings the assignment (none under the book's protocol).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leader: Option<String>,
}

/// One member, as the coordinator and its own client see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberSnapshot {
    pub member: String,
    pub subscriptions: Vec<String>,
    /// Its partitions in the group's generation (`<topic>-<partition>`).
    pub assignment: Vec<String>,
    /// The clock time its session ends at, unless it heartbeats.
    pub deadline_ms: u64,
    /// The generation its client last learned (behind the group's until
    /// it polls again: the book has no revoke barrier).
    #[serde(default)]
    pub client_generation: Option<i32>,
    /// Its client's next offset per partition.
    #[serde(default)]
    pub positions: BTreeMap<String, i64>,
    /// What its last poll returned.
    #[serde(default)]
    pub last_poll: Vec<PolledSnapshot>,
    /// Kafka's classic protocol: where it stands in a rebalance (none when
    /// it has its assignment, and always under the book's protocol).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rebalance: Option<MemberRebalance>,
}

/// A classic group member's part in the rebalance under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemberRebalance {
    /// PreparingRebalance, and it has not rejoined: it must, before the
    /// rebalance timeout, or it is removed.
    MustRejoin,
    /// It rejoined: its JoinGroup waits for the rest of the group.
    Rejoined,
    /// It has the new generation and owes a SyncGroup.
    OwesSync,
    /// Its SyncGroup came before the leader's: it waits for its
    /// assignment.
    AwaitsAssignment,
}

/// One record a poll returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolledSnapshot {
    pub partition: String,
    pub offset: i64,
    pub value: Option<String>,
}

/// One partition of a group: owner, committed offset and lag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupPartitionSnapshot {
    pub partition: String,
    pub owner: Option<String>,
    pub committed: Option<i64>,
    pub high_watermark: i64,
    pub log_end_offset: i64,
    /// The high watermark less the committed offset (less the log start
    /// when nothing is committed): what the group has yet to commit.
    pub lag: i64,
}

/// What the last rebalance moved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RebalanceSnapshot {
    pub generation: i32,
    pub moved: Vec<MoveSnapshot>,
}

/// One partition whose owner changed (None: no owner).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveSnapshot {
    pub partition: String,
    pub from: Option<String>,
    pub to: Option<String>,
}

/// The groups of a cluster state and its members' clients.
pub fn groups(s: &ClusterState, clients: &MemberClients) -> Vec<GroupSnapshot> {
    let coordinator = s.groups();
    coordinator
        .groups()
        .values()
        .map(|g| {
            let members = g
                .members
                .values()
                .map(|m| {
                    let client = clients.get(&(g.group_id.clone(), m.member_id.clone()));
                    let rebalance = match (coordinator.protocol(), m.classic) {
                        (GroupProtocol::EagerServer, _) => None,
                        (_, c) if c.awaiting_join => Some(MemberRebalance::Rejoined),
                        (_, c) if c.awaiting_sync => Some(MemberRebalance::AwaitsAssignment),
                        (_, c) if c.pending_sync => Some(MemberRebalance::OwesSync),
                        _ if g.state == GroupState::PreparingRebalance => {
                            Some(MemberRebalance::MustRejoin)
                        }
                        _ => None,
                    };
                    MemberSnapshot {
                        rebalance,
                        member: m.member_id.clone(),
                        subscriptions: m.subscriptions.iter().cloned().collect(),
                        assignment: g
                            .assignment
                            .get(&m.member_id)
                            .map(|tps| tps.iter().map(ToString::to_string).collect())
                            .unwrap_or_default(),
                        deadline_ms: m.deadline_ms,
                        client_generation: client.and_then(|c| c.consumer.generation()),
                        positions: client
                            .map(|c| {
                                c.consumer
                                    .positions()
                                    .iter()
                                    .map(|(tp, p)| (tp.to_string(), *p))
                                    .collect()
                            })
                            .unwrap_or_default(),
                        last_poll: client
                            .map(|c| {
                                c.last_poll
                                    .iter()
                                    .map(|p| PolledSnapshot {
                                        partition: p.tp.to_string(),
                                        offset: p.offset,
                                        value: p.value.clone(),
                                    })
                                    .collect()
                            })
                            .unwrap_or_default(),
                    }
                })
                .collect();
            let committed = s.offsets().groups().get(&g.group_id);
            let mut tps: std::collections::BTreeSet<TopicPartition> = s
                .partitions()
                .keys()
                .filter(|tp| {
                    g.members
                        .values()
                        .any(|m| m.subscriptions.contains(&tp.topic))
                })
                .cloned()
                .collect();
            tps.extend(committed.into_iter().flat_map(|c| c.keys().cloned()));
            let partitions = tps
                .into_iter()
                .filter_map(|tp| {
                    let set = s.partition(&tp).ok()?;
                    let hw = set.high_watermark();
                    let leader = &set.leader().log;
                    let committed = committed.and_then(|c| c.get(&tp).copied());
                    let from = committed.unwrap_or_else(|| leader.log_start_offset());
                    Some(GroupPartitionSnapshot {
                        partition: tp.to_string(),
                        owner: g.owner(&tp).map(str::to_string),
                        committed,
                        high_watermark: hw,
                        log_end_offset: leader.leo(),
                        lag: (hw - from).max(0),
                    })
                })
                .collect();
            GroupSnapshot {
                group: g.group_id.clone(),
                state: g.state.name().to_string(),
                generation: g.generation,
                session_timeout_ms: coordinator.session_timeout_ms(),
                leader: g.leader.clone(),
                members,
                partitions,
                last_rebalance: g.last_rebalance.as_ref().map(|r| RebalanceSnapshot {
                    generation: r.generation,
                    moved: r
                        .moved
                        .iter()
                        .map(|m| MoveSnapshot {
                            partition: m.tp.to_string(),
                            from: m.from.clone(),
                            to: m.to.clone(),
                        })
                        .collect(),
                }),
            }
        })
        .collect()
}
