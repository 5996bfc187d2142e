//! A Kafka Streams application against `serve --rules kafka`: Kafka
//! Streams 4.4's word count (tests/kafka-ref/java/StreamsApp.java: a
//! repartition topic, a state store and its compacted changelog, and a
//! windowed count whose changelog is `cleanup.policy=compact,delete`),
//! under at_least_once and exactly_once_v2. Streams creates its internal topics
//! with configs of its own (`segment.bytes` for a repartition topic), which
//! serve takes without keeping (docs/kafka-differences.md, "Topic configs
//! taken at creation but not kept"); before, it refused them and the
//! application stopped at its first rebalance.

use crate::server::Server;

#[test]
fn kafka_streams_counts_words_at_least_once_and_exactly_once() {
    let Some(java) = crate::kafka_ref::KafkaRef::java_client() else {
        return;
    };
    let mut server = Server::start(&["--rules", "kafka"]);
    let boot = server.bootstrap();
    for (tag, guarantee) in [("alo", "at_least_once"), ("eos", "exactly_once_v2")] {
        // The program checks every word's count against the lines it wrote
        // and fails (non-zero) otherwise.
        let out = java.run("StreamsApp.java", &[&boot, tag, "60", guarantee]);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.last(), Some(&"done"), "{guarantee}: {out}");
        for kind in ["count ", "windowed "] {
            assert_eq!(
                lines.iter().filter(|l| l.starts_with(kind)).count(),
                7,
                "{guarantee}: every word counted ({kind}): {out}"
            );
        }
        assert!(
            lines.contains(&"internal wordcount-word-counts-changelog cleanup.policy=compact"),
            "{guarantee}: the changelog is compacted: {out}"
        );
        assert!(
            lines.iter().any(|l| l.starts_with(
                "internal wordcount-windowed-counts-changelog cleanup.policy=compact,delete,retention.ms="
            )),
            "{guarantee}: the window store's changelog is compacted and deleted: {out}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("internal wordcount-words-repartition")),
            "{guarantee}: {out}"
        );
    }
    let log = server.stop();
    assert!(
        log.contains("alo-wordcount-words-repartition created (segment.bytes=52428800 taken, not kept: the cluster's settings apply)"),
        "the log names the configs not kept:\n{log}"
    );
}
