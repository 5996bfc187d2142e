//! Issue 23, measured by hand: `mk-tui observe` of a cluster with many
//! partitions. Starts the Apache Kafka 4.4 reference cluster of the tests
//! (tests/kafka-ref/, three KRaft nodes on loopback), creates `TOPICS`
//! topics of `PARTITIONS` partitions (replication factor 3) with
//! `RECORDS` records of 100 B in each partition (Kafka's Java client,
//! tests/kafka-ref/java/ManyTopics.java), then times `ROUNDS` whole
//! observations (a live refresh is one: every request of
//! docs/observe.md, new connections each time), in process, and prints
//! their median, fastest and slowest, the snapshot's size as JSON, and
//! this process's peak RSS (`VmHWM`) before the first observation and
//! after the last. One topic alone (`--topic`) is timed the same way
//! beside it, for scale. The figures are in docs/observe.md "At scale".
//!
//! Run: `cargo run --release --example observe_scale -- [TOPICS [PARTITIONS [RECORDS]]]`
//! (defaults 200 6 10; needs Java 17 and Maven, as tests/kafka-ref does).

#[allow(dead_code)]
#[path = "../tests/common/kafka_ref.rs"]
mod kafka_ref;

use std::time::{Duration, Instant};

use minikafka::observe::{Options, observe};

const ROUNDS: usize = 10;
/// Topics created per Java run (each run is bounded by kafka_ref's 120 s).
const CHUNK: usize = 50;

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn arg(n: usize, default: usize) -> usize {
    std::env::args()
        .nth(n)
        .map_or(default, |a| a.parse().expect("a count"))
}

/// `ROUNDS` observations: (median, fastest, slowest, JSON bytes,
/// partitions, batches).
fn time(options: &Options) -> (Duration, Duration, Duration, usize, usize, usize) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..ROUNDS {
        let t = Instant::now();
        let snapshot = observe(options).unwrap_or_else(|e| panic!("observe: {e}"));
        times.push(t.elapsed());
        last = Some(snapshot);
    }
    times.sort();
    let snapshot = last.unwrap();
    let batches = snapshot.partitions.iter().map(|p| p.batches.len()).sum();
    let json = serde_json::to_string(&snapshot).unwrap().len();
    (
        times[ROUNDS / 2],
        times[0],
        times[ROUNDS - 1],
        json,
        snapshot.partitions.len(),
        batches,
    )
}

fn main() {
    let (topics, partitions, records) = (arg(1, 200), arg(2, 6), arg(3, 10));
    let Some(kafka) = kafka_ref::KafkaRef::start() else {
        std::process::exit(2);
    };
    let made = Instant::now();
    for first in (0..topics).step_by(CHUNK) {
        let count = CHUNK.min(topics - first);
        kafka.java(
            "ManyTopics.java",
            &[
                &kafka.bootstrap,
                "scale",
                &first.to_string(),
                &count.to_string(),
                &partitions.to_string(),
                "3",
                &records.to_string(),
            ],
        );
    }
    eprintln!(
        "{topics} topics x {partitions} partitions, {records} records each, made in {:.1?}",
        made.elapsed()
    );
    let all = Options {
        bootstrap: kafka.bootstrap.split(',').map(String::from).collect(),
        topics: Vec::new(),
        groups: Vec::new(),
        timeout: Duration::from_millis(minikafka::observe::DEFAULT_TIMEOUT_MS),
    };
    // Until every partition has its leader in Metadata.
    let deadline = Instant::now() + Duration::from_secs(60);
    while let Err(e) = observe(&all) {
        assert!(Instant::now() < deadline, "observe: {e}");
        std::thread::sleep(Duration::from_millis(500));
    }
    let one = Options {
        topics: vec!["scale-000".into()],
        ..all.clone()
    };
    let before = peak_rss_mb();
    let (small_median, small_min, small_max, small_json, small_p, small_b) = time(&one);
    let (median, min, max, json, p, b) = time(&all);
    let after = peak_rss_mb();
    println!("| observed | partitions | batches | refresh median (min-max) | snapshot JSON |");
    println!("| --- | ---: | ---: | --- | ---: |");
    println!(
        "| one topic (`--topic scale-000`) | {small_p} | {small_b} | {small_median:.1?} ({small_min:.1?}-{small_max:.1?}) | {:.1} KiB |",
        small_json as f64 / 1024.0
    );
    println!(
        "| {topics} topics x {partitions} | {p} | {b} | {median:.1?} ({min:.1?}-{max:.1?}) | {:.1} MiB |",
        json as f64 / 1024.0 / 1024.0
    );
    println!(
        "peak RSS (VmHWM): {before:.1} MiB before the first observation, {after:.1} MiB after {} of them",
        2 * ROUNDS
    );
}
