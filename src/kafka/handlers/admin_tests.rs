//! The admin handlers the observer asks (ListTransactions,
//! DescribeTransactions, DescribeProducers, ListGroups, DescribeLogDirs)
//! in process, on a two-broker cluster whose topic t has one partition on
//! both (led by broker 1): every state a transaction passes through, the
//! coordinator and leader checks, and the filters.

use kafka_protocol::messages::describe_producers_request::TopicRequest;
use kafka_protocol::messages::{
    DescribeProducersRequest, DescribeTransactionsRequest, ListTransactionsRequest, ProducerId,
    RequestKind, ResponseKind, TopicName, TransactionalId,
};
use kafka_protocol::protocol::StrBytes;

use crate::kafka::broker::{Advertised, Broker, Handled, Request};
use crate::kafka::errors::code;
use crate::kafka::registry::Registry;
use crate::kafka::worker::ServerState;
use crate::session::listeners::NoSteps;
use crate::session::recording::Header;
use crate::session::snapshot::Snapshot;
use crate::session::{Action, Driver};

pub(super) struct Harness {
    pub driver: Driver,
    pub state: ServerState,
}

/// Brokers 1 and 2, both advertised; topic t of one partition, replicated
/// on both.
pub(super) fn cluster(rules: &str) -> Harness {
    cluster_with(rules, serde_json::json!({}))
}

/// [`cluster`] with the cluster configuration `config` (the header's
/// `cluster.config`).
pub(super) fn cluster_with(rules: &str, config: serde_json::Value) -> Harness {
    let header: Header = serde_json::from_value(serde_json::json!({
        "mk_recording": 1, "title": "t", "rules": rules,
        "cluster": {"brokers": [1, 2], "topics": [{"name": "t", "partitions": 1, "replication_factor": 2}],
                    "config": config},
    }))
    .unwrap();
    let driver = Driver::new(&header, None).unwrap();
    let brokers = [1, 2]
        .map(|b| Advertised {
            broker: b,
            host: "127.0.0.1".into(),
            port: 9091 + b as u16,
        })
        .to_vec();
    let gates = tokio::sync::watch::channel(Default::default()).0;
    Harness {
        driver,
        state: ServerState::new(brokers, 0, false, Registry::default(), gates),
    }
}

impl Harness {
    /// Applies an action given in the recording's JSON form.
    pub fn act(&mut self, action: serde_json::Value) {
        let action: Action = serde_json::from_value(action).unwrap();
        self.driver.apply(&action);
    }

    /// Asks broker `broker`; the response, answered at once.
    pub fn ask(&mut self, broker: u32, version: i16, body: RequestKind) -> ResponseKind {
        let request = Request {
            broker,
            client_id: "test".into(),
            version,
            body,
            connection: 0,
        };
        let mut steps = NoSteps;
        let mut w = self.state.worker(&mut self.driver, &mut steps);
        match super::handle(&mut w, request) {
            Handled::Now(a) => a.body.expect("a response"),
            other => panic!("an admin API answers at once: {other:?}"),
        }
    }
}

/// A member joins `group` on the server (its first join completes at once:
/// the tests' groups wait no initial delay) and stays a member: its join's
/// answer.
pub(super) fn join_member(h: &mut Harness, group: &str) -> crate::kafka::groups::JoinReply {
    join_with(h, group, "consumer", Default::default())
}

/// [`join_member`] of `protocol_type`, its "range" protocol's metadata
/// `metadata`.
pub(super) fn join_with(
    h: &mut Harness,
    group: &str,
    protocol_type: &str,
    metadata: bytes::Bytes,
) -> crate::kafka::groups::JoinReply {
    use crate::kafka::groups::{Join, Reply, Started};
    let mut steps = NoSteps;
    let mut w = h.state.worker(&mut h.driver, &mut steps);
    let join = Join {
        group: group.into(),
        member_id: String::new(),
        client_id: "c".into(),
        client_host: String::new(),
        connection: 1,
        session: std::time::Duration::from_secs(60),
        rebalance: std::time::Duration::from_secs(60),
        protocol_type: protocol_type.into(),
        protocols: vec![("range".into(), metadata)],
        instance_id: None,
        require_known_member: false,
        supports_skip_assignment: false,
        new_member_number: w.producer_ids().unwrap().allocate_member().unwrap(),
    };
    let groups = w.groups_mut();
    let Started::Wait(t) = groups.join(join, crate::kafka::clock::RealTime::now()) else {
        panic!("joins")
    };
    let Some(Reply::Join(r)) = groups.take(t) else {
        panic!("joined at once")
    };
    r
}

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

/// ListTransactions at `broker`: (id, producer id, state) each, and the
/// unknown state filters.
fn list(
    h: &mut Harness,
    broker: u32,
    states: &[&str],
    producers: &[i64],
) -> (Vec<(String, i64, String)>, Vec<String>) {
    let r = ListTransactionsRequest::default()
        .with_state_filters(states.iter().map(|x| s(x)).collect())
        .with_producer_id_filters(producers.iter().map(|&p| ProducerId(p)).collect())
        .with_duration_filter(-1);
    match h.ask(broker, 1, RequestKind::ListTransactions(r)) {
        ResponseKind::ListTransactions(r) => (
            r.transaction_states
                .iter()
                .map(|t| {
                    (
                        t.transactional_id.0.to_string(),
                        t.producer_id.0,
                        t.transaction_state.to_string(),
                    )
                })
                .collect(),
            r.unknown_state_filters
                .iter()
                .map(|f| f.to_string())
                .collect(),
        ),
        other => panic!("{other:?}"),
    }
}

/// DescribeTransactions of `id` at `broker`.
fn describe(
    h: &mut Harness,
    broker: u32,
    id: &str,
) -> kafka_protocol::messages::describe_transactions_response::TransactionState {
    let r =
        DescribeTransactionsRequest::default().with_transactional_ids(vec![TransactionalId(s(id))]);
    match h.ask(broker, 0, RequestKind::DescribeTransactions(r)) {
        ResponseKind::DescribeTransactions(mut r) => r.transaction_states.remove(0),
        other => panic!("{other:?}"),
    }
}

/// The partitions DescribeTransactions lists, `t-0` each.
fn partitions(
    d: &kafka_protocol::messages::describe_transactions_response::TransactionState,
) -> Vec<String> {
    d.topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(|p| format!("{}-{p}", t.topic.0)))
        .collect()
}

/// (producer id, epoch, last sequence, coordinator epoch, txn start).
type Active = (i64, i32, i32, i32, i64);

/// DescribeProducers of t-0 at `broker`: the error code and each
/// (producer id, epoch, last sequence, coordinator epoch, txn start).
fn producers(h: &mut Harness, broker: u32) -> (i16, Vec<Active>) {
    producers_of(h, broker, "t")
}

/// [`producers`] of partition 0 of `topic`.
fn producers_of(h: &mut Harness, broker: u32, topic: &str) -> (i16, Vec<Active>) {
    let r = DescribeProducersRequest::default().with_topics(vec![
        TopicRequest::default()
            .with_name(TopicName(s(topic)))
            .with_partition_indexes(vec![0]),
    ]);
    match h.ask(broker, 0, RequestKind::DescribeProducers(r)) {
        ResponseKind::DescribeProducers(r) => {
            let p = &r.topics[0].partitions[0];
            (
                p.error_code,
                p.active_producers
                    .iter()
                    .map(|x| {
                        (
                            x.producer_id.0,
                            x.producer_epoch,
                            x.last_sequence,
                            x.coordinator_epoch,
                            x.current_txn_start_offset,
                        )
                    })
                    .collect(),
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_book_transaction_is_listed_described_and_holds_its_start_until_it_completes() {
    let mut h = cluster("minikafka");
    h.act(serde_json::json!({"produce": {"topic": "t", "value": "p"}}));
    h.act(serde_json::json!({"replicate": {}}));
    h.act(serde_json::json!({"begin": {"txn": "tx-1"}}));
    h.act(serde_json::json!({"send": {"txn": "tx-1", "topic": "t", "value": "a"}}));
    // The send waits for broker 2: it holds the LSO back already.
    assert_eq!(
        producers(&mut h, 1),
        (0, vec![(-1, -1, -1, -1, 1)]),
        "the book's open transaction, as producer -1, from offset 1"
    );
    assert_eq!(
        list(&mut h, 1, &[], &[]).0,
        [("tx-1".to_string(), -1, "Ongoing".to_string())]
    );
    assert!(
        list(&mut h, 2, &[], &[]).0.is_empty(),
        "broker 2 coordinates nothing"
    );
    let d = describe(&mut h, 1, "tx-1");
    assert_eq!(d.error_code, 0);
    assert_eq!(d.transaction_state.as_str(), "Ongoing");
    assert_eq!(partitions(&d), ["t-0"], "a write waiting for acks counts");
    assert_eq!((d.producer_id.0, d.producer_epoch), (-1, -1));
    assert_eq!(d.transaction_timeout_ms, -1, "the book's never time out");
    assert_eq!(d.transaction_start_time_ms, -1);
    assert_eq!(
        describe(&mut h, 1, "nope").error_code,
        code::TRANSACTIONAL_ID_NOT_FOUND
    );
    assert_eq!(
        describe(&mut h, 2, "tx-1").error_code,
        code::NOT_COORDINATOR
    );
    assert_eq!(
        producers(&mut h, 2),
        (0, vec![]),
        "the follower has not fetched offset 1: no open transaction there yet"
    );
    h.act(serde_json::json!({"replicate": {}}));
    assert_eq!(producers(&mut h, 2), producers(&mut h, 1), "fetched");
    h.act(serde_json::json!({"commit": {"txn": "tx-1"}}));
    // The COMMIT marker is on broker 1 only: the transaction is deciding.
    let d = describe(&mut h, 1, "tx-1");
    assert_eq!(d.transaction_state.as_str(), "PrepareCommit");
    assert_eq!(partitions(&d), ["t-0"], "its marker is not replicated");
    assert_eq!(producers(&mut h, 1).1, [(-1, -1, -1, -1, 1)]);
    h.act(serde_json::json!({"replicate": {}}));
    let d = describe(&mut h, 1, "tx-1");
    assert_eq!(d.transaction_state.as_str(), "CompleteCommit");
    assert!(partitions(&d).is_empty());
    assert_eq!(producers(&mut h, 1), (0, vec![]), "nothing open");
    let (listed, unknown) = list(&mut h, 1, &["CompleteCommit", "Bogus"], &[]);
    assert_eq!(listed.len(), 1);
    assert_eq!(unknown, ["Bogus"]);
    assert!(list(&mut h, 1, &["Ongoing"], &[]).0.is_empty());
}

#[test]
fn a_kafka_transaction_is_its_producers_with_sequence_epoch_and_start() {
    let mut h = cluster("kafka");
    h.act(serde_json::json!({"begin": {"txn": "tx-1"}}));
    h.act(serde_json::json!({"send": {"txn": "tx-1", "topic": "t", "value": "a"}}));
    h.act(serde_json::json!({"send": {"txn": "tx-1", "topic": "t", "value": "b"}}));
    h.act(serde_json::json!({"replicate": {}}));
    let (e, active) = producers(&mut h, 1);
    assert_eq!(e, 0);
    let [(pid, epoch, last_sequence, coordinator_epoch, start)] = active[..] else {
        panic!("{active:?}");
    };
    assert!(pid >= 0, "the engine's producer id");
    assert_eq!((last_sequence, coordinator_epoch, start), (1, -1, 0));
    let d = describe(&mut h, 1, "tx-1");
    assert_eq!(
        (d.producer_id.0, i32::from(d.producer_epoch)),
        (pid, epoch),
        "DescribeTransactions and DescribeProducers name one producer"
    );
    assert_eq!(d.transaction_timeout_ms, 60_000);
    assert!(d.transaction_start_time_ms >= 0);
    assert_eq!(list(&mut h, 1, &[], &[pid]).0.len(), 1);
    assert!(list(&mut h, 1, &[], &[pid + 1]).0.is_empty());
    h.act(serde_json::json!({"commit": {"txn": "tx-1"}}));
    h.act(serde_json::json!({"replicate": {}}));
    assert_eq!(
        producers(&mut h, 1).1,
        [(pid, epoch, 1, 0, 0)],
        "the marker is on broker 2 but the HW is not past it: still deciding"
    );
    h.act(serde_json::json!({"replicate": {}}));
    assert_eq!(
        producers(&mut h, 1).1,
        [(pid, epoch, 1, 0, -1)],
        "no open transaction; a marker of this producer is in the log"
    );
}

/// Every replica keeps its producer state, and DescribeProducers answers
/// from the one on the broker asked, leader or follower, as Kafka does
/// (so `kafka-transactions.sh find-hanging --broker-id N` works for a
/// broker leading nothing): a follower knows a producer once it has
/// fetched its batch. A broker with no replica of the partition answers
/// NOT_LEADER_OR_FOLLOWER; asking changes nothing.
#[test]
fn a_follower_answers_describe_producers_from_its_own_replica() {
    let mut h = cluster("kafka");
    h.act(serde_json::json!({"begin": {"txn": "tx-1"}}));
    h.act(serde_json::json!({"send": {"txn": "tx-1", "topic": "t", "value": "a"}}));
    let (e, led) = producers(&mut h, 1);
    assert_eq!((e, led.len()), (0, 1), "{led:?}");
    assert_eq!(
        producers(&mut h, 2),
        (0, vec![]),
        "broker 2 has not fetched the batch: it knows no producer"
    );
    h.act(serde_json::json!({"replicate": {}}));
    let before = Snapshot::of(&h.driver);
    let followed = producers(&mut h, 2);
    assert_eq!(
        followed,
        (0, led.clone()),
        "the same producer, sequence and start"
    );
    assert_eq!(followed.1[0].4, 0, "the open transaction starts at 0");
    assert_eq!(Snapshot::of(&h.driver), before, "reading changes no state");
    h.act(serde_json::json!({"commit": {"txn": "tx-1"}}));
    h.act(serde_json::json!({"replicate": {}}));
    h.act(serde_json::json!({"replicate": {}}));
    let (pid, epoch, sequence, _, _) = led[0];
    assert_eq!(producers(&mut h, 1).1, [(pid, epoch, sequence, 0, -1)]);
    assert_eq!(
        producers(&mut h, 2).1,
        [(pid, epoch, sequence, 0, -1)],
        "the follower holds the marker too"
    );
    h.act(
        serde_json::json!({"create_topic": {"name": "one", "partitions": 1,
        "replication_factor": 1}}),
    );
    let holder = Snapshot::of(&h.driver)
        .partitions
        .iter()
        .find(|p| p.topic == "one")
        .map(|p| p.leader)
        .unwrap();
    let other = 3 - holder;
    assert_eq!(producers_of(&mut h, holder, "one"), (0, vec![]));
    assert_eq!(
        producers_of(&mut h, other, "one").0,
        code::NOT_LEADER_OR_FOLLOWER,
        "no replica on broker {other}"
    );
    assert_eq!(
        producers_of(&mut h, 1, "nope").0,
        code::UNKNOWN_TOPIC_OR_PARTITION
    );
}

/// ListGroups at `broker` (v5 with filters): (group id, protocol type,
/// state, type) each.
fn groups(
    h: &mut Harness,
    broker: u32,
    states: &[&str],
    types: &[&str],
) -> Vec<(String, String, String, String)> {
    let r = kafka_protocol::messages::ListGroupsRequest::default()
        .with_states_filter(states.iter().map(|x| s(x)).collect())
        .with_types_filter(types.iter().map(|x| s(x)).collect());
    match h.ask(broker, 5, RequestKind::ListGroups(r)) {
        ResponseKind::ListGroups(r) => {
            assert_eq!(r.error_code, 0);
            r.groups
                .iter()
                .map(|g| {
                    (
                        g.group_id.0.to_string(),
                        g.protocol_type.to_string(),
                        g.group_state.to_string(),
                        g.group_type.to_string(),
                    )
                })
                .collect()
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn list_groups_names_every_group_with_offsets_staged_offsets_or_a_member() {
    let mut h = cluster("minikafka");
    assert!(groups(&mut h, 1, &[], &[]).is_empty(), "no group yet");
    h.act(serde_json::json!({"commit_offsets": {"group": "plain", "offsets": [{"topic": "t", "partition": 0, "offset": 0}]}}));
    h.act(serde_json::json!({"begin": {"txn": "tx-1"}}));
    h.act(serde_json::json!({"send_offsets": {"txn": "tx-1", "group": "staged", "offsets": [{"topic": "t", "partition": 0, "offset": 0}]}}));
    {
        let r = join_member(&mut h, "live");
        let mut steps = NoSteps;
        let mut w = h.state.worker(&mut h.driver, &mut steps);
        let now = crate::kafka::clock::RealTime::now();
        let groups = w.groups_mut();
        let sync = crate::kafka::groups::Sync {
            group: "live".into(),
            member_id: r.member_id.clone(),
            instance_id: None,
            generation: r.generation,
            protocol_type: None,
            protocol: None,
            assignments: Vec::new(),
        };
        assert!(matches!(
            groups.sync(sync, now),
            crate::kafka::groups::Started::Wait(_)
        ));
    }
    let row = |g: &str, p: &str, st: &str| {
        (
            g.to_string(),
            p.to_string(),
            st.to_string(),
            "classic".to_string(),
        )
    };
    assert_eq!(
        groups(&mut h, 1, &[], &[]),
        [
            row("live", "consumer", "Stable"),
            row("plain", "", "Empty"),
            row("staged", "", "Empty"),
        ]
    );
    assert!(
        groups(&mut h, 2, &[], &[]).is_empty(),
        "broker 2 coordinates none"
    );
    assert_eq!(
        groups(&mut h, 1, &["stable"], &[]),
        [row("live", "consumer", "Stable")],
        "states filter, case-insensitive as Kafka's"
    );
    assert!(
        groups(&mut h, 1, &[], &["consumer"]).is_empty(),
        "no KIP-848 groups"
    );
    assert_eq!(groups(&mut h, 1, &[], &["Classic"]).len(), 3);
}

/// DescribeLogDirs at `broker` (all topics): the directory's error code,
/// and each (partition, size, offset lag).
fn log_dirs(h: &mut Harness, broker: u32) -> (i16, String, Vec<(String, i64, i64)>) {
    let r = kafka_protocol::messages::DescribeLogDirsRequest::default().with_topics(None);
    match h.ask(broker, 4, RequestKind::DescribeLogDirs(r)) {
        ResponseKind::DescribeLogDirs(r) => {
            let d = &r.results[0];
            (
                d.error_code,
                d.log_dir.to_string(),
                d.topics
                    .iter()
                    .flat_map(|t| {
                        t.partitions.iter().map(move |p| {
                            assert!(!p.is_future_key);
                            (
                                format!("{}-{}", t.name.0, p.partition_index),
                                p.partition_size,
                                p.offset_lag,
                            )
                        })
                    })
                    .collect(),
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn log_dirs_give_each_replicas_size_and_its_lag_behind_the_high_watermark() {
    let mut h = cluster("minikafka");
    let (e, dir, replicas) = log_dirs(&mut h, 1);
    assert_eq!(e, 0);
    assert!(dir.ends_with("broker-1"), "{dir}");
    assert_eq!(replicas, [("t-0".to_string(), 0, 0)], "an empty log");
    h.act(serde_json::json!({"produce": {"topic": "t", "value": "a"}}));
    h.act(serde_json::json!({"replicate": {}}));
    h.act(serde_json::json!({"replicate": {}}));
    h.act(serde_json::json!({"stop_broker": {"broker": 2}}));
    assert_eq!(
        log_dirs(&mut h, 2).0,
        code::KAFKA_STORAGE_ERROR,
        "a stopped broker's directory is offline"
    );
    // Silent past the lag time, broker 2 leaves the ISR at the next round.
    h.act(serde_json::json!({"advance_clock": {"ms": 60_000}}));
    h.act(serde_json::json!({"replicate": {}}));
    h.act(serde_json::json!({"produce": {"topic": "t", "value": "b"}}));
    h.act(serde_json::json!({"replicate": {}}));
    h.act(serde_json::json!({"start_broker": {"broker": 2}}));
    let (hw, leos) = h.driver.cluster().with_state(|s| {
        let set = s
            .partition(&crate::engine::TopicPartition::new("t", 0))
            .unwrap();
        let leo = |b| set.replica(b).unwrap().leo();
        (set.high_watermark(), (leo(1), leo(2)))
    });
    assert_eq!(
        (hw, leos),
        (2, (2, 1)),
        "broker 2 is back one record behind"
    );
    let (_, _, leader) = log_dirs(&mut h, 1);
    let (e, dir, follower) = log_dirs(&mut h, 2);
    assert_eq!(e, 0);
    assert!(dir.ends_with("broker-2"), "{dir}");
    assert_eq!(leader[0].2, 0, "the leader has the HW");
    assert_eq!(follower[0].2, 1, "max(HW 2 - LEO 1, 0)");
    assert!(
        leader[0].1 > follower[0].1 && follower[0].1 > 0,
        "{leader:?} {follower:?}"
    );
}

/// The plain views of `broker.rs` read what the engine holds: a
/// transaction's latest instance and state, a log's ends, the topics, the
/// stopped brokers and the rules.
#[test]
fn the_brokers_views_read_the_engine() {
    use crate::kafka::broker::{TimestampType, TopicPartition, TransactionState};
    let mut h = cluster("minikafka");
    h.act(serde_json::json!({"produce": {"topic": "t", "value": "p"}}));
    h.act(serde_json::json!({"replicate": {}}));
    h.act(serde_json::json!({"begin": {"txn": "tx-1"}}));
    h.act(serde_json::json!({"stop_broker": {"broker": 2}}));
    let mut steps = NoSteps;
    let w = h.state.worker(&mut h.driver, &mut steps);
    let b: &dyn Broker = &w;
    let latest = b.latest_instance("tx-1").expect("begun");
    assert_eq!(b.txn_state(latest), Some(TransactionState::Ongoing));
    assert_eq!(b.instance(latest).map(|d| d.id), Some("tx-1".to_string()));
    assert_eq!(b.latest_instance("nope"), None);
    assert_eq!(b.txn_state(latest + 1), None);
    assert_eq!(b.log_ends(&TopicPartition::new("t", 0)), (1, 0));
    assert_eq!(b.log_ends(&TopicPartition::new("t", 9)), (-1, -1));
    assert_eq!(b.topic_names(), ["t"]);
    assert_eq!(b.timestamp_type("t"), Some(TimestampType::CreateTime));
    assert_eq!(b.timestamp_type("nope"), None);
    assert_eq!(b.stopped_brokers().into_iter().collect::<Vec<_>>(), [2]);
    assert!(!b.config().rules.fence_zombies, "the book's rules");
}

/// Heartbeat and LeaveGroup check the group id before the member, as
/// Kafka's group coordinator does (JoinGroup already did): an empty one is
/// INVALID_GROUP_ID, not UNKNOWN_MEMBER_ID.
#[test]
fn heartbeat_and_leave_group_with_an_empty_group_id_are_invalid_group_id() {
    use kafka_protocol::messages::leave_group_request::MemberIdentity;
    use kafka_protocol::messages::{GroupId, HeartbeatRequest, LeaveGroupRequest};
    let mut h = cluster("kafka");
    let beat = HeartbeatRequest::default()
        .with_group_id(GroupId(StrBytes::from_static_str("")))
        .with_member_id(StrBytes::from_static_str("m"));
    let ResponseKind::Heartbeat(r) = h.ask(1, 4, RequestKind::Heartbeat(beat)) else {
        panic!("a Heartbeat response")
    };
    assert_eq!(r.error_code, code::INVALID_GROUP_ID);
    let leave = LeaveGroupRequest::default()
        .with_group_id(GroupId(StrBytes::from_static_str("")))
        .with_members(vec![
            MemberIdentity::default().with_member_id(StrBytes::from_static_str("m")),
        ]);
    let ResponseKind::LeaveGroup(r) = h.ask(1, 3, RequestKind::LeaveGroup(leave)) else {
        panic!("a LeaveGroup response")
    };
    assert_eq!(r.members[0].error_code, code::INVALID_GROUP_ID);
    let leave = LeaveGroupRequest::default()
        .with_group_id(GroupId(StrBytes::from_static_str("")))
        .with_member_id(StrBytes::from_static_str("m"));
    let ResponseKind::LeaveGroup(r) = h.ask(1, 1, RequestKind::LeaveGroup(leave)) else {
        panic!("a LeaveGroup response")
    };
    assert_eq!(r.error_code, code::INVALID_GROUP_ID);
}

/// A static member (JoinGroup v5+ with `group.instance.id`, KIP-345) is
/// not asked for a member id first: it joins at once, named after its
/// instance, the log line names the instance, and DescribeGroups v4+
/// gives it; a dynamic member is still asked (MEMBER_ID_REQUIRED).
#[test]
fn a_static_member_joins_at_once_and_is_described_with_its_instance() {
    use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
    use kafka_protocol::messages::{
        DescribeGroupsRequest, GroupId, JoinGroupRequest, ResponseKind,
    };
    let mut h = cluster("kafka");
    let join = |instance: Option<&'static str>| {
        JoinGroupRequest::default()
            .with_group_id(GroupId(StrBytes::from_static_str("g")))
            .with_group_instance_id(instance.map(StrBytes::from_static_str))
            .with_protocol_type(StrBytes::from_static_str("consumer"))
            // A static member's long session, as Kafka takes it (up to
            // its 30-minute group.max.session.timeout.ms).
            .with_session_timeout_ms(600_000)
            .with_rebalance_timeout_ms(10_000)
            .with_protocols(vec![
                JoinGroupRequestProtocol::default().with_name(StrBytes::from_static_str("range")),
            ])
    };
    let mut send = |version: i16, body| {
        let request = Request {
            broker: 1,
            client_id: "test".into(),
            version,
            body,
            connection: 0,
        };
        let mut steps = NoSteps;
        let mut w = h.state.worker(&mut h.driver, &mut steps);
        match super::handle(&mut w, request) {
            Handled::Now(a) => a,
            Handled::Continue(mut c) => c.poll(&mut w).expect("a group of one completes at once"),
            _ => panic!("a JoinGroup is answered now or continued"),
        }
    };
    let joined = send(5, RequestKind::JoinGroup(join(Some("app-1"))));
    let Some(ResponseKind::JoinGroup(r)) = &joined.body else {
        panic!("{joined:?}")
    };
    assert_eq!(r.error_code, 0, "{}", joined.outcome);
    assert!(r.member_id.starts_with("app-1-"), "{:?}", r.member_id);
    assert!(
        joined.outcome.contains("(static member \"app-1\")"),
        "{}",
        joined.outcome
    );
    let member = r.member_id.to_string();
    let dynamic = send(5, RequestKind::JoinGroup(join(None)));
    assert!(
        dynamic.outcome.contains("MEMBER_ID_REQUIRED"),
        "{}",
        dynamic.outcome
    );
    let session = h
        .state
        .worker(&mut h.driver, &mut NoSteps)
        .groups()
        .group("g")
        .and_then(|g| g.members.get(&member))
        .map(|m| m.session);
    assert_eq!(session, Some(std::time::Duration::from_secs(600)));
    let coordinator = crate::kafka::handlers::find_coordinator::coordinator(
        &h.state.worker(&mut h.driver, &mut NoSteps),
    )
    .expect("a coordinator")
    .broker;
    for (version, instance) in [(4, Some("app-1")), (3, None)] {
        let request = Request {
            broker: coordinator,
            client_id: "test".into(),
            version,
            body: RequestKind::DescribeGroups(
                DescribeGroupsRequest::default()
                    .with_groups(vec![GroupId(StrBytes::from_static_str("g"))]),
            ),
            connection: 0,
        };
        let mut steps = NoSteps;
        let mut w = h.state.worker(&mut h.driver, &mut steps);
        let Handled::Now(a) = super::handle(&mut w, request) else {
            panic!("DescribeGroups is answered at once")
        };
        let Some(ResponseKind::DescribeGroups(d)) = a.body else {
            panic!()
        };
        let instances: Vec<Option<String>> = d.groups[0]
            .members
            .iter()
            .map(|m| m.group_instance_id.as_ref().map(|i| i.to_string()))
            .collect();
        assert_eq!(instances, vec![instance.map(str::to_string)], "v{version}");
    }
}

/// A validate_only CreateTopics creates nothing, and its log line says so
/// (a new user's trial read `gb created` for a topic that never was).
#[test]
fn a_validate_only_create_topics_is_logged_as_nothing_created() {
    use kafka_protocol::messages::CreateTopicsRequest;
    use kafka_protocol::messages::create_topics_request::CreatableTopic;
    fn outcome(h: &mut Harness, validate_only: bool, name: &'static str) -> String {
        let request = CreateTopicsRequest::default()
            .with_validate_only(validate_only)
            .with_topics(vec![
                CreatableTopic::default()
                    .with_name(TopicName(StrBytes::from_static_str(name)))
                    .with_num_partitions(1)
                    .with_replication_factor(1),
            ]);
        let mut steps = NoSteps;
        let mut w = h.state.worker(&mut h.driver, &mut steps);
        super::create_topics::handle(&mut w, &request, 7).outcome
    }
    let mut h = cluster("kafka");
    assert_eq!(
        outcome(&mut h, true, "gb"),
        "gb would be created (validate_only: nothing created)"
    );
    assert!(!h.driver.cluster().topics().iter().any(|(t, _)| t == "gb"));
    assert_eq!(outcome(&mut h, false, "gb"), "gb created");
    assert!(h.driver.cluster().topics().iter().any(|(t, _)| t == "gb"));
}
