//! What one dashboard frame costs over a large log: P1's workload (the
//! default layout, batches of 100 records of 100 B) at any size, its frames
//! drawn one after another, their median and slowest times printed.
//! `docs/performance.md` ("P1") quotes it over 10 million records.
//!
//! Run: `cargo run --release --example frame_cost -- [PARTITIONS]
//! [RECORDS_PER_PARTITION] [FRAMES]` (default 16 x 625,000 = 10M records,
//! 101 frames at 200x60).

use std::hint::black_box;
use std::time::Instant;

use minikafka::perf::DashboardWorkload;

fn arg(n: usize, default: usize) -> usize {
    std::env::args()
        .nth(n)
        .and_then(|a| a.replace(['_', ','], "").parse().ok())
        .unwrap_or(default)
}

fn main() {
    let partitions = arg(1, 16);
    let records = arg(2, 625_000);
    let frames = arg(3, 101).max(1);
    let filled = Instant::now();
    let workload = DashboardWorkload::new(
        u32::try_from(partitions).expect("partitions fit in u32"),
        records,
    );
    println!(
        "filled {partitions} x {records} records ({} in all) in {:.1} s",
        partitions * records,
        filled.elapsed().as_secs_f64()
    );
    let mut times: Vec<f64> = (0..frames)
        .map(|_| {
            let start = Instant::now();
            black_box(workload.frame(200, 60));
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!(
        "frame 200x60: median {:.2} ms, fastest {:.2} ms, slowest {:.2} ms ({frames} frames)",
        times[times.len() / 2],
        times[0],
        times[times.len() - 1],
    );
}
