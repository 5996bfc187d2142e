//! The Kafka differential (issue 23): every scenario of
//! tests/clients/kd_scenarios.py runs against Apache Kafka 4.4 (three
//! KRaft nodes, tests/common/kafka_ref.rs) and against `mk-tui serve
//! --rules kafka` (three brokers, `min.insync.replicas` 2 as Kafka's
//! reference cluster has it) with the same confluent-kafka client, and
//! their normalised observables are compared path by path; so are those
//! of tests/kafka-ref/java/DiffScenarios.java, on Kafka's own Java client.
//!
//! Every place where they part must be in the table of known differences
//! (tests/kafka_differential/known.rs, explained in
//! docs/kafka-differences.md), and every entry of that table must still be
//! met: a new difference fails the test, and so does one that went away,
//! so whoever fixes one updates the table and the doc.

#[allow(dead_code)]
#[path = "common/kafka_ref.rs"]
mod kafka_ref;
#[allow(dead_code)]
#[path = "serve/python.rs"]
mod python;
#[allow(dead_code)]
#[path = "serve/server.rs"]
mod server;

#[path = "kafka_differential/diff.rs"]
mod diff;
#[path = "kafka_differential/known.rs"]
mod known;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use diff::{Difference, differences, parse_side, path_matches, scenario_matches, show};
use kafka_ref::KafkaRef;
use server::Server;

/// Scenarios run at once (each on both clusters): the machine's cores are
/// shared, and Kafka's nodes need theirs.
const PARALLEL: usize = 3;

/// The header of the recording `serve` starts from: the kafka rules and
/// three brokers with `min.insync.replicas` 2, as tests/kafka-ref/start.sh
/// configures Kafka.
const SERVE_CLUSTER: &str = r#"{"mk_recording":1,"title":"Kafka differential: three brokers, min.insync.replicas 2","rules":"kafka","cluster":{"brokers":[1,2,3],"topics":[],"config":{"min_insync_replicas":2}}}"#;

fn scenarios(py: &PathBuf) -> Vec<String> {
    python::run(py, "kd_scenarios.py", &["list"])
        .lines()
        .map(str::to_string)
        .collect()
}

/// Runs `name` on one cluster; its JSON document.
fn observe(py: &PathBuf, boot: &str, name: &str, tag: &str) -> serde_json::Value {
    let out = python::run(py, "kd_scenarios.py", &[boot, name, tag]);
    serde_json::from_str(out.trim())
        .unwrap_or_else(|e| panic!("{name} on {boot}: not one JSON document ({e}):\n{out}"))
}

/// Every scenario on both clusters, `PARALLEL` at a time: name ->
/// (Kafka's document, serve's document).
fn run_all(
    py: &PathBuf,
    kafka: &str,
    serve: &str,
    names: &[String],
) -> BTreeMap<String, (serde_json::Value, serde_json::Value)> {
    let queue = Mutex::new(names.iter().enumerate().collect::<Vec<_>>());
    let results = Mutex::new(BTreeMap::new());
    std::thread::scope(|s| {
        for _ in 0..PARALLEL {
            s.spawn(|| {
                loop {
                    let Some((i, name)) = queue.lock().unwrap().pop() else {
                        return;
                    };
                    // Both clusters at once; the tag keeps topics, groups
                    // and transactional ids apart between scenarios.
                    let tag = format!("kd{i}");
                    let (k, v) = std::thread::scope(|s2| {
                        let k = s2.spawn(|| observe(py, kafka, name, &tag));
                        let v = observe(py, serve, name, &tag);
                        (k.join().unwrap(), v)
                    });
                    results.lock().unwrap().insert(name.clone(), (k, v));
                }
            });
        }
    });
    results.into_inner().unwrap()
}

/// The recording of the `serve` that has a broker stopped: TAG-all (RF 3)
/// and TAG-two (RF 2, replicas 1 and 2), broker 2 stopped and the clock
/// moved past `replica_lag_time_ms`, so TAG-two's ISR is broker 1 alone,
/// as Kafka's is once its follower is killed and the lag time passes.
fn broker_down_recording(tag: &str) -> String {
    let header = SERVE_CLUSTER.replace(
        r#""topics":[]"#,
        &format!(
            r#""topics":[{{"name":"{tag}-all","partitions":1,"replication_factor":3}},{{"name":"{tag}-two","partitions":1,"replication_factor":2}}]"#
        ),
    );
    format!(
        "{header}\n{}\n{}\n",
        r#"{"at_ms":0,"action":{"stop_broker":{"broker":2}}}"#,
        r#"{"at_ms":0,"action":{"advance_clock":{"ms":20000}}}"#
    )
}

/// acks=all and acks=1 with a broker stopped: on Kafka the follower that
/// broker_down_setup names is killed (SIGKILL); serve starts with its
/// broker 2 stopped. Runs after the other scenarios, which it would
/// disturb. (Kafka's document, serve's document.)
fn broker_down(py: &PathBuf, kafka: &KafkaRef) -> (serde_json::Value, serde_json::Value) {
    let tag = "kddown";
    let setup = observe(py, &kafka.bootstrap, "broker_down_setup", tag);
    let node = setup["stop"].as_u64().expect("a broker id to stop") as u32;
    kafka.kill(node);
    let k = observe(py, &kafka.bootstrap, "broker_down", tag);
    let recording = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(recording.path(), broker_down_recording(tag)).unwrap();
    let mut serve = Server::start(&[recording.path().to_str().unwrap()]);
    let s = observe(py, &serve.bootstrap(), "broker_down", tag);
    serve.stop();
    (k, s)
}

/// tests/kafka-ref/java/DiffScenarios.java on one cluster: name ->
/// document, one per line `NAME<TAB>JSON`.
fn java_scenarios(kafka: &KafkaRef, boot: &str) -> BTreeMap<String, serde_json::Value> {
    kafka
        .java("DiffScenarios.java", &[boot, "kdjava"])
        .lines()
        .map(|line| {
            let (name, json) = line
                .split_once('\t')
                .unwrap_or_else(|| panic!("DiffScenarios.java: {line:?} is not NAME<TAB>JSON"));
            let doc = serde_json::from_str(json)
                .unwrap_or_else(|e| panic!("DiffScenarios.java {name}: {e}: {json}"));
            (name.to_string(), doc)
        })
        .collect()
}

/// tests/kafka-ref/java/TxnVersion.java on one cluster: the transaction
/// protocol Kafka's Java client speaks there and what it sees of it
/// (epochs after each end, a zombie's error, what read_committed reads).
fn txn_version_doc(kafka: &KafkaRef, boot: &str, tag: &str) -> serde_json::Value {
    let out = kafka.java("TxnVersion.java", &[boot, tag, tag]);
    // The client logs its errors on standard output too: the document is
    // the last line.
    let last = out.lines().rfind(|l| l.starts_with('{')).unwrap_or("");
    serde_json::from_str(last).unwrap_or_else(|e| panic!("TxnVersion.java on {boot}: {e}: {out}"))
}

/// Transaction versions 2 and 1 (KIP-890): TxnVersion.java on Kafka,
/// which finalizes `transaction.version` 2, and on `serve
/// --transaction-version 2`; then on Kafka with the feature downgraded to
/// 1 (Features.java, as `kafka-features.sh downgrade` does) and on serve's
/// default, 1. Runs after the other Java scenarios, which the downgrade
/// would disturb. (name, (Kafka's document, serve's document)).
fn txn_versions(
    kafka: &KafkaRef,
    recording: &std::path::Path,
) -> Vec<(String, (serde_json::Value, serde_json::Value))> {
    let mut out = Vec::new();
    for version in [2, 1] {
        let features = kafka.java(
            "Features.java",
            &[
                &kafka.bootstrap,
                "transaction.version",
                &version.to_string(),
            ],
        );
        assert_eq!(features.trim(), format!("transaction.version {version}"));
        let mut serve = Server::start(&[
            recording.to_str().unwrap(),
            "--transaction-version",
            &version.to_string(),
        ]);
        let tag = format!("kdtv{version}");
        let k = txn_version_doc(kafka, &kafka.bootstrap, &tag);
        let s = txn_version_doc(kafka, &serve.bootstrap(), &tag);
        serve.stop();
        out.push((format!("java_txn_version_{version}"), (k, s)));
    }
    out
}

fn matches(k: &known::Known, scenario: &str, d: &Difference) -> bool {
    scenario_matches(k.scenario, scenario)
        && path_matches(k.path, &d.path)
        && parse_side(k.kafka) == d.kafka
        && parse_side(k.serve) == d.serve
}

#[test]
fn serve_with_kafka_rules_answers_real_clients_as_apache_kafka_does_or_as_documented() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let Some(kafka) = KafkaRef::start() else {
        return;
    };
    let recording = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(recording.path(), format!("{SERVE_CLUSTER}\n")).unwrap();
    let mut serve = Server::start(&[recording.path().to_str().unwrap()]);
    let mut names = scenarios(&py);
    let started = std::time::Instant::now();
    // Kafka's Java client on both clusters while the Python scenarios run.
    let (mut docs, java) = std::thread::scope(|s| {
        let java = s.spawn(|| {
            let (k, v) = std::thread::scope(|s2| {
                let k = s2.spawn(|| java_scenarios(&kafka, &kafka.bootstrap));
                let v = java_scenarios(&kafka, &serve.bootstrap());
                (k.join().unwrap(), v)
            });
            k.into_iter()
                .map(|(name, doc)| {
                    // A scenario Kafka itself fails is a broken scenario,
                    // not something serve could agree with.
                    assert!(
                        doc.get("unexpected").is_none(),
                        "DiffScenarios.java {name} failed on Apache Kafka: {doc}"
                    );
                    let other = v.get(&name).cloned().unwrap_or_default();
                    (name, (doc, other))
                })
                .collect::<Vec<_>>()
        });
        let docs = run_all(&py, &kafka.bootstrap, &serve.bootstrap(), &names);
        (docs, java.join().unwrap())
    });
    for (name, pair) in java {
        names.push(name.clone());
        docs.insert(name, pair);
    }
    serve.stop();
    for (name, pair) in txn_versions(&kafka, recording.path()) {
        names.push(name.clone());
        docs.insert(name, pair);
    }
    docs.insert("broker_down".into(), broker_down(&py, &kafka));
    names.push("broker_down".into());
    assert!(names.len() >= 30, "{} scenarios: {names:?}", names.len());
    println!(
        "{} scenarios on both clusters in {:?}",
        names.len(),
        started.elapsed()
    );

    let mut unexplained = Vec::new();
    let mut met = vec![false; known::KNOWN.len()];
    let mut agree = 0;
    for name in &names {
        let (k, s) = &docs[name];
        let diffs = differences(k, s);
        if diffs.is_empty() {
            agree += 1;
            println!("{name}: agrees");
        } else {
            let paths: Vec<&str> = diffs.iter().map(|d| d.path.as_str()).collect();
            println!("{name}: differs at {}", paths.join(", "));
        }
        for d in &diffs {
            match known::KNOWN.iter().position(|x| matches(x, name, d)) {
                Some(i) => met[i] = true,
                None => unexplained.push(format!(
                    "    Known {{ scenario: {name:?}, path: {:?}, kafka: r#\"{}\"#, serve: r#\"{}\"#, verdict: \"?\" }},",
                    d.path,
                    show(&d.kafka),
                    show(&d.serve)
                )),
            }
        }
    }
    println!(
        "{agree} of {} scenarios agree with Apache Kafka",
        names.len()
    );
    for (k, met) in known::KNOWN.iter().zip(&met) {
        println!(
            "{} {} {}: Kafka {} / serve {} ({})",
            if *met { "known" } else { "GONE " },
            k.scenario,
            k.path,
            k.kafka,
            k.serve,
            k.verdict
        );
    }
    let gone: Vec<String> = known::KNOWN
        .iter()
        .zip(&met)
        .filter(|(_, met)| !**met)
        .map(|(k, _)| format!("{} {}", k.scenario, k.path))
        .collect();
    assert!(
        unexplained.is_empty() && gone.is_empty(),
        "new differences from Apache Kafka (fix, or add to tests/kafka_differential/known.rs and docs/kafka-differences.md):\n{}\nknown differences no longer seen (remove them from the table and the doc): {gone:?}",
        unexplained.join("\n")
    );
}
