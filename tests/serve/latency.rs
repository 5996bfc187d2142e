//! A client that waits on replication is answered at once, not at the
//! next `--auto-replicate` tick: serve runs the tick as soon as a client's
//! step changed the cluster and a client waits on it (an acks=all produce,
//! a fetch waiting for the high watermark), as Kafka's followers fetch
//! continuously. Before, each acks=all send took the tick's 50 ms (a new
//! user's trial: 53 ms a send against 7 ms at acks=1). With a tick of 5 s
//! here, ten of either wait would take 50 s without it.

use crate::python;
use crate::server::Server;

fn total_ms(out: &str, what: &str) -> u64 {
    let line = out
        .lines()
        .find(|l| l.starts_with(what))
        .unwrap_or_else(|| panic!("no {what} line:\n{out}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn acks_all_and_a_waiting_consumer_do_not_wait_for_the_replication_tick() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut server = Server::start(&["--rules", "kafka", "--auto-replicate", "5000"]);
    let boot = server.bootstrap();
    let out = python::run(&py, "ck_create_topic.py", &[&boot, "w", "1", "3"]);
    assert_eq!(out.trim(), "created w");
    let out = python::run(&py, "ck_wait_on_replication.py", &[&boot, "w", "10"]);
    assert!(!out.contains("failed"), "{out}");
    // Ten waits in less than one tick: none of them waited for it.
    assert!(total_ms(&out, "acks_all 10 ") < 5000, "{out}");
    assert!(total_ms(&out, "end_to_end 10 ") < 5000, "{out}");
    server.stop();
}

/// `--tick-replication-only` keeps the tick's pace (a lesson that shows an
/// acks=all produce pending, a test that kills the server between a
/// commit's PREPARE_COMMIT and its markers): each acks=all send waits for
/// the next tick.
#[test]
fn with_tick_replication_only_acks_all_waits_for_the_tick() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut server = Server::start(&[
        "--rules",
        "kafka",
        "--auto-replicate",
        "1000",
        "--tick-replication-only",
    ]);
    let boot = server.bootstrap();
    python::run(&py, "ck_create_topic.py", &[&boot, "w", "1", "3"]);
    let out = python::run(&py, "ck_wait_on_replication.py", &[&boot, "w", "3"]);
    assert!(!out.contains("failed"), "{out}");
    // The second and third sends each wait a whole tick at least.
    assert!(total_ms(&out, "acks_all 3 ") >= 1500, "{out}");
    server.stop();
}
