//! Where a leader epoch ends in the leader's log: what Kafka's
//! OffsetForLeaderEpoch answers (KIP-101, KIP-320), so that a consumer
//! that read up to some offset under an epoch can learn, after a leader
//! change, whether the new leader's log still holds what it read.
//!
//! Kafka keeps a leader-epoch cache beside each log: an entry (epoch,
//! start offset) for every epoch the log holds batches of, plus one for
//! the current epoch, assigned at the log end offset when the replica
//! became its leader. The engine keeps no such file: every batch carries
//! the epoch of the leader that appended it (E6), so the log's batch
//! summaries hold the same entries, in offset order, and the current
//! epoch's entry, if no batch of it was appended yet, starts at the log
//! end offset (nothing else can have been appended since the election:
//! only the leader appends). Each lookup is two binary searches over the
//! summaries, never a walk of the log.
//!
//! The answer follows Kafka 4.4's `LeaderEpochFileCache.endOffsetFor`:
//! - an undefined epoch (-1) or one above every epoch known: (-1, -1);
//! - the current epoch: (it, the log end offset);
//! - else the start of the first epoch above it ends it, and the epoch
//!   answered is the largest one known at or below it (the one asked,
//!   when the log holds none that early).

use imbl::Vector;

use crate::engine::log::partition_log::BatchSummary;
use crate::engine::replication::PartitionReplicaSet;

/// Kafka's `UNDEFINED_EPOCH`.
pub const UNDEFINED_EPOCH: i32 = -1;
/// Kafka's `UNDEFINED_EPOCH_OFFSET`.
pub const UNDEFINED_EPOCH_OFFSET: i64 = -1;

/// An OffsetForLeaderEpoch answer for one partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochEnd {
    /// The largest epoch at or below the one asked that the log knows.
    pub leader_epoch: i32,
    /// The first offset after that epoch's batches: the start of the next
    /// epoch, or the log end offset for the current one.
    pub end_offset: i64,
}

impl EpochEnd {
    /// Kafka's answer for an epoch it cannot place.
    pub const UNDEFINED: EpochEnd = EpochEnd {
        leader_epoch: UNDEFINED_EPOCH,
        end_offset: UNDEFINED_EPOCH_OFFSET,
    };
}

/// The answer for `requested` over a log whose batches are `summaries`
/// (their epochs never fall along the log), led now at `current` epoch,
/// ending at `leo`.
pub fn end_offset_for(
    summaries: &Vector<BatchSummary>,
    current: u32,
    leo: i64,
    requested: i32,
) -> EpochEnd {
    let Ok(asked) = u32::try_from(requested) else {
        return EpochEnd::UNDEFINED;
    };
    if asked == current {
        return EpochEnd {
            leader_epoch: requested,
            end_offset: leo,
        };
    }
    if asked > current {
        return EpochEnd::UNDEFINED;
    }
    // The first batch of a later epoch starts the next entry; with none,
    // the current epoch's entry starts at the log end.
    let higher = first_where(summaries, |s| s.leader_epoch > asked);
    let end_offset = summaries.get(higher).map_or(leo, |s| s.base_offset);
    let leader_epoch = match higher.checked_sub(1) {
        Some(floor) => summaries[floor].leader_epoch as i32,
        None => requested,
    };
    EpochEnd {
        leader_epoch,
        end_offset,
    }
}

/// The index of the first summary for which `above` holds (`above` is
/// false then true along the log), or the length when none does.
fn first_where(summaries: &Vector<BatchSummary>, above: impl Fn(&BatchSummary) -> bool) -> usize {
    let (mut lo, mut hi) = (0, summaries.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if above(&summaries[mid]) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

impl PartitionReplicaSet {
    /// [`end_offset_for`] on this partition's leader.
    pub fn end_offset_for_epoch(&self, requested: i32) -> EpochEnd {
        let log = &self.leader().log;
        end_offset_for(
            log.batch_summaries(),
            self.leader_epoch(),
            log.leo(),
            requested,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Summaries of one-record batches with these epochs, from offset 0.
    fn log(epochs: &[u32]) -> Vector<BatchSummary> {
        epochs
            .iter()
            .enumerate()
            .map(|(i, &e)| BatchSummary {
                base_offset: i as i64,
                last_offset: i as i64,
                leader_epoch: e,
                producer_id: -1,
                producer_epoch: -1,
                base_sequence: -1,
                control: None,
                transactional_id: None,
                record_count: 1,
                size_bytes: 70,
                crc: 0,
            })
            .collect()
    }

    fn end(epoch: i32, offset: i64) -> EpochEnd {
        EpochEnd {
            leader_epoch: epoch,
            end_offset: offset,
        }
    }

    #[test]
    fn the_current_epoch_ends_at_the_log_end() {
        let s = log(&[0, 0, 2, 2]);
        assert_eq!(end_offset_for(&s, 2, 4, 2), end(2, 4));
        // Led at 5 with no batch of it yet: still the log end.
        assert_eq!(end_offset_for(&s, 5, 4, 5), end(5, 4));
        assert_eq!(end_offset_for(&log(&[]), 0, 0, 0), end(0, 0));
    }

    #[test]
    fn an_earlier_epoch_ends_where_the_next_one_known_starts() {
        let s = log(&[0, 0, 2, 2, 4]);
        assert_eq!(end_offset_for(&s, 4, 5, 0), end(0, 2));
        // Epoch 1 led nothing: the largest epoch at or below it is 0.
        assert_eq!(end_offset_for(&s, 4, 5, 1), end(0, 2));
        assert_eq!(end_offset_for(&s, 4, 5, 2), end(2, 4));
        assert_eq!(end_offset_for(&s, 4, 5, 3), end(2, 4));
        // Elected at 6 with no batch yet: epoch 4 ends at the log end.
        assert_eq!(end_offset_for(&s, 6, 5, 4), end(4, 5));
        assert_eq!(end_offset_for(&s, 6, 5, 5), end(4, 5));
    }

    #[test]
    fn an_epoch_before_the_log_answers_itself_and_the_first_start() {
        // Retention took the epoch-0 batches: the log starts at 7.
        let s: Vector<BatchSummary> = log(&[3, 3])
            .into_iter()
            .map(|mut b| {
                b.base_offset += 7;
                b.last_offset += 7;
                b
            })
            .collect();
        assert_eq!(end_offset_for(&s, 3, 9, 1), end(1, 7));
    }

    #[test]
    fn an_undefined_or_future_epoch_is_undefined() {
        let s = log(&[0, 1]);
        assert_eq!(end_offset_for(&s, 1, 2, -1), EpochEnd::UNDEFINED);
        assert_eq!(end_offset_for(&s, 1, 2, 2), EpochEnd::UNDEFINED);
        assert_eq!(end_offset_for(&s, 1, 2, i32::MIN), EpochEnd::UNDEFINED);
    }
}
