//! Issue 14 item 7: the throughput of a real Kafka client against
//! `mk-tui serve`, as a ratio to the engine's own append and fetch of the
//! same records, measured side by side in one run (docs/performance.md,
//! "K1"). Target: at least 0.3x direct, both ways.
//!
//! - **served**: `mk-tui serve` (this build's binary) on loopback; a
//!   confluent-kafka Producer (acks=1, 100 B values, batching on: linger.ms
//!   5, the default batch.size, no compression) sends N records to one
//!   partition of one replica, then a read_committed Consumer (`assign()`)
//!   reads them all back (`tests/clients/ck_throughput.py`, timed in the
//!   client from the first call to the last delivery report or record).
//! - **direct**: in this process, a cluster opened the way `serve` opens
//!   its own (the same default header, through `Driver::new`), the same N
//!   records of 100 B appended with acks=1 in batches of the size the
//!   client's Produce requests carried (read from the server's log), then
//!   fetched read_committed with `BrokerCluster::fetch`.
//! - **direct, per batch**: the same N records as `produce` actions that
//!   carry a batch each (`records`, as many as the client's requests did),
//!   applied by a `Driver`: what the server does with a client's batch,
//!   without the network.
//! - **direct, per record**: the same N records as one `produce` action
//!   each (one engine batch per record): what the server did before a
//!   `produce` could carry a batch.
//! - **kcat**: the same N records through `kcat -P` from a file and back
//!   through `kcat -C -e` at read_committed, each timed whole, with the
//!   server's CPU time (from `/proc`) against the direct rows' CPU time:
//!   a C client whose own cost is far below the server's, so the server's
//!   own cost shows.
//!
//! - **Apache Kafka** (issue 23 item 5): the same script, the same client
//!   and records against Apache Kafka 4.4 (three KRaft nodes started by
//!   tests/kafka-ref/start.sh on loopback, the topic on one of them, one
//!   replica), in rounds interleaved with fresh `mk-tui serve` runs
//!   (`MK_BENCH_ROUNDS`, default 3), reported as Kafka's time over
//!   serve's: above 1, serve is faster. Skipped with a line when Kafka
//!   cannot be started (no Java or Maven).
//!
//! Run by hand (not part of `cargo test`; needs the Python client, see
//! tests/clients/README.md):
//!
//! ```sh
//! cargo bench --bench kafka_throughput            # 100k records
//! MK_BENCH_RECORDS=20000 cargo bench --bench kafka_throughput
//! ```

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use minikafka::engine::{AckMode, IsolationLevel, Record, RecordBatch, TopicPartition};
use minikafka::session::{Action, Driver, Outcome};

#[allow(dead_code)]
#[path = "../tests/common/kafka_ref.rs"]
mod kafka_ref;

const VALUE_BYTES: usize = 100;
const TOPIC: &str = "bench";

fn main() {
    // `cargo bench` passes `--bench`; any filter argument is ignored.
    let records: usize = std::env::var("MK_BENCH_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let Some(python) = python() else {
        println!("kafka_throughput: skipped: no Python with confluent_kafka (set MK_TUI_PYTHON)");
        return;
    };
    println!("kafka_throughput: {records} records of {VALUE_BYTES} B, one partition, one replica");
    against_kafka(&python, records);
    let served = served(&python, records);
    let kcat = served_kcat(&python, records);
    let per_request = served.records_per_request;
    let batch = per_request.round().max(1.0) as usize;
    let direct = direct(records, batch);
    let per_batch = direct_per_batch(records, batch);
    let per_record = direct_per_record(records);
    let rate = |n: usize, d: Duration| n as f64 / d.as_secs_f64();
    let mib = |n: usize, d: Duration| (n * VALUE_BYTES) as f64 / d.as_secs_f64() / (1 << 20) as f64;
    println!(
        "{:<52} {:>12} {:>10} {:>8}",
        "", "records/s", "MiB/s", "ratio"
    );
    let line = |what: &str, n: usize, d: Duration, base: Duration| {
        println!(
            "{what:<52} {:>12.0} {:>10.1} {:>8.4}",
            rate(n, d),
            mib(n, d),
            base.as_secs_f64() / d.as_secs_f64()
        );
    };
    line(
        &format!("direct append, batches of {batch}"),
        records,
        direct.append,
        direct.append,
    );
    line(
        &format!("direct append, batches of {batch}, HW checkpoint each"),
        records,
        direct.append_checkpointed,
        direct.append,
    );
    line(
        &format!("direct append, one produce action per batch of {batch}"),
        records,
        per_batch,
        direct.append,
    );
    line(
        "direct append, one produce action per record",
        records,
        per_record,
        direct.append,
    );
    line(
        &format!("served produce (acks=1, {per_request:.0} records/request)"),
        records,
        served.produce,
        direct.append,
    );
    line(
        "the client's produce() calls alone (its floor)",
        records,
        served.enqueue,
        direct.append,
    );
    if let Some(k) = &kcat {
        line(
            "served produce, kcat -P (its start included)",
            records,
            k.produce,
            direct.append,
        );
        line(
            "  per second of the server's CPU, against the direct CPU",
            records,
            k.produce_cpu,
            direct.append_cpu,
        );
    }
    line(
        "direct fetch, read_committed",
        records,
        direct.fetch,
        direct.fetch,
    );
    line(
        "served fetch, read_committed",
        records,
        served.fetch,
        direct.fetch,
    );
    line(
        "served fetch, after the first record",
        records,
        served.fetch - served.first_record,
        direct.fetch,
    );
    line(
        "the client's consume() loop alone, prefetched (its floor)",
        records - 1,
        served.consume_floor,
        direct.fetch,
    );
    if let Some(k) = &kcat {
        println!(
            "CPU seconds (ticks of 10 ms): server {:.2} produce, {:.2} fetch; direct {:.2} append, {:.2} fetch",
            k.produce_cpu.as_secs_f64(),
            k.fetch_cpu.as_secs_f64(),
            direct.append_cpu.as_secs_f64(),
            direct.fetch_cpu.as_secs_f64()
        );
        line(
            "served fetch, kcat -C -e (its start included)",
            records,
            k.fetch,
            direct.fetch,
        );
        line(
            "  per second of the server's CPU, against the direct CPU",
            records,
            k.fetch_cpu,
            direct.fetch_cpu,
        );
    }
}

/// The same client against `mk-tui serve` and Apache Kafka 4.4, in
/// interleaved rounds (the order alternating, so a drift in the machine's
/// load falls on both), each side's median reported, and Kafka's time over
/// serve's: above 1.0 serve is faster.
fn against_kafka(python: &PathBuf, records: usize) {
    let rounds: usize = std::env::var("MK_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let Some(kafka) = kafka_ref::KafkaRef::start() else {
        println!("kafka_throughput: Apache Kafka could not be started: its rows are skipped");
        return;
    };
    let mut serve_runs = Vec::new();
    let mut kafka_runs = Vec::new();
    for round in 0..rounds {
        let on_kafka = |python: &PathBuf| {
            let topic = format!("{TOPIC}-{round}");
            client_run(python, &kafka.bootstrap, &topic, records)
        };
        if round % 2 == 0 {
            serve_runs.push(served(python, records));
            kafka_runs.push(on_kafka(python));
        } else {
            kafka_runs.push(on_kafka(python));
            serve_runs.push(served(python, records));
        }
    }
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let rate = |d: Duration| records as f64 / d.as_secs_f64();
    println!(
        "{:<52} {:>12} {:>12} {:>8}",
        "against Apache Kafka 4.4 (median of rounds)", "serve rec/s", "Kafka rec/s", "ratio"
    );
    let row = |what: &str, serve: Duration, kafka: Duration| {
        println!(
            "{what:<52} {:>12.0} {:>12.0} {:>8.3}",
            rate(serve),
            rate(kafka),
            kafka.as_secs_f64() / serve.as_secs_f64()
        );
    };
    row(
        "produce (acks=1, confluent-kafka)",
        median(serve_runs.iter().map(|s| s.produce).collect()),
        median(kafka_runs.iter().map(|k| k.produce).collect()),
    );
    row(
        "fetch, read_committed, from the consumer's start",
        median(serve_runs.iter().map(|s| s.fetch).collect()),
        median(kafka_runs.iter().map(|k| k.fetch).collect()),
    );
    row(
        "fetch, read_committed, after the first record",
        median(
            serve_runs
                .iter()
                .map(|s| s.fetch - s.first_record)
                .collect(),
        ),
        median(
            kafka_runs
                .iter()
                .map(|k| k.fetch - k.first_record)
                .collect(),
        ),
    );
    println!(
        "rounds: {rounds}; serve produce {:?}; Kafka produce {:?}",
        serve_runs
            .iter()
            .map(|s| s.produce.as_millis())
            .collect::<Vec<_>>(),
        kafka_runs
            .iter()
            .map(|k| k.produce.as_millis())
            .collect::<Vec<_>>()
    );
}

/// The client's timings (tests/clients/ck_throughput.py) against any
/// bootstrap address.
struct ClientRun {
    produce: Duration,
    enqueue: Duration,
    consume_floor: Duration,
    fetch: Duration,
    first_record: Duration,
}

fn client_run(python: &PathBuf, boot: &str, topic: &str, records: usize) -> ClientRun {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clients/ck_throughput.py");
    let out = Command::new(python)
        .arg(script)
        .args([boot, topic, &records.to_string(), &VALUE_BYTES.to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the client failed against {boot}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seconds = |word: &str| {
        let line = text
            .lines()
            .find(|l| l.starts_with(word))
            .unwrap_or_else(|| panic!("no {word:?} line in {text}"));
        let words: Vec<&str> = line.split(' ').collect();
        let secs = |i: usize| Duration::from_secs_f64(words[i].parse().unwrap());
        (secs(2), words.get(3).map(|_| secs(3)).unwrap_or_default())
    };
    let (fetch, first_record) = seconds("fetched");
    let (produce, enqueue) = seconds("produced");
    let (consume_floor, _) = seconds("floor");
    ClientRun {
        produce,
        enqueue,
        consume_floor,
        fetch,
        first_record,
    }
}

/// The Python that imports confluent_kafka, as the tests find it.
fn python() -> Option<PathBuf> {
    let py = std::env::var_os("MK_TUI_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python"));
    Command::new(&py)
        .args(["-c", "import confluent_kafka"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
        .then_some(py)
}

struct Served {
    produce: Duration,
    /// The client's loop of produce() calls alone: its own floor.
    enqueue: Duration,
    /// The consumer's loop over records it had all fetched before (N - 1
    /// of them): its own floor.
    consume_floor: Duration,
    fetch: Duration,
    /// Until the consumer's first record (connections, metadata, offsets).
    first_record: Duration,
    records_per_request: f64,
}

/// `mk-tui serve` and the confluent-kafka client.
fn served(python: &PathBuf, records: usize) -> Served {
    let temp = tempfile::tempdir().unwrap();
    let log = temp.path().join("serve.log");
    let (mut child, boot) = start_serve(temp.path(), &log);
    let run = client_run(python, &boot, TOPIC, records);
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143), "the server failed ({status})");
    // "Produce v9 from client "rdkafka": acks=1 bench-0 offset 0 (4109 record(s))"
    let log = std::fs::read_to_string(&log).unwrap();
    let produces: Vec<usize> = log
        .lines()
        .filter(|l| l.contains(": Produce v"))
        .filter_map(|l| l.rsplit_once(" (")?.1.split(' ').next()?.parse().ok())
        .collect();
    assert_eq!(produces.iter().sum::<usize>(), records, "{log}");
    Served {
        consume_floor: run.consume_floor,
        produce: run.produce,
        enqueue: run.enqueue,
        fetch: run.fetch,
        first_record: run.first_record,
        records_per_request: records as f64 / produces.len() as f64,
    }
}

/// Starts this build's `mk-tui serve` on a free loopback port with its data
/// in `dir`, its log in `log`; returns it and broker 1's address.
fn start_serve(dir: &std::path::Path, log: &std::path::Path) -> (std::process::Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.join("data"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("mk-tui serve starts");
    let mut boot = None;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if line == "ready" {
            break;
        }
        if boot.is_none()
            && let Some(addr) = line.strip_prefix("broker 1 listening on ")
        {
            boot = Some(addr.to_string());
        }
    }
    (child, boot.expect("broker 1's address"))
}

/// The CPU time (user and system) a process has used so far, from
/// `/proc/PID/stat` (Linux; ticks of 1/100 s).
fn cpu_of(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which is in parentheses): state,
    // ppid, pgrp, session, tty_nr, tpgid, flags, minflt, cminflt, majflt,
    // cmajflt, utime, stime (stat's fields 3 to 15).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let ticks = field(11) + field(12);
    Duration::from_millis(ticks * 10)
}

/// kcat (librdkafka in C, so its own cost is far below the server's)
/// against `mk-tui serve`: `kcat -P` of `records` values from a file
/// (acks=1, linger.ms 5), then `kcat -C -e` at read_committed; each timed
/// whole (kcat's start included), with the server's CPU time in each.
struct Kcat {
    produce: Duration,
    produce_cpu: Duration,
    fetch: Duration,
    fetch_cpu: Duration,
}

fn served_kcat(python: &PathBuf, records: usize) -> Option<Kcat> {
    if Command::new("kcat").arg("-V").output().is_err() {
        println!("kafka_throughput: no kcat: its rows are skipped");
        return None;
    }
    let temp = tempfile::tempdir().unwrap();
    let log = temp.path().join("serve.log");
    let (mut child, boot) = start_serve(temp.path(), &log);
    let create = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clients/ck_create_topic.py");
    let made = Command::new(python)
        .arg(create)
        .args([&boot, TOPIC, "1", "1"])
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let input = temp.path().join("values.txt");
    let line = format!("{}\n", "v".repeat(VALUE_BYTES));
    std::fs::write(&input, line.repeat(records)).unwrap();
    let cpu = || cpu_of(child.id());
    let (cpu0, start) = (cpu(), Instant::now());
    let produced = Command::new("kcat")
        .args([
            "-P",
            "-b",
            &boot,
            "-t",
            TOPIC,
            "-p",
            "0",
            "-X",
            "acks=1",
            "-X",
            "linger.ms=5",
            "-l",
        ])
        .arg(&input)
        .output()
        .unwrap();
    let produce = start.elapsed();
    let produce_cpu = cpu() - cpu0;
    assert!(
        produced.status.success(),
        "{}",
        String::from_utf8_lossy(&produced.stderr)
    );
    let (cpu1, start) = (cpu(), Instant::now());
    let fetched = Command::new("kcat")
        .args([
            "-C",
            "-b",
            &boot,
            "-t",
            TOPIC,
            "-p",
            "0",
            "-o",
            "beginning",
            "-e",
            "-q",
        ])
        .args(["-X", "isolation.level=read_committed"])
        .output()
        .unwrap();
    let fetch = start.elapsed();
    let fetch_cpu = cpu() - cpu1;
    let lines = fetched.stdout.iter().filter(|b| **b == b'\n').count();
    assert_eq!(lines, records, "kcat -C read every record back");
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    assert_eq!(child.wait().unwrap().code(), Some(143));
    Some(Kcat {
        produce,
        produce_cpu,
        fetch,
        fetch_cpu,
    })
}

/// The cluster `mk-tui serve` opens without a recording, with the topic
/// the client creates (one partition, one replica).
fn served_cluster(dir: &std::path::Path) -> Driver {
    let header = serde_json::from_value(serde_json::json!({
        "mk_recording": 1,
        "title": "mk-tui serve",
        "rules": "minikafka",
        "cluster": {"brokers": [1, 2, 3], "topics": []},
    }))
    .unwrap();
    // In a data directory, as `serve --data-dir` runs (a private temporary
    // one skips the per-step HW checkpoint).
    let mut driver = Driver::new(&header, Some(dir)).unwrap();
    driver.set_hw_checkpoint_interval(Some(minikafka::kafka::HW_CHECKPOINT_INTERVAL_MS));
    let create = Action::from_json(&serde_json::json!({
        "create_topic": {"name": TOPIC, "partitions": 1, "replication_factor": 1}
    }))
    .unwrap();
    assert!(!matches!(driver.apply(&create), Outcome::Error(_)));
    driver
}

struct Direct {
    append: Duration,
    /// This process's CPU time during `append` (and `fetch`): what the
    /// server's CPU time is set against, so that the machine's load,
    /// which stretches wall times, cancels out.
    append_cpu: Duration,
    fetch_cpu: Duration,
    /// The same batches, with the HW checkpoint written after each, as a
    /// driver step does: what one `produce` action per request would cost.
    append_checkpointed: Duration,
    fetch: Duration,
}

fn direct(records: usize, batch: usize) -> Direct {
    let temp = tempfile::tempdir().unwrap();
    let driver = served_cluster(temp.path());
    let append_checkpointed = {
        let other = tempfile::tempdir().unwrap();
        let driver = served_cluster(other.path());
        append(&driver, records, batch, true)
    };
    let cpu0 = cpu_of(std::process::id());
    let append = append(&driver, records, batch, false);
    let append_cpu = cpu_of(std::process::id()) - cpu0;
    let cluster = driver.cluster().clone();
    let tp = TopicPartition::new(TOPIC, 0);
    let cpu0 = cpu_of(std::process::id());
    let start = Instant::now();
    let mut offset = 0;
    while (offset as usize) < records {
        let got = cluster
            .fetch(&tp, offset, 10_000, IsolationLevel::ReadCommitted)
            .unwrap();
        assert!(!got.is_empty(), "read_committed stopped at {offset}");
        offset = got.last().unwrap().offset + 1;
    }
    let fetch = start.elapsed();
    Direct {
        append,
        append_cpu,
        append_checkpointed,
        fetch,
        fetch_cpu: cpu_of(std::process::id()) - cpu0,
    }
}

/// `records` records of [`VALUE_BYTES`] in batches of `batch`, acks=1
/// (with the HW checkpoint after each batch when `checkpoint`).
fn append(driver: &Driver, records: usize, batch: usize, checkpoint: bool) -> Duration {
    let cluster = driver.cluster().clone();
    let tp = TopicPartition::new(TOPIC, 0);
    let value = vec![b'v'; VALUE_BYTES];
    let start = Instant::now();
    let mut left = records;
    while left > 0 {
        let n = left.min(batch);
        left -= n;
        let batch = RecordBatch::new((0..n).map(|_| Record::value(value.clone())).collect());
        let mut future = cluster.append_batch(&tp, batch, AckMode::Leader);
        match future.try_take() {
            Some(Ok(_)) => {}
            other => panic!("acks=1 append did not complete at once: {other:?}"),
        }
        if checkpoint {
            cluster.flush().unwrap();
        }
    }
    start.elapsed()
}

fn direct_per_batch(records: usize, batch: usize) -> Duration {
    let temp = tempfile::tempdir().unwrap();
    let mut driver = served_cluster(temp.path());
    let value = "v".repeat(VALUE_BYTES);
    let action = |n: usize| {
        let records: Vec<_> = (0..n)
            .map(|_| serde_json::json!({"value": value}))
            .collect();
        Action::from_json(&serde_json::json!({
            "produce": {"topic": TOPIC, "partition": 0, "records": records, "acks": "1"}
        }))
        .unwrap()
    };
    let full = action(batch);
    let start = Instant::now();
    let mut left = records;
    while left > 0 {
        let n = left.min(batch);
        let outcome = if n == batch {
            driver.apply(&full)
        } else {
            driver.apply(&action(n))
        };
        if let Outcome::Error(e) = outcome {
            panic!("produce: {e}");
        }
        left -= n;
    }
    start.elapsed()
}

fn direct_per_record(records: usize) -> Duration {
    let temp = tempfile::tempdir().unwrap();
    let mut driver = served_cluster(temp.path());
    let value = "v".repeat(VALUE_BYTES);
    let action = Action::from_json(&serde_json::json!({
        "produce": {"topic": TOPIC, "partition": 0, "value": value, "acks": "1"}
    }))
    .unwrap();
    let start = Instant::now();
    for _ in 0..records {
        if let Outcome::Error(e) = driver.apply(&action) {
            panic!("produce: {e}");
        }
    }
    start.elapsed()
}
