//! Metadata (key 3): the brokers and, per partition, its leader, leader
//! epoch, replicas, ISR and offline replicas (docs/observe.md). Asked with
//! `allow_auto_topic_creation` false, so naming a missing topic never
//! creates it: the observer is read-only.

use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::{MetadataRequest, TopicName};
use kafka_protocol::protocol::StrBytes;

use super::connection::Conn;

use crate::session::SessionError;

/// UNKNOWN_TOPIC_OR_PARTITION.
const UNKNOWN_TOPIC: i16 = 3;

/// One broker as Metadata lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broker {
    pub id: u32,
    /// `HOST:PORT`.
    pub address: String,
}

/// One partition as Metadata describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    pub topic: String,
    pub partition: u32,
    pub leader: u32,
    pub leader_epoch: u32,
    pub replicas: Vec<u32>,
    pub isr: Vec<u32>,
    pub offline: Vec<u32>,
}

/// The cluster as one Metadata response says it, brokers in id order,
/// partitions in (topic, partition) order.
#[derive(Debug, Clone)]
pub struct Cluster {
    pub brokers: Vec<Broker>,
    pub partitions: Vec<Partition>,
    /// Metadata carries leader epochs from v7; before, they read 0 and are
    /// listed as unavailable.
    pub leader_epochs: bool,
}

/// Asks `conn` (at `version`) for `topics`, or for every topic but the
/// internal ones (`__consumer_offsets`, `__transaction_state`) when none
/// is named.
pub async fn ask(
    conn: &mut Conn,
    version: i16,
    topics: &[String],
) -> Result<Cluster, SessionError> {
    let named = (!topics.is_empty()).then(|| {
        topics
            .iter()
            .map(|t| {
                MetadataRequestTopic::default()
                    .with_name(Some(TopicName(StrBytes::from_string(t.clone()))))
            })
            .collect()
    });
    let request = MetadataRequest::default()
        .with_topics(named)
        .with_allow_auto_topic_creation(false);
    let response = conn.call("Metadata", &request, version).await?;
    let at = format!("{}: Metadata v{version}", conn.address);
    let id = |n: i32, what: &str| {
        u32::try_from(n)
            .map_err(|_| SessionError::protocol(&at, format!("{what} {n} is not a broker id")))
    };
    let mut brokers = response
        .brokers
        .iter()
        .map(|b| {
            Ok(Broker {
                id: id(b.node_id.0, "broker")?,
                address: format!("{}:{}", b.host.as_str(), b.port),
            })
        })
        .collect::<Result<Vec<_>, SessionError>>()?;
    brokers.sort_by_key(|b| b.id);
    let mut partitions = Vec::new();
    for t in &response.topics {
        let name = t.name.as_ref().map_or("", |n| n.0.as_str()).to_string();
        if t.error_code == UNKNOWN_TOPIC {
            return Err(SessionError::protocol(
                format!("topic {name}"),
                format!("not found ({at})"),
            ));
        }
        if t.error_code != 0 {
            return Err(SessionError::protocol(
                format!("topic {name}"),
                format!("error code {} ({at})", t.error_code),
            ));
        }
        if t.is_internal && topics.is_empty() {
            continue;
        }
        for p in &t.partitions {
            let key = format!("{name}-{}", p.partition_index);
            if p.error_code != 0 || p.leader_id.0 < 0 {
                return Err(SessionError::protocol(
                    &key,
                    format!(
                        "no leader (error code {}, leader {}) ({at})",
                        p.error_code, p.leader_id.0
                    ),
                ));
            }
            let ids = |v: &[kafka_protocol::messages::BrokerId], what: &str| {
                v.iter()
                    .map(|b| id(b.0, what))
                    .collect::<Result<Vec<_>, _>>()
            };
            partitions.push(Partition {
                topic: name.clone(),
                partition: u32::try_from(p.partition_index).map_err(|_| {
                    SessionError::protocol(&at, format!("partition index {}", p.partition_index))
                })?,
                leader: id(p.leader_id.0, "leader")?,
                leader_epoch: u32::try_from(p.leader_epoch).unwrap_or(0),
                replicas: ids(&p.replica_nodes, "replica")?,
                isr: ids(&p.isr_nodes, "ISR member")?,
                offline: ids(&p.offline_replicas, "offline replica")?,
            });
        }
    }
    for t in topics {
        if !partitions.iter().any(|p| &p.topic == t) {
            return Err(SessionError::protocol(
                format!("topic {t}"),
                format!("not found ({at})"),
            ));
        }
    }
    partitions.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    Ok(Cluster {
        brokers,
        partitions,
        leader_epochs: version >= 7,
    })
}
