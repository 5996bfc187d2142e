//! `Producer`: a named idempotent producer handle (E7) with acks and key-based
//! partitioning. It numbers batches per partition; a batch that was appended
//! advances the sequence even if its acks later fail, so that a retry of it is
//! answered with the original offsets.
//!
//! `send` appends one batch at once. The book's `Producer.send` goes through
//! its `BatchAccumulator` instead (E17): that is `accumulate` here, with the
//! book's `run_due_flushes` and `flush`, and its sticky partitioner for
//! keyless records.

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::engine::core::batch::RecordBatch;
use crate::engine::core::cluster::BrokerCluster;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::core::record::Record;
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::producer::accumulator::{BatchAccumulator, PendingRecord, estimated_bytes};
use crate::engine::producer::partitioner::StickyPartitioner;
use crate::engine::replication::AckMode;
use crate::engine::replication::model::AppendFuture;

/// A named idempotent producer.
#[derive(Debug, Clone)]
pub struct Producer {
    cluster: BrokerCluster,
    name: String,
    producer_id: i64,
    epoch: i32,
    acks: AckMode,
    next_sequence: BTreeMap<TopicPartition, i32>,
    last_batch: BTreeMap<TopicPartition, RecordBatch>,
    accumulator: BatchAccumulator,
    partitioner: StickyPartitioner,
}

/// A batch the accumulator let go: its partition, how many records it
/// holds, and its append (or why it could not be appended: its records
/// fail together, as the book fails every future of the batch).
#[derive(Debug)]
pub struct SentBatch {
    pub tp: TopicPartition,
    pub records: usize,
    pub append: Result<AppendFuture>,
}

impl Producer {
    pub(crate) fn new(cluster: BrokerCluster, name: &str, producer_id: i64, epoch: i32) -> Self {
        Self {
            cluster,
            name: name.to_string(),
            producer_id,
            epoch,
            acks: AckMode::Leader,
            next_sequence: BTreeMap::new(),
            last_batch: BTreeMap::new(),
            accumulator: BatchAccumulator::default(),
            partitioner: StickyPartitioner::default(),
        }
    }

    /// The same producer with another acks mode (default `acks=1`).
    pub fn with_acks(mut self, acks: AckMode) -> Self {
        self.acks = acks;
        self
    }

    /// Sets the acks mode for the next sends.
    pub fn set_acks(&mut self, acks: AckMode) {
        self.acks = acks;
    }

    /// The same producer, sending through `cluster` (a time-travel restore
    /// rebuilds the cluster; the producer's sequences stay).
    pub fn rebind(&self, cluster: &BrokerCluster) -> Self {
        Self {
            cluster: cluster.clone(),
            ..self.clone()
        }
    }

    /// The producer's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The producer id.
    pub fn producer_id(&self) -> i64 {
        self.producer_id
    }

    /// The producer epoch.
    pub fn epoch(&self) -> i32 {
        self.epoch
    }

    /// The acks mode.
    pub fn acks(&self) -> AckMode {
        self.acks
    }

    /// Sends one record to `topic`: to `partition` if given, else by key
    /// (`crc32(key) mod partitions`), else round-robin.
    pub fn send(
        &mut self,
        topic: &str,
        partition: Option<u32>,
        key: Option<&[u8]>,
        value: impl Into<Bytes>,
    ) -> Result<(TopicPartition, AppendFuture)> {
        let tp = self.cluster.choose_partition(topic, partition, key)?;
        let record = Record {
            key: key.map(Bytes::copy_from_slice),
            value: Some(value.into()),
            ..Record::default()
        };
        let future = self.send_records(&tp, vec![record])?;
        Ok((tp, future))
    }

    /// Sends a batch of records to one partition with the next sequence.
    pub fn send_records(
        &mut self,
        tp: &TopicPartition,
        records: Vec<Record>,
    ) -> Result<AppendFuture> {
        let sequence = self.next_sequence.get(tp).copied().unwrap_or(0);
        let batch = RecordBatch::new(records).with_producer(self.producer_id, self.epoch, sequence);
        let future = self
            .cluster
            .try_append(tp, batch.clone(), self.acks, None)?;
        self.next_sequence.insert(
            tp.clone(),
            sequence.wrapping_add(batch.offset_count() as i32),
        );
        self.last_batch.insert(tp.clone(), batch);
        Ok(future)
    }

    /// Sends the last batch to `tp` again, unchanged: what a producer does when
    /// an ack was lost. The log answers with the original offsets.
    pub fn retry_last(&mut self, tp: &TopicPartition) -> Result<AppendFuture> {
        let batch = self.last_batch.get(tp).cloned().ok_or_else(|| {
            crate::engine::error::MiniKafkaError::InvalidBatch(format!(
                "producer {:?} has sent nothing to {tp} to retry",
                self.name
            ))
        })?;
        self.cluster.try_append(tp, batch, self.acks, None)
    }

    /// Sets the accumulator's `batch_size`, `linger_ms` and
    /// `max_buffer_bytes` (the book's `cluster.producer(...)` arguments).
    /// Refused while records wait, and with the book's `ValueError`s.
    pub fn set_batching(
        &mut self,
        batch_size: u64,
        linger_ms: u64,
        max_buffer_bytes: u64,
    ) -> Result<()> {
        if !self.accumulator.partitions().is_empty() {
            return Err(MiniKafkaError::InvalidConfig(format!(
                "producer {:?} has records waiting in its accumulator: flush it before changing its batching",
                self.name
            )));
        }
        self.accumulator = BatchAccumulator::new(batch_size, linger_ms, max_buffer_bytes)?;
        Ok(())
    }

    /// The producer's accumulator (what waits, and its settings).
    pub fn accumulator(&self) -> &BatchAccumulator {
        &self.accumulator
    }

    /// The book's `Producer.send`: the record waits in the accumulator for
    /// `tp` (`partition`, else by key, else the sticky partition); if that
    /// fills its partition's batch, the batch is sent at once and returned.
    pub fn accumulate(
        &mut self,
        topic: &str,
        partition: Option<u32>,
        key: Option<&[u8]>,
        value: Option<Vec<u8>>,
        now_ms: u64,
    ) -> Result<(TopicPartition, Option<SentBatch>)> {
        let count = self.cluster.partition_count(topic)?;
        let selected = match partition {
            Some(p) if p >= count => {
                return Err(MiniKafkaError::UnknownTopicOrPartition(format!(
                    "{topic}-{p}"
                )));
            }
            Some(p) => p,
            None => self.partitioner.choose(count, key),
        };
        let tp = TopicPartition::new(topic, selected);
        let estimated = estimated_bytes(key, value.as_deref());
        let record = Record::new(
            key.map(Bytes::copy_from_slice),
            value.map(Bytes::from),
            i64::try_from(now_ms).unwrap_or(i64::MAX),
        );
        let pending = PendingRecord {
            topic_partition: tp.clone(),
            record,
            estimated_bytes: estimated,
        };
        let full = self.accumulator.add(pending, now_ms)?;
        let sent = if full {
            self.flush_partition(&tp)
        } else {
            None
        };
        Ok((tp, sent))
    }

    /// The book's `_flush_partition`: pops `tp`'s records and sends them as
    /// one batch with the next sequence; a batch with a keyless record
    /// moves the sticky partition on.
    fn flush_partition(&mut self, tp: &TopicPartition) -> Option<SentBatch> {
        let pending = self.accumulator.pop(tp);
        if pending.is_empty() {
            return None;
        }
        let keyless = pending.iter().any(|p| p.record.key.is_none());
        let records: Vec<Record> = pending.into_iter().map(|p| p.record).collect();
        let count = records.len();
        let append = self.send_records(tp, records);
        if keyless && let Ok(n) = self.cluster.partition_count(&tp.topic) {
            self.partitioner.on_batch_closed(n, tp.partition);
        }
        Some(SentBatch {
            tp: tp.clone(),
            records: count,
            append,
        })
    }

    /// The book's `run_due_flushes`: sends every partition whose first
    /// record has waited `linger_ms` by `now_ms`, in partition order.
    pub fn run_due_flushes(&mut self, now_ms: u64) -> Vec<SentBatch> {
        let due = self.accumulator.due_partitions(now_ms);
        due.iter()
            .filter_map(|tp| self.flush_partition(tp))
            .collect()
    }

    /// The book's `flush`: sends every partition's records now.
    pub fn flush(&mut self) -> Vec<SentBatch> {
        let all = self.accumulator.partitions();
        all.iter()
            .filter_map(|tp| self.flush_partition(tp))
            .collect()
    }

    /// The book's `crash`: the records waiting are dropped, never sent.
    /// Returns how many.
    pub fn drop_accumulated(&mut self) -> usize {
        let all = self.accumulator.partitions();
        all.iter().map(|tp| self.accumulator.pop(tp).len()).sum()
    }
}
