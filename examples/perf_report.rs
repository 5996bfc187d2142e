//! Issue 7's performance report: a short run of each target P1-P7, each
//! measured side by side with its baseline in alternating rounds (the
//! machines are shared and noisy, so only ratios within one run are
//! compared), printed as one table. The full measurements are the criterion
//! benches under `benches/`; `docs/performance.md` has a full run.
//!
//! Run: `cargo run --release --example perf_report`

use std::hint::black_box;
use std::process::Command;
use std::time::{Duration, Instant};

use minikafka::engine::TopicPartition;
use minikafka::engine::config::Rules;
use minikafka::engine::core::codec;
use minikafka::perf::{
    self, DashboardWorkload, FrameAppend, FsyncLoop, JournalWorkload, P3Ceiling, RawLogWriter,
    TransactionWorkload,
};
use minikafka::session::Timeline;

const MIB: f64 = 1024.0 * 1024.0;

/// A target's name and its measurement.
type Target = (&'static str, fn() -> Row);

struct Row {
    id: &'static str,
    what: &'static str,
    measured: String,
    baseline: String,
    ratio: f64,
    target: &'static str,
    met: bool,
    /// Met, but with a caveat printed beside "yes" (P5's history factor).
    caveat: Option<String>,
}

/// Runs `a` and `b` in alternating rounds and returns the median time of a
/// round of each.
fn side_by_side(
    rounds: usize,
    mut a: impl FnMut() -> Duration,
    mut b: impl FnMut() -> Duration,
) -> (Duration, Duration) {
    let mut ta = Vec::with_capacity(rounds);
    let mut tb = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        ta.push(a());
        tb.push(b());
    }
    (median(ta), median(tb))
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn timed(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// P1: a frame at 200x60 over 16 partitions x 64k records vs 100 records.
fn p1() -> Row {
    let big = DashboardWorkload::new(16, 65_536);
    let small = DashboardWorkload::new(16, 100);
    let (tb, ts) = side_by_side(
        31,
        || timed(|| drop(black_box(big.frame(200, 60)))),
        || timed(|| drop(black_box(small.frame(200, 60)))),
    );
    let ratio = tb.as_secs_f64() / ts.as_secs_f64();
    Row {
        id: "P1",
        what: "frame 200x60, 16 x 64k records",
        measured: ms(tb),
        baseline: format!("{} (100 records)", ms(ts)),
        ratio,
        target: "<= 1.1",
        met: ratio <= 1.1,
        caveat: None,
    }
}

/// P2: journal appends (fsync per frame) vs a bare write+fsync loop.
fn p2() -> Row {
    let mut journal = JournalWorkload::new();
    let line = journal.line();
    let mut bare = FsyncLoop::new(journal.dir.path());
    let per_round = 20;
    let (tj, tb) = side_by_side(
        15,
        || {
            timed(|| {
                for _ in 0..per_round {
                    journal.append();
                }
            })
        },
        || {
            timed(|| {
                for _ in 0..per_round {
                    bare.write(&line);
                }
            })
        },
    );
    let rate = |t: Duration| per_round as f64 / t.as_secs_f64();
    let ratio = rate(tj) / rate(tb);
    Row {
        id: "P2",
        what: "journal append, fsync per frame",
        measured: format!("{:.0} frames/s", rate(tj)),
        baseline: format!("{:.0} writes+fsync/s", rate(tb)),
        ratio,
        target: ">= 0.8",
        met: ratio >= 0.8,
        caveat: None,
    }
}

/// P3 with the book's 1 MiB segments (a segment roll, two file creations,
/// every 80 batches).
fn p3() -> Row {
    p3_with("P3", "log append acks=1, 100 x 100 B", 1 << 20)
}

/// P3 with Kafka's default 1 GiB segments: the append path without rolls.
fn p3_kafka_segments() -> Row {
    p3_with("P3k", "the same, 1 GiB segments", 1 << 30)
}

/// The 200 frames of a P3 round (100 x 100 B batches) and their bytes.
fn p3_frames_of_a_round() -> (Vec<Vec<u8>>, usize) {
    let frames: Vec<Vec<u8>> = (0..200)
        .map(|i| codec::encode(&perf::record_batch(100, 100, i)))
        .collect();
    let bytes = frames.iter().map(Vec::len).sum();
    (frames, bytes)
}

/// A P3-family row: `bytes` a round written in `measured` against the
/// baseline's buffered writes in `baseline`, as rates; `target` is P3's
/// 0.8 when given, else the row is reported only.
fn buffered_write_row(
    id: &'static str,
    what: &'static str,
    bytes: usize,
    (measured, baseline): (Duration, Duration),
    target: Option<f64>,
) -> Row {
    let rate = |t: Duration| bytes as f64 / MIB / t.as_secs_f64();
    let ratio = rate(measured) / rate(baseline);
    Row {
        id,
        what,
        measured: format!("{:.0} MiB/s", rate(measured)),
        baseline: format!("{:.0} MiB/s buffered", rate(baseline)),
        ratio,
        target: if target.is_some() {
            ">= 0.8"
        } else {
            "report only"
        },
        met: target.is_none_or(|t| ratio >= t),
        caveat: None,
    }
}

/// P3: acks=1 appends of 100 x 100 B batches vs buffered writes of the same
/// encoded frames.
fn p3_with(id: &'static str, what: &'static str, segment_max_bytes: u64) -> Row {
    let (frames, bytes) = p3_frames_of_a_round();
    let (_dir, cluster) = perf::cluster_with_segments(1, 1, segment_max_bytes);
    let tp = TopicPartition::new("t", 0);
    let mut raw = RawLogWriter::new();
    let times = side_by_side(
        15,
        || {
            let round = perf::p3_batches(frames.len());
            timed(|| {
                for batch in round {
                    perf::append_acks1(&cluster, &tp, batch);
                }
            })
        },
        || timed(|| raw.round(&frames)),
    );
    buffered_write_row(id, what, bytes, times, Some(0.8))
}

/// P3's ceiling: the baseline's buffered writes alone against the same
/// writes after one copy of each frame's bytes and its CRC, the least an
/// append handed records must add ([`P3Ceiling`]). No P3 ratio can exceed
/// this one (docs/performance.md, "P3's ceiling").
fn p3_ceiling() -> Row {
    let (frames, bytes) = p3_frames_of_a_round();
    let mut raw = RawLogWriter::new();
    let mut ceiling = P3Ceiling::new();
    let times = side_by_side(
        31,
        || {
            timed(|| {
                black_box(ceiling.copied(&frames));
            })
        },
        || timed(|| raw.round(&frames)),
    );
    let what = "P3's ceiling: one copy and CRC, then the write";
    buffered_write_row("P3c", what, bytes, times, None)
}

/// P3's bound ([`FrameAppend`]): the log's append of frames handed already
/// encoded (no encoding, no records to free), against the baseline's
/// buffered writes of the same bytes. What the log adds to the write
/// whatever the batch's representation (docs/performance.md, "P3's
/// bound").
fn p3_frames() -> Row {
    let (frames, bytes) = p3_frames_of_a_round();
    let mut log = FrameAppend::new(1 << 20);
    let mut raw = RawLogWriter::new();
    let times = side_by_side(
        15,
        || {
            let round = log.frames(frames.len());
            timed(|| {
                black_box(log.round(round));
            })
        },
        || timed(|| raw.round(&frames)),
    );
    let what = "P3's bound: the log's append of frames handed encoded";
    buffered_write_row("P3f", what, bytes, times, None)
}

/// P4: reopening a data directory (the short run holds 64 MiB; the bench
/// holds 256 MiB) vs reading and CRC-checking the same bytes.
fn p4() -> Row {
    let workload = perf::RecoveryWorkload::new(64 << 20);
    let (to, tr) = side_by_side(
        5,
        || timed(|| drop(black_box(workload.reopen()))),
        || {
            timed(|| {
                black_box(workload.read_and_crc());
            })
        },
    );
    let rate = |t: Duration| workload.log_bytes as f64 / MIB / t.as_secs_f64();
    let ratio = rate(to) / rate(tr);
    Row {
        id: "P4",
        what: "reopen 64 MiB of log (recovery scan)",
        measured: format!("{:.0} MiB/s", rate(to)),
        baseline: format!("{:.0} MiB/s read+crc32", rate(tr)),
        ratio,
        target: ">= 0.5",
        met: ratio >= 0.5,
        caveat: None,
    }
}

/// P5: one step back at step 10,000 vs one step forward, and vs one step
/// back near step 1,000 of the same recording that replays as many steps
/// from its checkpoint (so the two differ only by history).
fn p5() -> Row {
    let steps = 10_000;
    let recording = perf::generated_recording(steps);
    let mut late = Timeline::new(recording.clone(), 50).expect("timeline opens");
    late.goto(steps).expect("goto end");
    late.goto(steps - 1).expect("back");
    let distance = late.replayed();
    late.goto(steps).expect("forward");
    let mut early = Timeline::new(recording, 50).expect("timeline opens");
    early.goto(1_000).expect("goto 1,000");
    let checkpoint = early
        .checkpoint_steps()
        .into_iter()
        .rev()
        .find(|&c| c + distance < 1_000)
        .expect("a checkpoint before step 1,000");
    let early_at = checkpoint + distance + 1;
    early.goto(early_at).expect("goto");
    let mut worst_replayed = 0;
    let (mut back, mut back_early, mut forward) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds_p5() {
        back.push(timed(|| {
            late.goto(steps - 1).expect("back");
        }));
        worst_replayed = worst_replayed.max(late.replayed());
        forward.push(timed(|| {
            late.goto(steps).expect("forward");
        }));
        back_early.push(timed(|| {
            early.goto(early_at - 1).expect("back");
        }));
        assert_eq!(early.replayed(), distance, "same replay distance");
        early.goto(early_at).expect("forward");
    }
    let (tb, te, tf) = (median(back), median(back_early), median(forward));
    let (files, bytes) = dir_size(late.driver().data_dir());
    eprintln!(
        "P5: the data directory at step 10,000 holds {files} files, {:.2} MiB; both steps back replay {distance} steps",
        bytes as f64 / MIB
    );
    let history = tb.as_secs_f64() / te.as_secs_f64();
    let met = tb < Duration::from_millis(50) && worst_replayed <= 50;
    // Not bounded by history alone when the same replay costs more later.
    let caveat = (history > 1.5).then(|| format!("history x{history:.1}"));
    Row {
        id: "P5",
        what: "one step back at step 10,000",
        measured: format!("{} (replayed <= {worst_replayed})", ms(tb)),
        baseline: format!(
            "{} forward; {} back at step {early_at} (x{history:.2})",
            ms(tf),
            ms(te)
        ),
        ratio: tb.as_secs_f64() / tf.as_secs_f64(),
        target: "< 50 ms, <= 50 steps, not history",
        met,
        caveat,
    }
}

/// P7: transactions (begin, send one record, commit; RF 1) vs the floor of
/// the fsyncs they need: a bare write+fsync loop of a journal frame in the
/// same directory, divided by the frames a transaction journals
/// ([`perf::SYNCS_PER_TRANSACTION`]).
fn p7() -> Row {
    transactions("P7", Rules::Minikafka)
}

/// P7K: P7 under `--rules kafka`, where each begin also takes the
/// transactional id's next producer epoch: journaled in the begin's
/// frame, so the floor is the same four syncs.
fn p7k() -> Row {
    transactions("P7K", Rules::Kafka)
}

fn transactions(id: &'static str, rules: Rules) -> Row {
    let workload = TransactionWorkload::with_rules(rules);
    let frame = workload.frame();
    let mut bare = FsyncLoop::new(workload.dir.path());
    let per_round = 10;
    let syncs = perf::SYNCS_PER_TRANSACTION as usize;
    let (tt, tb) = side_by_side(
        15,
        || timed(|| workload.run(per_round)),
        || {
            timed(|| {
                for _ in 0..per_round * syncs {
                    bare.write(&frame);
                }
            })
        },
    );
    let rate = |t: Duration| per_round as f64 / t.as_secs_f64();
    let ratio = rate(tt) / rate(tb);
    Row {
        id,
        what: match rules {
            Rules::Minikafka => "transactions: begin, send 1, commit (RF 1)",
            Rules::Kafka => "transactions, --rules kafka: begin, send 1, commit (RF 1)",
        },
        measured: format!("{:.0} transactions/s", rate(tt)),
        baseline: format!(
            "{:.0}/s: {:.0} writes+fsync/s / {syncs}",
            rate(tb),
            rate(tb) * syncs as f64
        ),
        ratio,
        target: ">= 0.9",
        met: ratio >= 0.9,
        caveat: None,
    }
}

/// P7G: `MK_P7G_PRODUCERS` (default 4) transactional producers at once
/// under `--rules kafka`, their journal frames group-committed, against the
/// floor of the syncs that remain: a bare write+fdatasync loop's rate
/// divided by the fdatasyncs one transaction still cost (the group syncs
/// counted over the grouped rounds, divided by their transactions). Beside
/// it, the same producers unbatched (each frame fsynced under the state
/// lock, as before the switch): the speed-up is grouped / unbatched.
fn p7g() -> Row {
    let producers = std::env::var("MK_P7G_PRODUCERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4usize);
    let grouped = perf::ConcurrentTransactionWorkload::new(producers, true);
    let unbatched = perf::ConcurrentTransactionWorkload::new(producers, false);
    let frame = TransactionWorkload::with_rules(Rules::Kafka).frame();
    let mut bare = FsyncLoop::new(grouped.dir.path());
    let per_producer = 10;
    let bare_syncs = 20;
    let syncs_before = grouped.group_syncs().expect("group commit on");
    let rounds = 9;
    let mut tg = Vec::with_capacity(rounds);
    let mut tu = Vec::with_capacity(rounds);
    let mut tb = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        tg.push(timed(|| grouped.run(per_producer)));
        tu.push(timed(|| unbatched.run(per_producer)));
        tb.push(timed(|| {
            for _ in 0..bare_syncs {
                bare.write(&frame);
            }
        }));
    }
    let transactions = (rounds * per_producer * producers) as f64;
    let syncs = (grouped.group_syncs().expect("group commit on") - syncs_before) as f64;
    let per_transaction = syncs / transactions;
    let round = (per_producer * producers) as f64;
    let rate_g = round / median(tg).as_secs_f64();
    let rate_u = round / median(tu).as_secs_f64();
    let sync_rate = bare_syncs as f64 / median(tb).as_secs_f64();
    let floor = sync_rate / per_transaction;
    let ratio = rate_g / floor;
    Row {
        id: "P7G",
        what: "concurrent transactions, --rules kafka, journal group-committed (RF 1)",
        measured: format!(
            "{producers} producers: {rate_g:.0} transactions/s, {per_transaction:.2} fdatasync each (unbatched: {rate_u:.0}/s, x{:.1})",
            rate_g / rate_u
        ),
        baseline: format!("{floor:.0}/s: {sync_rate:.0} writes+fsync/s / {per_transaction:.2}"),
        ratio,
        target: ">= 0.9",
        met: ratio >= 0.9,
        caveat: None,
    }
}

/// Files and bytes under `dir`.
fn dir_size(dir: &std::path::Path) -> (u64, u64) {
    let mut out = (0, 0);
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let meta = entry.metadata().expect("metadata");
        if meta.is_dir() {
            let (f, b) = dir_size(&entry.path());
            out = (out.0 + f, out.1 + b);
        } else {
            out = (out.0 + 1, out.1 + meta.len());
        }
    }
    out
}

/// P6, in a child process so that nothing measured before counts: the
/// resident memory of a live dashboard holding 1M records of 100 B, in
/// batches of 100 records and (the worst case for per-batch state) of one.
fn p6() -> Row {
    let exe = std::env::current_exe().expect("own path");
    let mut worst = (0u64, 1u64, true);
    let mut shapes = Vec::new();
    for per_batch in [100, 1] {
        let out = Command::new(&exe)
            .args(["--p6-child", &per_batch.to_string()])
            .output()
            .expect("child runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let mut fields = text
            .split_whitespace()
            .map(|f| f.parse::<u64>().unwrap_or(0));
        let (grown, payload) = (
            fields.next().unwrap_or(u64::MAX),
            fields.next().unwrap_or(1),
        );
        shapes.push(format!("{:.1} MiB ({per_batch}/batch)", grown as f64 / MIB));
        if grown >= worst.0 {
            worst = (grown, payload, out.status.success());
        }
    }
    let (grown, payload, ok) = worst;
    let limit = 2 * payload + (30 << 20);
    Row {
        id: "P6",
        what: "resident memory, 1M records of 100 B",
        measured: shapes.join(", "),
        baseline: format!("{:.1} MiB payload", payload as f64 / MIB),
        ratio: grown as f64 / payload as f64,
        target: "<= 2x + 30 MiB",
        met: ok && grown <= limit,
        caveat: None,
    }
}

fn p6_child(records_per_batch: usize) {
    let before = perf::resident_bytes().expect("VmRSS in /proc/self/status");
    let workload = DashboardWorkload::with_batches(16, 65_536, records_per_batch);
    black_box(workload.frame(200, 60));
    let after = perf::resident_bytes().expect("VmRSS in /proc/self/status");
    let payload: u64 = 16 * 65_536 * 100;
    println!("{} {payload}", after.saturating_sub(before));
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--p6-child") {
        p6_child(args.get(1).and_then(|n| n.parse().ok()).unwrap_or(100));
        return;
    }
    // `perf_report P3 P4` runs only the named targets.
    let only: Vec<String> = std::env::args().skip(1).collect();
    let targets: [Target; 12] = [
        ("P1", p1),
        ("P2", p2),
        ("P3", p3),
        ("P3k", p3_kafka_segments),
        ("P3c", p3_ceiling),
        ("P3f", p3_frames),
        ("P4", p4),
        ("P5", p5),
        ("P6", p6),
        ("P7", p7),
        ("P7K", p7k),
        ("P7G", p7g),
    ];
    let rows: Vec<Row> = targets
        .iter()
        .filter(|(id, _)| only.is_empty() || only.iter().any(|o| o == id))
        .map(|(_, run)| run())
        .collect();
    println!(
        "| # | what | measured | baseline | ratio | target | met |\n| --- | --- | --- | --- | --- | --- | --- |"
    );
    for r in &rows {
        println!(
            "| {} | {} | {} | {} | {:.2} | {} | {} |",
            r.id,
            r.what,
            r.measured,
            r.baseline,
            r.ratio,
            r.target,
            match (r.met, &r.caveat) {
                (false, _) => "NO".to_string(),
                (true, None) => "yes".to_string(),
                (true, Some(c)) => format!("partly ({c})"),
            }
        );
    }
}

/// Rounds of P5's back-and-forth (`MK_P5_ROUNDS`, default 9): more for a
/// profile of the step back alone.
fn rounds_p5() -> usize {
    std::env::var("MK_P5_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(9)
}
