//! The model of the transaction journal and coordinator (SPEC E9-E12 and
//! `docs/engine-decisions.md` "Transactions"): instances, their journaled
//! states, which instance owns a transactional batch, and the LSO.

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
    /// Touched partitions and their first offsets, in first-write order.
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
            None => self.first.push((tp.clone(), offset)),
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

/// The journal and what the coordinator derives from it.
#[derive(Debug, Clone, Default)]
pub struct Coordinator {
    /// The journal's frames, oldest first.
    pub frames: Vec<TxData>,
    /// The instance each frame wrote.
    pub frame_instance: Vec<usize>,
    /// Every instance, in begin order.
    pub instances: Vec<TxData>,
    /// The latest instance of each id.
    pub current: BTreeMap<String, usize>,
    /// (id, partition) -> (first offset, instance), by first offset.
    owners: BTreeMap<(String, Tp), Vec<(i64, usize)>>,
    /// (instance, partition) -> its markers (offset, commit) by offset.
    pub markers: BTreeMap<(usize, Tp), Vec<(i64, bool)>>,
    /// Instances whose commit or abort is running (memory only).
    pub in_flight: BTreeSet<usize>,
    /// Transactional writes waiting for their acks (memory only).
    pub pending_sends: BTreeMap<(usize, Tp), Vec<i64>>,
}

impl Coordinator {
    /// The coordinator rebuilt from journal frames (a reopen).
    pub fn from_frames(frames: Vec<TxData>) -> Self {
        let mut c = Self::default();
        for f in frames {
            c.write(f);
        }
        c
    }

    /// One frame: an ONGOING frame for an id whose latest instance is
    /// complete (or for a new id) starts an instance; any other replaces
    /// the latest instance's state.
    fn apply(&mut self, data: TxData) -> usize {
        let index = match self.current.get(&data.id) {
            Some(&i) if !(self.instances[i].state.complete() && data.state == TxState::Ongoing) => {
                self.instances[i] = data;
                i
            }
            _ => {
                self.instances.push(data);
                self.instances.len() - 1
            }
        };
        let data = &self.instances[index];
        self.current.insert(data.id.clone(), index);
        for (tp, first) in &data.first {
            let owners = self
                .owners
                .entry((data.id.clone(), tp.clone()))
                .or_default();
            owners.retain(|&(_, i)| i != index);
            let at = owners.partition_point(|&(o, _)| o <= *first);
            owners.insert(at, (*first, index));
        }
        index
    }

    /// Journals `data` as its instance's new state.
    pub fn write(&mut self, data: TxData) -> usize {
        self.frames.push(data.clone());
        let index = self.apply(data);
        self.frame_instance.push(index);
        index
    }

    pub fn journal_bytes(&self) -> u64 {
        self.frames.iter().map(TxData::line_len).sum()
    }

    pub fn record_marker(&mut self, index: usize, tp: &Tp, offset: i64, commit: bool) {
        let list = self.markers.entry((index, tp.clone())).or_default();
        if !list.iter().any(|&(o, _)| o == offset) {
            list.push((offset, commit));
            list.sort_unstable();
        }
    }

    /// Instance `index`'s markers on `tp` that the leader's `log` holds
    /// (docs: "the markers in the log"; a promotion can drop one).
    pub fn markers_in(&self, index: usize, tp: &Tp, log: &[Batch]) -> Vec<(i64, bool)> {
        let id = &self.instances[index].id;
        self.markers
            .get(&(index, tp.clone()))
            .into_iter()
            .flatten()
            .copied()
            .filter(|&(o, commit)| {
                log.get(o as usize).is_some_and(|b| {
                    b.payload
                        == Payload::Marker {
                            txn: id.clone(),
                            commit,
                        }
                })
            })
            .collect()
    }

    /// Where the leader's log holds instance `index`'s marker of a type.
    pub fn marker(&self, index: usize, tp: &Tp, commit: bool, log: &[Batch]) -> Option<i64> {
        self.markers_in(index, tp, log)
            .into_iter()
            .find(|&(_, c)| c == commit)
            .map(|(o, _)| o)
    }

    /// The last instance of `id` whose first offset on `tp` is at or below
    /// `offset`.
    pub fn candidate(&self, id: &str, tp: &Tp, offset: i64) -> Option<usize> {
        let owners = self.owners.get(&(id.to_string(), tp.clone()))?;
        owners
            .iter()
            .rev()
            .find(|&&(first, _)| first <= offset)
            .map(|&(_, i)| i)
    }

    /// The instance a transactional batch belongs to: the candidate, unless
    /// the candidate's range on `tp` ended (its first marker) before it.
    pub fn owner(&self, id: &str, tp: &Tp, offset: i64, log: &[Batch]) -> Option<usize> {
        let index = self.candidate(id, tp, offset)?;
        let ended = self
            .markers_in(index, tp, log)
            .first()
            .is_some_and(|&(marker, _)| marker < offset);
        (!ended).then_some(index)
    }

    /// The owner committed; an owner with a producer epoch (kafka rules)
    /// owns only batches of that epoch.
    pub fn is_committed(
        &self,
        id: &str,
        tp: &Tp,
        offset: i64,
        producer: (i64, i32),
        log: &[Batch],
    ) -> bool {
        self.owner(id, tp, offset, log).is_some_and(|i| {
            let d = &self.instances[i];
            d.state == TxState::CompleteCommit && d.producer.is_none_or(|p| p == producer)
        })
    }

    /// E11: the first offset of the earliest unstable instance on `tp`
    /// (journaled, or appended and waiting for acks), else the HW.
    pub fn lso(&self, tp: &Tp, hw: i64) -> i64 {
        let journaled = self
            .current
            .values()
            .map(|&i| &self.instances[i])
            .filter(|d| !d.state.complete())
            .filter_map(|d| d.first_offset(tp));
        let pending = self
            .pending_sends
            .iter()
            .filter(|((i, p), _)| p == tp && !self.instances[*i].state.complete())
            .flat_map(|(_, offsets)| offsets.iter().copied());
        journaled.chain(pending).min().unwrap_or(hw).min(hw)
    }

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
