//! What the clients pane shows of a connection's consumer group: its
//! group, member id, generation, the group's state and the partitions the
//! leader assigned it, read from the server's [`Groups`] by the connection
//! each member's last JoinGroup came on. The assignment is the consumer
//! protocol's (`ConsumerProtocolAssignment`, a version then the topics and
//! partitions), which Java, librdkafka and kafka-python all send; bytes of
//! another protocol show no partitions.

use std::collections::BTreeMap;

use bytes::{Buf, Bytes};
use kafka_protocol::messages::ConsumerProtocolAssignment;
use kafka_protocol::protocol::Decodable;

use crate::kafka::groups::Groups;
use crate::session::snapshot::ClientGroup;

/// Each member's group, by the connection it joined on.
pub fn memberships(groups: &Groups) -> BTreeMap<u64, ClientGroup> {
    let mut by_connection = BTreeMap::new();
    for (id, g) in groups.listed() {
        for m in g.members.values() {
            by_connection.insert(
                m.connection,
                ClientGroup {
                    group: id.clone(),
                    member_id: m.id.clone(),
                    generation: g.generation,
                    state: g.state.name().to_string(),
                    assignment: assigned_partitions(&m.assignment),
                },
            );
        }
    }
    by_connection
}

/// The `topic-partition`s of a consumer protocol assignment; none when
/// it is empty or not one.
pub fn assigned_partitions(assignment: &Bytes) -> Vec<String> {
    let mut buf = assignment.clone();
    if buf.remaining() < 2 {
        return Vec::new();
    }
    // The newest version kafka-protocol decodes reads any later one's
    // leading fields (Kafka's rule for this embedded schema).
    let version = buf.get_i16().clamp(0, 3);
    match ConsumerProtocolAssignment::decode(&mut buf, version) {
        Ok(a) => a
            .assigned_partitions
            .iter()
            .flat_map(|tp| {
                tp.partitions
                    .iter()
                    .map(move |p| format!("{}-{p}", tp.topic.0.as_str()))
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use bytes::BufMut;
    use kafka_protocol::messages::TopicName;
    use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition;
    use kafka_protocol::protocol::{Encodable, StrBytes};

    use super::*;

    fn encoded(version: i16, topics: &[(&str, &[i32])]) -> Bytes {
        let a = ConsumerProtocolAssignment::default().with_assigned_partitions(
            topics
                .iter()
                .map(|(t, ps)| {
                    TopicPartition::default()
                        .with_topic(TopicName(StrBytes::from_string(t.to_string())))
                        .with_partitions(ps.to_vec())
                })
                .collect(),
        );
        let mut buf = bytes::BytesMut::new();
        buf.put_i16(version);
        a.encode(&mut buf, version).unwrap();
        buf.freeze()
    }

    #[test]
    fn a_consumer_protocol_assignment_reads_as_topic_partitions() {
        let a = encoded(0, &[("t", &[0, 3]), ("u", &[1])]);
        assert_eq!(assigned_partitions(&a), ["t-0", "t-3", "u-1"]);
        let v3 = encoded(3, &[("t", &[2])]);
        assert_eq!(assigned_partitions(&v3), ["t-2"]);
    }

    #[test]
    fn empty_or_foreign_bytes_read_as_no_partitions() {
        assert!(assigned_partitions(&Bytes::new()).is_empty());
        assert!(assigned_partitions(&Bytes::from_static(b"\x00\x00\xff")).is_empty());
    }
}
