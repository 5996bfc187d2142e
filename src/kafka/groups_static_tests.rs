//! Static membership (KIP-345) in the classic group state machine, as
//! Kafka 4.4's `GroupMetadataManager` and `ClassicGroup` run it: a member
//! with a `group.instance.id` keeps its place, assignment and leadership
//! when it rejoins under a new member id, and the member id it replaced
//! is fenced.

use super::*;

/// A static member's JoinGroup: `member` empty for a (re)start.
fn static_req(member: &str, instance: &str, protocols: &[&str], v9: bool) -> Join {
    let mut j = join_req(member, protocols);
    j.instance_id = Some(instance.to_string());
    j.supports_skip_assignment = v9;
    j
}

fn static_sync(
    member: &str,
    instance: &str,
    generation: i32,
    assignments: &[(&str, &str)],
) -> Sync {
    let mut s = sync_req(member, generation, assignments);
    s.instance_id = Some(instance.to_string());
    s
}

/// A Stable generation 1 of static `app-a` (the leader) and dynamic b,
/// each assigned its partition: (a's member id, b's).
fn stable_pair(g: &mut Groups, t0: Instant) -> (String, String) {
    let Started::Wait(ta) = g.join(static_req("", "app-a", &["range"], false), t0) else {
        panic!("a static member joins at once, not asked for an id first");
    };
    let a = joined(g, ta).member_id;
    assert!(a.starts_with("app-a-"), "named after its instance: {a}");
    let Started::Wait(sa) = g.sync(static_sync(&a, "app-a", 1, &[(&a, "p0")]), t0) else {
        panic!()
    };
    synced(g, sa).unwrap();
    let (b, tb) = new_member(g, &["range"], ms(t0, 10));
    let Started::Wait(ta2) = g.join(static_req(&a, "app-a", &["range"], false), ms(t0, 20)) else {
        panic!()
    };
    let ra = joined(g, ta2);
    joined(g, tb);
    assert_eq!((ra.generation, ra.leader.as_str()), (2, a.as_str()));
    let Started::Wait(sb) = g.sync(sync_req(&b, 2, &[]), ms(t0, 30)) else {
        panic!()
    };
    let Started::Wait(sa2) = g.sync(
        static_sync(&a, "app-a", 2, &[(&a, "p0"), (&b, "p1")]),
        ms(t0, 30),
    ) else {
        panic!()
    };
    synced(g, sa2).unwrap();
    assert_eq!(synced(g, sb).unwrap().0, Bytes::from("p1"));
    assert_eq!(state(g), GroupState::Stable);
    (a, b)
}

#[test]
fn a_restarted_static_member_takes_its_place_without_a_rebalance() {
    let t0 = Instant::now();
    let mut g = Groups::default();
    let (a, b) = stable_pair(&mut g, t0);
    // a restarts: no member id, its instance id.
    let Started::Now(r) = g.join(static_req("", "app-a", &["range"], false), ms(t0, 100)) else {
        panic!("answered at once: the group does not rebalance");
    };
    let a2 = r.member_id.clone();
    assert_ne!(a2, a, "a new member id");
    assert_eq!((r.error, r.generation), (code::NONE, 2));
    assert_eq!(
        r.leader, a,
        "before v9 the leader is named as it was, so the returning leader syncs as a follower"
    );
    assert!(r.members.is_empty() && !r.skip_assignment);
    assert_eq!(state(&g), GroupState::Stable);
    assert_eq!(
        g.group("g").unwrap().leader.as_deref(),
        Some(a2.as_str()),
        "the leadership went to the new id"
    );
    let Started::Now(Ok((assignment, _, _))) =
        g.sync(static_sync(&a2, "app-a", 2, &[]), ms(t0, 110))
    else {
        panic!("a Stable group's sync is answered at once");
    };
    assert_eq!(assignment, Bytes::from("p0"), "its assignment kept");
    assert_eq!(g.heartbeat("g", &b, None, 2, ms(t0, 120)), code::NONE);
    // The old id is fenced wherever it shows with the instance id, and
    // unknown without it.
    assert_eq!(
        g.heartbeat("g", &a, Some("app-a"), 2, ms(t0, 130)),
        code::FENCED_INSTANCE_ID
    );
    assert_eq!(
        g.heartbeat("g", &a, None, 2, ms(t0, 130)),
        code::UNKNOWN_MEMBER_ID
    );
    assert_eq!(
        g.validate_commit("g", (&a, Some("app-a")), 2, false, true, ms(t0, 130)),
        Err(code::FENCED_INSTANCE_ID)
    );
    assert_eq!(
        g.validate_commit("g", (&a2, Some("app-a")), 2, false, true, ms(t0, 130)),
        Ok(())
    );
    let Started::Now(fenced) = g.join(static_req(&a, "app-a", &["range"], false), ms(t0, 140))
    else {
        panic!()
    };
    assert_eq!(fenced.error, code::FENCED_INSTANCE_ID);
    assert_eq!(
        g.heartbeat("g", &a2, Some("app-b"), 2, ms(t0, 150)),
        code::UNKNOWN_MEMBER_ID,
        "an instance the group does not have"
    );
    assert_eq!(state(&g), GroupState::Stable);
}

#[test]
fn from_v9_a_returning_static_leader_is_told_to_skip_the_assignment() {
    let t0 = Instant::now();
    let mut g = Groups::default();
    let (_, b) = stable_pair(&mut g, t0);
    let Started::Now(r) = g.join(static_req("", "app-a", &["range"], true), ms(t0, 100)) else {
        panic!()
    };
    assert_eq!(r.leader, r.member_id, "named the leader");
    assert!(r.skip_assignment, "KIP-814: it must not assign again");
    let ids: Vec<&str> = r.members.iter().map(|(m, _)| m.as_str()).collect();
    assert!(ids.contains(&r.member_id.as_str()) && ids.contains(&b.as_str()));
    assert_eq!(state(&g), GroupState::Stable);
}

#[test]
fn a_static_member_rejoining_with_other_protocols_rebalances_the_group() {
    let t0 = Instant::now();
    let mut g = Groups::default();
    let Started::Wait(ta) = g.join(static_req("", "app-a", &["range", "roundrobin"], false), t0)
    else {
        panic!()
    };
    let a = joined(&mut g, ta).member_id;
    let Started::Wait(sa) = g.sync(static_sync(&a, "app-a", 1, &[(&a, "p0")]), t0) else {
        panic!()
    };
    synced(&mut g, sa).unwrap();
    // Restarted preferring roundrobin: its vote changes the protocol.
    let Started::Wait(ta2) = g.join(
        static_req("", "app-a", &["roundrobin", "range"], false),
        ms(t0, 100),
    ) else {
        panic!("a changed protocol is a rebalance, not the current generation");
    };
    let r = joined(&mut g, ta2);
    assert_eq!(
        (r.generation, r.protocol.as_deref(), r.leader == r.member_id),
        (2, Some("roundrobin"), true)
    );
    assert_eq!(state(&g), GroupState::CompletingRebalance);
}

#[test]
fn a_replaced_member_waiting_on_a_rebalance_is_fenced() {
    let t0 = Instant::now();
    let mut g = Groups::default();
    let (a, _b) = stable_pair(&mut g, t0);
    // a rejoins with its id (a rebalance: it is the leader), then a second
    // process with the same instance id starts.
    let Started::Wait(old) = g.join(static_req(&a, "app-a", &["range"], false), ms(t0, 100)) else {
        panic!()
    };
    let Started::Wait(new) = g.join(static_req("", "app-a", &["range"], false), ms(t0, 110)) else {
        panic!("the group is rebalancing: the new id waits with it");
    };
    let fenced = joined(&mut g, old);
    assert_eq!(
        (fenced.error, fenced.member_id.as_str()),
        (code::FENCED_INSTANCE_ID, a.as_str())
    );
    assert!(g.take(new).is_none(), "b has not rejoined yet");
}

#[test]
fn a_static_member_that_misses_a_rebalance_keeps_its_place_until_its_session_ends() {
    let t0 = Instant::now();
    let mut g = Groups::default();
    let (a, b) = stable_pair(&mut g, t0);
    // c joins; b rejoins, the static leader a does not.
    let (c, tc) = new_member(&mut g, &["range"], ms(t0, 100));
    let Started::Wait(tb) = g.join(join_req(&b, &["range"]), ms(t0, 110)) else {
        panic!()
    };
    assert!(g.take(tc).is_none(), "the join waits for a");
    // a is alive (it heartbeats) but does not rejoin in time.
    for at in [5_000, 14_000, 23_000] {
        assert_eq!(
            g.heartbeat("g", &a, Some("app-a"), 2, ms(t0, at)),
            code::REBALANCE_IN_PROGRESS
        );
    }
    g.tick(ms(t0, 100) + REBALANCE);
    let (rb, rc) = (joined(&mut g, tb), joined(&mut g, tc));
    assert_eq!(rb.generation, 3);
    let group = g.group("g").unwrap();
    assert!(
        group.members.contains_key(&a),
        "a static member is not removed for missing a rebalance"
    );
    assert_eq!(group.members.len(), 3);
    let leader = group.leader.clone().unwrap();
    assert_ne!(leader, a, "a member that rejoined leads");
    assert!(leader == b || leader == c);
    assert_eq!(rc.leader, leader);
    let leaders = [&rb, &rc].iter().filter(|r| r.members.len() == 3).count();
    assert_eq!(leaders, 1, "the leader is given all three members");
    // a's heartbeats are of the last generation now: its session ends
    // and the group rebalances without it.
    assert_eq!(
        g.heartbeat("g", &a, Some("app-a"), 2, ms(t0, 100) + REBALANCE),
        code::ILLEGAL_GENERATION
    );
    for m in [&b, &c] {
        assert_eq!(
            g.heartbeat("g", m, None, 3, ms(t0, 5_100) + REBALANCE),
            code::NONE
        );
    }
    g.tick(ms(t0, 100) + REBALANCE + SESSION);
    assert!(!g.group("g").unwrap().members.contains_key(&a));
    assert_eq!(state(&g), GroupState::PreparingRebalance);
}

#[test]
fn only_absent_static_members_left_waits_for_them_instead_of_a_new_generation() {
    let t0 = Instant::now();
    let mut g = Groups::default();
    let Started::Wait(ta) = g.join(static_req("", "app-a", &["range"], false), t0) else {
        panic!()
    };
    let a = joined(&mut g, ta).member_id;
    let Started::Wait(sa) = g.sync(static_sync(&a, "app-a", 1, &[(&a, "p0")]), t0) else {
        panic!()
    };
    synced(&mut g, sa).unwrap();
    // A dynamic member comes and goes: the group rebalances and a, the
    // only member left, does not rejoin in time.
    let (b, _) = new_member(&mut g, &["range"], ms(t0, 10));
    assert_eq!(
        g.leave("g", std::slice::from_ref(&b), ms(t0, 20)),
        vec![code::NONE]
    );
    for at in [5_000, 14_000, 23_000, 30_000] {
        g.heartbeat("g", &a, Some("app-a"), 1, ms(t0, at));
    }
    g.tick(ms(t0, 10) + REBALANCE);
    let group = g.group("g").unwrap();
    assert_eq!(
        (group.state, group.generation),
        (GroupState::PreparingRebalance, 1),
        "no generation without a member that joined"
    );
    let Started::Wait(ta2) = g.join(
        static_req(&a, "app-a", &["range"], false),
        ms(t0, 10) + REBALANCE,
    ) else {
        panic!()
    };
    assert_eq!(joined(&mut g, ta2).generation, 2);
}

#[test]
fn leave_group_removes_a_static_member_by_its_instance_id() {
    let t0 = Instant::now();
    let mut g = Groups::default();
    let (a, _b) = stable_pair(&mut g, t0);
    let leave = |g: &mut Groups, member: &str, instance: &str| {
        g.leave_identified(
            "g",
            &[(member.to_string(), Some(instance.to_string()))],
            ms(t0, 100),
        )
    };
    assert_eq!(leave(&mut g, "", "app-z"), vec![code::UNKNOWN_MEMBER_ID]);
    assert_eq!(
        leave(&mut g, "app-a-old", "app-a"),
        vec![code::FENCED_INSTANCE_ID]
    );
    assert_eq!(state(&g), GroupState::Stable, "nothing left");
    // The admin's removeMembersFromConsumerGroup: the instance alone.
    assert_eq!(leave(&mut g, "", "app-a"), vec![code::NONE]);
    assert!(!g.group("g").unwrap().members.contains_key(&a));
    assert_eq!(state(&g), GroupState::PreparingRebalance);
}
