//! Issue 25 item 3, with a real client: `serve REC --rules kafka
//! --data-dir D` (segments of 300 bytes, an hour on the clock, a
//! transaction of `app` left open), stopped, then `serve --data-dir D`
//! without flags. The restarted server keeps the rules, the configuration
//! and the clock (`cluster.json`): segments still roll at 300 bytes, a new
//! instance of `app` commits (the book's rules answered
//! CONCURRENT_TRANSACTIONS), and LogAppendTime stamps go on from where
//! they were, at the wall clock's time (they were an hour back, or rather
//! the old ones an hour ahead).

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::json;

use crate::python;
use crate::server::Server;

fn unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn segments(data: &Path) -> usize {
    std::fs::read_dir(data.join("broker-1/out-0"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "log")
        })
        .count()
}

/// `lat OFFSET TIMESTAMP TYPE` lines: (offset, timestamp).
fn stamps(out: &str) -> Vec<(i64, i64)> {
    out.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            match w[..] {
                ["lat", offset, ts, "log_append"] => {
                    Some((offset.parse().unwrap(), ts.parse().unwrap()))
                }
                _ => None,
            }
        })
        .collect()
}

#[test]
fn a_restart_without_flags_keeps_rules_segments_and_clock() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let keep = tempfile::tempdir().unwrap();
    let data = keep.path().join("data");
    let rec = keep.path().join("rec.jsonl");
    let header = json!({"mk_recording": 1, "title": "reopen",
        "cluster": {"brokers": [1, 2, 3],
            "topics": [{"name": "out", "partitions": 1, "replication_factor": 3}],
            "config": {"segment_max_bytes": 300}}});
    let steps = [
        json!({"create_topic": {"name": "lat", "partitions": 1, "replication_factor": 3,
            "timestamp_type": "LogAppendTime"}}),
        json!({"produce": {"topic": "out", "partition": 0, "value": "rec"}}),
        json!({"advance_clock": {"ms": 3_600_000}}),
        json!({"begin": {"txn": "app"}}),
        json!({"send": {"txn": "app", "topic": "out", "partition": 0, "value": "abandoned"}}),
        json!({"replicate": {}}),
    ];
    let mut lines = vec![header.to_string()];
    lines.extend(steps.iter().map(|a| json!({"action": a}).to_string()));
    std::fs::write(&rec, lines.join("\n") + "\n").unwrap();

    let first_at = unix_ms();
    let rec_arg = rec.to_str().unwrap();
    let args = [
        "serve",
        rec_arg,
        "--rules",
        "kafka",
        "--listen",
        "127.0.0.1:0",
    ];
    let mut server = Server::start_with(tempfile::tempdir().unwrap(), data.clone(), &args);
    let before = python::run(&py, "ck_reopen.py", &[&server.bootstrap(), "before"]);
    assert_eq!(before.trim(), "produced 3", "{before}");
    let first_end = unix_ms();
    server.stop();
    drop(server);
    let segments_before = segments(&data);

    let args = ["serve", "--listen", "127.0.0.1:0"];
    let mut server = Server::start_with(tempfile::tempdir().unwrap(), data.clone(), &args);
    let second_at = unix_ms();
    let after = python::run(&py, "ck_reopen.py", &[&server.bootstrap(), "after"]);
    let second_end = unix_ms();
    let log = server.stop();
    // The restart says what it reopened: the rules its cluster.json kept
    // (none given), its topics, and what recovery did (app's transaction,
    // abandoned at the stop, is still open).
    assert!(
        log.lines().any(|l| l.starts_with("mk-tui serve: reopened ")
            && l.contains(
                ": rules kafka (kept in its cluster.json), 2 topics, 2 partitions; recovery"
            )
            && l.ends_with("left app open (ongoing)")),
        "{log}"
    );
    assert!(
        after.contains("txn app ok\n"),
        "a new instance of app fences the abandoned one:\n{after}\n{log}"
    );
    assert!(after.contains("produced 8\n"), "{after}");
    assert!(
        after.contains("committed rec fresh 00xxx 01xxx"),
        "read_committed: the abandoned write aborted, fresh committed:\n{after}"
    );
    assert!(
        segments(&data) >= segments_before + 2,
        "eight records of 100 bytes roll 300-byte segments: {} then {}",
        segments_before,
        segments(&data)
    );
    let lat = stamps(&after);
    assert_eq!(
        lat.iter().map(|(o, _)| *o).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4, 5],
        "{after}"
    );
    let slack = 2_000;
    for &(offset, ts) in &lat {
        let (from, to) = if offset < 3 {
            (first_at, first_end)
        } else {
            (second_at, second_end)
        };
        assert!(
            (from - slack..=to + slack).contains(&ts),
            "lat-0 offset {offset} stamped {ts}, appended between {from} and {to}:\n{after}"
        );
    }
    assert!(
        lat.windows(2).all(|w| w[0].1 <= w[1].1),
        "append times monotonic across the restart: {lat:?}"
    );
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(data.join("cluster.json")).unwrap()).unwrap();
    assert_eq!(file["rules"], "kafka");
    assert_eq!(file["config"]["segment_max_bytes"], 300);
    assert!(file["clock_ms"].as_u64().unwrap() > 3_600_000, "{file}");

    // Killed (-9), so the clock in cluster.json is behind (written every
    // 5 s), down for two seconds, restarted: the append times still go on,
    // and the engine clock counted the time it was down.
    let args = ["serve", "--listen", "127.0.0.1:0"];
    let server = Server::start_with(tempfile::tempdir().unwrap(), data.clone(), &args);
    let third_at = unix_ms();
    let third = python::run(&py, "ck_reopen.py", &[&server.bootstrap(), "before"]);
    assert_eq!(third.trim(), "produced 3", "{third}");
    let third_end = unix_ms();
    drop(server);
    std::thread::sleep(std::time::Duration::from_secs(2));
    let mut server = Server::start_with(tempfile::tempdir().unwrap(), data.clone(), &args);
    let fourth_at = unix_ms();
    let fourth = python::run(&py, "ck_reopen.py", &[&server.bootstrap(), "lat", "12"]);
    let fourth_end = unix_ms();
    server.stop();
    let lat = stamps(&fourth);
    assert_eq!(lat.len(), 12, "{fourth}");
    for &(offset, ts) in &lat[6..] {
        let (from, to) = if offset < 9 {
            (third_at, third_end)
        } else {
            (fourth_at, fourth_end)
        };
        assert!(
            (from - slack..=to + slack).contains(&ts),
            "lat-0 offset {offset} stamped {ts}, appended between {from} and {to}:\n{fourth}"
        );
    }
    assert!(
        lat.windows(2).all(|w| w[0].1 <= w[1].1),
        "append times monotonic across a kill -9: {lat:?}"
    );
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(data.join("cluster.json")).unwrap()).unwrap();
    let origin = file["unix_origin_ms"].as_i64().unwrap();
    let clock = file["clock_ms"].as_i64().unwrap();
    let stopped = unix_ms();
    assert!(
        (stopped - slack - 1_000..=stopped).contains(&(origin + clock)),
        "the engine clock is the wall clock's time since the origin, the time down included: origin {origin} + clock {clock} vs {stopped}"
    );
}
