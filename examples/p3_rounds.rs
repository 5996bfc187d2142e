//! P3 under load: many alternating rounds of the two sides, with
//! percentiles (issue 17, item 13; docs/performance.md, "P3").
//!
//! A round is 200 acks=1 appends of 100 x 100 B batches into a fresh
//! cluster, against 200 buffered writes of the same encoded frames into a
//! fresh file (the criterion bench's workload; creating and dropping the
//! cluster and the file is outside the timing). On a shared 2-core machine
//! a round of 1-3 ms is often preempted by other processes for a whole time
//! slice, which lands more often in the longer side's rounds and moves the
//! median; the 10th and 25th percentiles are rounds that ran undisturbed.
//!
//! Each round also times P3's ceiling ([`perf::P3Ceiling`]): the same
//! buffered writes after the least an append handed records must add (a
//! copy of each frame's bytes and its CRC), and after the log's own
//! encoding of the batches. The baseline's CPU time over the copy's bounds
//! the P3 ratio of any implementation from above. And P3's bound
//! ([`perf::FrameAppend`]): the log's own append of the same batches handed
//! already encoded, what the log adds to the write whatever the batch's
//! representation.
//!
//! Run: `cargo run --release --example p3_rounds [ROUNDS] [SEGMENT_BYTES]`
//! (defaults: 201 rounds, the book's 1 MiB segments).

use std::time::{Duration, Instant};

use minikafka::engine::TopicPartition;
use minikafka::engine::core::codec;
use minikafka::perf::{self, FrameAppend, P3Ceiling, RawLogWriter};

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().map_or(201, |a| a.parse().expect("ROUNDS"));
    let segment_max_bytes: u64 = args
        .next()
        .map_or(1 << 20, |a| a.parse().expect("SEGMENT_BYTES"));
    let batches: Vec<_> = (0..200).map(|i| perf::record_batch(100, 100, i)).collect();
    let frames: Vec<Vec<u8>> = batches.iter().map(codec::encode).collect();
    let bytes: usize = frames.iter().map(Vec::len).sum();
    let tp = TopicPartition::new("t", 0);
    let (mut log, mut raw) = (Vec::new(), Vec::new());
    let (mut log_cpu, mut raw_cpu) = (Vec::new(), Vec::new());
    let (mut copied_cpu, mut encoded_cpu) = (Vec::new(), Vec::new());
    let mut handed_cpu = Vec::new();
    for _ in 0..rounds {
        let cluster = perf::cluster_with_segments(1, 1, segment_max_bytes);
        let round = perf::p3_batches(batches.len());
        let (start, cpu) = (Instant::now(), perf::thread_cpu());
        for batch in round {
            perf::append_acks1(&cluster.1, &tp, batch);
        }
        log.push(start.elapsed());
        log_cpu.push(perf::thread_cpu() - cpu);
        drop(cluster);
        let mut writer = RawLogWriter::new();
        let (start, cpu) = (Instant::now(), perf::thread_cpu());
        writer.round(&frames);
        raw.push(start.elapsed());
        raw_cpu.push(perf::thread_cpu() - cpu);
        let mut ceiling = P3Ceiling::new();
        let cpu = perf::thread_cpu();
        std::hint::black_box(ceiling.copied(&frames));
        copied_cpu.push(perf::thread_cpu() - cpu);
        let mut ceiling = P3Ceiling::new();
        let cpu = perf::thread_cpu();
        std::hint::black_box(ceiling.encoded(&batches));
        encoded_cpu.push(perf::thread_cpu() - cpu);
        let mut handed = FrameAppend::new(segment_max_bytes);
        let round = handed.frames(batches.len());
        let cpu = perf::thread_cpu();
        std::hint::black_box(handed.round(round));
        handed_cpu.push(perf::thread_cpu() - cpu);
        drop(handed);
    }
    for v in [
        &mut log,
        &mut raw,
        &mut log_cpu,
        &mut raw_cpu,
        &mut copied_cpu,
        &mut encoded_cpu,
        &mut handed_cpu,
    ] {
        v.sort();
    }
    let at = |v: &[Duration], p: usize| v[(v.len() - 1) * p / 100];
    let mib_s = |t: Duration| bytes as f64 / (1024.0 * 1024.0) / t.as_secs_f64();
    println!("P3 rounds: {rounds}, segments of {segment_max_bytes} B, {bytes} B a round");
    for p in [10, 25, 50] {
        let (l, r) = (at(&log, p), at(&raw, p));
        println!(
            "p{p}: log {:.0} MiB/s ({:.2} ms), raw {:.0} MiB/s ({:.2} ms), ratio {:.2}",
            mib_s(l),
            l.as_secs_f64() * 1e3,
            mib_s(r),
            r.as_secs_f64() * 1e3,
            r.as_secs_f64() / l.as_secs_f64()
        );
    }
    // This thread's CPU time: what the side cost, without the time other
    // processes (or this process's helper thread) ran instead.
    let (l, r) = (at(&log_cpu, 50), at(&raw_cpu, 50));
    println!(
        "p50 of this thread's CPU time: log {:.2} ms, raw {:.2} ms, ratio {:.2}",
        l.as_secs_f64() * 1e3,
        r.as_secs_f64() * 1e3,
        r.as_secs_f64() / l.as_secs_f64()
    );
    let (c, e) = (at(&copied_cpu, 50), at(&encoded_cpu, 50));
    println!(
        "P3's ceiling, p50 CPU: raw after a copy and CRC {:.2} ms (ratio {:.2}), \
         raw after the log's encoding {:.2} ms (ratio {:.2})",
        c.as_secs_f64() * 1e3,
        r.as_secs_f64() / c.as_secs_f64(),
        e.as_secs_f64() * 1e3,
        r.as_secs_f64() / e.as_secs_f64()
    );
    let h = at(&handed_cpu, 50);
    println!(
        "P3's bound, p50 CPU: the log's append of frames handed encoded {:.2} ms (ratio {:.2})",
        h.as_secs_f64() * 1e3,
        r.as_secs_f64() / h.as_secs_f64()
    );
}
