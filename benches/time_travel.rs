//! Issue 4's performance targets, measured side by side in one run:
//! the state at step 10,000 of a generated 10,000-step recording (a full
//! replay), one step back from there (restore the nearest checkpoint and
//! replay at most the checkpoint interval), and one step forward for the
//! ratio. Run: `cargo bench --bench time_travel`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use minikafka::perf::generated_recording;
use minikafka::session::{Snapshot, Timeline};

fn bench(c: &mut Criterion) {
    let steps = 10_000;
    let recording = generated_recording(steps);
    let mut group = c.benchmark_group("time_travel");
    group.sample_size(10);

    group.bench_function("state_at_step_10000_full_replay", |b| {
        b.iter(|| {
            let mut t = Timeline::new(recording.clone(), usize::MAX).unwrap();
            t.goto(steps).unwrap();
            black_box(Snapshot::of(t.driver()).to_json().len())
        })
    });

    let mut timeline = Timeline::new(recording.clone(), 50).unwrap();
    timeline.goto(steps).unwrap();
    // Each sample times only its own move; the way back to the start
    // position is outside the timing.
    group.bench_function("one_step_back_at_10000", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                timeline.goto(steps - 1).unwrap();
                total += start.elapsed();
                assert!(
                    timeline.replayed() <= 60,
                    "replayed {}",
                    timeline.replayed()
                );
                timeline.goto(steps).unwrap();
            }
            total
        })
    });
    group.bench_function("one_step_forward_at_9999", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                timeline.goto(steps - 1).unwrap();
                let start = Instant::now();
                timeline.goto(steps).unwrap();
                total += start.elapsed();
            }
            total
        })
    });
    // The same replay distance near step 1,000: the two differ only by
    // history (the data directory's size and the state a restore clones).
    timeline.goto(steps - 1).unwrap();
    let distance = timeline.replayed();
    timeline.goto(steps).unwrap();
    let mut early = Timeline::new(recording.clone(), 50).unwrap();
    early.goto(1_000).unwrap();
    let checkpoint = early
        .checkpoint_steps()
        .into_iter()
        .rev()
        .find(|&c| c + distance < 1_000)
        .unwrap();
    let at = checkpoint + distance + 1;
    early.goto(at).unwrap();
    group.bench_function("one_step_back_near_1000_same_replay", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                early.goto(at - 1).unwrap();
                total += start.elapsed();
                assert_eq!(early.replayed(), distance);
                early.goto(at).unwrap();
            }
            total
        })
    });
    group.finish();
}

/// Issue 17 item 11: one step back at the same replay distance (10 steps
/// after a checkpoint) at steps 1,000, 10,000 and, with
/// `MK_BENCH_100K=1`, 100,000 (reaching step 100,000 takes minutes).
fn step_back_by_history(c: &mut Criterion) {
    let mut sizes = vec![1_000usize, 10_000];
    if std::env::var_os("MK_BENCH_100K").is_some() {
        sizes.push(100_000);
    }
    let distance = 10;
    let recording = generated_recording(*sizes.last().unwrap() + 100);
    let mut group = c.benchmark_group("time_travel_step_back_by_history");
    group.sample_size(20);
    let mut timeline = Timeline::new(recording, 50).unwrap();
    let mut medians: Vec<(usize, Duration)> = Vec::new();
    for n in sizes {
        timeline.goto(n).unwrap();
        // The newest checkpoint with no other within `distance` after it.
        let steps = timeline.checkpoint_steps();
        let checkpoint = steps
            .iter()
            .enumerate()
            .rev()
            .map(|(i, &c)| (c, steps.get(i + 1).copied().unwrap_or(usize::MAX)))
            .find(|&(c, next)| c + distance < n && next >= c + distance)
            .map(|(c, _)| c)
            .unwrap();
        let at = checkpoint + distance + 1;
        timeline.goto(at).unwrap();
        // A median of our own, for the ratio printed at the end.
        let mut times: Vec<Duration> = (0..15)
            .map(|_| {
                let start = Instant::now();
                timeline.goto(at - 1).unwrap();
                let took = start.elapsed();
                timeline.goto(at).unwrap();
                took
            })
            .collect();
        times.sort();
        medians.push((n, times[times.len() / 2]));
        group.bench_function(format!("at_{n}"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    timeline.goto(at - 1).unwrap();
                    total += start.elapsed();
                    assert_eq!(timeline.replayed(), distance);
                    timeline.goto(at).unwrap();
                }
                total
            })
        });
    }
    group.finish();
    // Issue 17 item 11: the cost per 10x more history (1.0x is flat).
    let first = medians[0].1.as_secs_f64();
    let line: Vec<String> = medians
        .iter()
        .map(|(n, t)| {
            format!(
                "{n}: {:.2} ms ({:.1}x)",
                t.as_secs_f64() * 1e3,
                t.as_secs_f64() / first
            )
        })
        .collect();
    println!("step back by history (median of 15): {}", line.join(", "));
}

criterion_group!(benches, bench, step_back_by_history);
criterion_main!(benches);
