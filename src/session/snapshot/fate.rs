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
    let at = b.base_offset;
    // Where the batch is, in words: `offset 5`, or `offsets 50-99` for a
    // batch of several records (a Kafka client's batch is one engine
    // batch), so a sentence never names only its first offset.
    let (at_en, at_zh) = if b.last_offset > at {
        (
            format!("offsets {at}-{}", b.last_offset),
            format!("offset {at}-{}", b.last_offset),
        )
    } else {
        (format!("offset {at}"), format!("offset {at}"))
    };
    if let Some(control) = b.control {
        let (c, id) = (
            control.name().to_uppercase(),
            b.transactional_id.as_deref().unwrap_or("?"),
        );
        return (
            Fate::Control,
            Said::new(
                format!(
                    "{c} marker of {id} at offset {at}: consumers never see it; it closes the transaction on {tp}"
                ),
                format!("{id} 的 {c}标记，offset {at}：消费者看不到它；它在 {tp} 上结束这个事务"),
            ),
        );
    }
    if at >= hw {
        return (
            Fate::AboveHighWatermark,
            Said::new(
                format!("{at_en} >= HW {hw}: not on every ISR replica yet, no consumer reads it"),
                format!("{at_zh} >= HW {hw}：还没复制到每个 ISR 副本，任何消费者都读不到"),
            ),
        );
    }
    let hanging = s
        .transactions()
        .late_writes()
        .iter()
        .find(|w| &w.tp == tp && w.offset == lso);
    let Some(id) = b.transactional_id.as_deref() else {
        return if let (true, Some(w)) = (at >= lso, hanging) {
            (
                Fate::HeldBack,
                Said::new(
                    format!(
                        "plain data at {at_en} >= LSO {lso}: read_committed waits behind a hanging transaction, a late write of {} at offset {lso} that no one will end",
                        w.id
                    ),
                    format!(
                        "普通数据，{at_zh} >= LSO {lso}：read_committed 被悬挂事务挡住，即 offset {lso} 上 {} 的迟到写入，没有人会结束它",
                        w.id
                    ),
                ),
            )
        } else if at >= lso {
            (
                Fate::HeldBack,
                Said::new(
                    format!(
                        "plain data at {at_en} >= LSO {lso}: read_uncommitted reads it, read_committed waits behind an open transaction"
                    ),
                    format!(
                        "普通数据，{at_zh} >= LSO {lso}：read_uncommitted 能读到，read_committed 要等前面未结束的事务"
                    ),
                ),
            )
        } else {
            (
                Fate::Committed,
                Said::new(
                    format!("plain data at {at_en} < LSO {lso}: every consumer reads it"),
                    format!("普通数据，{at_zh} < LSO {lso}：所有消费者都能读到"),
                ),
            )
        };
    };
    let coordinator = s.transactions();
    let late =
        (coordinator.late_writes().iter()).any(|w| w.id == id && &w.tp == tp && w.offset == at);
    if late && coordinator.owner(id, tp, at).is_none() {
        return (
            Fate::Orphaned,
            Said::new(
                format!(
                    "a late write of {id}, after its transaction's marker on {tp}: no instance will end it, so the LSO stops at {at} (the hanging transaction; only the kafka rules' transaction timeout aborts it)"
                ),
                format!(
                    "{id} 的迟到写入，位于它的事务在 {tp} 上的标记之后：没有实例会结束它，所以 LSO 停在 {at}（悬挂事务；只有 kafka 规则的事务超时能中止它）"
                ),
            ),
        );
    }
    let Some(owner) = coordinator.owner(id, tp, at) else {
        return (
            Fate::Orphaned,
            Said::new(
                format!("no journal frame of {id} owns {at_en} on {tp}: it can never commit"),
                format!("事务日志里没有 {id} 的帧拥有 {tp} 的 {at_zh}：它永远不会提交"),
            ),
        );
    };
    match owner.state {
        TransactionState::Ongoing => (
            Fate::Ongoing,
            Said::new(
                format!("{id} is ONGOING: {at_en} >= LSO {lso}, nobody decided yet"),
                format!("{id} 是 ONGOING：{at_zh} >= LSO {lso}，还没有决定提交或中止"),
            ),
        ),
        TransactionState::PrepareCommit | TransactionState::PrepareAbort => {
            let state = owner.state.name().to_uppercase();
            (
                Fate::Decided,
                Said::new(
                    format!(
                        "{id} is {state}: decided, but its marker on {tp} is missing, so read_committed waits at LSO {lso}"
                    ),
                    format!(
                        "{id} 是 {state}：已经决定，但 {tp} 上缺少它的标记，所以 read_committed 停在 LSO {lso}"
                    ),
                ),
            )
        }
        TransactionState::CompleteAbort => (
            Fate::Aborted,
            match marker_after(s, tp, id, at) {
                Some(m) => Said::new(
                    format!("{id} aborted: ABORT marker at offset {m}"),
                    format!("{id} 已中止：ABORT标记在 offset {m}"),
                ),
                None => Said::new(
                    format!("{id} is COMPLETE_ABORT in the journal (its marker is missing)"),
                    format!("{id} 在事务日志中是 COMPLETE_ABORT（缺少它的标记）"),
                ),
            },
        ),
        TransactionState::CompleteCommit => {
            if !coordinator.is_committed(tp, &header_only(b)) {
                let epoch = b.producer_epoch;
                return (
                    Fate::Orphaned,
                    Said::new(
                        format!(
                            "producer epoch {epoch} is not {id}'s committed instance's: never committed"
                        ),
                        format!(
                            "producer epoch {epoch} 不属于 {id} 已提交的那个实例：永远不算提交"
                        ),
                    ),
                );
            }
            if at >= lso {
                return (
                    Fate::HeldBack,
                    Said::new(
                        format!(
                            "{id} committed, but {at_en} >= LSO {lso}: read_committed waits behind an earlier open transaction"
                        ),
                        format!(
                            "{id} 已提交，但 {at_zh} >= LSO {lso}：read_committed 要等更早的未结束事务"
                        ),
                    ),
                );
            }
            (
                Fate::Committed,
                match marker_after(s, tp, id, at) {
                    Some(m) => Said::new(
                        format!("{id} committed: COMMIT marker at offset {m}"),
                        format!("{id} 已提交：COMMIT标记在 offset {m}"),
                    ),
                    None => Said::new(
                        format!("{id} is COMPLETE_COMMIT in the journal (its marker is missing)"),
                        format!("{id} 在事务日志中是 COMPLETE_COMMIT（缺少它的标记）"),
                    ),
                },
            )
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
