//! The built-in demo cluster that plain `mk-tui` starts on: three brokers, a
//! replicated topic with data on every partition, a keyed topic written by a
//! named idempotent producer, a committed, an aborted and an open
//! transaction (so the LSO stands below the HW), and a stopped broker whose
//! partition failed over and which has fallen out of the ISR, so that every
//! pane has something to show.
//!
//! The demo is a recording (data, not code): a live session starts by
//! applying it, and `--record` writes it first so a replay reproduces the
//! session exactly.

use std::path::Path;

use crate::session::{Driver, Recording};

/// The demo as a recording.
pub const DEMO_RECORDING: &str = include_str!("../recordings/demo.jsonl");

/// The demo recording, parsed.
pub fn recording() -> Recording {
    Recording::parse("recordings/demo.jsonl", DEMO_RECORDING)
        .expect("the built-in demo recording parses")
}

/// A driver with the demo applied: in `data_dir` if given (it must be empty
/// or absent), else in a temporary directory.
pub fn driver(data_dir: Option<&Path>) -> Result<Driver, crate::session::SessionError> {
    let demo = recording();
    let mut driver = Driver::new(&demo.header, data_dir)?;
    for step in &demo.steps {
        driver.apply(&step.action);
    }
    Ok(driver)
}
