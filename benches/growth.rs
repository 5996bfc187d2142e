//! Issue 17 item 12: costs that must grow linearly with the work, each
//! measured at sizes 10x apart in one run, so the growth factor per 10x is
//! a ratio of two figures from the same run (docs/performance.md,
//! "Growth"). Linear work shows 10x for ten times the work, and a
//! per-operation cost that does not depend on the size shows 1x.
//!
//! - creating N partitions (topics of 100, RF 1): 10x is linear;
//! - one acks=1 append in a cluster of N partitions: 1x is flat (it visited
//!   every partition twice before, O(N) per operation);
//! - N steps of the generated recording without crashes: 10x is linear.
//!
//! Partitions stop at 5,000: every replica keeps two files open, and
//! 100,000 would pass the usual open-file limits. Run:
//! `cargo bench --bench growth`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use minikafka::engine::{BrokerCluster, ManualClock, MiniKafkaConfig, TopicPartition};
use minikafka::perf::{
    append_acks1, create_partitions, generated_recording_with, many_partitions, record_batch,
};
use minikafka::session::Driver;

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

criterion_group!(benches, create, append_among, steps);
criterion_main!(benches);
