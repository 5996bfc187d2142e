//! `mk-tui serve`'s log cleaner: what Kafka's log manager does every
//! `log.retention.check.interval.ms` and its log cleaner thread does for
//! compacted topics, as actions the recording keeps (a replay needs no
//! cleaner). Each tick, every topic whose config asks for it gets a
//! `compact` step (`cleanup.policy=compact`, with its
//! `delete.retention.ms`) and a `retention` step (`retention.ms` or
//! `retention.bytes` set). The engine cleans only closed segments below
//! the high watermark (the book's rule), so an active segment waits for
//! its roll. A topic with no config is the book's: never cleaned unasked.

use std::collections::BTreeMap;

use crate::engine::core::metadata::TopicConfig;
use crate::session::Action;

/// How often serve cleans, by default: 30 s, Kafka's
/// `log.retention.check.interval.ms` (5 minutes) shortened so that a
/// lesson sees it (docs/kafka-differences.md).
pub const DEFAULT_CLEANER_INTERVAL_MS: u64 = 30_000;

/// The cleaning steps one tick applies, in topic-name order: a topic's
/// `compact` before its `retention`.
pub fn actions(configs: &BTreeMap<String, TopicConfig>) -> Vec<Action> {
    let mut actions = Vec::new();
    for (topic, config) in configs {
        if config.cleanup_policy.compacts() {
            actions.push(Action::Compact {
                topic: topic.clone(),
                partition: None,
                delete_retention_ms: config.delete_retention_ms(),
                crash_at: None,
            });
        }
        if config.has_retention() {
            actions.push(Action::Retention {
                topic: topic.clone(),
                partition: None,
                retention_ms: config.retention_ms,
                retention_bytes: config.retention_bytes,
            });
        }
    }
    actions
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::core::metadata::CleanupPolicy;
    use crate::engine::core::metadata::DEFAULT_DELETE_RETENTION_MS;

    /// Only configured topics are cleaned, each as its config says.
    #[test]
    fn each_configured_topic_gets_its_steps() {
        let configs = BTreeMap::from([
            ("book".to_string(), TopicConfig::default()),
            (
                "both".to_string(),
                TopicConfig {
                    cleanup_policy: CleanupPolicy::Compact,
                    retention_bytes: Some(4096),
                    ..TopicConfig::default()
                },
            ),
            (
                "windowed".to_string(),
                TopicConfig {
                    cleanup_policy: CleanupPolicy::CompactDelete,
                    retention_ms: Some(5000),
                    ..TopicConfig::default()
                },
            ),
            (
                "kept".to_string(),
                TopicConfig {
                    cleanup_policy: CleanupPolicy::Compact,
                    delete_retention_ms: Some(250),
                    ..TopicConfig::default()
                },
            ),
            (
                "old".to_string(),
                TopicConfig {
                    retention_ms: Some(1000),
                    ..TopicConfig::default()
                },
            ),
        ]);
        let compact = |topic: &str, ms| Action::Compact {
            topic: topic.into(),
            partition: None,
            delete_retention_ms: ms,
            crash_at: None,
        };
        assert_eq!(
            actions(&configs),
            vec![
                compact("both", DEFAULT_DELETE_RETENTION_MS),
                Action::Retention {
                    topic: "both".into(),
                    partition: None,
                    retention_ms: None,
                    retention_bytes: Some(4096),
                },
                compact("kept", 250),
                Action::Retention {
                    topic: "old".into(),
                    partition: None,
                    retention_ms: Some(1000),
                    retention_bytes: None,
                },
                compact("windowed", DEFAULT_DELETE_RETENTION_MS),
                Action::Retention {
                    topic: "windowed".into(),
                    partition: None,
                    retention_ms: Some(5000),
                    retention_bytes: None,
                },
            ]
        );
    }
}
