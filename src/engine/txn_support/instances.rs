//! Every transaction instance, and which one wrote a batch: the index behind
//! "visibility is per transaction instance" (SPEC E14's first flaw of the
//! book, fixed under both rules; docs/engine-decisions.md, "Transactions").
//!
//! The book keeps one `TransactionData` per id (`_transactions`) and looks a
//! batch's id up, so reusing an id after an abort shows the aborted data.
//! Here every instance the journal ever held is kept, in begin order; the
//! latest per id is the book's `_transactions[id]`. A transactional batch
//! belongs to its id's instance whose first offset on the partition is the
//! last at or below the batch, unless that instance's first marker there
//! comes before it. The markers known per partition also let a resumed
//! commit or abort write only the missing ones.

use std::collections::BTreeMap;

use crate::engine::core::batch::ControlType;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::log::PartitionLog;
use crate::engine::transaction::model::{TransactionData, TransactionState};
use crate::engine::vector_ext::VectorExt;
use imbl::Vector;

/// For each transaction id and partition: (first offset, instance) in
/// offset order. Each list is a persistent list that the checkpoints' memos
/// share: a list grows with the instances of its id.
type Owners = BTreeMap<String, BTreeMap<TopicPartition, Vector<(i64, usize)>>>;

/// For each partition, the markers of each instance there, in offset order,
/// by instance index (sorted, one entry per instance): a map kept as a
/// sorted persistent list so that a checkpoint's memo and a restore share
/// it, and a lookup is a binary search.
pub(crate) type Markers = BTreeMap<TopicPartition, MarkersOn>;

/// One partition's markers, by instance index (see [`Markers`]).
pub(crate) type MarkersOn = Vector<(usize, Vec<(i64, ControlType)>)>;

thread_local! {
    /// Batch summaries [`TransactionInstances::learn_markers`] walked on
    /// this thread ([`marker_summaries_walked`]).
    static SUMMARIES_WALKED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many batch summaries this thread has walked looking for markers:
/// what `tests/growth_cost.rs` counts to hold a crash's reopen to the logs
/// that changed, whatever the history. Per thread, so tests running side by
/// side do not count each other's.
pub fn marker_summaries_walked() -> u64 {
    SUMMARIES_WALKED.with(|n| n.get())
}

/// The book's `_transactions`, kept per instance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TransactionInstances {
    /// Every instance seen, in begin order; a checkpoint's memo is a clone
    /// of it, sharing all of it.
    pub(crate) instances: Vector<TransactionData>,
    /// The latest instance of each id.
    pub(crate) current: BTreeMap<String, usize>,
    /// For each id and partition: (first offset, instance) in offset order.
    /// By id first, so a lookup borrows the id instead of building a key.
    pub(crate) owners: Owners,
    /// The markers in the log of each instance on each partition, in offset
    /// order; the first one ends the instance's range there. Rebuilt from the
    /// leaders' logs on open, and from the new leader's log on a promotion.
    /// Kept by partition, then instance: an open rebuilds one partition's
    /// at a time, and a lookup needs no key built.
    pub(crate) markers: Markers,
}

impl TransactionInstances {
    /// The latest state of `id` (the book's `_transactions.get(id)`).
    pub fn get(&self, id: &str) -> Option<&TransactionData> {
        self.current.get(id).map(|&i| &self.instances[i])
    }

    /// The index of the latest instance of `id`.
    pub fn latest(&self, id: &str) -> Option<usize> {
        self.current.get(id).copied()
    }

    /// An instance by index.
    pub fn instance(&self, index: usize) -> &TransactionData {
        &self.instances[index]
    }

    /// The latest instance of every id, by id.
    pub fn current(&self) -> impl Iterator<Item = &TransactionData> {
        self.current.values().map(|&i| &self.instances[i])
    }

    /// The index of the latest instance of every id, by id.
    pub fn current_indices(&self) -> Vec<usize> {
        self.current.values().copied().collect()
    }

    /// Every instance ever seen, in begin order.
    pub fn all(&self) -> &Vector<TransactionData> {
        &self.instances
    }

    /// Applies one journal record: an ONGOING record for an id whose latest
    /// instance is complete (or unknown) starts a new instance; any other
    /// record replaces the latest instance's state. Returns its index.
    ///
    /// Each step costs O(log n) in the instances of the id: a replay is a
    /// fold of it over the frames, so a quadratic step made every replay
    /// (a crash's) quadratic in the journal.
    pub fn apply(&mut self, record: TransactionData) -> usize {
        let (index, before) = match self.current.get(&record.id) {
            Some(&i)
                if !(self.instances[i].state.is_complete()
                    && record.state == TransactionState::Ongoing) =>
            {
                (i, Some(std::mem::replace(&mut self.instances[i], record)))
            }
            _ => {
                self.instances.push_back(record);
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

    /// Forgets what instances before `from`, but those `kept`, wrote on
    /// `topic`'s partitions (their owners there and their markers): a
    /// topic deleted and created again under the name, which they never
    /// wrote to.
    pub(crate) fn forget_topic_before(&mut self, topic: &str, from: usize, kept: &[usize]) {
        let forgotten = |i: usize| i < from && !kept.contains(&i);
        for by_tp in self.owners.values_mut() {
            for (tp, list) in by_tp.iter_mut() {
                if tp.topic == topic {
                    list.retain(|&(_, i)| !forgotten(i));
                }
            }
            by_tp.retain(|_, list| !list.is_empty());
        }
        self.owners.retain(|_, by_tp| !by_tp.is_empty());
        for (tp, on_tp) in self.markers.iter_mut() {
            if tp.topic == topic {
                on_tp.retain(|(i, _)| !forgotten(*i));
            }
        }
        self.markers.retain(|_, on_tp| !on_tp.is_empty());
    }

    /// Staged offsets dropped in memory (an abort's discard, journaled with
    /// COMPLETE_ABORT).
    pub(crate) fn discard_staged_offsets(&mut self, index: usize) {
        self.instances[index].staged_offsets.clear();
    }

    /// Takes `carried` as the markers known on `tp`: what
    /// [`Self::learn_markers`] would find in a leader's log that is,
    /// summary for summary, the log they were known for, with the same
    /// instances. The caller checked both; debug builds check the result
    /// against a walk of the log.
    pub(crate) fn adopt_markers(
        &mut self,
        tp: &TopicPartition,
        carried: Option<MarkersOn>,
        leader: &PartitionLog,
    ) {
        match carried.filter(|on_tp| !on_tp.is_empty()) {
            Some(on_tp) => self.markers.insert(tp.clone(), on_tp),
            None => self.markers.remove(tp),
        };
        #[cfg(debug_assertions)]
        {
            let mut walked = self.clone();
            walked.walk_markers(tp, leader);
            assert_eq!(
                walked.markers.get(tp),
                self.markers.get(tp),
                "markers carried across a crash on {tp} differ from the log's"
            );
        }
        #[cfg(not(debug_assertions))]
        let _ = leader;
    }

    /// Makes the markers known on `tp` exactly those `leader`'s log holds,
    /// each given to its id's candidate at its offset (the instance whose
    /// first offset there is the last at or below it); the first one ends
    /// the candidate's range ([`Self::owner`]).
    ///
    /// A marker after the candidate's first one is the candidate's too,
    /// not no one's: an instance whose range a marker ended can still write
    /// one (a journal tear cut its PREPARE_ABORT after the ABORT marker was
    /// written; it is ONGOING again and commits), and that marker must be
    /// found again, or a resumed commit writes it twice.
    ///
    /// Reads only the log's in-memory batch summaries, no disk. Each id's
    /// owners are looked up once per call, not once per marker: every open
    /// (a crash's too) runs this over every marker in the log.
    pub fn learn_markers(&mut self, tp: &TopicPartition, leader: &PartitionLog) {
        SUMMARIES_WALKED.with(|n| n.set(n.get() + leader.batch_summaries().len() as u64));
        self.walk_markers(tp, leader);
    }

    /// [`Self::learn_markers`] without counting the walk.
    fn walk_markers(&mut self, tp: &TopicPartition, leader: &PartitionLog) {
        self.markers.remove(tp);
        // Summaries are in offset order, so each list is built sorted and
        // without repeats, as `record_marker` keeps it.
        let mut on_tp: BTreeMap<usize, Vec<(i64, ControlType)>> = BTreeMap::new();
        let mut owners_of: BTreeMap<&str, Option<&Vector<(i64, usize)>>> = BTreeMap::new();
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

    /// Notes a marker of `id` on `tp` at `offset` as [`Self::learn_markers`]
    /// would find it in the log: given to the id's candidate there, if any
    /// (a marker that ends a late write, written for no instance).
    pub fn note_marker_of(
        &mut self,
        id: &str,
        tp: &TopicPartition,
        offset: i64,
        control: ControlType,
    ) {
        let owners = self.owners.get(id).and_then(|on| on.get(tp));
        if let Some(index) = owners.and_then(|o| candidate_in(o, offset)) {
            self.record_marker(index, tp, offset, control);
        }
    }

    /// The offset of instance `index`'s marker of type `control` on `tp`.
    pub fn marker(&self, index: usize, tp: &TopicPartition, control: ControlType) -> Option<i64> {
        markers_in(self.markers.get(tp)?, index)?
            .iter()
            .find(|&&(_, c)| c == control)
            .map(|&(o, _)| o)
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

    /// The instance that wrote a transactional batch at `offset` on `tp`: the
    /// candidate by first offset (the last instance of `id` whose first
    /// offset there is at or below `offset`), unless the candidate's first
    /// marker there comes before the batch (then the batch belongs to an
    /// instance whose write was never journaled, and to none we know).
    pub fn owner(&self, id: &str, tp: &TopicPartition, offset: i64) -> Option<&TransactionData> {
        let index = candidate_in(self.owners.get(id)?.get(tp)?, offset)?;
        let ended_before = self
            .markers
            .get(tp)
            .and_then(|on_tp| markers_in(on_tp, index))
            .and_then(|m| m.first())
            .is_some_and(|&(marker, _)| marker < offset);
        (!ended_before).then(|| &self.instances[index])
    }
}

/// The markers of instance `index` in one partition's list.
fn markers_in(
    on_tp: &Vector<(usize, Vec<(i64, ControlType)>)>,
    index: usize,
) -> Option<&Vec<(i64, ControlType)>> {
    let at = on_tp.partition_point(|&(i, _)| i < index);
    on_tp.get(at).filter(|(i, _)| *i == index).map(|(_, m)| m)
}

/// The instance among an (id, partition)'s `owners` whose first offset is
/// the last at or below `offset`.
fn candidate_in(owners: &Vector<(i64, usize)>, offset: i64) -> Option<usize> {
    let at = owners.partition_point(|&(first, _)| first <= offset);
    at.checked_sub(1).map(|i| owners[i].1)
}

/// Removes instance `index`'s entry from an (id, partition)'s owners: found
/// by its first offset `was` when known (the usual case, O(log n)), else by
/// a scan. An instance whose previous state had no first offset there
/// (`was` is `None`: a new instance, or one new to this partition) has no
/// entry, since only [`TransactionInstances::apply`] writes them, one per
/// first offset: nothing to scan for (a scan per new instance made a
/// replay quadratic in the instances of an id; debug builds check).
fn remove_owner(owners: &mut Vector<(i64, usize)>, index: usize, was: Option<i64>) {
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
    // (rebuilding the list would copy every node a memo shares).
    while let Some(at) = owners.iter().position(|&(_, i)| i == index) {
        owners.remove(at);
    }
}

/// Whether instance `index`'s entry at first offset `first` is the last of
/// the entries at that offset: removing it and inserting it again after
/// them (what [`TransactionInstances::apply`] does) leaves it in place.
fn stays(owners: &Vector<(i64, usize)>, index: usize, first: i64) -> bool {
    let end = owners.partition_point(|&(o, _)| o <= first);
    end.checked_sub(1)
        .and_then(|i| owners.get(i))
        .is_some_and(|&(o, i)| o == first && i == index)
}
