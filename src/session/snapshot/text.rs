//! The text state: a plain-text renderer of a [`Snapshot`], partition by
//! partition (what `mk-tui` prints when standard output is not a terminal).

use std::fmt::Write;

use crate::session::snapshot::Snapshot;

/// The snapshot as plain text.
pub fn render(s: &Snapshot) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "clock: {} ms", s.clock_ms);
    for p in &s.partitions {
        let isr: Vec<String> = p.isr.iter().map(u32::to_string).collect();
        let _ = writeln!(
            out,
            "{}: leader {} (epoch {}), ISR [{}], HW {}, LSO {}",
            p.name(),
            p.leader,
            p.leader_epoch,
            isr.join(","),
            p.high_watermark,
            p.last_stable_offset
        );
        for r in &p.replicas {
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
        for b in &p.batches {
            let range = if b.base_offset == b.last_offset {
                b.base_offset.to_string()
            } else {
                format!("{}-{}", b.base_offset, b.last_offset)
            };
            let _ = writeln!(
                out,
                "  batch {range}: {} ({})",
                b.fate.name(),
                b.explanation
            );
        }
        let name = p.name();
        for (label, values) in [
            ("read_uncommitted", s.consumers.read_uncommitted.get(&name)),
            ("read_committed", s.consumers.read_committed.get(&name)),
        ] {
            let values: Vec<&str> = values
                .into_iter()
                .flatten()
                .map(|v| v.as_deref().unwrap_or("null"))
                .collect();
            let _ = writeln!(out, "  {label}: {values:?}");
        }
    }
    for tx in &s.transactions {
        let parts: Vec<String> = tx
            .partitions
            .iter()
            .map(|tp| match tx.first_offsets.get(tp) {
                Some(o) => format!("{tp}@{o}"),
                None => tp.clone(),
            })
            .collect();
        let _ = writeln!(
            out,
            "transaction {}: {} [{}]",
            tx.id,
            tx.state,
            parts.join(", ")
        );
    }
    for (group, offsets) in &s.committed_offsets {
        for (tp, offset) in offsets {
            let _ = writeln!(out, "group {group}: {tp} committed at {offset}");
        }
    }
    for e in &s.errors {
        let _ = writeln!(out, "error at step {}: {}", e.step, e.message);
    }
    out
}
