//! The load test of issue 14 item 6: 50 producer connections at once on
//! loopback for a bounded time, half with acks=1 and half with acks=all,
//! each counting what the server acknowledged. After a clean stop,
//! `mk-tui state --data-dir D` must hold every acknowledged record at the
//! offset it was acknowledged at, and no record twice: the producers are
//! plain ones that never retry, so a duplicate could only be the server's.
//!
//! Raw protocol from Rust (`wire`), one request in flight per connection,
//! so it needs no Python client and always runs. The figures are printed
//! (`cargo test --test serve load -- --nocapture`); the test asserts
//! correctness only, never speed (docs/performance.md).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::python;
use crate::server::{Server, partition};
use crate::wire::{self, Conn};

const CONNECTIONS: usize = 50;
/// How long the producers send.
const RUN: Duration = Duration::from_secs(3);
/// Records per produce request.
const PER_REQUEST: usize = 5;
/// Bytes per value.
const VALUE_BYTES: usize = 100;
const PARTITIONS: i32 = 3;

/// What one connection was told.
struct Tally {
    acks: i16,
    /// (partition, offset, value) of every acknowledged record.
    acked: Vec<(i32, i64, String)>,
    requests: usize,
    /// Requests answered with an error code (nothing counted for them).
    refused: BTreeMap<i16, usize>,
}

/// A value naming its connection and sequence number, padded to
/// [`VALUE_BYTES`].
fn value(connection: usize, seq: usize) -> String {
    let mut v = format!("c{connection:02}-{seq:08}-");
    v.extend(std::iter::repeat_n('x', VALUE_BYTES - v.len()));
    v
}

fn producer(connection: usize, port: u16, partition: i32, acks: i16, until: Instant) -> Tally {
    let mut conn = Conn::connect(port, &format!("load-{connection}"));
    let mut tally = Tally {
        acks,
        acked: Vec::new(),
        requests: 0,
        refused: BTreeMap::new(),
    };
    let mut seq = 0;
    while Instant::now() < until {
        let values: Vec<String> = (seq..seq + PER_REQUEST)
            .map(|s| value(connection, s))
            .collect();
        seq += PER_REQUEST;
        let request = wire::produce("load", partition, acks, wire::batch(&values));
        let response = conn
            .call(&request, 9)
            .unwrap_or_else(|| panic!("connection {connection} closed by the server"));
        tally.requests += 1;
        match wire::produced(&response) {
            (0, base) => {
                for (k, v) in values.into_iter().enumerate() {
                    tally.acked.push((partition, base + k as i64, v));
                }
            }
            (code, _) => *tally.refused.entry(code).or_default() += 1,
        }
    }
    tally
}

#[test]
fn fifty_producer_connections_lose_no_acknowledged_record() {
    let mut server = Server::start(&[]);
    let mut admin = Conn::connect(server.port(1), "admin");
    wire::create_topic(&mut admin, "load", PARTITIONS, 3);
    let leaders = wire::leaders(&mut admin, "load");
    let start = Instant::now();
    let until = start + RUN;
    let handles: Vec<_> = (0..CONNECTIONS)
        .map(|c| {
            let partition = (c % PARTITIONS as usize) as i32;
            let port = server.port(leaders[partition as usize] as u32);
            let acks = if c % 2 == 0 { 1 } else { -1 };
            std::thread::spawn(move || producer(c, port, partition, acks, until))
        })
        .collect();
    let tallies: Vec<Tally> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let elapsed = start.elapsed();
    let log = server.stop();
    assert!(!log.contains("panicked"), "{log}");
    let state = server.state();

    let mut acked_by_level: BTreeMap<i16, usize> = BTreeMap::new();
    let mut refused: BTreeMap<i16, usize> = BTreeMap::new();
    let mut requests = 0;
    let mut all = Vec::new();
    for t in &tallies {
        requests += t.requests;
        *acked_by_level.entry(t.acks).or_default() += t.acked.len();
        for (code, n) in &t.refused {
            *refused.entry(*code).or_default() += n;
        }
        all.extend(t.acked.iter().map(|(p, o, v)| (*p, *o, t.acks, v.clone())));
    }
    let in_log = check_log(&state, &all);
    let acked: usize = acked_by_level.values().sum();
    println!(
        "load: {CONNECTIONS} connections for {:.2} s: {requests} requests, {acked} records \
         acknowledged ({} acks=1, {} acks=all), {} in the log, refused {refused:?}; \
         {:.0} records/s acknowledged",
        elapsed.as_secs_f64(),
        acked_by_level.get(&1).copied().unwrap_or(0),
        acked_by_level.get(&-1).copied().unwrap_or(0),
        in_log,
        acked as f64 / elapsed.as_secs_f64(),
    );
    assert!(
        acked_by_level.get(&1).is_some_and(|n| *n > 0)
            && acked_by_level.get(&-1).is_some_and(|n| *n > 0),
        "both acks levels were acknowledged: {acked_by_level:?}"
    );
    assert!(
        tallies.iter().all(|t| t.requests > 0),
        "every connection was served"
    );
}

/// Every acknowledged (partition, offset, acks, value) is in the leader's
/// log of `state` at that offset, an acks=all one below the HW, and no
/// value is in the log twice. Returns how many records the logs hold.
fn check_log(state: &serde_json::Value, acked: &[(i32, i64, i16, String)]) -> usize {
    let mut log_of: BTreeMap<(i32, i64), String> = BTreeMap::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut high_watermark = BTreeMap::new();
    for p in 0..PARTITIONS {
        let part = partition(state, "load", p as u64);
        high_watermark.insert(p, part["high_watermark"].as_i64().unwrap());
        for batch in part["batches"].as_array().unwrap() {
            for r in batch["records"].as_array().unwrap() {
                let v = r["value"].as_str().unwrap().to_string();
                log_of.insert((p, r["offset"].as_i64().unwrap()), v.clone());
                *seen.entry(v).or_default() += 1;
            }
        }
    }
    let duplicates: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        duplicates.is_empty(),
        "records written twice: {duplicates:?}"
    );
    for (p, offset, acks, v) in acked {
        assert_eq!(
            log_of.get(&(*p, *offset)),
            Some(v),
            "acknowledged load-{p} offset {offset} is not in the log as sent"
        );
        if *acks == -1 {
            assert!(
                *offset < high_watermark[p],
                "an acknowledged acks=all record at or past the HW: load-{p} offset {offset}"
            );
        }
    }
    log_of.len()
}

/// The same with a real client: 50 confluent-kafka producers in one
/// Python process, one thread each (`tests/clients/ck_load.py`), retries
/// and idempotence off.
#[test]
fn fifty_confluent_kafka_producers_lose_no_acknowledged_record() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut server = Server::start(&[]);
    let boot = server.bootstrap();
    let mut admin = Conn::connect(server.port(1), "admin");
    wire::create_topic(&mut admin, "load", PARTITIONS, 3);
    let out = python::run(
        &py,
        "ck_load.py",
        &[
            &boot,
            "load",
            &CONNECTIONS.to_string(),
            &PARTITIONS.to_string(),
            &RUN.as_secs_f64().to_string(),
        ],
    );
    let log = server.stop();
    assert!(!log.contains("panicked"), "{log}");
    let mut acked = Vec::new();
    let mut failed = None;
    let mut elapsed = "";
    for line in out.lines() {
        let words: Vec<&str> = line.split(' ').collect();
        match words[..] {
            ["acked", p, o, acks, v] => acked.push((
                p.parse().unwrap(),
                o.parse().unwrap(),
                if acks == "all" { -1 } else { 1 },
                v.to_string(),
            )),
            ["failed", n] => failed = Some(n.parse::<usize>().unwrap()),
            ["elapsed", s] => elapsed = s,
            _ => panic!("unexpected line {line:?}"),
        }
    }
    let in_log = check_log(&server.state(), &acked);
    let by_level = |level: i16| acked.iter().filter(|a| a.2 == level).count();
    println!(
        "load (confluent-kafka): {CONNECTIONS} producers for {elapsed} s: {} records \
         acknowledged ({} acks=1, {} acks=all), {in_log} in the log, {} failed",
        acked.len(),
        by_level(1),
        by_level(-1),
        failed.unwrap()
    );
    assert!(
        by_level(1) > 0 && by_level(-1) > 0,
        "both acks levels acknowledged"
    );
}
