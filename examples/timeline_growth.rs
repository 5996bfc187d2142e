//! Issue 17 item 11, measured by hand: a time-travel timeline (a checkpoint
//! every 50 steps) over the generated recording up to step N, then one step
//! back 10 steps after a checkpoint, timed over `BACKS` rounds (median),
//! and the process's peak RSS (`VmHWM`). With `render` as the mode, the
//! recording is only played forward, as `mk-tui render` does (no checkpoint
//! past step 0). The generated recording crashes every 600 steps, and a
//! crash's recovery reads the whole journal (O(steps²) in all, see
//! docs/performance.md "Growth"); `--no-crashes` advances the clock there
//! instead, which is what lets 1,000,000 steps run in minutes.
//!
//! Run: `cargo run --release --example timeline_growth -- 100000 [timeline|render] [--no-crashes]`

use std::time::{Duration, Instant};

use minikafka::perf::generated_recording_with;
use minikafka::session::Timeline;

/// Step backs timed at the end (`MK_BACKS` sets another count, for a
/// profiler attached once "reached" is printed on standard error).
const BACKS: usize = 30;

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let steps: usize = args
        .first()
        .and_then(|a| a.parse().ok())
        .expect("usage: timeline_growth STEPS [timeline|render] [--no-crashes]");
    let render = args.iter().any(|a| a == "render");
    let crashes = !args.iter().any(|a| a == "--no-crashes");
    let recording = generated_recording_with(steps + 100, crashes);
    let start = Instant::now();
    let every = if render { usize::MAX } else { 50 };
    let mut timeline = Timeline::new(recording, every).expect("timeline");
    timeline.goto(steps).expect("forward");
    let reached = start.elapsed();
    let kept = timeline.checkpoint_steps().len();
    let mut back = String::from("-");
    if !render {
        let points = timeline.checkpoint_steps();
        let checkpoint = points
            .iter()
            .rev()
            .find(|&&c| c + 10 < steps)
            .copied()
            .expect("a checkpoint before the end");
        let at = checkpoint + 11;
        timeline.goto(at).expect("to the start position");
        let backs = std::env::var("MK_BACKS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(BACKS)
            .max(1);
        eprintln!("reached step {steps}: timing {backs} step backs");
        let mut times: Vec<Duration> = (0..backs)
            .map(|_| {
                let t = Instant::now();
                timeline.goto(at - 1).expect("back");
                let took = t.elapsed();
                assert_eq!(timeline.replayed(), 10);
                timeline.goto(at).expect("forward again");
                took
            })
            .collect();
        times.sort();
        back = format!(
            "{:.2} ms (median of {backs})",
            times[backs / 2].as_secs_f64() * 1e3
        );
    }
    println!(
        "steps {steps} mode {} crashes {crashes}: reached in {:.1} s, checkpoints {kept}, step back {back}, peak RSS {:.0} MB",
        if render { "render" } else { "timeline" },
        reached.as_secs_f64(),
        peak_rss_mb()
    );
}
