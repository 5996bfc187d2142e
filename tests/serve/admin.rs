//! The admin APIs `mk-tui observe` asks (ListGroups, ListTransactions,
//! DescribeTransactions, DescribeLogDirs), through real clients:
//! kafka-python's KafkaAdminClient and confluent-kafka's AdminClient,
//! against a server holding chapter 8's offsets recording up to an open
//! transaction that staged offsets for group `workers`, or chapter 6's
//! ISR recording with two followers back but behind.

use crate::python;
use crate::server::Server;

/// A server with ch08-offsets.jsonl up to step `steps`.
fn offsets_server(steps: usize) -> (Server, tempfile::TempDir) {
    server_at("recordings/ch08-offsets.jsonl", steps)
}

/// A server with `recording` up to step `steps`.
fn server_at(recording: &str, steps: usize) -> (Server, tempfile::TempDir) {
    let text = std::fs::read_to_string(recording).unwrap();
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

/// The bytes of broker `broker`'s segments of `tp` on disk.
fn log_bytes(server: &Server, broker: u32, tp: &str) -> u64 {
    std::fs::read_dir(server.data_dir.join(format!("broker-{broker}")).join(tp))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum()
}

#[test]
fn kafka_pythons_admin_client_reads_each_replicas_size_and_lag_behind_the_hw() {
    let Some(py) = python::with("kafka") else {
        return;
    };
    // Step 16: HW 3 on leader 1; brokers 2 and 3 back, with LEO 2 and 1.
    // (A stopped broker stays in Metadata with its listener closed, and
    // kafka-python gives up on a refused connection, so all run here.)
    let (mut server, _temp) = server_at("recordings/ch06-isr-shrink.jsonl", 16);
    let out = python::run(&py, "kp_log_dirs.py", &[&server.bootstrap(), "1", "2", "3"]);
    let log = server.stop();
    let want: Vec<String> = [(1, 0), (2, 1), (3, 2)]
        .iter()
        .map(|&(b, lag)| {
            format!(
                "logdir {b} broker-{b} t-0 {} {lag} current",
                log_bytes(&server, b, "t-0")
            )
        })
        .collect();
    assert_eq!(out.lines().collect::<Vec<_>>(), want, "{out}\n{log}");
    assert!(log.contains("DescribeLogDirs v"), "{log}");
}

/// DeleteRecords (E16) through confluent-kafka's AdminClient, against the
/// chapter 4 retention lesson up to its replicate (offsets 0-3, a segment
/// each, HW 4): the low watermark is the new log start, segment-aligned,
/// so `-1` (the HW, 4) stops at 3, the active segment's base; past the HW
/// is OFFSET_OUT_OF_RANGE; a consumer's watermarks show the new start.
#[test]
fn confluent_kafkas_admin_client_deletes_records_up_to_a_segment_boundary() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let (mut server, _temp) = server_at("recordings/ch04-retention.jsonl", 8);
    let out = python::run(
        &py,
        "ck_delete_records.py",
        &[
            &server.bootstrap(),
            "events:0:2",
            "events:0:-1",
            "events:0:99",
        ],
    );
    let log = server.stop();
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "deleted events-0 low 2",
            "deleted events-0 low 3",
            "error events-0 OFFSET_OUT_OF_RANGE",
            "watermarks events-0 3 4",
        ],
        "{out}\n{log}"
    );
    assert!(log.contains("DeleteRecords v"), "{log}");
}
