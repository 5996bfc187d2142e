//! `mk-tui observe` (issue 15, item 5, second bullet) against a Kafka
//! implementation this project did not write: librdkafka's mock cluster
//! (three brokers), started in process by confluent-kafka
//! (tests/clients/ck_mock_cluster.py, pinned by .ci/run) and driven by
//! real confluent-kafka clients: plain records, a committed transaction,
//! an aborted one, one left open, offsets staged in a transaction, and a
//! group's plain offset commit. After each step the real `mk-tui observe`
//! binary takes one snapshot, and every field it fills must be what the
//! mock holds: as the same clients read it (metadata, both isolation
//! levels' records, watermarks, committed offsets) and, where no client
//! shows it, as the mock's source says it behaves (docs/observe.md
//! "Tested implementations"): it writes COMMIT and ABORT markers (with
//! CRC 0), but its ListOffsets ignores the isolation level (LSO = HW) and
//! its Fetch lists no aborted transactions, so read_committed reads what
//! read_uncommitted reads, and it drops offsets staged by TxnOffsetCommit.
//! Loopback only; the driver is killed when the test ends, fails or not,
//! and exits by itself at the end of its input or after 240 s.

#[allow(dead_code)]
#[path = "serve/python.rs"]
mod python;

#[allow(dead_code)]
#[path = "common/foreign.rs"]
mod foreign;

use foreign::{LineDriver, batch, mk_tui, observe, t0, unavailable};

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

/// The mock cluster's driver (tests/common/foreign.rs).
struct Mock(LineDriver);

impl std::ops::Deref for Mock {
    type Target = LineDriver;
    fn deref(&self) -> &LineDriver {
        &self.0
    }
}

impl std::ops::DerefMut for Mock {
    fn deref_mut(&mut self) -> &mut LineDriver {
        &mut self.0
    }
}

impl Mock {
    fn start(py: &Path) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut command = Command::new(py);
        command
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/ck_mock_cluster.py"))
            .arg("3");
        Mock(LineDriver::start("ck_mock_cluster.py", command, dir, None))
    }

    /// What a consumer at `isolation` reads of t-0: its values, and the
    /// high watermark it is told.
    fn consume(&mut self, isolation: &str) -> (Vec<Value>, i64) {
        let out = self.run(&format!("consume {isolation}"));
        let values = out
            .iter()
            .filter_map(|l| l.strip_prefix("read "))
            .map(|l| json!(l.split_once(' ').unwrap().1))
            .collect();
        let end = out.iter().find_map(|l| l.strip_prefix("end ")).unwrap();
        (values, end.split(' ').nth(1).unwrap().parse().unwrap())
    }
}

/// What every observation of t-0 must show, whatever the step: the
/// offsets, both consumers as the real clients read them, no tail cut
/// (the mock answers one batch per fetch: the observer asks again), and
/// the batches' leader epoch that of the partition.
fn check_t0(mock: &mut Mock, state: &Value, hw: i64) {
    let p = t0(state);
    let (uncommitted, told_hw) = mock.consume("read_uncommitted");
    let (committed, _) = mock.consume("read_committed");
    assert_eq!(told_hw, hw, "the client is told the same HW");
    assert_eq!(p["log_start_offset"], 0, "{p}");
    assert_eq!(p["high_watermark"], hw, "{p}");
    // The mock's ListOffsets answers its log end under either isolation
    // level: its LSO is its HW, even above an open transaction.
    assert_eq!(p["last_stable_offset"], hw, "{p}");
    let consumers = &state["consumers"];
    assert_eq!(consumers["read_uncommitted"]["t-0"], json!(uncommitted));
    assert_eq!(consumers["read_committed"]["t-0"], json!(committed));
    // Its Fetch lists no aborted transaction: read_committed reads all.
    assert_eq!(committed, uncommitted);
    let gaps: Vec<&str> = unavailable(state)
        .into_iter()
        .filter(|u| u.contains("outside") || u.starts_with("consumers["))
        .collect();
    assert!(gaps.is_empty(), "the whole log was fetched: {gaps:?}");
    let batches = p["batches"].as_array().unwrap();
    let covered: i64 = batches
        .iter()
        .map(|b| b["last_offset"].as_i64().unwrap() - b["base_offset"].as_i64().unwrap() + 1)
        .sum();
    assert_eq!(covered, hw, "the batches cover 0..HW: {p}");
    for b in batches {
        assert_eq!(b["leader_epoch"], p["leader_epoch"], "{b}");
    }
}

/// A data batch of one transactional producer, then its marker at
/// `marker`: the producer's id and epoch on both, and the fates the
/// observer's rule gives (below the LSO, read_committed returns the data:
/// `committed`, for an aborted transaction too on this mock).
fn check_transaction(state: &Value, data: &[i64], marker: Option<(i64, &str)>) -> i64 {
    let b = batch(state, data[0]);
    assert_eq!(b["last_offset"], *data.last().unwrap(), "{b}");
    assert_eq!(b["kind"], "data", "{b}");
    assert_eq!(b["producer_epoch"], 0, "{b}");
    assert_eq!(b["base_sequence"], 0, "a new producer's first batch: {b}");
    assert_eq!(b["fate"], "committed", "{b}");
    let pid = b["producer_id"].as_i64().unwrap();
    assert!(pid >= 0, "a transactional producer has an id: {b}");
    if let Some((at, kind)) = marker {
        let m = batch(state, at);
        assert_eq!(
            (&m["kind"], &m["control"], &m["fate"]),
            (&json!("control"), &json!(kind), &json!("control")),
            "{m}"
        );
        assert_eq!(m["producer_id"], pid, "{m}");
        assert_eq!(m["producer_epoch"], 0, "{m}");
        // The mock writes base sequence 0 and CRC 0 into its markers.
        assert_eq!(m["base_sequence"], 0, "{m}");
        assert!(m["records"].as_array().unwrap().is_empty(), "{m}");
        let crc = format!("partitions[t-0].batches[{at}].crc (stored 0x00000000, ");
        assert!(
            unavailable(state).iter().any(|u| u.starts_with(&crc)),
            "the marker's bad CRC is named: {:?}",
            unavailable(state)
        );
    }
    pid
}

#[test]
fn observe_reads_librdkafkas_mock_cluster_as_its_clients_do() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut mock = Mock::start(&py);
    let boot = mock.boot.clone();

    // An empty cluster: its three brokers, no partition; a missing topic
    // is an error and is not created (Metadata asks with auto-creation
    // off, which the mock honours).
    let empty = observe(&boot, &[]);
    assert_eq!(
        empty["brokers"],
        json!(
            [1, 2, 3]
                .map(|id| json!({"id": id, "stopped": false}))
                .to_vec()
        )
    );
    assert_eq!(empty["partitions"], json!([]));
    let missing = mk_tui(&["observe", "--bootstrap", &boot, "--topic", "t", "--state"]);
    assert_eq!(missing.status.code(), Some(2));
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(err.contains("topic t: not found"), "{err}");
    assert!(
        !mock
            .run("metadata")
            .iter()
            .any(|l| l.starts_with("partition ")),
        "the observer created no topic"
    );

    // Plain records: the first produce creates t (4 partitions of 3
    // replicas, the mock's defaults).
    assert_eq!(mock.delivered("plain 3"), [0, 1, 2]);
    let plain = observe(&boot, &[]);
    let meta = mock.run("metadata");
    let ids: Vec<Value> = meta
        .iter()
        .filter_map(|l| l.strip_prefix("broker "))
        .map(|l| json!({"id": l.split(' ').next().unwrap().parse::<u32>().unwrap(), "stopped": false}))
        .collect();
    assert_eq!(plain["brokers"], json!(ids));
    let listed: Vec<&str> = meta
        .iter()
        .filter(|l| l.starts_with("partition "))
        .map(String::as_str)
        .collect();
    assert_eq!(listed.len(), 4, "{meta:?}");
    let partitions = plain["partitions"].as_array().unwrap();
    assert_eq!(partitions.len(), 4, "{plain}");
    // The mock serves no DescribeConfigs: the topics' settings are listed
    // unavailable and written null, not guessed.
    assert!(
        unavailable(&plain).contains(&"partitions[].config"),
        "{plain}"
    );
    assert!(partitions.iter().all(|p| p["config"].is_null()), "{plain}");
    for (line, p) in listed.iter().zip(partitions) {
        let ints = |s: &str| -> Vec<u32> { s.split(',').map(|n| n.parse().unwrap()).collect() };
        let w: Vec<&str> = line.split(' ').collect();
        let (leader, replicas, isr) = (w[4].parse::<u32>().unwrap(), ints(w[6]), ints(w[8]));
        assert_eq!(p["partition"], w[2].parse::<u32>().unwrap());
        assert_eq!(p["leader"], leader, "{line} vs {p}");
        assert_eq!(p["isr"], json!(isr), "{line} vs {p}");
        let observed: Vec<Value> = p["replicas"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| json!([r["broker"], r["is_leader"], r["in_sync"], r["stopped"]]))
            .collect();
        let expected: Vec<Value> = replicas
            .iter()
            .map(|&b| json!([b, b == leader, isr.contains(&b), false]))
            .collect();
        assert_eq!(observed, expected, "{line} vs {p}");
        // No leader has moved: the mock starts every partition at epoch 0
        // (no client API reads the epoch back, and the confluent-kafka
        // Python client cannot move a mock leader).
        assert_eq!(p["leader_epoch"], 0, "{p}");
        if p["partition"] != 0 {
            assert_eq!(
                (&p["high_watermark"], &p["batches"]),
                (&json!(0), &json!([])),
                "{p}"
            );
        }
    }
    check_t0(&mut mock, &plain, 3);
    let b = batch(&plain, 0);
    assert_eq!(
        (&b["kind"], &b["last_offset"], &b["fate"]),
        (&json!("data"), &json!(2), &json!("committed")),
        "{b}"
    );
    assert_eq!(
        (&b["producer_id"], &b["producer_epoch"], &b["base_sequence"]),
        (&json!(-1), &json!(-1), &json!(-1)),
        "no idempotence: no producer id {b}"
    );
    let offsets: Vec<&Value> = b["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["offset"])
        .collect();
    assert_eq!(offsets, [&json!(0), &json!(1), &json!(2)]);

    // A committed transaction: its data, then a COMMIT marker.
    let data = mock.delivered("txn tc commit c1 c2");
    assert_eq!(data, [3, 4]);
    let committed = observe(&boot, &[]);
    check_t0(&mut mock, &committed, 6);
    let pid_commit = check_transaction(&committed, &data, Some((5, "commit")));

    // An aborted one: its data, then an ABORT marker; the mock lists no
    // aborted transaction, so read_committed returns the data (the real
    // client's read_committed consumer reads it too: check_t0), and the
    // observer's rule calls it committed.
    let data = mock.delivered("txn ta abort a1");
    assert_eq!(data, [6]);
    let aborted = observe(&boot, &[]);
    check_t0(&mut mock, &aborted, 8);
    let pid_abort = check_transaction(&aborted, &data, Some((7, "abort")));
    assert_ne!(pid_abort, pid_commit);
    assert!(
        aborted["consumers"]["read_committed"]["t-0"]
            .as_array()
            .unwrap()
            .contains(&json!("a1"))
    );

    // Offsets staged in a committed transaction (TxnOffsetCommit): the
    // mock answers it and keeps nothing, as the client's committed()
    // shows; the observer shows no offset either.
    assert!(mock.run("txn_offsets tx staged 3").is_empty());
    assert_eq!(mock.run("committed staged"), ["committed staged None"]);
    let staged = observe(&boot, &["--group", "staged"]);
    assert_eq!(staged["committed_offsets"], json!({}));

    // One left open: no marker, and the LSO is not held below it.
    let data = mock.delivered("txn to open o1");
    assert_eq!(data, [8]);
    let open = observe(&boot, &[]);
    check_t0(&mut mock, &open, 9);
    let pid_open = check_transaction(&open, &data, None);
    assert!(![pid_commit, pid_abort].contains(&pid_open));
    assert_eq!(t0(&open)["batches"].as_array().unwrap().len(), 6);

    // A group's plain commit, read with OffsetFetch from its coordinator.
    assert!(mock.run("commit g 2").is_empty());
    assert_eq!(mock.run("committed g"), ["committed g 2"]);
    let groups = observe(&boot, &["--group", "g", "--group", "staged"]);
    assert_eq!(groups["committed_offsets"], json!({"g": {"t-0": 2}}));
    let u = unavailable(&groups);
    assert!(!u.contains(&"committed_offsets"), "{u:?}");
    assert!(
        u.contains(&"committed_offsets of groups not named with --group"),
        "{u:?}"
    );
    // The mock cannot answer OffsetFetch for all of a group's topics (it
    // echoes the null topic array): the observer asked for the observed
    // partitions instead, and says what that leaves out.
    // (OffsetFetch v6: the newest both speak; the coordinator is one of
    // the three brokers.)
    for group in ["g", "staged"] {
        let note = |broker: &str| {
            format!(
                "committed_offsets[{group}] of topics not observed ({broker}: OffsetFetch v6 for all topics does not decode)"
            )
        };
        assert!(
            boot.split(',').any(|b| u.contains(&note(b).as_str())),
            "{:?} in {u:?}",
            note("BROKER")
        );
    }

    // One frame of it, as `mk-tui render` draws a saved state.
    let frame = mk_tui(&[
        "observe",
        "--bootstrap",
        &boot,
        "--topic",
        "t",
        "--render",
        "--size",
        "120x40",
    ]);
    assert!(
        frame.status.success(),
        "{}",
        String::from_utf8_lossy(&frame.stderr)
    );
    let frame = String::from_utf8(frame.stdout).unwrap();
    let leader = t0(&open)["leader"].as_u64().unwrap();
    let line = format!("leader {leader} e0 HW 9 LSO 9 LEO ?");
    assert!(
        frame
            .lines()
            .any(|l| l.contains("│t-0 ") && l.contains(&line)),
        "{line:?} in:\n{frame}"
    );
    // Both markers, and the aborted transaction's record drawn as the
    // snapshot says (committed: read_committed returned it).
    for drawn in ["│ observed │", "COMMIT", "ABORT", "✓ 6      ● -      [a1]"] {
        assert!(frame.contains(drawn), "{drawn:?} in:\n{frame}");
    }
}
