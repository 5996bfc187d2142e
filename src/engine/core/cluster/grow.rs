//! Kafka's CreatePartitions on the engine: a topic grows by partitions
//! placed as `create_topic` places partitions of those numbers. No call of
//! the book's (its topics keep their partition count); an extension that
//! `mk-tui serve` needs for `kafka-topics.sh --alter --partitions`.

use super::BrokerCluster;
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
            let subject = format!("topic {topic:?}'s new partitions: their");
            let parts = added.iter_mut().map(|(p, meta)| (*p, meta));
            let scanned = state.ready_new_partitions(topic, parts, &subject)?;
            state.metadata.add_partitions(topic, &added)?;
            state.open_new_partitions(scanned, now)?;
            Ok(current)
        })
    }
}
