//! The configs `mk-tui serve` really runs with, as Kafka names and spells
//! them, for DescribeConfigs ([`crate::kafka::handlers::describe_configs`]):
//! a topic's (from its metadata and the cluster's configuration) and a
//! broker's. Only what the engine models is listed; Kafka's other topic
//! configs are left out, not invented (docs/kafka-differences.md,
//! "DescribeConfigs").
//!
//! Where a value comes from follows Kafka's synonyms, most specific
//! first: the topic's own setting (`DYNAMIC_TOPIC_CONFIG`), then the
//! server's (`STATIC_BROKER_CONFIG`, as if its `server.properties` set the
//! broker config), then Kafka's default (`DEFAULT_CONFIG`). The server's
//! value is listed only where it differs from Kafka's default, so a config
//! serve runs as Kafka would by default reads `DEFAULT_CONFIG`. The engine
//! keeps no difference between a topic setting given at Kafka's default
//! value and one not given (`cleanup.policy=delete`, `retention.ms=-1`),
//! so such a setting reads as not given.

use crate::engine::MiniKafkaConfig;
use crate::engine::core::metadata::{DEFAULT_DELETE_RETENTION_MS, TimestampType, TopicMetadata};
use crate::session::limits::MAX_BATCH_BYTES;

/// Kafka's `ConfigSource` as DescribeConfigs v1+ carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    DynamicTopic = 1,
    StaticBroker = 4,
    Default = 5,
}

/// Kafka's `ConfigType` (DescribeConfigs v3+).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    Boolean = 1,
    String = 2,
    Int = 3,
    Long = 5,
    List = 7,
}

/// One value a config takes at one level: its name there, value, source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synonym {
    pub name: &'static str,
    pub value: Option<String>,
    pub source: Source,
}

/// One config as DescribeConfigs reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: &'static str,
    pub config_type: Type,
    /// Whether serve could change it: never for a broker's (its
    /// configuration is fixed at start, and AlterConfigs of a broker is
    /// refused); Kafka's `read_only` is false for every topic config
    /// (serve changes six of them, [`crate::kafka::topic_alter`], and
    /// refuses the others).
    pub read_only: bool,
    pub doc: &'static str,
    /// Most specific first; never empty. The first is the value in force.
    pub synonyms: Vec<Synonym>,
}

impl Entry {
    pub fn value(&self) -> Option<&str> {
        self.synonyms[0].value.as_deref()
    }
    pub fn source(&self) -> Source {
        self.synonyms[0].source
    }
}

/// Kafka's `message.max.bytes` default (1 MiB and a record batch's
/// overhead).
const KAFKA_MESSAGE_MAX_BYTES: &str = "1048588";

/// A config's levels: the topic's own value, the server's value under the
/// broker config `broker_name`, and Kafka's default there (`None` where
/// Kafka lists none, as for `log.retention.ms`, whose default comes from
/// `log.retention.hours`: then no default synonym, as Kafka's).
struct Levels<'a> {
    topic: Option<String>,
    topic_name: &'static str,
    server: String,
    broker_name: &'static str,
    default: Option<&'a str>,
}

impl Levels<'_> {
    fn synonyms(self) -> Vec<Synonym> {
        let mut out = Vec::new();
        if let Some(v) = self.topic {
            out.push(Synonym {
                name: self.topic_name,
                value: Some(v),
                source: Source::DynamicTopic,
            });
        }
        if self.default != Some(self.server.as_str()) {
            out.push(Synonym {
                name: self.broker_name,
                value: Some(self.server),
                source: Source::StaticBroker,
            });
        }
        if let Some(default) = self.default {
            out.push(Synonym {
                name: self.broker_name,
                value: Some(default.to_string()),
                source: Source::Default,
            });
        }
        out
    }
}

/// The configs of `topic` under `config`, sorted by name.
pub fn topic_entries(topic: &TopicMetadata, config: &MiniKafkaConfig) -> Vec<Entry> {
    let c = &topic.config;
    let limit = |v: Option<u64>| v.map(|n| n.to_string());
    let entry =
        |name: &'static str,
         config_type: Type,
         doc: &'static str,
         topic: Option<String>,
         (broker_name, server, default): (&'static str, String, Option<&str>)| {
            let synonyms = Levels {
                topic,
                topic_name: name,
                server,
                broker_name,
                default,
            }
            .synonyms();
            Entry {
                name,
                config_type,
                read_only: false,
                doc,
                synonyms,
            }
        };
    let mut entries = vec![
        entry(
            "cleanup.policy",
            Type::List,
            "delete, compact or both: how the topic's closed segments are cleaned.",
            (!c.cleanup_policy.is_delete()).then(|| c.cleanup_policy.kafka_name().into()),
            ("log.cleanup.policy", "delete".into(), Some("delete")),
        ),
        entry(
            "delete.retention.ms",
            Type::Long,
            "How long a tombstone stays after compaction, judged by record timestamps against the engine clock: under serve only a LogAppendTime topic's tombstones carry that clock, so a CreateTime tombstone stays.",
            limit(c.delete_retention_ms),
            (
                "log.cleaner.delete.retention.ms",
                DEFAULT_DELETE_RETENTION_MS.to_string(),
                Some("86400000"),
            ),
        ),
        entry(
            "index.interval.bytes",
            Type::Int,
            "One sparse offset index entry per this many bytes of log (the cluster's).",
            None,
            (
                "log.index.interval.bytes",
                config.index_interval_bytes.to_string(),
                Some("4096"),
            ),
        ),
        entry(
            "max.message.bytes",
            Type::Int,
            "The largest record serve takes: its key and value bytes, decompressed (Kafka caps the compressed batch).",
            None,
            (
                "message.max.bytes",
                MAX_BATCH_BYTES.to_string(),
                Some(KAFKA_MESSAGE_MAX_BYTES),
            ),
        ),
        entry(
            "message.timestamp.type",
            Type::String,
            "CreateTime (the producer's) or LogAppendTime (the leader's clock at append).",
            (topic.timestamp_type == TimestampType::LogAppendTime).then(|| "LogAppendTime".into()),
            (
                "log.message.timestamp.type",
                "CreateTime".into(),
                Some("CreateTime"),
            ),
        ),
        entry(
            "min.insync.replicas",
            Type::Int,
            "An acks=all append needs at least this many replicas in the ISR (the topic's, else the cluster's).",
            c.min_insync_replicas.map(|n| n.to_string()),
            (
                "min.insync.replicas",
                config.min_insync_replicas.to_string(),
                Some("1"),
            ),
        ),
        entry(
            "retention.bytes",
            Type::Long,
            "Closed segments are deleted while the log is past this size (-1: no limit).",
            limit(c.retention_bytes),
            ("log.retention.bytes", "-1".into(), Some("-1")),
        ),
        entry(
            "retention.ms",
            Type::Long,
            "Closed segments older than this are deleted (-1: no limit, serve's default), judged by record timestamps against the engine clock: under serve only a LogAppendTime topic's records carry that clock, so a CreateTime topic keeps its segments.",
            limit(c.retention_ms),
            // Kafka's 7 days come from `log.retention.hours`, which it
            // does not list as a synonym; `log.retention.ms` has no default.
            ("log.retention.ms", "-1".into(), None),
        ),
        entry(
            "segment.bytes",
            Type::Int,
            "A segment rolls when the next batch would take it past this size (the cluster's).",
            None,
            (
                "log.segment.bytes",
                config.segment_max_bytes.to_string(),
                Some("1073741824"),
            ),
        ),
    ];
    entries.sort_by_key(|e| e.name);
    entries
}

/// What a broker runs with that its config describes.
pub struct BrokerSettings {
    pub id: u32,
    pub auto_create_topics: bool,
    pub fetch_max_bytes: u64,
}

/// Broker `b`'s configs under `config`, sorted by name: each read-only.
pub fn broker_entries(b: &BrokerSettings, config: &MiniKafkaConfig) -> Vec<Entry> {
    let entry = |name: &'static str,
                 config_type: Type,
                 doc: &'static str,
                 server: String,
                 default: Option<&str>| Entry {
        name,
        config_type,
        read_only: true,
        doc,
        synonyms: Levels {
            topic: None,
            topic_name: name,
            server,
            broker_name: name,
            default,
        }
        .synonyms(),
    };
    let mut entries = vec![
        entry(
            "auto.create.topics.enable",
            Type::Boolean,
            "Whether Metadata creates a missing topic it is asked to (serve's --auto-create-topics).",
            b.auto_create_topics.to_string(),
            Some("true"),
        ),
        entry(
            "broker.id",
            Type::Int,
            "This broker's id.",
            b.id.to_string(),
            Some("-1"),
        ),
        entry(
            "delete.topic.enable",
            Type::Boolean,
            "DeleteTopics deletes a topic, its logs and its committed offsets.",
            "true".into(),
            Some("true"),
        ),
        entry(
            "fetch.max.bytes",
            Type::Int,
            "The most one Fetch response holds.",
            b.fetch_max_bytes.to_string(),
            Some("57671680"),
        ),
        entry(
            "log.cleaner.delete.retention.ms",
            Type::Long,
            "A topic's delete.retention.ms unless it sets one.",
            DEFAULT_DELETE_RETENTION_MS.to_string(),
            Some("86400000"),
        ),
        entry(
            "log.cleanup.policy",
            Type::List,
            "A topic's cleanup.policy unless it sets one.",
            "delete".into(),
            Some("delete"),
        ),
        entry(
            "log.index.interval.bytes",
            Type::Int,
            "One sparse offset index entry per this many bytes of log.",
            config.index_interval_bytes.to_string(),
            Some("4096"),
        ),
        entry(
            "log.message.timestamp.type",
            Type::String,
            "A topic's message.timestamp.type unless it sets one.",
            "CreateTime".into(),
            Some("CreateTime"),
        ),
        entry(
            "log.retention.bytes",
            Type::Long,
            "A topic's retention.bytes unless it sets one (-1: no limit).",
            "-1".into(),
            Some("-1"),
        ),
        entry(
            "log.retention.ms",
            Type::Long,
            "A topic's retention.ms unless it sets one (-1: no limit).",
            "-1".into(),
            None,
        ),
        entry(
            "log.segment.bytes",
            Type::Int,
            "A segment rolls when the next batch would take it past this size.",
            config.segment_max_bytes.to_string(),
            Some("1073741824"),
        ),
        entry(
            "message.max.bytes",
            Type::Int,
            "The largest record taken: its key and value bytes, decompressed.",
            MAX_BATCH_BYTES.to_string(),
            Some(KAFKA_MESSAGE_MAX_BYTES),
        ),
        entry(
            "min.insync.replicas",
            Type::Int,
            "An acks=all append needs at least this many replicas in the ISR.",
            config.min_insync_replicas.to_string(),
            Some("1"),
        ),
        // Kafka's node.id has no default: KRaft needs it given.
        Entry {
            name: "node.id",
            config_type: Type::Int,
            read_only: true,
            doc: "This node's id (the broker id).",
            synonyms: vec![Synonym {
                name: "node.id",
                value: Some(b.id.to_string()),
                source: Source::StaticBroker,
            }],
        },
        entry(
            "replica.fetch.max.bytes",
            Type::Int,
            "A follower fetch returns whole batches up to about this many bytes.",
            config.replica_fetch_max_bytes.to_string(),
            Some("1048576"),
        ),
        entry(
            "replica.lag.time.max.ms",
            Type::Long,
            "A follower that has not fetched for this long leaves the ISR.",
            config.replica_lag_time_ms.to_string(),
            Some("30000"),
        ),
    ];
    entries.sort_by_key(|e| e.name);
    entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::core::metadata::CleanupPolicy;
    use crate::engine::core::metadata::TopicConfig;

    fn topic(config: TopicConfig, kind: TimestampType) -> TopicMetadata {
        TopicMetadata {
            config,
            timestamp_type: kind,
            ..TopicMetadata::default()
        }
    }

    fn find<'a>(entries: &'a [Entry], name: &str) -> &'a Entry {
        entries.iter().find(|e| e.name == name).unwrap()
    }

    #[test]
    fn a_topics_own_settings_are_dynamic_topic_configs_over_kafkas_defaults() {
        let cluster = MiniKafkaConfig::new("/tmp/x");
        let set = topic(
            TopicConfig {
                cleanup_policy: CleanupPolicy::Compact,
                retention_ms: None,
                retention_bytes: Some(4096),
                delete_retention_ms: Some(1000),
                min_insync_replicas: Some(3),
            },
            TimestampType::LogAppendTime,
        );
        let e = topic_entries(&set, &cluster);
        let names: Vec<&str> = e.iter().map(|e| e.name).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        for (name, value, source) in [
            ("cleanup.policy", "compact", Source::DynamicTopic),
            ("delete.retention.ms", "1000", Source::DynamicTopic),
            (
                "message.timestamp.type",
                "LogAppendTime",
                Source::DynamicTopic,
            ),
            ("retention.bytes", "4096", Source::DynamicTopic),
            ("retention.ms", "-1", Source::StaticBroker),
            ("segment.bytes", "1048576", Source::StaticBroker),
            ("max.message.bytes", "1048576", Source::StaticBroker),
            ("min.insync.replicas", "3", Source::DynamicTopic),
            ("index.interval.bytes", "4096", Source::Default),
        ] {
            let entry = find(&e, name);
            assert_eq!(
                (entry.value(), entry.source()),
                (Some(value), source),
                "{name}"
            );
            assert!(!entry.read_only);
        }
        let cleanup = find(&e, "cleanup.policy");
        assert_eq!(
            cleanup.synonyms[1],
            Synonym {
                name: "log.cleanup.policy",
                value: Some("delete".into()),
                source: Source::Default
            }
        );
        let plain = topic_entries(
            &topic(TopicConfig::default(), TimestampType::CreateTime),
            &cluster,
        );
        assert_eq!(find(&plain, "cleanup.policy").source(), Source::Default);
        // Not set: the broker's, reported as Kafka reports its default.
        let min_isr = find(&plain, "min.insync.replicas");
        assert_eq!(
            (min_isr.value(), min_isr.source()),
            (Some("1"), Source::Default)
        );
        let strict = MiniKafkaConfig::new("/tmp/x").with_min_insync_replicas(2);
        let plain = topic_entries(
            &topic(TopicConfig::default(), TimestampType::CreateTime),
            &strict,
        );
        let min_isr = find(&plain, "min.insync.replicas");
        assert_eq!(
            (min_isr.value(), min_isr.source()),
            (Some("2"), Source::StaticBroker)
        );
        assert_eq!(
            find(&plain, "delete.retention.ms").value(),
            Some("86400000")
        );
    }

    #[test]
    fn a_brokers_configs_are_read_only_and_what_it_runs_with() {
        let cluster = MiniKafkaConfig::new("/tmp/x").with_min_insync_replicas(2);
        let b = BrokerSettings {
            id: 2,
            auto_create_topics: false,
            fetch_max_bytes: 57_671_680,
        };
        let e = broker_entries(&b, &cluster);
        assert!(e.iter().all(|e| e.read_only));
        for (name, value, source) in [
            ("broker.id", "2", Source::StaticBroker),
            ("node.id", "2", Source::StaticBroker),
            ("auto.create.topics.enable", "false", Source::StaticBroker),
            ("delete.topic.enable", "true", Source::Default),
            ("min.insync.replicas", "2", Source::StaticBroker),
            ("fetch.max.bytes", "57671680", Source::Default),
            ("log.segment.bytes", "1048576", Source::StaticBroker),
        ] {
            let entry = find(&e, name);
            assert_eq!(
                (entry.value(), entry.source()),
                (Some(value), source),
                "{name}"
            );
        }
    }
}
