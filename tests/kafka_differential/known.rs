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
        scenario: "*",
        path: "**.timestamp",
        kafka: r#""now""#,
        serve: r#""other""#,
        verdict: "being fixed (issue 23 item 4): producer timestamps; docs/kafka-differences.md *Producer timestamps*",
    },
    Known {
        scenario: "create_time",
        path: "read.*.timestamp",
        kafka: r#"1000000"#,
        serve: r#""other""#,
        verdict: "being fixed (issue 23 item 4): producer timestamps; docs/kafka-differences.md *Producer timestamps*",
    },
    Known {
        scenario: "list_offsets_by_timestamp",
        path: "for_timestamp.1500000",
        kafka: r#"1"#,
        serve: r#"-1"#,
        verdict: "being fixed (issue 23 item 4): producer timestamps; docs/kafka-differences.md *Producer timestamps*",
    },
    Known {
        scenario: "list_offsets_by_timestamp",
        path: "for_timestamp.3000000",
        kafka: r#"2"#,
        serve: r#"-1"#,
        verdict: "being fixed (issue 23 item 4): producer timestamps; docs/kafka-differences.md *Producer timestamps*",
    },
    Known {
        scenario: "list_offsets_by_timestamp",
        path: "max_timestamp",
        kafka: r#"2"#,
        serve: r#"{"error":"INVALID_REQUEST"}"#,
        verdict: "documented: docs/kafka-differences.md *ListOffsets MAX_TIMESTAMP*",
    },
    Known {
        scenario: "headers",
        path: "offsets.0",
        kafka: r#"0"#,
        serve: r#"{"error":"INVALID_RECORD"}"#,
        verdict: "being fixed (issue 23 item 4): record headers; docs/kafka-differences.md *Record headers*",
    },
    Known {
        scenario: "headers",
        path: "read.0",
        kafka: r#"{"headers":[["trace","abc"],["trace","def"],["empty",""]],"key":null,"offset":0,"timestamp":"now","value":"with-headers"}"#,
        serve: r#"absent"#,
        verdict: "being fixed (issue 23 item 4): record headers; docs/kafka-differences.md *Record headers*",
    },
    Known {
        scenario: "compression_*",
        path: "delivered",
        kafka: r#"[0,1,2,3]"#,
        serve: r#"{"errors":["UNSUPPORTED_COMPRESSION_TYPE"]}"#,
        verdict: "being fixed (issue 23 item 4): compression; docs/kafka-differences.md *Compression*",
    },
    Known {
        scenario: "compression_*",
        path: "read.count",
        kafka: r#"4"#,
        serve: r#"0"#,
        verdict: "being fixed (issue 23 item 4): compression; docs/kafka-differences.md *Compression*",
    },
    Known {
        scenario: "compression_*",
        path: "read.intact",
        kafka: r#"true"#,
        serve: r#"false"#,
        verdict: "being fixed (issue 23 item 4): compression; docs/kafka-differences.md *Compression*",
    },
    Known {
        scenario: "tombstone",
        path: "offsets.0",
        kafka: r#"0"#,
        serve: r#"{"error":"INVALID_RECORD"}"#,
        verdict: "documented: docs/kafka-differences.md *Tombstones*",
    },
    Known {
        scenario: "tombstone",
        path: "read.0",
        kafka: r#"{"headers":null,"key":"gone","offset":0,"timestamp":"now","value":null}"#,
        serve: r#"absent"#,
        verdict: "documented: docs/kafka-differences.md *Tombstones*",
    },
    Known {
        scenario: "delete_topic",
        path: "delete",
        kafka: r#""deleted""#,
        serve: r#""_UNSUPPORTED_FEATURE""#,
        verdict: "documented: docs/kafka-differences.md *DeleteTopics*",
    },
    Known {
        scenario: "delete_topic",
        path: "still_listed",
        kafka: r#"false"#,
        serve: r#"true"#,
        verdict: "documented: docs/kafka-differences.md *DeleteTopics*",
    },
    Known {
        scenario: "raw_fenced_end_txn_by_version",
        path: "old_epoch_add_partitions_v1",
        kafka: r#"47"#,
        serve: r#"90"#,
        verdict: "being fixed (issue 23 item 4): error codes by API version; docs/kafka-differences.md *PRODUCER_FENCED below the versions that know it*",
    },
    Known {
        scenario: "raw_fenced_end_txn_by_version",
        path: "old_epoch_end_txn_v1",
        kafka: r#"47"#,
        serve: r#"90"#,
        verdict: "being fixed (issue 23 item 4): error codes by API version; docs/kafka-differences.md *PRODUCER_FENCED below the versions that know it*",
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
        serve: r#"{"headers":null,"key":null,"offset":0,"timestamp":"other","value":"slow"}"#,
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
