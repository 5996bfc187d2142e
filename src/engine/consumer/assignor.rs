//! `round_robin_assign` (the book's `minikafka/consumer/assignor.py`):
//! hands a group's partitions to its members in one round-robin pass over
//! the topics in name order, each topic's partitions in number order, among
//! the members subscribed to that topic (in member-id order). The cursor
//! runs on across topics, as the book's does, so two single-partition
//! topics land on two members.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::core::metadata::TopicPartition;

/// Each member's partitions, for every member (an unsubscribed or unlucky
/// member gets an empty list, as the book's dict does).
pub fn round_robin_assign(
    members: &BTreeMap<String, BTreeSet<String>>,
    partitions: &BTreeMap<String, Vec<u32>>,
) -> BTreeMap<String, Vec<TopicPartition>> {
    let mut assigned = empty_assignment(members);
    let mut cursor = 0usize;
    for (topic, eligible, numbers) in per_topic(members, partitions) {
        for partition in numbers {
            let member = eligible[cursor % eligible.len()];
            if let Some(list) = assigned.get_mut(member) {
                list.push(TopicPartition::new(topic, partition));
            }
            cursor += 1;
        }
    }
    assigned
}

/// Every member with an empty list, so that one no topic reaches still
/// has its entry.
pub(super) fn empty_assignment(
    members: &BTreeMap<String, BTreeSet<String>>,
) -> BTreeMap<String, Vec<TopicPartition>> {
    members
        .keys()
        .map(|member| (member.clone(), Vec::new()))
        .collect()
}

/// Each topic in name order with the members subscribed to it (in
/// member-id order, never empty: a topic no one reads is skipped) and its
/// partitions in number order: what every assignor walks.
pub(super) fn per_topic<'a>(
    members: &'a BTreeMap<String, BTreeSet<String>>,
    partitions: &'a BTreeMap<String, Vec<u32>>,
) -> impl Iterator<Item = (&'a str, Vec<&'a String>, Vec<u32>)> {
    partitions.iter().filter_map(|(topic, numbers)| {
        let eligible: Vec<&String> = members
            .iter()
            .filter(|(_, subscriptions)| subscriptions.contains(topic))
            .map(|(member, _)| member)
            .collect();
        if eligible.is_empty() {
            return None;
        }
        let mut numbers = numbers.clone();
        numbers.sort_unstable();
        Some((topic.as_str(), eligible, numbers))
    })
}
