//! Each path of the classic state machine on the engine clock: the times
//! are the `now_ms` each call names; the session (and rebalance) timeout
//! is 10 s.

use super::*;
use crate::engine::consumer::offsets::OffsetStore;

const TIMEOUT: u64 = 10_000;

fn coordinator() -> GroupCoordinator {
    GroupCoordinator::with_protocol(TIMEOUT, GroupProtocol::Classic)
}

fn topics() -> TopicPartitions {
    BTreeMap::from([("orders".to_string(), vec![0, 1, 2, 3])])
}

fn subs() -> BTreeSet<String> {
    BTreeSet::from(["orders".to_string()])
}

fn join(c: &mut GroupCoordinator, member: &str, now: u64) -> i32 {
    c.join("g", member, &subs(), &topics(), now)
        .expect("joins")
        .generation
}

fn state(c: &GroupCoordinator) -> GroupState {
    c.group("g").expect("group").state
}

fn tps(names: &[u32]) -> Vec<TopicPartition> {
    names
        .iter()
        .map(|p| TopicPartition::new("orders", *p))
        .collect()
}

/// a joins alone (generation 1, leader), b and c join: each join waits
/// for a to rejoin; a rejoins and the join completes at generation 2.
fn three_members(c: &mut GroupCoordinator) {
    assert_eq!(join(c, "a", 0), 1);
    c.sync("g", "a", 1, None, &topics(), 0).expect("a syncs");
    assert_eq!(join(c, "b", 100), -1, "b waits for a to rejoin");
    assert_eq!(state(c), GroupState::PreparingRebalance);
    assert_eq!(join(c, "c", 200), -1);
    assert_eq!(join(c, "a", 300), 2, "a's rejoin completes the join");
}

#[test]
fn a_lone_member_leads_generation_one_and_its_sync_makes_the_group_stable() {
    let mut c = coordinator();
    assert_eq!(join(&mut c, "a", 0), 1);
    let g = c.group("g").unwrap();
    assert_eq!(g.state, GroupState::CompletingRebalance);
    assert_eq!(g.leader.as_deref(), Some("a"));
    assert!(g.members["a"].classic.pending_sync);
    assert!(matches!(
        c.assignment("g", "a"),
        Err(MiniKafkaError::RebalanceInProgress(_))
    ));
    let out = c.sync("g", "a", 1, None, &topics(), 0).unwrap();
    assert_eq!(
        out,
        SyncOutcome::Assigned {
            generation: 1,
            assignment: tps(&[0, 1, 2, 3]),
            delivered: vec![]
        }
    );
    assert_eq!(state(&c), GroupState::Stable);
    assert_eq!(
        c.assignment("g", "a").unwrap().assignment,
        tps(&[0, 1, 2, 3])
    );
}

#[test]
fn a_join_to_a_stable_group_waits_for_every_known_member_to_rejoin() {
    let mut c = coordinator();
    three_members(&mut c);
    let g = c.group("g").unwrap();
    assert_eq!(g.state, GroupState::CompletingRebalance);
    assert_eq!(g.generation, 2);
    assert_eq!(g.leader.as_deref(), Some("a"), "the old leader rejoined");
    assert!(
        g.assignment.is_empty(),
        "the old generation's assignment is void"
    );
}

#[test]
fn followers_that_sync_before_the_leader_wait_and_the_leaders_sync_answers_them() {
    let mut c = coordinator();
    three_members(&mut c);
    assert_eq!(
        c.sync("g", "b", 2, None, &topics(), 400).unwrap(),
        SyncOutcome::Waiting { generation: 2 }
    );
    assert!(c.group("g").unwrap().members["b"].classic.awaiting_sync);
    let out = c.sync("g", "a", 2, None, &topics(), 500).unwrap();
    // Kafka's RangeAssignor over a, b, c: four partitions, a gets two.
    assert_eq!(
        out,
        SyncOutcome::Assigned {
            generation: 2,
            assignment: tps(&[0, 1]),
            delivered: vec!["b".to_string()]
        }
    );
    let g = c.group("g").unwrap();
    assert_eq!(g.state, GroupState::Stable);
    assert_eq!(g.assignment["b"], tps(&[2]));
    assert!(!g.members["b"].classic.awaiting_sync);
    assert!(g.members["c"].classic.pending_sync, "c has not synced yet");
    let c_out = c.sync("g", "c", 2, None, &topics(), 600).unwrap();
    assert_eq!(
        c_out,
        SyncOutcome::Assigned {
            generation: 2,
            assignment: tps(&[3]),
            delivered: vec![]
        }
    );
}

#[test]
fn the_leaders_explicit_assignment_is_taken_and_a_bad_one_refused_unchanged() {
    let mut c = coordinator();
    three_members(&mut c);
    let bad: Assignment = BTreeMap::from([("z".to_string(), tps(&[0]))]);
    assert!(c.sync("g", "a", 2, Some(&bad), &topics(), 400).is_err());
    let twice: Assignment =
        BTreeMap::from([("a".to_string(), tps(&[0])), ("b".to_string(), tps(&[0]))]);
    assert!(c.sync("g", "a", 2, Some(&twice), &topics(), 400).is_err());
    let missing: Assignment = BTreeMap::from([("a".to_string(), tps(&[9]))]);
    assert!(c.sync("g", "a", 2, Some(&missing), &topics(), 400).is_err());
    assert_eq!(state(&c), GroupState::CompletingRebalance);
    let given: Assignment = BTreeMap::from([
        ("a".to_string(), tps(&[3])),
        ("c".to_string(), tps(&[0, 1, 2])),
    ]);
    c.sync("g", "a", 2, Some(&given), &topics(), 400).unwrap();
    let g = c.group("g").unwrap();
    assert_eq!(g.assignment["a"], tps(&[3]));
    assert_eq!(g.assignment["b"], Vec::<TopicPartition>::new());
    assert_eq!(g.assignment["c"], tps(&[0, 1, 2]));
}

#[test]
fn a_member_that_does_not_rejoin_is_removed_at_the_rebalance_timeout() {
    let mut c = coordinator();
    three_members(&mut c);
    c.sync("g", "a", 2, None, &topics(), 400).unwrap();
    c.sync("g", "b", 2, None, &topics(), 400).unwrap();
    c.sync("g", "c", 2, None, &topics(), 400).unwrap();
    // d joins at 1000: a and b rejoin, c stays silent.
    assert_eq!(join(&mut c, "d", 1_000), -1);
    assert_eq!(join(&mut c, "a", 1_100), -1);
    assert_eq!(join(&mut c, "b", 1_200), -1);
    // c's heartbeat (its session is still alive) is told to rejoin.
    assert!(matches!(
        c.heartbeat("g", "c", 2, 5_000),
        Err(MiniKafkaError::RebalanceInProgress(_))
    ));
    assert!(c.expire_members(&topics(), 10_999).is_empty());
    assert_eq!(state(&c), GroupState::PreparingRebalance);
    // The rebalance timeout: 1000 + 10000.
    assert_eq!(
        c.expire_members(&topics(), 11_000),
        [("g".to_string(), "c".to_string())],
        "c is dropped by the join's completion (its session runs to 15000)"
    );
    let g = c.group("g").unwrap();
    assert_eq!(g.state, GroupState::CompletingRebalance);
    assert_eq!(g.generation, 3);
    assert_eq!(
        g.members.keys().collect::<Vec<_>>(),
        ["a", "b", "d"],
        "c did not rejoin"
    );
}

#[test]
fn a_session_that_runs_out_removes_the_member_and_rebalances() {
    let mut c = coordinator();
    three_members(&mut c);
    for m in ["a", "b", "c"] {
        c.sync("g", m, 2, None, &topics(), 300).unwrap();
    }
    assert_eq!(c.heartbeat("g", "a", 2, 5_000).unwrap(), 15_000);
    c.heartbeat("g", "b", 2, 5_000).unwrap();
    // c's session ends at 10300 (its sync): reached, not passed.
    let gone = c.expire_members(&topics(), 10_300);
    assert_eq!(gone, [("g".to_string(), "c".to_string())]);
    assert_eq!(state(&c), GroupState::PreparingRebalance);
}

#[test]
fn a_member_that_does_not_sync_in_time_is_removed() {
    let mut c = coordinator();
    three_members(&mut c);
    c.sync("g", "a", 2, None, &topics(), 400).unwrap();
    c.sync("g", "b", 2, None, &topics(), 400).unwrap();
    c.heartbeat("g", "c", 2, 5_000).unwrap();
    // The sync deadline: the join completed at 300, plus the timeout.
    let gone = c.expire_members(&topics(), 10_300);
    assert_eq!(gone, [("g".to_string(), "c".to_string())]);
}

#[test]
fn heartbeats_answer_as_kafkas_do_in_each_state() {
    let mut c = coordinator();
    assert!(matches!(
        c.heartbeat("g", "a", 0, 0),
        Err(MiniKafkaError::UnknownMember { member: None, .. })
    ));
    join(&mut c, "a", 0);
    assert!(
        c.heartbeat("g", "a", 1, 10).is_ok(),
        "CompletingRebalance: NONE"
    );
    assert!(matches!(
        c.heartbeat("g", "a", 0, 10),
        Err(MiniKafkaError::IllegalGeneration { current: 1, .. })
    ));
    assert!(matches!(
        c.heartbeat("g", "x", 1, 10),
        Err(MiniKafkaError::UnknownMember {
            member: Some(_),
            ..
        })
    ));
    c.sync("g", "a", 1, None, &topics(), 20).unwrap();
    join(&mut c, "b", 30);
    assert!(matches!(
        c.heartbeat("g", "a", 1, 40),
        Err(MiniKafkaError::RebalanceInProgress(_))
    ));
}

#[test]
fn commits_wait_out_completing_rebalance_and_are_fenced_by_generation() {
    let mut c = coordinator();
    let dir = tempfile::tempdir().unwrap();
    let mut store = OffsetStore::open(dir.path()).unwrap();
    let offsets = BTreeMap::from([(TopicPartition::new("orders", 0), 5)]);
    join(&mut c, "a", 0);
    assert!(matches!(
        c.commit("g", "a", 1, &offsets, &mut store, 10),
        Err(MiniKafkaError::RebalanceInProgress(_))
    ));
    c.sync("g", "a", 1, None, &topics(), 10).unwrap();
    c.commit("g", "a", 1, &offsets, &mut store, 20).unwrap();
    join(&mut c, "b", 30);
    // PreparingRebalance: a still holds generation 1 and its partitions.
    c.commit("g", "a", 1, &offsets, &mut store, 40).unwrap();
    join(&mut c, "a", 50);
    assert!(matches!(
        c.commit("g", "a", 1, &offsets, &mut store, 60),
        Err(MiniKafkaError::IllegalGeneration { .. })
    ));
    assert!(matches!(
        c.commit("g", "x", 2, &offsets, &mut store, 60),
        Err(MiniKafkaError::UnknownMember { .. })
    ));
}

#[test]
fn a_follower_rejoining_a_stable_group_unchanged_keeps_its_generation() {
    let mut c = coordinator();
    join(&mut c, "a", 0);
    c.sync("g", "a", 1, None, &topics(), 0).unwrap();
    join(&mut c, "b", 10);
    join(&mut c, "a", 20);
    c.sync("g", "a", 2, None, &topics(), 30).unwrap();
    c.sync("g", "b", 2, None, &topics(), 30).unwrap();
    assert_eq!(join(&mut c, "b", 40), 2, "no rebalance");
    assert_eq!(state(&c), GroupState::Stable);
    assert_eq!(join(&mut c, "a", 50), -1, "the leader's rejoin rebalances");
    assert_eq!(state(&c), GroupState::PreparingRebalance);
}

#[test]
fn the_leader_leaving_hands_leadership_to_the_first_member_by_id() {
    let mut c = coordinator();
    three_members(&mut c);
    assert!(c.leave("g", "a", &topics(), 400));
    let g = c.group("g").unwrap();
    assert_eq!(g.leader.as_deref(), Some("b"));
    assert_eq!(g.state, GroupState::PreparingRebalance);
    assert!(!c.leave("g", "a", &topics(), 500), "no longer a member");
    assert!(c.leave("g", "b", &topics(), 600));
    assert!(c.leave("g", "c", &topics(), 700));
    let g = c.group("g").unwrap();
    assert_eq!((g.state, g.leader.as_deref()), (GroupState::Empty, None));
}

#[test]
fn sync_is_refused_under_the_books_protocol_and_out_of_turn() {
    let mut book = GroupCoordinator::new(TIMEOUT);
    book.join("g", "a", &subs(), &topics(), 0).unwrap();
    assert!(book.sync("g", "a", 1, None, &topics(), 0).is_err());
    let mut c = coordinator();
    three_members(&mut c);
    join(&mut c, "d", 400);
    assert!(matches!(
        c.sync("g", "a", 2, None, &topics(), 500),
        Err(MiniKafkaError::RebalanceInProgress(_))
    ));
    assert!(matches!(
        c.sync("g", "a", 1, None, &topics(), 500),
        Err(MiniKafkaError::IllegalGeneration { .. })
    ));
}
