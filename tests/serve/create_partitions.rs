//! CreatePartitions (API 37) through real clients: Kafka's own
//! `kafka-topics.sh --alter --partitions` (TopicCommand) and its
//! `--describe`, confluent-kafka's `AdminClient.create_partitions` (each
//! of Kafka's refusals, `validate_only`), a consumer group that takes the
//! new partitions after its metadata refresh, a growth that holds across
//! kill -9, and a served recording that replays to the same partitions.

use serde_json::json;

use crate::kafka_ref::KafkaRef;
use crate::python;
use crate::record::state_of_recording;
use crate::server::{Server, partition};

const TOPIC_COMMAND: &str = "org.apache.kafka.tools.TopicCommand";

/// Each partition of `topic` in a state: (partition, leader, replicas).
fn placement(state: &serde_json::Value, topic: &str) -> Vec<(u64, u64, Vec<u64>)> {
    state["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["topic"] == topic)
        .map(|p| {
            let replicas = p["replicas"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["broker"].as_u64().unwrap())
                .collect();
            (
                p["partition"].as_u64().unwrap(),
                p["leader"].as_u64().unwrap(),
                replicas,
            )
        })
        .collect()
}

#[test]
fn confluent_kafka_grows_a_topic_its_group_takes_the_new_partitions_and_the_recording_replays() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("served.jsonl");
    // The book's rules (serve's default) accept the growth too.
    let mut server = Server::start(&["--record", file.to_str().unwrap()]);
    let boot = server.bootstrap();
    let made = python::run(&py, "ck_create_topic.py", &[&boot, "t", "3", "2"]);
    assert_eq!(made.trim(), "created t", "{made}");
    let said = python::run(&py, "ck_create_partitions.py", &[&boot, "group", "t", "4"]);
    assert_eq!(
        said.lines().collect::<Vec<_>>(),
        ["assigned 3", "grown t 4", "reassigned 4", "read 3 0 new"],
        "{said}\n{}",
        server.log()
    );
    let grow = |args: &[&str]| {
        let mut all = vec![boot.as_str(), "grow"];
        all.extend_from_slice(args);
        python::run(&py, "ck_create_partitions.py", &all)
            .trim()
            .to_string()
    };
    assert_eq!(
        grow(&["t", "2"]),
        "error t INVALID_PARTITIONS The topic t currently has 4 partition(s); 2 would not be an increase."
    );
    assert_eq!(
        grow(&["t", "4"]),
        "error t INVALID_PARTITIONS Topic already has 4 partition(s)."
    );
    assert!(
        grow(&["nope", "4"]).starts_with("error nope UNKNOWN_TOPIC_OR_PART"),
        "{}",
        grow(&["nope", "4"])
    );
    assert_eq!(grow(&["t", "8", "validate"]), "grown t 8");
    assert_eq!(grow(&["t", "5"]), "grown t 5", "validate_only grew nothing");
    server.stop();
    let left = server.state();
    let text = std::fs::read_to_string(&file).unwrap();
    let grown: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter_map(|l| l["action"].get("create_partitions").cloned())
        .collect();
    assert_eq!(
        grown,
        [
            json!({"topic": "t", "count": 4}),
            json!({"topic": "t", "count": 5})
        ],
        "each growth is a step, a refusal or a validation none: {text}"
    );
    let replayed = state_of_recording(&file);
    assert_eq!(placement(&left, "t").len(), 5);
    assert_eq!(placement(&replayed, "t"), placement(&left, "t"));
    assert_eq!(
        partition(&replayed, "t", 3)["log_end_offset"],
        1,
        "the record the producer wrote to the new partition"
    );
}

#[test]
fn kafka_topics_alter_grows_a_topic_describe_lists_it_and_a_smaller_count_is_refused() {
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
    let out = run(&[
        "--create",
        "--topic",
        "t",
        "--partitions",
        "2",
        "--replication-factor",
        "2",
    ]);
    assert!(out.contains("Created topic t."), "{out}");
    run(&["--alter", "--topic", "t", "--partitions", "4"]);
    let out = run(&["--describe", "--topic", "t"]);
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.trim_start().starts_with("Topic: t\tPartition:"))
        .collect();
    assert_eq!(rows.len(), 4, "{out}");
    for (p, row) in rows.iter().enumerate() {
        let fields: Vec<&str> = row.trim().split('\t').map(str::trim).collect();
        assert_eq!(fields[1], format!("Partition: {p}"), "{out}");
        // Placed as CreateTopics places partitions of these numbers: the
        // replicas from broker index p, the first the leader, all in sync.
        let first = 1 + p % 3;
        let second = 1 + (p + 1) % 3;
        assert_eq!(fields[2], format!("Leader: {first}"), "{out}");
        assert_eq!(fields[3], format!("Replicas: {first},{second}"), "{out}");
        let isr = format!("Isr: {},{}", first.min(second), first.max(second));
        assert_eq!(fields[4], isr, "{out}");
    }
    // A smaller count: TopicCommand exits non-zero with Kafka's message.
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run(&["--alter", "--topic", "t", "--partitions", "3"])
    }))
    .expect_err("TopicCommand fails");
    let said = refused
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        said.contains("The topic t currently has 4 partition(s); 3 would not be an increase."),
        "{said}"
    );
    server.stop();
}

#[test]
fn a_growth_holds_across_kill_9_with_the_new_partitions_records() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut server = Server::start_restartable(&["--rules", "kafka"]);
    let boot = server.bootstrap();
    python::run(&py, "ck_create_topic.py", &[&boot, "t", "1", "3"]);
    let grown = python::run(&py, "ck_create_partitions.py", &[&boot, "grow", "t", "3"]);
    assert_eq!(grown.trim(), "grown t 3");
    let out = python::run(&py, "ck_produce.py", &[&boot, "t", "2", "all", "5", "v"]);
    assert_eq!(out.matches("delivered").count(), 5, "{out}");
    server.kill();
    server.restart();
    let read = python::run(
        &py,
        "ck_consume.py",
        &[&boot, "t", "2", "read_committed", "5"],
    );
    assert!(read.contains("v4"), "{read}");
    let again = python::run(&py, "ck_create_partitions.py", &[&boot, "grow", "t", "3"]);
    assert_eq!(
        again.trim(),
        "error t INVALID_PARTITIONS Topic already has 3 partition(s).",
        "the count held"
    );
    server.stop();
    let state = server.state();
    assert_eq!(placement(&state, "t").len(), 3);
    assert_eq!(partition(&state, "t", 2)["log_end_offset"], 5);
}

/// confluent-kafka's answers of serve and of Apache Kafka 4.4 to the same
/// growths and refusals: equal, codes and messages.
#[test]
fn serve_answers_create_partitions_as_kafka_4_4() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let Some(kafka) = KafkaRef::start() else {
        return;
    };
    let mut server = Server::start(&["--rules", "kafka"]);
    let answers = |boot: &str| -> Vec<String> {
        let made = python::run(&py, "ck_create_topic.py", &[boot, "t", "2", "2"]);
        assert_eq!(made.trim(), "created t", "{made}");
        let grow = |args: &[&str]| {
            let mut all = vec![boot, "grow"];
            all.extend_from_slice(args);
            python::run(&py, "ck_create_partitions.py", &all)
                .trim()
                .to_string()
        };
        vec![
            grow(&["t", "2"]),
            grow(&["t", "1"]),
            grow(&["nope", "3"]),
            grow(&["t", "5", "validate"]),
            grow(&["t", "3"]),
            grow(&["t", "3"]),
        ]
    };
    let served = answers(&server.bootstrap());
    let kafkas = answers(&kafka.bootstrap);
    assert_eq!(served, kafkas, "{}", server.log());
    // A name given twice, in raw frames (confluent-kafka refuses it
    // itself): the same results, in the same order.
    let raw = |port: u16| raw_duplicates(port);
    let raw_served = raw(server.port(1));
    assert_eq!(raw_served, raw(kafka.ports[0]), "{}", server.log());
    assert_eq!(
        raw_served[0],
        ("t".into(), 42, Some("Duplicate topic name.".into())),
        "{raw_served:?}"
    );
    assert_eq!(
        served[..2],
        [
            "error t INVALID_PARTITIONS Topic already has 2 partition(s).",
            "error t INVALID_PARTITIONS The topic t currently has 2 partition(s); 1 would not be an increase."
        ]
    );
    assert_eq!(
        served[4..],
        [
            "grown t 3",
            "error t INVALID_PARTITIONS Topic already has 3 partition(s)."
        ],
        "validate_only grew nothing"
    );
    server.stop();
}

/// CreatePartitions v3 of t twice and `nope` once, in a raw frame: each
/// result's topic, code and message, in the response's order.
fn raw_duplicates(port: u16) -> Vec<(String, i16, Option<String>)> {
    use kafka_protocol::messages::CreatePartitionsRequest;
    use kafka_protocol::messages::TopicName;
    use kafka_protocol::messages::create_partitions_request::CreatePartitionsTopic;
    use kafka_protocol::protocol::StrBytes;

    let topic = |name: &str, count: i32| {
        CreatePartitionsTopic::default()
            .with_name(TopicName(StrBytes::from_string(name.into())))
            .with_count(count)
            .with_assignments(None)
    };
    let request = CreatePartitionsRequest::default()
        .with_topics(vec![topic("t", 4), topic("nope", 2), topic("t", 5)])
        .with_timeout_ms(15_000);
    let mut conn = crate::wire::Conn::connect(port, "raw");
    let response = conn.call(&request, 3).expect("an answer");
    response
        .results
        .iter()
        .map(|r| {
            (
                r.name.0.to_string(),
                r.error_code,
                r.error_message.as_ref().map(|m| m.to_string()),
            )
        })
        .collect()
}
