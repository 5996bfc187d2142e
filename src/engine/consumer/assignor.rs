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
    let mut assigned: BTreeMap<String, Vec<TopicPartition>> = members
        .keys()
        .map(|member| (member.clone(), Vec::new()))
        .collect();
    let mut cursor = 0usize;
    for (topic, numbers) in partitions {
        let eligible: Vec<&String> = members
            .iter()
            .filter(|(_, subscriptions)| subscriptions.contains(topic))
            .map(|(member, _)| member)
            .collect();
        if eligible.is_empty() {
            continue;
        }
        let mut numbers = numbers.clone();
        numbers.sort_unstable();
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
