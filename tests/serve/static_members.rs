//! Static membership (KIP-345) through Kafka's Java client 4.4
//! (tests/kafka-ref/java/StaticMembers.java), on serve and on Apache
//! Kafka 4.4: a static leader that closes (without leaving, as a static
//! member does) and starts again takes its partitions back with no
//! rebalance, a second process with the same `group.instance.id` fences
//! the first, and the admin removes a member by its instance id.
//! Before, serve ignored `group.instance.id`: the restart rebalanced the
//! group and, with the old member never leaving, stalled it for a session
//! timeout (a new user's trial: nothing consumed for 40 s).

use crate::kafka_ref::KafkaRef;
use crate::server::Server;

/// The program's lines, without the Java client's own log lines (its
/// ERROR line for the fenced heartbeat goes to standard output).
fn lines(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| !l.contains(" ERROR "))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_restarted_static_member_takes_its_place_back_as_on_kafka_4_4() {
    let Some(java) = KafkaRef::java_client() else {
        return;
    };
    let mut server = Server::start(&["--rules", "kafka"]);
    let served = lines(&java.run(
        "StaticMembers.java",
        &[&server.bootstrap(), "s", "static-group"],
    ));
    let expected = [
        "split 2,2",
        "read 40",
        "restarted a: same partitions, generation same, b revoked 0",
        "read 80",
        "a fenced",
        "read 120",
        "removed inst-b",
        "split 4",
        "read 160",
        "read twice 0",
    ];
    let log = server.stop();
    assert_eq!(served, expected, "{log}");
    assert!(
        log.contains("no rebalance: the assignment stands (static member \"inst-a\")"),
        "the returning leader is told to keep the assignment (KIP-814):\n{log}"
    );
    assert!(
        log.contains("FENCED_INSTANCE_ID"),
        "the replaced member's heartbeat is fenced:\n{log}"
    );
    let Some(kafka) = KafkaRef::start() else {
        return;
    };
    let kafkas = lines(&kafka.java(
        "StaticMembers.java",
        &[&kafka.bootstrap, "s", "static-group"],
    ));
    assert_eq!(served, kafkas, "serve and Kafka 4.4 differ");
}
