//! A topic's cleaning config changed after its creation (Kafka's
//! IncrementalAlterConfigs and AlterConfigs of a topic): the new config
//! replaces the old one in metadata.json, where `mk-tui serve`'s cleaner
//! reads it at its next tick. The engine itself cleans only when asked
//! (the `retention` and `compact` actions), so nothing else changes here.

use super::BrokerCluster;
use crate::engine::core::metadata::TopicConfig;
use crate::engine::error::{MiniKafkaError, Result};

impl BrokerCluster {
    /// Replaces `topic`'s cleaning config, durably (metadata.json is
    /// rewritten atomically). An unknown topic is `UnknownTopicOrPartition`.
    /// Whether anything changed.
    pub fn alter_topic_config(&self, topic: &str, config: TopicConfig) -> Result<bool> {
        self.mutate(|state, _| {
            let before = state
                .metadata
                .topics()
                .get(topic)
                .map(|t| t.config)
                .ok_or_else(|| MiniKafkaError::UnknownTopicOrPartition(topic.to_string()))?;
            if before == config {
                return Ok(false);
            }
            state.metadata.set_config(topic, config)?;
            Ok(true)
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::core::metadata::{CleanupPolicy, TopicConfig};
    use crate::engine::{BrokerCluster, ManualClock, MiniKafkaConfig};

    /// The new config is the topic's, in memory and after a reopen; an
    /// unknown topic is refused with nothing written.
    #[test]
    fn the_new_config_is_kept_across_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let config = MiniKafkaConfig::new(dir.path()).with_brokers(1..=1);
        let c = BrokerCluster::open(config.clone(), ManualClock::new()).unwrap();
        c.create_topic("t", 1, 1).unwrap();
        let set = TopicConfig {
            cleanup_policy: CleanupPolicy::Compact,
            retention_bytes: Some(4096),
            ..TopicConfig::default()
        };
        assert!(c.alter_topic_config("t", set).unwrap());
        assert!(!c.alter_topic_config("t", set).unwrap(), "no change");
        assert_eq!(
            c.alter_topic_config("nope", set).unwrap_err().code(),
            "UnknownTopicOrPartition"
        );
        assert_eq!(c.topic_configs()["t"], set);
        drop(c);
        let c = BrokerCluster::open(config, ManualClock::new()).unwrap();
        assert_eq!(c.topic_configs()["t"], set);
        assert!(!c.topic_configs().contains_key("nope"));
    }
}
