//! A topic's own `min.insync.replicas` through real clients: created with
//! it by confluent-kafka's `NewTopic(config=...)`, altered by its
//! `incremental_alter_configs`, read by `describe_configs`; an acks=all
//! produce to a topic whose ISR (2, its replication factor) is below its
//! minimum (3) answered NOT_ENOUGH_REPLICAS while acks=1 is delivered;
//! kept across kill -9. Then the same steps against Apache Kafka 4.4: the
//! same answers, Kafka's own messages for a bad value, and ConfigCommand's
//! `--describe` of the topic alike. (A served broker cannot be stopped by
//! a client, so a minimum above the replication factor is what brings the
//! ISR below it; Kafka takes such a value too.)

use serde_json::json;

use crate::kafka_ref::KafkaRef;
use crate::python;
use crate::server::{Server, partition};

const CONFIG_COMMAND: &str = "org.apache.kafka.tools.ConfigCommand";

/// One acks=`acks` record to partition 0 of `topic`: `delivered N` or
/// `failed CODE`.
fn produce(py: &std::path::PathBuf, boot: &str, topic: &str, acks: &str) -> String {
    let out = python::run(
        py,
        "ck_produce.py",
        &[boot, topic, "0", acks, "1", "v", "10000"],
    );
    out.lines().next().unwrap_or("").to_string()
}

#[test]
fn a_topics_min_isr_refuses_acks_all_until_altered_and_holds_across_kill_9() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut server = Server::start_restartable(&[]);
    let boot = server.bootstrap();
    let create = |name: &str, min: &str| {
        let config = format!("min.insync.replicas={min}");
        python::run(&py, "ck_create_topic.py", &[&boot, name, "1", "2", &config])
    };
    assert_eq!(create("t", "3").trim(), "created t");
    assert_eq!(create("zero", "0").trim(), "error zero INVALID_CONFIG");
    assert_eq!(create("word", "two").trim(), "error word INVALID_CONFIG");
    python::run(&py, "ck_create_topic.py", &[&boot, "plain", "1", "2"]);

    assert_eq!(
        produce(&py, &boot, "t", "all"),
        "failed NOT_ENOUGH_REPLICAS"
    );
    assert_eq!(produce(&py, &boot, "t", "1"), "delivered 0");
    // serve's own minimum is 1: the topic without one takes acks=all.
    assert_eq!(produce(&py, &boot, "plain", "all"), "delivered 0");

    let alter = |topic: &str, args: &[&str]| -> Vec<String> {
        let mut all = vec![boot.as_str(), topic];
        all.extend_from_slice(args);
        python::run(&py, "ck_min_isr.py", &all)
            .lines()
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        alter("t", &["set", "0"]),
        [
            "error INVALID_CONFIG",
            "min.insync.replicas=3 DYNAMIC_TOPIC_CONFIG"
        ]
    );
    assert_eq!(
        alter("t", &["set", "2"]),
        ["ok", "min.insync.replicas=2 DYNAMIC_TOPIC_CONFIG"]
    );
    assert_eq!(produce(&py, &boot, "t", "all"), "delivered 1");
    assert_eq!(
        alter("plain", &["set", "3"]),
        ["ok", "min.insync.replicas=3 DYNAMIC_TOPIC_CONFIG"]
    );
    assert_eq!(
        produce(&py, &boot, "plain", "all"),
        "failed NOT_ENOUGH_REPLICAS"
    );

    server.kill();
    server.restart();
    assert_eq!(
        produce(&py, &boot, "plain", "all"),
        "failed NOT_ENOUGH_REPLICAS"
    );
    assert_eq!(produce(&py, &boot, "t", "all"), "delivered 2");
    assert_eq!(
        alter("plain", &["delete"]),
        ["ok", "min.insync.replicas=1 DEFAULT_CONFIG"]
    );
    assert_eq!(produce(&py, &boot, "plain", "all"), "delivered 1");
    server.stop();
    let state = server.state();
    assert_eq!(
        partition(&state, "t", 0)["config"],
        json!({"min_insync_replicas": 2}),
        "mk-tui state shows the topic's own minimum"
    );
    assert_eq!(partition(&state, "plain", 0).get("config"), None);
}

/// Apache Kafka 4.4 (its brokers' own minimum 2, tests/kafka-ref), given
/// the same steps against a server whose cluster minimum is also 2 (so the
/// synonyms ConfigCommand prints are alike), answers the same.
#[test]
fn apache_kafka_answers_a_topics_min_isr_as_serve_does() {
    let (Some(py), Some(java)) = (python::with("confluent_kafka"), KafkaRef::java_client()) else {
        return;
    };
    let Some(kafka) = KafkaRef::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let recording = dir.path().join("min2.jsonl");
    std::fs::write(
        &recording,
        json!({"mk_recording": 1, "title": "min ISR 2", "rules": "kafka",
            "cluster": {"brokers": [1, 2, 3], "topics": [],
                "config": {"min_insync_replicas": 2}}})
        .to_string()
            + "\n",
    )
    .unwrap();
    let mut server = Server::start(&[recording.to_str().unwrap()]);
    let boot = server.bootstrap();

    let steps = |b: &str| -> Vec<String> {
        let mut out = Vec::new();
        for (name, min) in [("t", "3"), ("zero", "0"), ("word", "two")] {
            let config = format!("min.insync.replicas={min}");
            out.push(python::run(
                &py,
                "ck_create_topic.py",
                &[b, name, "1", "2", &config],
            ));
        }
        out.push(produce(&py, b, "t", "all"));
        out.push(produce(&py, b, "t", "1"));
        out.extend(
            python::run(&py, "ck_min_isr.py", &[b, "t", "set", "-1"])
                .lines()
                .map(str::to_string),
        );
        out
    };
    let ours = steps(&boot);
    let theirs = steps(&kafka.bootstrap);
    assert_eq!(ours, theirs, "serve:\n{ours:#?}\nKafka:\n{theirs:#?}");
    assert_eq!(ours[3], "failed NOT_ENOUGH_REPLICAS");
    assert_eq!(ours[4], "delivered 0");

    // Raw IncrementalAlterConfigs: Kafka's codes and messages for a bad
    // value.
    let cases = [
        json!([2, "t", [["min.insync.replicas", 0, "0"]]]),
        json!([2, "t", [["min.insync.replicas", 0, "two"]]]),
        json!([2, "t", [["min.insync.replicas", 0, "4294967296"]]]),
        json!([2, "t", [["min.insync.replicas", 2, "3"]]]),
    ];
    let raw = |addr: String| -> Vec<String> {
        let mut args = vec![addr];
        args.extend(cases.iter().map(|c| c.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        python::run(&py, "raw_alter_configs.py", &args)
            .lines()
            .map(str::to_string)
            .collect()
    };
    let ours = raw(format!("127.0.0.1:{}", server.port(1)));
    let theirs = raw(kafka.addr(1));
    assert_eq!(ours, theirs);
    assert_eq!(ours.len(), cases.len());

    // ConfigCommand's --describe of the topic, after the same --alter.
    let on_t = |b: &str, rest: &[&str]| -> Vec<String> {
        let mut args = vec![
            "--bootstrap-server".to_string(),
            b.to_string(),
            "--entity-type".into(),
            "topics".into(),
            "--entity-name".into(),
            "t".into(),
        ];
        args.extend(rest.iter().map(|s| s.to_string()));
        args
    };
    let run_ours = |args: Vec<String>| {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        java.run_main(CONFIG_COMMAND, &a)
    };
    let run_theirs = |args: Vec<String>| {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        kafka.run_main(CONFIG_COMMAND, &a)
    };
    run_ours(on_t(
        &boot,
        &["--alter", "--add-config", "min.insync.replicas=3"],
    ));
    run_theirs(on_t(
        &kafka.bootstrap,
        &["--alter", "--add-config", "min.insync.replicas=3"],
    ));
    let ours = run_ours(on_t(&boot, &["--describe"]));
    let theirs = run_theirs(on_t(&kafka.bootstrap, &["--describe"]));
    assert_eq!(ours, theirs);
    assert!(
        ours.contains("min.insync.replicas=3 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:min.insync.replicas=3, STATIC_BROKER_CONFIG:min.insync.replicas=2, DEFAULT_CONFIG:min.insync.replicas=1}"),
        "{ours}"
    );
    server.stop();
}
