//! The `alter_topic_config` step of the [`Driver`]: a topic's cleaning
//! config replaced (Kafka's IncrementalAlterConfigs and AlterConfigs,
//! which `mk-tui serve` turns into this step), and its sentence, which
//! names the settings as Kafka spells them.

use super::Driver;
use crate::engine::core::metadata::{CleanupPolicy, TopicConfig};
use crate::session::outcome::ActionError;
use crate::session::said::Said;

impl Driver {
    /// Replaces `topic`'s config (durably) and says what it now is.
    pub(super) fn alter_topic_config(
        &mut self,
        topic: &str,
        config: TopicConfig,
    ) -> Result<Said, ActionError> {
        let changed = self.cluster.alter_topic_config(topic, config)?;
        Ok(altered(topic, &config, changed))
    }
}

/// The settings of `config` that differ from the defaults, in Kafka's
/// names and values, sorted by name.
pub fn kafka_settings(config: &TopicConfig) -> Vec<String> {
    let mut out = Vec::new();
    if config.cleanup_policy == CleanupPolicy::Compact {
        out.push("cleanup.policy=compact".to_string());
    }
    if let Some(ms) = config.delete_retention_ms {
        out.push(format!("delete.retention.ms={ms}"));
    }
    if let Some(bytes) = config.retention_bytes {
        out.push(format!("retention.bytes={bytes}"));
    }
    if let Some(ms) = config.retention_ms {
        out.push(format!("retention.ms={ms}"));
    }
    out
}

fn altered(topic: &str, config: &TopicConfig, changed: bool) -> Said {
    let settings = kafka_settings(config);
    let (now, now_zh) = if settings.is_empty() {
        (
            "every setting at its default".to_string(),
            "全部为默认值".to_string(),
        )
    } else {
        (settings.join(", "), settings.join("，"))
    };
    let (unchanged, unchanged_zh) = if changed {
        ("", "")
    } else {
        (" (as before)", "（与之前相同）")
    };
    Said::new(
        format!("topic {topic}'s config: {now}{unchanged}; the server's cleaner follows it"),
        format!("topic {topic} 的配置：{now_zh}{unchanged_zh}；服务器的清理器按它清理"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sentence_names_the_settings_as_kafka_spells_them() {
        let config = TopicConfig {
            cleanup_policy: CleanupPolicy::Compact,
            retention_ms: Some(1000),
            ..TopicConfig::default()
        };
        assert_eq!(
            altered("t", &config, true).en,
            "topic t's config: cleanup.policy=compact, retention.ms=1000; the server's cleaner follows it"
        );
        assert_eq!(
            altered("t", &TopicConfig::default(), false).en,
            "topic t's config: every setting at its default (as before); the server's cleaner follows it"
        );
    }
}
