//! A batch's fate from what the wire shows alone (docs/observe.md
//! "Fates"). The embedded cluster's rule
//! ([`crate::session::snapshot::fate::decide`]) reads the transaction
//! journal, which no Kafka API exposes, so the observer uses a simpler
//! rule built on what a consumer actually gets:
//!
//! - a control batch is `control`;
//! - at or above the HW, `above_hw` (a consumer's fetch never returns it,
//!   so in practice no fetched batch has it);
//! - below the LSO, `committed` when a read_committed consumer returns it
//!   (the read_committed fetch with its `aborted_transactions` applied as
//!   Kafka's consumer applies them), else `aborted`: the wire cannot tell
//!   an aborted batch from one the embedded cluster calls orphaned;
//! - at or above the LSO, plain data is `held_back`; transactional data is
//!   `aborted` or `held_back` when the first ABORT or COMMIT marker of the
//!   same producer id after it has its epoch or a later one (producer id
//!   ≥ 0 only), else `ongoing`; [`super::transactions::decide`] then
//!   makes an `ongoing` batch `decided` when DescribeTransactions says its
//!   producer id is deciding (`Prepare*`) at its epoch or the next. The
//!   book's transactions have producer id -1, so there a decided
//!   transaction whose markers are missing still looks ongoing.
//!
//! A marker may carry a later epoch than its data: Kafka's coordinator
//! bumps the epoch when it ends a transaction under transaction version 2
//! (KIP-890; Kafka 4.x with its Java client 4.x) and when it aborts one
//! that timed out (any version), and writes the markers with the bumped
//! epoch. A producer's transactions on a partition follow each other, so
//! the first marker of its id after its data ends the data's transaction.

use std::collections::{BTreeMap, BTreeSet};

use crate::session::snapshot::{ControlKind, Fate};

use super::batches::WireBatch;
use super::fetch::Fetched;

/// The base offsets of the data batches a read_committed consumer returns
/// from `fetched`, applying the aborted transactions as Kafka's consumer
/// does: from an aborted transaction's first offset, the batches of its
/// producer id are skipped until that producer's ABORT marker.
pub fn read_committed_visible(fetched: &Fetched) -> BTreeSet<i64> {
    let mut aborted = fetched.aborted.clone();
    aborted.sort_by_key(|&(_, first)| first);
    let mut pending = aborted.into_iter().peekable();
    let mut skipping: BTreeSet<i64> = BTreeSet::new();
    let mut visible = BTreeSet::new();
    for b in &fetched.batches {
        while let Some(&(pid, _)) = pending.peek().filter(|(_, first)| *first <= b.last_offset) {
            skipping.insert(pid);
            pending.next();
        }
        match b.control {
            Some(ControlKind::Abort) => {
                skipping.remove(&b.producer_id);
            }
            Some(ControlKind::Commit) => {}
            None if b.transactional && skipping.contains(&b.producer_id) => {}
            None => {
                visible.insert(b.base_offset);
            }
        }
    }
    visible
}

/// The fate of each batch of `batches` (the read_uncommitted fetch) and
/// why, keyed by base offset.
pub fn fates(
    batches: &[WireBatch],
    committed: &BTreeSet<i64>,
    hw: i64,
    lso: i64,
) -> BTreeMap<i64, (Fate, String)> {
    let mut out = BTreeMap::new();
    for (i, b) in batches.iter().enumerate() {
        let at = b.base_offset;
        let decided = if let Some(c) = b.control {
            (
                Fate::Control,
                format!(
                    "{} marker of producer {} at offset {at}: consumers never see it",
                    c.name().to_uppercase(),
                    b.producer_id
                ),
            )
        } else if at >= hw {
            (
                Fate::AboveHighWatermark,
                format!("offset {at} >= HW {hw}: no consumer reads it"),
            )
        } else if at < lso {
            if committed.contains(&at) {
                (
                    Fate::Committed,
                    format!("offset {at} < LSO {lso} and a read_committed fetch returns it"),
                )
            } else {
                (
                    Fate::Aborted,
                    format!("offset {at} < LSO {lso} but a read_committed fetch skips it"),
                )
            }
        } else if !b.transactional {
            (
                Fate::HeldBack,
                format!(
                    "plain data at offset {at} >= LSO {lso}: read_committed waits behind an open transaction"
                ),
            )
        } else {
            match marker_after(&batches[i + 1..], b) {
                Some((ControlKind::Abort, m)) => (
                    Fate::Aborted,
                    format!(
                        "producer {} aborted: ABORT marker at offset {m}",
                        b.producer_id
                    ),
                ),
                Some((ControlKind::Commit, m)) => (
                    Fate::HeldBack,
                    format!(
                        "producer {} committed (COMMIT marker at offset {m}), but offset {at} >= LSO {lso}",
                        b.producer_id
                    ),
                ),
                None => (
                    Fate::Ongoing,
                    format!(
                        "transactional data at offset {at} >= LSO {lso} with no marker after it: its transaction is open"
                    ),
                ),
            }
        };
        out.insert(at, decided);
    }
    out
}

/// The marker that ends `b`'s transaction: the first after it of its
/// producer id, at its epoch or a later one (see the module's note on
/// bumped epochs), when it has a producer id (the book's rules write -1
/// for every transaction, so a marker cannot be matched to its data by
/// producer).
fn marker_after(later: &[WireBatch], b: &WireBatch) -> Option<(ControlKind, i64)> {
    if b.producer_id < 0 {
        return None;
    }
    later
        .iter()
        .find(|m| {
            m.control.is_some()
                && m.producer_id == b.producer_id
                && m.producer_epoch >= b.producer_epoch
        })
        .and_then(|m| Some((m.control?, m.base_offset)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(at: i64, pid: i64, txn: bool, control: Option<ControlKind>) -> WireBatch {
        epoch_batch(at, pid, 0, txn, control)
    }

    fn epoch_batch(
        at: i64,
        pid: i64,
        epoch: i16,
        txn: bool,
        control: Option<ControlKind>,
    ) -> WireBatch {
        WireBatch {
            base_offset: at,
            last_offset: at,
            leader_epoch: 0,
            crc: 0,
            producer_id: pid,
            producer_epoch: epoch,
            base_sequence: 0,
            transactional: txn,
            control,
            compressed: false,
            records: Vec::new(),
            bad_crc: None,
        }
    }

    #[test]
    fn an_aborted_producer_is_skipped_up_to_its_abort_marker_only() {
        let fetched = Fetched {
            batches: vec![
                batch(0, 7, true, None),
                batch(1, 8, true, None),
                batch(2, 7, true, Some(ControlKind::Abort)),
                batch(3, 8, true, Some(ControlKind::Commit)),
                batch(4, 7, true, None),
                batch(5, -1, false, None),
            ],
            aborted: vec![(7, 0)],
            watermarks: None,
            cut_at: None,
        };
        let visible = read_committed_visible(&fetched);
        assert_eq!(visible, BTreeSet::from([1, 4, 5]));
        let fates = fates(&fetched.batches, &visible, 6, 6);
        let names: Vec<&str> = fates.values().map(|(f, _)| f.name()).collect();
        assert_eq!(
            names,
            [
                "aborted",
                "committed",
                "control",
                "control",
                "committed",
                "committed"
            ]
        );
    }

    #[test]
    fn above_the_lso_markers_decide_and_unmatched_data_is_ongoing() {
        let batches = vec![
            batch(0, 3, true, None),
            batch(1, 4, true, None),
            batch(2, -1, false, None),
            batch(3, 4, true, Some(ControlKind::Abort)),
        ];
        let fates = fates(&batches, &BTreeSet::new(), 4, 0);
        let names: Vec<&str> = fates.values().map(|(f, _)| f.name()).collect();
        assert_eq!(names, ["ongoing", "aborted", "held_back", "control"]);
    }

    #[test]
    fn a_marker_with_a_bumped_epoch_ends_the_data_before_it() {
        // Kafka 4.x under transaction version 2: each transaction's marker
        // carries the epoch after its data's; the next transaction writes
        // at that epoch. Above the LSO (0, held by producer 1).
        let batches = vec![
            epoch_batch(0, 1, 0, true, None),
            epoch_batch(1, 9, 0, true, None),
            epoch_batch(2, 9, 1, true, Some(ControlKind::Commit)),
            epoch_batch(3, 9, 1, true, None),
            epoch_batch(4, 9, 2, true, Some(ControlKind::Abort)),
            epoch_batch(5, 9, 2, true, None),
            // An older epoch's marker (not possible from one coordinator)
            // does not end newer data.
            epoch_batch(6, 9, 1, true, Some(ControlKind::Commit)),
        ];
        let fates = fates(&batches, &BTreeSet::new(), 7, 0);
        let names: Vec<&str> = fates.values().map(|(f, _)| f.name()).collect();
        assert_eq!(
            names,
            [
                "ongoing",
                "held_back",
                "control",
                "aborted",
                "control",
                "ongoing",
                "control"
            ]
        );
    }
}
