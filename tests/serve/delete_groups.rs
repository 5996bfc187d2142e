//! DeleteGroups (API 42) through real clients: confluent-kafka's
//! `AdminClient.delete_consumer_groups` (each of Kafka's answers: NONE,
//! NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND), Kafka's own
//! `kafka-consumer-groups --delete`, a deletion that holds across kill -9,
//! and a served session's recording that replays to the same committed
//! offsets.

use serde_json::json;

use crate::python;
use crate::record::state_of_recording;
use crate::server::Server;

/// Topic `t` of two partitions, six records in each.
fn topic_with_records(py: &std::path::PathBuf, boot: &str) {
    python::run(py, "ck_create_topic.py", &[boot, "t", "2", "1"]);
    for p in ["0", "1"] {
        let out = python::run(py, "ck_produce.py", &[boot, "t", p, "1", "6", "v"]);
        assert_eq!(out.matches("delivered").count(), 6, "{out}");
    }
}

#[test]
fn delete_consumer_groups_deletes_an_empty_group_refuses_a_live_one_and_replays() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("served.jsonl");
    let mut server = Server::start(&["--rules", "kafka", "--record", file.to_str().unwrap()]);
    let boot = server.bootstrap();
    topic_with_records(&py, &boot);
    let said = python::run(&py, "ck_delete_groups.py", &[&boot, "t", "scenario"]);
    let lines: Vec<&str> = said.lines().collect();
    assert_eq!(
        lines,
        [
            "done read 12",
            "live assigned 2",
            "deleted done",
            "error live NON_EMPTY_GROUP",
            "error nope GROUP_ID_NOT_FOUND",
            "offsets done: none",
            "listed live",
            "live closed",
        ],
        "{said}\n{}",
        server.log()
    );
    // Kafka's own tool deletes `live` now that its member left.
    if let Some(java) = crate::kafka_ref::KafkaRef::java_client() {
        let printed = java.run_main(
            "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
            &["--bootstrap-server", &boot, "--delete", "--group", "live"],
        );
        assert_eq!(
            printed.trim(),
            "Deletion of requested consumer groups ('live') was successful.",
            "{printed}"
        );
    }
    let log = server.stop();
    assert!(
        log.contains("DeleteGroups v2 from client \"rdkafka\": \"done\": deleted"),
        "{log}"
    );
    let left = server.state();
    let text = std::fs::read_to_string(&file).unwrap();
    let deleted: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter_map(|l| l["action"].get("delete_group").cloned())
        .collect();
    assert_eq!(
        deleted,
        [json!({"group": "done"}), json!({"group": "live"})],
        "each deletion is a step, a refusal none: {text}"
    );
    assert_eq!(
        state_of_recording(&file)["committed_offsets"],
        left["committed_offsets"],
        "the replay deletes what the server deleted"
    );
    assert!(
        left["committed_offsets"].get("done").is_none(),
        "{}",
        left["committed_offsets"]
    );
}

#[test]
fn a_deletion_holds_across_kill_9_and_a_new_member_starts_from_the_reset() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut server = Server::start_restartable(&[]);
    let boot = server.bootstrap();
    topic_with_records(&py, &boot);
    // `g` reads all twelve and commits; a new member reads nothing more.
    let first = python::run(&py, "ck_delete_groups.py", &[&boot, "t", "scenario"]);
    assert!(first.contains("deleted done"), "{first}");
    let again = python::run(&py, "ck_delete_groups.py", &[&boot, "t", "read", "live"]);
    assert_eq!(
        again.trim(),
        "read 10 from 1",
        "live committed 1 on each partition"
    );
    server.kill();
    server.restart();
    let read = python::run(&py, "ck_delete_groups.py", &[&boot, "t", "read", "done"]);
    assert_eq!(
        read.trim(),
        "read 12 from 0",
        "done's offsets stay deleted: earliest, from 0"
    );
    let read = python::run(&py, "ck_delete_groups.py", &[&boot, "t", "read", "live"]);
    assert_eq!(read.trim(), "read 10 from 1", "live's offsets stay");
    server.stop();
    let committed = &server.state()["committed_offsets"];
    assert!(committed.get("done").is_none(), "{committed}");
    assert_eq!(committed["live"]["t-0"], 1, "{committed}");
}
