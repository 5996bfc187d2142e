//! A topic's own `min.insync.replicas` through real clients: created with
//! it by confluent-kafka's `NewTopic(config=...)`, altered by its
//! `incremental_alter_configs`, read by `describe_configs`, kept across
//! kill -9; a value above the replication factor applied as the
//! replication factor, as Kafka 4.4 applies it. Then the same steps
//! against Apache Kafka 4.4 with one broker down: an acks=all produce to a
//! topic whose ISR is below its minimum answered NOT_ENOUGH_REPLICAS while
//! acks=1 is delivered, Kafka's own messages for a bad value, and
//! ConfigCommand's `--describe` of the topic alike.

use serde_json::json;

use crate::alter_configs::raw_alter_configs;
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
fn a_topics_min_isr_is_created_altered_and_kept_across_kill_9() {
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
    // 3 above the replication factor 2 is applied as 2, as Kafka 4.4
    // applies it: the full ISR takes acks=all.
    assert_eq!(produce(&py, &boot, "t", "all"), "delivered 0");
    assert_eq!(produce(&py, &boot, "t", "1"), "delivered 1");

    let alter = |args: &[&str]| -> Vec<String> {
        let mut all = vec![boot.as_str(), "t"];
        all.extend_from_slice(args);
        python::run(&py, "ck_min_isr.py", &all)
            .lines()
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        alter(&["set", "0"]),
        [
            "error INVALID_CONFIG",
            "min.insync.replicas=3 DYNAMIC_TOPIC_CONFIG"
        ]
    );
    assert_eq!(
        alter(&["set", "2"]),
        ["ok", "min.insync.replicas=2 DYNAMIC_TOPIC_CONFIG"]
    );

    server.kill();
    server.restart();
    let out = python::run(&py, "ck_describe_configs.py", &[&boot, "topic:t"]);
    assert!(
        out.contains("topic:t min.insync.replicas=2 DYNAMIC_TOPIC_CONFIG rw"),
        "after kill -9:\n{out}"
    );
    server.stop();
    assert_eq!(
        partition(&server.state(), "t", 0)["config"],
        json!({"min_insync_replicas": 2}),
        "mk-tui state shows the topic's own minimum"
    );
    server.restart();
    assert_eq!(
        alter(&["delete"]),
        ["ok", "min.insync.replicas=1 DEFAULT_CONFIG"]
    );
    server.stop();
    assert_eq!(partition(&server.state(), "t", 0).get("config"), None);
}

/// Apache Kafka 4.4 (its brokers' own minimum 2, tests/kafka-ref) and a
/// server whose cluster minimum is also 2 (so the synonyms ConfigCommand
/// prints are alike), given the same steps, answer the same: topics of
/// replication factor 3, one with min.insync.replicas 3, then one broker
/// down (Kafka's node 3 killed and fenced after the topics are made;
/// serve's broker 3 stopped by its recording before the clients come, so
/// its replicas start out of the ISR): an acks=all produce to the topic
/// refused NOT_ENOUGH_REPLICAS, acks=1 delivered, acks=all to the topic
/// without its own minimum delivered; altered to 2, acks=all delivered.
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
            + "\n"
            + &json!({"at_ms": 0, "action": {"stop_broker": {"broker": 3}}}).to_string()
            + "\n",
    )
    .unwrap();
    let mut server = Server::start(&[recording.to_str().unwrap()]);
    let boot = server.bootstrap();

    let steps = |b: &str, one_down: &dyn Fn() -> String| -> Vec<String> {
        let mut out = Vec::new();
        for (name, min) in [
            ("t", Some("3")),
            ("zero", Some("0")),
            ("word", Some("two")),
            ("plain", None),
        ] {
            let config = min.map(|m| format!("min.insync.replicas={m}"));
            let mut args = vec![b, name, "1", "3"];
            args.extend(config.as_deref());
            out.push(
                python::run(&py, "ck_create_topic.py", &args)
                    .trim()
                    .to_string(),
            );
        }
        let b = one_down();
        out.push(produce(&py, &b, "t", "all"));
        out.push(produce(&py, &b, "t", "1"));
        out.push(produce(&py, &b, "plain", "all"));
        for value in ["-1", "2"] {
            out.extend(
                python::run(&py, "ck_min_isr.py", &[&b, "t", "set", value])
                    .lines()
                    .map(str::to_string),
            );
        }
        out.push(produce(&py, &b, "t", "all"));
        out
    };
    let ours = steps(&boot, &|| boot.clone());
    let theirs = steps(&kafka.bootstrap, &|| {
        kafka.kill_and_fence(3);
        format!("{},{}", kafka.addr(1), kafka.addr(2))
    });
    assert_eq!(ours, theirs, "serve:\n{ours:#?}\nKafka:\n{theirs:#?}");
    assert_eq!(
        ours,
        [
            "created t",
            "error zero INVALID_CONFIG",
            "error word INVALID_CONFIG",
            "created plain",
            "failed NOT_ENOUGH_REPLICAS",
            "delivered 0",
            "delivered 0",
            "error INVALID_CONFIG",
            "min.insync.replicas=3 DYNAMIC_TOPIC_CONFIG",
            "ok",
            "min.insync.replicas=2 DYNAMIC_TOPIC_CONFIG",
            "delivered 1",
        ]
    );
    let alive = format!("{},{}", kafka.addr(1), kafka.addr(2));

    // Raw IncrementalAlterConfigs: Kafka's codes and messages for a bad
    // value.
    let cases = [
        json!([2, "t", [["min.insync.replicas", 0, "0"]]]),
        json!([2, "t", [["min.insync.replicas", 0, "two"]]]),
        json!([2, "t", [["min.insync.replicas", 0, "4294967296"]]]),
        json!([2, "t", [["min.insync.replicas", 2, "3"]]]),
    ];
    let ours = raw_alter_configs(&py, &format!("127.0.0.1:{}", server.port(1)), &cases);
    let theirs = raw_alter_configs(&py, &kafka.addr(1), &cases);
    assert_eq!(ours, theirs);
    assert_eq!(
        ours[..3],
        [
            "2 't' 40 Invalid value 0 for configuration min.insync.replicas: Value must be at least 1",
            "2 't' 40 Invalid value two for configuration min.insync.replicas: Not a number of type INT",
            "2 't' 40 Invalid value 4294967296 for configuration min.insync.replicas: Not a number of type INT",
        ]
    );
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
        &alive,
        &["--alter", "--add-config", "min.insync.replicas=3"],
    ));
    let ours = run_ours(on_t(&boot, &["--describe"]));
    // Kafka 4.4's controller keeps the cluster's min.insync.replicas as a
    // dynamic cluster-wide default too (eligible leader replicas, KIP-966);
    // serve has no dynamic broker configs (docs/kafka-differences.md).
    let kraft_only = ", DYNAMIC_DEFAULT_BROKER_CONFIG:min.insync.replicas=2";
    let theirs = run_theirs(on_t(&alive, &["--describe"])).replace(kraft_only, "");
    assert_eq!(ours, theirs);
    assert!(
        ours.contains("min.insync.replicas=3 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:min.insync.replicas=3, STATIC_BROKER_CONFIG:min.insync.replicas=2, DEFAULT_CONFIG:min.insync.replicas=1}"),
        "{ours}"
    );
    server.stop();
}
