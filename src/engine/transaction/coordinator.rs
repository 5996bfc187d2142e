//! `TransactionCoordinator` (E10-E12): the journaled state of every
//! transaction, the LSO, `is_committed`, and recovery's completion of
//! PREPARE_* states. It lives inside the cluster's state; the async
//! [`super::TransactionManager`] drives it step by step.
//!
//! The coordinator keeps every transaction *instance* it has seen, not only the
//! last state per id: a batch's visibility is decided by the instance that
//! wrote it (the one whose first offset on the partition is the last at or
//! below the batch). The book looks the id up instead, so reusing an id after
//! an abort makes the aborted data visible; that flaw is fixed under both
//! rules (E14).
//!
//! The async steps of `commit` and `abort` live in [`super::manager`]; the
//! coordinator offers the synchronous pieces they are made of, and the
//! synchronous completion used by recovery, timeouts and zombie fencing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::engine::config::RuleSwitches;
use crate::engine::consumer::OffsetStore;
use crate::engine::consumer::offsets::GroupOffsets;
use crate::engine::core::batch::{ControlType, RecordBatch};
use crate::engine::core::metadata::TopicPartition;
use crate::engine::core::recovery::{CompletedTransaction, RecoveryReport, ResentMarker};
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::log::PartitionLog;
use crate::engine::replication::model::TransactionVisibility;
use crate::engine::replication::{AckMode, PartitionReplicaSet};
use crate::engine::shared_vec::SharedVec;
use crate::engine::transaction::journal::{
    JournalCarry, JournalFrame, JournalMemo, TransactionJournal,
};
use crate::engine::transaction::model::{TransactionData, TransactionState};

/// Which instance of a transaction id an operation addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstanceRef {
    /// Index of the instance, in begin order.
    pub index: usize,
    /// Kafka rules: the producer epoch the handle holds (for fencing).
    pub epoch: Option<i32>,
}

/// For each transaction id and partition: (first offset, instance) in
/// offset order. Each list is shared in chunks with the checkpoints' memos
/// (issue 17 item 11): a list grows with the instances of its id.
type Owners = BTreeMap<String, BTreeMap<TopicPartition, SharedVec<(i64, usize)>>>;

/// For each partition, the markers of each instance there, in offset order,
/// by instance index (sorted, one entry per instance): a map kept as a
/// sorted [`SharedVec`] so that a checkpoint's memo and a restore share it
/// (issue 17 item 11), and a lookup is a binary search.
type Markers = BTreeMap<TopicPartition, SharedVec<(usize, Vec<(i64, ControlType)>)>>;

/// The markers of instance `index` in one partition's list.
fn markers_in(
    on_tp: &SharedVec<(usize, Vec<(i64, ControlType)>)>,
    index: usize,
) -> Option<&Vec<(i64, ControlType)>> {
    let at = on_tp.partition_point(|&(i, _)| i < index);
    on_tp.get(at).filter(|(i, _)| *i == index).map(|(_, m)| m)
}

/// A quiet coordinator's state without its file, kept with a time-travel
/// checkpoint (see [`TransactionCoordinator::open_from_memo`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoordinatorMemo {
    journal: JournalMemo,
    instances: SharedVec<TransactionData>,
    current: BTreeMap<String, usize>,
    owners: Owners,
    /// The markers as the coordinator knew them: a restore keeps them
    /// instead of finding them again in every leader's batch summaries
    /// ([`TransactionCoordinator::attach_markers`], O(batches)).
    markers: Markers,
}

/// A crash's recovery point for the coordinator (issue 17 item 12): the
/// state its journal's frames replay to, moved out of the coordinator that
/// crashed, with the journal's [`JournalCarry`]. A reopen that trusts the
/// journal's carry replays only the frames after it onto this state
/// (docs/engine-decisions.md, "A crash's recovery reads what changed since
/// the last one").
#[derive(Debug)]
pub struct CoordinatorCarry {
    journal: JournalCarry,
    instances: SharedVec<TransactionData>,
    current: BTreeMap<String, usize>,
    owners: Owners,
    /// Instances the carry holds as journaled, with the state the crashed
    /// coordinator held in memory (see [`TransactionCoordinator::take_carry`]).
    unjournaled: Vec<(usize, TransactionData)>,
}

/// The transaction state machine and its journal.
#[derive(Debug)]
pub struct TransactionCoordinator {
    journal: TransactionJournal,
    /// Every instance seen, in begin order; a checkpoint's memo shares its
    /// chunks (`shared_vec`).
    instances: SharedVec<TransactionData>,
    /// The latest instance of each id.
    current: BTreeMap<String, usize>,
    /// For each id and partition: (first offset, instance) in offset order.
    /// By id first, so a lookup borrows the id instead of building a key.
    owners: Owners,
    /// Instances whose commit or abort is running now (in memory only).
    in_flight: BTreeSet<usize>,
    /// Transactional writes appended but not yet acknowledged, by instance
    /// and partition (in memory only): they hold the LSO back already.
    pending_sends: BTreeMap<(usize, TopicPartition), Vec<i64>>,
    /// The markers in the log of each instance on each partition, in offset
    /// order; the first one ends the instance's range there. Rebuilt from the
    /// leaders' logs on open, and from the new leader's log on a promotion.
    /// Kept by partition, then instance: an open rebuilds one partition's
    /// at a time, and a lookup needs no key built (issue 17 item 12).
    markers: Markers,
    rules: RuleSwitches,
    timeout_ms: u64,
    /// Journal frames the open parsed and replayed: all of them, or after a
    /// crash only those after its recovery point (issue 17 item 12).
    replayed_on_open: usize,
}

impl CoordinatorCarry {
    /// Lends the journal's part to [`TransactionJournal::reopen`] (an empty
    /// one is left until it is put back).
    fn take_journal(&mut self) -> JournalCarry {
        std::mem::replace(&mut self.journal, JournalCarry::empty())
    }
}

impl TransactionCoordinator {
    /// Opens the journal in `data_dir` and replays it. Returns the coordinator
    /// and the journal's repair; call [`Self::recover`] next.
    pub fn open(
        data_dir: &Path,
        rules: RuleSwitches,
        timeout_ms: u64,
        report: &mut RecoveryReport,
    ) -> Result<Self> {
        Self::reopen(data_dir, rules, timeout_ms, report, &mut None)
    }

    /// [`Self::open`] after a crash, from the state `carry` holds when the
    /// journal still begins with the frames it was replayed from (then
    /// `carry` is taken and only the frames after them are replayed onto
    /// it); otherwise `carry` stays and the whole journal is replayed. Both
    /// give the coordinator a full replay gives: replay is a fold of
    /// [`Self::apply`] over the frames in order, and the carry is that fold
    /// over its prefix.
    pub fn reopen(
        data_dir: &Path,
        rules: RuleSwitches,
        timeout_ms: u64,
        report: &mut RecoveryReport,
        carry: &mut Option<CoordinatorCarry>,
    ) -> Result<Self> {
        let mut journal_carry = carry.as_mut().map(|c| c.take_journal());
        let opened = TransactionJournal::reopen(data_dir, &mut journal_carry);
        let used = carry.is_some() && journal_carry.is_none();
        if let (Some(c), Some(j)) = (carry.as_mut(), journal_carry) {
            c.journal = j;
        }
        let (journal, records, recovery) = opened?;
        report.journal_truncated_bytes = recovery.truncated_bytes;
        report.journal_reason = recovery.reason;
        let mut manager = Self {
            journal,
            instances: SharedVec::new(),
            current: BTreeMap::new(),
            owners: BTreeMap::new(),
            in_flight: BTreeSet::new(),
            pending_sends: BTreeMap::new(),
            markers: BTreeMap::new(),
            rules,
            timeout_ms,
            replayed_on_open: records.len(),
        };
        if let Some(c) = carry.take_if(|_| used) {
            manager.instances = c.instances;
            manager.current = c.current;
            manager.owners = c.owners;
        }
        for record in records {
            manager.apply(record);
        }
        Ok(manager)
    }

    /// Moves out the state a crash's reopen may start from (see
    /// [`CoordinatorCarry`]), leaving this coordinator without instances
    /// until [`Self::restore_carry`] gives them back. `None` (and nothing
    /// moved) when an instance's journaled state cannot be read back.
    ///
    /// Only an instance in flight can differ from its last frame (an abort
    /// discards its staged offsets in memory before COMPLETE_ABORT is
    /// journaled): those are read back from the journal, so the carry is
    /// exactly what replaying the journal gives.
    pub fn take_carry(&mut self) -> Option<CoordinatorCarry> {
        let mut journaled = Vec::new();
        for &index in &self.in_flight {
            let id = &self.instances[index].id;
            let frame = self.journal.frames().iter().rev().find(|f| &f.id == id)?;
            let data = self.journal.read_frame(frame).ok()?;
            journaled.push((index, data));
        }
        let mut instances = std::mem::take(&mut self.instances);
        let unjournaled = journaled
            .into_iter()
            .map(|(index, data)| (index, std::mem::replace(&mut instances[index], data)))
            .collect();
        Some(CoordinatorCarry {
            journal: self.journal.take_carry(),
            instances,
            current: std::mem::take(&mut self.current),
            owners: std::mem::take(&mut self.owners),
            unjournaled,
        })
    }

    /// Gives back what [`Self::take_carry`] took (a reopen that failed, so
    /// this coordinator's state stays the one shown).
    pub fn restore_carry(&mut self, carry: CoordinatorCarry) {
        let CoordinatorCarry {
            journal,
            mut instances,
            current,
            owners,
            unjournaled,
        } = carry;
        for (index, data) in unjournaled {
            instances[index] = data;
        }
        self.journal.restore_carry(journal);
        self.instances = instances;
        self.current = current;
        self.owners = owners;
    }

    /// The state a reopen that used the carry leaves (it replayed frames
    /// onto it), as a carry again: given back to the crashed coordinator
    /// when the reopen fails later.
    pub fn carry_back(&mut self) -> Option<CoordinatorCarry> {
        self.in_flight.clear();
        self.take_carry()
    }

    /// The state a checkpoint keeps (the caller checked [`Self::is_quiet`]:
    /// nothing in flight, nothing pending), markers included: a restore
    /// from it needs no [`Self::attach_markers`]. Its lists share their
    /// chunks with this coordinator's.
    pub fn memo(&self) -> CoordinatorMemo {
        CoordinatorMemo {
            journal: self.journal.memo(),
            instances: self.instances.clone(),
            current: self.current.clone(),
            owners: self.owners.clone(),
            markers: self.markers.clone(),
        }
    }

    /// The coordinator of a checkpoint's copy, from the memo taken with it:
    /// what [`Self::open`] would rebuild by reading the journal, without
    /// reading it, so a step back costs the checkpoint interval and not the
    /// journal's length (issue 7, P5). `None` when the journal file is not
    /// the one the memo describes.
    pub fn open_from_memo(
        data_dir: &Path,
        rules: RuleSwitches,
        timeout_ms: u64,
        memo: &CoordinatorMemo,
    ) -> Result<Option<Self>> {
        let Some(journal) = TransactionJournal::open_trusted(data_dir, &memo.journal)? else {
            return Ok(None);
        };
        Ok(Some(Self {
            journal,
            instances: memo.instances.clone(),
            current: memo.current.clone(),
            owners: memo.owners.clone(),
            in_flight: BTreeSet::new(),
            pending_sends: BTreeMap::new(),
            markers: memo.markers.clone(),
            rules,
            timeout_ms,
            replayed_on_open: 0,
        }))
    }

    /// Applies one journal record: an ONGOING record for an id whose latest
    /// instance is complete (or unknown) starts a new instance; any other
    /// record replaces the latest instance's state.
    ///
    /// Each step costs O(log n) in the instances of the id: a replay is a
    /// fold of it over the frames, so a quadratic step made every replay
    /// (a crash's) quadratic in the journal (issue 17 item 12).
    fn apply(&mut self, record: TransactionData) -> usize {
        let (index, before) = match self.current.get(&record.id) {
            Some(&i)
                if !(self.instances[i].state.is_complete()
                    && record.state == TransactionState::Ongoing) =>
            {
                (i, Some(std::mem::replace(&mut self.instances[i], record)))
            }
            _ => {
                self.instances.push(record);
                (self.instances.len() - 1, None)
            }
        };
        let data = &self.instances[index];
        if self.current.get(&data.id) != Some(&index) {
            self.current.insert(data.id.clone(), index);
        }
        for (tp, first) in &data.first_offsets {
            let owners = self
                .owners
                .entry(data.id.clone())
                .or_default()
                .entry(tp.clone())
                .or_default();
            // The first offset can move down (acks completing out of order):
            // the instance's entry is where its previous state put it.
            let was = before.as_ref().and_then(|b| b.first_offset(tp));
            if was == Some(*first) && stays(owners, index, *first) {
                continue; // removing and inserting it would put it back there
            }
            remove_owner(owners, index, was);
            let at = owners.partition_point(|&(o, _)| o <= *first);
            owners.insert(at, (*first, index));
        }
        index
    }

    /// Journals `data` as the new state of its instance (E9).
    fn write(&mut self, data: TransactionData) -> Result<usize> {
        self.journal.append(&data)?;
        Ok(self.apply(data))
    }

    /// Finds each instance's markers in the leaders' logs (after open).
    pub fn attach_markers(&mut self, partitions: &BTreeMap<TopicPartition, PartitionReplicaSet>) {
        for (tp, set) in partitions {
            self.learn_markers(tp, &set.leader_replica().log);
        }
    }

    /// Makes the markers known on `tp` exactly those `leader`'s log holds,
    /// each given to its id's candidate at its offset (the instance whose
    /// first offset there is the last at or below it: engine-decisions.md,
    /// "Visibility is per transaction instance"); the first one ends the
    /// candidate's range ([`Self::owner`]).
    ///
    /// A marker after the candidate's first one is the candidate's too,
    /// not no one's: an instance whose range a marker ended can still write
    /// one (a journal tear cut its PREPARE_ABORT after the ABORT marker was
    /// written; it is ONGOING again and commits), and that marker must be
    /// found again, or a resumed commit writes it twice.
    ///
    /// Reads only the log's in-memory batch summaries, no disk.
    ///
    /// Each id's owners are looked up once per call, not once per marker:
    /// every open (a crash's too) runs this over every marker in the log.
    fn learn_markers(&mut self, tp: &TopicPartition, leader: &PartitionLog) {
        self.markers.remove(tp);
        // Summaries are in offset order, so each list is built sorted and
        // without repeats, as `record_marker` keeps it.
        let mut on_tp: BTreeMap<usize, Vec<(i64, ControlType)>> = BTreeMap::new();
        let mut owners_of: BTreeMap<&str, Option<&SharedVec<(i64, usize)>>> = BTreeMap::new();
        for b in leader.batch_summaries() {
            let (Some(control), Some(id)) = (b.control, b.transactional_id.as_deref()) else {
                continue;
            };
            let owners = *owners_of
                .entry(id)
                .or_insert_with(|| self.owners.get(id).and_then(|on| on.get(tp)));
            if let Some(index) = owners.and_then(|o| candidate_in(o, b.base_offset)) {
                on_tp
                    .entry(index)
                    .or_default()
                    .push((b.base_offset, control));
            }
        }
        if !on_tp.is_empty() {
            self.markers.insert(tp.clone(), on_tp.into_iter().collect());
        }
    }

    /// Notes a marker of instance `index` on `tp` at `offset`.
    pub fn record_marker(
        &mut self,
        index: usize,
        tp: &TopicPartition,
        offset: i64,
        control: ControlType,
    ) {
        let on_tp = match self.markers.get_mut(tp) {
            Some(on_tp) => on_tp,
            None => self.markers.entry(tp.clone()).or_default(),
        };
        let entry = on_tp.partition_point(|&(i, _)| i < index);
        if on_tp.get(entry).is_none_or(|(i, _)| *i != index) {
            on_tp.insert(entry, (index, Vec::new()));
        }
        let (_, list) = on_tp.get_mut(entry).expect("just ensured");
        let at = list.partition_point(|&(o, _)| o < offset);
        if list.get(at).is_none_or(|&(o, _)| o != offset) {
            list.insert(at, (offset, control));
        }
    }

    /// After a promotion (E6): the markers known on `tp` become those the
    /// new leader's log holds (engine-decisions.md: "missing" means missing
    /// from the current leader's log). Markers it lacks are forgotten (they
    /// had not reached it), so a resumed commit or abort writes them again
    /// instead of waiting at an offset the new leader never had; markers it
    /// holds are known again, also those an earlier promotion forgot (a
    /// leader that lacked them, then one that still held them), so a
    /// resumed commit or abort waits for them instead of writing a second
    /// one. The same scan as on open ([`Self::attach_markers`]).
    pub fn markers_after_promotion(&mut self, tp: &TopicPartition, leader: &PartitionLog) {
        self.learn_markers(tp, leader);
    }

    /// The offset of instance `index`'s marker of type `control` on `tp`.
    pub fn marker(&self, index: usize, tp: &TopicPartition, control: ControlType) -> Option<i64> {
        markers_in(self.markers.get(tp)?, index)?
            .iter()
            .find(|&&(_, c)| c == control)
            .map(|&(o, _)| o)
    }

    /// E12: completes every PREPARE_* transaction found in the journal:
    /// PREPARE_COMMIT publishes its staged offsets and becomes
    /// COMPLETE_COMMIT; PREPARE_ABORT becomes COMPLETE_ABORT. Missing markers
    /// are re-sent only under the kafka rules. ONGOING ones are reported as
    /// left open.
    pub fn recover(
        &mut self,
        partitions: &mut BTreeMap<TopicPartition, PartitionReplicaSet>,
        offsets: &mut OffsetStore,
        now_ms: u64,
        report: &mut RecoveryReport,
    ) -> Result<()> {
        let current: Vec<usize> = self.current.values().copied().collect();
        for index in current {
            let data = &self.instances[index];
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
            let resend = self.rules.resend_markers_on_recovery;
            let resent = self.complete_now(index, control, resend, partitions, offsets, now_ms)?;
            report.markers_resent.extend(resent);
            report.completed.push(CompletedTransaction {
                id: self.instances[index].id.clone(),
                from,
                to: self.instances[index].state,
            });
        }
        Ok(())
    }

    /// Drives an instance to COMPLETE_* at once: PREPARE_* (if not yet), the
    /// missing markers when `write_markers` (appended on the leader, not
    /// waited for), offsets published or discarded, COMPLETE_*. Used by
    /// recovery, the kafka timeout and zombie fencing.
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
        let mut data = self.instances[index].clone();
        if data.state == TransactionState::Ongoing {
            data.state = prepare;
            self.write(data.clone())?;
        }
        let mut written = Vec::new();
        if write_markers {
            for tp in data.partitions.clone() {
                let Some(set) = partitions.get_mut(&tp) else {
                    continue;
                };
                if self.marker(index, &tp, control).is_some() || set.leader_replica().stopped {
                    continue;
                }
                let mut marker = RecordBatch::control_marker(control, data.id.clone());
                if let Some((pid, epoch)) = data.producer {
                    (marker.producer_id, marker.producer_epoch) = (pid, epoch);
                }
                let offset = set.leader_replica().log_end_offset();
                let mut ack = set.append(marker, AckMode::Leader, now_ms, None)?;
                if let Some(Ok(_)) = ack.try_take() {
                    self.record_marker(index, &tp, offset, control);
                    written.push(ResentMarker {
                        id: data.id.clone(),
                        tp: tp.clone(),
                        control,
                        offset,
                    });
                }
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

    /// Kafka rules: aborts every ONGOING transaction older than the timeout.
    /// Returns the ids aborted.
    pub fn expire(
        &mut self,
        partitions: &mut BTreeMap<TopicPartition, PartitionReplicaSet>,
        offsets: &mut OffsetStore,
        now_ms: u64,
    ) -> Result<Vec<String>> {
        if !self.rules.transaction_timeout {
            return Ok(Vec::new());
        }
        let expired: Vec<usize> = self
            .current
            .values()
            .copied()
            .filter(|&i| {
                let d = &self.instances[i];
                d.state == TransactionState::Ongoing
                    && !self.in_flight.contains(&i)
                    && d.started_ms
                        .is_some_and(|s| now_ms.saturating_sub(s) >= self.timeout_ms)
            })
            .collect();
        let mut ids = Vec::new();
        for index in expired {
            self.complete_now(index, ControlType::Abort, true, partitions, offsets, now_ms)?;
            ids.push(self.instances[index].id.clone());
        }
        Ok(ids)
    }

    /// `begin` (E10): a new ONGOING instance, journaled. An active id is
    /// refused under the book's rules; under the kafka rules it is fenced: the
    /// old instance is completed (a PREPARE_COMMIT one commits, anything else
    /// aborts, markers written) and the new one gets the next epoch.
    pub fn begin(
        &mut self,
        id: &str,
        producer: Option<(i64, i32)>,
        partitions: &mut BTreeMap<TopicPartition, PartitionReplicaSet>,
        offsets: &mut OffsetStore,
        now_ms: u64,
    ) -> Result<InstanceRef> {
        if let Some(&old) = self.current.get(id) {
            let state = self.instances[old].state;
            if state.is_unstable() {
                if !self.rules.fence_zombies {
                    return Err(MiniKafkaError::TransactionAlreadyActive {
                        id: id.to_string(),
                        state: state.name().to_string(),
                    });
                }
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
            data.started_ms = Some(now_ms);
        }
        let index = self.write(data)?;
        Ok(InstanceRef {
            index,
            epoch: producer.map(|(_, e)| e),
        })
    }

    /// The instance a handle addresses, checked: under the kafka rules a
    /// handle of an older epoch is fenced; under the book's rules a handle
    /// acts on the id's latest instance, whichever it is (no fencing).
    pub fn resolve(&self, id: &str, handle: InstanceRef) -> Result<usize> {
        let &latest = self
            .current
            .get(id)
            .ok_or_else(|| MiniKafkaError::UnknownTransaction(id.to_string()))?;
        if self.rules.fence_zombies {
            let current = self.instances[latest].producer.map_or(-1, |(_, e)| e);
            if let Some(epoch) = handle.epoch.filter(|&e| e < current) {
                return Err(MiniKafkaError::TransactionFenced {
                    id: id.to_string(),
                    epoch,
                    current,
                });
            }
        }
        Ok(latest)
    }

    /// The instance for `operation`, which must be in one of `allowed`.
    pub fn require(
        &self,
        id: &str,
        handle: InstanceRef,
        operation: &'static str,
        allowed: &[TransactionState],
    ) -> Result<usize> {
        let index = self.resolve(id, handle)?;
        let state = self.instances[index].state;
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

    /// Forgets a pending write whose acks failed.
    pub fn abandon_send(&mut self, index: usize, tp: &TopicPartition, offset: i64) {
        let key = (index, tp.clone());
        if let Some(list) = self.pending_sends.get_mut(&key) {
            list.retain(|&o| o != offset);
            if list.is_empty() {
                self.pending_sends.remove(&key);
            }
        }
    }

    /// Records an acknowledged transactional write (E10 `send`): the
    /// partition and its first offset, journaled after every send as in the
    /// book.
    pub fn record_send(&mut self, index: usize, tp: &TopicPartition, offset: i64) -> Result<()> {
        self.abandon_send(index, tp, offset);
        let mut data = self.instances[index].clone();
        if data.state != TransactionState::Ongoing {
            return Err(MiniKafkaError::InvalidTransactionState {
                id: data.id,
                operation: "send",
                state: data.state.name().to_string(),
                expected: "ongoing",
            });
        }
        data.record_write(tp, offset);
        self.write(data)?;
        Ok(())
    }

    /// `send_offsets` (E10): stages offsets, journaled; nothing is published.
    pub fn stage_offsets(
        &mut self,
        index: usize,
        group: &str,
        offsets: &GroupOffsets,
    ) -> Result<()> {
        let mut data = self.instances[index].clone();
        data.staged_offsets
            .entry(group.to_string())
            .or_default()
            .extend(offsets.iter().map(|(tp, o)| (tp.clone(), *o)));
        self.write(data)?;
        Ok(())
    }

    /// Step 1-2 of commit/abort: require ONGOING (or the same PREPARE_*, to
    /// resume a completion that failed on a marker), journal PREPARE_*, and
    /// mark the instance in flight. Returns the partitions to mark.
    pub fn prepare(
        &mut self,
        id: &str,
        handle: InstanceRef,
        control: ControlType,
    ) -> Result<(usize, Vec<(TopicPartition, i64)>)> {
        let (prepare, _) = states_for(control);
        let operation = match control {
            ControlType::Commit => "commit",
            ControlType::Abort => "abort",
        };
        let index = self.require(id, handle, operation, &[TransactionState::Ongoing, prepare])?;
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
        let mut data = self.instances[index].clone();
        if data.state == TransactionState::Ongoing {
            data.state = prepare;
            self.write(data.clone())?;
        }
        self.in_flight.insert(index);
        Ok((index, data.first_offsets))
    }

    /// Ends an in-flight completion that failed (a marker was refused): the
    /// state stays PREPARE_*, and commit/abort may be called again.
    pub fn release(&mut self, index: usize) {
        self.in_flight.remove(&index);
    }

    /// Checks that the commit or abort of instance `index` is still the one
    /// running: zombie fencing or a timeout may have completed it meanwhile.
    pub fn check_in_flight(&self, index: usize, control: ControlType) -> Result<()> {
        let data = &self.instances[index];
        let running = self.in_flight.contains(&index)
            && self.current.get(&data.id) == Some(&index)
            && data.state == states_for(control).0;
        if running {
            Ok(())
        } else {
            Err(MiniKafkaError::TransactionInterrupted {
                id: data.id.clone(),
                operation: match control {
                    ControlType::Commit => "commit",
                    ControlType::Abort => "abort",
                },
            })
        }
    }

    /// Step 3 of commit: publish staged offsets; of abort: discard them (the
    /// discard is journaled with COMPLETE_ABORT).
    pub fn settle_offsets(
        &mut self,
        index: usize,
        control: ControlType,
        offsets: &mut OffsetStore,
    ) -> Result<()> {
        self.check_in_flight(index, control)?;
        match control {
            ControlType::Commit => offsets.commit_groups(&self.instances[index].staged_offsets),
            ControlType::Abort => {
                self.instances[index].staged_offsets.clear();
                Ok(())
            }
        }
    }

    /// Step 4: journal COMPLETE_*.
    pub fn complete(&mut self, index: usize, control: ControlType) -> Result<()> {
        self.check_in_flight(index, control)?;
        let mut data = self.instances[index].clone();
        data.state = states_for(control).1;
        if control == ControlType::Abort {
            data.staged_offsets.clear();
        }
        self.write(data)?;
        self.in_flight.remove(&index);
        Ok(())
    }

    /// Where the latest instance of `id` has writes waiting for their acks.
    pub fn pending_sends_of(&self, id: &str) -> Vec<(TopicPartition, i64)> {
        let Some(&index) = self.current.get(id) else {
            return Vec::new();
        };
        self.pending_sends
            .iter()
            .filter(|((i, _), _)| *i == index)
            .flat_map(|((_, tp), offsets)| offsets.iter().map(move |o| (tp.clone(), *o)))
            .collect()
    }

    /// Where the latest instance of `id` has written markers.
    pub fn markers_of(&self, id: &str) -> Vec<(TopicPartition, i64)> {
        let Some(&index) = self.current.get(id) else {
            return Vec::new();
        };
        self.markers
            .iter()
            .filter_map(|(tp, on_tp)| Some((tp, markers_in(on_tp, index)?)))
            .flat_map(|(tp, list)| list.iter().map(move |(o, _)| (tp.clone(), *o)))
            .collect()
    }

    /// True when no commit, abort or send is in flight.
    pub fn is_quiet(&self) -> bool {
        self.in_flight.is_empty() && self.pending_sends.is_empty()
    }

    /// The current state of `id` (its latest instance).
    pub fn get(&self, id: &str) -> Option<&TransactionData> {
        self.current.get(id).map(|&i| &self.instances[i])
    }

    /// An instance by index.
    pub fn instance(&self, index: usize) -> &TransactionData {
        &self.instances[index]
    }

    /// The latest instance of every id, by id.
    pub fn current(&self) -> impl Iterator<Item = &TransactionData> {
        self.current.values().map(|&i| &self.instances[i])
    }

    /// Every instance ever seen, in begin order.
    pub fn instances(&self) -> &SharedVec<TransactionData> {
        &self.instances
    }

    /// The journal's frames, oldest first.
    pub fn journal_frames(&self) -> &SharedVec<JournalFrame> {
        self.journal.frames()
    }

    /// The transaction state journal frame `frame` holds (read-only).
    pub fn read_journal_frame(&self, frame: &JournalFrame) -> Result<TransactionData> {
        self.journal.read_frame(frame)
    }

    /// The journal's size in bytes.
    pub fn journal_size(&self) -> u64 {
        self.journal.size()
    }

    /// How many journal frames the open that made this coordinator parsed
    /// and replayed: every frame on a first open, only those written since
    /// the last recovery on a crash's reopen (issue 17 item 12).
    pub fn replayed_on_open(&self) -> usize {
        self.replayed_on_open
    }

    /// Whether journal frames are fsynced (`MiniKafkaConfig::sync_writes`).
    pub fn set_sync(&mut self, sync: bool) {
        self.journal.set_sync(sync);
    }

    /// Gives the journal file its own inode if a time-travel checkpoint
    /// links it (see `TransactionJournal::unshare`).
    pub fn unshare_journal(&mut self) -> Result<()> {
        self.journal.unshare()
    }

    /// The journal file's path (the torn-tail target).
    pub fn journal_path(&self) -> &Path {
        self.journal.path()
    }

    /// The rule switches in force.
    pub fn rules(&self) -> RuleSwitches {
        self.rules
    }

    /// The last instance of `id` whose first offset on `tp` is at or below
    /// `offset`.
    fn candidate(&self, id: &str, tp: &TopicPartition, offset: i64) -> Option<usize> {
        candidate_in(self.owners.get(id)?.get(tp)?, offset)
    }

    /// The instance that wrote a transactional batch at `offset` on `tp`: the
    /// candidate by first offset, unless the candidate's first marker there
    /// comes before the batch (then the batch belongs to an instance whose
    /// write was never journaled, and to none we know).
    pub fn owner(&self, id: &str, tp: &TopicPartition, offset: i64) -> Option<&TransactionData> {
        let index = self.candidate(id, tp, offset)?;
        let ended_before = self
            .markers
            .get(tp)
            .and_then(|on_tp| markers_in(on_tp, index))
            .and_then(|m| m.first())
            .is_some_and(|&(marker, _)| marker < offset);
        (!ended_before).then(|| &self.instances[index])
    }
}

impl TransactionVisibility for TransactionCoordinator {
    /// E11: the smallest first offset among ONGOING/PREPARE_* transactions on
    /// `tp`, else the HW; never above the HW.
    /// Writes appended but not yet acknowledged count too, so a later record
    /// is never read past a write that may still commit.
    fn last_stable_offset(&self, tp: &TopicPartition, high_watermark: i64) -> i64 {
        let journaled = self
            .current()
            .filter(|d| d.state.is_unstable())
            .filter_map(|d| d.first_offset(tp));
        let pending = self
            .pending_sends
            .iter()
            .filter(|((i, p), _)| p == tp && self.instances[*i].state.is_unstable())
            .flat_map(|(_, offsets)| offsets.iter().copied());
        journaled
            .chain(pending)
            .min()
            .map_or(high_watermark, |first| first.min(high_watermark))
    }

    /// E11, per instance: the batch's own instance must be COMPLETE_COMMIT.
    /// Under the kafka rules every instance has its own producer epoch and
    /// its batches carry it: a batch of another epoch is never the
    /// candidate's, even when the candidate has no end marker there (its
    /// completion by a timeout or a fencing begin found the leader stopped).
    fn is_committed(&self, tp: &TopicPartition, batch: &RecordBatch) -> bool {
        batch.transactional_id.as_deref().is_some_and(|id| {
            self.owner(id, tp, batch.base_offset).is_some_and(|d| {
                d.state == TransactionState::CompleteCommit
                    && d.producer.is_none_or(|producer| {
                        producer == (batch.producer_id, batch.producer_epoch)
                    })
            })
        })
    }
}

/// The instance among an (id, partition)'s `owners` whose first offset is
/// the last at or below `offset`.
fn candidate_in(owners: &SharedVec<(i64, usize)>, offset: i64) -> Option<usize> {
    let at = owners.partition_point(|&(first, _)| first <= offset);
    at.checked_sub(1).map(|i| owners[i].1)
}

/// Removes instance `index`'s entry from an (id, partition)'s owners: found
/// by its first offset `was` when known (the usual case, O(log n)), else by
/// a scan. An instance whose previous state had no first offset there
/// (`was` is `None`: a new instance, or one new to this partition) has no
/// entry, since only [`TransactionCoordinator::apply`] writes them, one per
/// first offset: nothing to scan for (a scan per new instance made a
/// replay quadratic in the instances of an id; debug builds check).
fn remove_owner(owners: &mut SharedVec<(i64, usize)>, index: usize, was: Option<i64>) {
    let Some(first) = was else {
        debug_assert!(owners.iter().all(|&(_, i)| i != index), "instance {index}");
        return;
    };
    let from = owners.partition_point(|&(o, _)| o < first);
    let found = owners
        .iter_from(from)
        .take_while(|&&(o, _)| o == first)
        .position(|&(_, i)| i == index);
    if let Some(at) = found {
        owners.remove(from + at);
        return;
    }
    // Not where its first offset puts it: removed wherever it is, in place
    // (rebuilding the list would copy every chunk a memo shares).
    while let Some(at) = owners.iter().position(|&(_, i)| i == index) {
        owners.remove(at);
    }
}

/// Whether instance `index`'s entry at first offset `first` is the last of
/// the entries at that offset: removing it and inserting it again after
/// them (what [`TransactionCoordinator::apply`] does) leaves it in place.
fn stays(owners: &SharedVec<(i64, usize)>, index: usize, first: i64) -> bool {
    let end = owners.partition_point(|&(o, _)| o <= first);
    end.checked_sub(1)
        .and_then(|i| owners.get(i))
        .is_some_and(|&(o, i)| o == first && i == index)
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
