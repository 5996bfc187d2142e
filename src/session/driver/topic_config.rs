//! The `alter_topic_config` step of the [`Driver`]: a topic's config
//! replaced (Kafka's IncrementalAlterConfigs and AlterConfigs,
//! which `mk-tui serve` turns into this step), and its sentence, which
//! names the settings as Kafka spells them.

use super::Driver;
use crate::engine::core::metadata::TopicConfig;
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
    if !config.cleanup_policy.is_delete() {
        out.push(format!(
            "cleanup.policy={}",
            config.cleanup_policy.kafka_name()
        ));
    }
    if let Some(ms) = config.delete_retention_ms {
        out.push(format!("delete.retention.ms={ms}"));
    }
    if let Some(n) = config.min_insync_replicas {
        out.push(format!("min.insync.replicas={n}"));
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
    // A minimum ISR of its own judges the topic's next acks=all append.
    let (acks, acks_zh) = if config.min_insync_replicas.is_some() {
        (
            "; the next acks=all append is judged by its min.insync.replicas",
            "；下一次 acks=all 追加按它的 min.insync.replicas 判断",
        )
    } else {
        ("", "")
    };
    Said::new(
        format!("topic {topic}'s config: {now}{unchanged}; the server's cleaner follows it{acks}"),
        format!("topic {topic} 的配置：{now_zh}{unchanged_zh}；服务器的清理器按它清理{acks_zh}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::core::metadata::CleanupPolicy;
    use crate::session::recording::Header;
    use crate::session::{Action, Outcome};

    fn driver(rules: &str) -> Driver {
        driver_of(rules, &[1])
    }

    fn driver_of(rules: &str, brokers: &[u32]) -> Driver {
        let header: Header = serde_json::from_value(serde_json::json!({
            "mk_recording": 1, "title": "t", "rules": rules,
            "cluster": {"brokers": brokers, "topics": [{"name": "t", "partitions": 2, "replication_factor": 1}]},
        }))
        .unwrap();
        Driver::new(&header, None).unwrap()
    }

    fn act(d: &mut Driver, action: serde_json::Value) -> Outcome {
        let action: Action = serde_json::from_value(action).unwrap();
        d.apply(&action)
    }

    /// Under either rules the step replaces the config, which the state of
    /// every partition shows and a crash's recovery keeps; an unknown
    /// topic is refused and changes nothing.
    #[test]
    fn the_step_replaces_the_config_and_a_crash_keeps_it() {
        for rules in ["minikafka", "kafka"] {
            let mut d = driver(rules);
            let alter = serde_json::json!({"alter_topic_config": {"topic": "t",
                "config": {"cleanup_policy": "compact", "retention_bytes": 4096}}});
            assert_eq!(act(&mut d, alter), Outcome::Ok, "{rules}");
            assert_eq!(
                d.events().newest(1)[0].text,
                "alter_topic_config: ok; topic t's config: cleanup.policy=compact, retention.bytes=4096; the server's cleaner follows it"
            );
            let unknown =
                serde_json::json!({"alter_topic_config": {"topic": "nope", "config": {}}});
            assert!(
                matches!(act(&mut d, unknown), Outcome::Error(e) if e.code() == "UnknownTopicOrPartition"),
                "{rules}"
            );
            assert!(matches!(
                act(&mut d, serde_json::json!({"crash": {}})),
                Outcome::Recovered(_)
            ));
            let want = TopicConfig {
                cleanup_policy: CleanupPolicy::Compact,
                retention_bytes: Some(4096),
                ..TopicConfig::default()
            };
            assert_eq!(d.cluster().topic_configs()["t"], want, "{rules}");
            let state = crate::session::snapshot::Snapshot::of(&d);
            for p in &state.partitions {
                assert_eq!(p.config.cleanup_policy.as_deref(), Some("compact"));
                assert_eq!(p.config.retention_bytes, Some(4096));
            }
            // The whole set: what is left out goes back to its default.
            let back = serde_json::json!({"alter_topic_config": {"topic": "t", "config": {}}});
            assert_eq!(act(&mut d, back), Outcome::Ok);
            assert!(d.cluster().topic_configs()["t"].is_default());
        }
    }

    /// A topic's own min.insync.replicas, given by `create_topic` and
    /// changed by `alter_topic_config`, judges the acks=all `produce`
    /// steps after it (the cluster's, 1, would take them): with broker 2
    /// stopped, the topic's ISR is broker 1 alone. A crash keeps it; the
    /// state shows it; a replay of the same steps reaches the same state;
    /// 0 is refused as a field of either step.
    #[test]
    fn the_topics_min_isr_judges_acks_all_steps_and_a_replay_reproduces_it() {
        let steps = [
            serde_json::json!({"stop_broker": {"broker": 2}}),
            serde_json::json!({"create_topic": {"name": "s", "partitions": 1, "replication_factor": 2,
                "config": {"min_insync_replicas": 2}}}),
            serde_json::json!({"produce": {"topic": "s", "value": "a", "acks": "all"}}),
            serde_json::json!({"produce": {"topic": "s", "value": "b", "acks": "1"}}),
            serde_json::json!({"alter_topic_config": {"topic": "s", "config": {"min_insync_replicas": 1}}}),
            serde_json::json!({"produce": {"topic": "s", "value": "c", "acks": "all"}}),
            serde_json::json!({"alter_topic_config": {"topic": "s", "config": {"min_insync_replicas": 2}}}),
            serde_json::json!({"crash": {}}),
            serde_json::json!({"produce": {"topic": "s", "value": "d", "acks": "all"}}),
        ];
        for rules in ["minikafka", "kafka"] {
            let run = || {
                let mut d = driver_of(rules, &[1, 2]);
                let outcomes: Vec<String> = steps
                    .iter()
                    .map(|s| match act(&mut d, s.clone()) {
                        Outcome::Error(e) => e.code().to_string(),
                        o => o.kind().name().to_string(),
                    })
                    .collect();
                (d, outcomes)
            };
            let (d, outcomes) = run();
            assert_eq!(
                outcomes,
                [
                    "ok",
                    "ok",
                    "NotEnoughReplicas",
                    "ok",
                    "ok",
                    "ok",
                    "ok",
                    "recovered",
                    "NotEnoughReplicas"
                ],
                "{rules}"
            );
            assert!(
                d.events()
                    .newest(10)
                    .iter()
                    .any(|e| e.text.ends_with("topic s's config: min.insync.replicas=2; the server's cleaner follows it; the next acks=all append is judged by its min.insync.replicas")),
                "{rules}"
            );
            let state = crate::session::snapshot::Snapshot::of(&d);
            let s = state.partitions.iter().find(|p| p.topic == "s").unwrap();
            assert_eq!(s.config.min_insync_replicas, Some(2));
            assert_eq!(s.isr, [1], "{rules}: broker 2 is still stopped");
            let t = state.partitions.iter().find(|p| p.topic == "t").unwrap();
            assert_eq!(t.config.min_insync_replicas, None, "the cluster's");
            let (again, _) = run();
            assert_eq!(
                serde_json::to_value(&state).unwrap(),
                serde_json::to_value(crate::session::snapshot::Snapshot::of(&again)).unwrap(),
                "{rules}"
            );
        }
        for step in [
            r#"{"create_topic": {"name": "z", "partitions": 1, "replication_factor": 1, "config": {"min_insync_replicas": 0}}}"#,
            r#"{"alter_topic_config": {"topic": "s", "config": {"min_insync_replicas": 0}}}"#,
        ] {
            let e = Action::from_json(&serde_json::from_str(step).unwrap()).unwrap_err();
            assert!(e.field.ends_with(".config.min_insync_replicas"), "{e:?}");
        }
    }

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
