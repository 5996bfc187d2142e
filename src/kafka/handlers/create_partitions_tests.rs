//! CreatePartitions in process, on [`admin_tests::cluster`]'s two brokers
//! (topic t of one partition on both): each error code, one step per
//! growth and none per refusal, `validate_only`.

use kafka_protocol::messages::create_partitions_request::{
    CreatePartitionsAssignment, CreatePartitionsTopic,
};
use kafka_protocol::messages::{
    BrokerId, CreatePartitionsRequest, RequestKind, ResponseKind, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::admin_tests::{Harness, cluster};
use crate::engine::core::metadata::TopicPartition;
use crate::kafka::errors::code;

fn topic(name: &str, count: i32) -> CreatePartitionsTopic {
    CreatePartitionsTopic::default()
        .with_name(TopicName(StrBytes::from_string(name.into())))
        .with_count(count)
}

/// Each result's topic, code and message, in the response's order.
fn grow(
    h: &mut Harness,
    topics: Vec<CreatePartitionsTopic>,
    validate_only: bool,
) -> Vec<(String, i16, Option<String>)> {
    let body = RequestKind::CreatePartitions(
        CreatePartitionsRequest::default()
            .with_topics(topics)
            .with_timeout_ms(30_000)
            .with_validate_only(validate_only),
    );
    match h.ask(1, 3, body) {
        ResponseKind::CreatePartitions(r) => r
            .results
            .iter()
            .map(|r| {
                (
                    r.name.0.to_string(),
                    r.error_code,
                    r.error_message.as_ref().map(|m| m.to_string()),
                )
            })
            .collect(),
        other => panic!("{other:?}"),
    }
}

fn count(h: &Harness, topic: &str) -> u32 {
    h.driver.cluster().partition_count(topic).unwrap()
}

#[test]
fn a_growth_is_one_step_placed_as_create_topic_places_partitions() {
    let mut h = cluster("kafka");
    let before = h.driver.step();
    assert_eq!(
        grow(&mut h, vec![topic("t", 3)], false),
        [("t".into(), code::NONE, None)]
    );
    assert_eq!(h.driver.step(), before + 1, "one create_partitions step");
    assert_eq!(count(&h, "t"), 3);
    let placed: Vec<(u32, Vec<u32>)> = (1..3)
        .map(|p| {
            let m = h
                .driver
                .cluster()
                .partition_metadata(&TopicPartition::new("t", p))
                .unwrap();
            assert_eq!(m.leader_id, m.replicas[0]);
            (p, m.replicas)
        })
        .collect();
    assert_eq!(
        placed,
        [(1, vec![2, 1]), (2, vec![1, 2])],
        "round-robin from broker index p, the topic's factor 2"
    );
}

#[test]
fn each_error_code_and_kafkas_messages() {
    let mut h = cluster("minikafka");
    h.act(serde_json::json!({"create_topic": {"name": "three", "partitions": 3, "replication_factor": 1}}));
    let before = h.driver.step();
    let manual = topic("t", 2).with_assignments(Some(vec![
        CreatePartitionsAssignment::default().with_broker_ids(vec![BrokerId(1)]),
    ]));
    let results = grow(
        &mut h,
        vec![
            topic("nope", 4),
            topic("three", 3),
            topic("three", 2),
            topic("t", 257),
        ],
        false,
    );
    assert_eq!(
        results[0],
        (
            "three".into(),
            code::INVALID_REQUEST,
            Some("Duplicate topic name.".into())
        ),
        "a name given twice is answered once, first"
    );
    assert_eq!(
        results[1],
        ("nope".into(), code::UNKNOWN_TOPIC_OR_PARTITION, None)
    );
    assert_eq!(results[2].1, code::INVALID_PARTITIONS);
    assert!(
        results[2].2.as_deref().unwrap().contains("256"),
        "{results:?}"
    );
    assert_eq!(results.len(), 3);
    let results = grow(&mut h, vec![manual], false);
    assert_eq!(results[0].1, code::INVALID_REQUEST);
    assert!(
        results[0]
            .2
            .as_deref()
            .unwrap()
            .contains("manual replica assignments"),
        "{results:?}"
    );
    assert_eq!(
        grow(&mut h, vec![topic("three", 3)], false),
        [(
            "three".into(),
            code::INVALID_PARTITIONS,
            Some("Topic already has 3 partition(s).".into())
        )]
    );
    assert_eq!(
        grow(&mut h, vec![topic("three", 2)], false),
        [(
            "three".into(),
            code::INVALID_PARTITIONS,
            Some(
                "The topic three currently has 3 partition(s); 2 would not be an increase.".into()
            )
        )]
    );
    assert_eq!(h.driver.step(), before, "a refusal is no step");
    assert_eq!((count(&h, "three"), count(&h, "t")), (3, 1));
    assert_eq!(
        grow(&mut h, vec![topic("three", 5)], false),
        [("three".into(), code::NONE, None)],
        "the book's rules grow a topic too (docs/kafka-differences.md)"
    );
    assert_eq!(count(&h, "three"), 5);
}

#[test]
fn validate_only_changes_nothing() {
    let mut h = cluster("kafka");
    let before = h.driver.step();
    assert_eq!(
        grow(&mut h, vec![topic("t", 4)], true),
        [("t".into(), code::NONE, None)]
    );
    assert_eq!(
        grow(&mut h, vec![topic("t", 1)], true)[0].1,
        code::INVALID_PARTITIONS,
        "validation answers as the growth would"
    );
    assert_eq!(h.driver.step(), before);
    assert_eq!(count(&h, "t"), 1);
}

#[test]
fn past_the_recordings_replica_cap_is_a_policy_violation() {
    let mut h = cluster("kafka");
    // 1024 replicas at most: t's 2, big's 512 and big2's 510 fill it.
    h.act(serde_json::json!({"create_topic": {"name": "big", "partitions": 256, "replication_factor": 2}}));
    h.act(serde_json::json!({"create_topic": {"name": "big2", "partitions": 255, "replication_factor": 2}}));
    let before = h.driver.step();
    let r = grow(&mut h, vec![topic("t", 3)], false);
    assert_eq!(r[0].1, code::POLICY_VIOLATION, "{r:?}");
    assert!(
        r[0].2.as_deref().unwrap().contains("1024 replicas"),
        "{r:?}"
    );
    assert_eq!(h.driver.step(), before);
    assert_eq!(count(&h, "t"), 1);
}
