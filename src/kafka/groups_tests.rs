//! The classic group state machine with an explicit clock: every call
//! names its `now`, so sessions and rebalance timeouts run out exactly
//! where the test says.

use super::*;

const SESSION: Duration = Duration::from_secs(10);
const REBALANCE: Duration = Duration::from_secs(30);

fn ms(t0: Instant, ms: u64) -> Instant {
    t0 + Duration::from_millis(ms)
}

thread_local! {
    /// The member numbers a test's new members take (each test runs on its
    /// own thread: from 1 in every test), as the server's file gives them.
    static NUMBERS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn join_req(member: &str, protocols: &[&str]) -> Join {
    let new_member_number = NUMBERS.with(|n| {
        n.set(n.get() + u64::from(member.is_empty()));
        n.get()
    });
    Join {
        group: "g".into(),
        member_id: member.into(),
        client_id: "c".into(),
        client_host: "/127.0.0.1".into(),
        connection: 1,
        session: SESSION,
        rebalance: REBALANCE,
        protocol_type: "consumer".into(),
        protocols: protocols
            .iter()
            .map(|p| (p.to_string(), Bytes::from(format!("{member}:{p}"))))
            .collect(),
        instance_id: None,
        require_known_member: true,
        supports_skip_assignment: false,
        new_member_number,
    }
}

/// A new member's two JoinGroups (MEMBER_ID_REQUIRED, then with its id):
/// its id and the ticket its join waits on.
fn new_member(g: &mut Groups, protocols: &[&str], now: Instant) -> (String, Ticket) {
    let Started::Now(first) = g.join(join_req("", protocols), now) else {
        panic!("a new member is asked for its id first");
    };
    assert_eq!(first.error, code::MEMBER_ID_REQUIRED);
    match g.join(join_req(&first.member_id, protocols), now) {
        Started::Wait(t) => (first.member_id, t),
        Started::Now(r) => panic!("{r:?}"),
    }
}

fn joined(g: &mut Groups, ticket: Ticket) -> JoinReply {
    match g.take(ticket) {
        Some(Reply::Join(r)) => r,
        other => panic!("no join answer yet: {other:?}"),
    }
}

fn synced(g: &mut Groups, ticket: Ticket) -> SyncReply {
    match g.take(ticket) {
        Some(Reply::Sync(r)) => r,
        other => panic!("no sync answer yet: {other:?}"),
    }
}

fn sync_req(member: &str, generation: i32, assignments: &[(&str, &str)]) -> Sync {
    Sync {
        group: "g".into(),
        member_id: member.into(),
        instance_id: None,
        generation,
        protocol_type: Some("consumer".into()),
        protocol: None,
        assignments: assignments
            .iter()
            .map(|(m, a)| (m.to_string(), Bytes::from(a.to_string())))
            .collect(),
    }
}

fn state(g: &Groups) -> GroupState {
    g.group("g").expect("known").state
}

#[test]
fn one_member_joins_alone_leads_and_syncs_to_stable() {
    let t0 = Instant::now();
    let mut g = Groups::default();
    let (a, ticket) = new_member(&mut g, &["range"], t0);
    let r = joined(&mut g, ticket);
    assert_eq!(
        (r.error, r.generation, r.leader.as_str()),
        (0, 1, a.as_str())
    );
    assert_eq!(r.protocol.as_deref(), Some("range"));
    assert_eq!(
        r.members,
        vec![(a.clone(), Bytes::from(format!("{a}:range")))]
    );
    assert_eq!(state(&g), GroupState::CompletingRebalance);
    let Started::Wait(t) = g.sync(sync_req(&a, 1, &[(&a, "p0")]), t0) else {
        panic!("the leader's sync is answered through its ticket");
    };
    assert_eq!(synced(&mut g, t).unwrap().0, Bytes::from("p0"));
    assert_eq!(state(&g), GroupState::Stable);
    assert_eq!(g.heartbeat("g", &a, None, 1, ms(t0, 100)), code::NONE);
    assert_eq!(
        g.heartbeat("g", &a, None, 0, ms(t0, 100)),
        code::ILLEGAL_GENERATION
    );
    assert_eq!(
        g.heartbeat("g", "x", None, 1, ms(t0, 100)),
        code::UNKNOWN_MEMBER_ID
    );
}

#[test]
fn a_second_member_rebalances_the_group_and_the_leader_is_kept() {
    let t0 = Instant::now();
    let mut g = Groups::default();
    let (a, ta) = new_member(&mut g, &["range", "roundrobin"], t0);
    joined(&mut g, ta);
    let Started::Wait(sa) = g.sync(sync_req(&a, 1, &[(&a, "all")]), t0) else {
        panic!()
    };
    synced(&mut g, sa).unwrap();
    // b joins: the group prepares a rebalance and waits for a.
    let (b, tb) = new_member(&mut g, &["roundrobin", "range"], ms(t0, 10));
    assert_eq!(state(&g), GroupState::PreparingRebalance);
    assert!(g.take(tb).is_none(), "b waits for a to rejoin");
    assert_eq!(
        g.heartbeat("g", &a, None, 1, ms(t0, 20)),
        code::REBALANCE_IN_PROGRESS,
        "a is told to rejoin"
    );
    assert_eq!(
        g.validate_commit("g", (&a, None), 1, false, true, ms(t0, 20)),
        Ok(()),
        "a commits what it read before it rejoins"
    );
    let Started::Wait(ta2) = g.join(join_req(&a, &["range", "roundrobin"]), ms(t0, 30)) else {
        panic!()
    };
    let ra = joined(&mut g, ta2);
    let rb = joined(&mut g, tb);
    assert_eq!(ra.generation, 2);
    assert_eq!(ra.leader, a, "the leader rejoined and stays the leader");
    assert_eq!(rb.leader, a);
    assert_eq!(
        ra.members.len(),
        2,
        "the leader gets every member's metadata"
    );
    assert!(rb.members.is_empty(), "a follower gets none");
    // One vote each: the tie goes to the first member's (by id) choice.
    assert_eq!(ra.protocol.as_deref(), Some("range"));
    assert_eq!(
        ra.members
            .iter()
            .find(|(m, _)| *m == b)
            .map(|(_, meta)| meta.clone()),
        Some(Bytes::from(format!("{b}:range"))),
        "the metadata is the chosen protocol's"
    );
    // CompletingRebalance: a plain commit waits; the follower's sync waits
    // for the leader's.
    assert_eq!(
        g.validate_commit("g", (&a, None), 2, false, true, ms(t0, 31)),
        Err(code::REBALANCE_IN_PROGRESS)
    );
    assert_eq!(
        g.validate_commit("g", (&a, None), 2, true, true, ms(t0, 31)),
        Ok(())
    );
    let Started::Wait(sb) = g.sync(sync_req(&b, 2, &[]), ms(t0, 40)) else {
        panic!()
    };
    assert!(g.take(sb).is_none(), "b waits for the leader's assignment");
    assert_eq!(
        g.heartbeat("g", &b, None, 2, ms(t0, 40)),
        code::NONE,
        "a heartbeat while completing is fine"
    );
    let Started::Wait(sa2) = g.sync(sync_req(&a, 2, &[(&a, "p0"), (&b, "p1")]), ms(t0, 50)) else {
        panic!()
    };
    assert_eq!(synced(&mut g, sa2).unwrap().0, Bytes::from("p0"));
    assert_eq!(synced(&mut g, sb).unwrap().0, Bytes::from("p1"));
    assert_eq!(state(&g), GroupState::Stable);
    assert_eq!(
        g.validate_commit("g", (&b, None), 1, false, true, ms(t0, 60)),
        Err(code::ILLEGAL_GENERATION),
        "an old generation's commit is fenced"
    );
    assert_eq!(
        g.validate_commit("g", ("", None), -1, false, true, ms(t0, 60)),
        Err(code::UNKNOWN_MEMBER_ID),
        "a simple commit while the group has members"
    );
    // A stable follower rejoining with nothing changed gets the current
    // generation without a rebalance.
    let Started::Now(again) = g.join(join_req(&b, &["roundrobin", "range"]), ms(t0, 70)) else {
        panic!("answered at once")
    };
    assert_eq!((again.generation, again.error), (2, 0));
    assert_eq!(state(&g), GroupState::Stable);
}

#[test]
fn the_protocol_is_the_one_most_members_vote_for_among_the_common_ones() {
    let t0 = Instant::now();
    let mut g = Groups::default();
    let (a, ta) = new_member(&mut g, &["sticky", "range"], t0);
    joined(&mut g, ta);
    let Started::Wait(sa) = g.sync(sync_req(&a, 1, &[]), t0) else {
        panic!()
    };
    synced(&mut g, sa).unwrap();
    let (_b, tb) = new_member(&mut g, &["roundrobin", "range", "sticky"], t0);
    let (_c, tc) = new_member(&mut g, &["roundrobin", "range", "sticky"], t0);
    // A member without any common protocol is refused.
    let Started::Now(r) = g.join(join_req("", &["cooperative-sticky"]), t0) else {
        panic!()
    };
    assert_eq!(r.error, code::INCONSISTENT_GROUP_PROTOCOL);
    let Started::Wait(ta2) = g.join(join_req(&a, &["sticky", "range"]), t0) else {
        panic!()
    };
    // Common: sticky, range (b and c offer roundrobin, a does not).
    let r = joined(&mut g, ta2);
    joined(&mut g, tb);
    joined(&mut g, tc);
    assert_eq!(r.protocol.as_deref(), Some("range"), "two votes to one");
}

#[test]
fn a_member_that_does_not_rejoin_is_removed_at_the_rebalance_timeout() {
    let t0 = Instant::now();
    let mut g = Groups::default();
    let (a, ta) = new_member(&mut g, &["range"], t0);
    joined(&mut g, ta);
    let Started::Wait(sa) = g.sync(sync_req(&a, 1, &[]), t0) else {
        panic!()
    };
    synced(&mut g, sa).unwrap();
    // a keeps heartbeating but never rejoins.
    let (b, tb) = new_member(&mut g, &["range"], ms(t0, 1000));
    for at in [
        3000, 6000, 9000, 12_000, 15_000, 18_000, 21_000, 24_000, 27_000, 30_000,
    ] {
        assert_eq!(
            g.heartbeat("g", &a, None, 1, ms(t0, at)),
            code::REBALANCE_IN_PROGRESS
        );
        g.tick(ms(t0, at));
        assert!(g.take(tb).is_none(), "still waiting at {at} ms");
    }
    g.tick(ms(t0, 31_000));
    let rb = joined(&mut g, tb);
    assert_eq!(rb.generation, 2);
    assert_eq!(rb.leader, b, "the leader left: the new one is b");
    assert_eq!(rb.members.len(), 1);
    assert!(!g.group("g").unwrap().members.contains_key(&a));
    assert_eq!(
        g.heartbeat("g", &a, None, 1, ms(t0, 31_000)),
        code::UNKNOWN_MEMBER_ID
    );
}

#[test]
fn a_session_that_runs_out_removes_the_member_and_rebalances() {
    let t0 = Instant::now();
    let mut g = Groups::default();
    let (a, ta) = new_member(&mut g, &["range"], t0);
    let (b, tb) = new_member(&mut g, &["range"], t0);
    // a joined alone first (initial delay 0): gen 1; b's join started a
    // rebalance a must rejoin.
    joined(&mut g, ta);
    let Started::Wait(ta2) = g.join(join_req(&a, &["range"]), t0) else {
        panic!()
    };
    let ra = joined(&mut g, ta2);
    joined(&mut g, tb);
    assert_eq!(ra.generation, 2);
    let Started::Wait(sb) = g.sync(sync_req(&b, 2, &[]), t0) else {
        panic!()
    };
    let Started::Wait(sa) = g.sync(sync_req(&a, 2, &[(&a, "x"), (&b, "y")]), t0) else {
        panic!()
    };
    synced(&mut g, sa).unwrap();
    synced(&mut g, sb).unwrap();
    // b heartbeats; a goes silent (killed).
    g.heartbeat("g", &b, None, 2, ms(t0, 5000));
    g.tick(ms(t0, 9_999));
    assert_eq!(state(&g), GroupState::Stable);
    assert_eq!(g.next_deadline(), Some(ms(t0, 10_000)), "a's session");
    g.tick(ms(t0, 10_000));
    assert_eq!(state(&g), GroupState::PreparingRebalance);
    assert!(!g.group("g").unwrap().members.contains_key(&a));
    assert_eq!(g.group("g").unwrap().leader.as_deref(), Some(b.as_str()));
    assert_eq!(
        g.heartbeat("g", &b, None, 2, ms(t0, 10_100)),
        code::REBALANCE_IN_PROGRESS
    );
    let Started::Wait(tb2) = g.join(join_req(&b, &["range"]), ms(t0, 10_200)) else {
        panic!()
    };
    let rb = joined(&mut g, tb2);
    assert_eq!((rb.generation, rb.leader.as_str()), (3, b.as_str()));
}

#[test]
fn leaving_rebalances_and_the_last_one_out_empties_the_group() {
    let t0 = Instant::now();
    let mut g = Groups::default();
    let (a, ta) = new_member(&mut g, &["range"], t0);
    joined(&mut g, ta);
    let Started::Wait(sa) = g.sync(sync_req(&a, 1, &[]), t0) else {
        panic!()
    };
    synced(&mut g, sa).unwrap();
    let (b, tb) = new_member(&mut g, &["range"], t0);
    // a leaves instead of rejoining: b's join completes at once.
    assert_eq!(
        g.leave("g", &[a.clone(), "nobody".into()], t0),
        vec![code::NONE, code::UNKNOWN_MEMBER_ID]
    );
    let rb = joined(&mut g, tb);
    assert_eq!((rb.generation, rb.leader.as_str()), (2, b.as_str()));
    let Started::Wait(sb) = g.sync(sync_req(&b, 2, &[]), t0) else {
        panic!()
    };
    synced(&mut g, sb).unwrap();
    assert_eq!(g.leave("g", std::slice::from_ref(&b), t0), vec![code::NONE]);
    let group = g.group("g").unwrap();
    assert_eq!((group.state, group.generation), (GroupState::Empty, 3));
    assert_eq!(group.protocol_type.as_deref(), Some("consumer"));
    // An empty group takes simple commits again; a member's is unknown.
    assert_eq!(
        g.validate_commit("g", ("", None), -1, false, true, t0),
        Ok(())
    );
    assert_eq!(
        g.validate_commit("g", (&b, None), 3, false, true, t0),
        Err(code::UNKNOWN_MEMBER_ID)
    );
    assert_eq!(
        g.validate_commit("never", ("m", None), 1, false, false, t0),
        Err(code::ILLEGAL_GENERATION)
    );
    assert_eq!(
        g.validate_commit("never", ("", None), -1, false, false, t0),
        Ok(())
    );
}

#[test]
fn a_rebalance_while_completing_tells_the_waiting_followers_to_rejoin() {
    let t0 = Instant::now();
    let mut g = Groups::default();
    let (a, ta) = new_member(&mut g, &["range"], t0);
    joined(&mut g, ta);
    let Started::Wait(sa) = g.sync(sync_req(&a, 1, &[]), t0) else {
        panic!()
    };
    synced(&mut g, sa).unwrap();
    let (b, tb) = new_member(&mut g, &["range"], t0);
    let Started::Wait(ta2) = g.join(join_req(&a, &["range"]), t0) else {
        panic!()
    };
    joined(&mut g, ta2);
    joined(&mut g, tb);
    let Started::Wait(sb) = g.sync(sync_req(&b, 2, &[]), t0) else {
        panic!()
    };
    // A third member arrives before the leader syncs.
    let (_c, _tc) = new_member(&mut g, &["range"], t0);
    assert_eq!(synced(&mut g, sb), Err(code::REBALANCE_IN_PROGRESS));
    assert_eq!(
        g.sync(sync_req(&a, 2, &[]), t0),
        Started::Now(Err(code::REBALANCE_IN_PROGRESS))
    );
    assert_eq!(state(&g), GroupState::PreparingRebalance);
}

#[test]
fn join_checks_member_ids_and_versions_before_four_join_at_once() {
    let t0 = Instant::now();
    let mut g = Groups::default();
    assert_eq!(
        g.join(join_req("", &[]), t0),
        Started::Now(JoinReply::error(code::INCONSISTENT_GROUP_PROTOCOL, "")),
        "no protocol offered"
    );
    assert!(g.group("g").is_none(), "a refused join makes no group");
    assert_eq!(
        g.join(join_req("ghost", &["range"]), t0),
        Started::Now(JoinReply::error(code::UNKNOWN_MEMBER_ID, "ghost"))
    );
    let mut old = join_req("", &["range"]);
    old.require_known_member = false;
    old.new_member_number = 41;
    let Started::Wait(t) = g.join(old, t0) else {
        panic!("before v4 a new member joins with the id it is given")
    };
    let r = joined(&mut g, t);
    assert_eq!(r.member_id, "c-41", "its client id and the number given");
    assert_eq!(r.leader, "c-41");
    // A pending member id (MEMBER_ID_REQUIRED) that never comes back
    // expires with its session; meanwhile it holds the rebalance.
    let Started::Now(p) = g.join(join_req("", &["range"]), t0) else {
        panic!()
    };
    assert_eq!(p.error, code::MEMBER_ID_REQUIRED);
    assert_eq!(
        g.leave("g", std::slice::from_ref(&p.member_id), t0),
        vec![code::NONE]
    );
    assert_eq!(
        g.join(join_req(&p.member_id, &["range"]), t0),
        Started::Now(JoinReply::error(code::UNKNOWN_MEMBER_ID, &p.member_id)),
        "a pending member that left is unknown"
    );
}

#[test]
fn the_initial_delay_holds_an_empty_groups_first_rebalance() {
    let t0 = Instant::now();
    let mut g = Groups::with_initial_delay(Duration::from_millis(300));
    let (_a, ta) = new_member(&mut g, &["range"], t0);
    assert!(g.take(ta).is_none(), "held by the delay");
    let (_b, tb) = new_member(&mut g, &["range"], ms(t0, 200));
    g.tick(ms(t0, 300));
    assert!(g.take(ta).is_none(), "b's arrival extended the delay");
    g.tick(ms(t0, 500));
    let ra = joined(&mut g, ta);
    let rb = joined(&mut g, tb);
    assert_eq!((ra.generation, rb.generation), (1, 1));
    assert_eq!(ra.members.len(), 2, "both in the first generation");
}

#[test]
fn a_member_that_joins_but_never_syncs_is_removed_after_the_rebalance_timeout() {
    let t0 = Instant::now();
    let mut g = Groups::default();
    let (a, ta) = new_member(&mut g, &["range"], t0);
    joined(&mut g, ta);
    let Started::Wait(sa) = g.sync(sync_req(&a, 1, &[]), t0) else {
        panic!()
    };
    synced(&mut g, sa).unwrap();
    let (b, tb) = new_member(&mut g, &["range"], t0);
    let Started::Wait(ta2) = g.join(join_req(&a, &["range"]), t0) else {
        panic!()
    };
    joined(&mut g, ta2);
    joined(&mut g, tb);
    let Started::Wait(sa2) = g.sync(sync_req(&a, 2, &[]), t0) else {
        panic!()
    };
    synced(&mut g, sa2).unwrap();
    // b heartbeats but never syncs.
    for at in [5_000, 10_000, 15_000, 20_000, 25_000] {
        assert_eq!(g.heartbeat("g", &b, None, 2, ms(t0, at)), code::NONE);
        assert_eq!(g.heartbeat("g", &a, None, 2, ms(t0, at)), code::NONE);
        g.tick(ms(t0, at));
    }
    g.tick(ms(t0, 30_000));
    assert!(!g.group("g").unwrap().members.contains_key(&b));
    assert_eq!(state(&g), GroupState::PreparingRebalance);
}

#[test]
fn reading_never_changes_the_groups() {
    let t0 = Instant::now();
    let mut g = Groups::default();
    let (_a, ta) = new_member(&mut g, &["range"], t0);
    joined(&mut g, ta);
    let before = format!("{g:?}");
    let _ = g.listed().count();
    let _ = g.next_deadline();
    let _ = g.group("g");
    assert_eq!(format!("{g:?}"), before);
}

/// What kafka-python 3.0.12 did in the flaky split test (the rejoin it
/// lost, see tests/clients/kp_group_member.py): the first member leads
/// generation 1, rejoins for new metadata, gets generation 2's assignment
/// and then goes silent, never applying it. The two members that join
/// next wait for it only until its session runs out (not the rebalance
/// timeout); then they form generation 3 without it, and its late
/// JoinGroup is told UNKNOWN_MEMBER_ID, so a client that comes back joins
/// anew instead of being left out.
#[test]
fn a_leader_silent_after_its_sync_holds_the_next_rebalance_only_until_its_session_ends() {
    let t0 = Instant::now();
    let mut g = Groups::default();
    let (a, ta) = new_member(&mut g, &["range"], t0);
    assert_eq!(joined(&mut g, ta).generation, 1);
    let Started::Wait(sa) = g.sync(sync_req(&a, 1, &[(&a, "")]), t0) else {
        panic!()
    };
    synced(&mut g, sa).unwrap();
    let Started::Wait(ta2) = g.join(join_req(&a, &["range"]), ms(t0, 100)) else {
        panic!("the leader's rejoin rebalances")
    };
    assert_eq!(joined(&mut g, ta2).generation, 2);
    let Started::Wait(sa2) = g.sync(sync_req(&a, 2, &[(&a, "all")]), ms(t0, 200)) else {
        panic!()
    };
    assert_eq!(synced(&mut g, sa2).unwrap().0, Bytes::from("all"));
    // b and c join; a never heartbeats or rejoins again.
    let (b, tb) = new_member(&mut g, &["range"], ms(t0, 1_000));
    let (c, tc) = new_member(&mut g, &["range"], ms(t0, 1_100));
    assert_eq!(state(&g), GroupState::PreparingRebalance);
    g.tick(ms(t0, 10_199));
    assert!(
        g.take(tb).is_none() && g.take(tc).is_none(),
        "they wait for a while its session lasts"
    );
    assert_eq!(g.next_deadline(), Some(ms(t0, 10_200)), "a's session");
    g.tick(ms(t0, 10_200));
    let (rb, rc) = (joined(&mut g, tb), joined(&mut g, tc));
    assert_eq!((rb.generation, rc.generation), (3, 3));
    assert_eq!(rb.leader, b, "the leader went: the first member left leads");
    assert_eq!(rb.members.len(), 2, "b assigns for b and c only");
    assert!(rc.members.is_empty());
    let members: Vec<&String> = g.group("g").unwrap().members.keys().collect();
    assert_eq!(members, [&b, &c]);
    let Started::Now(late) = g.join(join_req(&a, &["range"]), ms(t0, 10_300)) else {
        panic!("answered at once")
    };
    assert_eq!(late.error, code::UNKNOWN_MEMBER_ID, "a must join anew");
}

/// `join_req` whose "range" metadata subscribes to `topics`, as a
/// consumer's does.
fn subscribing(member: &str, topics: &[&str]) -> Join {
    use bytes::BufMut;
    use kafka_protocol::messages::ConsumerProtocolSubscription;
    use kafka_protocol::protocol::{Encodable, StrBytes};
    let mut buf = bytes::BytesMut::new();
    buf.put_i16(0);
    ConsumerProtocolSubscription::default()
        .with_topics(
            topics
                .iter()
                .map(|t| StrBytes::from_string(t.to_string()))
                .collect(),
        )
        .encode(&mut buf, 0)
        .unwrap();
    Join {
        protocols: vec![("range".into(), buf.freeze())],
        ..join_req(member, &["range"])
    }
}

#[test]
fn the_subscribed_topics_are_the_generations_and_an_empty_group_has_none() {
    let t0 = Instant::now();
    let mut g = Groups::default();
    let subscribed = |g: &Groups, topic: &str| g.group("g").unwrap().is_subscribed_to(topic);
    let Started::Now(first) = g.join(subscribing("", &["a"]), t0) else {
        panic!()
    };
    let Started::Wait(ta) = g.join(subscribing(&first.member_id, &["a"]), t0) else {
        panic!()
    };
    let a = joined(&mut g, ta).member_id;
    assert!(subscribed(&g, "a") && !subscribed(&g, "b"));
    // b joins subscribing to b: until the join completes, the generation
    // (and its subscriptions) is the last one, as Kafka's.
    let Started::Now(second) = g.join(subscribing("", &["b"]), t0) else {
        panic!()
    };
    let Started::Wait(tb) = g.join(subscribing(&second.member_id, &["b"]), t0) else {
        panic!()
    };
    assert_eq!(state(&g), GroupState::PreparingRebalance);
    assert!(!subscribed(&g, "b"), "not before the new generation");
    let Started::Wait(ta2) = g.join(subscribing(&a, &["a"]), t0) else {
        panic!()
    };
    joined(&mut g, ta2);
    let b = joined(&mut g, tb).member_id;
    assert!(subscribed(&g, "a") && subscribed(&g, "b"));
    assert_eq!(
        g.validate_offset_delete("g", t0).map(|g| g.is_some()),
        Ok(true)
    );
    assert_eq!(g.leave("g", &[a, b], t0), vec![code::NONE, code::NONE]);
    assert_eq!(state(&g), GroupState::Empty);
    assert!(!subscribed(&g, "a"), "an empty group subscribes to nothing");
    assert_eq!(
        g.validate_offset_delete("nope", t0).map(|g| g.is_some()),
        Ok(false)
    );
}

#[test]
fn offsets_of_a_group_of_another_protocol_type_are_kept_while_it_has_members() {
    let t0 = Instant::now();
    let mut g = Groups::default();
    let connect = |member: &str| Join {
        protocol_type: "connect".into(),
        ..join_req(member, &["sessioned"])
    };
    let Started::Now(first) = g.join(connect(""), t0) else {
        panic!()
    };
    let Started::Wait(t) = g.join(connect(&first.member_id), t0) else {
        panic!()
    };
    let m = joined(&mut g, t).member_id;
    assert_eq!(
        g.validate_offset_delete("g", t0).map(|g| g.is_some()),
        Err(code::NON_EMPTY_GROUP)
    );
    assert!(
        !g.group("g").unwrap().is_subscribed_to("a"),
        "not the consumer type"
    );
    assert_eq!(g.leave("g", &[m], t0), vec![code::NONE]);
    assert_eq!(
        g.validate_offset_delete("g", t0).map(|g| g.is_some()),
        Ok(true)
    );
}

#[path = "groups_static_tests.rs"]
mod static_members;
