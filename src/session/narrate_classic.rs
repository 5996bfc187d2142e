//! The sentences of the consumer-group steps under Kafka's classic
//! protocol (`--rules kafka`), in English and Chinese: a join that waits
//! for the rest of the group or completes it (the generation, its
//! leader), a sync that waits for the leader or brings the assignment,
//! and members removed by the clock. Built only from the coordinator's
//! state and the step's result.
//!
//! ```text
//! member-2 joined workers: it waits for member-1 to rejoin (the rebalance ends by 25000 ms)
//! workers generation 2: leader member-1; member-1, member-2 joined; each waits for the leader's sync_group
//! member-1 (leader) assigned generation 2 by Kafka's RangeAssignor: member-1 owns orders-0, orders-1; member-2 owns orders-2, orders-3; member-2's waiting sync answered
//! ```

use crate::engine::TopicPartition;
use crate::engine::consumer::SyncOutcome;
use crate::engine::consumer::group::{Group, GroupState};
use crate::session::said::Said;

fn list(items: &[&str]) -> String {
    items.join(", ")
}

fn list_zh(items: &[&str]) -> String {
    items.join("、")
}

fn partitions(tps: &[TopicPartition]) -> Said {
    if tps.is_empty() {
        return Said::new("nothing", "无");
    }
    let names: Vec<String> = tps.iter().map(ToString::to_string).collect();
    Said::new(names.join(", "), names.join("、"))
}

/// A group's generation, leader and who owes what, as a join left it.
pub fn generation(group: &Group) -> Said {
    let id = &group.group_id;
    let generation = group.generation;
    match group.state {
        GroupState::Empty => Said::new(
            format!("{id} generation {generation}: empty"),
            format!("{id} 第 {generation} 代：空组"),
        ),
        GroupState::PreparingRebalance => {
            let missing: Vec<&str> = group
                .members
                .values()
                .filter(|m| !m.classic.awaiting_join)
                .map(|m| m.member_id.as_str())
                .collect();
            let until = group.rebalance_deadline_ms.unwrap_or_default();
            Said::new(
                format!(
                    "{id} is rebalancing: it waits for {} to rejoin (the rebalance ends by {until} ms)",
                    list(&missing)
                ),
                format!(
                    "{id} 正在重平衡：等待 {} 重新加入（最迟 {until} ms 结束）",
                    list_zh(&missing)
                ),
            )
        }
        GroupState::CompletingRebalance | GroupState::Stable => {
            let leader = group.leader.as_deref().unwrap_or_default();
            let members: Vec<&str> = group.members.keys().map(String::as_str).collect();
            let tail = if group.state == GroupState::Stable {
                Said::new("stable", "稳定")
            } else {
                Said::new(
                    "each waits for the leader's sync_group",
                    "各成员等待 leader 的 SyncGroup",
                )
            };
            Said::new(
                format!(
                    "{id} generation {generation}: leader {leader}; {} joined; {}",
                    list(&members),
                    tail.en
                ),
                format!(
                    "{id} 第 {generation} 代：leader 为 {leader}；{} 已加入；{}",
                    list_zh(&members),
                    tail.zh
                ),
            )
        }
    }
}

/// A classic join: it waits for the others, completed the rebalance, or
/// rejoined a generation that stands.
pub fn joined(group: &Group, member: &str) -> Said {
    let waiting = group
        .members
        .get(member)
        .is_some_and(|m| m.classic.awaiting_join);
    let g = generation(group);
    if waiting {
        Said::new(
            format!("{member} joined {}: {}", group.group_id, g.en),
            format!("{member} 加入 {}：{}", group.group_id, g.zh),
        )
    } else {
        g
    }
}

/// A member that left, then the group as it stands.
pub fn left(member: &str, group: &Group) -> Said {
    let g = generation(group);
    Said::new(
        format!("{member} left; {}", g.en),
        format!("{member} 已离开；{}", g.zh),
    )
}

/// How a leader's sync made the assignment: given in the action, or
/// computed by the range assignor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssignedBy {
    Given,
    RangeAssignor,
}

/// A classic sync: the member waits for the leader, the assignment the
/// leader's sync made (`made`: it did, and how), or the member's own.
pub fn synced(
    group: &Group,
    member: &str,
    outcome: &SyncOutcome,
    made: Option<AssignedBy>,
) -> Said {
    let leader = group.leader.as_deref().unwrap_or_default();
    match (outcome, made) {
        (SyncOutcome::Waiting { generation }, _) => Said::new(
            format!(
                "{member} synced generation {generation}: it waits for leader {leader}'s assignment"
            ),
            format!("{member} 同步第 {generation} 代：等待 leader {leader} 的分配"),
        ),
        (
            SyncOutcome::Assigned {
                generation,
                delivered,
                ..
            },
            Some(by),
        ) => {
            let by = match by {
                AssignedBy::Given => Said::new("with its own assignment", "按它自己的分配"),
                AssignedBy::RangeAssignor => {
                    Said::new("by Kafka's RangeAssignor", "用 Kafka 的 RangeAssignor ")
                }
            };
            let owners: Vec<Said> = group
                .assignment
                .iter()
                .map(|(m, tps)| {
                    let p = partitions(tps);
                    Said::new(format!("{m} owns {}", p.en), format!("{m} 拥有 {}", p.zh))
                })
                .collect();
            let owners = Said::join(&owners, "; ", "；");
            let names: Vec<&str> = delivered.iter().map(String::as_str).collect();
            let answered = if names.is_empty() {
                Said::default()
            } else {
                Said::new(
                    format!("; {}'s waiting sync answered", list(&names)),
                    format!("；{} 等待中的同步得到应答", list_zh(&names)),
                )
            };
            Said::new(
                format!(
                    "{member} (leader) assigned generation {generation} {}: {}{}",
                    by.en, owners.en, answered.en
                ),
                format!(
                    "{member}（leader）{}分配第 {generation} 代：{}{}",
                    by.zh, owners.zh, answered.zh
                ),
            )
        }
        (
            SyncOutcome::Assigned {
                generation,
                assignment,
                ..
            },
            None,
        ) => {
            let p = partitions(assignment);
            Said::new(
                format!("{member} synced generation {generation}: it owns {}", p.en),
                format!("{member} 同步第 {generation} 代：拥有 {}", p.zh),
            )
        }
    }
}

/// Members the clock removed (no heartbeat, rejoin or sync in time), then
/// each group as it stands.
pub fn removed(pairs: &[(String, String)], timeout_ms: u64, groups: &[Group]) -> Said {
    let who: Vec<String> = pairs.iter().map(|(g, m)| format!("{m} of {g}")).collect();
    let who_zh: Vec<String> = pairs.iter().map(|(g, m)| format!("{g} 的 {m}")).collect();
    let states: Vec<Said> = groups.iter().map(generation).collect();
    let s = Said::join(&states, "; ", "；");
    Said::new(
        format!(
            "removed {} (no heartbeat, rejoin or sync within {timeout_ms} ms); {}",
            who.join(", "),
            s.en
        ),
        format!(
            "{} 在 {timeout_ms} ms 内没有心跳、重新加入或同步，被移出；{}",
            who_zh.join("、"),
            s.zh
        ),
    )
}
