//! Metadata (versions 1-12): every broker with its own listener address,
//! and per partition the leader, leader epoch, replicas, ISR and offline
//! (stopped) replicas, read from the cluster as the state JSON shows them.
//! A missing topic is created when the server's `--auto-create-topics` is
//! on and the request allows it (`allow_auto_topic_creation`, Kafka's
//! `auto.create.topics.enable`); otherwise clients create topics with
//! CreateTopics (docs/kafka-protocol.md, "Metadata").

use std::collections::BTreeMap;

use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::{
    BrokerId, MetadataRequest, MetadataResponse, ResponseKind, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use crate::kafka::broker::{Answer, Broker, TopicPartition, validate_topic_name};
use crate::kafka::errors::{code, code_of};
use crate::kafka::handlers::create_topics;

/// The cluster id every response names.
pub const CLUSTER_ID: &str = "mk-tui";

/// The internal topics Kafka keeps for groups and transactions: never
/// created here (the engine keeps offsets and the journal in files of its
/// own), so asking for them keeps answering UNKNOWN_TOPIC_OR_PARTITION.
const INTERNAL_TOPICS: [&str; 2] = ["__consumer_offsets", "__transaction_state"];

pub fn handle(worker: &mut dyn Broker, request: &MetadataRequest, _version: i16) -> Answer {
    let all = worker.topic_names();
    let wanted: Vec<String> = match &request.topics {
        None => all.clone(),
        Some(topics) => topics
            .iter()
            .filter_map(|t| t.name.as_ref().map(|n| n.0.to_string()))
            .collect(),
    };
    let (created, refused) = auto_create_missing(worker, request, &all, &wanted);
    let topics = worker.read(|s| {
        wanted
            .iter()
            .map(|name| {
                let mut topic = MetadataResponseTopic::default()
                    .with_name(Some(TopicName(StrBytes::from_string(name.clone()))));
                let Ok(count) = s.partition_count(name) else {
                    // A name no topic can have is INVALID_TOPIC_EXCEPTION,
                    // as Kafka answers it (so a producer fails at once
                    // instead of waiting for the topic).
                    let error = refused
                        .get(name)
                        .map(|(code, _)| *code)
                        .or_else(|| validate_topic_name(name).err().map(|e| code_of(&e)));
                    return topic
                        .with_error_code(error.unwrap_or(code::UNKNOWN_TOPIC_OR_PARTITION));
                };
                topic.partitions = (0..count)
                    .filter_map(|p| {
                        let tp = TopicPartition::new(name.clone(), p);
                        let set = s.partition(&tp).ok()?;
                        let stopped: Vec<BrokerId> = set
                            .assignment()
                            .iter()
                            .filter(|b| set.replica(**b).is_ok_and(|r| r.stopped))
                            .map(|b| BrokerId(*b as i32))
                            .collect();
                        let error = if set.leader().stopped {
                            code::LEADER_NOT_AVAILABLE
                        } else {
                            code::NONE
                        };
                        Some(
                            MetadataResponsePartition::default()
                                .with_error_code(error)
                                .with_partition_index(p as i32)
                                .with_leader_id(BrokerId(set.leader_id() as i32))
                                .with_leader_epoch(set.leader_epoch() as i32)
                                .with_replica_nodes(
                                    set.assignment()
                                        .iter()
                                        .map(|b| BrokerId(*b as i32))
                                        .collect(),
                                )
                                .with_isr_nodes(
                                    set.isr().iter().map(|b| BrokerId(*b as i32)).collect(),
                                )
                                .with_offline_replicas(stopped),
                        )
                    })
                    .collect();
                topic
            })
            .collect::<Vec<_>>()
    });
    let brokers = worker
        .brokers()
        .iter()
        .map(|b| {
            MetadataResponseBroker::default()
                .with_node_id(BrokerId(b.broker as i32))
                .with_host(StrBytes::from_string(b.host.clone()))
                .with_port(i32::from(b.port))
        })
        .collect();
    let controller = worker.brokers().first().map_or(-1, |b| b.broker as i32);
    let mut outcome = format!("ok: {} topic(s)", topics.len());
    for name in &created {
        outcome.push_str(&format!(", created {name} (auto.create.topics.enable)"));
    }
    for (name, (_, why)) in &refused {
        outcome.push_str(&format!(", {name} not created: {why}"));
    }
    let missing = wanted
        .iter()
        .filter(|n| !refused.contains_key(*n) && !all.contains(*n) && !created.contains(*n));
    // A name no topic can have is said as such, not as a topic to create.
    let (invalid, unknown): (Vec<&String>, Vec<&String>) =
        missing.partition(|n| validate_topic_name(n).is_err());
    for name in invalid {
        if let Err(e) = validate_topic_name(name) {
            outcome.push_str(&format!(", {e}"));
        }
    }
    let unknown: Vec<&str> = unknown.into_iter().map(String::as_str).collect();
    if !unknown.is_empty() {
        // A client waiting for a topic retries this request quietly: say
        // why it does not appear, and how it would.
        let how = if !worker.auto_create_topics() {
            "create it first, or start the server with --auto-create-topics"
        } else if unknown.iter().all(|n| INTERNAL_TOPICS.contains(n)) {
            "Kafka's internal topics are not kept here"
        } else {
            "the request did not allow creating it"
        };
        outcome.push_str(&format!(
            ", unknown topic(s) {} ({how})",
            unknown.join(", ")
        ));
    }
    let response = MetadataResponse::default()
        .with_brokers(brokers)
        .with_cluster_id(Some(StrBytes::from_static_str(CLUSTER_ID)))
        .with_controller_id(BrokerId(controller))
        .with_topics(topics);
    Answer::now(ResponseKind::Metadata(response), outcome)
}

/// Topics created by a Metadata request, and those it could not create
/// with the Kafka code and the reason (for the server's log line).
type AutoCreated = (Vec<String>, BTreeMap<String, (i16, String)>);

/// Creates each topic of `wanted` missing from `existing` when the server
/// and the request allow it (a request below v4 has no flag and allows it,
/// as in Kafka).
fn auto_create_missing(
    worker: &mut dyn Broker,
    request: &MetadataRequest,
    existing: &[String],
    wanted: &[String],
) -> AutoCreated {
    let (mut created, mut refused) = (Vec::new(), BTreeMap::new());
    if !worker.auto_create_topics() || !request.allow_auto_topic_creation {
        return (created, refused);
    }
    for name in wanted {
        if existing.contains(name)
            || created.contains(name)
            || refused.contains_key(name)
            || INTERNAL_TOPICS.contains(&name.as_str())
        {
            continue;
        }
        match create_topics::auto_create(worker, name) {
            Ok(()) => created.push(name.clone()),
            Err(refusal) => {
                refused.insert(name.clone(), refusal);
            }
        }
    }
    (created, refused)
}
