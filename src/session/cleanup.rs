//! The `retention` and `compact` actions (E16) in the driver: the book's
//! `RetentionManager` and `LogCompactor` on one partition or on every
//! partition of a topic, what each step says, and the recovery of a
//! compaction crashed at its `before_swap` cut point (E13).

use crate::engine::core::cluster::{CompactionCut, CompactionOutcome, RetentionOutcome};
use crate::engine::core::metadata::{TopicConfig, TopicPartition};
use crate::engine::error::MiniKafkaError;
use crate::session::action::FieldError;
use crate::session::driver::Driver;
use crate::session::narrate;
use crate::session::outcome::ActionError;
use crate::session::said::Said;

/// `retention`'s own rules: at least one limit, and bytes above zero (the
/// book's `ValueError`s; `retention_ms` is unsigned, never negative).
pub fn check_retention(
    retention_ms: Option<u64>,
    retention_bytes: Option<u64>,
) -> Result<(), FieldError> {
    match (retention_ms, retention_bytes) {
        (None, None) => Err(FieldError::new(
            "action.retention",
            "give retention_ms, retention_bytes or both",
        )),
        (_, Some(0)) => Err(FieldError::new(
            "action.retention.retention_bytes",
            "retention_bytes must be positive",
        )),
        _ => Ok(()),
    }
}

/// A `create_topic`'s or `alter_topic_config`'s (`action`) config: a size
/// limit above 0, as the `retention` action's, and a minimum ISR of at
/// least 1 (Kafka refuses 0).
pub fn check_topic_config(action: &str, config: &TopicConfig) -> Result<(), FieldError> {
    if config.retention_bytes == Some(0) {
        return Err(FieldError::new(
            format!("action.{action}.config.retention_bytes"),
            "retention_bytes must be positive",
        ));
    }
    if config.min_insync_replicas == Some(0) {
        return Err(FieldError::new(
            format!("action.{action}.config.min_insync_replicas"),
            "min_insync_replicas must be at least 1",
        ));
    }
    Ok(())
}

/// How a cleanup step ended: a sentence, or a crash's recovery.
pub enum CleanupEnd {
    Told(Said),
    Recovered(Said, crate::engine::RecoveryReport),
}

impl Driver {
    /// The partitions an action names: one, or every one of the topic.
    fn cleanup_targets(
        &self,
        topic: &str,
        partition: Option<u32>,
    ) -> Result<Vec<TopicPartition>, ActionError> {
        let count = self
            .cluster()
            .topics()
            .into_iter()
            .find(|(t, _)| t == topic)
            .map(|(_, n)| n)
            .ok_or_else(|| MiniKafkaError::UnknownTopicOrPartition(topic.to_string()))?;
        match partition {
            Some(p) if p >= count => {
                Err(MiniKafkaError::UnknownTopicOrPartition(format!("{topic}-{p}")).into())
            }
            Some(p) => Ok(vec![TopicPartition::new(topic, p)]),
            None => Ok((0..count).map(|p| TopicPartition::new(topic, p)).collect()),
        }
    }

    /// Runs `retention` on its partitions.
    pub(crate) fn run_retention(
        &mut self,
        topic: &str,
        partition: Option<u32>,
        retention_ms: Option<u64>,
        retention_bytes: Option<u64>,
    ) -> Result<CleanupEnd, ActionError> {
        let mut told = Vec::new();
        for tp in self.cleanup_targets(topic, partition)? {
            let outcome = self
                .cluster()
                .apply_retention(&tp, retention_ms, retention_bytes)?;
            told.push(retention_said(&tp, &outcome));
        }
        Ok(CleanupEnd::Told(Said::join(&told, "; ", "；")))
    }

    /// Runs `delete_records` (Kafka's DeleteRecords) on one partition.
    pub(crate) fn run_delete_records(
        &mut self,
        topic: &str,
        partition: u32,
        offset: i64,
    ) -> Result<CleanupEnd, ActionError> {
        let tp = self.cleanup_targets(topic, Some(partition))?.remove(0);
        let before = self.cluster().leader_log(&tp)?.log_start_offset()?;
        let start = self.cluster().delete_records(&tp, offset)?;
        Ok(CleanupEnd::Told(Said::new(
            format!("{tp} up to {offset}: log start {before} → {start}"),
            format!("{tp}（至 {offset}）：日志起点 {before} → {start}"),
        )))
    }

    /// Runs `compact` on its partitions; a cut crashes the first.
    pub(crate) fn run_compact(
        &mut self,
        topic: &str,
        partition: Option<u32>,
        delete_retention_ms: u64,
        cut: Option<CompactionCut>,
    ) -> Result<CleanupEnd, ActionError> {
        let mut told = Vec::new();
        for tp in self.cleanup_targets(topic, partition)? {
            let outcome = self.cluster().compact(&tp, delete_retention_ms, cut)?;
            if let Some(report) = outcome.crashed.clone() {
                let recovery = narrate::recovery(&report, self.resends_markers_now());
                let said = Said::new(
                    format!(
                        "compact {tp}: crashed at before_swap (the compacted log written beside the live one, not swapped in); {}",
                        recovery.en
                    ),
                    format!(
                        "压缩 {tp}：在 before_swap 处崩溃（压缩结果已写在现有日志旁，尚未交换）；{}",
                        recovery.zh
                    ),
                );
                return Ok(CleanupEnd::Recovered(said, report));
            }
            told.push(compaction_said(&tp, &outcome));
        }
        Ok(CleanupEnd::Told(Said::join(&told, "; ", "；")))
    }
}

fn retention_said(tp: &TopicPartition, o: &RetentionOutcome) -> Said {
    let deleted: usize = o.deleted.values().map(Vec::len).max().unwrap_or(0);
    let (from, to) = (o.log_start_before, o.log_start_offset);
    if from == to {
        return Said::new(
            format!("{tp}: nothing to delete, log start stays at {to}"),
            format!("{tp}：没有可删除的日志段，日志起点仍为 {to}"),
        );
    }
    Said::new(
        format!(
            "{tp}: deleted {deleted} closed segment(s), log start {from} → {to} (offsets below {to} are gone)"
        ),
        format!(
            "{tp}：删除 {deleted} 个已关闭日志段，日志起点 {from} → {to}（{to} 之前的 offset 已不可读）"
        ),
    )
}

fn compaction_said(tp: &TopicPartition, o: &CompactionOutcome) -> Said {
    let Some(r) = o.results.values().next() else {
        return Said::new(
            format!("{tp}: no running replica"),
            format!("{tp}：没有运行中的副本"),
        );
    };
    if r.source_segments.is_empty() {
        return Said::new(
            format!("{tp}: no closed segment to compact (the active segment is never cleaned)"),
            format!("{tp}：没有已关闭的日志段（活跃日志段从不压缩）"),
        );
    }
    let removed = r.records_before - r.records_after;
    Said::new(
        format!(
            "{tp}: {} closed segment(s), {} → {} records ({removed} removed, offsets kept)",
            r.source_segments.len(),
            r.records_before,
            r.records_after
        ),
        format!(
            "{tp}：{} 个已关闭日志段，记录 {} → {}（删除 {removed} 条，offset 保持不变）",
            r.source_segments.len(),
            r.records_before,
            r.records_after
        ),
    )
}
