//! The observed cluster as a [`Snapshot`] (docs/observe.md, the field
//! table): what Metadata, ListOffsets and the two fetches said, in the
//! snapshot's own types, and every field they cannot fill left at its
//! default and named in `unavailable`.

use std::collections::{BTreeMap, BTreeSet};

use crate::session::snapshot::{
    BatchKind, BatchSnapshot, BrokerSnapshot, Consumers, JournalSnapshot, PartitionSnapshot,
    ReplicaSnapshot, Snapshot, field,
};

use super::fate::{fates, read_committed_visible};
use super::fetch::Fetched;
use super::metadata::{Cluster, Partition};
use super::offsets::Offsets;

/// Fields no API the observer uses can fill, for every cluster
/// (`transactions` and `committed_offsets` are listed by
/// [`super::transactions`] and [`super::groups`] when the brokers do not
/// serve the APIs that fill them).
pub const ALWAYS_UNAVAILABLE: &[&str] = &[
    field::CLOCK_MS,
    field::JOURNAL,
    field::LAST_RECOVERY,
    field::PENDING,
    field::ERRORS,
    field::LOG_END_OFFSET,
    field::BATCH_COUNT,
    field::REPLICA_LOG_END_OFFSET,
    field::REPLICA_LAG,
    field::REPLICA_MS_SINCE_FETCH,
    field::REPLICA_LOG,
    field::BATCH_TRANSACTIONAL_ID,
    field::BATCH_EXPLANATION_ZH,
];

/// What was learnt of one partition.
#[derive(Debug, Clone)]
pub struct Observed {
    pub meta: Partition,
    pub offsets: Offsets,
    /// The offset the fetches started at.
    pub start: i64,
    pub read_uncommitted: Fetched,
    pub read_committed: Fetched,
}

/// The HW and LSO of `o`: the ones its fetches were told (the
/// read_uncommitted fetch's HW, the read_committed fetch's LSO), which a
/// consumer is told and stops at, else ListOffsets'. Where the two
/// disagree, `unavailable` names both (docs/observe.md "Fetch against
/// ListOffsets"): tansu 0.6.0's ListOffsets answers the newest batch's base
/// offset + 1 as latest, and 0 under read_committed while a transaction is
/// open.
fn watermarks(key: &str, o: &Observed, unavailable: &mut Vec<String>) -> (i64, i64) {
    let told = [
        (
            "high_watermark",
            o.offsets.high_watermark,
            o.read_uncommitted.watermarks.map(|w| w.0),
            "read_uncommitted",
        ),
        (
            "last_stable_offset",
            o.offsets.last_stable,
            o.read_committed.watermarks.map(|w| w.1),
            "read_committed",
        ),
    ];
    let [hw, lso] = told.map(|(name, listed, fetched, level)| match fetched {
        Some(fetched) if fetched != listed => {
            unavailable.push(format!(
                "partitions[{key}].{name} (ListOffsets {level} says {listed}, Fetch {level} says {fetched}: shown as Fetch says)"
            ));
            fetched
        }
        _ => listed,
    });
    (hw, lso)
}

/// The snapshot of `cluster` and its `partitions` (in Metadata's order),
/// titled after the bootstrap addresses.
pub fn assemble(bootstrap: &[String], cluster: &Cluster, partitions: Vec<Observed>) -> Snapshot {
    let mut unavailable: Vec<String> = ALWAYS_UNAVAILABLE.iter().map(|s| s.to_string()).collect();
    if !cluster.leader_epochs {
        unavailable.push(field::LEADER_EPOCH.into());
    }
    // No counts: an observed cluster's lists are what was fetched, and the
    // consumers pane counts them.
    let mut consumers = Consumers {
        read_uncommitted: BTreeMap::new(),
        read_committed: BTreeMap::new(),
        counts: BTreeMap::new(),
    };
    let mut out = Vec::new();
    for o in partitions {
        let (p, key) = (&o.meta, format!("{}-{}", o.meta.topic, o.meta.partition));
        let (hw, lso) = watermarks(&key, &o, &mut unavailable);
        let reached = o
            .read_uncommitted
            .batches
            .last()
            .map_or(o.start, |b| b.last_offset + 1);
        if o.start > o.offsets.log_start || reached < hw {
            // Only a tail was fetched: what a consumer from the start
            // reads is not all here.
            unavailable.push(format!(
                "partitions[{key}].batches outside {}..{reached}",
                o.start
            ));
            unavailable.push(format!("consumers[{key}]"));
        }
        let visible = read_committed_visible(&o.read_committed);
        let decided = fates(&o.read_uncommitted.batches, &visible, hw, lso);
        let mut batches = Vec::new();
        for b in &o.read_uncommitted.batches {
            if let Some(computed) = b.bad_crc {
                unavailable.push(format!(
                    "partitions[{key}].batches[{}].crc (stored {:#010x}, its bytes give {computed:#010x}: shown unchecked)",
                    b.base_offset, b.crc
                ));
            }
            let (fate, explanation) = decided[&b.base_offset].clone();
            batches.push(BatchSnapshot {
                base_offset: b.base_offset,
                last_offset: b.last_offset,
                kind: if b.control.is_some() {
                    BatchKind::Control
                } else {
                    BatchKind::Data
                },
                control: b.control,
                transactional_id: None,
                producer_id: b.producer_id,
                producer_epoch: i32::from(b.producer_epoch),
                base_sequence: b.base_sequence,
                leader_epoch: u32::try_from(b.leader_epoch).unwrap_or(0),
                fate,
                explanation,
                explanation_zh: String::new(),
                records: b.records.clone(),
                // Over the protocol a compacted batch's gaps are not told
                // from records cut by the fetch's size limit.
                compacted: 0,
            });
        }
        consumers
            .read_uncommitted
            .insert(key.clone(), values(o.read_uncommitted.batches.iter()));
        consumers.read_committed.insert(
            key.clone(),
            values(
                o.read_committed
                    .batches
                    .iter()
                    .filter(|b| visible.contains(&b.base_offset)),
            ),
        );
        let isr: BTreeSet<u32> = p.isr.iter().copied().collect();
        out.push(PartitionSnapshot {
            topic: p.topic.clone(),
            config: Default::default(),
            partition: p.partition,
            leader: p.leader,
            leader_epoch: p.leader_epoch,
            isr: p.isr.clone(),
            log_start_offset: o.offsets.log_start,
            high_watermark: hw,
            last_stable_offset: lso,
            log_end_offset: 0,
            replicas: p
                .replicas
                .iter()
                .map(|&broker| ReplicaSnapshot {
                    broker,
                    is_leader: broker == p.leader,
                    log_end_offset: 0,
                    in_sync: isr.contains(&broker),
                    stopped: p.offline.contains(&broker),
                    lag: 0,
                    ms_since_fetch: 0,
                    log: Vec::new(),
                    offset_lag: None,
                    log_size_bytes: None,
                })
                .collect(),
            // The log's own count is not on the wire (unavailable: null
            // in the JSON); `batches` holds those fetched.
            batch_count: 0,
            batches,
        });
    }
    Snapshot {
        step: 0,
        clock_ms: 0,
        rules: "observed".into(),
        brokers: brokers(cluster),
        partitions: out,
        transactions: Vec::new(),
        committed_offsets: BTreeMap::new(),
        groups: Vec::new(),
        journal: JournalSnapshot {
            frames: 0,
            bytes: 0,
            tail: Vec::new(),
        },
        last_recovery: None,
        consumers,
        pending: Vec::new(),
        errors: Vec::new(),
        events: Vec::new(),
        title: format!("observe {}", bootstrap.join(",")),
        total_steps: None,
        caption: None,
        captioned_steps: Vec::new(),
        present: Vec::new(),
        changes: Default::default(),
        moment_of_death: None,
        before_recovery: false,
        listeners: Vec::new(),
        clients: Vec::new(),
        client_log: Vec::new(),
        fault_armed: None,
        accumulators: Vec::new(),
        unavailable,
    }
}

/// The brokers Metadata lists, running; and any broker that only appears
/// as a replica, stopped (Kafka lists live brokers only).
fn brokers(cluster: &Cluster) -> Vec<BrokerSnapshot> {
    let listed: BTreeSet<u32> = cluster.brokers.iter().map(|b| b.id).collect();
    let mut all: BTreeMap<u32, bool> = listed.iter().map(|&id| (id, false)).collect();
    for p in &cluster.partitions {
        for r in &p.replicas {
            all.entry(*r).or_insert(true);
        }
    }
    all.into_iter()
        .map(|(id, stopped)| BrokerSnapshot { id, stopped })
        .collect()
}

/// The values of the data batches among `batches`, in offset order.
fn values<'a>(batches: impl Iterator<Item = &'a super::batches::WireBatch>) -> Vec<Option<String>> {
    batches
        .filter(|b| b.control.is_none())
        .flat_map(|b| b.records.iter().map(|r| r.value.clone()))
        .collect()
}
