//! The book's `manager.py`: `TransactionManager` (E10-E12), in the book's
//! order: `begin`, `send`, `send_offsets`, `commit`, `abort`,
//! `is_committed`, `last_stable_offset`, `_require_ongoing`,
//! `_finish_recovery`. The book's manager is one object; here its state is
//! [`TransactionCoordinator`], inside the cluster's state so that a crash
//! drops it, and its async verbs are [`TransactionManager`]
//! (`cluster.transactions()`), each a few synchronous steps on that state.
//! Each step of `commit` is its own engine step, so replication, reads or
//! a crash can run while a marker waits for `acks=all`; a [`CutPoint`]
//! stops after a step and crashes the cluster (E13). Kafka-rule switches
//! (E14) are marked "Kafka rules"; what the engine adds around the book is
//! in `txn_support` and `time_travel` (docs/reading-the-engine.md).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::engine::config::RuleSwitches;
use crate::engine::consumer::OffsetStore;
use crate::engine::consumer::offsets::GroupOffsets;
use crate::engine::core::batch::{ControlType, RecordBatch};
use crate::engine::core::cluster::BrokerCluster;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::core::record::Record;
use crate::engine::core::recovery::{CompletedTransaction, RecoveryReport, ResentMarker};
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::fault::{CutPoint, EndOutcome};
use crate::engine::replication::model::TransactionVisibility;
use crate::engine::replication::{AckMode, PartitionReplicaSet};
use crate::engine::transaction::handle::Transaction;
use crate::engine::transaction::journal::{JournalRecovery, TransactionJournal};
use crate::engine::transaction::model::{TransactionData, TransactionState};
use crate::engine::txn_support::instances::TransactionInstances;
use crate::engine::txn_support::steps::{
    InstanceRef, Sent, markers_before, number_batch, ongoing, states_for, verb,
};

/// The book's `TransactionManager`'s state: the journal and the
/// transactions (`_transactions`, kept per instance), plus what only the
/// step-by-step commit needs in memory.
#[derive(Debug)]
pub struct TransactionCoordinator {
    pub(crate) journal: TransactionJournal,
    pub(crate) transactions: TransactionInstances,
    /// Instances whose commit or abort is running now.
    pub(crate) in_flight: BTreeSet<usize>,
    /// Writes appended, not yet acknowledged: they hold the LSO back.
    pub(crate) pending_sends: BTreeMap<(usize, TopicPartition), Vec<i64>>,
    pub(crate) rules: RuleSwitches,
    /// Kafka rules: `transaction_timeout_ms`.
    pub(crate) timeout_ms: u64,
    pub(crate) replayed_on_open: usize,
    /// Version 1: transactional writes that landed after their
    /// transaction's end and hold the LSO back (`txn_support::late_writes`).
    pub(crate) late_writes: Vec<crate::engine::txn_support::late_writes::LateWrite>,
}

/// The book's `TransactionManager`'s verbs (`cluster.transactions()`).
#[derive(Debug, Clone)]
pub struct TransactionManager {
    pub(crate) cluster: BrokerCluster,
}

impl TransactionCoordinator {
    /// The book's `__init__`: `journal.recover()`. Call [`Self::recover`]
    /// (the book's `_finish_recovery`) once the logs are open.
    pub fn open(
        data_dir: &Path,
        rules: RuleSwitches,
        timeout_ms: u64,
        report: &mut RecoveryReport,
    ) -> Result<Self> {
        let (journal, records, recovery) = TransactionJournal::open(data_dir)?;
        Ok(Self::replay(
            journal,
            TransactionInstances::default(),
            (records, recovery),
            (rules, timeout_ms),
            report,
        ))
    }

    /// The coordinator of `journal`, whose records are replayed onto
    /// `transactions` in order.
    pub(crate) fn replay(
        journal: TransactionJournal,
        transactions: TransactionInstances,
        (records, recovery): (Vec<TransactionData>, JournalRecovery),
        (rules, timeout_ms): (RuleSwitches, u64),
        report: &mut RecoveryReport,
    ) -> Self {
        report.journal_truncated_bytes = recovery.truncated_bytes;
        report.journal_reason = recovery.reason;
        let mut coordinator = Self {
            journal,
            transactions,
            in_flight: BTreeSet::new(),
            pending_sends: BTreeMap::new(),
            rules,
            timeout_ms,
            replayed_on_open: records.len(),
            late_writes: Vec::new(),
        };
        for record in records {
            coordinator.transactions.apply(record);
        }
        coordinator
    }

    /// `self.journal.append(data)`, and `data` is the instance's state.
    fn write(&mut self, data: TransactionData) -> Result<usize> {
        self.journal.append(&data)?;
        Ok(self.transactions.apply(data))
    }
}

impl TransactionManager {
    /// `begin` (E10): a new ONGOING transaction, journaled.
    pub async fn begin(&self, id: &str) -> Result<Transaction> {
        self.begin_as(id, false).await
    }

    /// `begin` by a new producer of `id` (Kafka's `initTransactions`):
    /// under the kafka rules it always takes a new epoch, also under
    /// transaction version 2, where a plain `begin` goes on with the epoch
    /// the last end bumped to. Kafka's coordinator bumps the epoch at every
    /// InitProducerId, past an end's bump too, so that the producer holding
    /// the bumped epoch is fenced (`TransactionCoordinator.handleInitProducerId`:
    /// `prepareIncrementProducerEpoch`).
    pub async fn begin_new_producer(&self, id: &str) -> Result<Transaction> {
        self.begin_as(id, true).await
    }

    async fn begin_as(&self, id: &str, new_producer: bool) -> Result<Transaction> {
        if id.is_empty() {
            return Err(MiniKafkaError::InvalidTransactionalId(String::new()));
        }
        let handle = self.journaled(None, |s, now| {
            // Kafka rules: the transactional id gets a producer id and epoch;
            // under version 2 the producer goes on with the epoch its last
            // transaction's end bumped it to (KIP-890), with no new init.
            // The begin's journal frame carries the epoch, so the identities
            // file is replaced only for a new id (`init_carried`).
            let name = transactional_name(id);
            let producer = match s.transactions.continued_epoch(id) {
                Some(epoch) if s.config.rules.fence_zombies && new_producer => {
                    s.identities.advance_to_carried(&name, epoch)?;
                    Some(s.identities.init_carried(&name)?)
                }
                Some(epoch) if s.config.rules.fence_zombies => {
                    Some(s.identities.advance_to_carried(&name, epoch)?)
                }
                _ if s.config.rules.fence_zombies => Some(s.identities.init_carried(&name)?),
                _ => None,
            };
            s.transactions
                .begin(id, producer, &mut s.partitions, &mut s.offsets, now)
        })?;
        Ok(Transaction::new(self.clone(), id, handle))
    }
}

/// The name a transactional id's producer identity goes by in
/// `producer-identities.json` (Kafka rules).
pub(crate) fn transactional_name(id: &str) -> String {
    format!("transactional.id:{id}")
}

impl TransactionCoordinator {
    /// The producer identity each transactional id's latest journaled
    /// instance carries (Kafka rules; none under the book's), by the name
    /// `producer-identities.json` gives it: what a begin's epoch was,
    /// where only the journal kept it
    /// ([`crate::engine::producer::identity::ProducerIdentities::init_carried`]).
    pub fn journaled_identities(&self) -> impl Iterator<Item = (String, (i64, i32))> + '_ {
        self.transactions
            .current()
            .filter_map(|data| Some((transactional_name(&data.id), data.producer?)))
    }

    /// `begin`: refused for an active id; under the kafka rules the active
    /// instance is fenced instead (completed: a PREPARE_COMMIT one commits,
    /// anything else aborts, markers written) and the new one gets the next
    /// epoch.
    pub fn begin(
        &mut self,
        id: &str,
        producer: Option<(i64, i32)>,
        partitions: &mut BTreeMap<TopicPartition, PartitionReplicaSet>,
        offsets: &mut OffsetStore,
        now_ms: u64,
    ) -> Result<InstanceRef> {
        if let Some(old) = self.transactions.latest(id) {
            let state = self.transactions.instance(old).state;
            if state.is_unstable() {
                if !self.rules.fence_zombies {
                    return Err(MiniKafkaError::TransactionAlreadyActive {
                        id: id.to_string(),
                        state: state.name().to_string(),
                    });
                }
                // Kafka rules: zombie fencing.
                let control = if state == TransactionState::PrepareCommit {
                    ControlType::Commit
                } else {
                    ControlType::Abort
                };
                self.complete_now(old, control, true, partitions, offsets, now_ms)?;
            }
        }
        let mut data = TransactionData::begin(id);
        data.producer = producer;
        if self.rules.transaction_timeout {
            data.started_ms = Some(now_ms); // Kafka rules: the timeout's start
        }
        let index = self.write(data)?;
        Ok(InstanceRef {
            index,
            epoch: producer.map(|(_, e)| e),
        })
    }
}

impl TransactionManager {
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
            key: key.map(bytes::Bytes::copy_from_slice),
            value: Some(value.into()),
            ..Record::default()
        };
        let sent = self
            .send_batch_as(tx, topic, partition, vec![record], None)
            .await?;
        Ok((sent.tp, sent.base_offset))
    }

    /// `send` of a batch of records (the book sends one): to `partition`,
    /// else by the first record's key, else round-robin. `wire` is a Kafka
    /// client's producer id, epoch and first sequence ([`number_batch`]).
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
            let batch = RecordBatch::new(records).with_transactional_id(tx.id());
            let batch = match number_batch(s, index, &tp, batch, wire)? {
                Ok(batch) => batch,
                Err(duplicate) => return Ok(Err(duplicate)),
            };
            let set = s.partition_mut(&tp)?;
            let offset = set.leader().leo();
            let ack = set.append(batch, AckMode::All, now, None)?;
            s.transactions.start_send(index, &tp, offset);
            Ok(Ok((index, tp, offset, ack)))
        })?;
        let (index, tp, offset, ack) = match appended {
            Ok(appended) => appended,
            Err(duplicate) => return Ok(duplicate),
        };
        let generation = self.acked(index, &tp, offset, ack).await?;
        self.journaled(Some(generation), |s, _| {
            let index = ongoing(s, tx, "send")?;
            s.transactions.record_send(index, &tp, offset)
        })?;
        Ok(Sent {
            tp,
            base_offset: offset,
            duplicate: false,
        })
    }
}

impl TransactionCoordinator {
    /// The end of `send`: the partition and its first offset, journaled
    /// after every send as in the book.
    pub fn record_send(&mut self, index: usize, tp: &TopicPartition, offset: i64) -> Result<()> {
        self.abandon_send(index, tp, offset);
        let mut data = self.transactions.instance(index).clone();
        self.require_ongoing(&data, "send")?;
        data.record_write(tp, offset);
        self.write(data)?;
        Ok(())
    }
}

impl TransactionManager {
    /// `send_offsets` (E10): stages consumer offsets for `group`, journaled;
    /// nothing is published until commit.
    pub async fn send_offsets(
        &self,
        tx: &Transaction,
        group: &str,
        offsets: GroupOffsets,
    ) -> Result<()> {
        self.journaled(None, |s, _| {
            let index = ongoing(s, tx, "send_offsets to")?;
            s.transactions.stage_offsets(index, group, &offsets)
        })
    }
}

impl TransactionCoordinator {
    /// `send_offsets`: `staged_offsets[group].update(offsets)`, journaled.
    pub fn stage_offsets(
        &mut self,
        index: usize,
        group: &str,
        offsets: &GroupOffsets,
    ) -> Result<()> {
        let mut data = self.transactions.instance(index).clone();
        data.staged_offsets
            .entry(group.to_string())
            .or_default()
            .extend(offsets.iter().map(|(tp, o)| (tp.clone(), *o)));
        self.write(data)?;
        Ok(())
    }
}

impl TransactionCoordinator {
    /// Forgets what instances before `from` wrote on `topic`
    /// ([`TransactionInstances::forget_topic_before`]) and the late writes
    /// left on its partitions: the topic was deleted and created again.
    pub(crate) fn forget_topic_before(&mut self, topic: &str, from: usize, kept: &[usize]) {
        self.transactions.forget_topic_before(topic, from, kept);
        self.late_writes.retain(|w| w.tp.topic != topic);
    }

    /// Whether any transaction ever wrote to (or added) a partition of
    /// `topic`: the journal's instances, the markers learned, the writes
    /// waiting for their acks.
    pub(crate) fn touched(&self, topic: &str) -> bool {
        let of_topic = |tp: &TopicPartition| tp.topic == topic;
        self.transactions
            .owners
            .values()
            .any(|by_tp| by_tp.keys().any(of_topic))
            || self.transactions.markers.keys().any(of_topic)
            || self.pending_sends.keys().any(|(_, tp)| of_topic(tp))
            || self
                .transactions
                .all()
                .iter()
                .any(|d| d.partitions.iter().any(of_topic))
    }

    /// The instances not yet ended, in index order.
    pub(crate) fn unfinished(&self) -> Vec<usize> {
        let mut open: Vec<usize> = self
            .transactions
            .current_indices()
            .into_iter()
            .filter(|&i| !self.transactions.instance(i).state.is_complete())
            .collect();
        open.sort();
        open
    }

    /// The first transaction not yet ended that wrote to (or added) a
    /// partition of `topic`, if any.
    pub(crate) fn open_on(&self, topic: &str) -> Option<String> {
        let open_here = self.transactions.current().find(|d| {
            !d.state.is_complete()
                && (d.partitions.iter().any(|tp| tp.topic == topic)
                    || d.first_offsets.iter().any(|(tp, _)| tp.topic == topic))
        });
        let pending = self
            .pending_sends
            .keys()
            .find(|(_, tp)| tp.topic == topic)
            .map(|(i, _)| self.transactions.instance(*i));
        open_here.or(pending).map(|d| d.id.clone())
    }

    /// Drops `topic`'s staged offsets from every transaction that has not
    /// ended (the topic was deleted: Kafka's group coordinator drops them,
    /// so its commit publishes none of them), each instance's change
    /// journaled as a `send_offsets` journals one. How many it changed.
    pub(crate) fn drop_staged_topic(&mut self, topic: &str) -> Result<usize> {
        let holding: Vec<usize> = self
            .transactions
            .current_indices()
            .into_iter()
            .filter(|&i| {
                let d = self.transactions.instance(i);
                !d.state.is_complete()
                    && d.staged_offsets
                        .values()
                        .any(|o| o.keys().any(|tp| tp.topic == topic))
            })
            .collect();
        for &index in &holding {
            let mut data = self.transactions.instance(index).clone();
            for offsets in data.staged_offsets.values_mut() {
                offsets.retain(|tp, _| tp.topic != topic);
            }
            self.write(data)?;
        }
        Ok(holding.len())
    }
}

impl TransactionManager {
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

    /// `commit` or `abort`, one step at a time. A step that fails leaves
    /// the state PREPARE_*, and commit or abort may be called again to
    /// resume it: it writes only the markers that are missing.
    async fn end(
        &self,
        tx: &Transaction,
        control: ControlType,
        cut: Option<CutPoint>,
    ) -> Result<EndOutcome> {
        // 1. PREPARE_* (journal).
        // Under group commit, PREPARE_* is durable before any marker is
        // written, as Kafka's coordinator writes markers only once the
        // PREPARE append completed: the outcome is decided first.
        let (index, partitions) = self.journaled_durable(None, |s, _| {
            s.transactions.prepare(tx.id(), tx.instance(), control)
        })?;
        let generation = self.cluster.generation();
        let crash_after_markers = markers_before(cut, partitions.len());
        if crash_after_markers == Some(0) {
            return self.crash(index);
        }
        // 2. A marker on each touched partition, in order, with acks=all.
        for (i, tp) in partitions.iter().enumerate() {
            if let Err(e) = self.write_marker(index, control, tp, generation).await {
                return Err(self.release(index, generation, e));
            }
            if crash_after_markers == Some(i + 1) {
                return self.crash(index);
            }
        }
        // 3. Staged offsets published (commit) or discarded (abort).
        self.step(generation, |s, _| {
            s.transactions
                .settle_offsets(index, control, &mut s.offsets)
        })
        .map_err(|e| self.release(index, generation, e))?;
        if cut == Some(CutPoint::Offsets) {
            return self.crash(index);
        }
        // 4. COMPLETE_* (journal).
        self.journaled(Some(generation), |s, _| {
            s.transactions.complete(index, control)
        })
        .map_err(|e| self.release(index, generation, e))?;
        Ok(EndOutcome::Completed)
    }
}

impl TransactionCoordinator {
    /// Step 1 of commit and abort: requires ONGOING (or the same PREPARE_*,
    /// to resume a completion that failed on a marker), journals PREPARE_*,
    /// and marks the instance in flight. Returns the partitions to mark,
    /// sorted (the book's `sorted(data.partitions)`).
    pub fn prepare(
        &mut self,
        id: &str,
        handle: InstanceRef,
        control: ControlType,
    ) -> Result<(usize, Vec<TopicPartition>)> {
        let (prepare, _) = states_for(control);
        let operation = verb(control);
        let index = self.require(id, handle, operation, &[TransactionState::Ongoing, prepare])?;
        self.check_startable(id, index)?;
        let mut data = self.transactions.instance(index).clone();
        if data.state == TransactionState::Ongoing {
            data.state = prepare;
            self.bump_at_end(&mut data);
            self.write(data.clone())?;
        }
        self.in_flight.insert(index);
        let partitions = data.first_offsets.into_iter().map(|(tp, _)| tp);
        Ok((index, partitions.collect()))
    }

    /// Step 3: a commit publishes the staged offsets
    /// (`offsets.commit_many`); an abort discards them (the discard is
    /// journaled with COMPLETE_ABORT).
    pub fn settle_offsets(
        &mut self,
        index: usize,
        control: ControlType,
        offsets: &mut OffsetStore,
    ) -> Result<()> {
        self.check_in_flight(index, control)?;
        match control {
            ControlType::Commit => {
                offsets.commit_groups(&self.transactions.instance(index).staged_offsets)
            }
            ControlType::Abort => {
                self.transactions.discard_staged_offsets(index);
                Ok(())
            }
        }
    }

    /// Step 4: COMPLETE_* (journal).
    pub fn complete(&mut self, index: usize, control: ControlType) -> Result<()> {
        self.check_in_flight(index, control)?;
        let mut data = self.transactions.instance(index).clone();
        data.state = states_for(control).1;
        if control == ControlType::Abort {
            data.staged_offsets.clear();
        }
        self.write(data)?;
        self.in_flight.remove(&index);
        Ok(())
    }
}

impl TransactionManager {
    /// `is_committed` (E11): whether a transactional batch on `tp` belongs
    /// to a committed transaction instance.
    pub fn is_committed(&self, tp: &TopicPartition, batch: &RecordBatch) -> bool {
        self.cluster
            .with_state(|s| s.transactions.is_committed(tp, batch))
    }

    /// `last_stable_offset` (E11): the first offset of the earliest
    /// unstable transaction on `tp`, else the HW.
    pub fn last_stable_offset(&self, tp: &TopicPartition) -> Result<i64> {
        self.cluster.last_stable_offset(tp)
    }
}

impl TransactionVisibility for TransactionCoordinator {
    /// E11, per instance: the batch's own instance must be COMPLETE_COMMIT.
    /// Under the kafka rules every instance has its own producer epoch and
    /// its batches carry it: a batch of another epoch is never the
    /// candidate's, even when the candidate has no end marker there (its
    /// completion by a timeout or a fencing begin found the leader stopped).
    fn is_committed(&self, tp: &TopicPartition, batch: &RecordBatch) -> bool {
        batch.transactional_id.as_deref().is_some_and(|id| {
            self.transactions
                .owner(id, tp, batch.base_offset)
                .is_some_and(|d| {
                    d.state == TransactionState::CompleteCommit
                        && d.producer.is_none_or(|producer| {
                            producer == (batch.producer_id, batch.producer_epoch)
                        })
                })
        })
    }

    /// E11: the smallest first offset among ONGOING/PREPARE_* transactions on
    /// `tp`, else the HW; never above the HW. Writes appended but not yet
    /// acknowledged count too, so a later record is never read past a write
    /// that may still commit.
    fn last_stable_offset(&self, tp: &TopicPartition, high_watermark: i64) -> i64 {
        let journaled = self
            .transactions
            .current()
            .filter(|d| d.state.is_unstable())
            .filter_map(|d| d.first_offset(tp));
        journaled
            .chain(self.pending_on(tp))
            .chain(self.hanging_on(tp))
            .min()
            .map_or(high_watermark, |first| first.min(high_watermark))
    }
}

impl TransactionCoordinator {
    /// The book's `_require_ongoing`, for `operation`.
    fn require_ongoing(&self, data: &TransactionData, operation: &'static str) -> Result<()> {
        if data.state != TransactionState::Ongoing {
            return Err(MiniKafkaError::InvalidTransactionState {
                id: data.id.clone(),
                operation,
                state: data.state.name().to_string(),
                expected: "ongoing",
            });
        }
        Ok(())
    }

    /// The instance a handle addresses: under the book's rules the id's
    /// latest instance, whichever it is; under the kafka rules a handle of
    /// an older epoch is fenced.
    pub fn resolve(&self, id: &str, handle: InstanceRef) -> Result<usize> {
        let unknown = || MiniKafkaError::UnknownTransaction(id.to_string());
        let latest = self.transactions.latest(id).ok_or_else(unknown)?;
        let current = self.transactions.instance(latest).producer;
        let current = current.map_or(-1, |(_, e)| e);
        match handle
            .epoch
            .filter(|&e| self.rules.fence_zombies && e < current)
        {
            Some(epoch) => Err(MiniKafkaError::TransactionFenced {
                id: id.to_string(),
                epoch,
                current,
            }),
            None => Ok(latest),
        }
    }

    /// The book's `_finish_recovery` (E12): every PREPARE_COMMIT publishes
    /// its staged offsets and becomes COMPLETE_COMMIT; every PREPARE_ABORT
    /// becomes COMPLETE_ABORT. Missing markers are re-sent only under the
    /// kafka rules. ONGOING ones are reported as left open.
    pub fn recover(
        &mut self,
        partitions: &mut BTreeMap<TopicPartition, PartitionReplicaSet>,
        offsets: &mut OffsetStore,
        now_ms: u64,
        report: &mut RecoveryReport,
    ) -> Result<()> {
        for index in self.transactions.current_indices() {
            let data = self.transactions.instance(index);
            let control = match data.state {
                TransactionState::PrepareCommit => ControlType::Commit,
                TransactionState::PrepareAbort => ControlType::Abort,
                TransactionState::Ongoing => {
                    report.left_open.push(data.id.clone());
                    continue;
                }
                _ => continue,
            };
            let from = data.state;
            let resend = self.rules.resend_markers_on_recovery; // Kafka rules
            let resent = self.complete_now(index, control, resend, partitions, offsets, now_ms)?;
            report.markers_resent.extend(resent);
            let data = self.transactions.instance(index);
            report.completed.push(CompletedTransaction {
                id: data.id.clone(),
                from,
                to: data.state,
            });
        }
        Ok(())
    }

    /// Drives an instance to COMPLETE_* at once: PREPARE_* (if not yet), the
    /// missing markers when `write_markers` (Kafka rules; appended on the
    /// leader, not waited for), offsets published or discarded, COMPLETE_*.
    /// Used by recovery, and under the kafka rules by the timeout and zombie
    /// fencing.
    fn complete_now(
        &mut self,
        index: usize,
        control: ControlType,
        write_markers: bool,
        partitions: &mut BTreeMap<TopicPartition, PartitionReplicaSet>,
        offsets: &mut OffsetStore,
        now_ms: u64,
    ) -> Result<Vec<ResentMarker>> {
        let (prepare, complete) = states_for(control);
        let mut data = self.transactions.instance(index).clone();
        if data.state == TransactionState::Ongoing {
            data.state = prepare;
            self.bump_at_end(&mut data);
            self.write(data.clone())?;
        }
        let mut written = Vec::new();
        for tp in data.partitions.iter().filter(|_| write_markers) {
            let Some(set) = partitions.get_mut(tp) else {
                continue;
            };
            let known = self.transactions.marker(index, tp, control).is_some();
            if known || set.leader().stopped {
                continue;
            }
            let offset = set.leader().leo();
            let mut ack = set.append(marker_of(&data, control), AckMode::Leader, now_ms, None)?;
            if let Some(Ok(_)) = ack.try_take() {
                self.transactions.record_marker(index, tp, offset, control);
                self.close_hanging(&data.id, tp, offset);
                let (id, tp) = (data.id.clone(), tp.clone());
                written.push(ResentMarker {
                    id,
                    tp,
                    control,
                    offset,
                });
            }
        }
        if control == ControlType::Commit {
            offsets.commit_groups(&data.staged_offsets)?;
        } else {
            data.staged_offsets.clear();
        }
        data.state = complete;
        self.write(data)?;
        // An in-flight commit or abort of this instance finds it finished
        // and stops; its unacknowledged sends are dropped.
        self.in_flight.remove(&index);
        self.pending_sends.retain(|(i, _), _| *i != index);
        Ok(written)
    }

    /// Transaction version 2 (KIP-890): an end bumps the producer epoch; the
    /// markers carry the new one and the next transaction goes on with it.
    fn bump_at_end(&self, data: &mut TransactionData) {
        if self.rules.transaction_version.bumps_epoch_at_end()
            && data.next_producer_epoch.is_none()
            && let Some((_, epoch)) = data.producer
        {
            data.next_producer_epoch = Some(epoch + 1);
        }
    }

    /// Version 2: the epoch `id`'s next transaction goes on with, when its
    /// latest one ended with a bump (none: a new init, as under version 1).
    pub fn continued_epoch(&self, id: &str) -> Option<i32> {
        let latest = self.transactions.get(id)?;
        latest
            .state
            .is_complete()
            .then_some(latest.next_producer_epoch)
            .flatten()
    }

    /// Kafka rules: aborts every ONGOING transaction older than the timeout,
    /// and every hanging late write. Returns the ids aborted.
    pub fn expire(
        &mut self,
        partitions: &mut BTreeMap<TopicPartition, PartitionReplicaSet>,
        offsets: &mut OffsetStore,
        now_ms: u64,
    ) -> Result<Vec<String>> {
        if !self.rules.transaction_timeout {
            return Ok(Vec::new());
        }
        let expired: Vec<usize> = (self.transactions.current.values().copied())
            .filter(|&i| {
                let d = self.transactions.instance(i);
                d.state == TransactionState::Ongoing
                    && !self.in_flight.contains(&i)
                    && d.started_ms
                        .is_some_and(|s| now_ms.saturating_sub(s) >= self.timeout_ms)
            })
            .collect();
        let mut ids = Vec::new();
        for index in expired {
            self.complete_now(index, ControlType::Abort, true, partitions, offsets, now_ms)?;
            ids.push(self.transactions.instance(index).id.clone());
        }
        ids.extend(self.expire_hanging(partitions, now_ms)?);
        Ok(ids)
    }
}

/// The book's `RecordBatch.control_marker(...)` of a transaction; under the
/// kafka rules it carries the instance's producer id and epoch (version 2:
/// the epoch its end bumped to).
pub(crate) fn marker_of(data: &TransactionData, control: ControlType) -> RecordBatch {
    let mut marker = RecordBatch::control_marker(control, data.id.clone());
    if let (Some((pid, _)), Some(epoch)) = (data.producer, data.marker_epoch()) {
        (marker.producer_id, marker.producer_epoch) = (pid, epoch);
    }
    marker
}
