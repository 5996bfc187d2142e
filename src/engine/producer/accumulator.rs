//! The book's `producer/accumulator.py`: `BatchAccumulator` (E17), the
//! producer's batching by `batch_size` and `linger_ms` on the engine clock.
//! A record waits here, per partition, until its partition holds
//! `batch_size` estimated bytes (`add` says "full") or its first record has
//! waited `linger_ms` (`due_partitions`); `pop` takes the partition's
//! records out as one batch. `max_buffer_bytes` bounds all partitions
//! together (`ProducerBufferFull`).
//!
//! The book keeps an asyncio future in each `PendingRecord`; here the
//! producer that pops a batch sends it and the caller awaits the one append
//! future of the batch (every record of a batch shares its fate).

use std::collections::BTreeMap;

use crate::engine::core::metadata::TopicPartition;
use crate::engine::core::record::Record;
use crate::engine::error::{MiniKafkaError, Result};

/// The book's `cluster.producer()` defaults.
pub const DEFAULT_BATCH_SIZE: u64 = 16_384;
pub const DEFAULT_LINGER_MS: u64 = 0;
pub const DEFAULT_MAX_BUFFER_BYTES: u64 = 1_048_576;

/// The book's estimate of a record's size in a batch (`Producer.send`):
/// 39 bytes of framing plus its key and value.
pub fn estimated_bytes(key: Option<&[u8]>, value: Option<&[u8]>) -> u64 {
    39 + key.map_or(0, <[u8]>::len) as u64 + value.map_or(0, <[u8]>::len) as u64
}

/// One record waiting in the accumulator (the book's `PendingRecord`,
/// without its future).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingRecord {
    pub topic_partition: TopicPartition,
    pub record: Record,
    pub estimated_bytes: u64,
}

/// The records waiting for one partition, as the dashboard reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingPartition {
    pub topic_partition: TopicPartition,
    pub records: Vec<Record>,
    /// Their estimated bytes together, against `batch_size`.
    pub bytes: u64,
    /// When its first record was added (the linger's start).
    pub first_enqueue_ms: u64,
}

/// The book's `BatchAccumulator`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchAccumulator {
    pub batch_size: u64,
    pub linger_ms: u64,
    pub max_buffer_bytes: u64,
    pub total_bytes: u64,
    pending: BTreeMap<TopicPartition, Vec<PendingRecord>>,
    first_enqueue_ms: BTreeMap<TopicPartition, u64>,
    partition_bytes: BTreeMap<TopicPartition, u64>,
}

impl Default for BatchAccumulator {
    fn default() -> Self {
        Self::new(
            DEFAULT_BATCH_SIZE,
            DEFAULT_LINGER_MS,
            DEFAULT_MAX_BUFFER_BYTES,
        )
        .expect("the book's defaults are valid")
    }
}

impl BatchAccumulator {
    /// The book's constructor and its `ValueError`s (`linger_ms` is
    /// unsigned here, so never negative).
    pub fn new(batch_size: u64, linger_ms: u64, max_buffer_bytes: u64) -> Result<Self> {
        if batch_size == 0 {
            return Err(MiniKafkaError::InvalidConfig(
                "batch_size must be positive".into(),
            ));
        }
        if max_buffer_bytes == 0 {
            return Err(MiniKafkaError::InvalidConfig(
                "max_buffer_bytes must be positive".into(),
            ));
        }
        Ok(Self {
            batch_size,
            linger_ms,
            max_buffer_bytes,
            total_bytes: 0,
            pending: BTreeMap::new(),
            first_enqueue_ms: BTreeMap::new(),
            partition_bytes: BTreeMap::new(),
        })
    }

    /// Adds a record at `now_ms`; true when its partition now holds at
    /// least `batch_size` bytes (the producer sends it at once). Refused
    /// with `ProducerBufferFull` when the buffer would pass
    /// `max_buffer_bytes`, and then nothing changes.
    pub fn add(&mut self, pending: PendingRecord, now_ms: u64) -> Result<bool> {
        if self.total_bytes + pending.estimated_bytes > self.max_buffer_bytes {
            return Err(MiniKafkaError::ProducerBufferFull {
                total_bytes: self.total_bytes,
                adding: pending.estimated_bytes,
                max_buffer_bytes: self.max_buffer_bytes,
            });
        }
        let tp = pending.topic_partition.clone();
        let bytes = pending.estimated_bytes;
        let records = self.pending.entry(tp.clone()).or_default();
        if records.is_empty() {
            self.first_enqueue_ms.insert(tp.clone(), now_ms);
        }
        records.push(pending);
        let partition = self.partition_bytes.entry(tp).or_default();
        *partition += bytes;
        self.total_bytes += bytes;
        Ok(*partition >= self.batch_size)
    }

    /// The partitions whose first record has waited `linger_ms` by
    /// `now_ms`, in order.
    pub fn due_partitions(&self, now_ms: u64) -> Vec<TopicPartition> {
        self.first_enqueue_ms
            .iter()
            .filter(|(tp, first)| {
                self.pending.get(*tp).is_some_and(|r| !r.is_empty())
                    && now_ms.saturating_sub(**first) >= self.linger_ms
            })
            .map(|(tp, _)| tp.clone())
            .collect()
    }

    /// Every partition with records waiting, in order.
    pub fn partitions(&self) -> Vec<TopicPartition> {
        self.pending
            .iter()
            .filter(|(_, r)| !r.is_empty())
            .map(|(tp, _)| tp.clone())
            .collect()
    }

    /// Takes the records waiting for `tp` out, oldest first (none if none).
    pub fn pop(&mut self, tp: &TopicPartition) -> Vec<PendingRecord> {
        let records = self.pending.remove(tp).unwrap_or_default();
        if records.is_empty() {
            return records;
        }
        let size = self.partition_bytes.remove(tp).unwrap_or(0);
        self.total_bytes -= size;
        self.first_enqueue_ms.remove(tp);
        records
    }

    /// What waits, per partition in order: for the dashboard and the state.
    pub fn pending_partitions(&self) -> Vec<PendingPartition> {
        self.pending
            .iter()
            .filter(|(_, r)| !r.is_empty())
            .map(|(tp, records)| PendingPartition {
                topic_partition: tp.clone(),
                records: records.iter().map(|p| p.record.clone()).collect(),
                bytes: self.partition_bytes.get(tp).copied().unwrap_or(0),
                first_enqueue_ms: self.first_enqueue_ms.get(tp).copied().unwrap_or(0),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(tp: &TopicPartition, value: &[u8]) -> PendingRecord {
        PendingRecord {
            topic_partition: tp.clone(),
            record: Record::new(None, Some(value.to_vec().into()), 0),
            estimated_bytes: estimated_bytes(None, Some(value)),
        }
    }

    #[test]
    fn full_when_the_partition_reaches_batch_size() {
        let tp = TopicPartition::new("events", 0);
        let mut acc = BatchAccumulator::new(80, 1000, 1000).unwrap();
        assert!(!acc.add(pending(&tp, b"a"), 0).unwrap(), "40 of 80 bytes");
        assert!(acc.add(pending(&tp, b"b"), 5).unwrap(), "80 of 80 bytes");
        assert_eq!(acc.total_bytes, 80);
        let popped = acc.pop(&tp);
        assert_eq!(popped.len(), 2);
        assert_eq!(acc.total_bytes, 0);
        assert!(acc.partitions().is_empty());
        assert!(acc.pop(&tp).is_empty());
    }

    #[test]
    fn due_after_linger_from_the_first_record() {
        let (a, b) = (TopicPartition::new("t", 1), TopicPartition::new("t", 0));
        let mut acc = BatchAccumulator::new(4096, 10, 4096).unwrap();
        acc.add(pending(&a, b"1"), 100).unwrap();
        acc.add(pending(&b, b"2"), 105).unwrap();
        acc.add(pending(&a, b"3"), 108).unwrap();
        assert!(acc.due_partitions(109).is_empty());
        assert_eq!(acc.due_partitions(110), vec![a.clone()]);
        assert_eq!(
            acc.due_partitions(115),
            vec![b.clone(), a.clone()],
            "sorted"
        );
        assert_eq!(acc.partitions(), vec![b, a]);
    }

    #[test]
    fn bounded_buffer_and_the_books_value_errors() {
        let tp = TopicPartition::new("t", 0);
        let mut acc = BatchAccumulator::new(4096, 0, 40).unwrap();
        acc.add(pending(&tp, b"a"), 0).unwrap();
        let err = acc.add(pending(&tp, &[b'b'; 20]), 0).unwrap_err();
        assert_eq!(err.code(), "ProducerBufferFull");
        assert_eq!(acc.total_bytes, 40, "a refused record changes nothing");
        assert!(BatchAccumulator::new(0, 0, 1).is_err());
        assert!(BatchAccumulator::new(1, 0, 0).is_err());
    }
}
