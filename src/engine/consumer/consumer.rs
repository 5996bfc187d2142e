//! `Consumer` (the book's `minikafka/consumer/consumer.py`): a group
//! member's client side. It holds what the book's consumer holds in its
//! own process: its member id, the generation and partitions it last
//! learned from the coordinator, and a position per partition. Its
//! assignment is a local view: after another member joins, it keeps its
//! old partitions until [`Consumer::refresh_assignment`] (the book has no
//! revoke barrier; `labs/rebalance.py` shows it).
//!
//! The book's `auto_offset_reset` default, `earliest`, is the only reset
//! here: a partition without a committed offset starts at its log start,
//! and a position out of range goes back there.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::core::cluster::BrokerCluster;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::core::record::ConsumerRecord;
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::replication::IsolationLevel;

/// One group member's client (the book's `Consumer`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consumer {
    group_id: String,
    member_id: String,
    subscriptions: BTreeSet<String>,
    generation: Option<i32>,
    assignment: Vec<TopicPartition>,
    positions: BTreeMap<TopicPartition, i64>,
}

impl Consumer {
    /// A consumer of `group_id` that will join as `member_id`.
    pub fn new(group_id: &str, member_id: &str) -> Self {
        Self {
            group_id: group_id.to_string(),
            member_id: member_id.to_string(),
            subscriptions: BTreeSet::new(),
            generation: None,
            assignment: Vec::new(),
            positions: BTreeMap::new(),
        }
    }

    pub fn group_id(&self) -> &str {
        &self.group_id
    }

    pub fn member_id(&self) -> &str {
        &self.member_id
    }

    /// The partitions this consumer believes it owns.
    pub fn assignment(&self) -> &[TopicPartition] {
        &self.assignment
    }

    /// The generation it last learned (None before it joined).
    pub fn generation(&self) -> Option<i32> {
        self.generation
    }

    /// Its next offset per partition polled so far.
    pub fn positions(&self) -> &BTreeMap<TopicPartition, i64> {
        &self.positions
    }

    /// `subscribe`: joins the group with `topics` and takes the assignment
    /// the join answered.
    pub fn subscribe(&mut self, cluster: &BrokerCluster, topics: &BTreeSet<String>) -> Result<()> {
        let joined = cluster.join_group(&self.group_id, &self.member_id, topics)?;
        self.subscriptions = topics.clone();
        // Kafka's classic protocol: -1 while the join waits for the rest
        // of the group (the client has no new generation yet), and the
        // partitions come with SyncGroup ([`Consumer::take_assignment`]).
        if joined.generation >= 0 {
            self.apply_join(joined.generation, joined.assignment);
        }
        Ok(())
    }

    /// `refresh_assignment`: asks the coordinator for this member's
    /// generation and partitions now.
    pub fn refresh_assignment(&mut self, cluster: &BrokerCluster) -> Result<()> {
        let joined = cluster.group_assignment(&self.group_id, &self.member_id)?;
        self.apply_join(joined.generation, joined.assignment);
        Ok(())
    }

    /// Kafka's classic protocol: the generation and partitions a SyncGroup
    /// answered.
    pub fn take_assignment(&mut self, generation: i32, assignment: Vec<TopicPartition>) {
        self.apply_join(generation, assignment);
    }

    /// Keeps the positions of the partitions it still owns only.
    fn apply_join(&mut self, generation: i32, assignment: Vec<TopicPartition>) {
        self.generation = Some(generation);
        self.positions.retain(|tp, _| assignment.contains(tp));
        self.assignment = assignment;
    }

    /// `heartbeat` with the generation it holds.
    pub fn heartbeat(&self, cluster: &BrokerCluster) -> Result<u64> {
        let generation = self.joined()?;
        cluster.heartbeat(&self.group_id, &self.member_id, generation)
    }

    fn joined(&self) -> Result<i32> {
        self.generation
            .ok_or_else(|| MiniKafkaError::UnknownMember {
                group: self.group_id.clone(),
                member: Some(self.member_id.clone()),
            })
    }

    /// `poll`: up to `max_records` records from its partitions in
    /// assignment order, each from its position (first: the committed
    /// offset, else the log start), up to the high watermark, advancing
    /// the positions.
    pub fn poll(
        &mut self,
        cluster: &BrokerCluster,
        max_records: usize,
    ) -> Result<Vec<(TopicPartition, ConsumerRecord)>> {
        let mut result = Vec::new();
        for tp in self.assignment.clone() {
            if result.len() >= max_records {
                break;
            }
            // A partition whose topic was deleted is skipped, as a Kafka
            // consumer drops it once its metadata no longer lists it; the
            // next rebalance assigns what exists.
            if cluster.partition_metadata(&tp).is_err() {
                self.positions.remove(&tp);
                continue;
            }
            let position = match self.positions.get(&tp) {
                Some(&p) => p,
                None => {
                    let p = self.initial_position(cluster, &tp)?;
                    self.positions.insert(tp.clone(), p);
                    p
                }
            };
            let left = max_records - result.len();
            let fetched = match cluster.fetch(&tp, position, left, IsolationLevel::ReadUncommitted)
            {
                Err(MiniKafkaError::OffsetOutOfRange { .. }) => {
                    let start = cluster.leader_log(&tp)?.log_start_offset()?;
                    self.positions.insert(tp.clone(), start);
                    cluster.fetch(&tp, start, left, IsolationLevel::ReadUncommitted)?
                }
                other => other?,
            };
            if let Some(last) = fetched.last() {
                self.positions.insert(tp.clone(), last.offset + 1);
            }
            result.extend(fetched.into_iter().map(|r| (tp.clone(), r)));
        }
        Ok(result)
    }

    fn initial_position(&self, cluster: &BrokerCluster, tp: &TopicPartition) -> Result<i64> {
        match cluster.offsets().get(&self.group_id, tp) {
            Some(committed) => Ok(committed),
            None => cluster.leader_log(tp)?.log_start_offset(),
        }
    }

    /// `commit`: its positions, through the coordinator's fenced commit.
    pub fn commit(&self, cluster: &BrokerCluster) -> Result<()> {
        let generation = self.joined()?;
        cluster.commit_group_offsets(&self.group_id, &self.member_id, generation, &self.positions)
    }

    /// `close`: leaves the group.
    pub fn close(&self, cluster: &BrokerCluster) -> Result<bool> {
        cluster.leave_group(&self.group_id, &self.member_id)
    }
}
