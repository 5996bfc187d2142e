//! Issue 17 item 12: costs that must grow linearly with the work, each
//! measured at sizes 10x apart in one run, so the growth factor per 10x is
//! a ratio of two figures from the same run (docs/performance.md,
//! "Growth"). Linear work shows 10x for ten times the work, and a
//! per-operation cost that does not depend on the size shows 1x.
//!
//! - creating N partitions (topics of 100, RF 1): 10x is linear;
//! - one acks=1 append in a cluster of N partitions: 1x is flat (it visited
//!   every partition twice before, O(N) per operation);
//! - N steps of the generated recording without crashes: 10x is linear;
//! - `mk-tui state` over N steps of the generated recording *with* its
//!   crashes (one every 600 steps): 10x is linear, that is a crash's
//!   recovery costs what changed since the last one, not the history
//!   (100x when each crash reread the whole journal and every log). Each
//!   size runs a few times in one run and the table prints the medians
//!   side by side with their ratio; 100,000 steps take seconds a run, so
//!   criterion's ten samples are not taken there
//!   (`cargo bench --bench growth -- state`). Beside it, the same recording
//!   played forward as `mk-tui render` plays it (a timeline without
//!   checkpoints past step 0). `MK_GROWTH_1M=1` adds 1,000,000 steps (one
//!   run: minutes, and GB of memory); a replay timeline with checkpoints is
//!   `examples/timeline_growth.rs`, which takes minutes at 100,000 steps.
//!
//! Partitions stop at 5,000: every replica keeps two files open, and
//! 100,000 would pass the usual open-file limits. Run:
//! `cargo bench --bench growth`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group};
use minikafka::cli::state_of_recording;
use minikafka::engine::{BrokerCluster, ManualClock, MiniKafkaConfig, TopicPartition};
use minikafka::perf::{
    append_acks1, create_partitions, generated_recording, generated_recording_with,
    many_partitions, record_batch,
};
use minikafka::session::{Driver, Timeline};

fn create(c: &mut Criterion) {
    let mut group = c.benchmark_group("growth_create_partitions");
    group.sample_size(10);
    for n in [500u32, 5_000] {
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let dir = tempfile::tempdir().unwrap();
                    let mut config = MiniKafkaConfig::new(dir.path()).with_brokers([1]);
                    config.sync_writes = false;
                    let cluster = BrokerCluster::open(config, ManualClock::new()).unwrap();
                    let start = Instant::now();
                    create_partitions(&cluster, n);
                    total += start.elapsed();
                    // Closing and deleting the directory is not timed.
                    drop(cluster);
                    drop(dir);
                }
                total
            })
        });
    }
    group.finish();
}

fn append_among(c: &mut Criterion) {
    let mut group = c.benchmark_group("growth_append_acks1_among_partitions");
    for n in [500u32, 5_000] {
        let (_dir, cluster) = many_partitions(n);
        let tp = TopicPartition::new("t0", 0);
        let mut seed = 0;
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                seed += 1;
                black_box(append_acks1(&cluster, &tp, record_batch(1, 100, seed)))
            })
        });
    }
    group.finish();
}

fn steps(c: &mut Criterion) {
    let mut group = c.benchmark_group("growth_steps_without_crashes");
    group.sample_size(10);
    for n in [1_000usize, 10_000] {
        let recording = generated_recording_with(n, false);
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                let mut driver = Driver::new(&recording.header, None).unwrap();
                for step in &recording.steps {
                    driver.apply(&step.action);
                }
                black_box(driver.step())
            })
        });
    }
    group.finish();
}

/// CPU time (user and system) this process has used.
fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1_000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// `mk-tui state FILE` (`cli::state_of_recording`) over the generated
/// recording with its crashes at 1,000, 10,000 and 100,000 steps (and
/// 1,000,000 with `MK_GROWTH_1M=1`; the median of `RUNS` runs each, one
/// run at 1,000,000, wall and CPU time), the same recording played forward
/// as `mk-tui render` plays it (CPU time), and one more crash's recovery at
/// the end of it (the median of 5): printed with the growth per 10x. Wall
/// time includes every frame's fsync, which the other processes on the
/// machine make noisy; CPU time does not wait for the disk.
fn state_with_crashes() {
    const RUNS: usize = 3;
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let dir = tempfile::tempdir().unwrap();
    let mut sizes = vec![1_000usize, 10_000, 100_000];
    if std::env::var_os("MK_GROWTH_1M").is_some() {
        sizes.push(1_000_000);
    }
    let mut rows = Vec::new();
    for steps in sizes {
        let runs = if steps >= 1_000_000 { 1 } else { RUNS };
        let recording = generated_recording(steps);
        let file = dir.path().join(format!("generated-{steps}.jsonl"));
        std::fs::write(&file, recording.to_jsonl()).unwrap();
        let (wall, cpu): (Vec<_>, Vec<_>) = (0..runs)
            .map(|_| {
                let (start, cpu) = (Instant::now(), cpu_time());
                black_box(state_of_recording(&file, None, None).unwrap());
                (start.elapsed(), cpu_time() - cpu)
            })
            .unzip();
        let render = (0..runs)
            .map(|_| {
                let cpu = cpu_time();
                let mut timeline = Timeline::new(recording.clone(), usize::MAX).unwrap();
                timeline.goto(steps).unwrap();
                black_box(timeline.driver().step());
                cpu_time() - cpu
            })
            .collect();
        let mut driver = Driver::new(&recording.header, None).unwrap();
        for step in &recording.steps {
            driver.apply(&step.action);
        }
        let crash = (0..5)
            .map(|_| {
                let start = Instant::now();
                black_box(driver.cluster().crash().unwrap());
                start.elapsed()
            })
            .collect();
        rows.push((
            steps,
            [median(wall), median(cpu), median(render), median(crash)],
        ));
    }
    let per_10x = |now: Duration, before: Option<Duration>| {
        before.map_or(String::new(), |b| {
            format!(" ({:.1}x)", now.as_secs_f64() / b.as_secs_f64())
        })
    };
    println!(
        "growth_state_with_crashes (median of {RUNS} runs, 1 at 1,000,000 steps; a crash every 600 steps; (per 10x))"
    );
    println!(
        "| steps | crashes | `mk-tui state`, wall | CPU | played as `render` plays, CPU | one more crash at the end |"
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    let mut before: Option<[Duration; 4]> = None;
    for (steps, now) in rows {
        let was = |i: usize| before.map(|b| b[i]);
        println!(
            "| {steps} | {} | {:.3} s{} | {:.3} s{} | {:.3} s{} | {:.2} ms{} |",
            steps / 600,
            now[0].as_secs_f64(),
            per_10x(now[0], was(0)),
            now[1].as_secs_f64(),
            per_10x(now[1], was(1)),
            now[2].as_secs_f64(),
            per_10x(now[2], was(2)),
            now[3].as_secs_f64() * 1e3,
            per_10x(now[3], was(3)),
        );
        before = Some(now);
    }
}

criterion_group!(benches, create, append_among, steps);

/// Criterion's groups, then the `state` table: run it with no filter or a
/// filter naming `state` (it takes a minute).
fn main() {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if filters.iter().all(|f| f != "state") {
        benches();
        Criterion::default().configure_from_args().final_summary();
    }
    if filters.is_empty()
        || filters
            .iter()
            .any(|f| "growth_state_with_crashes".contains(f.as_str()))
    {
        state_with_crashes();
    }
}
