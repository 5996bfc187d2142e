//! The one snapshot builder: reads a driver's cluster under one lock through
//! `BrokerCluster::with_state`, which never runs the engine's refresh path, so
//! building a snapshot changes nothing: no ISR update, no transaction timeout,
//! no checkpoint write. Reading the state twice gives the same bytes and
//! leaves the data directory as it was.
//!
//! [`Bounds`] says how much to read. `mk-tui state` reads everything
//! ([`Bounds::FULL`]); a frame reads what a screen can show
//! ([`Bounds::FRAME`]): batch windows come from the logs' in-memory summaries
//! and record values are read only for the rows a frame draws
//! ([`load_values`]), so a frame's cost follows the screen, not the log size
//! (P1).

use std::collections::BTreeMap;

use crate::engine::core::cluster::ClusterState;
use crate::engine::core::cluster::reader_cache::LeaderAt;
use crate::engine::core::metadata::{TimestampType, TopicMetadata};
use crate::engine::core::recovery::RecoveryReport;
use crate::engine::fault::TearReport;
use crate::engine::log::partition_log::{BatchSummary, PartitionLog};
use crate::engine::transaction::{TransactionData, TransactionState};
use crate::engine::vector_ext::VectorExt;
use crate::engine::{ControlType, IsolationLevel, RecordBatch, TopicPartition};
use crate::session::driver::Driver;
use crate::session::said::Said;
use crate::session::snapshot::heads::HeadKey;
use crate::session::snapshot::values::{Records, Values};
use crate::session::snapshot::{
    AccumulatingBatch, AccumulatorSnapshot, BATCH_WINDOW, BatchKind, BatchSnapshot, BrokerSnapshot,
    CompletionSnapshot, Consumers, ControlKind, ErrorSnapshot, EventSnapshot, Fate, GroupOffsets,
    JOURNAL_FILE, JournalFrameSnapshot, JournalSnapshot, LogTruncationSnapshot, MarkerSnapshot,
    Moment, PartitionSnapshot, PendingBatch, PendingSnapshot, ReaderCounts, RecordSnapshot,
    RecoverySnapshot, ReelectionSnapshot, ReplicaBatch, ReplicaSnapshot, Snapshot,
    SwapRepairSnapshot, TAIL, TopicConfigSnapshot, TornSnapshot, TransactionSnapshot, TxnState,
    VALUES_SHOWN, fate, text,
};

/// How much of the cluster a snapshot reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Newest batches kept per partition.
    pub batches: usize,
    /// Records read per kept batch (0: none; a frame loads the rows it
    /// draws with [`load_values`]).
    pub records: usize,
    /// Newest journal frames decoded.
    pub journal_frames: usize,
    /// Values listed per partition and isolation level.
    pub consumer_values: usize,
    /// Batches from the start of a log the consumer lists read at most.
    pub consumer_scan_batches: usize,
    /// Newest events kept.
    pub events: usize,
    /// Whether every batch kept says why it has its fate (`explanation`,
    /// `explanation_zh`). A frame's snapshot decides every fate but leaves
    /// the sentences empty: the one a frame shows is filled in by
    /// [`explain`] (docs/performance.md, "P1").
    pub explanations: bool,
}

impl Bounds {
    /// Everything: `mk-tui state`.
    pub const FULL: Bounds = Bounds {
        batches: usize::MAX,
        records: usize::MAX,
        journal_frames: usize::MAX,
        consumer_values: usize::MAX,
        consumer_scan_batches: usize::MAX,
        events: usize::MAX,
        explanations: true,
    };

    /// What one frame can show.
    pub const FRAME: Bounds = Bounds {
        batches: BATCH_WINDOW,
        records: 0,
        journal_frames: TAIL,
        consumer_values: TAIL,
        consumer_scan_batches: 256,
        events: TAIL,
        explanations: false,
    };
}

/// The snapshot of a driver now (title, total steps and caption empty: the
/// source that knows them fills them in).
pub fn build(driver: &Driver, bounds: &Bounds) -> Snapshot {
    let now = driver.clock_ms();
    let parts = driver
        .cluster()
        .with_state(|s| cluster_parts(s, now, bounds));
    let events = driver.events();
    let pending = driver.pending();
    let pending = driver.cluster().with_state(|s| {
        pending
            .into_iter()
            .map(|p| PendingSnapshot {
                action_step: p.action_step,
                kind: p.kind.to_string(),
                txn: p.txn,
                waiting_for: p.waiting_for,
                queued_behind: p.queued_behind,
                crash_after: p.crash_after,
                batches: p
                    .batches
                    .iter()
                    .map(|(tp, base)| pending_batch(s, tp, *base))
                    .collect(),
            })
            .collect()
    });
    Snapshot {
        step: driver.step(),
        clock_ms: now,
        rules: driver.rules().to_string(),
        brokers: parts.brokers,
        partitions: parts.partitions,
        transactions: parts.transactions,
        committed_offsets: parts.committed_offsets,
        groups: driver
            .cluster()
            .with_state(|s| super::groups::groups(s, driver.members())),
        journal: parts.journal,
        last_recovery: driver.last_recovery().map(recovery),
        consumers: parts.consumers,
        pending,
        errors: driver
            .errors()
            .iter()
            .map(|e| ErrorSnapshot {
                step: e.step,
                message: e.message.clone(),
                code: e.code.to_string(),
                zh: e.zh.clone(),
            })
            .collect(),
        events: events
            .newest(bounds.events)
            .into_iter()
            .map(|e| EventSnapshot {
                step: e.step,
                text: e.text.clone(),
                zh: e.zh.clone(),
            })
            .collect(),
        title: String::new(),
        total_steps: None,
        caption: None,
        captioned_steps: Vec::new(),
        present: Vec::new(),
        changes: Default::default(),
        moment_of_death: driver.last_moment().cloned().map(Box::new),
        before_recovery: false,
        listeners: Vec::new(),
        clients: Vec::new(),
        client_log: Vec::new(),
        fault_armed: None,
        unavailable: Vec::new(),
        accumulators: accumulators(driver),
    }
}

/// Every named producer's accumulator that holds records (E17).
fn accumulators(driver: &Driver) -> Vec<AccumulatorSnapshot> {
    driver
        .producers()
        .iter()
        .filter_map(|(name, producer)| {
            let acc = producer.accumulator();
            let batches: Vec<AccumulatingBatch> = acc
                .pending_partitions()
                .into_iter()
                .map(|p| AccumulatingBatch {
                    partition: p.topic_partition.to_string(),
                    records: p
                        .records
                        .iter()
                        .map(|r| r.value.as_deref().map(text))
                        .collect(),
                    bytes: p.bytes,
                    first_enqueue_ms: p.first_enqueue_ms,
                    linger_deadline_ms: p.first_enqueue_ms.saturating_add(acc.linger_ms),
                })
                .collect();
            (!batches.is_empty()).then(|| AccumulatorSnapshot {
                producer: name.clone(),
                batch_size: acc.batch_size,
                linger_ms: acc.linger_ms,
                max_buffer_bytes: acc.max_buffer_bytes,
                total_bytes: acc.total_bytes,
                batches,
            })
        })
        .collect()
}

/// The batch at `base` on `tp` as a pending operation names it, its last
/// offset from the leader's batch summaries (the base alone when the log
/// does not hold it).
fn pending_batch(s: &ClusterState, tp: &TopicPartition, base: i64) -> PendingBatch {
    let held = s.partition(tp).ok().and_then(|set| {
        let summaries = set.leader().log.batch_summaries();
        let i = summaries.partition_point(|b| b.base_offset < base);
        summaries
            .get(i)
            .filter(|b| b.base_offset == base)
            .map(|b| (b.last_offset, b.control.map(control_kind)))
    });
    PendingBatch {
        partition: tp.to_string(),
        base_offset: base,
        last_offset: held.map_or(base, |(last, _)| last),
        control: held.and_then(|(_, control)| control),
    }
}

/// How much a moment of death reads: a frame's bounds with the values of
/// the batches it keeps (a frame cannot load them later: by then recovery
/// has replaced the state they were read from). Taken once per crash.
pub const MOMENT_FRAME: Bounds = Bounds {
    records: VALUES_SHOWN,
    explanations: true,
    ..Bounds::FRAME
};

/// The moment of death (docs/dashboard.md "Crashes as moments"): the
/// cluster's parts of a snapshot of `s` at the instant of a crash, read
/// without changing anything, and what a tear did. Called by the crash
/// observer under the cluster's lock, before recovery.
pub fn moment(s: &ClusterState, now: u64, torn: Option<&TearReport>, bounds: &Bounds) -> Moment {
    let parts = cluster_parts(s, now, bounds);
    let torn = torn.map(|t| TornSnapshot {
        file: t
            .path
            .strip_prefix(&s.config().data_dir)
            .unwrap_or(&t.path)
            .display()
            .to_string(),
        size_before: t.size_before,
        size_after: t.size_after,
    });
    let mut journal = parts.journal;
    // The journal's size is the index's; a tear changed the file under it.
    if let Some(t) = torn.as_ref().filter(|t| t.file == JOURNAL_FILE) {
        journal.bytes = t.size_after;
    }
    Moment {
        clock_ms: now,
        brokers: parts.brokers,
        partitions: parts.partitions,
        transactions: parts.transactions,
        committed_offsets: parts.committed_offsets,
        journal,
        consumers: parts.consumers,
        torn,
    }
}

/// The parts of a snapshot that come from the cluster alone.
struct ClusterParts {
    brokers: Vec<BrokerSnapshot>,
    partitions: Vec<PartitionSnapshot>,
    consumers: Consumers,
    transactions: Vec<TransactionSnapshot>,
    journal: JournalSnapshot,
    committed_offsets: GroupOffsets,
}

/// Reads the cluster's parts of a snapshot from `s` (one lock, no refresh).
fn cluster_parts(s: &ClusterState, now: u64, bounds: &Bounds) -> ClusterParts {
    let mut ids = s.config().broker_ids.clone();
    ids.sort_unstable();
    ids.dedup();
    let brokers = ids
        .into_iter()
        .map(|id| BrokerSnapshot {
            id,
            stopped: s.stopped_brokers().contains(&id),
        })
        .collect();
    let mut partitions = Vec::new();
    let mut consumers = Consumers {
        read_uncommitted: BTreeMap::new(),
        read_committed: BTreeMap::new(),
        counts: BTreeMap::new(),
    };
    for tp in s.partitions().keys() {
        let Some(p) = partition(s, tp, now, bounds) else {
            continue;
        };
        let counts = reader_counts(s, tp, p.high_watermark, p.last_stable_offset);
        consumers.counts.insert(tp.to_string(), counts);
        partitions.push(p);
        for (map, isolation) in [
            (
                &mut consumers.read_uncommitted,
                IsolationLevel::ReadUncommitted,
            ),
            (&mut consumers.read_committed, IsolationLevel::ReadCommitted),
        ] {
            map.insert(tp.to_string(), consumer_values(s, tp, isolation, bounds));
        }
    }
    let c = s.transactions();
    let transactions = c.current().map(transaction).collect();
    let frames = c.journal_frames();
    let tail = frames
        .iter_from(frames.len().saturating_sub(bounds.journal_frames))
        .map(|f| JournalFrameSnapshot {
            number: f.number,
            offset: f.offset,
            len: f.len,
            crc: f.crc,
            // The index knows id and state; the rest is read back
            // from the frame's line (a frame that cannot be read
            // keeps only what the index knows).
            data: c.read_journal_frame(f).map_or_else(
                |_| TransactionSnapshot {
                    id: f.id.clone(),
                    state: txn_state(f.state),
                    partitions: Vec::new(),
                    first_offsets: BTreeMap::new(),
                    staged_offsets: BTreeMap::new(),
                    producer_id: None,
                    producer_epoch: None,
                    next_producer_epoch: None,
                },
                |d| transaction(&d),
            ),
        })
        .collect();
    let journal = JournalSnapshot {
        frames: frames.len(),
        bytes: c.journal_size(),
        tail,
    };
    let committed_offsets = s
        .offsets()
        .groups()
        .iter()
        .map(|(g, o)| {
            let o = o.iter().map(|(tp, v)| (tp.to_string(), *v)).collect();
            (g.clone(), o)
        })
        .collect();
    ClusterParts {
        brokers,
        partitions,
        consumers,
        transactions,
        journal,
        committed_offsets,
    }
}

/// A batch a frame draws: (partition, index into the partition's
/// `batches`, how many of its first records the frame draws).
pub type Wanted = (usize, usize, usize);

/// Reads the first records of the batches `wanted` (as many of each as the
/// frame draws: the partitions pane's [`VALUES_SHOWN`], the log pane's one
/// per cell): only what a frame draws, so a frame's reads do not grow with
/// the log or the batch window (SPEC §2, issue 7's P1). A record a frame
/// draws is always read, whichever of its batch it is; the cost is the
/// batch's head up to the last record drawn, and the log pane draws one
/// cell per record only when every offset of its window fits on screen. A
/// batch that cannot be read (it is gone after a crash) keeps no records;
/// one named twice is read once, as far as the furthest ask.
///
/// For each partition named in `wanted` it also reads the first values of
/// its replicas' divergent batches (their values are on no other replica,
/// so the leader's rows cannot stand for them), as many as the most the
/// frame draws of any batch of that partition. A divergent tail sits at
/// the end of a log, the end the log pane follows, and is short: it lasts
/// only until the replica's next fetch.
pub fn load_values(driver: &Driver, snapshot: &mut Snapshot, wanted: &[Wanted]) {
    values(driver, snapshot, wanted).write_into(snapshot);
}

/// The records of the batches `wanted` of `snapshot` (a snapshot of
/// `driver` now) that it does not carry: what a frame draws, read beside
/// the snapshot so that drawing copies no snapshot ([`Values`]). A batch
/// whose records the snapshot carries already is left out.
pub fn values(driver: &Driver, snapshot: &Snapshot, wanted: &[Wanted]) -> Values {
    let mut out = Values::default();
    // One ask per batch, as far as the furthest; in (partition, batch)
    // order (a frame's map gives them so already: sorting them is then a
    // pass). Sorted and merged rather than mapped: a frame asks a few
    // hundred.
    let mut asks: Vec<((usize, usize), usize)> =
        wanted.iter().map(|&(p, b, n)| ((p, b), n.max(1))).collect();
    asks.sort_unstable();
    asks.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            kept.1 = kept.1.max(later.1);
        }
        same
    });
    let mut per_part: Vec<(usize, usize)> = Vec::new();
    for &((p, _), n) in &asks {
        match per_part.last_mut() {
            Some((q, most)) if *q == p => *most = (*most).max(n),
            _ => per_part.push((p, n)),
        }
    }
    driver.cluster().with_state(|s| {
        for &(p, most) in &per_part {
            let Some(part) = snapshot.partitions.get(p) else {
                continue;
            };
            let tp = TopicPartition::new(&part.topic, part.partition);
            let Ok(set) = s.partition(&tp) else {
                continue;
            };
            let n = most.max(VALUES_SHOWN);
            for r in &part.replicas {
                let Ok(replica) = set.replica(r.broker) else {
                    continue;
                };
                for b in r.window() {
                    if b.divergent
                        && b.control.is_none()
                        && lacks(&b.records, b.last_offset - b.base_offset + 1, n)
                    {
                        let read = head(&replica.log, b.base_offset, n);
                        out.set_divergent(p, r.broker, b.base_offset, read);
                    }
                }
            }
        }
        // Each partition's asks together (`asks` is in (partition, batch)
        // order): its replica set and log found once, not once per batch.
        let mut asks = asks.iter().peekable();
        while let Some(&&((p, _), _)) = asks.peek() {
            let mut batches = Vec::new();
            while let Some(&((_, b), n)) = asks.next_if(|((q, _), _)| *q == p) {
                batches.push((b, n));
            }
            let Some(part) = snapshot.partitions.get(p) else {
                continue;
            };
            let Ok(set) = s.partition(&TopicPartition::new(&part.topic, part.partition)) else {
                continue;
            };
            let log = &set.leader().log;
            let summaries = log.batch_summaries();
            // A frame's window is the log's newest batches: batch `b` is
            // summary `first + b` unless the log moved since the snapshot
            // (then the search finds it).
            let first = part.batch_count.saturating_sub(part.batches.len());
            let mut focus = summaries.focus();
            for (b, n) in batches {
                let Some(batch) = part.batches.get(b) else {
                    continue;
                };
                if batch.kind == BatchKind::Control || !lacks(&batch.records, batch.len(), n) {
                    continue;
                }
                // The leader's summary of the batch names its payload: a
                // batch a frame drew before is not read again.
                let key = focus
                    .get(first + b)
                    .filter(|x| x.base_offset == batch.base_offset)
                    .or_else(|| log.summary_at(batch.base_offset))
                    .filter(|x| x.base_offset == batch.base_offset)
                    .map(|x| HeadKey {
                        partition: part.partition,
                        base_offset: x.base_offset,
                        last_offset: x.last_offset,
                        record_count: x.record_count,
                        crc: x.crc,
                    });
                if let Some(kept) = key.and_then(|k| driver.heads().get(&part.topic, &k, n)) {
                    out.set_batch(p, b, kept);
                    continue;
                }
                let read = log.read_batch_heads(batch.base_offset, 1, n);
                if let Some(head) = read.ok().and_then(|v| v.into_iter().next()) {
                    let read = Records::new(records(&head));
                    if let Some(key) = key {
                        driver.heads().put(&part.topic, key, n, &read);
                    }
                    out.set_batch(p, b, read);
                }
            }
        }
    });
    out
}

/// Says why batch `b` of partition `p` of `snapshot` (a snapshot of
/// `driver` now, built without [`Bounds::explanations`]) has its fate: the
/// explanation a frame shows for the selected batch, made for that batch
/// alone. A batch that has its sentence already, or that the driver's log
/// no longer holds, is left as it is.
pub fn explain(driver: &Driver, snapshot: &mut Snapshot, p: usize, b: usize) {
    let Some(part) = snapshot.partitions.get_mut(p) else {
        return;
    };
    let tp = TopicPartition::new(&part.topic, part.partition);
    let Some(batch) = part.batches.get_mut(b) else {
        return;
    };
    if !batch.explanation.is_empty() {
        return;
    }
    driver.cluster().with_state(|s| {
        let Ok(set) = s.partition(&tp) else {
            return;
        };
        let (hw, lso) = hw_and_lso(s, &tp, set.high_watermark());
        let log = &set.leader().log;
        if let Some(summary) = log
            .summary_at(batch.base_offset)
            .filter(|x| x.base_offset == batch.base_offset)
        {
            let (_, said) = fate::decide(s, &tp, summary, hw, lso);
            (batch.explanation, batch.explanation_zh) = (said.en, said.zh);
        }
    });
}

/// The partition's HW and LSO as a snapshot shows them: the LSO is the
/// coordinator's (E11), never above the HW, the same number the
/// read_committed fetch stops at.
fn hw_and_lso(s: &ClusterState, tp: &TopicPartition, hw: i64) -> (i64, i64) {
    (hw, s.last_stable_offset(tp).map_or(hw, |l| l.min(hw)))
}

/// Whether `records` (the first of a batch of `len` offsets) lack some of
/// the first `n`.
fn lacks(records: &[RecordSnapshot], len: i64, n: usize) -> bool {
    let want = usize::try_from(len).unwrap_or(usize::MAX).min(n);
    records.len() < want
}

/// One partition, read without going through the engine's refresh path.
fn partition(
    s: &ClusterState,
    tp: &TopicPartition,
    now: u64,
    bounds: &Bounds,
) -> Option<PartitionSnapshot> {
    let set = s.partition(tp).ok()?;
    let (hw, lso) = hw_and_lso(s, tp, set.high_watermark());
    let log = &set.leader().log;
    let summaries = log.batch_summaries();
    let start = summaries.len().saturating_sub(bounds.batches);
    let window = summaries.iter_from(start);
    let mut heads: BTreeMap<i64, RecordBatch> = BTreeMap::new();
    if bounds.records > 0
        && let Some(first) = window.clone().next()
        && let Ok(read) = log.read_batch_heads(first.base_offset, window.len(), bounds.records)
    {
        heads = read.into_iter().map(|b| (b.base_offset, b)).collect();
    }
    let batches = window
        .map(|summary| {
            let (fate, explanation) = if bounds.explanations {
                fate::decide(s, tp, summary, hw, lso)
            } else {
                (fate::fate_of(s, tp, summary, hw, lso), Said::default())
            };
            let (explanation, explanation_zh) = (explanation.en, explanation.zh);
            BatchSnapshot {
                base_offset: summary.base_offset,
                last_offset: summary.last_offset,
                kind: if summary.control.is_some() {
                    BatchKind::Control
                } else {
                    BatchKind::Data
                },
                control: summary.control.map(control_kind),
                transactional_id: summary.transactional_id.clone(),
                producer_id: summary.producer_id,
                producer_epoch: summary.producer_epoch,
                base_sequence: summary.base_sequence,
                leader_epoch: summary.leader_epoch,
                fate,
                explanation,
                explanation_zh,
                records: heads
                    .get(&summary.base_offset)
                    .map(records)
                    .unwrap_or_default(),
                compacted: match summary.control {
                    Some(_) => 0,
                    None => {
                        summary.last_offset - summary.base_offset + 1
                            - i64::from(summary.record_count)
                    }
                },
            }
        })
        .collect();
    let statuses = set.replica_statuses(now);
    Some(PartitionSnapshot {
        topic: tp.topic.clone(),
        partition: tp.partition,
        leader: set.leader_id(),
        leader_epoch: set.leader_epoch(),
        isr: set.isr().iter().copied().collect(),
        log_start_offset: log.log_start_offset(),
        high_watermark: hw,
        last_stable_offset: lso,
        log_end_offset: log.leo(),
        replicas: statuses
            .into_iter()
            .map(|r| ReplicaSnapshot {
                broker: r.broker,
                is_leader: r.is_leader,
                log_end_offset: r.log_end_offset,
                in_sync: r.in_sync,
                stopped: r.stopped,
                lag: r.lag,
                ms_since_fetch: r.ms_since_fetch,
                log: set
                    .replica(r.broker)
                    .map(|own| replica_log(&own.log, log, bounds))
                    .unwrap_or_default(),
                offset_lag: None,
                log_size_bytes: None,
            })
            .collect(),
        batch_count: summaries.len(),
        batches,
        config: s
            .metadata()
            .topics()
            .get(&tp.topic)
            .map(topic_config)
            .unwrap_or_default(),
    })
}

/// The topic's config in the snapshot's own terms.
fn topic_config(t: &TopicMetadata) -> TopicConfigSnapshot {
    let c = &t.config;
    TopicConfigSnapshot {
        cleanup_policy: (!c.cleanup_policy.is_delete())
            .then(|| c.cleanup_policy.kafka_name().into()),
        retention_ms: c.retention_ms,
        retention_bytes: c.retention_bytes,
        delete_retention_ms: c.delete_retention_ms,
        timestamp_type: (t.timestamp_type == TimestampType::LogAppendTime)
            .then(|| "LogAppendTime".into()),
        min_insync_replicas: c.min_insync_replicas,
    }
}

/// A replica's newest `bounds.batches` batches, from its log's in-memory
/// summaries, each marked divergent when it comes after the newest batch
/// the leader holds identically (offsets, epoch, CRC): the divergence
/// point a follower truncates to before it fetches (E6), so what is marked
/// here is exactly what the next fetch cuts. Only divergent batches' records
/// are read (`bounds.records` of them; none in a frame, see
/// [`load_values`]); the others' values are the leader's.
fn replica_log(own: &PartitionLog, leader: &PartitionLog, bounds: &Bounds) -> Vec<ReplicaBatch> {
    let summaries = own.batch_summaries();
    let window = summaries.iter_from(summaries.len().saturating_sub(bounds.batches));
    // The leader holds all of its own batches: none of them is divergent.
    let shared = window
        .clone()
        .rposition(|b| leader.holds(b))
        .map_or(0, |i| i + 1);
    window
        .enumerate()
        .map(|(i, b)| {
            let divergent = i >= shared;
            ReplicaBatch {
                base_offset: b.base_offset,
                last_offset: b.last_offset,
                leader_epoch: b.leader_epoch,
                control: b.control.map(control_kind),
                crc: b.crc,
                divergent,
                records: if divergent && b.control.is_none() && bounds.records > 0 {
                    head(own, b.base_offset, bounds.records)
                } else {
                    Vec::new()
                },
            }
        })
        .collect()
}

/// The first `max` records of the batch at `base` in `log` (none if it
/// cannot be read).
fn head(log: &PartitionLog, base: i64, max: usize) -> Vec<RecordSnapshot> {
    log.read_batch_heads(base, 1, max)
        .ok()
        .and_then(|v| v.into_iter().next())
        .map(|b| records(&b))
        .unwrap_or_default()
}

/// The values a fresh consumer at `isolation` reads from offset 0: the
/// engine's own fetch (E11), read-only, bounded by `bounds`. A partition
/// whose leader is stopped reads nothing.
fn consumer_values(
    s: &ClusterState,
    tp: &TopicPartition,
    isolation: IsolationLevel,
    bounds: &Bounds,
) -> Vec<Option<String>> {
    let Ok(set) = s.partition(tp) else {
        return Vec::new();
    };
    let summaries = set.leader().log.batch_summaries();
    let cap = summaries
        .get(bounds.consumer_scan_batches)
        .map_or(i64::MAX, |b| b.base_offset);
    let start = set.leader().log.log_start_offset();
    set.fetch_until(
        start.max(0),
        bounds.consumer_values,
        isolation,
        s.transactions(),
        cap,
    )
    .map(|records| {
        records
            .iter()
            .map(|r| r.value.as_deref().map(text))
            .collect()
    })
    .unwrap_or_default()
}

/// How many records a fresh consumer reads from the log's start at each
/// isolation level, whatever the frame lists: data below the HW
/// (read_uncommitted), and below the LSO only plain data and committed
/// transactions' (read_committed, by the batch's [`fate`], the rule the
/// engine's fetch applies, E11). From the in-memory batch summaries: no
/// record is read, so a frame's disk reads stay what it draws. A partition
/// whose leader is stopped reads nothing, as its lists.
///
/// The counts of the settled prefix of the log are kept in the cluster
/// state's reader cache (issue 17 item 11: walking every batch made each
/// frame, and so each step back, grow with history): the summaries that
/// lie wholly below the LSO. A batch there is below the HW,
/// and below the LSO its fate no longer changes while its summary stays:
/// its owner is a complete instance (the LSO stops at the first offset of
/// every unfinished one), or none, and a complete instance is never
/// written again (a new one begins instead); later instances, their first
/// offsets and their markers all lie past it. What would change it, a
/// truncation or a new leader, gives a new lineage of the log or another
/// leader epoch, and the cache does not answer. A plain crash's reopen
/// replays the same journal, so the same instances decide the prefix, and
/// the fold goes on where the reopened log begins with the folded
/// summaries (`ReaderCache::carry_across_crash`); a tear's reopen starts
/// empty (a torn journal can lose a deciding frame). Debug builds check
/// every answer against the whole walk.
fn reader_counts(s: &ClusterState, tp: &TopicPartition, hw: i64, lso: i64) -> ReaderCounts {
    let Ok(set) = s.partition(tp) else {
        return ReaderCounts::default();
    };
    let leader = set.leader();
    if leader.stopped {
        return ReaderCounts::default();
    }
    let start = leader.log.log_start_offset().max(0);
    let summaries = leader.log.batch_summaries();
    let at = LeaderAt {
        leader: set.leader_id(),
        leader_epoch: set.leader_epoch(),
        log_start: start,
    };
    let keep = summaries.partition_point(|b| b.last_offset < lso);
    let cache = s.reader_cache();
    let (from, folded) = cache
        .lookup(tp, at, &leader.log, keep)
        .unwrap_or((0, (0, 0)));
    let mut counts = ReaderCounts {
        read_uncommitted: folded.0,
        read_committed: folded.1,
    };
    let mut at_keep = (from == keep).then_some(counts);
    let mut folded = 0;
    for (i, b) in summaries.iter_from(from).enumerate() {
        if from + i == keep {
            at_keep = Some(counts);
        }
        if b.base_offset >= hw {
            break;
        }
        count_batch(s, tp, b, start, hw, lso, &mut counts);
        folded += 1;
    }
    cache.note_folded(folded);
    if keep == summaries.len() {
        at_keep = Some(counts);
    }
    if let Some(c) = at_keep.filter(|_| keep > from) {
        cache.store(
            tp,
            at,
            &leader.log,
            keep,
            (c.read_uncommitted, c.read_committed),
        );
    }
    debug_assert_eq!(
        counts,
        {
            let mut all = ReaderCounts::default();
            for b in summaries.iter().take_while(|b| b.base_offset < hw) {
                count_batch(s, tp, b, start, hw, lso, &mut all);
            }
            all
        },
        "the reader cache's counts of {tp}"
    );
    counts
}

/// Brings the reader cache of `driver`'s cluster up to date (see
/// [`reader_counts`]): a time-travel checkpoint calls it before taking its
/// memo, so that the first frame after a restore from it folds only what
/// came after its settled prefix, even when no frame was drawn before the
/// checkpoint (issue 17 item 11). It costs what a frame's counts cost:
/// the batches since the cache was last brought up to date.
pub fn warm_reader_cache(driver: &Driver) {
    driver.cluster().with_state(|s| {
        for (tp, set) in s.partitions() {
            let hw = set.high_watermark();
            let lso = s.last_stable_offset(tp).map_or(hw, |l| l.min(hw));
            reader_counts(s, tp, hw, lso);
        }
    });
}

/// Adds batch `b`'s records to what a fresh consumer reads from `start`
/// (see [`reader_counts`]); `b` begins below the HW.
fn count_batch(
    s: &ClusterState,
    tp: &TopicPartition,
    b: &BatchSummary,
    start: i64,
    hw: i64,
    lso: i64,
    counts: &mut ReaderCounts,
) {
    if b.control.is_some() {
        return;
    }
    // Offsets of the batch in [start, end).
    let within = |end: i64| -> usize {
        let (from, to) = (b.base_offset.max(start), (b.last_offset + 1).min(end));
        usize::try_from(to - from).unwrap_or(0)
    };
    counts.read_uncommitted += within(hw);
    let committed = b.base_offset < lso
        && (b.transactional_id.is_none() || fate::fate_of(s, tp, b, hw, lso) == Fate::Committed);
    if committed {
        counts.read_committed += within(lso);
    }
}

fn records(b: &RecordBatch) -> Vec<RecordSnapshot> {
    b.consumer_records(b.base_offset)
        .map(|r| RecordSnapshot {
            offset: r.offset,
            key: r.key.as_deref().map(text),
            value: r.value.as_deref().map(text),
            headers: r
                .headers
                .iter()
                .map(|h| (h.key.clone(), h.value.as_deref().map(text)))
                .collect(),
        })
        .collect()
}

fn control_kind(c: ControlType) -> ControlKind {
    match c {
        ControlType::Commit => ControlKind::Commit,
        ControlType::Abort => ControlKind::Abort,
    }
}

/// The snapshot's own name for a journal state.
pub(crate) fn txn_state(s: TransactionState) -> TxnState {
    match s {
        TransactionState::Ongoing => TxnState::Ongoing,
        TransactionState::PrepareCommit => TxnState::PrepareCommit,
        TransactionState::PrepareAbort => TxnState::PrepareAbort,
        TransactionState::CompleteCommit => TxnState::CompleteCommit,
        TransactionState::CompleteAbort => TxnState::CompleteAbort,
    }
}

fn partition_names(d: &TransactionData) -> Vec<String> {
    d.partitions.iter().map(TopicPartition::to_string).collect()
}

fn first_offsets(d: &TransactionData) -> BTreeMap<String, i64> {
    d.first_offsets
        .iter()
        .map(|(tp, o)| (tp.to_string(), *o))
        .collect()
}

fn staged_offsets(d: &TransactionData) -> GroupOffsets {
    d.staged_offsets
        .iter()
        .map(|(g, o)| {
            (
                g.clone(),
                o.iter().map(|(tp, v)| (tp.to_string(), *v)).collect(),
            )
        })
        .collect()
}

fn transaction(d: &TransactionData) -> TransactionSnapshot {
    TransactionSnapshot {
        id: d.id.clone(),
        state: txn_state(d.state),
        partitions: partition_names(d),
        first_offsets: first_offsets(d),
        staged_offsets: staged_offsets(d),
        producer_id: d.producer.map(|(id, _)| id),
        producer_epoch: d.producer.map(|(_, epoch)| epoch),
        next_producer_epoch: d.next_producer_epoch,
    }
}

fn recovery(r: &RecoveryReport) -> RecoverySnapshot {
    RecoverySnapshot {
        journal_truncated_bytes: r.journal_truncated_bytes,
        journal_reason: r.journal_reason.clone(),
        logs_truncated: r
            .logs_truncated
            .iter()
            .map(|t| LogTruncationSnapshot {
                topic: t.tp.topic.clone(),
                partition: t.tp.partition,
                broker: t.broker,
                truncated_bytes: t.truncated_bytes,
                reason: t.reason.clone(),
            })
            .collect(),
        leaders_reelected: r
            .leaders_reelected
            .iter()
            .map(|e| ReelectionSnapshot {
                topic: e.tp.topic.clone(),
                partition: e.tp.partition,
                old_leader: e.old_leader,
                new_leader: e.new_leader,
                leader_epoch: e.leader_epoch,
            })
            .collect(),
        completed: r.completed.iter().map(|c| c.id.clone()).collect(),
        completions: r
            .completed
            .iter()
            .map(|c| CompletionSnapshot {
                id: c.id.clone(),
                from: txn_state(c.from),
                to: txn_state(c.to),
            })
            .collect(),
        markers_resent: r
            .markers_resent
            .iter()
            .map(|m| MarkerSnapshot {
                txn: m.id.clone(),
                partition: m.tp.to_string(),
                control: control_kind(m.control),
                offset: m.offset,
            })
            .collect(),
        left_open: r.left_open.clone(),
        swaps_repaired: r
            .swaps_repaired
            .iter()
            .map(|w| SwapRepairSnapshot {
                topic: w.tp.topic.clone(),
                partition: w.tp.partition,
                broker: w.broker,
                repair: w.repair.name().to_string(),
                told: w.repair.describe().to_string(),
                told_zh: w.repair.describe_zh().to_string(),
            })
            .collect(),
    }
}
