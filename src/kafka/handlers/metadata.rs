//! Metadata (versions 1-12): every broker with its own listener address,
//! and per partition the leader, leader epoch, replicas, ISR and offline
//! (stopped) replicas, read from the cluster as the state JSON shows them.
//! Topics are not created by a metadata request: clients create them with
//! CreateTopics (docs/kafka-protocol.md).

use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::{
    BrokerId, MetadataRequest, MetadataResponse, ResponseKind, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use crate::kafka::broker::{Answer, Broker, TopicPartition};
use crate::kafka::errors::code;

/// The cluster id every response names.
pub const CLUSTER_ID: &str = "mk-tui";

pub fn handle(worker: &mut dyn Broker, request: &MetadataRequest, _version: i16) -> Answer {
    let all = worker.topic_names();
    let wanted: Vec<String> = match &request.topics {
        None => all.clone(),
        Some(topics) => topics
            .iter()
            .filter_map(|t| t.name.as_ref().map(|n| n.0.to_string()))
            .collect(),
    };
    let topics = worker.read(|s| {
        wanted
            .iter()
            .map(|name| {
                let mut topic = MetadataResponseTopic::default()
                    .with_name(Some(TopicName(StrBytes::from_string(name.clone()))));
                let Ok(count) = s.partition_count(name) else {
                    return topic.with_error_code(code::UNKNOWN_TOPIC_OR_PARTITION);
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
    let outcome = format!("ok: {} topic(s)", topics.len());
    let response = MetadataResponse::default()
        .with_brokers(brokers)
        .with_cluster_id(Some(StrBytes::from_static_str(CLUSTER_ID)))
        .with_controller_id(BrokerId(controller))
        .with_topics(topics);
    Answer::now(ResponseKind::Metadata(response), outcome)
}
