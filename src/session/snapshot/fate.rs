//! One fate per batch, decided in one place (issue 12, item 3). The fate is
//! what becomes of a batch for the consumers, and it is decided by the same
//! rules the engine's read_committed fetch applies (E11: below the LSO, and
//! a transactional batch only if its own instance is COMPLETE_COMMIT), so a
//! label on screen can never disagree with what a consumer gets. The
//! `fates_agree_with_the_consumers` test in `tests/snapshot.rs` walks every
//! recording to hold it to that.

use serde::{Deserialize, Serialize};

use crate::engine::core::cluster::ClusterState;
use crate::engine::log::partition_log::BatchSummary;
use crate::engine::replication::model::TransactionVisibility;
use crate::engine::transaction::TransactionState;
use crate::engine::{RecordBatch, TopicPartition};

/// What becomes of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fate {
    /// Readable by read_committed: plain data below the LSO, or data of a
    /// COMPLETE_COMMIT transaction below the LSO.
    Committed,
    /// Data of a COMPLETE_ABORT transaction: read_committed filters it out.
    Aborted,
    /// Data of an ONGOING transaction.
    Ongoing,
    /// Data of a PREPARE_COMMIT or PREPARE_ABORT transaction: decided, but
    /// its markers are missing, so nobody reads it yet.
    Decided,
    /// Below the HW but at or above the LSO: read_uncommitted returns it,
    /// read_committed waits until the LSO passes it.
    HeldBack,
    /// At or above the HW: not yet on every ISR replica, nobody reads it.
    #[serde(rename = "above_hw")]
    AboveHighWatermark,
    /// Transactional data that no journaled instance owns (for example
    /// after a torn journal lost the frame that did): never committed.
    Orphaned,
    /// A COMMIT or ABORT marker: no consumer ever gets it.
    Control,
}

impl Fate {
    /// Every fate, in the order of the table in `docs/dashboard.md`.
    pub const ALL: [Fate; 8] = [
        Fate::Committed,
        Fate::Aborted,
        Fate::Ongoing,
        Fate::Decided,
        Fate::HeldBack,
        Fate::AboveHighWatermark,
        Fate::Orphaned,
        Fate::Control,
    ];

    /// The snake_case name (the state JSON's and the label's key).
    pub fn name(self) -> &'static str {
        match self {
            Fate::Committed => "committed",
            Fate::Aborted => "aborted",
            Fate::Ongoing => "ongoing",
            Fate::Decided => "decided",
            Fate::HeldBack => "held_back",
            Fate::AboveHighWatermark => "above_hw",
            Fate::Orphaned => "orphaned",
            Fate::Control => "control",
        }
    }

    /// The fate in a few words, for sentences ("above the HW").
    pub fn words(self) -> &'static str {
        match self {
            Fate::Committed => "committed",
            Fate::Aborted => "aborted",
            Fate::Ongoing => "ongoing",
            Fate::Decided => "decided, markers missing",
            Fate::HeldBack => "held back by the LSO",
            Fate::AboveHighWatermark => "above the HW",
            Fate::Orphaned => "orphaned",
            Fate::Control => "a marker",
        }
    }

    /// Whether a fresh read_committed consumer gets the batch's records.
    pub fn read_committed_sees(self) -> bool {
        self == Fate::Committed
    }

    /// Whether a fresh read_uncommitted consumer gets the batch's records:
    /// everything below the HW but markers.
    pub fn read_uncommitted_sees(self) -> bool {
        !matches!(self, Fate::AboveHighWatermark | Fate::Control)
    }
}

/// A batch's fate on `tp` and the reason in words, from its header alone.
/// `hw` and `lso` are the partition's; `s` is read, never changed.
pub fn decide(
    s: &ClusterState,
    tp: &TopicPartition,
    b: &BatchSummary,
    hw: i64,
    lso: i64,
) -> (Fate, String) {
    let at = b.base_offset;
    if let Some(control) = b.control {
        return (
            Fate::Control,
            format!(
                "{} marker of {} at offset {at}: consumers never see it; it closes the transaction on {tp}",
                control.name().to_uppercase(),
                b.transactional_id.as_deref().unwrap_or("?"),
            ),
        );
    }
    if at >= hw {
        return (
            Fate::AboveHighWatermark,
            format!("offset {at} >= HW {hw}: not on every ISR replica yet, no consumer reads it"),
        );
    }
    let Some(id) = b.transactional_id.as_deref() else {
        return if at >= lso {
            (
                Fate::HeldBack,
                format!(
                    "plain data at offset {at} >= LSO {lso}: read_uncommitted reads it, read_committed waits behind an open transaction"
                ),
            )
        } else {
            (
                Fate::Committed,
                format!("plain data at offset {at} < LSO {lso}: every consumer reads it"),
            )
        };
    };
    let coordinator = s.transactions();
    let Some(owner) = coordinator.owner(id, tp, at) else {
        return (
            Fate::Orphaned,
            format!("no journal frame of {id} owns offset {at} on {tp}: it can never commit"),
        );
    };
    match owner.state {
        TransactionState::Ongoing => (
            Fate::Ongoing,
            format!("{id} is ONGOING: offset {at} >= LSO {lso}, nobody decided yet"),
        ),
        TransactionState::PrepareCommit | TransactionState::PrepareAbort => (
            Fate::Decided,
            format!(
                "{id} is {}: decided, but its marker on {tp} is missing, so read_committed waits at LSO {lso}",
                owner.state.name().to_uppercase()
            ),
        ),
        TransactionState::CompleteAbort => (
            Fate::Aborted,
            match marker_after(s, tp, id, at) {
                Some(m) => format!("{id} aborted: ABORT marker at offset {m}"),
                None => format!("{id} is COMPLETE_ABORT in the journal (its marker is missing)"),
            },
        ),
        TransactionState::CompleteCommit => {
            if !coordinator.is_committed(tp, &header_only(b)) {
                return (
                    Fate::Orphaned,
                    format!(
                        "producer epoch {} is not {id}'s committed instance's: never committed",
                        b.producer_epoch
                    ),
                );
            }
            if at >= lso {
                return (
                    Fate::HeldBack,
                    format!(
                        "{id} committed, but offset {at} >= LSO {lso}: read_committed waits behind an earlier open transaction"
                    ),
                );
            }
            (
                Fate::Committed,
                match marker_after(s, tp, id, at) {
                    Some(m) => format!("{id} committed: COMMIT marker at offset {m}"),
                    None => {
                        format!("{id} is COMPLETE_COMMIT in the journal (its marker is missing)")
                    }
                },
            )
        }
    }
}

/// A batch without its records: all that `is_committed` reads.
fn header_only(s: &BatchSummary) -> RecordBatch {
    RecordBatch {
        base_offset: s.base_offset,
        leader_epoch: s.leader_epoch,
        producer_id: s.producer_id,
        producer_epoch: s.producer_epoch,
        base_sequence: s.base_sequence,
        transactional_id: s.transactional_id.clone(),
        control: s.control,
        last_offset_delta: (s.last_offset - s.base_offset) as i32,
        records: Vec::new(),
    }
}

/// The offset of the first marker of `id` on `tp` after `offset`.
fn marker_after(s: &ClusterState, tp: &TopicPartition, id: &str, offset: i64) -> Option<i64> {
    let set = s.partition(tp).ok()?;
    let summaries = set.leader_replica().log.batch_summaries();
    let start = summaries.partition_point(|b| b.base_offset <= offset);
    summaries[start..]
        .iter()
        .find(|b| b.control.is_some() && b.transactional_id.as_deref() == Some(id))
        .map(|b| b.base_offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_committed_data_is_read_committed_and_markers_and_unreplicated_data_are_read_by_nobody()
    {
        for fate in Fate::ALL {
            assert_eq!(
                fate.read_committed_sees(),
                fate == Fate::Committed,
                "{fate:?}"
            );
            assert_eq!(
                fate.read_uncommitted_sees(),
                !matches!(fate, Fate::Control | Fate::AboveHighWatermark),
                "{fate:?}"
            );
        }
    }

    #[test]
    fn names_are_the_serde_names() {
        for fate in Fate::ALL {
            assert_eq!(
                serde_json::to_string(&fate).unwrap(),
                format!("\"{}\"", fate.name())
            );
        }
    }
}
