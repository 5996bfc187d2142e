//! IncrementalAlterConfigs and AlterConfigs through real clients: Kafka's
//! own `kafka-configs.sh --alter` (ConfigCommand) setting and deleting a
//! topic's `retention.bytes`, whose effect serve's cleaner shows (the
//! earliest offset moves past the old segments); confluent-kafka's
//! `incremental_alter_configs` (SET, DELETE, INVALID_CONFIG) and
//! `alter_configs` (the whole set); a change that holds across kill -9;
//! and a served session's recording that replays to the same configs.

use serde_json::{Value, json};

use crate::kafka_ref::KafkaRef;
use crate::python;
use crate::record::state_of_recording;
use crate::server::{Server, partition};

const CONFIG_COMMAND: &str = "org.apache.kafka.tools.ConfigCommand";

/// ConfigCommand's arguments on topic `topic` of `boot`.
fn on_topic<'a>(boot: &'a str, topic: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "--bootstrap-server",
        boot,
        "--entity-type",
        "topics",
        "--entity-name",
        topic,
    ];
    args.extend_from_slice(rest);
    args
}

/// The lines `raw_alter_configs.py` prints for IncrementalAlterConfigs
/// requests of `cases` (`[resource type, name, [[key, op, value]…]]`) sent
/// in raw frames to the broker at `addr`: one per resource, code and
/// message, to compare serve's answers with Kafka 4.4's.
pub fn raw_alter_configs(py: &std::path::PathBuf, addr: &str, cases: &[Value]) -> Vec<String> {
    let mut args = vec![addr.to_string()];
    args.extend(cases.iter().map(Value::to_string));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    python::run(py, "raw_alter_configs.py", &args)
        .lines()
        .map(str::to_string)
        .collect()
}

/// The `alter_topic_config` steps of a recording, in order.
fn alter_steps(file: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|l| l["action"].get("alter_topic_config").cloned())
        .collect()
}

#[test]
fn kafka_configs_alter_sets_retention_and_the_cleaner_deletes_old_segments() {
    let (Some(py), Some(java)) = (python::with("confluent_kafka"), KafkaRef::java_client()) else {
        return;
    };
    let keep = tempfile::tempdir().unwrap();
    let (rec, served) = (
        keep.path().join("rec.jsonl"),
        keep.path().join("served.jsonl"),
    );
    // Segments of 150 bytes: each one-record batch closes the segment
    // before it, so retention has closed segments to delete.
    let header = json!({"mk_recording": 1, "title": "alter",
        "cluster": {"brokers": [1], "config": {"segment_max_bytes": 150}}});
    std::fs::write(&rec, format!("{header}\n")).unwrap();
    let mut server = Server::start(&[
        rec.to_str().unwrap(),
        "--record",
        served.to_str().unwrap(),
        "--cleaner-interval",
        "300",
    ]);
    let boot = server.bootstrap();
    python::run(&py, "ck_create_topic.py", &[&boot, "r", "1", "1"]);
    let out = python::run(&py, "ck_alter_configs.py", &[&boot, "r", "produce", "10"]);
    assert_eq!(out.trim(), "produced 10", "{out}");
    let out = python::run(&py, "ck_alter_configs.py", &[&boot, "r", "earliest"]);
    assert_eq!(
        out.trim(),
        "earliest 0 latest 10",
        "no retention yet: {out}"
    );

    let run = |args: &[&str]| java.run_main(CONFIG_COMMAND, args);
    let out = run(&on_topic(
        &boot,
        "r",
        &["--alter", "--add-config", "retention.bytes=200"],
    ));
    assert_eq!(
        out.trim(),
        "Completed updating config for topic r.",
        "{out}"
    );
    let out = run(&on_topic(&boot, "r", &["--describe"]));
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "Dynamic configs for topic r are:",
            "  retention.bytes=200 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.bytes=200, DEFAULT_CONFIG:log.retention.bytes=-1}",
        ],
        "{out}"
    );
    // The cleaner's next tick applies it: old segments go.
    let out = python::run(&py, "ck_alter_configs.py", &[&boot, "r", "earliest"]);
    let earliest: u64 = out
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect(&out);
    assert!(
        earliest > 0 && out.trim().ends_with("latest 10"),
        "{out}\n{}",
        server.log()
    );

    // A config serve does not keep, and a broker's, are refused: the tool
    // fails (exit 1) naming Kafka's exception.
    let refused = |args: &[&str]| -> String {
        let failed = std::panic::catch_unwind(|| run(args)).expect_err("the tool fails");
        failed.downcast_ref::<String>().cloned().unwrap_or_default()
    };
    let out = refused(&on_topic(
        &boot,
        "r",
        &["--alter", "--add-config", "segment.bytes=1000"],
    ));
    assert!(
        out.contains("InvalidConfigurationException: topic config segment.bytes is not supported"),
        "{out}"
    );
    let out = refused(&[
        "--bootstrap-server",
        &boot,
        "--entity-type",
        "brokers",
        "--entity-name",
        "1",
        "--alter",
        "--add-config",
        "log.retention.ms=1000",
    ]);
    assert!(
        out.contains("InvalidRequestException: Cannot update these configs dynamically"),
        "{out}"
    );
    let out = run(&on_topic(
        &boot,
        "r",
        &["--alter", "--delete-config", "retention.bytes"],
    ));
    assert_eq!(
        out.trim(),
        "Completed updating config for topic r.",
        "{out}"
    );
    let out = run(&on_topic(&boot, "r", &["--describe"]));
    assert_eq!(out.trim(), "Dynamic configs for topic r are:", "{out}");

    let log = server.stop();
    assert!(
        log.contains("IncrementalAlterConfigs v1 from client \"adminclient-1\": topic r altered"),
        "{log}"
    );
    assert_eq!(
        alter_steps(&served),
        [
            json!({"topic": "r", "config": {"retention_bytes": 200}}),
            json!({"topic": "r", "config": {}}),
        ],
        "each change a step, a refusal none"
    );
    let state = server.state();
    let replayed = state_of_recording(&served);
    assert_eq!(
        partition(&replayed, "r", 0),
        partition(&state, "r", 0),
        "the replay alters and cleans as the server did"
    );
    assert!(
        partition(&state, "r", 0).get("config").is_none(),
        "back to the book's topic: {state}"
    );
}

#[test]
fn confluent_kafka_alters_incrementally_and_whole_and_it_holds_across_kill_9() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut server = Server::start_restartable(&[]);
    let boot = server.bootstrap();
    python::run(&py, "ck_create_topic.py", &[&boot, "t", "1", "1"]);
    let out = python::run(&py, "ck_alter_configs.py", &[&boot, "t", "scenario"]);
    let unchanged = [
        "  cleanup.policy=compact DYNAMIC_TOPIC_CONFIG",
        "  delete.retention.ms=86400000 DEFAULT_CONFIG",
        "  retention.bytes=-1 DEFAULT_CONFIG",
        "  retention.ms=-1 STATIC_BROKER_CONFIG",
    ];
    let mut want = vec![
        "set ok",
        "  cleanup.policy=compact DYNAMIC_TOPIC_CONFIG",
        "  delete.retention.ms=86400000 DEFAULT_CONFIG",
        "  retention.bytes=-1 DEFAULT_CONFIG",
        "  retention.ms=60000 DYNAMIC_TOPIC_CONFIG",
        "delete ok",
    ];
    want.extend(unchanged);
    want.push("bad error INVALID_CONFIG");
    want.extend(unchanged);
    want.push("unknown error INVALID_CONFIG");
    want.extend(unchanged);
    let whole = [
        "whole ok",
        "  cleanup.policy=delete DEFAULT_CONFIG",
        "  delete.retention.ms=86400000 DEFAULT_CONFIG",
        "  retention.bytes=4096 DYNAMIC_TOPIC_CONFIG",
        "  retention.ms=-1 STATIC_BROKER_CONFIG",
    ];
    want.extend(whole);
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        want,
        "{out}\n{}",
        server.log()
    );
    server.kill();
    server.restart();
    let out = python::run(&py, "ck_describe_configs.py", &[&boot, "topic:t"]);
    for line in [
        "topic:t retention.bytes=4096 DYNAMIC_TOPIC_CONFIG rw",
        "topic:t cleanup.policy=delete DEFAULT_CONFIG rw",
    ] {
        assert!(out.contains(line), "{line:?} after kill -9 in:\n{out}");
    }
    server.stop();
    assert_eq!(
        partition(&server.state(), "t", 0)["config"],
        json!({"retention_bytes": 4096}),
        "mk-tui state shows the altered config"
    );
}

#[test]
fn kafka_pythons_alter_configs_sets_deletes_and_sends_the_whole_set() {
    let Some(py) = python::with("kafka") else {
        return;
    };
    let mut server = Server::start(&[]);
    let boot = server.bootstrap();
    let alter = |args: &[&str]| {
        let mut all = vec![boot.as_str(), "t"];
        all.extend_from_slice(args);
        python::run(&py, "kp_alter_configs.py", &all)
    };
    let out = alter(&["create"]);
    assert_eq!(out.trim(), "created t", "{out}");
    let out = alter(&["inc", "retention.ms=5000", "cleanup.policy=compact"]);
    assert_eq!(out.trim(), "t OK", "{out}");
    let out = alter(&["inc", "retention.ms=-"]);
    assert_eq!(out.trim(), "t OK", "{out}");
    let out = alter(&["inc", "retention.ms=soon"]);
    assert!(
        out.contains("[Error 40] InvalidConfigurationError: Invalid value soon for configuration retention.ms"),
        "{out}"
    );
    // kafka-python's AlterConfigs sends the topic's other dynamic configs
    // with the one given, so cleanup.policy stays.
    let out = alter(&["whole", "retention.bytes=9999"]);
    assert_eq!(out.trim(), "t OK", "{out}");
    let log = server.stop();
    for line in [
        "IncrementalAlterConfigs v1 from client \"kafka-python-3.0.12\": topic t altered",
        "IncrementalAlterConfigs v1 from client \"kafka-python-3.0.12\": t: INVALID_CONFIG",
        "AlterConfigs v2 from client \"kafka-python-3.0.12\": topic t altered",
    ] {
        assert!(log.contains(line), "{line:?} in:\n{log}");
    }
    assert_eq!(
        partition(&server.state(), "t", 0)["config"],
        json!({"cleanup_policy": "compact", "retention_bytes": 9999})
    );
}

/// Apache Kafka 4.4, given the same topic and the same alterations,
/// answers the same codes, Kafka's own messages where serve keeps them,
/// and reads the same dynamic configs afterwards (ConfigCommand's lines
/// but for serve's `log.retention.ms=-1` synonym).
#[test]
fn apache_kafka_answers_and_reads_the_same_alterations() {
    let (Some(py), Some(java)) = (python::with("confluent_kafka"), KafkaRef::java_client()) else {
        return;
    };
    let Some(kafka) = KafkaRef::start() else {
        return;
    };
    let mut server = Server::start(&[]);
    let boot = server.bootstrap();
    let ours_run = |args: &[&str]| java.run_main(CONFIG_COMMAND, args);
    let theirs_run = |args: &[&str]| kafka.run_main(CONFIG_COMMAND, args);
    python::run(&py, "ck_create_topic.py", &[&boot, "t", "1", "1"]);
    python::run(
        &py,
        "ck_create_topic.py",
        &[&kafka.bootstrap, "t", "1", "1"],
    );

    // Raw requests to broker 1 of each: codes alike, messages Kafka's.
    let cases = [
        json!([2, "t", [["retention.mss", 0, "5"]]]),
        json!([2, "t", [["retention.ms", 2, "5"]]]),
        json!([2, "t", [["retention.ms", 0, "soon"]]]),
        json!([2, "t", [["retention.ms", 0, null]]]),
        json!([2, "nosuch", [["retention.ms", 0, "5"]]]),
        json!([2, "", [["retention.ms", 0, "5"]]]),
        json!([2, "bad name!", [["retention.ms", 0, "5"]]]),
        json!([
            2,
            "t",
            [["retention.ms", 0, "5"], ["retention.ms", 1, null]]
        ]),
        json!([2, "t", [["retention.ms", 7, "5"]]]),
        json!([4, "1", [["broker.id", 0, "5"]]]),
    ];
    let ours = raw_alter_configs(&py, &format!("127.0.0.1:{}", server.port(1)), &cases);
    let theirs = raw_alter_configs(&py, &kafka.addr(1), &cases);
    assert_eq!(ours.len(), cases.len(), "{ours:?}");
    assert_eq!(theirs.len(), cases.len(), "{theirs:?}");
    // `TYPE 'NAME' CODE MESSAGE`: the names hold no quote.
    let code = |l: &str| -> String {
        let open = l.find('\'').expect(l) + 1;
        let close = open + l[open..].find('\'').expect(l) + 1;
        l[close..]
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_string()
    };
    println!("serve:\n{}\nKafka:\n{}", ours.join("\n"), theirs.join("\n"));
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(code(o), code(t), "serve: {o}\nKafka: {t}");
    }
    // Kafka's own messages, but where serve says more: a bad value's
    // reason, a bad name's, and why a broker config is refused.
    for i in [0, 1, 3, 4, 5, 7, 8] {
        assert_eq!(ours[i], theirs[i]);
    }
    for (i, kept) in [
        (
            2,
            "2 't' 40 Invalid value soon for configuration retention.ms: ",
        ),
        (
            9,
            "4 '1' 42 Cannot update these configs dynamically: [broker.id]",
        ),
    ] {
        assert!(
            ours[i].starts_with(kept) && theirs[i].starts_with(kept),
            "serve: {}\nKafka: {}",
            ours[i],
            theirs[i]
        );
    }

    // The same alterations through ConfigCommand read the same.
    for (run, b) in [
        (&ours_run as &dyn Fn(&[&str]) -> String, boot.as_str()),
        (&theirs_run, kafka.bootstrap.as_str()),
    ] {
        run(&on_topic(
            b,
            "t",
            &[
                "--alter",
                "--add-config",
                "retention.ms=60000,cleanup.policy=compact,delete.retention.ms=500",
            ],
        ));
        run(&on_topic(
            b,
            "t",
            &["--alter", "--delete-config", "delete.retention.ms"],
        ));
    }
    let serve_only = ", STATIC_BROKER_CONFIG:log.retention.ms=-1";
    let ours = ours_run(&on_topic(&boot, "t", &["--describe"])).replace(serve_only, "");
    let theirs = theirs_run(&on_topic(&kafka.bootstrap, "t", &["--describe"]));
    assert_eq!(ours, theirs);
    assert!(ours.contains("retention.ms=60000"), "{ours}");
    server.stop();
}
