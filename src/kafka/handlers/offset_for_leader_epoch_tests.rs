//! OffsetForLeaderEpoch in process, on [`admin_tests::cluster`]'s two
//! brokers (topic t, one partition on both, led by broker 1): where each
//! epoch ends after a promotion, the fencing of `current_leader_epoch`,
//! the leader check, unknown partitions.

use kafka_protocol::messages::offset_for_leader_epoch_request::{
    OffsetForLeaderPartition, OffsetForLeaderTopic,
};
use kafka_protocol::messages::{OffsetForLeaderEpochRequest, RequestKind, ResponseKind, TopicName};
use kafka_protocol::protocol::StrBytes;
use serde_json::json;

use super::admin_tests::{Harness, cluster};
use crate::kafka::errors::code;

/// Asks `broker` for (topic, partition, current epoch, epoch) each:
/// (error, epoch, end offset) each.
fn ask(h: &mut Harness, broker: u32, asked: &[(&str, i32, i32, i32)]) -> Vec<(i16, i32, i64)> {
    let topics = asked
        .iter()
        .map(|&(topic, partition, current, epoch)| {
            OffsetForLeaderTopic::default()
                .with_topic(TopicName(StrBytes::from_string(topic.into())))
                .with_partitions(vec![
                    OffsetForLeaderPartition::default()
                        .with_partition(partition)
                        .with_current_leader_epoch(current)
                        .with_leader_epoch(epoch),
                ])
        })
        .collect();
    let request = OffsetForLeaderEpochRequest::default()
        .with_replica_id(kafka_protocol::messages::BrokerId(-1))
        .with_topics(topics);
    let ResponseKind::OffsetForLeaderEpoch(r) =
        h.ask(broker, 4, RequestKind::OffsetForLeaderEpoch(request))
    else {
        panic!("an OffsetForLeaderEpoch answer")
    };
    r.topics
        .iter()
        .flat_map(|t| t.partitions.iter())
        .map(|p| (p.error_code, p.leader_epoch, p.end_offset))
        .collect()
}

fn produce(h: &mut Harness, n: usize) {
    for i in 0..n {
        h.act(json!({"produce": {"topic": "t", "partition": 0, "value": format!("v{i}")}}));
    }
    h.act(json!({"replicate": {}}));
}

#[test]
fn each_epoch_ends_where_the_next_leaders_first_batch_starts() {
    let mut h = cluster("kafka");
    produce(&mut h, 3);
    assert_eq!(ask(&mut h, 1, &[("t", 0, -1, 0)]), [(0, 0, 3)]);
    h.act(json!({"promote": {"topic": "t", "partition": 0, "broker": 2}}));
    // Led at epoch 1 with nothing written yet: epoch 0 ends at the log end.
    assert_eq!(
        ask(&mut h, 2, &[("t", 0, 1, 0), ("t", 0, 1, 1)]),
        [(0, 0, 3), (0, 1, 3)]
    );
    produce(&mut h, 2);
    h.act(json!({"promote": {"topic": "t", "partition": 0, "broker": 1}}));
    produce(&mut h, 1);
    assert_eq!(
        ask(
            &mut h,
            1,
            &[
                ("t", 0, 2, 0),
                ("t", 0, 2, 1),
                ("t", 0, 2, 2),
                ("t", 0, -1, 3),
                ("t", 0, -1, -1)
            ]
        ),
        [(0, 0, 3), (0, 1, 5), (0, 2, 6), (0, -1, -1), (0, -1, -1)]
    );
}

#[test]
fn a_stale_or_future_current_epoch_is_fenced_before_the_leader_is_checked() {
    let mut h = cluster("kafka");
    produce(&mut h, 1);
    h.act(json!({"promote": {"topic": "t", "partition": 0, "broker": 2}}));
    // Broker 1 leads no more; the epoch is judged first, as Kafka does.
    assert_eq!(
        ask(
            &mut h,
            1,
            &[
                ("t", 0, 0, 0),
                ("t", 0, 2, 0),
                ("t", 0, 1, 0),
                ("t", 0, -1, 0)
            ]
        ),
        [
            (code::FENCED_LEADER_EPOCH, -1, -1),
            (code::UNKNOWN_LEADER_EPOCH, -1, -1),
            (code::NOT_LEADER_OR_FOLLOWER, -1, -1),
            (code::NOT_LEADER_OR_FOLLOWER, -1, -1),
        ]
    );
    assert_eq!(
        ask(
            &mut h,
            2,
            &[("nowhere", 0, -1, 0), ("t", 7, -1, 0), ("t", -1, -1, 0)]
        ),
        [(code::UNKNOWN_TOPIC_OR_PARTITION, -1, -1); 3]
    );
}
