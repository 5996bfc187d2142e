//! `View`: a snapshot of engine and session state for one frame (SPEC §2:
//! panes are pure renderers of a View). Building it reads only what a frame
//! can show: batch windows come from the logs' in-memory batch summaries,
//! and record values are read from disk only for the rows a frame draws
//! ([`View::load_values`]), so the cost follows the screen, not the log size
//! (issue 7's P1).

use std::collections::BTreeMap;

use crate::engine::core::recovery::RecoveryReport;
use crate::engine::log::partition_log::BatchSummary;
use crate::engine::transaction::{JournalFrame, TransactionState};
use crate::engine::{IsolationLevel, RecordBatch, TopicPartition};
use crate::session::driver::{Driver, ErrorEvent, Event, PendingView};
use crate::session::recording::Caption;
use crate::session::state::text;

/// How many batches of each partition a view carries (the newest ones, or
/// from the scroll position).
pub const BATCH_WINDOW: usize = 64;
/// How many record values of each batch a view carries: the batch is read
/// only that far.
pub const VALUES_SHOWN: usize = 4;
/// How many journal frames, events and consumer values a view carries.
pub const TAIL: usize = 64;
/// How many batches from the start of a log the consumers' lists read at
/// most.
pub const SCAN_BATCHES: usize = 256;

/// One replica, as the replicas pane shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaView {
    pub broker: u32,
    pub is_leader: bool,
    pub log_end_offset: i64,
    pub lag: i64,
    pub ms_since_fetch: u64,
    pub in_sync: bool,
    pub stopped: bool,
}

/// How a batch stands for a read_committed consumer (the partitions pane
/// colours and labels it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchStatus {
    /// Visible to read_committed (plain data, or a committed transaction).
    Committed,
    /// Transactional data of an aborted transaction: filtered out.
    Aborted,
    /// Transactional data of an open (ONGOING or PREPARE_*) transaction.
    Open,
    /// A COMMIT or ABORT marker.
    Control,
    /// At or past the high watermark: not yet readable at all.
    AboveHighWatermark,
    /// In the read_uncommitted view: below the HW, so returned (open and
    /// aborted transactional data included).
    Visible,
}

/// One batch in a partition's window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchView {
    pub base_offset: i64,
    pub last_offset: i64,
    pub transactional_id: Option<String>,
    /// "commit" or "abort" for a marker.
    pub control: Option<&'static str>,
    pub producer_id: i64,
    pub leader_epoch: u32,
    pub status: BatchStatus,
    /// Record values as text (first few).
    pub values: Vec<String>,
    /// Why a read_committed consumer does or does not see it, in words.
    pub explanation: String,
}

/// One partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionView {
    pub tp: TopicPartition,
    pub leader: u32,
    pub leader_epoch: u32,
    pub isr: Vec<u32>,
    pub log_start_offset: i64,
    pub high_watermark: i64,
    pub last_stable_offset: i64,
    pub log_end_offset: i64,
    pub replicas: Vec<ReplicaView>,
    /// Total batches in the leader's log.
    pub batch_count: usize,
    /// A window of batches (at most [`BATCH_WINDOW`]), in offset order.
    pub batches: Vec<BatchView>,
}

/// One transaction (its latest instance).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionView {
    pub id: String,
    pub state: TransactionState,
    pub first_offsets: Vec<(TopicPartition, i64)>,
    pub staged_offsets: BTreeMap<String, BTreeMap<TopicPartition, i64>>,
}

/// Everything one frame can show.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    /// Whose eyes the partitions pane looks through (the `i` key).
    pub isolation: IsolationLevel,
    pub step: usize,
    /// Steps in the recording being replayed (None when live).
    pub total_steps: Option<usize>,
    pub clock_ms: u64,
    pub rules: String,
    pub title: String,
    pub partitions: Vec<PartitionView>,
    pub transactions: Vec<TransactionView>,
    pub committed_offsets: BTreeMap<String, BTreeMap<TopicPartition, i64>>,
    /// The journal's last frames, oldest first.
    pub journal_tail: Vec<JournalFrame>,
    pub journal_frames: usize,
    pub journal_bytes: u64,
    pub last_recovery: Option<RecoveryReport>,
    /// Values a fresh consumer reads from offset 0, per partition (first
    /// [`TAIL`]).
    pub read_uncommitted: BTreeMap<TopicPartition, Vec<String>>,
    pub read_committed: BTreeMap<TopicPartition, Vec<String>>,
    pub pending: Vec<PendingView>,
    /// The last events, oldest first.
    pub events: Vec<Event>,
    pub errors: Vec<ErrorEvent>,
    pub caption: Option<Caption>,
}

impl View {
    /// The view of a driver now. `caption` is the current step's caption.
    pub fn build(
        driver: &Driver,
        title: &str,
        total_steps: Option<usize>,
        caption: Option<Caption>,
        isolation: IsolationLevel,
    ) -> Self {
        let cluster = driver.cluster();
        let mut partitions = Vec::new();
        let mut read_uncommitted = BTreeMap::new();
        let mut read_committed = BTreeMap::new();
        let (transactions, journal_tail, journal_frames, journal_bytes) = cluster.with_state(|s| {
            let c = s.transactions();
            let frames = c.journal_frames();
            (
                c.current()
                    .map(|d| TransactionView {
                        id: d.id.clone(),
                        state: d.state,
                        first_offsets: d.first_offsets.clone(),
                        staged_offsets: d.staged_offsets.clone(),
                    })
                    .collect::<Vec<_>>(),
                frames[frames.len().saturating_sub(TAIL)..].to_vec(),
                frames.len(),
                c.journal_size(),
            )
        });
        for tp in cluster.topic_partitions() {
            let Some(view) = partition_view(driver, &tp, isolation) else {
                continue;
            };
            partitions.push(view);
            for (map, isolation) in [
                (&mut read_uncommitted, IsolationLevel::ReadUncommitted),
                (&mut read_committed, IsolationLevel::ReadCommitted),
            ] {
                // Bounded by the first SCAN_BATCHES batches: a frame never
                // reads more than that, however many batches the isolation
                // filter skips.
                let values = cluster
                    .with_state(|s| {
                        let set = s.partition(&tp)?;
                        let summaries = set.leader_replica().log.batch_summaries();
                        let cap = summaries
                            .get(SCAN_BATCHES)
                            .map_or(i64::MAX, |b| b.base_offset);
                        set.fetch_until(0, TAIL, isolation, s.transactions(), cap)
                    })
                    .map(|records| {
                        records
                            .iter()
                            .map(|r| value_text(r.value.as_deref()))
                            .collect()
                    })
                    .unwrap_or_default();
                map.insert(tp.clone(), values);
            }
        }
        let events = driver.events();
        Self {
            isolation,
            step: driver.step(),
            total_steps,
            clock_ms: driver.clock_ms(),
            rules: driver.rules().to_string(),
            title: title.to_string(),
            partitions,
            transactions,
            committed_offsets: cluster.offsets().all(),
            journal_tail,
            journal_frames,
            journal_bytes,
            last_recovery: driver.last_recovery().cloned(),
            read_uncommitted,
            read_committed,
            pending: driver.pending(),
            events: events[events.len().saturating_sub(TAIL)..].to_vec(),
            errors: driver.errors().to_vec(),
            caption,
        }
    }
}

impl View {
    /// Reads the first [`VALUES_SHOWN`] record values of the batches
    /// `wanted` ((partition, batch) indexes into `partitions`): only the
    /// rows a frame draws, so a frame's reads do not grow with the log or the
    /// batch window (SPEC §2, issue 7's P1). A batch that cannot be read
    /// (it is gone after a crash) keeps no values.
    pub fn load_values(&mut self, driver: &Driver, wanted: &[(usize, usize)]) {
        let cluster = driver.cluster();
        for &(p, b) in wanted {
            let Some(part) = self.partitions.get_mut(p) else {
                continue;
            };
            let Some(batch) = part.batches.get_mut(b) else {
                continue;
            };
            if batch.control.is_some() || !batch.values.is_empty() {
                continue;
            }
            let read = cluster.with_state(|s| {
                let set = s.partition(&part.tp)?;
                set.leader_replica()
                    .log
                    .read_batch_heads(batch.base_offset, 1, VALUES_SHOWN)
            });
            if let Some(head) = read.ok().and_then(|v| v.into_iter().next()) {
                batch.values = head
                    .records
                    .iter()
                    .map(|r| value_text(r.value.as_deref()))
                    .collect();
            }
        }
    }
}

/// One partition's view, read in one pass over the cluster state without
/// going through the engine's refresh path: drawing never changes the
/// engine (no ISR update, no timeout, no checkpoint write).
fn partition_view(
    driver: &Driver,
    tp: &TopicPartition,
    isolation: IsolationLevel,
) -> Option<PartitionView> {
    let now = driver.clock_ms();
    driver.cluster().with_state(|s| {
        let set = s.partition(tp).ok()?;
        let hw = set.high_watermark();
        let lso = s.last_stable_offset(tp).unwrap_or(hw);
        let log = &set.leader_replica().log;
        let summaries = log.batch_summaries();
        // The newest batches, from the in-memory summaries: no record is
        // read here; `load_values` reads the values of the rows drawn.
        let start = summaries.len().saturating_sub(BATCH_WINDOW);
        let batches = summaries[start..]
            .iter()
            .map(|summary| {
                let b = header_only(summary);
                let (status, explanation) = match isolation {
                    IsolationLevel::ReadCommitted => explain(s, tp, &b, hw, lso),
                    IsolationLevel::ReadUncommitted => explain_uncommitted(&b, hw),
                };
                BatchView {
                    base_offset: b.base_offset,
                    last_offset: b.last_offset(),
                    transactional_id: b.transactional_id,
                    control: b.control.map(|c| c.name()),
                    producer_id: b.producer_id,
                    leader_epoch: b.leader_epoch,
                    status,
                    values: Vec::new(),
                    explanation,
                }
            })
            .collect();
        Some(PartitionView {
            tp: tp.clone(),
            leader: set.leader(),
            leader_epoch: set.leader_epoch(),
            isr: set.isr().iter().copied().collect(),
            log_start_offset: log.log_start_offset(),
            high_watermark: hw,
            last_stable_offset: lso,
            log_end_offset: log.log_end_offset(),
            replicas: set
                .replica_statuses(now)
                .into_iter()
                .map(|r| ReplicaView {
                    broker: r.broker,
                    is_leader: r.is_leader,
                    log_end_offset: r.log_end_offset,
                    lag: r.lag,
                    ms_since_fetch: r.ms_since_fetch,
                    in_sync: r.in_sync,
                    stopped: r.stopped,
                })
                .collect(),
            batch_count: summaries.len(),
            batches,
        })
    })
}

/// A record's value as a view shows it (`null` for none).
fn value_text(value: Option<&[u8]>) -> String {
    value.map_or_else(|| "null".to_string(), text)
}

/// A batch without its records, from its summary: all that a batch's status
/// and explanation depend on.
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

/// A batch as a read_uncommitted consumer sees it: everything below the HW
/// but markers.
fn explain_uncommitted(b: &crate::engine::RecordBatch, hw: i64) -> (BatchStatus, String) {
    if b.is_control() {
        return (
            BatchStatus::Control,
            format!(
                "marker at offset {}: no consumer ever gets it",
                b.base_offset
            ),
        );
    }
    if b.base_offset >= hw {
        return (
            BatchStatus::AboveHighWatermark,
            format!(
                "offset {} >= HW {hw}: read_uncommitted stops at the HW",
                b.base_offset
            ),
        );
    }
    (
        BatchStatus::Visible,
        format!(
            "offset {} < HW {hw}: read_uncommitted returns it, whatever its transaction's fate",
            b.base_offset
        ),
    )
}

/// A batch's status for read_committed and the reason, in words: what the
/// dashboard shows when a batch is selected.
fn explain(
    s: &crate::engine::core::cluster::ClusterState,
    tp: &TopicPartition,
    b: &crate::engine::RecordBatch,
    hw: i64,
    lso: i64,
) -> (BatchStatus, String) {
    use crate::engine::replication::model::TransactionVisibility;
    if let Some(control) = b.control {
        return (
            BatchStatus::Control,
            format!(
                "{} marker of {} at offset {}: consumers never see it; it closes the transaction on {tp}",
                control.name().to_uppercase(),
                b.transactional_id.as_deref().unwrap_or("?"),
                b.base_offset
            ),
        );
    }
    if b.base_offset >= hw {
        return (
            BatchStatus::AboveHighWatermark,
            format!(
                "offset {} >= HW {hw}: not replicated to the whole ISR yet, no consumer sees it",
                b.base_offset
            ),
        );
    }
    let Some(id) = b.transactional_id.as_deref() else {
        if b.base_offset >= lso {
            return (
                BatchStatus::Open,
                format!(
                    "offset {} >= LSO {lso}: read_committed waits behind an open transaction",
                    b.base_offset
                ),
            );
        }
        return (
            BatchStatus::Committed,
            format!(
                "offset {} < LSO {lso}: plain data, visible to every consumer",
                b.base_offset
            ),
        );
    };
    let coordinator = s.transactions();
    match coordinator.owner(id, tp, b.base_offset).map(|d| d.state) {
        Some(state) if state.is_unstable() => (
            BatchStatus::Open,
            format!(
                "offset {} >= LSO {lso}: {id} is {}",
                b.base_offset,
                state.name().to_uppercase()
            ),
        ),
        Some(TransactionState::CompleteCommit)
            if coordinator.is_committed(tp, b) && b.base_offset >= lso =>
        {
            (
                BatchStatus::Open,
                format!(
                    "{id} committed, but offset {} >= LSO {lso}: read_committed waits behind an earlier open transaction",
                    b.base_offset
                ),
            )
        }
        Some(TransactionState::CompleteCommit) if coordinator.is_committed(tp, b) => (
            BatchStatus::Committed,
            match marker_after(s, tp, id, b.base_offset) {
                Some(m) => format!("committed by the marker at offset {m}"),
                None => format!("{id} is COMPLETE_COMMIT in the journal (its marker is missing)"),
            },
        ),
        Some(_) => (
            BatchStatus::Aborted,
            match marker_after(s, tp, id, b.base_offset) {
                Some(m) => format!("aborted by the marker at offset {m}"),
                None => format!("{id} is COMPLETE_ABORT in the journal (its marker is missing)"),
            },
        ),
        None => (
            BatchStatus::Aborted,
            format!("{id} has no journaled write here: never committed"),
        ),
    }
}

/// The offset of the first marker of `id` on `tp` after `offset`.
fn marker_after(
    s: &crate::engine::core::cluster::ClusterState,
    tp: &TopicPartition,
    id: &str,
    offset: i64,
) -> Option<i64> {
    let set = s.partition(tp).ok()?;
    let summaries = set.leader_replica().log.batch_summaries();
    let start = summaries.partition_point(|b| b.base_offset <= offset);
    summaries[start..]
        .iter()
        .find(|b| b.control.is_some() && b.transactional_id.as_deref() == Some(id))
        .map(|b| b.base_offset)
}
