//! A topic's config changed after its creation (Kafka's
//! IncrementalAlterConfigs and AlterConfigs of a topic): the new config
//! replaces the old one in metadata.json, where `mk-tui serve`'s cleaner
//! reads it at its next tick. The engine itself cleans only when asked
//! (the `retention` and `compact` actions); the one setting it applies
//! itself, `min_insync_replicas`, goes to the topic's replica sets at once,
//! so the next append is judged by it (metadata.json stays its source: a
//! reopen gives the sets the same value).

use super::BrokerCluster;
use crate::engine::core::metadata::TopicConfig;
use crate::engine::error::{MiniKafkaError, Result};

impl BrokerCluster {
    /// Replaces `topic`'s config, durably (metadata.json is rewritten
    /// atomically). An unknown topic is `UnknownTopicOrPartition`, a
    /// `min_insync_replicas` of 0 `InvalidConfig`. Whether anything changed.
    pub fn alter_topic_config(&self, topic: &str, config: TopicConfig) -> Result<bool> {
        check_topic_config(&config)?;
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
            let min_isr = state.min_insync_replicas(topic);
            let tps: Vec<_> = state
                .partitions
                .untracked()
                .keys()
                .filter(|tp| tp.topic == topic)
                .cloned()
                .collect();
            for tp in tps {
                if let Some(set) = state.partitions.get_tracked(&tp) {
                    set.set_min_insync_replicas(min_isr);
                }
            }
            Ok(true)
        })
    }
}

/// What the engine refuses of a topic's config whoever gives it: a
/// minimum ISR of 0 (Kafka's `min.insync.replicas` is at least 1). A
/// value above the topic's replication factor is taken, as Kafka takes it,
/// and applied as the replication factor, as Kafka applies it.
pub(crate) fn check_topic_config(config: &TopicConfig) -> Result<()> {
    if config.min_insync_replicas == Some(0) {
        return Err(MiniKafkaError::InvalidConfig(
            "min_insync_replicas must be at least 1".into(),
        ));
    }
    Ok(())
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
