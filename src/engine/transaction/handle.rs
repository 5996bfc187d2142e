//! The async transaction API of the book's examples (E10, E13):
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
//! `commit_until` / `abort_until` stop after a [`CutPoint`] and crash.

use crate::engine::consumer::offsets::GroupOffsets;
use crate::engine::core::batch::{ControlType, RecordBatch};
use crate::engine::core::cluster::BrokerCluster;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::core::record::Record;
use crate::engine::core::recovery::RecoveryReport;
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::replication::AckMode;
use crate::engine::transaction::manager::{InstanceRef, has_marker};
use crate::engine::transaction::model::{CutPoint, TransactionData, TransactionState};

/// How a commit or abort ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndOutcome {
    /// Every step ran: the transaction is COMPLETE_*.
    Completed,
    /// The process "died" at the cut point and recovered; here is what
    /// recovery did.
    Crashed(RecoveryReport),
}

/// The transaction coordinator of a cluster (`cluster.transactions()`).
#[derive(Debug, Clone)]
pub struct Transactions {
    cluster: BrokerCluster,
}

impl Transactions {
    pub(crate) fn new(cluster: BrokerCluster) -> Self {
        Self { cluster }
    }

    /// Begins a transaction (E10). Refused for an active id under the book's
    /// rules; under the kafka rules the active instance is fenced (E14).
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
        Ok(Transaction {
            cluster: self.cluster.clone(),
            id: id.to_string(),
            handle,
        })
    }

    /// A handle on the latest instance of `id`: for example an ONGOING
    /// transaction found after a crash, so that it can be aborted (E14).
    pub fn resume(&self, id: &str) -> Result<Transaction> {
        self.cluster.with_state(|s| {
            let index = s.transactions.resolve(
                id,
                InstanceRef {
                    index: 0,
                    epoch: None,
                },
            )?;
            Ok(Transaction {
                cluster: self.cluster.clone(),
                id: id.to_string(),
                handle: InstanceRef {
                    index,
                    epoch: s.transactions.instance(index).producer.map(|(_, e)| e),
                },
            })
        })
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

    /// The last stable offset of `tp` (E11).
    pub fn last_stable_offset(&self, tp: &TopicPartition) -> Result<i64> {
        self.cluster.last_stable_offset(tp)
    }
}

/// One transaction, as `begin` returned it.
#[derive(Debug, Clone)]
pub struct Transaction {
    cluster: BrokerCluster,
    id: String,
    handle: InstanceRef,
}

impl Transaction {
    /// The transactional id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Kafka rules: the producer epoch this handle holds.
    pub fn producer_epoch(&self) -> Option<i32> {
        self.handle.epoch
    }

    /// Sends one value to `topic`, partition chosen as for any keyless record.
    pub async fn send(
        &self,
        topic: &str,
        value: impl Into<Vec<u8>>,
    ) -> Result<(TopicPartition, i64)> {
        self.send_record(topic, None, None, value).await
    }

    /// E10 `send`: requires ONGOING, appends a transactional batch with
    /// acks=all, and once it is acknowledged journals the partition and its
    /// first offset. Returns where the record landed.
    pub async fn send_record(
        &self,
        topic: &str,
        partition: Option<u32>,
        key: Option<&[u8]>,
        value: impl Into<Vec<u8>>,
    ) -> Result<(TopicPartition, i64)> {
        let record = Record {
            key: key.map(<[u8]>::to_vec),
            value: Some(value.into()),
            ..Record::default()
        };
        let (tp, ack) = self.cluster.mutate(|s, now| {
            let index = s.transactions.require(
                &self.id,
                self.handle,
                "send",
                &[TransactionState::Ongoing],
            )?;
            let tp = s.choose_partition(topic, partition, record.key.as_deref())?;
            let mut batch = RecordBatch::new(vec![record]).with_transactional_id(self.id.clone());
            if let Some((pid, epoch)) = s.transactions.instance(index).producer {
                let set = s.partition(&tp)?;
                let next = set
                    .leader_replica()
                    .producer_state
                    .entry(pid)
                    .filter(|e| e.epoch == epoch)
                    .and_then(|e| e.batches.back())
                    .map_or(0, |b| b.last_sequence.wrapping_add(1));
                batch = batch.with_producer(pid, epoch, next);
            }
            let ack = s
                .partition_mut(&tp)?
                .append(batch, AckMode::All, now, None)?;
            Ok((tp, ack))
        })?;
        let generation = self.cluster.generation();
        let offset = ack.await?.base_offset().expect("acks=all returns offsets");
        self.cluster.mutate(|s, _| {
            if self.cluster.generation() != generation {
                return Err(MiniKafkaError::Crashed);
            }
            let index = s.transactions.require(
                &self.id,
                self.handle,
                "send",
                &[TransactionState::Ongoing],
            )?;
            s.transactions.record_send(index, &tp, offset)
        })?;
        Ok((tp, offset))
    }

    /// E10 `send_offsets`: stages consumer offsets for `group`, journaled;
    /// nothing is published until commit.
    pub async fn send_offsets(
        &self,
        group: &str,
        offsets: impl IntoIterator<Item = (TopicPartition, i64)>,
    ) -> Result<()> {
        let offsets: GroupOffsets = offsets.into_iter().collect();
        self.cluster.mutate(|s, _| {
            let index = s.transactions.require(
                &self.id,
                self.handle,
                "send_offsets to",
                &[TransactionState::Ongoing],
            )?;
            s.transactions.stage_offsets(index, group, &offsets)
        })
    }

    /// Commits: the chapter's four steps, in order.
    pub async fn commit(&self) -> Result<()> {
        self.end(ControlType::Commit, None).await.map(|_| ())
    }

    /// Aborts: PREPARE_ABORT, ABORT markers, staged offsets discarded,
    /// COMPLETE_ABORT.
    pub async fn abort(&self) -> Result<()> {
        self.end(ControlType::Abort, None).await.map(|_| ())
    }

    /// Commits, but stops after `cut` and crashes the cluster (E13).
    pub async fn commit_until(&self, cut: Option<CutPoint>) -> Result<EndOutcome> {
        self.end(ControlType::Commit, cut).await
    }

    /// Aborts, but stops after `cut` and crashes the cluster (E13).
    pub async fn abort_until(&self, cut: Option<CutPoint>) -> Result<EndOutcome> {
        self.end(ControlType::Abort, cut).await
    }

    async fn end(&self, control: ControlType, cut: Option<CutPoint>) -> Result<EndOutcome> {
        let (index, marks) = self
            .cluster
            .mutate(|s, _| s.transactions.prepare(&self.id, self.handle, control))?;
        let generation = self.cluster.generation();
        let n = marks.len();
        let crash_after_markers = match cut {
            Some(CutPoint::Prepare) => Some(0),
            Some(CutPoint::Marker(k)) => Some(k.min(n)),
            Some(CutPoint::Markers) => Some(n),
            _ => None,
        };
        if crash_after_markers == Some(0) {
            return self.crash();
        }
        for (i, (tp, first)) in marks.iter().enumerate() {
            if let Err(e) = self.write_marker(control, tp, *first).await {
                if self.cluster.generation() == generation {
                    self.cluster
                        .with_state_mut(|s| s.transactions.release(index));
                }
                return Err(e);
            }
            if crash_after_markers == Some(i + 1) {
                return self.crash();
            }
        }
        self.cluster.mutate(|s, _| {
            if self.cluster.generation() != generation {
                return Err(MiniKafkaError::Crashed);
            }
            s.transactions
                .settle_offsets(index, control, &mut s.offsets)
        })?;
        if cut == Some(CutPoint::Offsets) {
            return self.crash();
        }
        self.cluster.mutate(|s, _| {
            if self.cluster.generation() != generation {
                return Err(MiniKafkaError::Crashed);
            }
            s.transactions.complete(index, control)
        })?;
        Ok(EndOutcome::Completed)
    }

    /// Appends this instance's marker to `tp` with acks=all and waits; a
    /// marker already there (a resumed completion) is not written twice.
    async fn write_marker(
        &self,
        control: ControlType,
        tp: &TopicPartition,
        first: i64,
    ) -> Result<()> {
        let ack = self.cluster.mutate(|s, now| {
            let producer = s.transactions.get(&self.id).and_then(|d| d.producer);
            let set = s.partition_mut(tp)?;
            if has_marker(set, &self.id, first) {
                return Ok(None);
            }
            let mut marker = RecordBatch::control_marker(control, self.id.clone());
            if let Some((pid, epoch)) = producer {
                marker.producer_id = pid;
                marker.producer_epoch = epoch;
            }
            set.append(marker, AckMode::All, now, None).map(Some)
        })?;
        if let Some(ack) = ack {
            ack.await?;
        }
        Ok(())
    }

    fn crash(&self) -> Result<EndOutcome> {
        self.cluster.crash().map(EndOutcome::Crashed)
    }
}
