//! The bookkeeping of a transaction run one engine step at a time
//! (docs/engine-decisions.md, "Transactions"). Between two steps of
//! `send`, `commit` or `abort` other actions run, so the manager must know
//! which instance a handle addresses, which writes still wait for their
//! acks (they hold the LSO back), which completions are running, and
//! whether the cluster crashed since the operation began (its generation).
//! Also the numbering of a transactional batch under the kafka rules.

use crate::engine::core::batch::{ControlType, RecordBatch};
use crate::engine::core::cluster::ClusterState;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::core::record::Record;
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::fault::{CutPoint, EndOutcome};
use crate::engine::producer::SequenceCheck;
use crate::engine::replication::AckMode;
use crate::engine::replication::model::AppendFuture;
use crate::engine::transaction::handle::Transaction;
use crate::engine::transaction::manager::{TransactionCoordinator, TransactionManager, marker_of};
use crate::engine::transaction::model::{TransactionData, TransactionState};

/// Which instance of a transaction id an operation addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstanceRef {
    /// Index of the instance, in begin order.
    pub index: usize,
    /// Kafka rules: the producer epoch the handle holds (for fencing).
    pub epoch: Option<i32>,
}

/// Where a transactional batch landed ([`TransactionManager::send_batch_as`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    pub tp: TopicPartition,
    /// The batch's first offset; for an exact retry, its original's.
    pub base_offset: i64,
    /// An exact retry answered with the original's offset (E7).
    pub duplicate: bool,
}

/// The instance `tx` addresses, which must be ONGOING for `operation`.
pub(crate) fn ongoing(
    s: &ClusterState,
    tx: &Transaction,
    operation: &'static str,
) -> Result<usize> {
    s.transactions.require(
        tx.id(),
        tx.instance(),
        operation,
        &[TransactionState::Ongoing],
    )
}

/// Kafka rules (E14, E7): a transactional batch to `tp` of instance `index`
/// carries the instance's producer id and epoch. Without `wire` the engine
/// numbers it after the last sequence the leader has of that producer;
/// with `wire` (a Kafka client's producer id, epoch and first sequence)
/// they must be the instance's, and the producer state judges the
/// sequence: an exact retry is answered with its original (`Err`) and
/// appends nothing. Under the book's rules a batch carries no identity.
pub(crate) fn number_batch(
    s: &ClusterState,
    index: usize,
    tp: &TopicPartition,
    batch: RecordBatch,
    wire: Option<(i64, i32, i32)>,
) -> Result<std::result::Result<RecordBatch, Sent>> {
    let data: &TransactionData = s.transactions.transactions.instance(index);
    match (data.producer, wire) {
        (Some((pid, epoch)), None) => {
            let next = s
                .partition(tp)?
                .leader()
                .producer_state
                .entry(pid)
                .filter(|e| e.epoch == epoch)
                .and_then(|e| e.batches.back())
                .map_or(0, |b| b.last_sequence.wrapping_add(1));
            Ok(Ok(batch.with_producer(pid, epoch, next)))
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
            let batch = batch.with_producer(pid, epoch, sequence);
            let leader = s.partition(tp)?.leader();
            if let SequenceCheck::Duplicate { base_offset, .. } =
                leader.producer_state.check(tp, &batch)?
            {
                return Ok(Err(Sent {
                    tp: tp.clone(),
                    base_offset,
                    duplicate: true,
                }));
            }
            Ok(Ok(batch))
        }
        (None, Some(_)) => Err(MiniKafkaError::InvalidBatch(format!(
            "{:?}'s transaction has no producer id under the book's rules: its batches carry no client identity",
            data.id
        ))),
        (None, None) => Ok(Ok(batch)),
    }
}

/// PREPARE_* and COMPLETE_* for a marker type.
pub fn states_for(control: ControlType) -> (TransactionState, TransactionState) {
    match control {
        ControlType::Commit => (
            TransactionState::PrepareCommit,
            TransactionState::CompleteCommit,
        ),
        ControlType::Abort => (
            TransactionState::PrepareAbort,
            TransactionState::CompleteAbort,
        ),
    }
}

/// The operation that writes `control` markers, for messages.
pub(crate) fn verb(control: ControlType) -> &'static str {
    match control {
        ControlType::Commit => "commit",
        ControlType::Abort => "abort",
    }
}

/// A cut point (E13) as the number of markers after which the process
/// dies, of `n` (0: right after PREPARE_*); `None` for no cut or `offsets`.
pub(crate) fn markers_before(cut: Option<CutPoint>, n: usize) -> Option<usize> {
    match cut {
        Some(CutPoint::Prepare) => Some(0),
        Some(CutPoint::Marker(k)) => Some(k.min(n)),
        Some(CutPoint::Markers) => Some(n),
        _ => None,
    }
}

impl TransactionManager {
    /// Waits for a transactional write's acks; it stops holding the LSO
    /// back as pending if they fail. Returns the cluster's generation (the
    /// next step is refused if it changed: a crash).
    pub(crate) async fn acked(
        &self,
        index: usize,
        tp: &TopicPartition,
        offset: i64,
        ack: AppendFuture,
    ) -> Result<u64> {
        let generation = self.cluster.generation();
        if let Err(e) = ack.await {
            if self.cluster.generation() == generation {
                self.cluster
                    .with_state_mut(|s| s.transactions.abandon_send(index, tp, offset));
            }
            return Err(e);
        }
        Ok(generation)
    }

    /// Appends instance `index`'s marker to `tp` with acks=all and waits. A
    /// marker of the same type already there (a resumed completion) is not
    /// written twice; its replication is awaited instead. A partition whose
    /// topic was deleted since it was added gets none, as Kafka's
    /// coordinator drops the markers of deleted partitions.
    pub(crate) async fn write_marker(
        &self,
        index: usize,
        control: ControlType,
        tp: &TopicPartition,
        generation: u64,
    ) -> Result<()> {
        let ack = self.step(generation, |s, now| {
            s.transactions.check_in_flight(index, control)?;
            let data = s.transactions.transactions.instance(index);
            let marker = marker_of(data, control);
            let existing = s.transactions.transactions.marker(index, tp, control);
            if s.metadata.partition(tp).is_none() {
                return Ok(None);
            }
            let set = s.partition_mut(tp)?;
            if let Some(offset) = existing {
                return Ok(Some(set.await_replication(offset, offset, now)));
            }
            let offset = set.leader().leo();
            let ack = set.append(marker, AckMode::All, now, None)?;
            s.transactions
                .transactions
                .record_marker(index, tp, offset, control);
            let id = s.transactions.transactions.instance(index).id.clone();
            s.transactions.close_hanging(&id, tp, offset);
            Ok(Some(ack))
        })?;
        match ack {
            Some(ack) => ack.await.map(|_| ()),
            None => Ok(()),
        }
    }

    /// A handle on the latest instance of `id`: for example an ONGOING
    /// transaction found after a crash, so that it can be aborted (E14: the
    /// book has no way out; fixed in both rules).
    pub fn resume(&self, id: &str) -> Result<Transaction> {
        let handle = self.cluster.with_state(|s| {
            let index = s.transactions.resolve(
                id,
                InstanceRef {
                    index: 0,
                    epoch: None,
                },
            )?;
            let producer = s.transactions.transactions.instance(index).producer;
            Ok::<_, MiniKafkaError>(InstanceRef {
                index,
                epoch: producer.map(|(_, e)| e),
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

    /// One later step of a multi-step operation: refused if the cluster
    /// crashed since the operation started (its state is gone).
    pub(crate) fn step<R>(
        &self,
        generation: u64,
        f: impl FnOnce(&mut ClusterState, u64) -> Result<R>,
    ) -> Result<R> {
        self.cluster.mutate(|s, now| {
            if self.cluster.generation() != generation {
                return Err(MiniKafkaError::Crashed);
            }
            f(s, now)
        })
    }

    /// A step that journals: `f` under the state lock, then, with the lock
    /// released, a wait until every journal frame written so far is
    /// durable (Kafka rules' group commit; under the book's rules each
    /// frame was fsynced as it was written and nothing waits). A crash
    /// during the wait ends the operation as a crash does: no answer.
    /// While the caller defers syncs ([`BrokerCluster::defer_journal_syncs`])
    /// the step does not wait: the caller syncs before it answers.
    ///
    /// [`BrokerCluster::defer_journal_syncs`]: crate::engine::BrokerCluster::defer_journal_syncs
    pub(crate) fn journaled<R>(
        &self,
        generation: Option<u64>,
        f: impl FnOnce(&mut ClusterState, u64) -> Result<R>,
    ) -> Result<R> {
        self.journaled_as(generation, false, f)
    }

    /// [`Self::journaled`] whose frames are durable when it returns, even
    /// while syncs are deferred: PREPARE_*, which the markers written next
    /// rest on.
    pub(crate) fn journaled_durable<R>(
        &self,
        generation: Option<u64>,
        f: impl FnOnce(&mut ClusterState, u64) -> Result<R>,
    ) -> Result<R> {
        self.journaled_as(generation, true, f)
    }

    fn journaled_as<R>(
        &self,
        generation: Option<u64>,
        durable: bool,
        f: impl FnOnce(&mut ClusterState, u64) -> Result<R>,
    ) -> Result<R> {
        let (result, ticket, generation) = self.cluster.mutate(|s, now| {
            let current = self.cluster.generation();
            if generation.is_some_and(|g| g != current) {
                return Err(MiniKafkaError::Crashed);
            }
            let result = f(s, now)?;
            Ok((result, s.transactions.journal_ticket(), current))
        })?;
        if ticket.waits() && !durable && self.cluster.journal_syncs_deferred() {
            self.cluster.skipped_journal_sync();
        } else if ticket.waits() {
            ticket.wait()?;
            if self.cluster.generation() != generation {
                return Err(MiniKafkaError::Crashed);
            }
        }
        Ok(result)
    }

    /// Ends a completion that failed with `e` (a marker refused, or a write
    /// of `offsets.json` or of the journal that failed): the state stays
    /// PREPARE_*, and commit or abort may be called again to resume it.
    /// Returns `e`.
    pub(crate) fn release(
        &self,
        index: usize,
        generation: u64,
        e: MiniKafkaError,
    ) -> MiniKafkaError {
        if self.cluster.generation() == generation {
            self.cluster
                .with_state_mut(|s| s.transactions.release(index));
        }
        e
    }

    /// The process "dies" at a cut point (E13). If recovery itself fails,
    /// the old state stays and the completion is released so it can be
    /// retried.
    pub(crate) fn crash(&self, index: usize) -> Result<EndOutcome> {
        self.cluster
            .crash()
            .map(EndOutcome::Crashed)
            .inspect_err(|_| {
                self.cluster
                    .with_state_mut(|s| s.transactions.release(index));
            })
    }
}

impl TransactionCoordinator {
    /// `_require_ongoing` of the instance a handle addresses, widened to the
    /// states in `allowed`.
    pub fn require(
        &self,
        id: &str,
        handle: InstanceRef,
        operation: &'static str,
        allowed: &[TransactionState],
    ) -> Result<usize> {
        let index = self.resolve(id, handle)?;
        let state = self.transactions.instance(index).state;
        if !allowed.contains(&state) {
            return Err(MiniKafkaError::InvalidTransactionState {
                id: id.to_string(),
                operation,
                state: state.name().to_string(),
                expected: allowed[0].name(),
            });
        }
        Ok(index)
    }

    /// Notes a transactional write appended at `offset` and waiting for its
    /// acks: it holds the LSO back from now on.
    pub fn start_send(&mut self, index: usize, tp: &TopicPartition, offset: i64) {
        self.pending_sends
            .entry((index, tp.clone()))
            .or_default()
            .push(offset);
    }

    /// Forgets a pending write whose acks failed (or came).
    pub fn abandon_send(&mut self, index: usize, tp: &TopicPartition, offset: i64) {
        let key = (index, tp.clone());
        if let Some(list) = self.pending_sends.get_mut(&key) {
            list.retain(|&o| o != offset);
            if list.is_empty() {
                self.pending_sends.remove(&key);
            }
        }
    }

    /// Whether a commit or abort of instance `index` may start: none is
    /// running, and no send of it waits for its acks.
    pub(crate) fn check_startable(&self, id: &str, index: usize) -> Result<()> {
        if self.in_flight.contains(&index) {
            return Err(MiniKafkaError::TransactionInProgress(id.to_string()));
        }
        let count: usize = self
            .pending_sends
            .range((index, TopicPartition::new("", 0))..)
            .take_while(|((i, _), _)| *i == index)
            .map(|(_, v)| v.len())
            .sum();
        if count > 0 {
            return Err(MiniKafkaError::SendsPending {
                id: id.to_string(),
                count,
            });
        }
        Ok(())
    }

    /// Ends an in-flight completion that failed (a marker was refused): the
    /// state stays PREPARE_*, and commit/abort may be called again.
    pub fn release(&mut self, index: usize) {
        self.in_flight.remove(&index);
    }

    /// Checks that the commit or abort of instance `index` is still the one
    /// running: zombie fencing or a timeout may have completed it meanwhile.
    pub fn check_in_flight(&self, index: usize, control: ControlType) -> Result<()> {
        let data = self.transactions.instance(index);
        let running = self.in_flight.contains(&index)
            && self.transactions.latest(&data.id) == Some(index)
            && data.state == states_for(control).0;
        if running {
            Ok(())
        } else {
            Err(MiniKafkaError::TransactionInterrupted {
                id: data.id.clone(),
                operation: verb(control),
            })
        }
    }

    /// Where the latest instance of `id` has writes waiting for their acks.
    pub fn pending_sends_of(&self, id: &str) -> Vec<(TopicPartition, i64)> {
        let Some(index) = self.transactions.latest(id) else {
            return Vec::new();
        };
        self.pending_sends
            .iter()
            .filter(|((i, _), _)| *i == index)
            .flat_map(|((_, tp), offsets)| offsets.iter().map(move |o| (tp.clone(), *o)))
            .collect()
    }

    /// The offsets of `tp`'s writes still waiting for their acks, of
    /// instances not yet complete: they hold the LSO back.
    pub(crate) fn pending_on<'a>(
        &'a self,
        tp: &'a TopicPartition,
    ) -> impl Iterator<Item = i64> + 'a {
        self.pending_sends
            .iter()
            .filter(move |((i, p), _)| {
                p == tp && self.transactions.instance(*i).state.is_unstable()
            })
            .flat_map(|(_, offsets)| offsets.iter().copied())
    }

    /// True when no commit, abort or send is in flight.
    pub fn is_quiet(&self) -> bool {
        self.in_flight.is_empty() && self.pending_sends.is_empty()
    }
}

impl Transaction {
    /// Kafka rules: the producer epoch this handle holds.
    pub fn producer_epoch(&self) -> Option<i32> {
        self.instance().epoch
    }

    /// Sends one value to `partition` of `topic` (the book's
    /// `tx.send(topic, value=…, partition=…)`).
    pub async fn send_to(
        &self,
        topic: &str,
        partition: u32,
        value: impl Into<Vec<u8>>,
    ) -> Result<(TopicPartition, i64)> {
        self.manager
            .send(self, topic, Some(partition), None, value.into())
            .await
    }

    /// Sends one record, to `partition` if given, else by key, else
    /// round-robin.
    pub async fn send_record(
        &self,
        topic: &str,
        partition: Option<u32>,
        key: Option<&[u8]>,
        value: impl Into<Vec<u8>>,
    ) -> Result<(TopicPartition, i64)> {
        self.manager
            .send(self, topic, partition, key, value.into())
            .await
    }

    /// Sends several records as one transactional batch, to `partition` if
    /// given, else by the first record's key, else round-robin.
    pub async fn send_batch(
        &self,
        topic: &str,
        partition: Option<u32>,
        records: Vec<Record>,
    ) -> Result<(TopicPartition, i64)> {
        let sent = self.send_batch_as(topic, partition, records, None).await?;
        Ok((sent.tp, sent.base_offset))
    }

    /// Sends a Kafka client's batch numbered as the client numbered it
    /// ([`TransactionManager::send_batch_as`]).
    pub async fn send_batch_as(
        &self,
        topic: &str,
        partition: Option<u32>,
        records: Vec<Record>,
        wire: Option<(i64, i32, i32)>,
    ) -> Result<Sent> {
        self.manager
            .send_batch_as(self, topic, partition, records, wire)
            .await
    }

    /// Commits, but stops after `cut` and crashes the cluster (E13).
    pub async fn commit_until(&self, cut: Option<CutPoint>) -> Result<EndOutcome> {
        self.manager.commit(self, cut).await
    }

    /// Aborts, but stops after `cut` and crashes the cluster (E13).
    pub async fn abort_until(&self, cut: Option<CutPoint>) -> Result<EndOutcome> {
        self.manager.abort(self, cut).await
    }
}
