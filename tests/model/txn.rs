//! The model of the transaction journal and coordinator (SPEC E9-E12,
//! E14): instances, their journaled states, which instance a transactional
//! batch belongs to, and the LSO.
//!
//! Written from the rules as SPEC §3 and `docs/engine-decisions.md`
//! ("Transactions", "Known limits") state them, not from the engine's
//! `TransactionCoordinator`: the only data are the journal itself (a list
//! of frames), a list of instance records scanned linearly, and the
//! leader's log, besides what only memory holds (commits in flight and
//! sends waiting for acks); nothing is indexed. Each rule, and the
//! function that is it:
//!
//! 1. **Instances** ([`Coordinator::write`]). E9: every state change
//!    journals the whole state. engine-decisions "Visibility is per
//!    transaction instance": the journal's whole history counts, and an
//!    `ongoing` frame of an id whose latest instance is complete starts a
//!    new instance. So a frame begins an instance when it is ONGOING and
//!    its id's previous frame in the journal is complete or missing; every
//!    other frame is the next state of the instance that previous frame
//!    belongs to. An instance's state is its last frame (E9: "keeps the
//!    last state"); the id's latest instance is its last frame's.
//! 2. **Ownership** ([`Coordinator::owner`]). A transactional batch of id
//!    X at offset o on partition p belongs to the instance of X "whose
//!    first offset on that partition is the last at or below the batch"
//!    (the candidate), unless the candidate's range there ended before o:
//!    "an instance's range on a partition ends at its first marker there",
//!    and the batch then belongs to a later instance whose write was never
//!    journaled, that is to none. Under the kafka rules the batch must
//!    also carry the candidate's producer id and epoch. Transactional data
//!    whose id has no candidate (its frames torn away, or appended raw)
//!    belongs to none.
//! 3. **Committed** ([`Coordinator::is_committed`], E11, E14): the batch's
//!    owner is COMPLETE_COMMIT; never the id's latest state, which is how
//!    the book's `is_committed(transaction_id)` reads it (the flaw E14 fixes
//!    in both rule sets).
//! 4. **LSO** ([`Coordinator::lso`], E11; engine-decisions "A transactional
//!    write holds the LSO back from the moment it is appended"): the
//!    smallest first offset on p of an ONGOING or PREPARE_* instance, or
//!    of a write appended for one and still waiting for its acks; else the
//!    HW; never above the HW.
//!
//! Two cases the documents leave open are decided here (and in
//! `docs/reliability.md`, "Model-based tests"):
//! - Markers are not journaled, so an instance's markers are found in the
//!   leader's log: a marker is a transactional batch of its id, and it is
//!   the marker of the instance rule 2 makes its candidate (also after
//!   the candidate's first marker, which ends its range: see
//!   [`Coordinator::markers_of`]). A marker the current leader does not
//!   hold counts for nothing, and one it holds counts whichever leaders
//!   came between (engine-decisions: "'Missing' means missing from the
//!   current leader's log").
//! - Two instances of an id with the same first offset on a partition
//!   (possible only when a log lost a journaled write and the offset was
//!   written again): the later instance is the candidate, since what the
//!   log holds at that offset now was written after the earlier one ended.

use std::collections::{BTreeMap, BTreeSet};

use super::Tp;
use super::replication::{Batch, Payload};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxState {
    Ongoing,
    PrepareCommit,
    CompleteCommit,
    PrepareAbort,
    CompleteAbort,
}

impl TxState {
    pub fn name(self) -> &'static str {
        match self {
            TxState::Ongoing => "ongoing",
            TxState::PrepareCommit => "prepare_commit",
            TxState::CompleteCommit => "complete_commit",
            TxState::PrepareAbort => "prepare_abort",
            TxState::CompleteAbort => "complete_abort",
        }
    }

    pub fn complete(self) -> bool {
        matches!(self, TxState::CompleteCommit | TxState::CompleteAbort)
    }

    pub fn prepare(commit: bool) -> Self {
        if commit {
            TxState::PrepareCommit
        } else {
            TxState::PrepareAbort
        }
    }

    pub fn completed(commit: bool) -> Self {
        if commit {
            TxState::CompleteCommit
        } else {
            TxState::CompleteAbort
        }
    }
}

/// What one journal frame holds: the whole state of one instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxData {
    pub id: String,
    pub state: TxState,
    /// Touched partitions and their first offsets, sorted as the book's
    /// set (topic, then partition; issue 16).
    pub first: Vec<(Tp, i64)>,
    pub staged: BTreeMap<String, BTreeMap<Tp, i64>>,
    /// Kafka rules: producer id and epoch, and the clock at begin.
    pub producer: Option<(i64, i32)>,
    pub started: Option<u64>,
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("a string")
}

impl TxData {
    pub fn first_offset(&self, tp: &Tp) -> Option<i64> {
        self.first.iter().find(|(p, _)| p == tp).map(|&(_, o)| o)
    }

    /// A write at `offset`: the lowest offset on a partition is its first.
    pub fn record_write(&mut self, tp: &Tp, offset: i64) {
        match self.first.iter_mut().find(|(p, _)| p == tp) {
            Some((_, first)) => *first = (*first).min(offset),
            None => {
                let at = self.first.partition_point(|(p, _)| p < tp);
                self.first.insert(at, (tp.clone(), offset));
            }
        }
    }

    /// The frame's JSON as FORMATS.md gives it: compact, sorted keys.
    pub fn json(&self) -> String {
        let first: Vec<String> = self
            .first
            .iter()
            .map(|((t, p), o)| format!("[{},{p},{o}]", quote(t)))
            .collect();
        let partitions: Vec<String> = self
            .first
            .iter()
            .map(|((t, p), _)| format!("[{},{p}]", quote(t)))
            .collect();
        let staged: Vec<String> = self
            .staged
            .iter()
            .map(|(g, offsets)| {
                let list: Vec<String> = offsets
                    .iter()
                    .map(|((t, p), o)| format!("[{},{p},{o}]", quote(t)))
                    .collect();
                format!("{}:[{}]", quote(g), list.join(","))
            })
            .collect();
        let producer = self.producer.map_or(String::new(), |(id, epoch)| {
            format!("\"producer_epoch\":{epoch},\"producer_id\":{id},")
        });
        let started = self
            .started
            .map_or(String::new(), |s| format!("\"started_ms\":{s},"));
        format!(
            "{{\"first_offsets\":[{}],\"id\":{},\"partitions\":[{}],{producer}\"staged_offsets\":{{{}}},{started}\"state\":\"{}\"}}",
            first.join(","),
            quote(&self.id),
            partitions.join(","),
            staged.join(","),
            self.state.name()
        )
    }

    /// The frame's length: CRC (8 hex digits), a space, the JSON, a newline.
    pub fn line_len(&self) -> u64 {
        self.json().len() as u64 + 10
    }
}

/// The journal and what the coordinator knows from it.
#[derive(Debug, Clone, Default)]
pub struct Coordinator {
    /// The journal's frames, oldest first: what the file holds.
    pub frames: Vec<TxData>,
    /// The instance each frame belongs to (rule 1), by serial.
    pub frame_instance: Vec<usize>,
    /// Every instance ever begun, by serial (begin order): its state, which
    /// is its last frame in the journal, or `None` once a tear cut every
    /// frame of it (the coordinator no longer knows it). Serials are never
    /// reused, so ground truth that names an instance (a batch's writer, a
    /// staged offset's) means the same instance after a tear.
    instances: Vec<Option<TxData>>,
    /// Instances whose commit or abort is running (memory only).
    pub in_flight: BTreeSet<usize>,
    /// Transactional writes appended and waiting for their acks (memory
    /// only).
    pub pending_sends: BTreeMap<(usize, Tp), Vec<i64>>,
}

impl Coordinator {
    // ----- rule 1: the journal and its instances -----

    /// The last frame of `id` in the journal, and the instance it belongs
    /// to.
    fn last_frame_of(&self, id: &str) -> Option<(&TxData, usize)> {
        self.frames
            .iter()
            .zip(&self.frame_instance)
            .rev()
            .find(|(f, _)| f.id == id)
            .map(|(f, &i)| (f, i))
    }

    /// Rule 1: an ONGOING frame whose id's previous frame is complete, or
    /// which has none, begins an instance.
    fn begins_instance(&self, frame: &TxData) -> bool {
        frame.state == TxState::Ongoing
            && self
                .last_frame_of(&frame.id)
                .is_none_or(|(previous, _)| previous.state.complete())
    }

    /// Journals `data` (E9: one frame per state change). Returns the
    /// instance the frame belongs to by rule 1: a new one, or the one the
    /// id's previous frame belongs to.
    pub fn write(&mut self, data: TxData) -> usize {
        let index = if self.begins_instance(&data) {
            self.instances.push(None);
            self.instances.len() - 1
        } else {
            self.last_frame_of(&data.id)
                .expect("a frame that begins no instance follows one of its id")
                .1
        };
        self.instances[index] = Some(data.clone());
        self.frames.push(data);
        self.frame_instance.push(index);
        index
    }

    /// A reopen: the journal keeps its first `kept` frames (a tear cut the
    /// rest: E9 recovery keeps the valid prefix), memory is dropped, and
    /// every instance's state is its last frame left.
    pub fn reopen(&mut self, kept: usize) {
        self.frames.truncate(kept);
        self.frame_instance.truncate(kept);
        for (index, state) in self.instances.iter_mut().enumerate() {
            *state = self
                .frames
                .iter()
                .zip(&self.frame_instance)
                .rev()
                .find(|&(_, &i)| i == index)
                .map(|(f, _)| f.clone());
        }
        self.in_flight.clear();
        self.pending_sends.clear();
    }

    pub fn journal_bytes(&self) -> u64 {
        self.frames.iter().map(TxData::line_len).sum()
    }

    /// An instance the journal holds, if it does.
    pub fn get(&self, index: usize) -> Option<&TxData> {
        self.instances.get(index).and_then(Option::as_ref)
    }

    /// An instance the journal holds (the model asks only for those).
    pub fn instance(&self, index: usize) -> &TxData {
        self.get(index)
            .unwrap_or_else(|| panic!("instance {index} is not in the journal"))
    }

    /// The latest instance of `id`: its last frame's (E9).
    pub fn latest(&self, id: &str) -> Option<usize> {
        self.last_frame_of(id).map(|(_, i)| i)
    }

    /// The latest instance of every id, by id.
    pub fn current(&self) -> BTreeMap<String, usize> {
        // A later frame of an id replaces an earlier one's entry.
        self.frames
            .iter()
            .zip(&self.frame_instance)
            .map(|(f, &i)| (f.id.clone(), i))
            .collect()
    }

    // ----- rules 2 and 3: ownership and commitment -----

    /// Rule 2's candidate: the instance of `id` whose first offset on `tp`
    /// is the last at or below `offset` (on a tie, the later instance).
    pub fn candidate(&self, id: &str, tp: &Tp, offset: i64) -> Option<usize> {
        self.instances
            .iter()
            .enumerate()
            .filter_map(|(index, d)| {
                let d = d.as_ref().filter(|d| d.id == id)?;
                let first = d.first_offset(tp).filter(|&first| first <= offset)?;
                Some((first, index))
            })
            .max()
            .map(|(_, index)| index)
    }

    /// Rule 2: the instance the transactional data batch at `offset` of the
    /// leader's `log` on `tp` belongs to. The candidate's range has ended
    /// when the log holds a marker of the id from the candidate's first
    /// offset on and before the batch: by the same rule such a marker is
    /// the candidate's (no instance of the id has a first offset between
    /// the candidate's and the batch, or it would be the candidate), so it
    /// is the candidate's first marker or comes after it.
    pub fn owner(&self, tp: &Tp, offset: i64, log: &[Batch]) -> Option<usize> {
        let at = usize::try_from(offset).ok()?;
        let batch = log.get(at)?;
        let Payload::Data { txn: Some(id), .. } = &batch.payload else {
            return None;
        };
        let index = self.candidate(id, tp, offset)?;
        let d = self.instance(index);
        let first = d.first_offset(tp).expect("a candidate has a first offset") as usize;
        let ended = log[first..at]
            .iter()
            .any(|b| matches!(&b.payload, Payload::Marker { txn, .. } if txn == id));
        let its_producer = d.producer.is_none_or(|p| p == batch.producer);
        (!ended && its_producer).then_some(index)
    }

    /// Rule 3: the batch's owner committed.
    pub fn is_committed(&self, tp: &Tp, offset: i64, log: &[Batch]) -> bool {
        self.owner(tp, offset, log)
            .is_some_and(|i| self.instance(i).state == TxState::CompleteCommit)
    }

    /// Instance `index`'s markers on `tp`, (offset, commit) in offset
    /// order: the markers of its id in the leader's `log` whose candidate
    /// (rule 2) it is. Not only the first: the range ends there, but the
    /// instance may still write one (a journal tear cut its PREPARE_ABORT
    /// after its ABORT marker was written; ONGOING again, it commits and
    /// writes a COMMIT marker after it). A marker the leader does not hold
    /// counts for nothing, whichever leader held it before, and one it
    /// holds counts whichever leaders came between (engine-decisions:
    /// "'Missing' means missing from the current leader's log").
    pub fn markers_of(&self, index: usize, tp: &Tp, log: &[Batch]) -> Vec<(i64, bool)> {
        let id = &self.instance(index).id;
        log.iter()
            .enumerate()
            .filter_map(|(o, b)| match &b.payload {
                Payload::Marker { txn, commit }
                    if txn == id && self.candidate(id, tp, o as i64) == Some(index) =>
                {
                    Some((o as i64, *commit))
                }
                _ => None,
            })
            .collect()
    }

    /// Where the leader's `log` holds instance `index`'s marker of a type.
    pub fn marker(&self, index: usize, tp: &Tp, commit: bool, log: &[Batch]) -> Option<i64> {
        self.markers_of(index, tp, log)
            .into_iter()
            .find(|&(_, c)| c == commit)
            .map(|(o, _)| o)
    }

    // ----- rule 4: the LSO -----

    /// Rule 4: the smallest first offset on `tp` of an unstable instance,
    /// journaled or appended and waiting for acks; else `hw`; never above
    /// `hw`.
    pub fn lso(&self, tp: &Tp, hw: i64) -> i64 {
        let unstable = |index: usize| self.get(index).is_some_and(|d| !d.state.complete());
        let journaled = self
            .instances
            .iter()
            .flatten()
            .filter(|d| !d.state.complete())
            .filter_map(|d| d.first_offset(tp));
        let appended = self
            .pending_sends
            .iter()
            .filter(|((index, p), _)| p == tp && unstable(*index))
            .flat_map(|(_, offsets)| offsets.iter().copied());
        journaled.chain(appended).min().map_or(hw, |o| o.min(hw))
    }

    // ----- the model's own bookkeeping of sends in flight -----

    pub fn abandon_send(&mut self, index: usize, tp: &Tp, offset: i64) {
        let key = (index, tp.clone());
        if let Some(list) = self.pending_sends.get_mut(&key) {
            list.retain(|&o| o != offset);
            if list.is_empty() {
                self.pending_sends.remove(&key);
            }
        }
    }

    pub fn sends_pending(&self, index: usize) -> usize {
        self.pending_sends
            .iter()
            .filter(|((i, _), _)| *i == index)
            .map(|(_, v)| v.len())
            .sum()
    }
}

/// The rules on hand-made journals and logs, each against the wrong rule
/// it must not be.
#[cfg(test)]
mod tests {
    use super::*;

    fn tp() -> Tp {
        ("t0".to_string(), 0)
    }

    fn frame(id: &str, state: TxState, first: &[i64]) -> TxData {
        TxData {
            id: id.to_string(),
            state,
            first: first.iter().map(|&o| (tp(), o)).collect(),
            staged: BTreeMap::new(),
            producer: None,
            started: None,
        }
    }

    fn data(id: &str) -> Batch {
        Batch {
            epoch: 0,
            uid: 0,
            payload: Payload::Data {
                value: "v".into(),
                txn: Some(id.to_string()),
            },
            producer: (-1, -1),
            writer: None,
        }
    }

    fn marker(id: &str, commit: bool) -> Batch {
        Batch {
            payload: Payload::Marker {
                txn: id.to_string(),
                commit,
            },
            ..data(id)
        }
    }

    /// Rule 1: an id's frames split into instances at each ONGOING frame
    /// after a complete one; other ids' frames in between do not matter.
    #[test]
    fn an_ongoing_frame_after_a_complete_one_begins_an_instance() {
        let mut c = Coordinator::default();
        for (f, want) in [
            (frame("a", TxState::Ongoing, &[]), 0),
            (frame("a", TxState::Ongoing, &[0]), 0),
            (frame("b", TxState::Ongoing, &[]), 1),
            (frame("a", TxState::PrepareCommit, &[0]), 0),
            (frame("a", TxState::CompleteCommit, &[0]), 0),
            (frame("a", TxState::Ongoing, &[]), 2),
            (frame("b", TxState::Ongoing, &[1]), 1),
            (frame("b", TxState::PrepareAbort, &[1]), 1),
        ] {
            assert_eq!(c.write(f), want);
        }
        assert_eq!(c.frame_instance, [0, 0, 1, 0, 0, 2, 1, 1]);
        let current: Vec<(String, usize)> = c.current().into_iter().collect();
        assert_eq!(current, [("a".to_string(), 2), ("b".to_string(), 1)]);
        assert_eq!(c.instance(0).state, TxState::CompleteCommit);
        assert_eq!(c.instance(1).state, TxState::PrepareAbort);
        assert_eq!(c.instance(1).first_offset(&tp()), Some(1));
    }

    /// A tear that cuts an instance's only frame makes it unknown; its
    /// serial is not given to the next instance, and one that lost only
    /// its last frame is back in its earlier state.
    #[test]
    fn a_tear_forgets_instances_without_reusing_their_serials() {
        let mut c = Coordinator::default();
        c.write(frame("a", TxState::Ongoing, &[0]));
        c.write(frame("a", TxState::CompleteAbort, &[0]));
        c.write(frame("a", TxState::Ongoing, &[]));
        c.in_flight.insert(1);
        c.reopen(2);
        assert_eq!(c.get(1), None);
        assert_eq!(c.latest("a"), Some(0));
        assert!(c.in_flight.is_empty());
        assert_eq!(c.write(frame("a", TxState::Ongoing, &[])), 2);
        c.reopen(1);
        assert_eq!(c.instance(0).state, TxState::Ongoing);
        assert_eq!(c.get(2), None);
    }

    /// Rule 2 on a reused id: tx a's first instance wrote offset 0 and
    /// committed (marker at 1); its second instance's write at 2 was never
    /// journaled (a crash before its ack); its third wrote offset 3. Offset
    /// 2 belongs to no instance, although the first is its candidate, and
    /// the id's latest instance (the book's lookup) is not what decides.
    #[test]
    fn a_batch_after_its_candidates_end_marker_belongs_to_no_instance() {
        let mut c = Coordinator::default();
        c.write(frame("a", TxState::Ongoing, &[0]));
        c.write(frame("a", TxState::CompleteCommit, &[0]));
        c.write(frame("a", TxState::Ongoing, &[]));
        c.write(frame("a", TxState::CompleteAbort, &[]));
        c.write(frame("a", TxState::Ongoing, &[3]));
        c.write(frame("a", TxState::CompleteAbort, &[3]));
        let log = [
            data("a"),
            marker("a", true),
            data("a"),
            data("a"),
            marker("a", false),
        ];
        let owners: Vec<Option<usize>> = (0..4).map(|o| c.owner(&tp(), o, &log)).collect();
        assert_eq!(owners, [Some(0), None, None, Some(2)]);
        // The wrong rule without end markers would give offset 2 to the
        // committed first instance.
        assert_eq!(c.candidate("a", &tp(), 2), Some(0));
        let committed: Vec<bool> = (0..4).map(|o| c.is_committed(&tp(), o, &log)).collect();
        assert_eq!(committed, [true, false, false, false]);
        // The book's lookup by id would call offset 0 aborted.
        assert_eq!(
            c.instance(c.latest("a").unwrap()).state,
            TxState::CompleteAbort
        );
        assert_eq!(c.markers_of(0, &tp(), &log), [(1, true)]);
        assert_eq!(c.markers_of(2, &tp(), &log), [(4, false)]);
        assert_eq!(c.marker(0, &tp(), false, &log), None);
    }

    /// A marker the leader's log does not hold (a promotion lost it) ends
    /// nothing.
    #[test]
    fn a_marker_the_leader_lacks_ends_no_range() {
        let mut c = Coordinator::default();
        c.write(frame("a", TxState::Ongoing, &[0]));
        c.write(frame("a", TxState::CompleteCommit, &[0]));
        let log = [data("a"), data("b"), data("a")];
        assert_eq!(c.owner(&tp(), 2, &log), Some(0));
        assert_eq!(c.marker(0, &tp(), true, &log), None);
        // Data of another id, and non-transactional data, have no owner.
        assert_eq!(c.owner(&tp(), 1, &log), None);
    }

    /// An instance's markers are those of its id the leader's log holds
    /// where it is the candidate, a function of that log alone: a marker an
    /// earlier leader lacked counts as soon as the current leader holds it,
    /// and one after the instance's first marker (which ended its range)
    /// is still its own.
    #[test]
    fn an_instances_markers_are_the_current_leaders() {
        let mut c = Coordinator::default();
        c.write(frame("a", TxState::Ongoing, &[0]));
        c.write(frame("a", TxState::PrepareCommit, &[0]));
        let lacking = [data("a")];
        assert_eq!(c.marker(0, &tp(), true, &lacking), None);
        let holding = [data("a"), marker("a", true)];
        assert_eq!(c.marker(0, &tp(), true, &holding), Some(1));
        let after_an_abort = [data("a"), marker("a", false), marker("a", true)];
        assert_eq!(
            c.markers_of(0, &tp(), &after_an_abort),
            [(1, false), (2, true)]
        );
        assert_eq!(c.marker(0, &tp(), true, &after_an_abort), Some(2));
    }

    /// Kafka rules: a batch of another producer epoch is not the
    /// candidate's.
    #[test]
    fn a_batch_of_another_epoch_belongs_to_no_instance() {
        let mut c = Coordinator::default();
        let mut f = frame("a", TxState::CompleteCommit, &[0]);
        f.producer = Some((0, 1));
        c.write(TxData {
            state: TxState::Ongoing,
            ..f.clone()
        });
        c.write(f);
        let mut ours = data("a");
        ours.producer = (0, 1);
        let mut later = data("a");
        later.producer = (0, 2);
        let log = [ours, later];
        assert_eq!(c.owner(&tp(), 0, &log), Some(0));
        assert_eq!(c.owner(&tp(), 1, &log), None);
        assert_eq!(c.candidate("a", &tp(), 1), Some(0));
    }

    /// A journaled write the log lost, and its offset written again by a
    /// later instance: the later instance owns it.
    #[test]
    fn on_equal_first_offsets_the_later_instance_is_the_candidate() {
        let mut c = Coordinator::default();
        c.write(frame("a", TxState::Ongoing, &[1]));
        c.write(frame("a", TxState::CompleteCommit, &[1]));
        c.write(frame("a", TxState::Ongoing, &[1]));
        assert_eq!(c.candidate("a", &tp(), 1), Some(1));
        assert_eq!(c.candidate("a", &tp(), 0), None);
    }

    /// Rule 4: unstable instances' first offsets and appended writes hold
    /// the LSO back; complete ones do not; it never passes the HW.
    #[test]
    fn the_lso_is_the_first_unstable_offset_capped_by_the_hw() {
        let mut c = Coordinator::default();
        c.write(frame("a", TxState::Ongoing, &[4]));
        c.write(frame("a", TxState::CompleteAbort, &[4]));
        c.write(frame("b", TxState::Ongoing, &[6]));
        assert_eq!(c.lso(&tp(), 9), 6);
        assert_eq!(c.lso(&tp(), 5), 5);
        c.pending_sends.insert((1, tp()), vec![5]);
        assert_eq!(c.lso(&tp(), 9), 5);
        c.write(frame("b", TxState::PrepareCommit, &[6]));
        assert_eq!(c.lso(&tp(), 9), 5);
        c.write(frame("b", TxState::CompleteCommit, &[6]));
        assert_eq!(
            c.lso(&tp(), 9),
            9,
            "a complete instance's writes hold nothing"
        );
        assert_eq!(c.lso(&("t0".to_string(), 1), 3), 3);
    }
}
