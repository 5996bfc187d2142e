//! What a step changed: the difference between the snapshot before a step and
//! the snapshot after it, as data the panes highlight and as sentences the
//! events pane says ("out-0 HW 1 → 2", "broker 3 stopped", "read_committed now
//! reads out-0@0").
//!
//! The diff is computed from the two snapshots alone, and is the same
//! whatever [`Bounds`](super::Bounds) each was read with: a batch is new when
//! it starts at or past the partition's previous log end offset, not when it
//! was missing from the previous window; consumer changes come from fates
//! (a batch a consumer did not read before and reads now), not from the
//! consumer lists, which a frame bounds.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::{Fate, PartitionSnapshot, Snapshot, TxnState};
use crate::session::said::Said;

/// What changed in one partition.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionChanges {
    /// Base offsets of the batches the step appended (at or past the
    /// previous log end offset).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_batches: Vec<i64>,
    /// Base offsets of batches that were there before with another fate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fate_changed: Vec<i64>,
    /// Base offsets of batches the step removed (a truncated tail).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<i64>,
    /// Marks that moved: (before, after).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_start_offset: Option<(i64, i64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high_watermark: Option<(i64, i64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_stable_offset: Option<(i64, i64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leader: Option<(u32, u32)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leader_epoch: Option<(u32, u32)>,
    /// Each replica's log end offset that moved.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub replica_leo: BTreeMap<u32, (i64, i64)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub isr_joined: Vec<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub isr_left: Vec<u32>,
    /// Base offsets of batches read_committed reads now and did not before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_committed_gained: Vec<i64>,
    /// Base offsets of batches read_uncommitted reads now and did not before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_uncommitted_gained: Vec<i64>,
}

impl PartitionChanges {
    fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Whether the batch at `base_offset` is new or changed its fate.
    pub fn touches_batch(&self, base_offset: i64) -> bool {
        self.new_batches.contains(&base_offset) || self.fate_changed.contains(&base_offset)
    }

    /// Whether broker `broker`'s replica moved or changed ISR membership.
    pub fn touches_replica(&self, broker: u32) -> bool {
        self.replica_leo.contains_key(&broker)
            || self.isr_joined.contains(&broker)
            || self.isr_left.contains(&broker)
            || self.leader.is_some_and(|(a, b)| a == broker || b == broker)
    }

    /// Whether any watermark moved.
    pub fn moves_marks(&self) -> bool {
        self.log_start_offset.is_some()
            || self.high_watermark.is_some()
            || self.last_stable_offset.is_some()
            || !self.replica_leo.is_empty()
    }
}

/// What one step changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Changes {
    /// The step compared with (None: nothing to compare, step 0).
    #[serde(default)]
    pub since_step: Option<usize>,
    /// Per partition (`<topic>-<partition>`), only those that changed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub partitions: BTreeMap<String, PartitionChanges>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub brokers_stopped: Vec<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub brokers_started: Vec<u32>,
    /// Numbers of the journal frames the step wrote.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub journal_frames: Vec<usize>,
    /// Transactions whose state changed: (id, before, after).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transactions: Vec<(String, Option<TxnState>, TxnState)>,
    /// Committed offsets the step published: (group, partition, offset).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub published: Vec<(String, String, i64)>,
    /// The step's changes in words, in a fixed order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sentences: Vec<String>,
    /// The same sentences in Chinese, one for one (`--lang zh`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sentences_zh: Vec<String>,
}

impl Changes {
    /// The batches whose values the sentences name ((partition index, batch
    /// index) into `after`), for a source to read before saying them.
    pub fn batches_named(&self, after: &Snapshot) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (p, part) in after.partitions.iter().enumerate() {
            let Some(pc) = self.partitions.get(&part.name()) else {
                continue;
            };
            for (b, batch) in part.batches.iter().enumerate() {
                let o = batch.base_offset;
                if pc.read_committed_gained.contains(&o) || pc.read_uncommitted_gained.contains(&o)
                {
                    out.push((p, b));
                }
            }
        }
        out
    }

    /// The changes of partition `name`, if it changed.
    pub fn partition(&self, name: &str) -> Option<&PartitionChanges> {
        self.partitions.get(name)
    }

    /// Whether the step changed nothing a screen shows.
    pub fn is_empty(&self) -> bool {
        self.partitions.is_empty()
            && self.brokers_stopped.is_empty()
            && self.brokers_started.is_empty()
            && self.journal_frames.is_empty()
            && self.transactions.is_empty()
            && self.published.is_empty()
    }
}

/// What changed from `before` to `after`.
pub fn diff(before: &Snapshot, after: &Snapshot) -> Changes {
    let mut c = Changes {
        since_step: Some(before.step),
        ..Changes::default()
    };
    let mut sentences = Vec::new();
    let was_stopped: BTreeSet<u32> = before
        .brokers
        .iter()
        .filter(|b| b.stopped)
        .map(|b| b.id)
        .collect();
    for b in &after.brokers {
        match (was_stopped.contains(&b.id), b.stopped) {
            (false, true) => c.brokers_stopped.push(b.id),
            (true, false) => c.brokers_started.push(b.id),
            _ => {}
        }
    }
    for id in &c.brokers_stopped {
        sentences.push(Said::new(
            format!("broker {id} stopped"),
            format!("broker {id} 已停止"),
        ));
    }
    for id in &c.brokers_started {
        sentences.push(Said::new(
            format!("broker {id} started"),
            format!("broker {id} 已启动"),
        ));
    }
    for p in &after.partitions {
        let name = p.name();
        let old = before.partitions.iter().find(|q| q.name() == name);
        let Some(old) = old else {
            sentences.push(Said::new(
                format!("{name} created"),
                format!("{name} 已创建"),
            ));
            continue;
        };
        let pc = partition(old, p);
        partition_sentences(&name, &pc, p, old, &mut sentences);
        if !pc.is_empty() {
            c.partitions.insert(name, pc);
        }
    }
    let old_states: BTreeMap<&str, TxnState> = before
        .transactions
        .iter()
        .map(|t| (t.id.as_str(), t.state))
        .collect();
    for t in &after.transactions {
        let was = old_states.get(t.id.as_str()).copied();
        if was != Some(t.state) {
            c.transactions.push((t.id.clone(), was, t.state));
            sentences.push(match was {
                Some(w) => Said::new(
                    format!("{} {w} → {}", t.id, t.state),
                    format!("{} {} → {}", t.id, upper(w), upper(t.state)),
                ),
                None => Said::new(
                    format!("{} begun: {}", t.id, t.state),
                    format!("{} 开启：{}", t.id, upper(t.state)),
                ),
            });
        }
    }
    c.journal_frames = after
        .journal
        .tail
        .iter()
        .filter(|f| f.number > before.journal.frames)
        .map(|f| f.number)
        .collect();
    if after.journal.frames > before.journal.frames {
        let n = after.journal.frames - before.journal.frames;
        let (a, b) = (before.journal.bytes, after.journal.bytes);
        sentences.push(Said::new(
            format!(
                "journal: {n} new frame{} ({a} B → {b} B)",
                if n == 1 { "" } else { "s" }
            ),
            format!("事务日志：新增 {n} 个帧（{a} B → {b} B）"),
        ));
    }
    for (group, offsets) in &after.committed_offsets {
        for (tp, &offset) in offsets {
            let was = before
                .committed_offsets
                .get(group)
                .and_then(|o| o.get(tp))
                .copied();
            if was != Some(offset) {
                c.published.push((group.clone(), tp.clone(), offset));
                sentences.push(match was {
                    Some(w) => Said::new(
                        format!("{group} committed {tp} {w} → {offset}"),
                        format!("{group} 提交 {tp} {w} → {offset}"),
                    ),
                    None => Said::new(
                        format!("{group} committed {tp} = {offset}"),
                        format!("{group} 提交 {tp} = {offset}"),
                    ),
                });
            }
        }
    }
    // Offsets that went: a group deleted (DeleteGroups, `delete_group`)
    // or a partition's offset removed. An observer sees only that they
    // are gone, so the sentence says that much.
    for (group, offsets) in &before.committed_offsets {
        let now = after.committed_offsets.get(group);
        let gone: Vec<&String> = offsets
            .keys()
            .filter(|tp| now.is_none_or(|o| !o.contains_key(*tp)))
            .collect();
        match (now, gone.len()) {
            (_, 0) => {}
            (None, n) => sentences.push(Said::new(
                format!("{group}: its {n} committed offset(s) are gone"),
                format!("{group}：它已提交的 {n} 个 offset 已不在"),
            )),
            (Some(_), _) => {
                for tp in gone {
                    sentences.push(Said::new(
                        format!("{group}: committed offset of {tp} is gone"),
                        format!("{group}：{tp} 的已提交 offset 已不在"),
                    ));
                }
            }
        }
    }
    (c.sentences, c.sentences_zh) = sentences.into_iter().map(|s| (s.en, s.zh)).unzip();
    c
}

fn moved<T: PartialEq + Copy>(a: T, b: T) -> Option<(T, T)> {
    (a != b).then_some((a, b))
}

fn partition(old: &PartitionSnapshot, new: &PartitionSnapshot) -> PartitionChanges {
    let old_fates: BTreeMap<i64, Fate> = old
        .batches
        .iter()
        .map(|b| (b.base_offset, b.fate))
        .collect();
    let mut pc = PartitionChanges {
        log_start_offset: moved(old.log_start_offset, new.log_start_offset),
        high_watermark: moved(old.high_watermark, new.high_watermark),
        last_stable_offset: moved(old.last_stable_offset, new.last_stable_offset),
        leader: moved(old.leader, new.leader),
        leader_epoch: moved(old.leader_epoch, new.leader_epoch),
        ..PartitionChanges::default()
    };
    // A batch is new when it starts at or past the old log end, unless the
    // same offset was there before with the same fate (the tail was
    // replaced: then it is new too, as it is another batch).
    for b in &new.batches {
        let was = old_fates.get(&b.base_offset).copied();
        if b.base_offset >= old.log_end_offset || (was.is_none() && b.base_offset >= old_first(old))
        {
            pc.new_batches.push(b.base_offset);
        } else if let Some(was) = was
            && was != b.fate
        {
            pc.fate_changed.push(b.base_offset);
        }
        let gained = |sees: fn(Fate) -> bool| sees(b.fate) && was.is_none_or(|w| !sees(w));
        if gained(Fate::read_committed_sees) {
            pc.read_committed_gained.push(b.base_offset);
        }
        if gained(Fate::read_uncommitted_sees) {
            pc.read_uncommitted_gained.push(b.base_offset);
        }
    }
    // Batches at or past the new log end are gone: a truncated tail.
    pc.removed = old
        .batches
        .iter()
        .filter(|b| b.base_offset >= new.log_end_offset)
        .map(|b| b.base_offset)
        .collect();
    for r in &new.replicas {
        if let Some(o) = old.replicas.iter().find(|o| o.broker == r.broker)
            && o.log_end_offset != r.log_end_offset
        {
            pc.replica_leo
                .insert(r.broker, (o.log_end_offset, r.log_end_offset));
        }
    }
    pc.isr_joined = new
        .isr
        .iter()
        .filter(|b| !old.isr.contains(b))
        .copied()
        .collect();
    pc.isr_left = old
        .isr
        .iter()
        .filter(|b| !new.isr.contains(b))
        .copied()
        .collect();
    pc
}

/// The first offset the old snapshot's window holds (batches before it may
/// simply not have been read).
fn old_first(old: &PartitionSnapshot) -> i64 {
    old.batches
        .first()
        .map_or(old.log_end_offset, |b| b.base_offset)
}

fn partition_sentences(
    name: &str,
    pc: &PartitionChanges,
    p: &PartitionSnapshot,
    old: &PartitionSnapshot,
    out: &mut Vec<Said>,
) {
    let at = |o: i64| p.batches.iter().find(|b| b.base_offset == o);
    // A batch where it is: `out-0@5`, or `out-0@50-99` for several records
    // (a Kafka client's batch is one engine batch), never its base alone.
    let place = |o: i64| match at(o) {
        Some(b) if b.last_offset > o => format!("{name}@{o}-{}", b.last_offset),
        _ => format!("{name}@{o}"),
    };
    for &o in &pc.new_batches {
        match at(o) {
            Some(b) if b.control.is_some() => {
                let c = b.control.map_or("", |c| c.name()).to_uppercase();
                let id = b.transactional_id.as_deref().unwrap_or("?");
                out.push(Said::new(
                    format!("{c} marker of {id} at {name}@{o}"),
                    format!("{id} 的 {c}标记写在 {name}@{o}"),
                ));
            }
            Some(b) => {
                let range = if b.last_offset > o {
                    format!("-{}", b.last_offset)
                } else {
                    String::new()
                };
                let txn = |l: &str, r: &str| {
                    b.transactional_id
                        .as_deref()
                        .map(|t| format!(" {l}{t}{r}"))
                        .unwrap_or_default()
                };
                out.push(Said::new(
                    format!(
                        "{name}@{o}{range} appended, {}{}",
                        b.fate.words(),
                        txn("(", ")")
                    ),
                    format!(
                        "{name}@{o}{range} 已追加，{}{}",
                        b.fate.words_zh(),
                        txn("（", "）")
                    ),
                ));
            }
            None => out.push(Said::new(
                format!("{name}@{o} appended"),
                format!("{name}@{o} 已追加"),
            )),
        }
    }
    for &o in &pc.fate_changed {
        if let Some(b) = at(o) {
            let place = place(o);
            out.push(Said::new(
                format!("{place} now {}", b.fate.words()),
                format!("{place} 现在{}", b.fate.words_zh()),
            ));
        }
    }
    if !pc.removed.is_empty() {
        // The removed batches are the old snapshot's: their ranges from it.
        let offsets: Vec<String> = pc
            .removed
            .iter()
            .map(|&o| match old.batches.iter().find(|b| b.base_offset == o) {
                Some(b) if b.last_offset > o => format!("{o}-{}", b.last_offset),
                _ => o.to_string(),
            })
            .collect();
        out.push(Said::new(
            format!("{name}: batches at {} truncated", offsets.join(", ")),
            format!("{name}：offset {} 处的批次被截断", offsets.join("、")),
        ));
    }
    if let Some((a, b)) = pc.leader {
        let s = format!("{name} leader {a} → {b}");
        out.push(Said::new(s.clone(), s));
    }
    if let Some((a, b)) = pc.leader_epoch {
        let s = format!("{name} leader epoch {a} → {b}");
        out.push(Said::new(s.clone(), s));
    }
    for (label, zh, m) in [
        ("HW", "HW", pc.high_watermark),
        ("LSO", "LSO", pc.last_stable_offset),
        ("log start", "日志起点", pc.log_start_offset),
    ] {
        if let Some((a, b)) = m {
            out.push(Said::new(
                format!("{name} {label} {a} → {b}"),
                format!("{name} {zh} {a} → {b}"),
            ));
        }
    }
    for (broker, (a, b)) in &pc.replica_leo {
        let s = format!("{name} broker {broker} LEO {a} → {b}");
        out.push(Said::new(s.clone(), s));
    }
    for b in &pc.isr_joined {
        out.push(Said::new(
            format!("{name}: broker {b} joined the ISR"),
            format!("{name}：broker {b} 加入 ISR"),
        ));
    }
    for b in &pc.isr_left {
        out.push(Said::new(
            format!("{name}: broker {b} left the ISR"),
            format!("{name}：broker {b} 离开 ISR"),
        ));
    }
    for (isolation, gained) in [
        ("read_committed", &pc.read_committed_gained),
        ("read_uncommitted", &pc.read_uncommitted_gained),
    ] {
        if gained.is_empty() {
            continue;
        }
        // The first values a frame reads of a batch, so a frame and
        // `mk-tui state` say the same words; a tombstone's null is 空值 in
        // Chinese, as the panes write it.
        let what = |null: &str| -> Vec<String> {
            gained
                .iter()
                .map(|&o| match at(o) {
                    Some(b) if !b.records.is_empty() => b.values_text_with(null),
                    _ => place(o),
                })
                .collect()
        };
        out.push(Said::new(
            format!("{isolation} now reads {}", what("null").join("; ")),
            format!("{isolation} 现在读到 {}", what("空值").join("；")),
        ));
    }
}

/// A state's name as the book's journal writes it (`PREPARE_COMMIT`): the
/// Chinese sentences keep the state names in that spelling.
fn upper(state: impl std::fmt::Display) -> String {
    state.to_string().to_uppercase()
}
