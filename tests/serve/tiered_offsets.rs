//! Kafka's own tools against serve and Apache Kafka 4.4, after the same
//! steps: `GetOffsetShell --time -4` (the earliest local offset,
//! ListOffsets v8) and `--time -5` (the latest tiered offset, v9) once
//! DeleteRecords moved the log start, and `kafka-transactions.sh
//! find-hanging --broker-id N` / `describe-producers --broker-id N` asked
//! of every broker, followers included (DescribeProducers answered by each
//! replica), and of one holding no replica.

use crate::kafka_ref::KafkaRef;
use crate::python;
use crate::server::Server;

const GET_OFFSET_SHELL: &str = "org.apache.kafka.tools.GetOffsetShell";
const TRANSACTIONS: &str = "org.apache.kafka.tools.TransactionsCommand";
const TOPICS: &str = "org.apache.kafka.tools.TopicCommand";

/// What one cluster says to the same steps, line by line.
fn scenario(kafka: &KafkaRef, py: &std::path::PathBuf, boot: &str) -> Vec<String> {
    let tool = |class: &str, args: &[&str]| {
        let mut all = vec!["--bootstrap-server", boot];
        all.extend_from_slice(args);
        kafka.run_main(class, &all)
    };
    let mut said = Vec::new();
    let made = python::run(py, "ck_create_topic.py", &[boot, "t", "1", "3"]);
    assert_eq!(made.trim(), "created t", "{made}");
    // Two batches of two records; serve's one-byte segments put each batch
    // in a segment of its own, so its segment-aligned DeleteRecords
    // (docs/kafka-differences.md) moves the log start to 2 as Kafka's does.
    for prefix in ["a", "b"] {
        python::run(py, "ck_produce.py", &[boot, "t", "0", "all", "2", prefix]);
    }
    let deleted = python::run(py, "ck_delete_records.py", &[boot, "t:0:2"]);
    said.extend(deleted.lines().map(str::to_string));
    for time in ["-1", "-2", "-4", "-5"] {
        let out = tool(GET_OFFSET_SHELL, &["--topic", "t", "--time", time]);
        said.push(format!("time {time}: {}", out.trim()));
    }
    let txn = python::run(py, "ck_txn_commit.py", &[boot, "t", "tx1", "v"]);
    assert_eq!(txn.trim(), "committed", "{txn}");
    for broker in ["1", "2", "3"] {
        let out = tool(TRANSACTIONS, &["find-hanging", "--broker-id", broker]);
        said.push(format!("find-hanging {broker}: {}", out.trim()));
        let out = tool(
            TRANSACTIONS,
            &[
                "describe-producers",
                "--topic",
                "t",
                "--partition",
                "0",
                "--broker-id",
                broker,
            ],
        );
        // LastTimestamp (the fifth column) is the producer's clock.
        for line in out.lines() {
            let mut cells: Vec<&str> = line.trim_end().split('\t').map(str::trim).collect();
            if cells.len() > 4 {
                cells.remove(4);
            }
            said.push(format!("producers {broker}: {}", cells.join(" ")));
        }
    }
    // A partition on one broker: another holds no replica of it.
    let made = python::run(py, "ck_create_topic.py", &[boot, "one", "1", "1"]);
    assert_eq!(made.trim(), "created one", "{made}");
    let described = tool(TOPICS, &["--describe", "--topic", "one"]);
    let holder: u32 = described
        .split("Leader: ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{described}"));
    let other = (1 + holder % 3).to_string();
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tool(
            TRANSACTIONS,
            &[
                "describe-producers",
                "--topic",
                "one",
                "--partition",
                "0",
                "--broker-id",
                &other,
            ],
        )
    }))
    .expect_err("describe-producers of a broker with no replica fails");
    let refused = refused
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    said.push(format!(
        "no replica: {}",
        refused.contains("NotLeaderOrFollowerException")
    ));
    said
}

#[test]
fn kafkas_tools_read_tiered_offsets_and_followers_producers_as_on_kafka_4_4() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let Some(kafka) = KafkaRef::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let header = dir.path().join("header.jsonl");
    std::fs::write(
        &header,
        r#"{"mk_recording":1,"title":"tiered offsets","rules":"kafka","cluster":{"brokers":[1,2,3],"topics":[],"config":{"segment_max_bytes":1}}}"#,
    )
    .unwrap();
    let mut server = Server::start(&[header.to_str().unwrap(), "--rules", "kafka"]);
    let served = scenario(&kafka, &py, &server.bootstrap());
    let log = server.stop();
    let kafkas = scenario(&kafka, &py, &kafka.bootstrap);
    assert_eq!(served, kafkas, "{log}");
    let header_row = "Topic\tPartition\tProducerId\tProducerEpoch\tCoordinatorEpoch\tStartOffset\tLastTimestamp\tDuration(min)";
    let mut want = vec![
        "deleted t-0 low 2".to_string(),
        "watermarks t-0 2 4".into(),
        "time -1: t:0:4".into(),
        "time -2: t:0:2".into(),
        "time -4: t:0:2".into(),
        "time -5: ".into(),
    ];
    for broker in 1..=3 {
        want.push(format!("find-hanging {broker}: {header_row}"));
        want.push(format!(
            "producers {broker}: ProducerId ProducerEpoch LatestCoordinatorEpoch LastSequence CurrentTransactionStartOffset"
        ));
        want.push(format!("producers {broker}: 0 0 0 0 None"));
    }
    want.push("no replica: true".into());
    assert_eq!(served, want, "{log}");
}
