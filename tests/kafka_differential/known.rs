//! The known differences between Apache Kafka 4.4 and `mk-tui serve
//! --rules kafka`, as tests/kafka_differential.rs observes them; each is
//! explained in docs/kafka-differences.md. A path may use `*` for any one
//! segment; a value is JSON, or `absent` where that side has no such path.

pub struct Known {
    pub scenario: &'static str,
    pub path: &'static str,
    /// What Apache Kafka gives.
    pub kafka: &'static str,
    /// What `mk-tui serve --rules kafka` gives.
    pub serve: &'static str,
    /// Why it differs and what is done about it.
    pub verdict: &'static str,
}

pub const KNOWN: &[Known] = &[
    Known {
        scenario: "java_txn_version_1",
        path: "epochs.new_producer_init",
        kafka: r#"1"#,
        serve: r#"2"#,
        verdict: "documented: docs/kafka-differences.md *Transaction version 1: the epoch of each begin*",
    },
    Known {
        scenario: "java_txn_version_1",
        path: "epochs.new_producer_after_commit",
        kafka: r#"1"#,
        serve: r#"2"#,
        verdict: "documented: docs/kafka-differences.md *Transaction version 1: the epoch of each begin*",
    },
    Known {
        scenario: "raw_fenced_end_txn_by_version",
        path: "epoch_step",
        kafka: r#"2"#,
        serve: r#"1"#,
        verdict: "documented: docs/kafka-differences.md *The epoch after fencing an open transaction*",
    },
    Known {
        scenario: "raw_fenced_end_txn_by_version",
        path: "current_epoch_abort_nothing_open",
        kafka: r#"48"#,
        serve: r#"0"#,
        verdict: "documented: docs/kafka-differences.md *EndTxn with no transaction open*",
    },
    Known {
        scenario: "transaction_timeout",
        path: "ends_after_timeout.hw",
        kafka: r#"2"#,
        serve: r#"1"#,
        verdict: "documented: docs/kafka-differences.md *transaction.timeout.ms*",
    },
    Known {
        scenario: "transaction_timeout",
        path: "ends_after_timeout.lso",
        kafka: r#"2"#,
        serve: r#"0"#,
        verdict: "documented: docs/kafka-differences.md *transaction.timeout.ms*",
    },
    Known {
        scenario: "transaction_timeout",
        path: "late_commit",
        kafka: r#"{"error":"_FENCED","fatal":true}"#,
        serve: r#""committed""#,
        verdict: "documented: docs/kafka-differences.md *transaction.timeout.ms*",
    },
    Known {
        scenario: "transaction_timeout",
        path: "read.read_committed.0",
        kafka: r#"absent"#,
        serve: r#"{"headers":null,"key":null,"offset":0,"timestamp":"now","value":"slow"}"#,
        verdict: "documented: docs/kafka-differences.md *transaction.timeout.ms*",
    },
    Known {
        scenario: "broker_down",
        path: "ends.two.hw",
        kafka: r#"0"#,
        serve: r#"1"#,
        verdict: "documented: docs/kafka-differences.md *The high watermark below min.insync.replicas*",
    },
    Known {
        scenario: "broker_down",
        path: "ends.two.lso",
        kafka: r#"0"#,
        serve: r#"1"#,
        verdict: "documented: docs/kafka-differences.md *The high watermark below min.insync.replicas*",
    },
    Known {
        scenario: "broker_down",
        path: "read.two.0",
        kafka: r#"absent"#,
        serve: r#""c0""#,
        verdict: "documented: docs/kafka-differences.md *The high watermark below min.insync.replicas*",
    },
];
