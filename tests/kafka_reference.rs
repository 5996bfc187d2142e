//! The Apache Kafka 4.4 reference cluster itself (tests/common/kafka_ref.rs,
//! tests/kafka-ref/start.sh): three KRaft nodes start on loopback, Kafka's
//! Java client 4.4 writes and reads through them, and a node killed with
//! SIGKILL and started again rejoins, so the tests that compare mk-tui with
//! Kafka stand on a cluster that works.

#[allow(dead_code)]
#[path = "common/kafka_ref.rs"]
mod kafka_ref;

use kafka_ref::KafkaRef;

#[test]
fn three_nodes_serve_the_java_client_and_a_killed_node_rejoins() {
    let Some(kafka) = KafkaRef::start() else {
        return;
    };
    assert_eq!(kafka.bootstrap.split(',').count(), 3);
    let out = kafka.java("RoundTrip.java", &[&kafka.bootstrap, "first", "3"]);
    let lines: Vec<&str> = out.lines().collect();
    // Two committed records with their CreateTime and header, the aborted
    // one filtered at read_committed, and the end offset past both markers
    // (2 records, 1 commit marker, 1 aborted record, 1 abort marker).
    assert_eq!(
        lines,
        ["0 k0 v0 1000 h=x0", "1 k1 v1 1001 h=x1", "end 5"],
        "{}",
        kafka.log_tail(1, 20)
    );

    kafka.kill_and_fence(2);
    // Two of three nodes keep the controller quorum and, with node 2
    // fenced (kill_and_fence waits for it), a new topic of two replicas on them meets
    // min.insync.replicas 2: it is still written and read.
    let out = kafka.java("RoundTrip.java", &[&kafka.bootstrap, "second", "2"]);
    assert!(out.ends_with("end 5\n"), "{out}");
    kafka.restart(2);
    let out = kafka.java("RoundTrip.java", &[&kafka.addr(2), "third", "3"]);
    assert!(out.ends_with("end 5\n"), "{out}");
}
