//! DeleteGroups in process, on the admin tests' two-broker cluster: each
//! error code Kafka's coordinator answers, the deletion of a group's
//! committed offsets as one step, and the results in the request's order.

use kafka_protocol::messages::{DeleteGroupsRequest, GroupId, RequestKind, ResponseKind};
use kafka_protocol::protocol::StrBytes;

use super::admin_tests::{Harness, cluster, join_member};
use crate::kafka::broker::Broker;
use crate::kafka::errors::code;
use crate::session::listeners::NoSteps;

/// DeleteGroups of `groups` at `broker`: each (group, error code).
fn delete(h: &mut Harness, broker: u32, groups: &[&str]) -> Vec<(String, i16)> {
    let r = DeleteGroupsRequest::default().with_groups_names(
        groups
            .iter()
            .map(|g| GroupId(StrBytes::from_string(g.to_string())))
            .collect(),
    );
    match h.ask(broker, 2, RequestKind::DeleteGroups(r)) {
        ResponseKind::DeleteGroups(r) => r
            .results
            .iter()
            .map(|g| (g.group_id.0.to_string(), g.error_code))
            .collect(),
        other => panic!("{other:?}"),
    }
}

fn commit(h: &mut Harness, group: &str, offset: i64) {
    h.act(serde_json::json!({"commit_offsets": {"group": group, "offsets": [{"topic": "t", "partition": 0, "offset": offset}]}}));
}

fn committed(h: &Harness, group: &str) -> Option<i64> {
    h.driver
        .cluster()
        .offsets()
        .get(group, &crate::engine::TopicPartition::new("t", 0))
}

/// Whether the server knows `group` (has seen a member of it).
fn server_knows(h: &mut Harness, group: &str) -> bool {
    let mut steps = NoSteps;
    let w = h.state.worker(&mut h.driver, &mut steps);
    w.groups().group(group).is_some()
}

fn leave(h: &mut Harness, group: &str, member: &str) {
    let mut steps = NoSteps;
    let mut w = h.state.worker(&mut h.driver, &mut steps);
    let now = crate::kafka::clock::RealTime::now();
    assert_eq!(
        w.groups_mut().leave(group, &[member.to_string()], now),
        [code::NONE]
    );
}

#[test]
fn an_empty_group_goes_with_its_committed_offsets_as_one_step() {
    let mut h = cluster("kafka");
    commit(&mut h, "done", 5);
    commit(&mut h, "kept", 3);
    let before = h.driver.step();
    assert_eq!(delete(&mut h, 1, &["done"]), [("done".into(), code::NONE)]);
    assert_eq!(h.driver.step(), before + 1, "one delete_group step");
    assert_eq!(committed(&h, "done"), None);
    assert_eq!(committed(&h, "kept"), Some(3), "other groups stay");
    assert_eq!(
        delete(&mut h, 1, &["done"]),
        [("done".into(), code::GROUP_ID_NOT_FOUND)],
        "deleted: not found again"
    );
    assert_eq!(h.driver.step(), before + 1, "a refusal is no step");
}

#[test]
fn each_error_code_in_the_requests_order() {
    let mut h = cluster("kafka");
    commit(&mut h, "busy", 1);
    commit(&mut h, "idle", 2);
    join_member(&mut h, "busy");
    assert_eq!(
        delete(&mut h, 1, &["nope", "busy", "", "idle"]),
        [
            ("nope".into(), code::GROUP_ID_NOT_FOUND),
            ("busy".into(), code::NON_EMPTY_GROUP),
            ("".into(), code::INVALID_GROUP_ID),
            ("idle".into(), code::NONE),
        ]
    );
    assert_eq!(
        committed(&h, "busy"),
        Some(1),
        "a group with members keeps its offsets"
    );
    assert_eq!(committed(&h, "idle"), None);
}

#[test]
fn a_broker_that_is_not_the_coordinator_deletes_nothing() {
    let mut h = cluster("minikafka");
    commit(&mut h, "g", 4);
    assert_eq!(
        delete(&mut h, 2, &["g"]),
        [("g".into(), code::NOT_COORDINATOR)]
    );
    assert_eq!(committed(&h, "g"), Some(4));
    assert_eq!(
        delete(&mut h, 1, &["g"]),
        [("g".into(), code::NONE)],
        "the book's rules delete too (docs/kafka-differences.md)"
    );
}

#[test]
fn a_group_whose_members_left_is_deleted_offsets_or_not() {
    let mut h = cluster("kafka");
    let m = join_member(&mut h, "left").member_id;
    leave(&mut h, "left", &m);
    let before = h.driver.step();
    assert_eq!(delete(&mut h, 1, &["left"]), [("left".into(), code::NONE)]);
    assert_eq!(h.driver.step(), before, "nothing in the engine: no step");
    assert!(!server_knows(&mut h, "left"), "forgotten");
    let m = join_member(&mut h, "both").member_id;
    commit(&mut h, "both", 6);
    assert_eq!(
        delete(&mut h, 1, &["both"]),
        [("both".into(), code::NON_EMPTY_GROUP)]
    );
    leave(&mut h, "both", &m);
    assert_eq!(delete(&mut h, 1, &["both"]), [("both".into(), code::NONE)]);
    assert!(!server_knows(&mut h, "both"));
    assert_eq!(committed(&h, "both"), None);
}
