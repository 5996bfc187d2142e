//! `--transaction-version` (KIP-890) with Kafka's Java client 4.4: under
//! 2 the client speaks Kafka 4's protocol (EndTxn v5, Produce v12) and
//! sees the epochs Apache Kafka 4.4 gives it; under 1, chapter 8's. The
//! same program's documents from Apache Kafka 4.4 are compared in
//! tests/kafka_differential.rs; the literals here are what it printed
//! there (docs/kafka-differences.md).

use serde_json::{Value, json};

use crate::kafka_ref::KafkaRef;
use crate::server::Server;

fn run(version: &str) -> (Value, String) {
    let java = KafkaRef::java_client().expect("checked by the caller");
    let mut server = Server::start(&["--rules", "kafka", "--transaction-version", version]);
    let out = java.run("TxnVersion.java", &[&server.bootstrap(), "tv", "tv"]);
    server.stop();
    // The client logs its errors on standard output too: the document is
    // the last line.
    let last = out.lines().rfind(|l| l.starts_with('{')).unwrap_or("");
    let doc = serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {out}"));
    (doc, server.log())
}

#[test]
fn the_java_client_speaks_the_transaction_version_the_server_finalizes() {
    if KafkaRef::java_client().is_none() {
        return;
    }
    let (v2, log) = run("2");
    assert_eq!(
        v2,
        json!({"v2": true,
               "epochs": {"init": 0, "after_commit": 1, "after_abort": 2,
                          "new_producer_init": 3, "new_producer_after_commit": 4},
               "zombie": "InvalidProducerEpochException",
               "committed": ["a", "d"]}),
        "as Apache Kafka 4.4 under transaction version 2:\n{log}"
    );
    assert!(log.contains("EndTxn v5"), "{log}");
    assert!(log.contains("Produce v12"), "{log}");
    assert!(
        !log.contains("AddPartitionsToTxn v"),
        "no add under version 2:\n{log}"
    );
    let (v1, log) = run("1");
    assert_eq!(
        v1,
        json!({"v2": false,
               "epochs": {"init": 0, "after_commit": 0, "after_abort": 0,
                          "new_producer_init": 2, "new_producer_after_commit": 2},
               "zombie": "ProducerFencedException",
               "committed": ["a", "d"]}),
        "Kafka gives the new producer 1: the engine takes an epoch at each begin:\n{log}"
    );
    assert!(log.contains("AddPartitionsToTxn v3"), "{log}");
    assert!(!log.contains("EndTxn v5"), "{log}");
}

#[test]
fn a_transaction_version_the_rules_cannot_have_is_refused_in_one_line() {
    for (args, says) in [
        (
            &["--transaction-version", "2"][..],
            "--transaction-version 2: 2 needs rules \"kafka\"",
        ),
        (
            &["--rules", "kafka", "--transaction-version", "3"][..],
            "--transaction-version 3: 3 is not a transaction version",
        ),
    ] {
        let temp = tempfile::tempdir().unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mk-tui"))
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(temp.path().join("d"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!temp.path().join("d").exists(), "nothing written");
    }
}
