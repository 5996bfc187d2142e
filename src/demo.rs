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

use std::fmt::Write;
use std::path::Path;

use crate::engine::{BrokerCluster, IsolationLevel, Result};
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
pub fn driver(data_dir: Option<&Path>) -> std::result::Result<Driver, String> {
    let demo = recording();
    let mut driver = Driver::new(&demo.header, data_dir)?;
    for step in &demo.steps {
        driver.apply(&step.action);
    }
    Ok(driver)
}

/// A plain-text description of the cluster's state, partition by partition.
pub fn describe(cluster: &BrokerCluster) -> Result<String> {
    let mut out = String::new();
    let now = cluster.now_ms();
    let _ = writeln!(out, "clock: {now} ms");
    for tp in cluster.topic_partitions() {
        let set = cluster.replica_set(&tp)?;
        let isr: Vec<String> = set.isr().iter().map(u32::to_string).collect();
        let _ = writeln!(
            out,
            "{tp}: leader {} (epoch {}), ISR [{}], HW {}, LSO {}",
            set.leader(),
            set.leader_epoch(),
            isr.join(","),
            set.high_watermark(),
            cluster.last_stable_offset(&tp)?
        );
        for r in set.replicas() {
            let _ = writeln!(
                out,
                "  broker {}{}: LEO {}, lag {} offsets / {} ms{}{}",
                r.broker,
                if r.is_leader { " (leader)" } else { "" },
                r.log_end_offset,
                r.lag,
                r.ms_since_fetch,
                if r.in_sync {
                    ", in sync"
                } else {
                    ", out of sync"
                },
                if r.stopped { ", stopped" } else { "" },
            );
        }
        for (label, isolation) in [
            ("read_uncommitted", IsolationLevel::ReadUncommitted),
            ("read_committed", IsolationLevel::ReadCommitted),
        ] {
            match cluster.fetch(&tp, 0, 1000, isolation) {
                Ok(records) => {
                    let values: Vec<String> = records
                        .into_iter()
                        .map(|r| {
                            String::from_utf8_lossy(r.value.as_deref().unwrap_or_default())
                                .into_owned()
                        })
                        .collect();
                    let _ = writeln!(out, "  {label}: {values:?}");
                }
                Err(e) => {
                    let _ = writeln!(out, "  {label}: unavailable ({e})");
                }
            }
        }
    }
    for tx in cluster.transactions().all() {
        let parts: Vec<String> = tx
            .first_offsets
            .iter()
            .map(|(tp, o)| format!("{tp}@{o}"))
            .collect();
        let _ = writeln!(
            out,
            "transaction {}: {} [{}]",
            tx.id,
            tx.state,
            parts.join(", ")
        );
    }
    for (group, offsets) in cluster.offsets().all() {
        for (tp, offset) in offsets {
            let _ = writeln!(out, "group {group}: {tp} committed at {offset}");
        }
    }
    Ok(out)
}
