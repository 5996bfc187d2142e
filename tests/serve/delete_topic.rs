//! DeleteTopics (API 20) through real clients: Kafka's own
//! `kafka-topics.sh --delete` (TopicCommand) and `--list`; confluent-kafka
//! deleting a topic with records and a group's commit, kill -9 and a
//! restart, the name created again empty and its group's offset gone; a
//! served recording that replays to the same topics.

use crate::kafka_ref::KafkaRef;
use crate::python;
use crate::record::state_of_recording;
use crate::server::{Server, topics};

const TOPIC_COMMAND: &str = "org.apache.kafka.tools.TopicCommand";

/// Replica directories of `topic` under a data directory.
fn replica_dirs(data: &std::path::Path, topic: &str) -> Vec<String> {
    let mut out = Vec::new();
    for broker in std::fs::read_dir(data).unwrap() {
        let broker = broker.unwrap().path();
        if !broker.is_dir() {
            continue;
        }
        for replica in std::fs::read_dir(&broker).unwrap() {
            let name = replica.unwrap().file_name().to_string_lossy().to_string();
            if name.starts_with(&format!("{topic}-")) {
                out.push(name);
            }
        }
    }
    out
}

#[test]
fn kafka_topics_delete_removes_a_topic_that_list_then_leaves_out() {
    let Some(java) = KafkaRef::java_client() else {
        return;
    };
    let mut server = Server::start(&["--rules", "kafka"]);
    let boot = server.bootstrap();
    let run = |args: &[&str]| {
        let mut all = vec!["--bootstrap-server", boot.as_str()];
        all.extend_from_slice(args);
        java.run_main(TOPIC_COMMAND, &all)
    };
    for t in ["doomed", "kept"] {
        let out = run(&[
            "--create",
            "--topic",
            t,
            "--partitions",
            "2",
            "--replication-factor",
            "2",
        ]);
        assert!(out.contains(&format!("Created topic {t}.")), "{out}");
    }
    run(&["--delete", "--topic", "doomed"]);
    let listed = run(&["--list"]);
    assert_eq!(listed.lines().collect::<Vec<_>>(), ["kept"], "{listed}");
    // A topic that does not exist: TopicCommand fails, as on Kafka.
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run(&["--delete", "--topic", "doomed"])
    }))
    .expect_err("TopicCommand fails");
    let said = refused
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(said.contains("Topic 'doomed' does not exist"), "{said}");
    server.stop();
    assert!(replica_dirs(&server.data_dir, "doomed").is_empty());
}

/// What the client was told holds across kill -9: the deleted topic
/// stays deleted (no log of it reopened), its group's committed offset
/// stays gone, and the name created again starts at offset 0.
#[test]
fn a_deletion_holds_across_kill_9_and_the_name_starts_over() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut server = Server::start_restartable(&["--rules", "kafka"]);
    let boot = server.bootstrap();
    python::run(&py, "ck_create_topic.py", &[&boot, "gone", "2", "3"]);
    let out = python::run(
        &py,
        "ck_produce.py",
        &[&boot, "gone", "1", "all", "5", "old"],
    );
    assert_eq!(out.matches("delivered").count(), 5, "{out}");
    let read = python::run(&py, "ck_group_read.py", &[&boot, "gone", "readers", "5"]);
    assert!(
        read.contains("committed 5"),
        "the group read and committed: {read}"
    );
    let deleted = python::run(&py, "ck_delete_topics.py", &[&boot, "gone"]);
    assert_eq!(deleted.trim(), "deleted gone");
    assert!(replica_dirs(&server.data_dir, "gone").is_empty());
    server.kill();
    server.restart();
    assert!(replica_dirs(&server.data_dir, "gone").is_empty());
    let again = python::run(&py, "ck_delete_topics.py", &[&boot, "gone"]);
    assert_eq!(
        again.trim(),
        "error gone UNKNOWN_TOPIC_OR_PART",
        "still deleted"
    );
    python::run(&py, "ck_create_topic.py", &[&boot, "gone", "2", "3"]);
    let out = python::run(
        &py,
        "ck_produce.py",
        &[&boot, "gone", "1", "all", "2", "new"],
    );
    assert_eq!(
        out.lines()
            .filter(|l| l.starts_with("delivered"))
            .collect::<Vec<_>>(),
        ["delivered 0", "delivered 1"],
        "the name starts over: {out}"
    );
    // The group's offset went with the old topic: it reads the new
    // records from the start (auto.offset.reset earliest).
    let read = python::run(&py, "ck_group_read.py", &[&boot, "gone", "readers", "2"]);
    assert_eq!(
        read.lines().collect::<Vec<_>>(),
        ["read new0", "read new1", "committed 2"],
        "{read}"
    );
    server.stop();
}

/// A served recording holds the deletion as a `delete_topic` step and
/// replays to the same topics and logs.
#[test]
fn a_served_deletion_is_a_step_the_recording_replays() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("served.jsonl");
    let mut server = Server::start(&["--rules", "kafka", "--record", file.to_str().unwrap()]);
    let boot = server.bootstrap();
    for (topic, prefix) in [("gone", "old"), ("kept", "k")] {
        python::run(&py, "ck_create_topic.py", &[&boot, topic, "2", "2"]);
        python::run(&py, "ck_produce.py", &[&boot, topic, "0", "1", "3", prefix]);
    }
    assert_eq!(
        python::run(&py, "ck_delete_topics.py", &[&boot, "gone"]).trim(),
        "deleted gone"
    );
    python::run(&py, "ck_create_topic.py", &[&boot, "gone", "1", "1"]);
    python::run(&py, "ck_produce.py", &[&boot, "gone", "0", "1", "1", "new"]);
    server.stop();
    let live = server.state();
    let replayed = state_of_recording(&file);
    assert_eq!(topics(&live), ["gone", "kept"]);
    // The logs (a replica's time since its last fetch is the clock's).
    let logs = |state: &serde_json::Value| -> Vec<(serde_json::Value, serde_json::Value)> {
        state["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["topic"].clone(), p["batches"].clone()))
            .collect()
    };
    assert_eq!(
        logs(&live),
        logs(&replayed),
        "the replay's logs are the live ones"
    );
    let steps = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        steps.matches(r#""delete_topic":{"name":"gone"}"#).count(),
        1,
        "{steps}"
    );
}

/// An exactly-once application's reset: a transactional producer wrote a
/// topic (after three plain records), the topic is deleted and created
/// again under its name, and the same transactional id writes it again,
/// its first batch at offset 0 and its last after three plain records, at
/// offset 4: past where the deleted topic's transaction began (3), whose
/// writes must not be read into the new topic. read_committed reads every
/// new record, before and after kill -9 and a restart (the restarted
/// server replays the whole transaction journal).
#[test]
fn a_transactional_topic_deleted_and_created_again_reads_its_new_transactions() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut server = Server::start_restartable(&["--rules", "kafka"]);
    let boot = server.bootstrap();
    python::run(&py, "ck_create_topic.py", &[&boot, "eos", "1", "3"]);
    python::run(
        &py,
        "ck_produce.py",
        &[&boot, "eos", "0", "all", "3", "before"],
    );
    let out = python::run(&py, "ck_txn_commit.py", &[&boot, "eos", "app", "old"]);
    assert_eq!(out.trim(), "committed");
    assert_eq!(
        python::run(&py, "ck_delete_topics.py", &[&boot, "eos"]).trim(),
        "deleted eos"
    );
    python::run(&py, "ck_create_topic.py", &[&boot, "eos", "1", "3"]);
    let out = python::run(
        &py,
        "ck_txn_interleaved.py",
        &[&boot, "eos", "app", "new", "3"],
    );
    assert_eq!(out.trim(), "committed");
    let read = |boot: &str| {
        python::run(
            &py,
            "ck_consume.py",
            &[boot, "eos", "0", "read_committed", "5"],
        )
        .lines()
        .filter(|l| l.starts_with("record"))
        .map(String::from)
        .collect::<Vec<_>>()
    };
    let expected = [
        "record 0 new-first",
        "record 1 plain0",
        "record 2 plain1",
        "record 3 plain2",
        "record 4 new-last",
    ];
    assert_eq!(read(&boot), expected);
    server.kill();
    server.restart();
    assert_eq!(read(&boot), expected, "after kill -9");
    server.stop();
}
