//! subscribe() through confluent-kafka and kafka-python: JoinGroup,
//! SyncGroup, Heartbeat, LeaveGroup and OffsetCommit; a second live
//! member joins and the group rebalances (group_members.rs has groups of
//! three); the committed offset is the engine's, from a `commit_offsets`
//! action of its own.

use crate::python;
use crate::server::Server;

#[test]
fn a_subscribed_confluent_kafka_consumer_commits_and_a_new_one_resumes_there() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut server = Server::start(&[]);
    let boot = server.bootstrap();
    python::run(&py, "ck_create_topic.py", &[&boot, "t", "1", "1"]);
    let out = python::run(&py, "ck_subscribe.py", &[&boot, "t", "g1"]);
    println!("{out}");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "read r0 r1 r2",
            "committed 3",
            "two members: owned 1",
            "read r3 r4",
        ],
        "{out}"
    );
    let log = server.stop();
    for line in [
        "group \"g1\": \"rdkafka-1\" joined, generation 1, protocol \"range\", its leader, 1 member(s)",
        "group \"g1\": committed t-0 = 3",
        "group \"g1\": \"rdkafka-1\": REBALANCE_IN_PROGRESS",
        "group \"g1\": \"rdkafka-1\" joined, generation 2, protocol \"range\", its leader, 2 member(s)",
        "group \"g1\": \"rdkafka-2\" joined, generation 2, protocol \"range\", leader \"rdkafka-1\"",
        "\"rdkafka-3\" joined, generation",
    ] {
        assert!(log.contains(line), "{line:?} not in the log:\n{log}");
    }
    let state = server.state();
    assert_eq!(
        state["committed_offsets"],
        serde_json::json!({"g1": {"t-0": 3}})
    );
    // A consumer's own commit is not a transaction: nothing in the
    // journal, no transaction in the state.
    assert_eq!(state["transactions"], serde_json::json!([]), "{state}");
    assert_eq!(state["journal"]["frames"], 0, "{state}");
}

#[test]
fn a_subscribed_kafka_python_consumer_commits_and_a_new_one_resumes_there() {
    let Some(py) = python::with("kafka") else {
        return;
    };
    let mut server = Server::start(&[]);
    let boot = server.bootstrap();
    if let Some(ck) = python::with("confluent_kafka") {
        python::run(&ck, "ck_create_topic.py", &[&boot, "t", "1", "1"]);
    } else {
        return;
    }
    let out = python::run(&py, "kp_subscribe.py", &[&boot, "t", "g1"]);
    println!("{out}");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        ["read r0 r1 r2", "committed 3", "read r3 r4", "committed 5"],
        "{out}"
    );
    server.stop();
    assert_eq!(
        server.state()["committed_offsets"],
        serde_json::json!({"g1": {"t-0": 5}})
    );
}
