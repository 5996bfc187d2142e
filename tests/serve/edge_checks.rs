//! Checks Kafka's edge makes before anything reaches the engine, as
//! confluent-kafka meets them (found missing by holding serve against
//! Apache Kafka 4.4 by hand; each answer here is the one Kafka gives):
//! a compacted topic refuses a record without a key (INVALID_RECORD); a
//! topic name that differs from an existing one only in '.' against '_'
//! is refused (TOPIC_EXCEPTION); Metadata answers a name no topic can have
//! with TOPIC_EXCEPTION, so a producer fails at once; InitProducerId
//! refuses a transaction timeout past transaction.max.timeout.ms
//! (INVALID_TRANSACTION_TIMEOUT); TxnOffsetCommit takes no offset for a
//! partition that does not exist (UNKNOWN_TOPIC_OR_PART).

use crate::python;
use crate::server::{Server, partition};

#[test]
fn the_edge_refuses_what_kafka_refuses_before_the_engine_sees_it() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut server = Server::start(&["--rules", "kafka"]);
    let boot = server.bootstrap();
    let out = python::run(&py, "ck_edge_checks.py", &[&boot, "e"]);
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "compacted-no-key: INVALID_RECORD then offset 0",
            "collision: created then TOPIC_EXCEPTION",
            "bad-name: TOPIC_EXCEPTION at once",
            "txn-timeout: INVALID_TRANSACTION_TIMEOUT",
            "txn-offsets-unknown: UNKNOWN_TOPIC_OR_PART",
        ],
        "{out}"
    );
    let log = server.stop();
    assert!(
        log.contains(
            "record 0 has no key: compacted topic e-compacted-0 cannot accept a record without one"
        ),
        "{log}"
    );
    assert!(
        log.contains("CreateTopics v4 from client \"rdkafka\": e.x_y: INVALID_TOPIC_EXCEPTION"),
        "{log}"
    );
    assert!(
        log.contains("INVALID_TRANSACTION_TIMEOUT: 900001 ms; give 1 to 900000"),
        "{log}"
    );
    assert!(log.contains("no partition e-out-9"), "{log}");
    let state = server.state();
    // The keyless record was not appended; nothing was staged or
    // committed for the group.
    assert_eq!(partition(&state, "e-compacted", 0)["log_end_offset"], 1);
    assert!(
        !state.to_string().contains("e-g"),
        "no offsets of the group: {}",
        state["committed_offsets"]
    );
}
