//! The late write: a transactional Produce delayed in the network past its
//! transaction's end (KIP-890's "hanging transaction"). Chapter 8's
//! protocol (transaction version 1) lets the partition leader append it
//! with no question to the coordinator: it lands after the marker, no
//! instance will ever write a marker for it, and the LSO stops at it.
//! Kafka's transaction version 2 bumps the producer epoch at every end, so
//! the late write carries an epoch older than the producer's and is fenced
//! (INVALID_PRODUCER_EPOCH) before it reaches the log.
//!
//! A hanging write is released by a later marker of its id on its
//! partition, or, where transactions time out (the kafka rules), by an
//! ABORT marker after `transaction_timeout_ms`; under the book's rules
//! nothing ever releases it. The list is kept in memory (and with a
//! checkpoint's memo), not in the journal: the coordinator never knew of
//! the write, which is the point. A crash forgets it
//! (docs/kafka-differences.md, "The hanging transaction").

use std::collections::BTreeMap;

use crate::engine::core::batch::{ControlType, RecordBatch};
use crate::engine::core::cluster::ClusterState;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::core::record::Record;
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::producer::SequenceCheck;
use crate::engine::replication::{AckMode, PartitionReplicaSet};
use crate::engine::transaction::manager::{TransactionCoordinator, TransactionManager};

/// A late write that landed in the log and holds its partition's LSO back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LateWrite {
    /// The transactional id the batch carries.
    pub id: String,
    pub tp: TopicPartition,
    /// The batch's first offset: where the LSO stops.
    pub offset: i64,
    /// The producer id and epoch it carries (kafka rules), the ended
    /// transaction's.
    pub producer: Option<(i64, i32)>,
    /// Clock time it landed, for the transaction timeout.
    pub at_ms: u64,
}

impl TransactionCoordinator {
    /// The instance a late write of `id` was sent in: the id's most recent
    /// ended (COMPLETE_*) instance.
    pub fn last_ended(&self, id: &str) -> Option<usize> {
        let all = self.transactions.all();
        (0..all.len())
            .rev()
            .find(|&i| all[i].id == id && all[i].state.is_complete())
    }

    /// The offsets of the hanging writes on `tp`: each holds the LSO back.
    pub(crate) fn hanging_on<'a>(
        &'a self,
        tp: &'a TopicPartition,
    ) -> impl Iterator<Item = i64> + 'a {
        self.late_writes
            .iter()
            .filter(move |w| &w.tp == tp)
            .map(|w| w.offset)
    }

    /// Every hanging write, in the order they landed.
    pub fn late_writes(&self) -> &[LateWrite] {
        &self.late_writes
    }

    /// A marker of `id` at `offset` on `tp` ends every hanging write of
    /// that id below it there (the leader's producer state sees the end of
    /// the producer's open transaction).
    pub(crate) fn close_hanging(&mut self, id: &str, tp: &TopicPartition, offset: i64) {
        self.late_writes
            .retain(|w| !(w.id == id && &w.tp == tp && w.offset < offset));
    }

    /// Kafka rules: hanging writes older than the transaction timeout are
    /// aborted with an ABORT marker on their partition's leader. Returns
    /// their ids.
    pub(crate) fn expire_hanging(
        &mut self,
        partitions: &mut BTreeMap<TopicPartition, PartitionReplicaSet>,
        now_ms: u64,
    ) -> Result<Vec<String>> {
        if !self.rules.transaction_timeout {
            return Ok(Vec::new());
        }
        let due: Vec<LateWrite> = (self.late_writes.iter())
            .filter(|w| now_ms.saturating_sub(w.at_ms) >= self.timeout_ms)
            .cloned()
            .collect();
        let mut ids = Vec::new();
        for w in due {
            let Some(set) = partitions.get_mut(&w.tp) else {
                continue;
            };
            if set.leader().stopped {
                continue;
            }
            let offset = set.leader().leo();
            let mut marker = RecordBatch::control_marker(ControlType::Abort, w.id.clone());
            if let Some((pid, epoch)) = w.producer {
                (marker.producer_id, marker.producer_epoch) = (pid, epoch);
            }
            let mut ack = set.append(marker, AckMode::Leader, now_ms, None)?;
            if let Some(Ok(_)) = ack.try_take() {
                self.transactions
                    .note_marker_of(&w.id, &w.tp, offset, ControlType::Abort);
                self.close_hanging(&w.id, &w.tp, offset);
                ids.push(w.id);
            }
        }
        Ok(ids)
    }
}

impl TransactionManager {
    /// A Produce of `id`'s last ended transaction, delayed in the network,
    /// arriving now with that transaction's producer id and epoch.
    ///
    /// Transaction version 2: the end bumped the epoch, so the write is
    /// fenced (`InvalidProducerEpoch`) and nothing is appended. Version 1:
    /// the leader appends it (after the marker) and it hangs: the LSO stops
    /// at it. Returns where it landed. Refused when `id` has no ended transaction.
    pub fn late_send(
        &self,
        id: &str,
        topic: &str,
        partition: Option<u32>,
        records: Vec<Record>,
    ) -> Result<(TopicPartition, i64)> {
        self.cluster
            .mutate(|s, now| late_send(s, id, topic, partition, records, now))
    }
}

fn late_send(
    s: &mut ClusterState,
    id: &str,
    topic: &str,
    partition: Option<u32>,
    records: Vec<Record>,
    now: u64,
) -> Result<(TopicPartition, i64)> {
    let coordinator = &s.transactions;
    let ended =
        coordinator
            .last_ended(id)
            .ok_or_else(|| MiniKafkaError::InvalidTransactionState {
                id: id.to_string(),
                operation: "deliver a late write of",
                state: coordinator
                    .transactions
                    .get(id)
                    .map_or("unknown".to_string(), |d| d.state.name().to_string()),
                expected: "ended (commit or abort it first)",
            })?;
    let data = coordinator.transactions.instance(ended).clone();
    let key = records.first().and_then(|r| r.key.as_deref());
    let tp = s.choose_partition(topic, partition, key)?;
    let bumped = (data.producer)
        .zip(data.next_producer_epoch)
        .filter(|_| s.config.rules.transaction_version.bumps_epoch_at_end());
    if let Some(((producer_id, epoch), current)) = bumped {
        return Err(MiniKafkaError::InvalidProducerEpoch {
            tp: tp.to_string(),
            producer_id,
            epoch,
            current,
        });
    }
    let mut batch = RecordBatch::new(records).with_transactional_id(id);
    if let Some((pid, epoch)) = data.producer {
        let leader = s.partition(&tp)?.leader();
        let next = (leader.producer_state.entry(pid))
            .filter(|e| e.epoch == epoch)
            .and_then(|e| e.batches.back())
            .map_or(0, |b| b.last_sequence.wrapping_add(1));
        batch = batch.with_producer(pid, epoch, next);
        if let SequenceCheck::Duplicate { .. } = leader.producer_state.check(&tp, &batch)? {
            return Err(MiniKafkaError::InvalidBatch(format!(
                "a late write of {id:?} to {tp} repeats a batch the leader has"
            )));
        }
    }
    let set = s.partition_mut(&tp)?;
    let offset = set.leader().leo();
    // The client that sent it gave up long ago: no one waits for its acks.
    drop(set.append(batch, AckMode::All, now, None)?);
    s.transactions.late_writes.push(LateWrite {
        id: id.to_string(),
        tp: tp.clone(),
        offset,
        producer: data.producer,
        at_ms: now,
    });
    Ok((tp, offset))
}
