//! Issue 4's performance targets, measured side by side in one run:
//! the state at step 10,000 of a generated 10,000-step recording (a full
//! replay), one step back from there (restore the nearest checkpoint and
//! replay at most the checkpoint interval), and one step forward for the
//! ratio. Run: `cargo bench --bench time_travel`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use minikafka::session::{Recording, State, Timeline};

/// A 10,000-step recording in cycles of 12 that each end with nothing
/// pending (a checkpoint can only be taken then): a transaction over two
/// partitions with staged offsets, an acks=all produce, replication, the
/// clock, and every 600 steps a crash.
fn generated(steps: usize) -> Recording {
    let mut lines = vec![
        r#"{"mk_recording":1,"title":"generated","cluster":{"brokers":[1,2],"topics":[{"name":"out","partitions":2,"replication_factor":2},{"name":"in","partitions":1,"replication_factor":1}]}}"#.to_string(),
    ];
    for i in 0..steps {
        let t = i / 12;
        let txn = format!("t{}", t % 7);
        let action = match i % 12 {
            0 => format!(r#"{{"begin":{{"txn":"{txn}"}}}}"#),
            1 | 2 => format!(r#"{{"send":{{"txn":"{txn}","topic":"out","value":"value-{i}"}}}}"#),
            3 => format!(
                r#"{{"produce":{{"topic":"out","key":"k{i}","value":"p{i}","acks":"all"}}}}"#
            ),
            4 => format!(
                r#"{{"send_offsets":{{"txn":"{txn}","group":"g","offsets":[{{"topic":"in","partition":0,"offset":{i}}}]}}}}"#
            ),
            7 => format!(r#"{{"commit":{{"txn":"{txn}"}}}}"#),
            11 if i % 600 == 599 => r#"{"crash":{}}"#.to_string(),
            11 => r#"{"advance_clock":{"ms":100}}"#.to_string(),
            _ => r#"{"replicate":{}}"#.to_string(),
        };
        lines.push(format!(r#"{{"at_ms":{},"action":{action}}}"#, i * 100));
    }
    Recording::parse("generated.jsonl", &(lines.join("\n") + "\n"))
        .expect("generated recording parses")
}

fn bench(c: &mut Criterion) {
    let steps = 10_000;
    let recording = generated(steps);
    let mut group = c.benchmark_group("time_travel");
    group.sample_size(10);

    group.bench_function("state_at_step_10000_full_replay", |b| {
        b.iter(|| {
            let mut t = Timeline::new(recording.clone(), usize::MAX).unwrap();
            t.goto(steps).unwrap();
            black_box(State::of(t.driver()).to_json().len())
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
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
