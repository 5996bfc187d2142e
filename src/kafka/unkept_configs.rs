//! Kafka's topic configs that CreateTopics takes without keeping them.
//!
//! Frameworks create their topics with configs of their own: Kafka
//! Streams makes each repartition topic with `segment.bytes` 50 MiB, Spring
//! and Connect pass `max.message.bytes` or `compression.type`. These
//! change how a Kafka broker lays its files out or tunes itself, not what
//! a client reads, and the engine's settings for them are the cluster's
//! (one segment size, records kept uncompressed). Refusing them refused
//! the whole application, so CreateTopics takes them, checks each value as
//! Kafka's config definition does (a bad value is still INVALID_CONFIG),
//! and says in the server's log that it did not keep them; DescribeConfigs
//! answers the cluster's values (docs/kafka-differences.md, "Topic configs
//! taken at creation but not kept"). Alter requests still refuse them: a
//! user who alters one of them asks for a change serve would not make.

use crate::kafka::errors::code;

/// The kind of value a config takes, as Kafka's `ConfigDef` types it.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// A whole number (INT or LONG) of at least this.
    AtLeast(i64),
    /// `true` or `false`.
    Boolean,
    /// A ratio from 0 to 1 (DOUBLE).
    Ratio,
    /// One of these words.
    OneOf(&'static [&'static str]),
    /// Only this value (Kafka's default), and why no other.
    Only(&'static str, &'static str),
    /// Any text (a list of replicas, for throttling).
    Text,
}

/// Each config taken and not kept, with the kind of its values. Kafka's
/// bounds (`TopicConfig`, `LogConfig` in Kafka 4.4).
const NOT_KEPT: &[(&str, Kind)] = &[
    ("segment.bytes", Kind::AtLeast(14)),
    ("segment.ms", Kind::AtLeast(1)),
    ("segment.jitter.ms", Kind::AtLeast(0)),
    ("segment.index.bytes", Kind::AtLeast(4)),
    ("index.interval.bytes", Kind::AtLeast(0)),
    ("flush.messages", Kind::AtLeast(1)),
    ("flush.ms", Kind::AtLeast(0)),
    ("file.delete.delay.ms", Kind::AtLeast(0)),
    ("preallocate", Kind::Boolean),
    ("max.message.bytes", Kind::AtLeast(0)),
    ("min.compaction.lag.ms", Kind::AtLeast(0)),
    ("max.compaction.lag.ms", Kind::AtLeast(1)),
    ("min.cleanable.dirty.ratio", Kind::Ratio),
    (
        "compression.type",
        Kind::OneOf(&["uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"]),
    ),
    ("compression.gzip.level", Kind::AtLeast(-1)),
    ("compression.lz4.level", Kind::AtLeast(1)),
    ("compression.zstd.level", Kind::AtLeast(-131072)),
    ("message.timestamp.before.max.ms", Kind::AtLeast(0)),
    ("message.timestamp.after.max.ms", Kind::AtLeast(0)),
    // Only Kafka's default: the engine never elects an unclean leader.
    (
        "unclean.leader.election.enable",
        Kind::Only(
            "false",
            "mk-tui serve never elects an unclean leader (docs/kafka-differences.md)",
        ),
    ),
    ("leader.replication.throttled.replicas", Kind::Text),
    ("follower.replication.throttled.replicas", Kind::Text),
];

/// Whether `name` is a config CreateTopics takes without keeping it:
/// `Ok(true)` if it is and `value` is one Kafka takes, `Ok(false)` if it
/// is not such a config, and INVALID_CONFIG in Kafka's words for a value
/// Kafka would refuse.
pub fn taken_not_kept(name: &str, value: Option<&str>) -> Result<bool, (i16, String)> {
    let Some((_, kind)) = NOT_KEPT.iter().find(|(n, _)| *n == name) else {
        return Ok(false);
    };
    let invalid = |expected: String| {
        Err((
            code::INVALID_CONFIG,
            format!(
                "Invalid value {} for configuration {name}: {expected}",
                value.unwrap_or("null")
            ),
        ))
    };
    let v = value.map(str::trim).unwrap_or_default();
    match *kind {
        Kind::AtLeast(min) => match v.parse::<i64>() {
            Ok(n) if n >= min => Ok(true),
            Ok(_) => invalid(format!("Value must be at least {min}")),
            Err(_) => invalid("Not a number of type LONG".into()),
        },
        Kind::Boolean => match v.to_ascii_lowercase().as_str() {
            "true" | "false" => Ok(true),
            _ => invalid("Expected value to be either true or false".into()),
        },
        Kind::Ratio => match v.parse::<f64>() {
            Ok(r) if (0.0..=1.0).contains(&r) => Ok(true),
            _ => invalid("Value must be a number from 0 to 1".into()),
        },
        Kind::OneOf(words) if words.contains(&v) => Ok(true),
        Kind::OneOf(words) => invalid(format!("String must be one of: {}", words.join(", "))),
        Kind::Only(only, _) if v == only => Ok(true),
        Kind::Only(_, why) => invalid(why.into()),
        Kind::Text => Ok(true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafka_streams_repartition_configs_are_taken() {
        assert_eq!(taken_not_kept("segment.bytes", Some("52428800")), Ok(true));
        assert_eq!(taken_not_kept("compression.type", Some("zstd")), Ok(true));
        assert_eq!(taken_not_kept("preallocate", Some("TRUE")), Ok(true));
        assert_eq!(
            taken_not_kept("min.cleanable.dirty.ratio", Some("0.5")),
            Ok(true)
        );
    }

    #[test]
    fn a_config_serve_keeps_or_does_not_know_is_not_one_of_them() {
        assert_eq!(taken_not_kept("cleanup.policy", Some("compact")), Ok(false));
        assert_eq!(
            taken_not_kept("remote.storage.enable", Some("true")),
            Ok(false)
        );
        assert_eq!(taken_not_kept("no.such.config", Some("1")), Ok(false));
    }

    #[test]
    fn a_bad_value_is_invalid_config_in_kafkas_words() {
        for (name, value, says) in [
            ("segment.bytes", Some("ten"), "Not a number of type LONG"),
            ("segment.bytes", Some("13"), "Value must be at least 14"),
            ("segment.bytes", None, "Not a number"),
            ("preallocate", Some("yes"), "either true or false"),
            ("min.cleanable.dirty.ratio", Some("1.5"), "from 0 to 1"),
            ("compression.type", Some("brotli"), "String must be one of"),
            (
                "unclean.leader.election.enable",
                Some("true"),
                "never elects",
            ),
        ] {
            let (code, message) = taken_not_kept(name, value).unwrap_err();
            assert_eq!(code, code::INVALID_CONFIG);
            assert!(
                message.starts_with(&format!(
                    "Invalid value {} for configuration {name}: ",
                    value.unwrap_or("null")
                )) && message.contains(says),
                "{message}"
            );
        }
    }
}
