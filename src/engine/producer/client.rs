//! `Producer`: a named idempotent producer handle (E7) with acks and key-based
//! partitioning. It numbers batches per partition; a batch that was appended
//! advances the sequence even if its acks later fail, so that a retry of it is
//! answered with the original offsets.

use std::collections::BTreeMap;

use crate::engine::core::batch::RecordBatch;
use crate::engine::core::cluster::BrokerCluster;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::core::record::Record;
use crate::engine::error::Result;
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
        value: impl Into<Vec<u8>>,
    ) -> Result<(TopicPartition, AppendFuture)> {
        let tp = self.cluster.choose_partition(topic, partition, key)?;
        let record = Record {
            key: key.map(<[u8]>::to_vec),
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
}
