//! The admin APIs `mk-tui observe` asks (ListGroups, ListTransactions,
//! DescribeTransactions), through real clients: kafka-python's
//! KafkaAdminClient and confluent-kafka's AdminClient, against a server
//! holding chapter 8's offsets recording up to an open transaction that
//! staged offsets for group `workers`.

use crate::python;
use crate::server::Server;

/// A server with ch08-offsets.jsonl up to step `steps`.
fn offsets_server(steps: usize) -> (Server, tempfile::TempDir) {
    let text = std::fs::read_to_string("recordings/ch08-offsets.jsonl").unwrap();
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("prefix.jsonl");
    let lines: Vec<&str> = text.lines().take(steps + 1).collect();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let server = Server::start(&[file.to_str().unwrap(), "--auto-replicate", "0"]);
    (server, temp)
}

#[test]
fn kafka_pythons_admin_client_lists_groups_and_transactions() {
    let Some(py) = python::with("kafka") else {
        return;
    };
    // Step 17: tx-1 committed, tx-2 open on out-0 with offsets staged.
    let (mut server, _temp) = offsets_server(17);
    let out = python::run(&py, "kp_admin.py", &[&server.bootstrap()]);
    let log = server.stop();
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "group workers Empty",
            "transaction tx-1 CompleteCommit -1",
            "transaction tx-2 Ongoing -1",
            "describe tx-1 CompleteCommit -",
            "describe tx-2 Ongoing out-0",
            "hanging 0",
        ],
        "{out}\n{log}"
    );
    for line in [
        "ListGroups v",
        "ListTransactions v1 from client \"kafka-python",
        "DescribeTransactions v0",
    ] {
        assert!(log.contains(line), "{line:?} in:\n{log}");
    }
}

#[test]
fn confluent_kafkas_admin_client_lists_the_consumer_groups() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let (mut server, _temp) = offsets_server(17);
    let out = python::run(&py, "ck_list_groups.py", &[&server.bootstrap()]);
    server.stop();
    assert_eq!(out.trim(), "group workers EMPTY", "{out}");
}
