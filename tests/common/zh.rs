//! The words of a Chinese frame or sentence that may stay English: the
//! data a snapshot shows (topic names, keys, values, ids), shared by
//! `tests/chinese.rs` and `tests/zh_words.rs`.

use std::collections::BTreeSet;

use minikafka::session::Snapshot;

/// English words of a text: runs of ASCII letters (and `_`) of two or more,
/// not counting tokens with digits in them (CRCs, `e0`, `tx-1`'s parts).
pub fn words(s: &str) -> BTreeSet<String> {
    s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.len() >= 2 && !w.chars().any(|c| c.is_ascii_digit()))
        .map(str::to_string)
        .collect()
}

/// The data `s` shows, which stays as it is in any language: topic names,
/// transactional ids, records' keys and values, groups with staged or
/// committed offsets, pending appends' transactions, a torn file's name
/// (`transactions.journal`, a segment's `.log`).
pub fn data_words(s: &Snapshot) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for p in &s.partitions {
        out.extend(words(&p.topic));
        for b in &p.batches {
            out.extend(words(b.transactional_id.as_deref().unwrap_or("")));
            for r in &b.records {
                out.extend(words(r.value.as_deref().unwrap_or("")));
                out.extend(words(r.key.as_deref().unwrap_or("")));
            }
        }
    }
    for t in &s.transactions {
        out.extend(words(&t.id));
        out.extend(t.staged_offsets.keys().flat_map(|g| words(g)));
    }
    out.extend(s.committed_offsets.keys().flat_map(|g| words(g)));
    for p in &s.pending {
        out.extend(words(p.txn.as_deref().unwrap_or("")));
    }
    if let Some(m) = &s.moment_of_death {
        out.extend(m.torn.iter().flat_map(|t| words(&t.file)));
    }
    out
}
