//! DescribeConfigs through Kafka's own tools (TopicCommand, ConfigCommand:
//! `kafka-topics.sh --describe`, `kafka-configs.sh --describe`) and
//! confluent-kafka's AdminClient, against a server whose topic t was made
//! by `kafka-topics.sh --create` with cleaning configs; then the same
//! requests against Apache Kafka 4.4 for the keys a topic sets.

use crate::kafka_ref::KafkaRef;
use crate::python;
use crate::server::Server;

const TOPIC_COMMAND: &str = "org.apache.kafka.tools.TopicCommand";
const CONFIG_COMMAND: &str = "org.apache.kafka.tools.ConfigCommand";

/// The configs topic t is created with, as `--config` arguments.
const CREATED_WITH: [&str; 5] = [
    "cleanup.policy=compact",
    "delete.retention.ms=1000",
    "message.timestamp.type=LogAppendTime",
    "retention.bytes=4096",
    "retention.ms=3600000",
];

/// A tool's command line against `bootstrap`.
fn tool_args<'a>(bootstrap: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["--bootstrap-server", bootstrap];
    args.extend_from_slice(rest);
    args
}

/// `kafka-topics.sh --create` topic t: two partitions, two replicas, the
/// configs of [`CREATED_WITH`].
fn create(run: &dyn Fn(&str, &[&str]) -> String, bootstrap: &str) {
    let mut rest = vec![
        "--create",
        "--topic",
        "t",
        "--partitions",
        "2",
        "--replication-factor",
        "2",
    ];
    for c in CREATED_WITH {
        rest.extend(["--config", c]);
    }
    let out = run(TOPIC_COMMAND, &tool_args(bootstrap, &rest));
    assert!(out.contains("Created topic t."), "{out}");
}

/// ConfigCommand's lines for topic t's own (dynamic) configs.
fn dynamic_configs(run: &dyn Fn(&str, &[&str]) -> String, bootstrap: &str) -> String {
    run(
        CONFIG_COMMAND,
        &tool_args(
            bootstrap,
            &[
                "--describe",
                "--entity-type",
                "topics",
                "--entity-name",
                "t",
            ],
        ),
    )
}

#[test]
fn kafkas_tools_describe_a_topic_its_configs_and_a_broker() {
    let Some(java) = KafkaRef::java_client() else {
        return;
    };
    let mut server = Server::start(&[]);
    let boot = server.bootstrap();
    let run = |class: &str, args: &[&str]| java.run_main(class, args);
    create(&run, &boot);

    let out = run(
        TOPIC_COMMAND,
        &tool_args(&boot, &["--describe", "--topic", "t"]),
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    let (head, configs) = lines[0].split_once("\tConfigs: ").expect(&out);
    assert_eq!(head, "Topic: t\tPartitionCount: 2\tReplicationFactor: 2");
    let mut configs: Vec<&str> = configs.split(',').collect();
    configs.sort();
    // Every config not at Kafka's default: the topic's own, and the
    // server's that differ from Kafka's.
    assert_eq!(
        configs,
        [
            "cleanup.policy=compact",
            "delete.retention.ms=1000",
            "max.message.bytes=1048576",
            "message.timestamp.type=LogAppendTime",
            "retention.bytes=4096",
            "retention.ms=3600000",
            "segment.bytes=1048576",
        ],
        "{out}"
    );
    for (line, want) in lines[1..].iter().zip([
        "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2",
        "\tTopic: t\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2,3",
    ]) {
        assert!(line.starts_with(want), "{line:?} from:\n{out}");
    }

    let dynamic = dynamic_configs(&run, &boot);
    assert_eq!(
        dynamic.lines().collect::<Vec<_>>(),
        [
            "Dynamic configs for topic t are:",
            "  cleanup.policy=compact sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact, DEFAULT_CONFIG:log.cleanup.policy=delete}",
            "  delete.retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:delete.retention.ms=1000, DEFAULT_CONFIG:log.cleaner.delete.retention.ms=86400000}",
            "  message.timestamp.type=LogAppendTime sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:message.timestamp.type=LogAppendTime, DEFAULT_CONFIG:log.message.timestamp.type=CreateTime}",
            "  retention.bytes=4096 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.bytes=4096, DEFAULT_CONFIG:log.retention.bytes=-1}",
            "  retention.ms=3600000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=3600000, STATIC_BROKER_CONFIG:log.retention.ms=-1}",
        ],
        "{dynamic}"
    );
    let all = run(
        CONFIG_COMMAND,
        &tool_args(
            &boot,
            &[
                "--describe",
                "--entity-type",
                "topics",
                "--entity-name",
                "t",
                "--all",
            ],
        ),
    );
    assert!(
        all.contains("  segment.bytes=1048576 sensitive=false synonyms={STATIC_BROKER_CONFIG:log.segment.bytes=1048576, DEFAULT_CONFIG:log.segment.bytes=1073741824}"),
        "{all}"
    );
    let broker = run(
        CONFIG_COMMAND,
        &tool_args(
            &boot,
            &[
                "--describe",
                "--entity-type",
                "brokers",
                "--entity-name",
                "2",
                "--all",
            ],
        ),
    );
    for line in [
        "All configs for broker 2 are:",
        "  broker.id=2 sensitive=false synonyms={STATIC_BROKER_CONFIG:broker.id=2, DEFAULT_CONFIG:broker.id=-1}",
        "  auto.create.topics.enable=false sensitive=false",
        "  delete.topic.enable=true sensitive=false",
    ] {
        assert!(broker.contains(line), "{line:?} in:\n{broker}");
    }
    let log = server.stop();
    assert!(log.contains("DescribeConfigs v4 from client"), "{log}");
    let state = server.state();
    assert_eq!(
        crate::server::partition(&state, "t", 0)["config"],
        serde_json::json!({"cleanup_policy": "compact", "delete_retention_ms": 1000,
                           "retention_bytes": 4096, "retention_ms": 3_600_000,
                           "timestamp_type": "LogAppendTime"}),
        "the engine keeps what kafka-topics.sh --create gave"
    );
}

/// confluent-kafka's `describe_configs` lines for topic t's configs that
/// a topic sets, and Kafka's default for one it does not.
fn topic_lines(out: &str) -> Vec<&str> {
    const KEYS: [&str; 6] = [
        "cleanup.policy=",
        "delete.retention.ms=",
        "index.interval.bytes=",
        "message.timestamp.type=",
        "retention.bytes=",
        "retention.ms=",
    ];
    out.lines()
        .filter(|l| {
            l.strip_prefix("topic:t ")
                .is_some_and(|c| KEYS.iter().any(|k| c.starts_with(k)))
        })
        .collect()
}

#[test]
fn confluent_kafkas_admin_client_describes_a_topic_and_a_broker() {
    let (Some(py), Some(java)) = (python::with("confluent_kafka"), KafkaRef::java_client()) else {
        return;
    };
    let mut server = Server::start(&[]);
    let boot = server.bootstrap();
    create(
        &|class: &str, args: &[&str]| java.run_main(class, args),
        &boot,
    );
    let out = python::run(
        &py,
        "ck_describe_configs.py",
        &[
            &boot,
            "topic:t",
            "topic:nosuch",
            "topic:bad name!",
            "broker:3",
        ],
    );
    let log = server.stop();
    assert_eq!(
        topic_lines(&out),
        [
            "topic:t cleanup.policy=compact DYNAMIC_TOPIC_CONFIG rw synonyms=[DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,DEFAULT_CONFIG:log.cleanup.policy=delete]",
            "topic:t delete.retention.ms=1000 DYNAMIC_TOPIC_CONFIG rw synonyms=[DYNAMIC_TOPIC_CONFIG:delete.retention.ms=1000,DEFAULT_CONFIG:log.cleaner.delete.retention.ms=86400000]",
            "topic:t index.interval.bytes=4096 DEFAULT_CONFIG rw synonyms=[DEFAULT_CONFIG:log.index.interval.bytes=4096]",
            "topic:t message.timestamp.type=LogAppendTime DYNAMIC_TOPIC_CONFIG rw synonyms=[DYNAMIC_TOPIC_CONFIG:message.timestamp.type=LogAppendTime,DEFAULT_CONFIG:log.message.timestamp.type=CreateTime]",
            "topic:t retention.bytes=4096 DYNAMIC_TOPIC_CONFIG rw synonyms=[DYNAMIC_TOPIC_CONFIG:retention.bytes=4096,DEFAULT_CONFIG:log.retention.bytes=-1]",
            "topic:t retention.ms=3600000 DYNAMIC_TOPIC_CONFIG rw synonyms=[DYNAMIC_TOPIC_CONFIG:retention.ms=3600000,STATIC_BROKER_CONFIG:log.retention.ms=-1]",
        ],
        "{out}\n{log}"
    );
    for line in [
        "topic:t segment.bytes=1048576 STATIC_BROKER_CONFIG rw",
        "topic:nosuch error UNKNOWN_TOPIC_OR_PART",
        "topic:bad name! error TOPIC_EXCEPTION",
        "broker:3 broker.id=3 STATIC_BROKER_CONFIG read_only",
        "broker:3 min.insync.replicas=1 DEFAULT_CONFIG read_only",
    ] {
        assert!(out.contains(line), "{line:?} in:\n{out}");
    }
    // librdkafka sends a broker's resource to that broker.
    assert!(
        log.lines().any(|l| l.starts_with("mk-tui serve: broker 3 ")
            && l.ends_with("DescribeConfigs v1 from client \"rdkafka\": broker 3: 16 configs")),
        "{log}"
    );
}

/// Apache Kafka 4.4, given the same topic the same way, answers the same
/// for the configs the topic sets: ConfigCommand's lines and
/// confluent-kafka's, values, sources and synonyms alike, except that
/// serve's `retention.ms` synonyms name its own no-limit default
/// (docs/kafka-differences.md, "DescribeConfigs").
#[test]
fn apache_kafka_describes_the_topics_own_configs_as_serve_does() {
    let (Some(py), Some(java)) = (python::with("confluent_kafka"), KafkaRef::java_client()) else {
        return;
    };
    let Some(kafka) = KafkaRef::start() else {
        return;
    };
    let theirs_run = |class: &str, args: &[&str]| kafka.run_main(class, args);
    create(&theirs_run, &kafka.bootstrap);
    let mut server = Server::start(&[]);
    let boot = server.bootstrap();
    let ours_run = |class: &str, args: &[&str]| java.run_main(class, args);
    create(&ours_run, &boot);

    // What no client sends, in raw frames to broker 1 (node 1): the
    // same codes, and Kafka's own messages for a broker's id.
    let odd = [
        "4:2",
        "4:one",
        "0:x",
        "99:x",
        "2:nosuch",
        "2:bad name!",
        "2:",
        "2:t",
    ];
    let mut ours = vec![format!("127.0.0.1:{}", server.port(1))];
    ours.extend(odd.iter().map(|s| s.to_string()));
    let ours: Vec<&str> = ours.iter().map(String::as_str).collect();
    let mut theirs = vec![kafka.addr(1)];
    theirs.extend(odd.iter().map(|s| s.to_string()));
    let theirs: Vec<&str> = theirs.iter().map(String::as_str).collect();
    let codes = |out: String| -> Vec<String> {
        out.lines()
            .map(|l| {
                // Types 0 and 99: Kafka's message is its generic one for
                // a malformed request, serve's names the types it serves.
                if l.starts_with("0 ") || l.starts_with("99 ") {
                    l.split_inclusive(" 42 ").next().unwrap_or(l).to_string()
                } else {
                    l.to_string()
                }
            })
            .collect()
    };
    let ours = codes(python::run(&py, "raw_describe_configs.py", &ours));
    let theirs = codes(python::run(&py, "raw_describe_configs.py", &theirs));
    assert_eq!(ours, theirs);
    assert_eq!(
        ours[..2],
        [
            "4 '2' 42 Unexpected broker id, expected 1 or empty string, but received 2",
            "4 'one' 42 Broker id must be an integer, but it is: one",
        ]
    );

    // Kafka lists no server-wide log.retention.ms synonym: its default
    // retention is 7 days, serve's none.
    let serve_only = ", STATIC_BROKER_CONFIG:log.retention.ms=-1";
    let ours = dynamic_configs(&ours_run, &boot).replace(serve_only, "");
    let theirs = dynamic_configs(&theirs_run, &kafka.bootstrap);
    assert_eq!(ours, theirs);

    let ours = python::run(&py, "ck_describe_configs.py", &[&boot, "topic:t"]);
    let theirs = python::run(
        &py,
        "ck_describe_configs.py",
        &[&kafka.bootstrap, "topic:t"],
    );
    let ours = ours.replace(",STATIC_BROKER_CONFIG:log.retention.ms=-1", "");
    assert_eq!(
        topic_lines(&ours),
        topic_lines(&theirs),
        "serve:\n{ours}\nKafka:\n{theirs}"
    );
    server.stop();
}
