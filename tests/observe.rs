//! `mk-tui observe` (issue 15, first slice) against `mk-tui serve`: the
//! server is started on a free loopback port with a recording (or a prefix
//! of one, to stop inside a transaction), the observer takes one snapshot
//! over the Kafka protocol, and every field the protocol exposes must equal
//! the embedded cluster's own (`mk-tui state` of the same steps): leader,
//! leader epoch, ISR, replicas, log start, HW, LSO, the batches below the HW
//! (offsets, kinds, markers, producer fields, records), their fates under
//! the documented wire rule, and what each isolation level reads. Then the
//! bad inputs: a SASL/SSL bootstrap, an unreachable port, a missing topic,
//! a broker that closes the connection, one with no usable API version.
//! Every server stops by itself; every wait is bounded.

#[allow(dead_code)]
#[path = "serve/server.rs"]
mod server;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::{Value, json};
use server::Server;

fn mk_tui(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .args(args)
        .output()
        .expect("mk-tui runs")
}

/// The recording's header and its first `steps` steps (all when None),
/// written to `dir`.
fn prefix(recording: &str, steps: Option<usize>, dir: &Path) -> String {
    let text = std::fs::read_to_string(recording).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let keep = steps.map_or(lines.len(), |n| n + 1);
    let path = dir.join("prefix.jsonl");
    std::fs::write(&path, lines[..keep].join("\n") + "\n").unwrap();
    path.to_str().unwrap().to_string()
}

/// `mk-tui state FILE` as JSON.
fn state_of(file: &str) -> Value {
    let out = mk_tui(&["state", file]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `mk-tui observe --bootstrap B --state [--group G…]` as JSON.
fn observe(bootstrap: &str, groups: &[String]) -> Value {
    try_observe(bootstrap, groups).unwrap_or_else(|e| panic!("observe failed: {e}"))
}

/// The same, or the line it refused with.
fn try_observe(bootstrap: &str, groups: &[String]) -> Result<Value, String> {
    let mut args = vec!["observe", "--bootstrap", bootstrap, "--state"];
    for g in groups {
        args.extend(["--group", g]);
    }
    let out = mk_tui(&args);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(serde_json::from_slice(&out.stdout).unwrap())
}

/// The fate the wire rule gives where the embedded cluster's needs the
/// journal (docs/observe.md "Fates"): an orphaned batch is skipped by
/// read_committed, as an aborted one; with no producer id (the book's
/// rules) a decided transaction whose markers are missing looks open, and
/// with no producer id to match a marker by, transactional data at or
/// above the LSO is ongoing.
fn wire_fate(batch: &Value, lso: i64) -> Value {
    let fate = batch["fate"].as_str().unwrap();
    let at = batch["base_offset"].as_i64().unwrap();
    let transactional = !batch["transactional_id"].is_null();
    let fate = match fate {
        "orphaned" => "aborted",
        // DescribeTransactions tells a deciding transaction by its
        // producer id and epoch; the book's transactions have none.
        "decided" if batch["producer_id"].as_i64() < Some(0) => "ongoing",
        "held_back" | "aborted"
            if transactional && at >= lso && batch["producer_id"].as_i64() < Some(0) =>
        {
            "ongoing"
        }
        other => other,
    };
    json!(fate)
}

/// What the protocol shows of a batch.
fn wire_batch(b: &Value) -> Value {
    json!({
        "base_offset": b["base_offset"], "last_offset": b["last_offset"],
        "kind": b["kind"], "control": b["control"],
        "producer_id": b["producer_id"], "producer_epoch": b["producer_epoch"],
        "base_sequence": b["base_sequence"], "leader_epoch": b["leader_epoch"],
        "records": if b["kind"] == "control" { json!([]) } else { b["records"].clone() },
    })
}

/// Compares every field the protocol exposes; returns the mismatches.
fn differences(expected: &Value, observed: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut check = |what: String, e: &Value, o: &Value| {
        if e != o {
            out.push(format!("{what}: embedded {e}, observed {o}"));
        }
    };
    let parts = |s: &Value| -> Vec<Value> { s["partitions"].as_array().unwrap().clone() };
    let name = |p: &Value| format!("{}-{}", p["topic"].as_str().unwrap(), p["partition"]);
    check(
        "committed_offsets".into(),
        &expected["committed_offsets"],
        &observed["committed_offsets"],
    );
    let (e_parts, o_parts) = (parts(expected), parts(observed));
    check(
        "partitions".into(),
        &json!(e_parts.iter().map(name).collect::<Vec<_>>()),
        &json!(o_parts.iter().map(name).collect::<Vec<_>>()),
    );
    for (e, o) in e_parts.iter().zip(&o_parts) {
        let key = name(e);
        for field in [
            "leader",
            "leader_epoch",
            "isr",
            "log_start_offset",
            "high_watermark",
            "last_stable_offset",
            // The topic's own settings, through DescribeConfigs.
            "config",
        ] {
            check(format!("{key}.{field}"), &e[field], &o[field]);
        }
        let replicas = |p: &Value| -> Value {
            p["replicas"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| json!([r["broker"], r["is_leader"], r["in_sync"], r["stopped"]]))
                .collect()
        };
        check(format!("{key}.replicas"), &replicas(e), &replicas(o));
        let (hw, lso) = (
            e["high_watermark"].as_i64().unwrap(),
            e["last_stable_offset"].as_i64().unwrap(),
        );
        let below_hw: Vec<&Value> = e["batches"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["base_offset"].as_i64().unwrap() < hw)
            .collect();
        let observed_batches = o["batches"].as_array().unwrap();
        check(
            format!("{key}.batches"),
            &below_hw.iter().map(|b| wire_batch(b)).collect(),
            &observed_batches.iter().map(wire_batch).collect(),
        );
        check(
            format!("{key}.batches[].fate"),
            &below_hw.iter().map(|b| wire_fate(b, lso)).collect(),
            &observed_batches.iter().map(|b| b["fate"].clone()).collect(),
        );
        for level in ["read_uncommitted", "read_committed"] {
            check(
                format!("consumers.{level}[{key}]"),
                &expected["consumers"][level][&key],
                &observed["consumers"][level][&key],
            );
        }
    }
    out
}

/// A transaction as the admin APIs show it: its state, partitions and
/// first offsets.
type WireTxn = (Value, Vec<String>, BTreeMap<String, i64>);

/// `out-0` as (topic, partition), so partitions sort as the engine sorts
/// them.
fn split(name: &str) -> (String, u64) {
    let (topic, p) = name.rsplit_once('-').unwrap();
    (topic.to_string(), p.parse().unwrap())
}

/// What the admin APIs show of the embedded cluster's transactions
/// (docs/observe.md "Transactions"), by id: the state, and while it is
/// open its partitions and first offsets, each with the writes still
/// waiting for their acks (they hold the LSO back already, and Kafka's
/// producer state has them); a complete transaction's are not on the wire.
fn wire_transactions(expected: &Value) -> BTreeMap<String, WireTxn> {
    let mut out = BTreeMap::new();
    for t in expected["transactions"].as_array().unwrap() {
        let id = t["id"].as_str().unwrap().to_string();
        let state = t["state"].as_str().unwrap();
        let open = !state.starts_with("complete");
        let mut firsts: BTreeMap<String, i64> = BTreeMap::new();
        if open {
            for (tp, o) in t["first_offsets"].as_object().unwrap() {
                firsts.insert(tp.clone(), o.as_i64().unwrap());
            }
            for p in expected["pending"].as_array().unwrap() {
                if p["kind"] == "send" && p["txn"] == json!(id) {
                    for b in p["batches"].as_array().unwrap() {
                        let tp = b["partition"].as_str().unwrap().to_string();
                        let o = b["base_offset"].as_i64().unwrap();
                        let e = firsts.entry(tp).or_insert(o);
                        *e = (*e).min(o);
                    }
                }
            }
        }
        let mut partitions: Vec<String> = firsts.keys().cloned().collect();
        partitions.sort_by_key(|p| split(p));
        out.insert(id, (json!(state), partitions, firsts));
    }
    out
}

/// The observed transactions against the embedded cluster's: the same ids
/// and states, and for each open one its partitions and first offsets
/// (only those it names when it says its first offsets are unavailable,
/// as the book's producer id -1 may leave them ambiguous); nothing staged.
fn transaction_differences(expected: &Value, observed: &Value) -> Vec<String> {
    let want = wire_transactions(expected);
    let unavailable = observed["unavailable"].as_array().unwrap();
    let mut out = Vec::new();
    let mut got = BTreeMap::new();
    for t in observed["transactions"].as_array().unwrap() {
        let id = t["id"].as_str().unwrap().to_string();
        let partitions: Vec<String> = t["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_string())
            .collect();
        let firsts: BTreeMap<String, i64> = t["first_offsets"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_i64().unwrap()))
            .collect();
        // Unavailable: written as null, never as the snapshot's empty map.
        if !t["staged_offsets"].is_null() {
            out.push(format!("transactions[{id}]: staged offsets filled"));
        }
        got.insert(id, (t["state"].clone(), partitions, firsts));
    }
    if want.keys().collect::<Vec<_>>() != got.keys().collect::<Vec<_>>() {
        out.push(format!(
            "transactions: embedded {:?}, observed {:?}",
            want.keys().collect::<Vec<_>>(),
            got.keys().collect::<Vec<_>>()
        ));
        return out;
    }
    for (id, (state, partitions, firsts)) in &want {
        let (o_state, o_partitions, o_firsts) = &got[id];
        if state != o_state {
            out.push(format!(
                "transactions[{id}].state: embedded {state}, observed {o_state}"
            ));
        }
        let partial = unavailable.contains(&json!(format!("transactions[{id}].first_offsets")));
        let complete = state.as_str().unwrap().starts_with("complete");
        if complete && !partial {
            out.push(format!(
                "transactions[{id}]: a complete transaction's first offsets must be listed unavailable"
            ));
        }
        let fits = if partial {
            o_firsts.iter().all(|(k, v)| firsts.get(k) == Some(v))
        } else {
            o_firsts == firsts && o_partitions == partitions
        };
        if !fits {
            out.push(format!(
                "transactions[{id}]: embedded {partitions:?} {firsts:?}, observed {o_partitions:?} {o_firsts:?} (partial: {partial})"
            ));
        }
    }
    if !unavailable.contains(&json!("transactions[].staged_offsets")) {
        out.push("transactions[].staged_offsets is not listed as unavailable".into());
    }
    out
}

/// Where the embedded cluster has a transactional offset commit pending
/// (an open transaction staged it), as `committed_offsets[G][T-P] pending`:
/// what OffsetFetch with `require_stable` shows (UNSTABLE_OFFSET_COMMIT),
/// for the partitions the observer asks about (those of the cluster).
fn wire_pending(expected: &Value) -> Vec<String> {
    let partitions: Vec<String> = expected["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| format!("{}-{}", p["topic"].as_str().unwrap(), p["partition"]))
        .collect();
    let mut out = Vec::new();
    for t in expected["transactions"].as_array().unwrap() {
        if t["state"].as_str().unwrap().starts_with("complete") {
            continue;
        }
        for (group, offsets) in t["staged_offsets"].as_object().unwrap() {
            for tp in offsets.as_object().unwrap().keys() {
                if partitions.contains(tp) {
                    out.push(format!("committed_offsets[{group}][{tp}] pending"));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The committed offsets of every group and the pending commits, observed
/// against the embedded cluster's.
fn group_differences(expected: &Value, observed: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if expected["committed_offsets"] != observed["committed_offsets"] {
        out.push(format!(
            "committed_offsets: embedded {}, observed {}",
            expected["committed_offsets"], observed["committed_offsets"]
        ));
    }
    let mut pending: Vec<String> = observed["unavailable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .filter(|f| f.ends_with(" pending"))
        .collect();
    pending.sort();
    let want = wire_pending(expected);
    if pending != want {
        out.push(format!(
            "pending commits: embedded {want:?}, observed {pending:?}"
        ));
    }
    out
}

/// The bytes of broker `broker`'s log segments of partition `tp` in the
/// server's data directory.
fn log_bytes(data_dir: &Path, broker: u64, tp: &str) -> u64 {
    let dir = data_dir.join(format!("broker-{broker}")).join(tp);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum()
}

/// Each replica's DescribeLogDirs answer against the embedded cluster: a
/// running broker reports its replica's offset lag, `max(HW - LEO, 0)` of
/// the embedded state, and its log's size, the bytes of its segments on
/// disk; a stopped broker's listener is closed, so its replicas have
/// neither, and the snapshot says so.
fn log_dir_differences(expected: &Value, observed: &Value, data_dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let unavailable = observed["unavailable"].as_array().unwrap();
    // A batch filling in an accumulator goes out when its linger runs out
    // (E17), and serve's clock is real time: it may go between the
    // observation and the stop that writes the directory read here, so
    // those partitions' sizes are not compared (their lag still is).
    let filling: Vec<&str> = expected["accumulators"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|a| a["batches"].as_array().unwrap())
        .map(|b| b["partition"].as_str().unwrap())
        .collect();
    for (e, o) in expected["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .zip(observed["partitions"].as_array().unwrap())
    {
        let tp = format!("{}-{}", e["topic"].as_str().unwrap(), e["partition"]);
        let hw = e["high_watermark"].as_i64().unwrap();
        for (er, or) in e["replicas"]
            .as_array()
            .unwrap()
            .iter()
            .zip(o["replicas"].as_array().unwrap())
        {
            let broker = er["broker"].as_u64().unwrap();
            let (want_lag, want_size) = if er["stopped"] == true {
                // Unreachable, or (a listener still closing) its directory
                // offline or its connection closed: named, with why.
                let named = format!("partitions[].replicas[].offset_lag of broker {broker} (");
                if !unavailable
                    .iter()
                    .any(|f| f.as_str().unwrap().starts_with(&named))
                {
                    out.push(format!("{tp} replica {broker}: {named}…) not listed"));
                }
                (Value::Null, Value::Null)
            } else {
                let leo = er["log_end_offset"].as_i64().unwrap();
                (
                    json!((hw - leo).max(0)),
                    json!(log_bytes(data_dir, broker, &tp)),
                )
            };
            let want_size = if filling.contains(&tp.as_str()) {
                or["log_size_bytes"].clone()
            } else {
                want_size
            };
            let got = (&or["offset_lag"], &or["log_size_bytes"]);
            if got != (&want_lag, &want_size) {
                out.push(format!(
                    "{tp} replica {broker}: offset lag and size: embedded ({want_lag}, {want_size}), observed ({}, {})",
                    got.0, got.1
                ));
            }
        }
    }
    out
}

/// Serves `recording` up to `steps` (no replication of its own, so the
/// cluster stays as the steps left it), observes it, and compares with the
/// embedded cluster's state of the same steps and with what the server
/// left in its data directory.
fn observe_matches(
    recording: &str,
    steps: Option<usize>,
    fates_seen: &mut std::collections::BTreeSet<String>,
) -> Vec<String> {
    let temp = tempfile::tempdir().unwrap();
    let file = prefix(recording, steps, temp.path());
    let expected = state_of(&file);
    let mut server = Server::start(&[&file, "--auto-replicate", "0"]);
    // The groups are discovered (ListGroups); what they committed is
    // compared.
    let observed = observe(&server.bootstrap(), &[]);
    server.stop();
    let left = server.state();
    let mut out: Vec<String> = differences(&expected, &observed)
        .into_iter()
        .map(|d| format!("{recording} step {steps:?}: {d}"))
        .collect();
    // Reopening the data directory runs recovery, which finishes a
    // decided transaction and drops pending operations: the directory
    // equals the served cluster only when neither is there.
    let settled = expected["pending"] == json!([])
        && expected["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| !t["state"].as_str().unwrap().starts_with("prepare"));
    if settled {
        out.extend(
            differences(&left, &observed)
                .into_iter()
                .map(|d| format!("{recording} step {steps:?}, data dir: {d}")),
        );
    }
    for p in observed["partitions"].as_array().unwrap() {
        for b in p["batches"].as_array().unwrap() {
            fates_seen.insert(b["fate"].as_str().unwrap().to_string());
        }
    }
    let unavailable = observed["unavailable"].as_array().unwrap();
    for field in [
        "journal",
        "transactions[].staged_offsets",
        "partitions[].replicas[].log_end_offset",
    ] {
        if !unavailable.contains(&json!(field)) {
            out.push(format!("{recording}: {field} is not listed as unavailable"));
        }
    }
    out.extend(
        transaction_differences(&expected, &observed)
            .into_iter()
            .chain(group_differences(&expected, &observed))
            .map(|d| format!("{recording} step {steps:?}: {d}")),
    );
    if unavailable.iter().any(|f| {
        f.as_str().unwrap().starts_with("committed_offsets")
            && !f.as_str().unwrap().ends_with(" pending")
    }) {
        out.push(format!(
            "{recording}: committed_offsets listed unavailable although every group is listed: {unavailable:?}"
        ));
    }
    // What it cannot know is written as null, not as the snapshot's
    // default.
    let leos_null = observed["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["log_end_offset"].is_null() && p["replicas"][0]["lag"].is_null());
    if !observed["journal"].is_null() || !observed["clock_ms"].is_null() || !leos_null {
        out.push(format!(
            "{recording}: the observer filled what it cannot know: journal {}, clock_ms {}, log end offsets and lags null: {leos_null}",
            observed["journal"], observed["clock_ms"]
        ));
    }
    out
}

#[test]
fn the_observer_sees_what_the_embedded_cluster_holds_for_every_field_the_protocol_exposes() {
    let cases: &[(&str, Option<usize>)] = &[
        ("recordings/ch05-high-watermark.jsonl", None),
        ("recordings/ch06-isr-shrink.jsonl", None),
        ("recordings/ch06-leader-failure.jsonl", None),
        ("recordings/ch08-abort.jsonl", None),
        ("recordings/ch08-abort.jsonl", Some(3)),
        ("recordings/ch08-visibility.jsonl", Some(2)),
        ("recordings/ch08-visibility.jsonl", None),
        ("recordings/ch08-lso-blocks.jsonl", Some(5)),
        ("recordings/ch08-lso-blocks.jsonl", Some(7)),
        ("recordings/ch08-lso-blocks.jsonl", Some(8)),
        ("recordings/ch08-lso-blocks.jsonl", None),
        ("recordings/ch08-acks-all-pending.jsonl", None),
        ("recordings/ch08-reused-id.jsonl", None),
        ("recordings/ch08-offsets.jsonl", None),
        ("recordings/ch08-zombie.jsonl", None),
        ("recordings/ch08-missing-markers.jsonl", None),
        ("recordings/ch08-missing-markers-kafka.jsonl", None),
        ("recordings/ch08-torn-journal.jsonl", None),
        ("recordings/ch08-cut-points.jsonl", None),
    ];
    // A kafka-rules commit whose marker waits for broker 2: deciding, its
    // data below the HW, its marker not (the `decided` fate, told by
    // DescribeTransactions' producer id and epoch).
    let temp = tempfile::tempdir().unwrap();
    let deciding = temp.path().join("deciding.jsonl");
    std::fs::write(
        &deciding,
        [
            r#"{"mk_recording":1,"title":"deciding","rules":"kafka","cluster":{"brokers":[1,2],"topics":[{"name":"out","partitions":1,"replication_factor":2}],"config":{}}}"#,
            r#"{"at_ms":0,"action":{"begin":{"txn":"tx-1"}}}"#,
            r#"{"at_ms":0,"action":{"send":{"txn":"tx-1","topic":"out","value":"a"}}}"#,
            r#"{"at_ms":0,"action":{"replicate":{}}}"#,
            r#"{"at_ms":0,"action":{"replicate":{}}}"#,
            r#"{"at_ms":0,"action":{"commit":{"txn":"tx-1"}}}"#,
        ]
        .join("\n")
            + "\n",
    )
    .unwrap();
    // Topics with settings of their own (DescribeConfigs fills `config`)
    // beside one without, one of them altered after its creation.
    let configured = temp.path().join("configured.jsonl");
    std::fs::write(
        &configured,
        [
            r#"{"mk_recording":1,"title":"configured","rules":"kafka","cluster":{"brokers":[1],"topics":[{"name":"plain","partitions":1,"replication_factor":1}],"config":{}}}"#,
            r#"{"at_ms":0,"action":{"create_topic":{"name":"kv","partitions":2,"replication_factor":1,"config":{"cleanup_policy":"compact","delete_retention_ms":0}}}}"#,
            r#"{"at_ms":0,"action":{"create_topic":{"name":"short","partitions":1,"replication_factor":1,"config":{"retention_ms":60000,"retention_bytes":4096}}}}"#,
            r#"{"at_ms":0,"action":{"produce":{"topic":"kv","key":"a","value":"1"}}}"#,
            // A LogAppendTime topic's type, and a config altered after
            // creation (IncrementalAlterConfigs' step), read the same.
            r#"{"at_ms":0,"action":{"create_topic":{"name":"stamped","partitions":1,"replication_factor":1,"timestamp_type":"LogAppendTime"}}}"#,
            r#"{"at_ms":0,"action":{"alter_topic_config":{"topic":"short","config":{"retention_bytes":8192,"cleanup_policy":"compact"}}}}"#,
            // A topic's own min.insync.replicas (3, above its one replica:
            // kept as given, applied as 1).
            r#"{"at_ms":0,"action":{"create_topic":{"name":"guarded","partitions":1,"replication_factor":1,"config":{"min_insync_replicas":3}}}}"#,
            r#"{"at_ms":0,"action":{"produce":{"topic":"guarded","value":"g","acks":"all"}}}"#,
        ]
        .join("\n")
            + "\n",
    )
    .unwrap();
    let mut all = Vec::new();
    let mut fates_seen = std::collections::BTreeSet::new();
    for (recording, steps) in cases.iter().copied().chain([
        (deciding.to_str().unwrap(), None),
        (configured.to_str().unwrap(), None),
    ]) {
        all.extend(observe_matches(recording, steps, &mut fates_seen));
    }
    assert!(all.is_empty(), "{}", all.join("\n"));
    // The cases reach every fate the wire rule can give a fetched batch.
    let every: Vec<String> = [
        "aborted",
        "committed",
        "control",
        "decided",
        "held_back",
        "ongoing",
    ]
    .map(String::from)
    .into();
    assert_eq!(fates_seen.into_iter().collect::<Vec<_>>(), every);
}

/// Runs `mk-tui observe ARGS`; asserts exit 2, nothing on standard output,
/// and one line on standard error; returns that line.
fn refused(args: &[&str]) -> String {
    let mut all = vec!["observe"];
    all.extend_from_slice(args);
    let out = mk_tui(&all);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?} printed {:?}", out.stdout);
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    err
}

#[test]
fn sasl_and_ssl_bootstraps_are_refused_in_one_line_and_the_help_says_why() {
    for url in [
        "SASL_SSL://127.0.0.1:9093",
        "SSL://127.0.0.1:9093",
        "SASL_PLAINTEXT://h:1",
    ] {
        let err = refused(&["--bootstrap", url, "--state"]);
        assert!(err.contains(url) && err.contains("out of scope"), "{err}");
    }
    let help = mk_tui(&["observe", "--help"]);
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(
        text.contains("TLS") && text.contains("out of scope"),
        "{text}"
    );
}

/// A loopback port nobody listens on (bound, then closed).
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn an_unreachable_broker_is_one_line_naming_its_address() {
    let address = format!("127.0.0.1:{}", closed_port());
    let err = refused(&["--bootstrap", &address, "--state"]);
    assert!(
        err.contains(&address) && err.contains("cannot connect"),
        "{err}"
    );
    // Every bootstrap address is tried, and each named.
    let other = format!("127.0.0.1:{}", closed_port());
    let err = refused(&["--bootstrap", &format!("{address},{other}"), "--render"]);
    assert!(err.contains(&address) && err.contains(&other), "{err}");
}

#[test]
fn a_missing_topic_is_named_and_never_created() {
    let mut server = Server::start(&["recordings/ch08-abort.jsonl", "--auto-replicate", "0"]);
    let err = refused(&[
        "--bootstrap",
        &server.bootstrap(),
        "--topic",
        "nope",
        "--state",
    ]);
    assert!(err.contains("topic nope: not found"), "{err}");
    let named = observe_topic(&server.bootstrap(), "out");
    assert_eq!(named["partitions"].as_array().unwrap().len(), 1);
    // A topic named twice is observed once (a new user's review: each
    // partition was listed twice and the consumers' lists came back empty).
    let twice = mk_tui(&[
        "observe",
        "--bootstrap",
        &server.bootstrap(),
        "--topic",
        "out",
        "--topic",
        "out",
        "--state",
    ]);
    let twice: Value = serde_json::from_slice(&twice.stdout).unwrap();
    assert_eq!(twice, named);
    server.stop();
    let left = server.state();
    let topics: Vec<&Value> = left["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["topic"])
        .collect();
    assert_eq!(topics, [&json!("out")], "the observer created a topic");
}

fn observe_topic(bootstrap: &str, topic: &str) -> Value {
    let out = mk_tui(&[
        "observe",
        "--bootstrap",
        bootstrap,
        "--topic",
        topic,
        "--state",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A fake broker on a free loopback port: for each connection, reads one
/// request and hands it to `answer`, which writes what it likes (or
/// nothing) before the connection is closed. Stops after `connections`.
fn fake_broker(connections: usize, answer: fn(&mut std::net::TcpStream, &[u8])) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for _ in 0..connections {
            let Ok((mut s, _)) = listener.accept() else {
                return;
            };
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut size = [0u8; 4];
            if s.read_exact(&mut size).is_err() {
                continue;
            }
            let mut request = vec![0u8; i32::from_be_bytes(size) as usize];
            if s.read_exact(&mut request).is_ok() {
                answer(&mut s, &request);
            }
        }
    });
    address
}

#[test]
fn a_broker_that_closes_the_connection_is_one_line() {
    let address = fake_broker(1, |_, _| {});
    let err = refused(&["--bootstrap", &address, "--state"]);
    assert!(
        err.contains(&address) && err.contains("ApiVersions v0") && err.contains("closed"),
        "{err}"
    );
    // Closed inside the response: a size that promises more than comes.
    let address = fake_broker(1, |s, _| {
        let _ = s.write_all(&[0, 0, 0, 100, 0, 0]);
    });
    let err = refused(&["--bootstrap", &address, "--state"]);
    assert!(err.contains("inside its response"), "{err}");
}

#[test]
fn a_broker_without_a_usable_version_is_one_line_naming_the_api_and_both_ranges() {
    // ApiVersions v0: Metadata only at v0-3, which may create topics.
    let address = fake_broker(1, |s, request| {
        let correlation = &request[4..8];
        let mut body = correlation.to_vec();
        body.extend_from_slice(&0i16.to_be_bytes()); // error code
        body.extend_from_slice(&2i32.to_be_bytes()); // two APIs
        for (key, min, max) in [(18i16, 0i16, 3i16), (3, 0, 3)] {
            for v in [key, min, max] {
                body.extend_from_slice(&v.to_be_bytes());
            }
        }
        let mut frame = (body.len() as i32).to_be_bytes().to_vec();
        frame.extend_from_slice(&body);
        let _ = s.write_all(&frame);
    });
    let err = refused(&["--bootstrap", &address, "--state"]);
    assert!(
        err.contains("unsupported API version")
            && err.contains("Metadata v0-3")
            && err.contains("v4-12")
            && err.contains(&address),
        "{err}"
    );
}

#[test]
fn a_long_log_is_read_as_a_bounded_tail_and_the_snapshot_says_what_it_left_out() {
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("long.jsonl");
    let mut text = String::from(
        r#"{"mk_recording":1,"title":"long","rules":"minikafka","cluster":{"brokers":[1],"topics":[{"name":"out","partitions":1,"replication_factor":1}],"config":{}}}"#,
    );
    text.push('\n');
    let n = 1500;
    for i in 0..n {
        text.push_str(&format!(
            "{{\"at_ms\":0,\"action\":{{\"produce\":{{\"topic\":\"out\",\"value\":\"v{i}\"}}}}}}\n"
        ));
    }
    std::fs::write(&file, text).unwrap();
    let file = file.to_str().unwrap();
    let expected = state_of(file);
    let mut server = Server::start(&[file, "--auto-replicate", "0"]);
    let observed = observe(&server.bootstrap(), &[]);
    server.stop();
    let p = &observed["partitions"][0];
    assert_eq!(p["high_watermark"], n);
    let batches = p["batches"].as_array().unwrap();
    let first = batches[0]["base_offset"].as_i64().unwrap();
    let end = batches.last().unwrap()["last_offset"].as_i64().unwrap() + 1;
    // From at most 1024 offsets below the HW, at most 64 KiB of them.
    assert_eq!(first, n - 1024);
    assert!(
        end - first < 1024,
        "{first}..{end}: not cut by the byte limit"
    );
    let unavailable = observed["unavailable"].as_array().unwrap();
    for field in [
        format!("partitions[out-0].batches outside {first}..{end}"),
        "consumers[out-0]".to_string(),
    ] {
        assert!(
            unavailable.contains(&json!(field)),
            "{field} not in {unavailable:?}"
        );
    }
    // What it holds is the embedded cluster's, batch for batch.
    let held: Vec<Value> = expected["partitions"][0]["batches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| (first..end).contains(&b["base_offset"].as_i64().unwrap()))
        .map(wire_batch)
        .collect();
    assert_eq!(held, batches.iter().map(wire_batch).collect::<Vec<_>>());
}

#[test]
fn render_draws_the_observed_snapshot_as_render_draws_a_saved_state() {
    let mut server = Server::start(&["recordings/ch08-abort.jsonl", "--auto-replicate", "0"]);
    let boot = server.bootstrap();
    let frame = mk_tui(&[
        "observe",
        "--bootstrap",
        &boot,
        "--render",
        "--size",
        "100x30",
    ]);
    let state = mk_tui(&["observe", "--bootstrap", &boot, "--state"]);
    let bad_size = mk_tui(&["observe", "--bootstrap", &boot, "--render", "--size", "0x0"]);
    server.stop();
    assert!(
        frame.status.success(),
        "{}",
        String::from_utf8_lossy(&frame.stderr)
    );
    let frame = String::from_utf8(frame.stdout).unwrap();
    assert_eq!(frame.lines().count(), 30, "{frame}");
    assert!(frame.contains("out-0 leader 1 e0 HW 5 LSO 5"), "{frame}");
    // No label says what the protocol could not tell: the LEO, the clock,
    // the journal, what is pending, the replicas' logs, and no engine key.
    for true_label in [
        "│ observed │",
        "LSO 5 LEO ?",
        "clock ?",
        "journal not visible over Kafka",
        // Its transactions, from the admin APIs.
        "tx-a complete_abort",
        "leader to the HW",
        "1 ldr│",
        "? help q quit",
        // DescribeLogDirs' offset lag, in the lag column.
        "≥HW",
    ] {
        assert!(frame.contains(true_label), "{true_label:?} in:\n{frame}");
    }
    for false_label in [
        "LEO 0",
        "2 isr│",
        "saved state",
        "clock 0 ms",
        "no journal frames",
        "nothing pending",
        "p produce",
    ] {
        assert!(!frame.contains(false_label), "{false_label:?} in:\n{frame}");
    }
    let temp = tempfile::tempdir().unwrap();
    let saved = temp.path().join("observed.json");
    std::fs::write(&saved, &state.stdout).unwrap();
    let drawn = mk_tui(&[
        "render",
        "--state",
        saved.to_str().unwrap(),
        "--size",
        "100x30",
    ]);
    assert_eq!(String::from_utf8(drawn.stdout).unwrap(), frame);
    assert_eq!(bad_size.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_size.stderr).contains("--size"));
}

/// Every recording, after every one of its steps: the serve holds the
/// cluster those steps left, and what the admin APIs give the observer
/// (the open transactions, their states and first offsets; every group's
/// committed offsets and where a transactional commit is pending; each
/// replica's offset lag and log size) equals the embedded cluster's own.
#[test]
fn after_every_step_of_every_recording_the_observed_transactions_and_offsets_are_the_embedded_ones()
{
    let mut all = Vec::new();
    let mut open_seen = 0;
    let mut leaderless = Vec::new();
    let mut pending_seen = 0;
    let mut lagging_seen = 0;
    let mut files: Vec<_> = std::fs::read_dir("recordings")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    for file in files {
        let recording = file.to_str().unwrap();
        let steps = std::fs::read_to_string(&file).unwrap().lines().count() - 1;
        for n in 0..=steps {
            let temp = tempfile::tempdir().unwrap();
            let prefix = prefix(recording, Some(n), temp.path());
            let expected = state_of(&prefix);
            let mut server = Server::start(&[&prefix, "--auto-replicate", "0"]);
            // Every broker: a step may stop the first.
            let bootstrap: Vec<String> = server
                .brokers
                .iter()
                .map(|(_, port)| format!("127.0.0.1:{port}"))
                .collect();
            let observed = try_observe(&bootstrap.join(","), &[]);
            server.stop();
            // A partition without a leader (its broker stopped, no other
            // in sync) ends an observation (docs/observe.md "Errors").
            let observed = match observed {
                Ok(o) => o,
                Err(e) if e.contains("no leader") => {
                    leaderless.push(format!("{recording} after step {n}"));
                    continue;
                }
                Err(e) => panic!("{recording} after step {n}: observe failed: {e}"),
            };
            open_seen += observed["transactions"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|t| !t["first_offsets"].as_object().unwrap().is_empty())
                .count();
            pending_seen += wire_pending(&expected).len();
            lagging_seen += observed["partitions"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|p| p["replicas"].as_array().unwrap())
                .filter(|r| r["offset_lag"].as_i64() > Some(0))
                .count();
            all.extend(
                transaction_differences(&expected, &observed)
                    .into_iter()
                    .chain(group_differences(&expected, &observed))
                    .chain(log_dir_differences(&expected, &observed, &server.data_dir))
                    .map(|d| format!("{recording} after step {n}: {d}")),
            );
        }
    }
    assert!(all.is_empty(), "{}", all.join("\n"));
    assert!(open_seen > 10, "only {open_seen} open transactions seen");
    assert!(
        pending_seen >= 2,
        "only {pending_seen} pending offset commits seen"
    );
    assert!(
        lagging_seen >= 2,
        "only {lagging_seen} replicas below the HW seen"
    );
    assert!(
        leaderless.len() < 12,
        "too many steps could not be observed: {leaderless:?}"
    );
}

#[test]
fn named_groups_are_read_alone_and_the_others_are_said_to_be_left_out() {
    let mut server = Server::start(&["recordings/ch08-offsets.jsonl", "--auto-replicate", "0"]);
    let boot = server.bootstrap();
    let all = observe(&boot, &[]);
    let named = observe(&boot, &["workers".to_string()]);
    let none = observe(&boot, &["nobody".to_string()]);
    server.stop();
    assert_eq!(all["committed_offsets"], json!({"workers": {"in-0": 7}}));
    assert_eq!(named["committed_offsets"], all["committed_offsets"]);
    assert_eq!(
        none["committed_offsets"],
        json!({}),
        "a group with no offsets"
    );
    for s in [&named, &none] {
        assert!(
            s["unavailable"]
                .as_array()
                .unwrap()
                .contains(&json!("committed_offsets of groups not named with --group")),
            "{}",
            s["unavailable"]
        );
    }
}

#[test]
fn at_most_256_discovered_groups_are_read_and_the_rest_are_counted() {
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("groups.jsonl");
    let mut text = String::from(
        r#"{"mk_recording":1,"title":"groups","rules":"minikafka","cluster":{"brokers":[1],"topics":[{"name":"out","partitions":1,"replication_factor":1}],"config":{}}}"#,
    );
    text.push('\n');
    for g in 0..257 {
        text.push_str(&format!(
            "{{\"at_ms\":0,\"action\":{{\"commit_offsets\":{{\"group\":\"g{g:03}\",\"offsets\":[{{\"topic\":\"out\",\"partition\":0,\"offset\":{g}}}]}}}}}}\n"
        ));
    }
    std::fs::write(&file, text).unwrap();
    let mut server = Server::start(&[file.to_str().unwrap(), "--auto-replicate", "0"]);
    let observed = observe(&server.bootstrap(), &[]);
    server.stop();
    let groups = observed["committed_offsets"].as_object().unwrap();
    assert_eq!(groups.len(), 256);
    assert_eq!(groups["g255"], json!({"out-0": 255}), "in id order");
    assert!(!groups.contains_key("g256"));
    assert!(
        observed["unavailable"].as_array().unwrap().contains(&json!(
            "committed_offsets of 1 groups past the first 256 (by id)"
        )),
        "{}",
        observed["unavailable"]
    );
}
