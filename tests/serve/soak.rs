//! The soak of issue 25 item 6: real confluent-kafka clients against
//! `mk-tui serve` while the server is killed (`kill -9`) and restarted on
//! the same data directory and ports at seeded random moments. Five
//! idempotent producers write to `in` (2 partitions), two transactional
//! consume-transform-produce loops (tests/clients/ck_restart_ctp.py) copy
//! `in-P` to `out-P` exactly once, and a read_committed consumer follows
//! both topics. Asserted: no acknowledged record lost, none read twice at
//! read_committed (by the follower, or in a full read at the end), no
//! client wedged (each makes progress within [`PROGRESS_BOUND`] of each
//! restart; no fatal error), every transaction wholly visible or wholly
//! invisible (and visible if the client was told it committed, invisible
//! if told it aborted), and every record of `in` copied to `out` exactly
//! once.
//!
//! `MK_SOAK_SEED` replays a run (the seed is printed, and named on
//! failure); `MK_SOAK_RESTARTS` (default 10) and `MK_SOAK_MAX_GAP_MS`
//! (default 6000: the longest pause between a restart's recovery and the
//! next kill) make a longer run; `MK_SOAK_DATA_DIR` keeps the data
//! directory there. The figures are printed
//! (`cargo test --test serve soak -- --nocapture`).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::python;
use crate::restart_promises::{
    Audit, Record, delivered, fatal, first_after, lines_of, read_to_end,
};
use crate::script::Script;
use crate::server::Server;

/// How long each client may take to make progress after a restart.
const PROGRESS_BOUND: Duration = Duration::from_secs(30);
const PRODUCERS: usize = 5;
/// Records a second per idempotent producer.
const RATE: &str = "20";

/// splitmix64: a small seeded generator, so a failing run can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A duration in [lo, hi) milliseconds.
    fn millis(&mut self, lo: u64, hi: u64) -> Duration {
        Duration::from_millis(lo + self.next() % (hi - lo).max(1))
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number"))
    })
}

/// One client of the soak: the word of the lines that show it made
/// progress, and whether it was found wedged (then it is not waited for
/// again).
struct Client {
    name: String,
    progress: &'static str,
    script: Script,
    wedged: bool,
}

impl Client {
    fn new(name: String, progress: &'static str, script: Script) -> Self {
        Client {
            name,
            progress,
            script,
            wedged: false,
        }
    }
}

/// Waits until every client not already wedged has made progress since
/// `since`, at most [`PROGRESS_BOUND`]; those that did not are wedged.
fn check_progress(
    clients: &mut [Client],
    since: Instant,
    restart: usize,
    wedged: &mut Vec<String>,
) {
    let deadline = since + PROGRESS_BOUND;
    loop {
        let mut pending = Vec::new();
        for (i, c) in clients.iter_mut().enumerate() {
            let word = c.progress;
            if !c.wedged
                && first_after(&mut c.script, since, |l| l.split(' ').next() == Some(word))
                    .is_none()
            {
                pending.push(i);
            }
        }
        if pending.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            for i in pending {
                clients[i].wedged = true;
                wedged.push(format!(
                    "{} made no progress ({}) within {PROGRESS_BOUND:?} of {}",
                    clients[i].name,
                    clients[i].progress,
                    if restart == 0 {
                        "the start".to_string()
                    } else {
                        format!("restart {restart}")
                    }
                ));
            }
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The `error NAME fatal` lines of a client.
fn wedge_signs(lines: &[String]) -> Vec<String> {
    fatal(lines).into_iter().cloned().collect()
}

fn soak(rules: &[&str]) {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let seed = env_u64("MK_SOAK_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
    });
    let restarts = env_u64("MK_SOAK_RESTARTS").unwrap_or(10) as usize;
    let max_gap = env_u64("MK_SOAK_MAX_GAP_MS").unwrap_or(6000);
    let what = format!("soak {rules:?} MK_SOAK_SEED={seed} MK_SOAK_RESTARTS={restarts}");
    println!("{what}");
    let mut rng = Rng(seed);
    let started = Instant::now();
    // MK_SOAK_DATA_DIR=D keeps the data directory (in D, which must not
    // exist) for a post-mortem of a failed run.
    let kept = std::env::var_os("MK_SOAK_DATA_DIR").map(std::path::PathBuf::from);
    let mut server = Server::start_restartable_in(kept.as_deref(), rules);
    let boot = server.bootstrap();
    for topic in ["in", "out"] {
        python::run(&py, "ck_create_topic.py", &[&boot, topic, "2", "3"]);
    }
    let mut clients: Vec<Client> = Vec::new();
    for i in 0..PRODUCERS {
        let name = format!("p{i}");
        let script = Script::start(
            &py,
            "ck_restart_idempotent.py",
            &[&boot, "in", "2", &name, RATE],
        );
        clients.push(Client::new(name, "delivered", script));
    }
    for p in 0..2 {
        let (partition, txn) = (p.to_string(), format!("ctp{p}"));
        let script = Script::start(
            &py,
            "ck_restart_ctp.py",
            &[&boot, "in", &partition, "out", &txn],
        );
        clients.push(Client::new(txn, "committed", script));
    }
    let script = Script::start(
        &py,
        "ck_restart_read.py",
        &[&boot, "read_committed", "follow", "in:2", "out:2"],
    );
    clients.push(Client::new("follower".into(), "read", script));
    let mut wedged: Vec<String> = Vec::new();
    check_progress(&mut clients, started, 0, &mut wedged);
    let mut down = Duration::ZERO;
    for n in 1..=restarts {
        std::thread::sleep(rng.millis(200, max_gap));
        server.kill();
        let pause = rng.millis(0, 1000);
        std::thread::sleep(pause);
        down += pause;
        server.restart();
        check_progress(&mut clients, Instant::now(), n, &mut wedged);
    }
    // Drain: the producers stop, then the loops copy the rest, then the
    // follower reads to the end. A client that does not end is a problem
    // of its own (with its stacks), not a panic that hides the figures.
    let mut ended = Vec::new();
    let mut outs: Vec<Vec<String>> = Vec::new();
    for c in &mut clients {
        let bound = match (c.wedged, c.progress) {
            (true, _) => Duration::from_secs(20),
            (false, "committed") => Duration::from_secs(120),
            _ => Duration::from_secs(60),
        };
        if c.progress == "read" {
            std::thread::sleep(Duration::from_secs(2));
        }
        let (lines, status) = c.script.stop(bound);
        match status {
            Some(s) if s.success() => {}
            Some(s) => ended.push(format!(
                "{} exited with {s}: {}",
                c.name,
                c.script.stderr_tail(8)
            )),
            None => ended.push(format!(
                "{} still running {bound:?} after stop; its stacks:\n{}",
                c.name,
                c.script.stderr_tail(40)
            )),
        }
        outs.push(lines);
    }
    let produced = &outs[..PRODUCERS];
    let copied = &outs[PRODUCERS..PRODUCERS + 2];
    let followed = &outs[PRODUCERS + 2];
    let elapsed = started.elapsed();
    let (read_in, mut unended) = read_to_end(&py, &boot, "read_committed", &[("in", 2)]);
    let (read_out, unended_out) = read_to_end(&py, &boot, "read_committed", &[("out", 2)]);
    unended.extend(unended_out);
    let log = server.log();
    if let Some(dir) = &kept {
        std::fs::write(dir.with_extension("log"), &log).unwrap();
        let lines: Vec<String> = clients
            .iter()
            .zip(&outs)
            .flat_map(|(c, o)| o.iter().map(move |l| format!("{} {l}", c.name)))
            .collect();
        std::fs::write(dir.with_extension("clients"), lines.join("\n")).unwrap();
    }

    // Acknowledged records of `in`: all there, once.
    let acked: Vec<Record> = produced.iter().flat_map(|o| delivered(o)).collect();
    let failed: usize = produced.iter().map(|o| lines_of(o, "failed").len()).sum();
    let audit = Audit::of(&acked, &read_in);
    // The follower: no offset read with two values, no value at two
    // offsets (a restart that lost or rewrote records shows here).
    let mut follower_problems = Vec::new();
    let mut at: BTreeMap<(String, i32, i64), String> = BTreeMap::new();
    let mut offsets_of: BTreeMap<String, BTreeSet<(String, i32, i64)>> = BTreeMap::new();
    for line in lines_of(followed, "read") {
        let w: Vec<&str> = line.splitn(5, ' ').collect();
        let key = (
            w[1].to_string(),
            w[2].parse().unwrap(),
            w[3].parse().unwrap(),
        );
        if let Some(old) = at.insert(key.clone(), w[4].to_string())
            && old != w[4]
        {
            follower_problems.push(format!("{key:?} read as {old:?} then {:?}", w[4]));
        }
        offsets_of.entry(w[4].to_string()).or_default().insert(key);
    }
    for (v, keys) in &offsets_of {
        if keys.len() > 1 {
            follower_problems.push(format!("{v:?} read at {keys:?}"));
        }
    }
    // Transactions: (loop, attempt) -> records read at read_committed.
    let mut visible: BTreeMap<(String, u64), Vec<(u64, u64)>> = BTreeMap::new();
    let mut copies: BTreeMap<String, usize> = BTreeMap::new();
    for (_, _, _, v) in &read_out {
        let (input, tag) = v.rsplit_once('|').unwrap();
        let mut parts = tag.splitn(3, '.');
        let (txn, attempt) = (
            parts.next().unwrap(),
            parts.next().unwrap().parse().unwrap(),
        );
        let (i, n) = parts.next().unwrap().split_once('/').unwrap();
        visible
            .entry((txn.to_string(), attempt))
            .or_default()
            .push((i.parse().unwrap(), n.parse().unwrap()));
        *copies.entry(input.to_string()).or_default() += 1;
    }
    let mut txn_problems = Vec::new();
    for ((txn, attempt), records) in &visible {
        let n = records[0].1 as usize;
        let distinct: BTreeSet<u64> = records.iter().map(|r| r.0).collect();
        if records.len() != n || distinct.len() != n {
            txn_problems.push(format!(
                "{txn} attempt {attempt}: {} of its {n} records visible",
                records.len()
            ));
        }
    }
    let (mut committed, mut aborted, mut unknown) = (0, 0, 0);
    for lines in copied {
        for l in lines {
            let w: Vec<&str> = l.split(' ').collect();
            match w[..] {
                ["committed", txn, a, ..] => {
                    committed += 1;
                    if !visible.contains_key(&(txn.to_string(), a.parse().unwrap())) {
                        txn_problems.push(format!("{txn} attempt {a} told committed, invisible"));
                    }
                }
                ["aborted", txn, a, ..] => {
                    aborted += 1;
                    if visible.contains_key(&(txn.to_string(), a.parse().unwrap())) {
                        txn_problems.push(format!("{txn} attempt {a} told aborted, visible"));
                    }
                }
                ["unknown", ..] => unknown += 1,
                _ => {}
            }
        }
    }
    // Exactly once: every record of `in` copied once to `out`.
    let in_values: BTreeSet<&str> = read_in.iter().map(|r| r.3.as_str()).collect();
    let twice: Vec<(&String, &usize)> = copies.iter().filter(|(_, n)| **n > 1).collect();
    let never: Vec<&&str> = in_values
        .iter()
        .filter(|v| !copies.contains_key(**v))
        .collect();
    let stray: Vec<&String> = copies
        .keys()
        .filter(|v| !in_values.contains(v.as_str()))
        .collect();
    let fatal: Vec<String> = outs.iter().flat_map(|o| wedge_signs(o)).collect();
    let figures = format!(
        "{what}: {restarts} restarts in {:.0} s ({:.1} s down); in: {}, {failed} failed; \
         out: {} records read at read_committed, transactions {committed} committed, \
         {aborted} aborted, {unknown} of unknown fate, {} visible; copied twice {}, never {}, \
         not from in {}; follower read {} records; fatal errors {}; wedged {}",
        elapsed.as_secs_f64(),
        down.as_secs_f64(),
        audit.summary(),
        read_out.len(),
        visible.len(),
        twice.len(),
        never.len(),
        stray.len(),
        lines_of(followed, "read").len(),
        fatal.len(),
        wedged.len(),
    );
    println!("{figures}");
    let mut problems = Vec::new();
    if !audit.ok() {
        problems.push(format!("acknowledged records: {}", audit.summary()));
    }
    for (what, list) in [
        ("follower", follower_problems),
        ("transactions", txn_problems),
        ("fatal", fatal),
        ("wedged", wedged),
        ("did not end", ended),
        (
            "read_committed did not reach the end (LSO held back) of",
            unended,
        ),
        (
            "copied twice",
            twice.iter().take(5).map(|t| format!("{t:?}")).collect(),
        ),
        (
            "never copied",
            never.iter().take(5).map(|t| format!("{t:?}")).collect(),
        ),
    ] {
        if !list.is_empty() {
            problems.push(format!("{what}: {:?}", &list[..list.len().min(8)]));
        }
    }
    assert!(
        problems.is_empty(),
        "{figures}\n{}\nserver log (last lines):\n{}",
        problems.join("\n"),
        crate::restart_promises::tail(&log, 30)
    );
}

#[test]
fn soak_kill_9_restarts_under_the_book_rules() {
    soak(&[]);
}

#[test]
fn soak_kill_9_restarts_under_the_kafka_rules() {
    soak(&["--rules", "kafka"]);
}
