//! `TransactionManager` (E10, E13): the book's `cluster.transactions`, with
//! the async API of its examples:
//!
//! ```no_run
//! # async fn demo(cluster: minikafka::engine::BrokerCluster) -> minikafka::engine::Result<()> {
//! let tx = cluster.transactions().begin("tx-1").await?;
//! tx.send("out", b"pending".to_vec()).await?;
//! tx.commit().await?;
//! # Ok(()) }
//! ```
//!
//! `commit` runs the chapter's steps in order, each a separate engine step so
//! other work (replication, reads) can interleave while a marker waits for
//! `acks=all`: PREPARE_COMMIT (journal) -> a COMMIT marker on each touched
//! partition, in order, with acks=all -> publish staged offsets ->
//! COMPLETE_COMMIT (journal). `abort` mirrors it and discards staged offsets.
//! A [`CutPoint`] stops either after a step and crashes the cluster.

use crate::engine::consumer::offsets::GroupOffsets;
use crate::engine::core::batch::{ControlType, RecordBatch};
use crate::engine::core::cluster::BrokerCluster;
use crate::engine::core::cluster::ClusterState;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::core::record::Record;
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::producer::SequenceCheck;
use crate::engine::replication::AckMode;
use crate::engine::transaction::coordinator::InstanceRef;
use crate::engine::transaction::model::{CutPoint, TransactionData, TransactionState};

use crate::engine::replication::model::TransactionVisibility;
use crate::engine::transaction::handle::{EndOutcome, Transaction};

/// The instance `tx` addresses, which must be ONGOING for `operation`.
fn ongoing(s: &ClusterState, tx: &Transaction, operation: &'static str) -> Result<usize> {
    s.transactions.require(
        tx.id(),
        tx.instance(),
        operation,
        &[TransactionState::Ongoing],
    )
}

/// The transaction manager of a cluster (`cluster.transactions()`).
/// Where a transactional batch landed ([`TransactionManager::send_batch_as`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    pub tp: TopicPartition,
    /// The batch's first offset; for an exact retry, its original's.
    pub base_offset: i64,
    /// An exact retry answered with the original's offset (E7).
    pub duplicate: bool,
}

#[derive(Debug, Clone)]
pub struct TransactionManager {
    cluster: BrokerCluster,
}

impl TransactionManager {
    pub(crate) fn new(cluster: BrokerCluster) -> Self {
        Self { cluster }
    }

    /// `begin` (E10): a new ONGOING transaction, journaled. Refused for an
    /// active id under the book's rules; under the kafka rules the active
    /// instance is completed and fenced (E14).
    pub async fn begin(&self, id: &str) -> Result<Transaction> {
        if id.is_empty() {
            return Err(MiniKafkaError::InvalidTransactionalId(String::new()));
        }
        let handle = self.cluster.mutate(|s, now| {
            let producer = if s.config.rules.fence_zombies {
                Some(s.identities.init(&format!("transactional.id:{id}"))?)
            } else {
                None
            };
            s.transactions
                .begin(id, producer, &mut s.partitions, &mut s.offsets, now)
        })?;
        Ok(Transaction::new(self.clone(), id, handle))
    }

    /// A handle on the latest instance of `id`: for example an ONGOING
    /// transaction found after a crash, so that it can be aborted (E14).
    pub fn resume(&self, id: &str) -> Result<Transaction> {
        let handle = self.cluster.with_state(|s| {
            let index = s.transactions.resolve(
                id,
                InstanceRef {
                    index: 0,
                    epoch: None,
                },
            )?;
            Ok::<_, MiniKafkaError>(InstanceRef {
                index,
                epoch: s.transactions.instance(index).producer.map(|(_, e)| e),
            })
        })?;
        Ok(Transaction::new(self.clone(), id, handle))
    }

    /// The latest state of `id`.
    pub fn get(&self, id: &str) -> Option<TransactionData> {
        self.cluster.with_state(|s| s.transactions.get(id).cloned())
    }

    /// The latest state of every transaction id, by id.
    pub fn all(&self) -> Vec<TransactionData> {
        self.cluster
            .with_state(|s| s.transactions.current().cloned().collect())
    }

    /// `last_stable_offset` (E11): the first offset of the earliest
    /// unstable transaction on `tp`, else the HW.
    pub fn last_stable_offset(&self, tp: &TopicPartition) -> Result<i64> {
        self.cluster.last_stable_offset(tp)
    }

    /// `is_committed` (E11): whether a transactional batch on `tp` belongs to
    /// a committed transaction instance.
    pub fn is_committed(&self, tp: &TopicPartition, batch: &RecordBatch) -> bool {
        self.cluster
            .with_state(|s| s.transactions.is_committed(tp, batch))
    }

    /// `send` (E10): requires ONGOING, appends a transactional batch with
    /// acks=all, and once it is acknowledged journals the partition and its
    /// first offset. Returns where the record landed.
    pub async fn send(
        &self,
        tx: &Transaction,
        topic: &str,
        partition: Option<u32>,
        key: Option<&[u8]>,
        value: Vec<u8>,
    ) -> Result<(TopicPartition, i64)> {
        let record = Record {
            key: key.map(<[u8]>::to_vec),
            value: Some(value),
            ..Record::default()
        };
        self.send_batch(tx, topic, partition, vec![record]).await
    }

    /// `send` of several records as one transactional batch (a Kafka
    /// client's batch; the book sends one record at a time): to
    /// `partition`, else by the first record's key, else round-robin.
    /// Returns where the batch's first record landed.
    pub async fn send_batch(
        &self,
        tx: &Transaction,
        topic: &str,
        partition: Option<u32>,
        records: Vec<Record>,
    ) -> Result<(TopicPartition, i64)> {
        let sent = self
            .send_batch_as(tx, topic, partition, records, None)
            .await?;
        Ok((sent.tp, sent.base_offset))
    }

    /// `send` of a Kafka client's batch, numbered as the client numbered
    /// it: `wire` is the producer id, epoch and first sequence it carried.
    /// They must be the transaction's producer's (E14), and its producer
    /// state judges the sequence (E7): an exact retry of a batch already
    /// sent is answered with its original offset and appends nothing.
    /// Without `wire` the engine numbers the batch itself.
    pub async fn send_batch_as(
        &self,
        tx: &Transaction,
        topic: &str,
        partition: Option<u32>,
        records: Vec<Record>,
        wire: Option<(i64, i32, i32)>,
    ) -> Result<Sent> {
        let appended = self.cluster.mutate(|s, now| {
            let index = ongoing(s, tx, "send")?;
            let key = records.first().and_then(|r| r.key.as_deref());
            let tp = s.choose_partition(topic, partition, key)?;
            let mut batch = RecordBatch::new(records).with_transactional_id(tx.id());
            match (s.transactions.instance(index).producer, wire) {
                (Some((pid, epoch)), None) => {
                    let next = s
                        .partition(&tp)?
                        .leader_replica()
                        .producer_state
                        .entry(pid)
                        .filter(|e| e.epoch == epoch)
                        .and_then(|e| e.batches.back())
                        .map_or(0, |b| b.last_sequence.wrapping_add(1));
                    batch = batch.with_producer(pid, epoch, next);
                }
                (Some((pid, epoch)), Some((wire_pid, wire_epoch, sequence))) => {
                    if (wire_pid, wire_epoch) != (pid, epoch) {
                        return Err(MiniKafkaError::ProducerFenced {
                            tp: tp.to_string(),
                            producer_id: wire_pid,
                            epoch: wire_epoch,
                            current: epoch,
                        });
                    }
                    batch = batch.with_producer(pid, epoch, sequence);
                    let leader = s.partition(&tp)?.leader_replica();
                    if let SequenceCheck::Duplicate { base_offset, .. } =
                        leader.producer_state.check(&tp, &batch)?
                    {
                        return Ok(Err(Sent {
                            tp,
                            base_offset,
                            duplicate: true,
                        }));
                    }
                }
                (None, Some(_)) => {
                    return Err(MiniKafkaError::InvalidBatch(format!(
                        "{:?}'s transaction has no producer id under the book's rules: its batches carry no client identity",
                        tx.id()
                    )));
                }
                (None, None) => {}
            }
            let set = s.partition_mut(&tp)?;
            let offset = set.leader_replica().log_end_offset();
            let ack = set.append(batch, AckMode::All, now, None)?;
            s.transactions.start_send(index, &tp, offset);
            Ok(Ok((index, tp, offset, ack)))
        })?;
        let (index, tp, offset, ack) = match appended {
            Ok(appended) => appended,
            Err(duplicate) => return Ok(duplicate),
        };
        let generation = self.cluster.generation();
        if let Err(e) = ack.await {
            if self.cluster.generation() == generation {
                self.cluster
                    .with_state_mut(|s| s.transactions.abandon_send(index, &tp, offset));
            }
            return Err(e);
        }
        self.step(generation, |s| {
            let index = ongoing(s, tx, "send")?;
            s.transactions.record_send(index, &tp, offset)
        })?;
        Ok(Sent {
            tp,
            base_offset: offset,
            duplicate: false,
        })
    }

    /// `send_offsets` (E10): stages consumer offsets for `group`, journaled;
    /// nothing is published until commit.
    pub async fn send_offsets(
        &self,
        tx: &Transaction,
        group: &str,
        offsets: GroupOffsets,
    ) -> Result<()> {
        self.cluster.mutate(|s, _| {
            let index = ongoing(s, tx, "send_offsets to")?;
            s.transactions.stage_offsets(index, group, &offsets)
        })
    }

    /// `commit` (E10), stopping after `cut` with a crash if one is given
    /// (E13): PREPARE_COMMIT -> COMMIT markers -> offsets -> COMPLETE_COMMIT.
    pub async fn commit(&self, tx: &Transaction, cut: Option<CutPoint>) -> Result<EndOutcome> {
        self.end(tx, ControlType::Commit, cut).await
    }

    /// `abort` (E10), stopping after `cut` with a crash if one is given
    /// (E13): PREPARE_ABORT -> ABORT markers -> offsets discarded ->
    /// COMPLETE_ABORT.
    pub async fn abort(&self, tx: &Transaction, cut: Option<CutPoint>) -> Result<EndOutcome> {
        self.end(tx, ControlType::Abort, cut).await
    }

    async fn end(
        &self,
        tx: &Transaction,
        control: ControlType,
        cut: Option<CutPoint>,
    ) -> Result<EndOutcome> {
        let (index, marks) = self
            .cluster
            .mutate(|s, _| s.transactions.prepare(tx.id(), tx.instance(), control))?;
        let generation = self.cluster.generation();
        let n = marks.len();
        let crash_after_markers = match cut {
            Some(CutPoint::Prepare) => Some(0),
            Some(CutPoint::Marker(k)) => Some(k.min(n)),
            Some(CutPoint::Markers) => Some(n),
            _ => None,
        };
        if crash_after_markers == Some(0) {
            return self.crash(index);
        }
        for (i, (tp, _)) in marks.iter().enumerate() {
            if let Err(e) = self.write_marker(index, control, tp, generation).await {
                return Err(self.release(index, generation, e));
            }
            if crash_after_markers == Some(i + 1) {
                return self.crash(index);
            }
        }
        self.step(generation, |s| {
            s.transactions
                .settle_offsets(index, control, &mut s.offsets)
        })
        .map_err(|e| self.release(index, generation, e))?;
        if cut == Some(CutPoint::Offsets) {
            return self.crash(index);
        }
        self.step(generation, |s| s.transactions.complete(index, control))
            .map_err(|e| self.release(index, generation, e))?;
        Ok(EndOutcome::Completed)
    }

    /// Ends a completion that failed with `e` (a marker refused, or a write
    /// of `offsets.json` or of the journal that failed: issue 17): the
    /// state stays PREPARE_*, and commit or abort may be called again to
    /// resume it. Returns `e`.
    fn release(&self, index: usize, generation: u64, e: MiniKafkaError) -> MiniKafkaError {
        if self.cluster.generation() == generation {
            self.cluster
                .with_state_mut(|s| s.transactions.release(index));
        }
        e
    }

    /// One later step of a multi-step operation: refused if the cluster
    /// crashed since the operation started (its state is gone).
    fn step<R>(
        &self,
        generation: u64,
        f: impl FnOnce(&mut ClusterState) -> Result<R>,
    ) -> Result<R> {
        self.cluster.mutate(|s, _| {
            if self.cluster.generation() != generation {
                return Err(MiniKafkaError::Crashed);
            }
            f(s)
        })
    }

    /// Appends instance `index`'s marker to `tp` with acks=all and waits. A
    /// marker of the same type already there (a resumed completion) is not
    /// written twice; its replication is awaited instead.
    async fn write_marker(
        &self,
        index: usize,
        control: ControlType,
        tp: &TopicPartition,
        generation: u64,
    ) -> Result<()> {
        let ack = self.cluster.mutate(|s, now| {
            if self.cluster.generation() != generation {
                return Err(MiniKafkaError::Crashed);
            }
            s.transactions.check_in_flight(index, control)?;
            let data = s.transactions.instance(index);
            let (id, producer) = (data.id.clone(), data.producer);
            let existing = s.transactions.marker(index, tp, control);
            let set = s.partition_mut(tp)?;
            if let Some(offset) = existing {
                return Ok(set.await_replication(offset, offset, now));
            }
            let mut marker = RecordBatch::control_marker(control, id);
            if let Some((pid, epoch)) = producer {
                (marker.producer_id, marker.producer_epoch) = (pid, epoch);
            }
            let offset = set.leader_replica().log_end_offset();
            let ack = set.append(marker, AckMode::All, now, None)?;
            s.transactions.record_marker(index, tp, offset, control);
            Ok(ack)
        })?;
        ack.await.map(|_| ())
    }

    /// The process "dies" at a cut point. If recovery itself fails, the old
    /// state stays and the completion is released so it can be retried.
    fn crash(&self, index: usize) -> Result<EndOutcome> {
        self.cluster
            .crash()
            .map(EndOutcome::Crashed)
            .inspect_err(|_| {
                self.cluster
                    .with_state_mut(|s| s.transactions.release(index));
            })
    }
}
