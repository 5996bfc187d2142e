//! Kafka's CreatePartitions on the engine: a topic grows by partitions
//! placed as `create_topic` places partitions of those numbers. No call of
//! the book's (its topics keep their partition count); an extension that
//! `mk-tui serve` needs for `kafka-topics.sh --alter --partitions`.

use super::BrokerCluster;
use super::open::{check_open_files, open_segments, scan_partition};
use crate::engine::core::metadata::TopicPartition;
use crate::engine::error::Result;

impl BrokerCluster {
    /// Grows `topic` to `count` partitions and returns how many it had.
    /// The new partitions get the topic's replication factor, placed as
    /// [`BrokerCluster::create_topic`] places partitions of those numbers
    /// (round-robin from broker index p), led by their first running
    /// replica; `metadata.json` names them before their logs are opened,
    /// so a crash between the two reopens them empty. Refusals
    /// (`UnknownTopicOrPartition`, `InvalidPartitions`,
    /// `PartitionsNotIncreased`) change nothing.
    pub fn create_partitions(&self, topic: &str, count: u32) -> Result<u32> {
        self.mutate(|state, now| {
            let brokers = state.config.broker_ids.clone();
            let mut added = state.metadata.plan_partitions(topic, count, &brokers)?;
            let current = count - added.len() as u32;
            // As create_topic: a partition made while brokers are stopped
            // is led by its first running replica.
            for (_, meta) in &mut added {
                if let Some(&running) = meta.replicas.iter().find(|b| !state.stopped.contains(b)) {
                    meta.leader_id = running;
                }
            }
            // Logs left under these partitions' directories (an earlier
            // topic of this name) are scanned first, as create_topic scans
            // them: a bad one refuses the growth with nothing written.
            let mut scanned = Vec::new();
            for (p, meta) in &added {
                let tp = TopicPartition::new(topic, *p);
                let logs = scan_partition(&state.config, &state.metadata, &tp, meta)?;
                scanned.push((tp, meta.clone(), logs));
            }
            check_open_files(
                state.metadata.path(),
                &format!("topic {topic:?}'s new partitions: their"),
                &scanned,
                open_segments(&state.partitions),
            )?;
            state.metadata.add_partitions(topic, &added)?;
            state.open_new_partitions(scanned, now)?;
            Ok(current)
        })
    }
}
