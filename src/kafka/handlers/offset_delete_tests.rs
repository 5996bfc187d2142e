//! OffsetDelete in process, on the admin tests' two-broker cluster (topic
//! t, and u of two partitions made here): each group error Kafka's
//! coordinator answers, each partition's code in the request's order, and
//! the deletion of committed offsets as one step (none when nothing is to
//! be deleted or the request is refused).

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::offset_delete_request::{
    OffsetDeleteRequestPartition, OffsetDeleteRequestTopic,
};
use kafka_protocol::messages::{
    ConsumerProtocolSubscription, GroupId, OffsetDeleteRequest, RequestKind, ResponseKind,
    TopicName,
};
use kafka_protocol::protocol::{Encodable, StrBytes};

use super::admin_tests::{Harness, cluster, join_member, join_with};
use crate::engine::TopicPartition;
use crate::kafka::broker::Broker;
use crate::kafka::errors::code;
use crate::session::listeners::NoSteps;

/// What OffsetDelete answered: the group's code, then each (topic,
/// partition, code).
type Answered = (i16, Vec<(String, i32, i16)>);

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

/// OffsetDelete of `group`'s `partitions` at `broker`.
fn delete(h: &mut Harness, broker: u32, group: &str, partitions: &[(&str, &[i32])]) -> Answered {
    let r = OffsetDeleteRequest::default()
        .with_group_id(GroupId(s(group)))
        .with_topics(
            partitions
                .iter()
                .map(|(t, ps)| {
                    OffsetDeleteRequestTopic::default()
                        .with_name(TopicName(s(t)))
                        .with_partitions(
                            ps.iter()
                                .map(|p| {
                                    OffsetDeleteRequestPartition::default().with_partition_index(*p)
                                })
                                .collect(),
                        )
                })
                .collect(),
        );
    match h.ask(broker, 0, RequestKind::OffsetDelete(r)) {
        ResponseKind::OffsetDelete(r) => (
            r.error_code,
            r.topics
                .iter()
                .flat_map(|t| {
                    t.partitions
                        .iter()
                        .map(|p| (t.name.0.to_string(), p.partition_index, p.error_code))
                })
                .collect(),
        ),
        other => panic!("{other:?}"),
    }
}

/// `h` with topic u of two partitions too.
fn two_topics(rules: &str) -> Harness {
    let mut h = cluster(rules);
    h.act(serde_json::json!({"create_topic": {"name": "u", "partitions": 2, "replication_factor": 1}}));
    h
}

fn commit(h: &mut Harness, group: &str, offsets: &[(&str, u32, i64)]) {
    let offsets: Vec<serde_json::Value> = offsets
        .iter()
        .map(|(t, p, o)| serde_json::json!({"topic": t, "partition": p, "offset": o}))
        .collect();
    h.act(serde_json::json!({"commit_offsets": {"group": group, "offsets": offsets}}));
}

fn committed(h: &Harness, group: &str, topic: &str, partition: u32) -> Option<i64> {
    h.driver
        .cluster()
        .offsets()
        .get(group, &TopicPartition::new(topic, partition))
}

/// A consumer protocol subscription to `topics`, as a client's JoinGroup
/// carries it.
fn subscription(topics: &[&str]) -> Bytes {
    let mut buf = BytesMut::new();
    buf.put_i16(1);
    ConsumerProtocolSubscription::default()
        .with_topics(topics.iter().map(|t| s(t)).collect())
        .encode(&mut buf, 1)
        .unwrap();
    buf.freeze()
}

#[test]
fn committed_offsets_go_as_one_step_and_the_rest_stay() {
    let mut h = two_topics("kafka");
    commit(&mut h, "g", &[("t", 0, 4), ("u", 0, 5), ("u", 1, 6)]);
    commit(&mut h, "other", &[("u", 0, 7)]);
    let before = h.driver.step();
    assert_eq!(
        delete(&mut h, 1, "g", &[("u", &[0, 1, 0])]),
        (
            code::NONE,
            vec![
                ("u".into(), 0, code::NONE),
                ("u".into(), 1, code::NONE),
                ("u".into(), 0, code::NONE)
            ]
        )
    );
    assert_eq!(h.driver.step(), before + 1, "one delete_offsets step");
    assert_eq!(
        h.driver.events().newest(1)[0].text,
        "delete_offsets: ok; group g: committed offset(s) of u-0, u-1 deleted: its next consumer of them starts from auto.offset.reset"
    );
    assert_eq!(committed(&h, "g", "u", 0), None);
    assert_eq!(committed(&h, "g", "u", 1), None);
    assert_eq!(committed(&h, "g", "t", 0), Some(4), "the other topic stays");
    assert_eq!(
        committed(&h, "other", "u", 0),
        Some(7),
        "the other group's too"
    );
    assert_eq!(
        delete(&mut h, 1, "g", &[("u", &[0])]),
        (code::NONE, vec![("u".into(), 0, code::NONE)]),
        "none committed: NONE still, as Kafka"
    );
    assert_eq!(h.driver.step(), before + 1, "nothing to delete: no step");
}

#[test]
fn each_partitions_code_in_the_requests_order() {
    let mut h = two_topics("kafka");
    commit(&mut h, "g", &[("t", 0, 4), ("u", 1, 6)]);
    assert_eq!(
        join_with(&mut h, "g", "consumer", subscription(&["t"])).error,
        code::NONE
    );
    assert_eq!(
        delete(
            &mut h,
            1,
            "g",
            &[("nope", &[0]), ("t", &[0]), ("u", &[1, 2, -1])]
        ),
        (
            code::NONE,
            vec![
                ("nope".into(), 0, code::UNKNOWN_TOPIC_OR_PARTITION),
                ("t".into(), 0, code::GROUP_SUBSCRIBED_TO_TOPIC),
                ("u".into(), 1, code::NONE),
                ("u".into(), 2, code::UNKNOWN_TOPIC_OR_PARTITION),
                ("u".into(), -1, code::UNKNOWN_TOPIC_OR_PARTITION),
            ]
        )
    );
    assert_eq!(committed(&h, "g", "t", 0), Some(4), "subscribed: kept");
    assert_eq!(committed(&h, "g", "u", 1), None, "not subscribed: deleted");
}

#[test]
fn the_groups_own_errors_answer_alone_and_change_nothing() {
    let mut h = two_topics("kafka");
    commit(&mut h, "g", &[("t", 0, 4)]);
    commit(&mut h, "connect", &[("t", 0, 2)]);
    assert_eq!(
        join_with(&mut h, "connect", "connect", Bytes::from_static(b"x")).error,
        code::NONE
    );
    let before = h.driver.step();
    let t0: &[(&str, &[i32])] = &[("t", &[0])];
    assert_eq!(delete(&mut h, 1, "", t0), (code::INVALID_GROUP_ID, vec![]));
    assert_eq!(delete(&mut h, 2, "g", t0), (code::NOT_COORDINATOR, vec![]));
    assert_eq!(
        delete(&mut h, 1, "nope", t0),
        (code::GROUP_ID_NOT_FOUND, vec![])
    );
    assert_eq!(
        delete(&mut h, 1, "connect", t0),
        (code::NON_EMPTY_GROUP, vec![]),
        "members of another protocol type"
    );
    assert_eq!(h.driver.step(), before, "a refusal is no step");
    assert_eq!(committed(&h, "g", "t", 0), Some(4));
    assert_eq!(committed(&h, "connect", "t", 0), Some(2));
}

#[test]
fn a_member_whose_subscription_is_unknown_counts_as_subscribed() {
    let mut h = two_topics("kafka");
    commit(&mut h, "g", &[("t", 0, 4), ("u", 0, 5)]);
    // Metadata that is not a consumer protocol subscription: Kafka cannot
    // tell, and keeps every topic's offsets to be safe.
    join_member(&mut h, "g");
    assert_eq!(
        delete(&mut h, 1, "g", &[("u", &[0])]),
        (
            code::NONE,
            vec![("u".into(), 0, code::GROUP_SUBSCRIBED_TO_TOPIC)]
        )
    );
    assert_eq!(committed(&h, "g", "u", 0), Some(5));
}

#[test]
fn an_empty_group_the_server_knows_deletes_without_offsets_and_the_book_allows_it() {
    let mut h = two_topics("minikafka");
    assert_eq!(
        join_with(&mut h, "left", "consumer", subscription(&["t"])).error,
        code::NONE
    );
    let before = h.driver.step();
    {
        let mut steps = NoSteps;
        let mut w = h.state.worker(&mut h.driver, &mut steps);
        let now = crate::kafka::clock::RealTime::now();
        let m = w
            .groups()
            .group("left")
            .unwrap()
            .members
            .keys()
            .next()
            .cloned()
            .unwrap();
        assert_eq!(w.groups_mut().leave("left", &[m], now), [code::NONE]);
    }
    assert_eq!(
        delete(&mut h, 1, "left", &[("t", &[0])]),
        (code::NONE, vec![("t".into(), 0, code::NONE)]),
        "the member left: not subscribed any more"
    );
    assert_eq!(h.driver.step(), before, "no offsets: no step");
    commit(&mut h, "g", &[("t", 0, 3)]);
    assert_eq!(
        delete(&mut h, 1, "g", &[("t", &[0])]),
        (code::NONE, vec![("t".into(), 0, code::NONE)]),
        "the book's rules delete too (docs/kafka-differences.md)"
    );
    assert_eq!(committed(&h, "g", "t", 0), None);
}
