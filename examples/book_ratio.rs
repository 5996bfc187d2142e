//! Our engine against the book's own Python code on the same workload,
//! side by side (issue 29, item 4; docs/performance.md, "Replication
//! against the book").
//!
//! A round on each side: a fresh cluster of brokers 1 and 2, topic `t` with
//! one partition and replication factor 2, 200 batches of 100 keyed records
//! of 100 B (`perf::record_batch`, built before the timing) appended with
//! acks=1 to the leader (the book's `cluster.append_batch(tp, batch,
//! AckMode.LEADER)`), then `replicate_all_once` repeated until every
//! follower's log end offset equals the leader's. Each phase is timed on
//! its own: the thread's CPU time (what the side cost, without the time
//! other processes ran instead) and wall time.
//!
//! The book's side is `tests/book/drive_replication_ratio.py`, run once by
//! `$MK_BOOK_PYTHON` (default `python3`) and asked for one round at a time,
//! so the two sides alternate (ours first in even rounds, the book's first
//! in odd ones) and share the machine's state of the moment. The ratio of a
//! round is the book's time over ours; the report gives the median and the
//! range over the rounds.
//!
//! Run: `cargo run --release --example book_ratio [ROUNDS]` (default 21).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use minikafka::engine::TopicPartition;
use minikafka::perf;

const BATCHES: usize = 200;

/// One side's timings of one round, in seconds.
#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
struct Round {
    append_cpu: f64,
    append_wall: f64,
    repl_cpu: f64,
    repl_wall: f64,
    repl_rounds: u64,
    /// The records the follower holds once caught up: both sides must
    /// have replicated the same work for the ratio to mean anything.
    records: i64,
}

fn main() {
    let rounds: usize = std::env::args().nth(1).map_or(21, |a| {
        a.parse()
            .unwrap_or_else(|_| fail(&format!("ROUNDS {a:?} is not a number")))
    });
    let python = std::env::var("MK_BOOK_PYTHON").unwrap_or_else(|_| "python3".into());
    let driver =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/book/drive_replication_ratio.py");
    let mut book = Command::new(&python)
        .arg(&driver)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| fail(&format!("cannot run {python} {}: {e}", driver.display())));
    let mut to_book = book.stdin.take().expect("piped stdin");
    let mut from_book = BufReader::new(book.stdout.take().expect("piped stdout"));
    let mut book_round = move || {
        if writeln!(to_book, "round").is_err() {
            fail("the book's driver stopped reading (its error is above)");
        }
        let mut line = String::new();
        from_book
            .read_line(&mut line)
            .unwrap_or_else(|e| fail(&format!("the book's driver's answer: {e}")));
        parse_round(&line)
    };

    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for i in 0..rounds {
        if i % 2 == 0 {
            ours.push(our_round());
            theirs.push(book_round());
        } else {
            theirs.push(book_round());
            ours.push(our_round());
        }
    }
    drop(book_round);
    for (i, (o, t)) in ours.iter().zip(&theirs).enumerate() {
        if o.records != t.records {
            fail(&format!(
                "round {i}: ours replicated {} records, the book's {}",
                o.records, t.records
            ));
        }
    }
    let _ = book.wait();

    println!(
        "{rounds} paired rounds: {BATCHES} x 100 records of 100 B, RF 2, acks=1; \
         replication rounds to catch up: ours {}, the book's {}",
        ours[0].repl_rounds, theirs[0].repl_rounds
    );
    report("append (20,000 x 100 B, acks=1)", &ours, &theirs, |r| {
        (r.append_cpu, r.append_wall)
    });
    report("replication until caught up", &ours, &theirs, |r| {
        (r.repl_cpu, r.repl_wall)
    });
}

/// Our side of one round.
fn our_round() -> Round {
    let batches: Vec<_> = (0..BATCHES)
        .map(|i| perf::record_batch(100, 100, i))
        .collect();
    let tp = TopicPartition::new("t", 0);
    let (_dir, cluster) = perf::cluster(1, 2);
    let (cpu, wall) = (perf::thread_cpu(), Instant::now());
    for batch in batches {
        perf::append_acks1(&cluster, &tp, batch);
    }
    let (append_cpu, append_wall) = (perf::thread_cpu() - cpu, wall.elapsed());
    let caught_up = || {
        let leo = cluster.log_end_offset(&tp).expect("leader LEO");
        cluster
            .replica_log(&tp, 2)
            .and_then(|log| log.log_end_offset())
            .expect("follower LEO")
            == leo
    };
    let (cpu, wall) = (perf::thread_cpu(), Instant::now());
    let mut repl_rounds = 0;
    while !caught_up() {
        cluster.replicate_all_once().expect("replication");
        repl_rounds += 1;
    }
    let (repl_cpu, repl_wall) = (perf::thread_cpu() - cpu, wall.elapsed());
    let records = cluster.log_end_offset(&tp).expect("leader LEO");
    Round {
        append_cpu: append_cpu.as_secs_f64(),
        append_wall: append_wall.as_secs_f64(),
        repl_cpu: repl_cpu.as_secs_f64(),
        repl_wall: repl_wall.as_secs_f64(),
        repl_rounds,
        records,
    }
}

/// One line naming what went wrong, exit code 2.
fn fail(why: &str) -> ! {
    eprintln!("book_ratio: {why}");
    std::process::exit(2)
}

/// One JSON line of the book's driver; an empty one means it ended.
fn parse_round(line: &str) -> Round {
    if line.is_empty() {
        fail("the book's driver ended without a round (its error is above)");
    }
    serde_json::from_str(line)
        .unwrap_or_else(|e| fail(&format!("the book's driver printed {line:?}: {e}")))
}

/// The median and range of the per-round ratios (the book's time over
/// ours), for CPU time and wall time, with each side's median time.
fn report(phase: &str, ours: &[Round], theirs: &[Round], pick: impl Fn(&Round) -> (f64, f64)) {
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[0], v[v.len() - 1])
    };
    println!("{phase}:");
    for (name, which) in [("CPU", 0), ("wall", 1)] {
        let get = |r: &Round| if which == 0 { pick(r).0 } else { pick(r).1 };
        let ratios = ours
            .iter()
            .zip(theirs)
            .map(|(o, t)| get(t) / get(o))
            .collect();
        let (m, lo, hi) = median(ratios);
        let (o, _, _) = median(ours.iter().map(get).collect());
        let (t, _, _) = median(theirs.iter().map(get).collect());
        println!(
            "  {name}: ours {:.2} ms, the book's {:.2} ms; ratio median {m:.1}x (range {lo:.1}-{hi:.1})",
            o * 1e3,
            t * 1e3
        );
    }
}
