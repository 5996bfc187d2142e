//! The fate check of issue 12: every batch's one fate must agree with what
//! the consumers of the same `Snapshot` read. A read_committed consumer reads
//! exactly the records of the batches whose fate is `committed`; a
//! read_uncommitted one exactly those of the batches below the HW that are
//! not markers (so aborted, ongoing, decided and orphaned data never reach
//! read_committed, and held-back data reaches read_uncommitted only). The
//! lists are compared in full and in order, so a wrong fate anywhere fails.

use minikafka::session::snapshot::{Fate, Snapshot};

/// Where the fates and the consumer lists of `s` disagree (empty: they
/// agree). `s` must be a full snapshot (`Snapshot::of`).
pub fn disagreements(s: &Snapshot) -> Vec<String> {
    let mut out = Vec::new();
    for p in &s.partitions {
        let name = p.name();
        // A stopped leader serves no consumer: the lists are empty.
        if p.replicas.iter().any(|r| r.is_leader && r.stopped) {
            continue;
        }
        assert_eq!(p.batches.len(), p.batch_count, "{name}: a full snapshot");
        for (isolation, sees, got) in [
            (
                "read_committed",
                Fate::read_committed_sees as fn(Fate) -> bool,
                &s.consumers.read_committed,
            ),
            (
                "read_uncommitted",
                Fate::read_uncommitted_sees,
                &s.consumers.read_uncommitted,
            ),
        ] {
            let want: Vec<Option<String>> = p
                .batches
                .iter()
                .filter(|b| sees(b.fate))
                .flat_map(|b| b.records.iter().map(|r| r.value.clone()))
                .collect();
            let got = got.get(&name).cloned().unwrap_or_default();
            if want != got {
                let fates: Vec<String> = p
                    .batches
                    .iter()
                    .map(|b| format!("{}@{}", b.fate.name(), b.base_offset))
                    .collect();
                out.push(format!(
                    "step {}: {name} {isolation}: the fates [{}] say {want:?}, the consumer read {got:?}",
                    s.step,
                    fates.join(" ")
                ));
            }
        }
    }
    out
}
