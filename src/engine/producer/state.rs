//! `ProducerStateManager` (E7): per partition replica, the last batches of each
//! idempotent producer, to deduplicate retries and order sequences.
//!
//! Kafka keeps the last 5 batches per producer (`max.in.flight` of 5); the book
//! keeps 1. We keep [`MAX_CACHED_BATCHES`]. The state is derived from the log's
//! batch summaries, so it is rebuilt from the log on open and after truncation.

use std::collections::{BTreeMap, VecDeque};

use crate::engine::core::batch::RecordBatch;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::log::BatchSummary;

/// Batches remembered per producer, as in Kafka.
pub const MAX_CACHED_BATCHES: usize = 5;

/// Where a cached batch landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CachedBatch {
    pub first_sequence: i32,
    pub last_sequence: i32,
    pub base_offset: i64,
    pub last_offset: i64,
}

/// One producer's state on one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerEntry {
    pub epoch: i32,
    pub batches: VecDeque<CachedBatch>,
}

/// The verdict on an incoming idempotent batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SequenceCheck {
    /// Not idempotent, or the next sequence: append it.
    Append,
    /// An exact retry of a cached batch: answer with its original offsets.
    Duplicate { base_offset: i64, last_offset: i64 },
}

/// Idempotent producer state of one partition replica.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProducerStateManager {
    producers: BTreeMap<i64, ProducerEntry>,
}

impl ProducerStateManager {
    /// Rebuilds the state from a log's batch summaries.
    pub fn rebuild<'a>(summaries: impl IntoIterator<Item = &'a BatchSummary>) -> Self {
        let mut state = Self::default();
        for summary in summaries {
            state.record(summary);
        }
        state
    }

    /// Checks an incoming batch against the producer's state (E7): an older
    /// epoch is fenced; an exact retry of a cached batch is a duplicate; any
    /// other sequence than the next one is out of order. A new producer, or a
    /// new epoch, must start at sequence 0.
    pub fn check(&self, tp: &TopicPartition, batch: &RecordBatch) -> Result<SequenceCheck> {
        if !batch.has_producer_id() || batch.is_control() {
            return Ok(SequenceCheck::Append);
        }
        let out_of_order = |expected| MiniKafkaError::OutOfOrderSequence {
            tp: tp.to_string(),
            producer_id: batch.producer_id,
            expected,
            got: batch.base_sequence,
        };
        let Some(entry) = self.producers.get(&batch.producer_id) else {
            return if batch.base_sequence == 0 {
                Ok(SequenceCheck::Append)
            } else {
                Err(out_of_order(0))
            };
        };
        if batch.producer_epoch < entry.epoch {
            return Err(MiniKafkaError::ProducerFenced {
                tp: tp.to_string(),
                producer_id: batch.producer_id,
                epoch: batch.producer_epoch,
                current: entry.epoch,
            });
        }
        if batch.producer_epoch > entry.epoch {
            return if batch.base_sequence == 0 {
                Ok(SequenceCheck::Append)
            } else {
                Err(out_of_order(0))
            };
        }
        if let Some(cached) = entry.batches.iter().find(|c| {
            c.first_sequence == batch.base_sequence && c.last_sequence == batch.last_sequence()
        }) {
            return Ok(SequenceCheck::Duplicate {
                base_offset: cached.base_offset,
                last_offset: cached.last_offset,
            });
        }
        let expected = entry
            .batches
            .back()
            .map_or(0, |c| c.last_sequence.wrapping_add(1));
        if batch.base_sequence == expected {
            Ok(SequenceCheck::Append)
        } else {
            Err(out_of_order(expected))
        }
    }

    /// Records an appended batch (leader or follower).
    pub fn record(&mut self, summary: &BatchSummary) {
        if summary.producer_id < 0 || summary.control.is_some() {
            return;
        }
        let entry = self
            .producers
            .entry(summary.producer_id)
            .or_insert_with(|| ProducerEntry {
                epoch: summary.producer_epoch,
                batches: VecDeque::new(),
            });
        if summary.producer_epoch > entry.epoch {
            entry.epoch = summary.producer_epoch;
            entry.batches.clear();
        }
        entry.batches.push_back(CachedBatch {
            first_sequence: summary.base_sequence,
            last_sequence: summary.last_sequence(),
            base_offset: summary.base_offset,
            last_offset: summary.last_offset,
        });
        while entry.batches.len() > MAX_CACHED_BATCHES {
            entry.batches.pop_front();
        }
    }

    /// The state of one producer.
    pub fn entry(&self, producer_id: i64) -> Option<&ProducerEntry> {
        self.producers.get(&producer_id)
    }

    /// All producers, by id.
    pub fn producers(&self) -> &BTreeMap<i64, ProducerEntry> {
        &self.producers
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::core::codec;

    fn tp() -> TopicPartition {
        TopicPartition::new("t", 0)
    }

    fn batch(pid: i64, epoch: i32, seq: i32, n: usize, base_offset: i64) -> RecordBatch {
        let mut b =
            RecordBatch::of_values((0..n).map(|i| format!("v{i}"))).with_producer(pid, epoch, seq);
        b.base_offset = base_offset;
        b
    }

    fn append(state: &mut ProducerStateManager, b: &RecordBatch) {
        state.record(&BatchSummary::of(b, &codec::encode(b)));
    }

    #[test]
    fn sequence_rules() {
        let mut s = ProducerStateManager::default();
        assert!(matches!(
            s.check(&tp(), &batch(1, 0, 3, 1, 0)),
            Err(MiniKafkaError::OutOfOrderSequence {
                expected: 0,
                got: 3,
                ..
            })
        ));
        let first = batch(1, 0, 0, 2, 0);
        assert_eq!(s.check(&tp(), &first).unwrap(), SequenceCheck::Append);
        append(&mut s, &first);
        assert_eq!(
            s.check(&tp(), &first).unwrap(),
            SequenceCheck::Duplicate {
                base_offset: 0,
                last_offset: 1
            }
        );
        assert!(matches!(
            s.check(&tp(), &batch(1, 0, 3, 1, 2)),
            Err(MiniKafkaError::OutOfOrderSequence {
                expected: 2,
                got: 3,
                ..
            })
        ));
        assert_eq!(
            s.check(&tp(), &batch(1, 0, 2, 1, 2)).unwrap(),
            SequenceCheck::Append
        );
        assert_eq!(
            s.check(&tp(), &batch(1, 1, 0, 1, 2)).unwrap(),
            SequenceCheck::Append,
            "new epoch restarts at 0"
        );
        append(&mut s, &batch(1, 1, 0, 1, 2));
        assert!(matches!(
            s.check(&tp(), &batch(1, 0, 2, 1, 3)),
            Err(MiniKafkaError::ProducerFenced {
                epoch: 0,
                current: 1,
                ..
            })
        ));
        assert_eq!(
            s.check(&tp(), &RecordBatch::of_values(["x"])).unwrap(),
            SequenceCheck::Append
        );
    }

    #[test]
    fn keeps_the_last_five_batches_like_kafka() {
        let mut s = ProducerStateManager::default();
        let batches: Vec<_> = (0..7).map(|i| batch(4, 0, i, 1, i64::from(i))).collect();
        for b in &batches {
            append(&mut s, b);
        }
        assert_eq!(s.entry(4).unwrap().batches.len(), MAX_CACHED_BATCHES);
        // batches 2..=6 are cached and deduplicated; 0 and 1 are too old
        for b in &batches[2..] {
            assert!(matches!(
                s.check(&tp(), b).unwrap(),
                SequenceCheck::Duplicate { .. }
            ));
        }
        assert!(s.check(&tp(), &batches[1]).is_err());
        let rebuilt = ProducerStateManager::rebuild(
            batches
                .iter()
                .map(|b| BatchSummary::of(b, &codec::encode(b)))
                .collect::<Vec<_>>()
                .iter(),
        );
        assert_eq!(rebuilt, s);
    }
}
