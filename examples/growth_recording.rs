//! Writes the generated recording of `minikafka::perf` (the one
//! `benches/growth.rs` and `examples/timeline_growth.rs` play) as a file,
//! so that the binary's own commands (`mk-tui state`, `render`, `replay`)
//! can be timed and profiled on it (docs/performance.md, "Growth").
//!
//! Run: `cargo run --release --example growth_recording -- STEPS FILE [--no-crashes]`

use minikafka::perf::generated_recording_with;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: growth_recording STEPS FILE [--no-crashes]";
    let steps: usize = args.first().and_then(|a| a.parse().ok()).expect(usage);
    let file = args.get(1).expect(usage);
    let crashes = !args.iter().any(|a| a == "--no-crashes");
    let recording = generated_recording_with(steps, crashes);
    std::fs::write(file, recording.to_jsonl()).expect("the recording is written");
}
