//! `range_assign`: Kafka's `RangeAssignor`
//! (`org.apache.kafka.clients.consumer.RangeAssignor`, the Java client's
//! first default `partition.assignment.strategy`), the client-side
//! assignor a classic group's leader runs when a `sync_group` gives no
//! assignment of its own. Per topic, independently: the members
//! subscribed to it in member-id order, the partitions in number order;
//! each member gets `n / m` consecutive partitions and the first `n % m`
//! one more. Unlike the book's round-robin, the cursor starts again at
//! every topic, so two single-partition topics land on the same member
//! (Kafka's documented imbalance).

use std::collections::{BTreeMap, BTreeSet};

use super::assignor::{empty_assignment, per_topic};
use crate::engine::core::metadata::TopicPartition;

/// Each member's partitions, for every member (one that no topic reached
/// gets an empty list), topics in name order, partitions in number order.
pub fn range_assign(
    members: &BTreeMap<String, BTreeSet<String>>,
    partitions: &BTreeMap<String, Vec<u32>>,
) -> BTreeMap<String, Vec<TopicPartition>> {
    let mut assigned = empty_assignment(members);
    for (topic, eligible, numbers) in per_topic(members, partitions) {
        let (each, extra) = (
            numbers.len() / eligible.len(),
            numbers.len() % eligible.len(),
        );
        let mut next = numbers.into_iter();
        for (i, member) in eligible.into_iter().enumerate() {
            let count = each + usize::from(i < extra);
            if let Some(list) = assigned.get_mut(member) {
                list.extend(
                    next.by_ref()
                        .take(count)
                        .map(|p| TopicPartition::new(topic, p)),
                );
            }
        }
    }
    assigned
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subs(pairs: &[(&str, &[&str])]) -> BTreeMap<String, BTreeSet<String>> {
        pairs
            .iter()
            .map(|(m, ts)| (m.to_string(), ts.iter().map(|t| t.to_string()).collect()))
            .collect()
    }

    fn names(a: &BTreeMap<String, Vec<TopicPartition>>, m: &str) -> Vec<String> {
        a[m].iter().map(ToString::to_string).collect()
    }

    /// Kafka's RangeAssignor javadoc example: two consumers, two topics of
    /// three partitions: C0 gets t0p0, t0p1, t1p0, t1p1; C1 t0p2, t1p2.
    #[test]
    fn the_javadoc_example_gives_the_first_member_the_extra_partitions() {
        let members = subs(&[("C0", &["t0", "t1"]), ("C1", &["t0", "t1"])]);
        let topics = BTreeMap::from([
            ("t0".to_string(), vec![0, 1, 2]),
            ("t1".into(), vec![2, 1, 0]),
        ]);
        let a = range_assign(&members, &topics);
        assert_eq!(names(&a, "C0"), ["t0-0", "t0-1", "t1-0", "t1-1"]);
        assert_eq!(names(&a, "C1"), ["t0-2", "t1-2"]);
    }

    #[test]
    fn only_subscribers_share_a_topic_and_a_member_without_partitions_has_an_empty_list() {
        let members = subs(&[("a", &["x"]), ("b", &["x", "y"]), ("c", &["y"])]);
        let topics = BTreeMap::from([("x".to_string(), vec![0]), ("y".into(), vec![0, 1, 2])]);
        let a = range_assign(&members, &topics);
        assert_eq!(names(&a, "a"), ["x-0"]);
        assert_eq!(names(&a, "b"), ["y-0", "y-1"]);
        assert_eq!(names(&a, "c"), ["y-2"]);
        let lonely = range_assign(&subs(&[("a", &["x"]), ("b", &["x"])]), &topics);
        assert_eq!(names(&lonely, "b"), Vec::<String>::new());
    }
}
