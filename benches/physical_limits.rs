//! Issue 7's targets P1-P4, each benched side by side with its baseline in
//! one group, so their ratio comes from one run on one (noisy, shared)
//! machine. P5 is `benches/time_travel.rs`; P6 (memory) is measured by
//! `examples/perf_report.rs` in a child process. The workloads are
//! `minikafka::perf`'s, the same the report runs.
//!
//! Run: `cargo bench --bench physical_limits`

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use minikafka::engine::TopicPartition;
use minikafka::engine::core::codec;
use minikafka::perf::{
    self, DashboardWorkload, FsyncLoop, JournalWorkload, RawLogWriter, RecoveryWorkload,
};

/// P1: one frame of the default layout at 200x60 over 16 partitions of
/// 64k records, against the same frame over 16 partitions of 100 records.
fn p1_frame(c: &mut Criterion) {
    let big = DashboardWorkload::new(16, 65_536);
    let small = DashboardWorkload::new(16, 100);
    let mut group = c.benchmark_group("p1_frame_200x60");
    group.bench_function("16x64k_records", |b| {
        b.iter(|| black_box(big.frame(200, 60)))
    });
    group.bench_function("16x100_records", |b| {
        b.iter(|| black_box(small.frame(200, 60)))
    });
    group.finish();
}

/// P2: a journal append (write, flush, fsync) against a bare write+fsync of
/// the same line on the same file system.
fn p2_journal(c: &mut Criterion) {
    let mut journal = JournalWorkload::new();
    let line = journal.line();
    let mut bare = FsyncLoop::new(journal.dir.path());
    let mut group = c.benchmark_group("p2_journal_fsync");
    group.sample_size(30);
    group.throughput(Throughput::Elements(1));
    group.bench_function("journal_append", |b| b.iter(|| journal.append()));
    group.bench_function("bare_write_fsync", |b| b.iter(|| bare.write(&line)));
    group.finish();
}

/// P3: acks=1 appends of 100 x 100 B batches against buffered writes of the
/// same encoded frames, with the book's 1 MiB segments (each MiB rolls a
/// segment: two file creations) and with Kafka's 1 GiB. Each iteration
/// writes 200 batches (2.5 MB) into fresh files, created and deleted outside
/// the timing, so neither side's file grows by gigabytes into the kernel's
/// writeback throttling.
fn p3_append(c: &mut Criterion) {
    const BATCHES: usize = 200;
    let batches: Vec<_> = (0..BATCHES)
        .map(|i| perf::record_batch(100, 100, i))
        .collect();
    let frames: Vec<Vec<u8>> = batches.iter().map(codec::encode).collect();
    let bytes: usize = frames.iter().map(Vec::len).sum();
    let tp = TopicPartition::new("t", 0);
    let mut group = c.benchmark_group("p3_append_200x(100x100B)");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(30);
    for (name, segment_max_bytes) in [
        ("log_append_acks1", 1u64 << 20),
        ("log_append_acks1_1GiB_segments", 1 << 30),
    ] {
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    let cluster = perf::cluster_with_segments(1, 1, segment_max_bytes);
                    (cluster, perf::p3_batches(BATCHES))
                },
                |(cluster, round)| {
                    for batch in round {
                        perf::append_acks1(&cluster.1, &tp, batch);
                    }
                    cluster
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.bench_function("raw_buffered_write", |b| {
        b.iter_batched(
            RawLogWriter::new,
            |mut raw| {
                for frame in &frames {
                    raw.write(black_box(frame));
                }
                raw.flush();
                raw
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// P4: reopening a data directory holding 256 MiB of log against reading
/// and CRC-checking the same segment files.
fn p4_recovery(c: &mut Criterion) {
    let workload = RecoveryWorkload::new(256 << 20);
    let mut group = c.benchmark_group("p4_reopen_256MiB");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(workload.log_bytes));
    group.bench_function("reopen_recovery_scan", |b| {
        b.iter(|| drop(black_box(workload.reopen())))
    });
    group.bench_function("raw_read_crc32", |b| {
        b.iter(|| black_box(workload.read_and_crc()))
    });
    group.finish();
}

criterion_group!(benches, p1_frame, p2_journal, p3_append, p4_recovery);
criterion_main!(benches);
