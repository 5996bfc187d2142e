//! The book's `cluster.groups` calls on the facade (E15): each runs the
//! [`GroupCoordinator`] under the cluster's lock at the clock's time, with
//! the topics the metadata holds now; a member's commit goes through the
//! cluster's `OffsetStore`, so it is durable in `offsets.json` as any
//! commit is.

use std::collections::BTreeSet;

use super::BrokerCluster;
use crate::engine::TopicPartition;
use crate::engine::consumer::classic::{Assignment, SyncOutcome};
use crate::engine::consumer::group::{Group, JoinResult};
use crate::engine::consumer::offsets::GroupOffsets;
use crate::engine::error::{MiniKafkaError, Result};

impl BrokerCluster {
    /// `groups.join`: adds `member` to `group` with its subscriptions and
    /// rebalances at once.
    pub fn join_group(
        &self,
        group: &str,
        member: &str,
        topics: &BTreeSet<String>,
    ) -> Result<JoinResult> {
        self.mutate(|state, now| {
            let known = state.topic_partition_numbers();
            state.groups.join(group, member, topics, &known, now)
        })
    }

    /// `groups.leave`: removes `member` and rebalances (no error for one
    /// that is not a member; returns whether it was).
    pub fn leave_group(&self, group: &str, member: &str) -> Result<bool> {
        self.mutate(|state, now| {
            let known = state.topic_partition_numbers();
            Ok(state.groups.leave(group, member, &known, now))
        })
    }

    /// `groups.heartbeat`: extends `member`'s session; returns its new
    /// deadline on the clock.
    pub fn heartbeat(&self, group: &str, member: &str, generation: i32) -> Result<u64> {
        self.mutate(|state, now| state.groups.heartbeat(group, member, generation, now))
    }

    /// Kafka's DeleteGroups for one group (no call of the book's): a group
    /// with members is refused ([`MiniKafkaError::GroupNotEmpty`]), one
    /// with neither members nor committed offsets is not found
    /// ([`MiniKafkaError::GroupIdNotFound`]), an empty id is invalid; else
    /// the group and all its committed offsets go, `offsets.json` replaced
    /// as a commit replaces it. Offsets a transaction staged for the group
    /// are not touched (docs/kafka-differences.md, "DeleteGroups").
    /// Returns how many committed offsets went.
    pub fn delete_group(&self, group: &str) -> Result<usize> {
        self.mutate(|state, _| {
            if group.is_empty() {
                return Err(MiniKafkaError::InvalidGroupId(
                    "the group id cannot be empty".to_string(),
                ));
            }
            let members = state.groups.group(group).map(|g| g.members.len());
            if let Some(members) = members.filter(|n| *n > 0) {
                return Err(MiniKafkaError::GroupNotEmpty {
                    group: group.to_string(),
                    members,
                });
            }
            if members.is_none() && !state.offsets.groups().contains_key(group) {
                return Err(MiniKafkaError::GroupIdNotFound(group.to_string()));
            }
            let removed = state.offsets.delete_group(group)?;
            state.groups.remove_empty(group);
            Ok(removed)
        })
    }

    /// Kafka's OffsetDelete for one group (no call of the book's): the
    /// committed offsets of `partitions` go, `offsets.json` replaced as a
    /// commit replaces it; returns those that went (a partition with no
    /// committed offset is skipped, as Kafka answers it NONE). An empty id
    /// is invalid, a group with neither members nor committed offsets is
    /// not found, and a topic a member subscribes to is refused
    /// ([`MiniKafkaError::GroupSubscribedToTopic`]), the whole step with
    /// it. Offsets a transaction staged are not touched, as DeleteGroups
    /// leaves them (docs/kafka-differences.md, "OffsetDelete").
    pub fn delete_offsets(
        &self,
        group: &str,
        partitions: &[TopicPartition],
    ) -> Result<Vec<TopicPartition>> {
        self.mutate(|state, _| {
            if group.is_empty() {
                return Err(MiniKafkaError::InvalidGroupId(
                    "the group id cannot be empty".to_string(),
                ));
            }
            let g = state.groups.group(group);
            if g.is_none() && !state.offsets.groups().contains_key(group) {
                return Err(MiniKafkaError::GroupIdNotFound(group.to_string()));
            }
            let subscribed = partitions.iter().find(|tp| {
                g.is_some_and(|g| {
                    g.members
                        .values()
                        .any(|m| m.subscriptions.contains(&tp.topic))
                })
            });
            if let Some(tp) = subscribed {
                return Err(MiniKafkaError::GroupSubscribedToTopic {
                    group: group.to_string(),
                    topic: tp.topic.clone(),
                });
            }
            state.offsets.delete_offsets(group, partitions)
        })
    }

    /// `groups.assignment`: `member`'s generation and partitions now.
    pub fn group_assignment(&self, group: &str, member: &str) -> Result<JoinResult> {
        self.with_state(|state| state.groups.assignment(group, member))
    }

    /// Kafka's SyncGroup (classic protocol, `--rules kafka` only): the
    /// leader's brings `assignment`, or the range assignor's when it gives
    /// none; a follower's before it waits.
    pub fn sync_group(
        &self,
        group: &str,
        member: &str,
        generation: i32,
        assignment: Option<&Assignment>,
    ) -> Result<SyncOutcome> {
        self.mutate(|state, now| {
            let known = state.topic_partition_numbers();
            state
                .groups
                .sync(group, member, generation, assignment, &known, now)
        })
    }

    /// `groups.commit`: `member`'s offsets, fenced by generation and
    /// ownership, committed durably.
    pub fn commit_group_offsets(
        &self,
        group: &str,
        member: &str,
        generation: i32,
        offsets: &GroupOffsets,
    ) -> Result<()> {
        self.mutate(|state, now| {
            let super::ClusterState {
                groups,
                offsets: store,
                ..
            } = state;
            groups.commit(group, member, generation, offsets, store, now)
        })
    }

    /// `expire_group_members`: removes every member whose session the
    /// clock has passed; returns the (group, member) pairs removed.
    pub fn expire_group_members(&self) -> Result<Vec<(String, String)>> {
        self.mutate(|state, now| {
            let known = state.topic_partition_numbers();
            Ok(state.groups.expire_members(&known, now))
        })
    }

    /// One group as it stands (a read).
    pub fn group(&self, group: &str) -> Option<Group> {
        self.with_state(|state| state.groups.group(group).cloned())
    }
}
