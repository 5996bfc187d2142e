//! The sentences of the consumer-group steps (E15), in English and
//! Chinese: who owns what after a rebalance and what moved, a heartbeat's
//! new deadline, a member's commit, what a poll read, and who expired.
//! Built only from the coordinator's state and the step's result, so the
//! text is a pure function of the actions.
//!
//! ```text
//! workers generation 2: member-1 owns orders-0, orders-2; member-2 owns orders-1, orders-3; moved orders-1, orders-3 from member-1 to member-2
//! member-1 read 2 records: orders-0 0..1; positions orders-0 2
//! ```

use crate::engine::TopicPartition;
use crate::engine::consumer::group::Group;
use crate::session::said::Said;

fn names(tps: &[TopicPartition]) -> String {
    if tps.is_empty() {
        "nothing".to_string()
    } else {
        tps.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A group after its rebalance: each member's partitions, then what
/// moved (grouped by the pair of owners, in partition order).
pub fn rebalanced(group: &Group) -> Said {
    let head = Said::new(
        format!("{} generation {}", group.group_id, group.generation),
        format!("{} 第 {} 代", group.group_id, group.generation),
    );
    if group.members.is_empty() {
        return Said::new(
            format!("{}: empty, no partition assigned", head.en),
            format!("{}：空组，没有分配分区", head.zh),
        );
    }
    let owners: Vec<Said> = group
        .assignment
        .iter()
        .map(|(member, tps)| {
            let list = names(tps);
            let zh = if tps.is_empty() {
                "无".to_string()
            } else {
                list.replace(", ", "、")
            };
            Said::new(
                format!("{member} owns {list}"),
                format!("{member} 拥有 {zh}"),
            )
        })
        .collect();
    let owners = Said::join(&owners, "; ", "；");
    let moved = moved(group);
    match moved {
        Some(m) => Said::new(
            format!("{}: {}; {}", head.en, owners.en, m.en),
            format!("{}：{}；{}", head.zh, owners.zh, m.zh),
        ),
        None => Said::new(
            format!("{}: {}; nothing moved", head.en, owners.en),
            format!("{}：{}；没有分区移动", head.zh, owners.zh),
        ),
    }
}

/// "moved orders-1, orders-3 from member-1 to member-2", or None.
fn moved(group: &Group) -> Option<Said> {
    let rebalance = group.last_rebalance.as_ref()?;
    let mut runs: Vec<(Option<&str>, Option<&str>, Vec<TopicPartition>)> = Vec::new();
    for m in &rebalance.moved {
        let key = (m.from.as_deref(), m.to.as_deref());
        match runs.iter_mut().find(|(f, t, _)| (*f, *t) == key) {
            Some(run) => run.2.push(m.tp.clone()),
            None => runs.push((key.0, key.1, vec![m.tp.clone()])),
        }
    }
    if runs.is_empty() {
        return None;
    }
    let parts: Vec<Said> = runs
        .iter()
        .map(|(from, to, tps)| {
            let list = names(tps);
            let zh_list = list.replace(", ", "、");
            let from_en = from.map_or("no one".to_string(), |f| f.to_string());
            let to_en = to.map_or("no one".to_string(), |t| t.to_string());
            let from_zh = from.map_or("无人".to_string(), |f| f.to_string());
            let to_zh = to.map_or("无人".to_string(), |t| t.to_string());
            Said::new(
                format!("{list} from {from_en} to {to_en}"),
                format!("{zh_list} 从 {from_zh} 移到 {to_zh}"),
            )
        })
        .collect();
    let all = Said::join(&parts, ", ", "，");
    Some(Said::new(
        format!("moved {}", all.en),
        format!("移动 {}", all.zh),
    ))
}

/// A member that left (or was not a member), then the group.
pub fn left(member: &str, was_member: bool, group: Option<&Group>, group_id: &str) -> Said {
    match (was_member, group) {
        (true, Some(g)) => {
            let r = rebalanced(g);
            Said::new(
                format!("{member} left; {}", r.en),
                format!("{member} 已离开；{}", r.zh),
            )
        }
        _ => Said::new(
            format!("{member} was not a member of {group_id}: nothing changed"),
            format!("{member} 不是 {group_id} 的成员：没有变化"),
        ),
    }
}

/// A heartbeat's new session deadline.
pub fn heartbeat(member: &str, generation: i32, deadline_ms: u64) -> Said {
    Said::new(
        format!("{member} (generation {generation}) stays until {deadline_ms} ms"),
        format!("{member}（第 {generation} 代）的会话延至 {deadline_ms} ms"),
    )
}

/// A group deleted (Kafka's DeleteGroups), with how many committed
/// offsets went with it.
pub fn deleted(group: &str, offsets: usize) -> Said {
    Said::new(
        format!(
            "group {group} deleted with its {offsets} committed offset(s): a new consumer of it starts from auto.offset.reset"
        ),
        format!(
            "消费组 {group} 已删除，连同它已提交的 {offsets} 个 offset：它的新消费者从 auto.offset.reset 开始"
        ),
    )
}

/// Committed offsets deleted (Kafka's OffsetDelete): which went; none if
/// no partition asked had one.
pub fn offsets_deleted(group: &str, removed: &[TopicPartition]) -> Said {
    if removed.is_empty() {
        return Said::new(
            format!("group {group}: no committed offset to delete"),
            format!("消费组 {group}：没有可删除的已提交 offset"),
        );
    }
    let list = removed
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    Said::new(
        format!(
            "group {group}: committed offset(s) of {list} deleted: its next consumer of them starts from auto.offset.reset"
        ),
        format!(
            "消费组 {group}：{list} 的已提交 offset 已删除：之后消费它们的成员从 auto.offset.reset 开始"
        ),
    )
}

/// A member's commit that passed the coordinator's fences.
pub fn committed(
    group: &str,
    member: &str,
    generation: i32,
    offsets: &[(TopicPartition, i64)],
) -> Said {
    let list: Vec<String> = offsets
        .iter()
        .map(|(tp, o)| format!("{tp} at {o}"))
        .collect();
    let list_zh: Vec<String> = offsets
        .iter()
        .map(|(tp, o)| format!("{tp} 为 {o}"))
        .collect();
    Said::new(
        format!(
            "{member} committed {} for {group} (generation {generation})",
            if list.is_empty() {
                "nothing".to_string()
            } else {
                list.join(", ")
            }
        ),
        format!(
            "{member} 为 {group} 提交 {}（第 {generation} 代）",
            if list_zh.is_empty() {
                "空".to_string()
            } else {
                list_zh.join("、")
            }
        ),
    )
}

/// What a poll read, per partition as offset ranges, and the positions.
pub fn polled(
    member: &str,
    read: &[(TopicPartition, i64)],
    positions: &[(TopicPartition, i64)],
) -> Said {
    let mut ranges: Vec<(TopicPartition, i64, i64)> = Vec::new();
    for (tp, offset) in read {
        match ranges.last_mut() {
            Some((t, _, last)) if t == tp => *last = *offset,
            _ => ranges.push((tp.clone(), *offset, *offset)),
        }
    }
    let span = |(tp, a, b): &(TopicPartition, i64, i64)| {
        if a == b {
            format!("{tp} {a}")
        } else {
            format!("{tp} {a}..{b}")
        }
    };
    let spans: Vec<String> = ranges.iter().map(span).collect();
    let at: Vec<String> = positions
        .iter()
        .map(|(tp, p)| format!("{tp} {p}"))
        .collect();
    let at_zh = if at.is_empty() {
        "无".to_string()
    } else {
        at.join("、")
    };
    let at = if at.is_empty() {
        "none".to_string()
    } else {
        at.join(", ")
    };
    let n = read.len();
    let records = if n == 1 { "record" } else { "records" };
    if n == 0 {
        Said::new(
            format!("{member} read nothing; positions {at}"),
            format!("{member} 没有读到记录；位置 {}", at_zh),
        )
    } else {
        Said::new(
            format!(
                "{member} read {n} {records}: {}; positions {at}",
                spans.join(", ")
            ),
            format!(
                "{member} 读到 {n} 条记录：{}；位置 {at_zh}",
                spans.join("、")
            ),
        )
    }
}

/// Members whose sessions the clock passed, then each group's rebalance.
pub fn expired(pairs: &[(String, String)], timeout_ms: u64, groups: &[Group]) -> Said {
    let who: Vec<String> = pairs.iter().map(|(g, m)| format!("{m} of {g}")).collect();
    let who_zh: Vec<String> = pairs.iter().map(|(g, m)| format!("{g} 的 {m}")).collect();
    let rebalances: Vec<Said> = groups.iter().map(rebalanced).collect();
    let r = Said::join(&rebalances, "; ", "；");
    Said::new(
        format!(
            "expired {} (session timeout {timeout_ms} ms); {}",
            who.join(", "),
            r.en
        ),
        format!(
            "{} 会话超时（{timeout_ms} ms）被移出；{}",
            who_zh.join("、"),
            r.zh
        ),
    )
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;
    use crate::engine::consumer::GroupCoordinator;

    fn two_members() -> GroupCoordinator {
        let topics = BTreeMap::from([("orders".to_string(), vec![0, 1, 2, 3])]);
        let subs = BTreeSet::from(["orders".to_string()]);
        let mut c = GroupCoordinator::new(10_000);
        c.join("workers", "member-1", &subs, &topics, 0).unwrap();
        c.join("workers", "member-2", &subs, &topics, 0).unwrap();
        c
    }

    #[test]
    fn a_rebalance_says_who_owns_what_and_what_moved_in_both_languages() {
        let c = two_members();
        let s = rebalanced(c.group("workers").unwrap());
        assert_eq!(
            s.en,
            "workers generation 2: member-1 owns orders-0, orders-2; member-2 owns orders-1, orders-3; moved orders-1, orders-3 from member-1 to member-2"
        );
        assert_eq!(
            s.zh,
            "workers 第 2 代：member-1 拥有 orders-0、orders-2；member-2 拥有 orders-1、orders-3；移动 orders-1、orders-3 从 member-1 移到 member-2"
        );
    }

    #[test]
    fn a_poll_gives_ranges_and_positions() {
        let tp = |p| TopicPartition::new("orders", p);
        let s = polled(
            "m",
            &[(tp(0), 0), (tp(0), 1), (tp(2), 5)],
            &[(tp(0), 2), (tp(2), 6)],
        );
        assert_eq!(
            s.en,
            "m read 3 records: orders-0 0..1, orders-2 5; positions orders-0 2, orders-2 6"
        );
        assert_eq!(
            s.zh,
            "m 读到 3 条记录：orders-0 0..1、orders-2 5；位置 orders-0 2、orders-2 6"
        );
        let s = polled("m", &[], &[]);
        assert_eq!(
            (s.en.as_str(), s.zh.as_str()),
            ("m read nothing; positions none", "m 没有读到记录；位置 无")
        );
    }

    #[test]
    fn leaving_a_group_one_is_not_in_says_nothing_changed() {
        let s = left("ghost", false, None, "workers");
        assert_eq!(s.en, "ghost was not a member of workers: nothing changed");
        assert_eq!(s.zh, "ghost 不是 workers 的成员：没有变化");
    }
}
