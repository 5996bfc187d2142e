//! The headless state of SPEC §5: one JSON object describing the cluster and
//! the session after a step. Keys and shapes are the spec's (more are
//! added where useful); every map is ordered, so the same run always prints
//! the same bytes.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::engine::core::batch::RecordBatch;
use crate::engine::core::recovery::RecoveryReport;
use crate::engine::transaction::TransactionData;
use crate::engine::{IsolationLevel, TopicPartition};
use crate::session::driver::Driver;

/// The whole state after a step.
#[derive(Debug, Clone, Serialize)]
pub struct State {
    pub step: usize,
    pub clock_ms: u64,
    pub rules: String,
    pub partitions: Vec<PartitionState>,
    pub transactions: Vec<TransactionStateJson>,
    pub committed_offsets: BTreeMap<String, BTreeMap<String, i64>>,
    pub journal: JournalState,
    pub last_recovery: Option<RecoveryJson>,
    pub consumers: Consumers,
    pub pending: Vec<PendingJson>,
    pub errors: Vec<ErrorJson>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PartitionState {
    pub topic: String,
    pub partition: u32,
    pub leader: u32,
    pub leader_epoch: u32,
    pub isr: Vec<u32>,
    pub log_start_offset: i64,
    pub high_watermark: i64,
    pub last_stable_offset: i64,
    pub replicas: Vec<ReplicaJson>,
    pub batches: Vec<BatchJson>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReplicaJson {
    pub broker: u32,
    pub log_end_offset: i64,
    pub in_sync: bool,
    pub stopped: bool,
    pub lag: i64,
    pub ms_since_fetch: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct BatchJson {
    pub base_offset: i64,
    pub last_offset: i64,
    /// "data" or "control".
    pub kind: &'static str,
    /// "commit", "abort" or null.
    pub control: Option<&'static str>,
    pub transactional_id: Option<String>,
    pub producer_id: i64,
    pub leader_epoch: u32,
    pub records: Vec<RecordJson>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RecordJson {
    pub offset: i64,
    pub key: Option<String>,
    pub value: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TransactionStateJson {
    pub id: String,
    pub state: &'static str,
    pub partitions: Vec<String>,
    pub first_offsets: BTreeMap<String, i64>,
    pub staged_offsets: BTreeMap<String, BTreeMap<String, i64>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct JournalState {
    pub frames: usize,
    pub bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RecoveryJson {
    pub journal_truncated_bytes: u64,
    pub logs_truncated: Vec<LogTruncationJson>,
    pub leaders_reelected: Vec<ReelectionJson>,
    pub completed: Vec<String>,
    pub markers_resent: Vec<MarkerJson>,
    pub left_open: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LogTruncationJson {
    pub topic: String,
    pub partition: u32,
    pub broker: u32,
    pub truncated_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReelectionJson {
    pub topic: String,
    pub partition: u32,
    pub old_leader: u32,
    pub new_leader: u32,
    pub leader_epoch: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct MarkerJson {
    pub txn: String,
    pub partition: String,
    pub control: &'static str,
    pub offset: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Consumers {
    pub read_uncommitted: BTreeMap<String, Vec<Option<String>>>,
    pub read_committed: BTreeMap<String, Vec<Option<String>>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PendingJson {
    pub action_step: usize,
    pub kind: &'static str,
    pub txn: Option<String>,
    pub waiting_for: Vec<u32>,
    pub queued_behind: Option<usize>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ErrorJson {
    pub step: usize,
    pub message: String,
}

/// Bytes as UTF-8 text; bytes that are not UTF-8 are escaped as `\xNN`.
pub fn text(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

impl State {
    /// The state of a driver now.
    pub fn of(driver: &Driver) -> Self {
        let cluster = driver.cluster();
        let mut partitions = Vec::new();
        let mut read_uncommitted = BTreeMap::new();
        let mut read_committed = BTreeMap::new();
        for tp in cluster.topic_partitions() {
            let Ok(set) = cluster.replica_set(&tp) else {
                continue;
            };
            let batches = cluster
                .leader_log(&tp)
                .and_then(|l| l.all_batches())
                .unwrap_or_default();
            let statuses = set.replicas();
            partitions.push(PartitionState {
                topic: tp.topic.clone(),
                partition: tp.partition,
                leader: set.leader(),
                leader_epoch: set.leader_epoch(),
                isr: set.isr(),
                log_start_offset: statuses
                    .iter()
                    .find(|r| r.is_leader)
                    .map_or(0, |r| r.log_start_offset),
                high_watermark: set.high_watermark(),
                last_stable_offset: cluster.last_stable_offset(&tp).unwrap_or(0),
                replicas: statuses
                    .iter()
                    .map(|r| ReplicaJson {
                        broker: r.broker,
                        log_end_offset: r.log_end_offset,
                        in_sync: r.in_sync,
                        stopped: r.stopped,
                        lag: r.lag,
                        ms_since_fetch: r.ms_since_fetch,
                    })
                    .collect(),
                batches: batches.iter().map(batch_json).collect(),
            });
            for (map, isolation) in [
                (&mut read_uncommitted, IsolationLevel::ReadUncommitted),
                (&mut read_committed, IsolationLevel::ReadCommitted),
            ] {
                let values = cluster
                    .fetch(&tp, 0, usize::MAX, isolation)
                    .map(|records| {
                        records
                            .iter()
                            .map(|r| r.value.as_deref().map(text))
                            .collect()
                    })
                    .unwrap_or_default();
                map.insert(tp.to_string(), values);
            }
        }
        let (journal, transactions) = cluster.with_state(|s| {
            let coordinator = s.transactions();
            (
                JournalState {
                    frames: coordinator.journal_frames().len(),
                    bytes: coordinator.journal_size(),
                },
                coordinator.current().map(transaction_json).collect(),
            )
        });
        let committed_offsets = cluster
            .offsets()
            .all()
            .into_iter()
            .map(|(g, offsets)| {
                (
                    g,
                    offsets
                        .into_iter()
                        .map(|(tp, o)| (tp.to_string(), o))
                        .collect(),
                )
            })
            .collect();
        Self {
            step: driver.step(),
            clock_ms: driver.clock_ms(),
            rules: driver.rules().to_string(),
            partitions,
            transactions,
            committed_offsets,
            journal,
            last_recovery: driver.last_recovery().map(recovery_json),
            consumers: Consumers {
                read_uncommitted,
                read_committed,
            },
            pending: driver
                .pending()
                .into_iter()
                .map(|p| PendingJson {
                    action_step: p.action_step,
                    kind: p.kind,
                    txn: p.txn,
                    waiting_for: p.waiting_for,
                    queued_behind: p.queued_behind,
                })
                .collect(),
            errors: driver
                .errors()
                .iter()
                .map(|e| ErrorJson {
                    step: e.step,
                    message: e.message.clone(),
                })
                .collect(),
        }
    }

    /// The state as one line of JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("state serialises")
    }
}

fn batch_json(b: &RecordBatch) -> BatchJson {
    BatchJson {
        base_offset: b.base_offset,
        last_offset: b.last_offset(),
        kind: if b.is_control() { "control" } else { "data" },
        control: b.control.map(|c| c.name()),
        transactional_id: b.transactional_id.clone(),
        producer_id: b.producer_id,
        leader_epoch: b.leader_epoch,
        records: b
            .consumer_records(b.base_offset)
            .map(|r| RecordJson {
                offset: r.offset,
                key: r.key.as_deref().map(text),
                value: r.value.as_deref().map(text),
            })
            .collect(),
    }
}

fn tp_key(tp: &TopicPartition) -> String {
    tp.to_string()
}

fn transaction_json(d: &TransactionData) -> TransactionStateJson {
    TransactionStateJson {
        id: d.id.clone(),
        state: d.state.name(),
        partitions: d.partitions.iter().map(tp_key).collect(),
        first_offsets: d
            .first_offsets
            .iter()
            .map(|(tp, o)| (tp_key(tp), *o))
            .collect(),
        staged_offsets: d
            .staged_offsets
            .iter()
            .map(|(g, offsets)| {
                (
                    g.clone(),
                    offsets.iter().map(|(tp, o)| (tp_key(tp), *o)).collect(),
                )
            })
            .collect(),
    }
}

fn recovery_json(r: &RecoveryReport) -> RecoveryJson {
    RecoveryJson {
        journal_truncated_bytes: r.journal_truncated_bytes,
        logs_truncated: r
            .logs_truncated
            .iter()
            .map(|t| LogTruncationJson {
                topic: t.tp.topic.clone(),
                partition: t.tp.partition,
                broker: t.broker,
                truncated_bytes: t.truncated_bytes,
            })
            .collect(),
        leaders_reelected: r
            .leaders_reelected
            .iter()
            .map(|e| ReelectionJson {
                topic: e.tp.topic.clone(),
                partition: e.tp.partition,
                old_leader: e.old_leader,
                new_leader: e.new_leader,
                leader_epoch: e.leader_epoch,
            })
            .collect(),
        completed: r.completed.iter().map(|c| c.id.clone()).collect(),
        markers_resent: r
            .markers_resent
            .iter()
            .map(|m| MarkerJson {
                txn: m.id.clone(),
                partition: m.tp.to_string(),
                control: m.control.name(),
                offset: m.offset,
            })
            .collect(),
        left_open: r.left_open.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_utf8_text_with_other_bytes_escaped() {
        assert_eq!(text("pending é".as_bytes()), "pending é");
        assert_eq!(text(&[b'a', 0xff, b'b', 0xc3]), "a\\xffb\\xc3");
    }
}
