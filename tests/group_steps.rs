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
