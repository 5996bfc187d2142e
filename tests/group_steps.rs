//! The consumer-group actions through the session driver (E15): what a
//! crash does to groups and to the members' clients, that a time-travel
//! checkpoint carries both, and that a member's poll reads from the
//! committed offset and says what it read.

use minikafka::session::recording::Header;
use minikafka::session::{Action, Driver, Outcome, Snapshot};
use serde_json::json;

fn driver() -> Driver {
    let header: Header = serde_json::from_value(json!({
        "mk_recording": 1, "rules": "minikafka",
        "cluster": {"brokers": [1], "topics": [{"name": "orders", "partitions": 2, "replication_factor": 1}],
                    "config": {"group_session_timeout_ms": 500}},
    }))
    .unwrap();
    Driver::new(&header, None).unwrap()
}

fn act(d: &mut Driver, action: serde_json::Value) -> Outcome {
    d.apply(&serde_json::from_value::<Action>(action).unwrap())
}

fn setup(d: &mut Driver) {
    for p in 0..2 {
        let out = act(
            d,
            json!({"produce": {"topic": "orders", "partition": p, "records": [{"value": "x"}, {"value": "y"}]}}),
        );
        assert_eq!(out, Outcome::Ok);
    }
    assert_eq!(
        act(
            d,
            json!({"join_group": {"group": "g", "member": "m1", "topics": ["orders"]}})
        ),
        Outcome::Ok
    );
    assert_eq!(
        act(d, json!({"poll": {"group": "g", "member": "m1", "max": 3}})),
        Outcome::Ok
    );
}

#[test]
fn a_poll_says_what_it_read_and_the_commit_is_fenced_by_generation() {
    let mut d = driver();
    setup(&mut d);
    let said = &d.events().newest(1)[0].text;
    assert_eq!(
        said,
        "poll: ok; m1 read 3 records: orders-0 0..1, orders-1 0; positions orders-0 2, orders-1 1"
    );
    let zh = &d.events().newest(1)[0].zh;
    assert!(zh.starts_with("拉取：完成；m1 读到 3 条记录"), "{zh}");
    let commit = |generation: i32| {
        json!({"commit_group_offsets": {"group": "g", "member": "m1", "generation": generation,
        "offsets": [{"topic": "orders", "partition": 1, "offset": 1}]}})
    };
    assert!(matches!(act(&mut d, commit(0)), Outcome::Error(e) if e.code() == "IllegalGeneration"));
    assert_eq!(act(&mut d, commit(1)), Outcome::Ok);
    assert_eq!(Snapshot::of(&d).committed_offsets["g"]["orders-1"], 1);
}

#[test]
fn the_session_expires_when_advance_clock_passes_the_deadline() {
    let mut d = driver();
    setup(&mut d);
    assert_eq!(
        act(&mut d, json!({"advance_clock": {"ms": 500}})),
        Outcome::Ok
    );
    assert_eq!(
        Snapshot::of(&d).groups[0].members.len(),
        1,
        "at the deadline, not past it"
    );
    assert_eq!(
        act(&mut d, json!({"advance_clock": {"ms": 1}})),
        Outcome::Ok
    );
    let s = Snapshot::of(&d);
    assert!(s.groups[0].members.is_empty());
    assert_eq!(
        (s.groups[0].state.as_str(), s.groups[0].generation),
        ("empty", 2)
    );
    let said = &d.events().newest(1)[0].text;
    assert!(
        said.starts_with("advance_clock: ok; expired m1 of g (session timeout 500 ms)"),
        "{said}"
    );
    assert!(
        matches!(act(&mut d, json!({"poll": {"group": "g", "member": "m1"}})), Outcome::Error(e) if e.code() == "UnknownMember")
    );
}

#[test]
fn a_crash_drops_groups_and_clients_but_keeps_committed_offsets() {
    let mut d = driver();
    setup(&mut d);
    let commit = json!({"commit_group_offsets": {"group": "g", "member": "m1", "generation": 1,
        "offsets": [{"topic": "orders", "partition": 0, "offset": 2}]}});
    assert_eq!(act(&mut d, commit), Outcome::Ok);
    assert!(matches!(
        act(&mut d, json!({"crash": {}})),
        Outcome::Recovered(_)
    ));
    let s = Snapshot::of(&d);
    assert!(s.groups.is_empty(), "membership lived in memory");
    assert!(d.members().is_empty(), "so did the members' clients");
    assert_eq!(s.committed_offsets["g"]["orders-0"], 2);
    // Joining again resumes from the committed offset.
    assert_eq!(
        act(
            &mut d,
            json!({"join_group": {"group": "g", "member": "m1", "topics": ["orders"]}})
        ),
        Outcome::Ok
    );
    assert_eq!(
        act(
            &mut d,
            json!({"poll": {"group": "g", "member": "m1", "max": 1}})
        ),
        Outcome::Ok
    );
    let s = Snapshot::of(&d);
    assert_eq!(
        s.groups[0].generation, 1,
        "a new coordinator counts from 0 again"
    );
    assert_eq!(
        s.groups[0].members[0].last_poll[0].partition, "orders-1",
        "orders-0 was read to its end"
    );
}

#[test]
fn a_checkpoint_carries_the_groups_and_the_clients() {
    let mut d = driver();
    setup(&mut d);
    let header: Header = serde_json::from_value(json!({
        "mk_recording": 1, "rules": "minikafka",
        "cluster": {"brokers": [1], "topics": [{"name": "orders", "partitions": 2, "replication_factor": 1}],
                    "config": {"group_session_timeout_ms": 500}},
    }))
    .unwrap();
    let memo = d.memo().expect("quiet");
    let dir = tempfile::tempdir().unwrap();
    let copied = d.copy_data_dir(dir.path()).unwrap();
    let mut restored = Driver::restore(&header, dir.path(), &memo, &copied, None).unwrap();
    assert_eq!(Snapshot::of(&restored).groups, Snapshot::of(&d).groups);
    for driver in [&mut d, &mut restored] {
        assert_eq!(
            act(driver, json!({"poll": {"group": "g", "member": "m1"}})),
            Outcome::Ok
        );
    }
    assert_eq!(Snapshot::of(&restored).groups, Snapshot::of(&d).groups);
    assert_eq!(
        Snapshot::of(&restored).groups[0].members[0].positions["orders-1"],
        2
    );
}

/// `sync_group` is Kafka's classic protocol: under the book's rules it is
/// a step error naming why, and nothing changes; under `--rules kafka` the
/// leader's sync assigns, the follower's before it waits, and each
/// member's sentence (English and Chinese) says so.
#[test]
fn sync_group_is_the_classic_protocols_and_says_who_waits() {
    let mut book = driver();
    setup(&mut book);
    let sync = |member: &str, generation: i32| json!({"sync_group": {"group": "g", "member": member, "generation": generation}});
    let before = Snapshot::of(&book).groups;
    let out = act(&mut book, sync("m1", 1));
    assert!(
        matches!(&out, Outcome::Error(e) if e.to_string().contains("run under --rules kafka")),
        "{out:?}"
    );
    assert_eq!(Snapshot::of(&book).groups, before);

    let header: Header = serde_json::from_value(json!({
        "mk_recording": 1, "rules": "kafka",
        "cluster": {"brokers": [1], "topics": [{"name": "orders", "partitions": 2, "replication_factor": 1}]},
    }))
    .unwrap();
    let mut d = Driver::new(&header, None).unwrap();
    let produce = json!({"produce": {"topic": "orders", "partition": 1, "records": [{"value": "x"}, {"value": "y"}]}});
    assert_eq!(act(&mut d, produce), Outcome::Ok);
    let join = |member: &str| json!({"join_group": {"group": "g", "member": member, "topics": ["orders"]}});
    assert_eq!(act(&mut d, join("m1")), Outcome::Ok);
    assert_eq!(act(&mut d, sync("m1", 1)), Outcome::Ok);
    assert_eq!(act(&mut d, join("m2")), Outcome::Ok);
    assert_eq!(
        d.events().newest(1)[0].text,
        "join_group: ok; m2 joined g: g is rebalancing: it waits for m1 to rejoin (the rebalance ends by 10000 ms)"
    );
    assert_eq!(act(&mut d, join("m1")), Outcome::Ok);
    assert_eq!(act(&mut d, sync("m2", 2)), Outcome::Ok);
    assert_eq!(
        d.events().newest(1)[0].text,
        "sync_group: ok; m2 synced generation 2: it waits for leader m1's assignment"
    );
    assert_eq!(act(&mut d, sync("m1", 2)), Outcome::Ok);
    let said = &d.events().newest(1)[0];
    assert_eq!(
        said.text,
        "sync_group: ok; m1 (leader) assigned generation 2 by Kafka's RangeAssignor: m1 owns orders-0; m2 owns orders-1; m2's waiting sync answered"
    );
    assert!(
        said.zh
            .contains("m1（leader）用 Kafka 的 RangeAssignor 分配第 2 代"),
        "{}",
        said.zh
    );
    let g = &Snapshot::of(&d).groups[0];
    assert_eq!(
        (g.state.as_str(), g.leader.as_deref()),
        ("stable", Some("m1"))
    );
    // m2's client took the assignment its waiting sync was answered with.
    assert_eq!(g.members[1].client_generation, Some(2));
    assert_eq!(
        act(&mut d, json!({"poll": {"group": "g", "member": "m2"}})),
        Outcome::Ok
    );
    assert_eq!(
        d.events().newest(1)[0].text,
        "poll: ok; m2 read 2 records: orders-1 0..1; positions orders-1 2"
    );
}

#[test]
fn delete_group_refuses_members_and_unknown_groups_and_its_deletion_survives_a_crash() {
    let mut d = driver();
    setup(&mut d);
    let delete = json!({"delete_group": {"group": "g"}});
    assert!(
        matches!(act(&mut d, delete.clone()), Outcome::Error(e) if e.code() == "GroupNotEmpty"),
        "m1 is a member"
    );
    let commit = json!({"commit_group_offsets": {"group": "g", "member": "m1", "generation": 1,
        "offsets": [{"topic": "orders", "partition": 1, "offset": 1}]}});
    assert_eq!(act(&mut d, commit), Outcome::Ok);
    assert_eq!(
        act(
            &mut d,
            json!({"commit_offsets": {"group": "other", "offsets": [{"topic": "orders", "partition": 0, "offset": 2}]}})
        ),
        Outcome::Ok
    );
    assert_eq!(
        act(
            &mut d,
            json!({"leave_group": {"group": "g", "member": "m1"}})
        ),
        Outcome::Ok
    );
    let before = Snapshot::of(&d);
    assert_eq!(act(&mut d, delete.clone()), Outcome::Ok);
    // What a step's changes (and an observer's refresh) say of it: the
    // group's offsets are gone, the other group's are not mentioned.
    let changes = minikafka::session::snapshot::diff::diff(&before, &Snapshot::of(&d));
    let gone: Vec<&String> = changes
        .sentences
        .iter()
        .filter(|s| s.contains("gone"))
        .collect();
    assert_eq!(
        gone,
        ["g: its 1 committed offset(s) are gone"],
        "{:?}",
        changes.sentences
    );
    assert_eq!(
        d.events().newest(1)[0].text,
        "delete_group: ok; group g deleted with its 1 committed offset(s): a new consumer of it starts from auto.offset.reset"
    );
    let s = Snapshot::of(&d);
    assert!(
        !s.committed_offsets.contains_key("g"),
        "{:?}",
        s.committed_offsets
    );
    assert_eq!(
        s.committed_offsets["other"]["orders-0"], 2,
        "other groups stay"
    );
    assert!(s.groups.iter().all(|g| g.group != "g"), "the group is gone");
    assert!(
        matches!(act(&mut d, delete.clone()), Outcome::Error(e) if e.code() == "GroupIdNotFound"),
        "deleted: not found"
    );
    assert!(matches!(
        act(&mut d, json!({"crash": {}})),
        Outcome::Recovered(_)
    ));
    let s = Snapshot::of(&d);
    assert!(
        !s.committed_offsets.contains_key("g"),
        "offsets.json was rewritten without the group"
    );
    assert_eq!(s.committed_offsets["other"]["orders-0"], 2);
}

#[test]
fn delete_offsets_refuses_a_subscribed_topic_says_what_went_and_survives_a_crash() {
    let mut d = driver();
    setup(&mut d);
    assert_eq!(
        act(
            &mut d,
            json!({"create_topic": {"name": "audit", "partitions": 1, "replication_factor": 1}})
        ),
        Outcome::Ok
    );
    let commit = json!({"commit_group_offsets": {"group": "g", "member": "m1", "generation": 1,
        "offsets": [{"topic": "orders", "partition": 1, "offset": 1}]}});
    assert_eq!(act(&mut d, commit), Outcome::Ok);
    let audit = json!({"commit_offsets": {"group": "g", "offsets": [{"topic": "audit", "partition": 0, "offset": 3}]}});
    assert_eq!(act(&mut d, audit), Outcome::Ok);
    let delete = |partitions: serde_json::Value| json!({"delete_offsets": {"group": "g", "partitions": partitions}});
    let orders =
        delete(json!([{"topic": "orders", "partition": 0}, {"topic": "orders", "partition": 1}]));
    assert!(
        matches!(act(&mut d, orders.clone()), Outcome::Error(e) if e.code() == "GroupSubscribedToTopic"),
        "m1 subscribes to orders"
    );
    let before = Snapshot::of(&d);
    assert_eq!(
        act(&mut d, delete(json!([{"topic": "audit", "partition": 0}]))),
        Outcome::Ok
    );
    assert_eq!(
        d.events().newest(1)[0].text,
        "delete_offsets: ok; group g: committed offset(s) of audit-0 deleted: its next consumer of them starts from auto.offset.reset"
    );
    let changes = minikafka::session::snapshot::diff::diff(&before, &Snapshot::of(&d));
    let gone: Vec<&String> = changes
        .sentences
        .iter()
        .filter(|s| s.contains("gone"))
        .collect();
    assert_eq!(
        gone,
        ["g: committed offset of audit-0 is gone"],
        "{:?}",
        changes.sentences
    );
    assert_eq!(
        act(
            &mut d,
            json!({"leave_group": {"group": "g", "member": "m1"}})
        ),
        Outcome::Ok
    );
    assert_eq!(act(&mut d, orders), Outcome::Ok, "no member subscribes now");
    assert_eq!(
        d.events().newest(1)[0].text,
        "delete_offsets: ok; group g: committed offset(s) of orders-1 deleted: its next consumer of them starts from auto.offset.reset",
        "orders-0 had none"
    );
    let nope = json!({"delete_offsets": {"group": "nope", "partitions": [{"topic": "orders", "partition": 0}]}});
    assert!(matches!(act(&mut d, nope), Outcome::Error(e) if e.code() == "GroupIdNotFound"));
    assert!(matches!(
        act(&mut d, json!({"crash": {}})),
        Outcome::Recovered(_)
    ));
    let s = Snapshot::of(&d);
    assert_eq!(
        s.committed_offsets.get("g").map(|o| o.len()),
        Some(0),
        "offsets.json rewritten without them; the group stays, as Kafka's until its cleanup: {:?}",
        s.committed_offsets
    );
}
