//! One fate per batch, decided in one place. The fate is
//! what becomes of a batch for the consumers, and it is decided by the same
//! rules the engine's read_committed fetch applies (E11: below the LSO, and
//! a transactional batch only if its own instance is COMPLETE_COMMIT), so a
//! label on screen can never disagree with what a consumer gets. The
//! `fates_agree_with_the_consumers` test in `tests/snapshot.rs` walks every
//! recording to hold it to that.

use serde::{Deserialize, Serialize};

use crate::engine::core::cluster::ClusterState;
use crate::engine::log::partition_log::BatchSummary;
use crate::engine::replication::model::TransactionVisibility;
use crate::engine::transaction::TransactionState;
use crate::engine::vector_ext::VectorExt;
use crate::engine::{RecordBatch, TopicPartition};
use crate::session::said::Said;

/// What becomes of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fate {
    /// Readable by read_committed: plain data below the LSO, or data of a
    /// COMPLETE_COMMIT transaction below the LSO.
    Committed,
    /// Data of a COMPLETE_ABORT transaction: read_committed filters it out.
    Aborted,
    /// Data of an ONGOING transaction.
    Ongoing,
    /// Data of a PREPARE_COMMIT or PREPARE_ABORT transaction: decided, but
    /// not complete until its markers are written and acknowledged, so
    /// read_committed does not read it yet. (The words say "not complete
    /// yet", not "markers missing": a marker on screen may be waiting only
    /// for its acks.)
    Decided,
    /// Below the HW but at or above the LSO: read_uncommitted returns it,
    /// read_committed waits until the LSO passes it.
    HeldBack,
    /// At or above the HW: not yet on every ISR replica, nobody reads it.
    #[serde(rename = "above_hw")]
    AboveHighWatermark,
    /// Transactional data that no journaled instance owns (for example
    /// after a torn journal lost the frame that did): never committed.
    Orphaned,
    /// A COMMIT or ABORT marker: no consumer ever gets it.
    Control,
}

impl Fate {
    /// Every fate, in the order of the table in `docs/dashboard.md`.
    pub const ALL: [Fate; 8] = [
        Fate::Committed,
        Fate::Aborted,
        Fate::Ongoing,
        Fate::Decided,
        Fate::HeldBack,
        Fate::AboveHighWatermark,
        Fate::Orphaned,
        Fate::Control,
    ];

    /// The snake_case name (the state JSON's and the label's key).
    pub fn name(self) -> &'static str {
        match self {
            Fate::Committed => "committed",
            Fate::Aborted => "aborted",
            Fate::Ongoing => "ongoing",
            Fate::Decided => "decided",
            Fate::HeldBack => "held_back",
            Fate::AboveHighWatermark => "above_hw",
            Fate::Orphaned => "orphaned",
            Fate::Control => "control",
        }
    }

    /// The fate in a few words, for sentences ("above the HW").
    pub fn words(self) -> &'static str {
        match self {
            Fate::Committed => "committed",
            Fate::Aborted => "aborted",
            Fate::Ongoing => "ongoing",
            Fate::Decided => "decided, not complete yet",
            Fate::HeldBack => "held back by the LSO",
            Fate::AboveHighWatermark => "above the HW",
            Fate::Orphaned => "orphaned",
            Fate::Control => "a marker",
        }
    }

    /// [`Self::words`] in Chinese.
    pub fn words_zh(self) -> &'static str {
        match self {
            Fate::Committed => "已提交",
            Fate::Aborted => "已中止",
            Fate::Ongoing => "进行中",
            Fate::Decided => "已决定，尚未完成",
            Fate::HeldBack => "被 LSO 挡住",
            Fate::AboveHighWatermark => "高于 HW",
            Fate::Orphaned => "无主",
            Fate::Control => "marker",
        }
    }

    /// Whether a fresh read_committed consumer gets the batch's records.
    pub fn read_committed_sees(self) -> bool {
        self == Fate::Committed
    }

    /// Whether a fresh read_uncommitted consumer gets the batch's records:
    /// everything below the HW but markers.
    pub fn read_uncommitted_sees(self) -> bool {
        !matches!(self, Fate::AboveHighWatermark | Fate::Control)
    }
}

/// A batch's fate on `tp` and the reason in words, from its header alone.
/// `hw` and `lso` are the partition's; `s` is read, never changed.
pub fn decide(
    s: &ClusterState,
    tp: &TopicPartition,
    b: &BatchSummary,
    hw: i64,
    lso: i64,
) -> (Fate, Said) {
    let (fate, why) = judge(s, tp, b, hw, lso);
    (fate, why.said(s, tp, b, hw, lso))
}

/// [`decide`]'s fate alone: the same rules, no sentence made. A frame's
/// snapshot decides every batch of its windows but explains only the one
/// batch it shows explained (docs/performance.md, "P1").
pub fn fate_of(s: &ClusterState, tp: &TopicPartition, b: &BatchSummary, hw: i64, lso: i64) -> Fate {
    judge(s, tp, b, hw, lso).0
}

/// Which rule decided a batch's fate, with what its sentence names that
/// the batch's header does not: [`judge`] finds it without making a
/// string, [`Why::said`] says it.
#[derive(Debug, Clone, Copy)]
enum Why<'a> {
    Marker,
    AboveHighWatermark,
    /// Plain data held back by a hanging transaction: its late write's id.
    PlainHanging(&'a str),
    PlainHeldBack,
    PlainCommitted,
    LateWrite,
    NoOwner,
    Ongoing,
    Decided(TransactionState),
    Aborted,
    NotTheCommittedEpoch,
    CommittedHeldBack,
    Committed,
}

/// The fate of batch `b` on `tp` and the rule that decided it (see
/// [`decide`]).
fn judge<'a>(
    s: &'a ClusterState,
    tp: &TopicPartition,
    b: &BatchSummary,
    hw: i64,
    lso: i64,
) -> (Fate, Why<'a>) {
    let at = b.base_offset;
    if b.control.is_some() {
        return (Fate::Control, Why::Marker);
    }
    if at >= hw {
        return (Fate::AboveHighWatermark, Why::AboveHighWatermark);
    }
    let coordinator = s.transactions();
    let Some(id) = b.transactional_id.as_deref() else {
        return if at >= lso {
            let hanging = (coordinator.late_writes().iter())
                .find(|w| &w.tp == tp && w.offset == lso)
                .map(|w| w.id.as_str());
            match hanging {
                Some(id) => (Fate::HeldBack, Why::PlainHanging(id)),
                None => (Fate::HeldBack, Why::PlainHeldBack),
            }
        } else {
            (Fate::Committed, Why::PlainCommitted)
        };
    };
    let Some(owner) = coordinator.owner(id, tp, at) else {
        let late =
            (coordinator.late_writes().iter()).any(|w| w.id == id && &w.tp == tp && w.offset == at);
        return match late {
            true => (Fate::Orphaned, Why::LateWrite),
            false => (Fate::Orphaned, Why::NoOwner),
        };
    };
    match owner.state {
        TransactionState::Ongoing => (Fate::Ongoing, Why::Ongoing),
        state @ (TransactionState::PrepareCommit | TransactionState::PrepareAbort) => {
            (Fate::Decided, Why::Decided(state))
        }
        TransactionState::CompleteAbort => (Fate::Aborted, Why::Aborted),
        TransactionState::CompleteCommit => {
            if !coordinator.is_committed(tp, &header_only(b)) {
                (Fate::Orphaned, Why::NotTheCommittedEpoch)
            } else if at >= lso {
                (Fate::HeldBack, Why::CommittedHeldBack)
            } else {
                (Fate::Committed, Why::Committed)
            }
        }
    }
}

thread_local! {
    /// Sentences [`decide`] made on this thread ([`sentences_made`]).
    static SENTENCES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many batches this thread has said why of so far: what
/// `tests/frame_cost.rs` counts to hold a frame to explaining the one batch
/// it shows explained, however many its windows hold. Per thread, so
/// tests running side by side do not count each other's.
pub fn sentences_made() -> u64 {
    SENTENCES.with(|n| n.get())
}

impl Why<'_> {
    /// The sentence for batch `b` on `tp` (the inputs [`judge`] decided
    /// from).
    fn said(
        self,
        s: &ClusterState,
        tp: &TopicPartition,
        b: &BatchSummary,
        hw: i64,
        lso: i64,
    ) -> Said {
        SENTENCES.with(|n| n.set(n.get() + 1));
        let at = b.base_offset;
        let id = b.transactional_id.as_deref().unwrap_or("?");
        // Where the batch is, in words: `offset 5`, or `offsets 50-99` for
        // a batch of several records (a Kafka client's batch is one engine
        // batch), so a sentence never names only its first offset.
        let (at_en, at_zh) = if b.last_offset > at {
            (
                format!("offsets {at}-{}", b.last_offset),
                format!("offset {at}-{}", b.last_offset),
            )
        } else {
            (format!("offset {at}"), format!("offset {at}"))
        };
        match self {
            Why::Marker => {
                let c = b
                    .control
                    .map(|c| c.name().to_uppercase())
                    .unwrap_or_default();
                Said::new(
                    format!(
                        "{c} marker of {id} at offset {at}: consumers never see it; it closes the transaction on {tp}"
                    ),
                    format!(
                        "{id} 的 {c}标记，offset {at}：消费者看不到它；它在 {tp} 上结束这个事务"
                    ),
                )
            }
            Why::AboveHighWatermark => Said::new(
                format!("{at_en} >= HW {hw}: not on every ISR replica yet, no consumer reads it"),
                format!("{at_zh} >= HW {hw}：还没复制到每个 ISR 副本，任何消费者都读不到"),
            ),
            Why::PlainHanging(late) => Said::new(
                format!(
                    "plain data at {at_en} >= LSO {lso}: read_committed waits behind a hanging transaction, a late write of {late} at offset {lso} that no one will end"
                ),
                format!(
                    "普通数据，{at_zh} >= LSO {lso}：read_committed 被悬挂事务挡住，即 offset {lso} 上 {late} 的迟到写入，没有人会结束它"
                ),
            ),
            Why::PlainHeldBack => Said::new(
                format!(
                    "plain data at {at_en} >= LSO {lso}: read_uncommitted reads it, read_committed waits behind an open transaction"
                ),
                format!(
                    "普通数据，{at_zh} >= LSO {lso}：read_uncommitted 能读到，read_committed 要等前面未结束的事务"
                ),
            ),
            Why::PlainCommitted => Said::new(
                format!("plain data at {at_en} < LSO {lso}: every consumer reads it"),
                format!("普通数据，{at_zh} < LSO {lso}：所有消费者都能读到"),
            ),
            Why::LateWrite => Said::new(
                format!(
                    "a late write of {id}, after its transaction's marker on {tp}: no instance will end it, so the LSO stops at {at} (the hanging transaction; only the kafka rules' transaction timeout aborts it)"
                ),
                format!(
                    "{id} 的迟到写入，位于它的事务在 {tp} 上的标记之后：没有实例会结束它，所以 LSO 停在 {at}（悬挂事务；只有 kafka 规则的事务超时能中止它）"
                ),
            ),
            Why::NoOwner => Said::new(
                format!("no journal frame of {id} owns {at_en} on {tp}: it can never commit"),
                format!("事务日志里没有 {id} 的帧拥有 {tp} 的 {at_zh}：它永远不会提交"),
            ),
            Why::Ongoing => Said::new(
                format!("{id} is ONGOING: {at_en} >= LSO {lso}, nobody decided yet"),
                format!("{id} 是 ONGOING：{at_zh} >= LSO {lso}，还没有决定提交或中止"),
            ),
            Why::Decided(state) => {
                let state = state.name().to_uppercase();
                Said::new(
                    format!(
                        "{id} is {state}: decided, but not complete until its marker on {tp} is written and acknowledged, so read_committed waits at LSO {lso}"
                    ),
                    format!(
                        "{id} 是 {state}：已经决定，但 {tp} 上的标记写入并确认之前还没有完成，所以 read_committed 停在 LSO {lso}"
                    ),
                )
            }
            Why::Aborted => match marker_after(s, tp, id, at) {
                Some(m) => Said::new(
                    format!("{id} aborted: ABORT marker at offset {m}"),
                    format!("{id} 已中止：ABORT标记在 offset {m}"),
                ),
                None => Said::new(
                    format!("{id} is COMPLETE_ABORT in the journal (its marker is missing)"),
                    format!("{id} 在事务日志中是 COMPLETE_ABORT（缺少它的标记）"),
                ),
            },
            Why::NotTheCommittedEpoch => {
                let epoch = b.producer_epoch;
                Said::new(
                    format!(
                        "producer epoch {epoch} is not {id}'s committed instance's: never committed"
                    ),
                    format!("producer epoch {epoch} 不属于 {id} 已提交的那个实例：永远不算提交"),
                )
            }
            Why::CommittedHeldBack => Said::new(
                format!(
                    "{id} committed, but {at_en} >= LSO {lso}: read_committed waits behind an earlier open transaction"
                ),
                format!(
                    "{id} 已提交，但 {at_zh} >= LSO {lso}：read_committed 要等更早的未结束事务"
                ),
            ),
            Why::Committed => match marker_after(s, tp, id, at) {
                Some(m) => Said::new(
                    format!("{id} committed: COMMIT marker at offset {m}"),
                    format!("{id} 已提交：COMMIT标记在 offset {m}"),
                ),
                None => Said::new(
                    format!("{id} is COMPLETE_COMMIT in the journal (its marker is missing)"),
                    format!("{id} 在事务日志中是 COMPLETE_COMMIT（缺少它的标记）"),
                ),
            },
        }
    }
}

/// A batch without its records: all that `is_committed` reads.
fn header_only(s: &BatchSummary) -> RecordBatch {
    RecordBatch {
        base_offset: s.base_offset,
        leader_epoch: s.leader_epoch,
        producer_id: s.producer_id,
        producer_epoch: s.producer_epoch,
        base_sequence: s.base_sequence,
        transactional_id: s.transactional_id.clone(),
        control: s.control,
        last_offset_delta: (s.last_offset - s.base_offset) as i32,
        records: Vec::new(),
    }
}

/// The offset of the first marker of `id` on `tp` after `offset`.
fn marker_after(s: &ClusterState, tp: &TopicPartition, id: &str, offset: i64) -> Option<i64> {
    let set = s.partition(tp).ok()?;
    let summaries = set.leader().log.batch_summaries();
    let start = summaries.partition_point(|b| b.base_offset <= offset);
    summaries
        .iter_from(start)
        .find(|b| b.control.is_some() && b.transactional_id.as_deref() == Some(id))
        .map(|b| b.base_offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_committed_data_is_read_committed_and_markers_and_unreplicated_data_are_read_by_nobody()
    {
        for fate in Fate::ALL {
            assert_eq!(
                fate.read_committed_sees(),
                fate == Fate::Committed,
                "{fate:?}"
            );
            assert_eq!(
                fate.read_uncommitted_sees(),
                !matches!(fate, Fate::Control | Fate::AboveHighWatermark),
                "{fate:?}"
            );
        }
    }

    #[test]
    fn names_are_the_serde_names() {
        for fate in Fate::ALL {
            assert_eq!(
                serde_json::to_string(&fate).unwrap(),
                format!("\"{}\"", fate.name())
            );
        }
    }
}
