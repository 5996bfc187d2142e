//! Topic settings over DescribeConfigs (key 32; docs/observe.md "Each
//! field, and what fills it"): the bootstrap broker is asked for the
//! configs of every observed topic, and each partition of a topic gets
//! those of the six the snapshot's `config` holds (`cleanup.policy`,
//! `retention.ms`, `retention.bytes`, `delete.retention.ms`,
//! `message.timestamp.type`, `min.insync.replicas`) that the topic was given itself. Reads only. Asked only of a broker that
//! advertises it; otherwise `partitions[].config` is listed unavailable.
//!
//! `config` holds a topic's own settings, as `create_topic` gave them (the
//! book's topic has none): a config Kafka reports from the topic
//! (`DYNAMIC_TOPIC_CONFIG`) fills it, and a value that comes from a
//! broker's setting or Kafka's default is not the topic's, so it is left
//! out, as `mk-tui state` leaves out a setting not given.

use std::collections::BTreeMap;

use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::{ApiKey, DescribeConfigsRequest};
use kafka_protocol::protocol::StrBytes;

use crate::session::Snapshot;
use crate::session::snapshot::{TopicConfigSnapshot, field};

use super::Links;
use super::versions::ours;

/// Kafka's `ConfigResource.Type` of a topic.
const TOPIC: i8 = 2;
/// Kafka's `ConfigSource` of a config set on the topic itself.
const DYNAMIC_TOPIC_CONFIG: i8 = 1;

const CLEANUP_POLICY: &str = "cleanup.policy";
const RETENTION_MS: &str = "retention.ms";
const RETENTION_BYTES: &str = "retention.bytes";
const DELETE_RETENTION_MS: &str = "delete.retention.ms";
const TIMESTAMP_TYPE: &str = "message.timestamp.type";
const MIN_INSYNC_REPLICAS: &str = "min.insync.replicas";

/// Each topic's settings, or why they are not known: the whole answer's
/// reason (`Err`, for the server's log), or one topic's (`Ok(Err)` by
/// topic).
pub type Settings = Result<BTreeMap<String, Result<TopicConfigSnapshot, String>>, String>;

/// Asks the broker at `address` about `topics`.
pub(super) async fn ask(links: &mut Links, address: &str, topics: &[String]) -> Settings {
    if topics.is_empty() {
        return Ok(BTreeMap::new());
    }
    let Ok(link) = super::link(links, address).await else {
        return Err(links.reason(address));
    };
    let Some(version) = link
        .versions
        .optional(ApiKey::DescribeConfigs, ours::DESCRIBE_CONFIGS)
    else {
        return Err("no DescribeConfigs".into());
    };
    let request = DescribeConfigsRequest::default().with_resources(
        topics
            .iter()
            .map(|t| {
                DescribeConfigsResource::default()
                    .with_resource_type(TOPIC)
                    .with_resource_name(StrBytes::from_string(t.clone()))
                    // Every config of the topic (about 40 on Kafka), the
                    // six kept picked out below: tansu cannot decode a
                    // request that names the keys and drops the connection
                    // (docs/observe.md "Tested implementations").
                    .with_configuration_keys(None)
            })
            .collect(),
    );
    let response = match link.conn.call("DescribeConfigs", &request, version).await {
        Ok(r) => r,
        Err(e) => {
            let why = e.to_string();
            links.failed(address, e);
            return Err(why);
        }
    };
    let mut out = BTreeMap::new();
    for r in &response.results {
        let answer = if r.error_code != 0 {
            Err(format!("DescribeConfigs error code {}", r.error_code))
        } else {
            let own = r
                .configs
                .iter()
                .filter(|c| c.config_source == DYNAMIC_TOPIC_CONFIG)
                .map(|c| (c.name.as_str(), c.value.as_ref().map(|v| v.as_str())));
            Ok(settings(own))
        };
        out.insert(r.resource_name.to_string(), answer);
    }
    Ok(out)
}

/// The snapshot's `config` from a topic's own configs, by Kafka's names and
/// values: `cleanup.policy` other than `delete` as Kafka spells it; a limit
/// of -1 (none) and a value that is not a number are no setting;
/// `message.timestamp.type` only when `LogAppendTime` (as `mk-tui state`).
fn settings<'a>(own: impl Iterator<Item = (&'a str, Option<&'a str>)>) -> TopicConfigSnapshot {
    let mut config = TopicConfigSnapshot::default();
    for (name, value) in own {
        let number = value.and_then(|v| v.parse::<u64>().ok());
        match name {
            CLEANUP_POLICY => {
                config.cleanup_policy = value.filter(|v| *v != "delete").map(str::to_string)
            }
            RETENTION_MS => config.retention_ms = number,
            RETENTION_BYTES => config.retention_bytes = number,
            DELETE_RETENTION_MS => config.delete_retention_ms = number,
            MIN_INSYNC_REPLICAS => {
                config.min_insync_replicas = value.and_then(|v| v.parse::<u32>().ok())
            }
            TIMESTAMP_TYPE => {
                config.timestamp_type = value.filter(|v| *v == "LogAppendTime").map(str::to_string)
            }
            _ => {}
        }
    }
    config
}

/// Gives every partition its topic's settings, and names what stays
/// unknown: `partitions[].config` when nothing was learnt, else each topic
/// that was not answered.
pub fn fill(snapshot: &mut Snapshot, settings: &Settings) {
    let by_topic = match settings {
        Ok(by_topic) => by_topic,
        // The field's path alone, so that `observe --state` writes every
        // partition's `config` as null (as DescribeLogDirs' fields when no
        // broker answers it).
        Err(_) => {
            if !snapshot.partitions.is_empty() {
                snapshot.unavailable.push(field::TOPIC_CONFIG.into());
            }
            return;
        }
    };
    let mut unknown: BTreeMap<&str, String> = BTreeMap::new();
    for p in &mut snapshot.partitions {
        match by_topic.get(&p.topic) {
            Some(Ok(config)) => p.config = config.clone(),
            Some(Err(why)) => {
                unknown.entry(&p.topic).or_insert_with(|| why.clone());
            }
            None => {
                unknown
                    .entry(&p.topic)
                    .or_insert_with(|| "not answered".into());
            }
        }
    }
    let lines: Vec<String> = unknown
        .into_iter()
        .map(|(topic, why)| format!("{} of topic {topic} ({why})", field::TOPIC_CONFIG))
        .collect();
    snapshot.unavailable.extend(lines);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_topics_own_settings_fill_its_config_in_the_snapshots_terms() {
        let c = settings(
            [
                ("cleanup.policy", Some("compact")),
                ("retention.ms", Some("-1")),
                ("retention.bytes", Some("4096")),
                ("delete.retention.ms", Some("0")),
                ("message.timestamp.type", Some("LogAppendTime")),
                ("min.insync.replicas", Some("3")),
            ]
            .into_iter(),
        );
        assert_eq!(c.timestamp_type.as_deref(), Some("LogAppendTime"));
        assert_eq!(c.min_insync_replicas, Some(3));
        assert_eq!(c.cleanup_policy.as_deref(), Some("compact"));
        assert_eq!(c.retention_ms, None, "-1 is no limit");
        assert_eq!(c.retention_bytes, Some(4096));
        assert_eq!(c.delete_retention_ms, Some(0));
        let both = settings([("cleanup.policy", Some("compact,delete"))].into_iter());
        assert_eq!(both.cleanup_policy.as_deref(), Some("compact,delete"));
        let delete = settings(
            [
                ("cleanup.policy", Some("delete")),
                ("message.timestamp.type", Some("CreateTime")),
            ]
            .into_iter(),
        );
        assert!(delete.is_empty(), "delete is the book's topic: {delete:?}");
    }

    fn snapshot(topics: &[&str]) -> Snapshot {
        let mut s = crate::ui::panes::testkit::view();
        let p = s.partitions[0].clone();
        s.partitions = topics
            .iter()
            .map(|t| {
                let mut q = p.clone();
                q.topic = t.to_string();
                q.config = TopicConfigSnapshot::default();
                q
            })
            .collect();
        s.unavailable.clear();
        s
    }

    #[test]
    fn a_topic_not_answered_is_named_and_the_others_filled() {
        let mut s = snapshot(&["a", "b", "c"]);
        let compact = TopicConfigSnapshot {
            cleanup_policy: Some("compact".into()),
            ..Default::default()
        };
        let answer: Settings = Ok([
            ("a".to_string(), Ok(compact.clone())),
            ("b".to_string(), Err("DescribeConfigs error code 3".into())),
        ]
        .into_iter()
        .collect());
        fill(&mut s, &answer);
        assert_eq!(s.partitions[0].config, compact);
        assert!(s.partitions[1].config.is_empty());
        assert_eq!(
            s.unavailable,
            [
                "partitions[].config of topic b (DescribeConfigs error code 3)",
                "partitions[].config of topic c (not answered)"
            ]
        );
    }

    #[test]
    fn no_answer_at_all_lists_the_field() {
        let mut s = snapshot(&["a"]);
        fill(&mut s, &Err("no DescribeConfigs".into()));
        assert_eq!(s.unavailable, ["partitions[].config"]);
    }
}
