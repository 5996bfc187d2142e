//! The engine's transactions as Kafka's admin APIs describe them
//! (ListTransactions, DescribeTransactions, DescribeProducers;
//! docs/kafka-mapping.md "Open transactions over the admin APIs"): one
//! read of the coordinator (E10) and the wire's producer table, in
//! Kafka's terms, so the three handlers agree with each other and with
//! the LSO that ListOffsets reports (E11).
//!
//! - The state is the engine's, under Kafka's name (`Ongoing`,
//!   `PrepareCommit`, …). A transactional id the wire gave a producer id
//!   (InitProducerId under the book's rules) but that has no transaction
//!   in the engine yet is `Empty`, as Kafka's coordinator holds it.
//! - The producer id and epoch are the engine's (`--rules kafka`, E14).
//!   The book's transactions have none: -1 and -1 (Kafka's
//!   `NO_PRODUCER_ID`), as the log's batches carry them, even when the
//!   wire gave the client an id of its own.
//! - The partitions are Kafka's: while `Ongoing`, every partition the
//!   transaction wrote, has a write waiting for its acks, or (a wire
//!   client) added with AddPartitionsToTxn; while `Prepare*`, those whose
//!   marker is not written yet; once `Complete*`, none.
//!   "Marker written" is Kafka's: replicated, below the HW (the
//!   coordinator drops a partition when its WriteTxnMarkers append, sent
//!   with acks=all, answers).
//! - A partition's transaction start (DescribeProducers'
//!   `current_txn_start_offset`) is the first offset the transaction wrote
//!   there, its writes waiting for acks included, while it is `Ongoing` or
//!   `Prepare*`: exactly what holds that partition's LSO back in the
//!   engine (E11), which keeps every partition of a deciding transaction
//!   unstable until the transaction completes. Kafka clears it when the
//!   marker is appended and keeps the LSO back until the marker is
//!   replicated (its "unreplicated transactions"); the engine's
//!   transaction completes when its markers are replicated, so the two
//!   differ only while some markers are replicated and others not.

use std::collections::{BTreeMap, BTreeSet};

use crate::kafka::broker::{ClusterState, TopicPartition, TransactionState};
use crate::kafka::producers::ProducerTable;

/// Kafka's state names (`TransactionState` in Kafka's coordinator).
pub fn kafka_state(s: TransactionState) -> &'static str {
    match s {
        TransactionState::Ongoing => "Ongoing",
        TransactionState::PrepareCommit => "PrepareCommit",
        TransactionState::PrepareAbort => "PrepareAbort",
        TransactionState::CompleteCommit => "CompleteCommit",
        TransactionState::CompleteAbort => "CompleteAbort",
    }
}

/// Every state name Kafka's coordinator knows (ListTransactions' filter
/// accepts these; the engine never has the last two).
pub const KAFKA_STATES: &[&str] = &[
    "Empty",
    "Ongoing",
    "PrepareCommit",
    "PrepareAbort",
    "CompleteCommit",
    "CompleteAbort",
    "Dead",
    "PrepareEpochFence",
];

/// One transactional id as Kafka's coordinator would describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnView {
    pub id: String,
    /// Kafka's name of the state.
    pub state: &'static str,
    pub producer_id: i64,
    pub producer_epoch: i16,
    /// The engine's clock at `begin` (kafka rules; milliseconds since the
    /// cluster started, not Unix time: DescribeTransactions translates
    /// it), else -1.
    pub start_ms: i64,
    /// The partitions DescribeTransactions lists, in (topic, partition)
    /// order.
    pub partitions: Vec<TopicPartition>,
    /// Where the open transaction starts on each partition it holds back.
    pub starts: BTreeMap<TopicPartition, i64>,
}

/// The view of every transactional id: the engine's latest instances, then
/// the wire's ids without one (`Empty`), by id.
pub fn views(s: &ClusterState, producers: &ProducerTable) -> Vec<TxnView> {
    let c = s.transactions();
    let mut latest: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, d) in c.instances().iter().enumerate() {
        latest.insert(d.id.as_str(), i);
    }
    let mut out: BTreeMap<String, TxnView> = BTreeMap::new();
    for d in c.current() {
        let (producer_id, producer_epoch) = d.producer.map_or((-1, -1), |(id, epoch)| {
            (id, i16::try_from(epoch).unwrap_or(i16::MAX))
        });
        // A partition is done once its marker is replicated (below the
        // HW): Kafka's coordinator drops it from the transaction when the
        // WriteTxnMarkers append (acks=all) answers.
        let done: BTreeSet<TopicPartition> = c
            .markers_of(&d.id)
            .into_iter()
            .filter(|(tp, offset)| s.partition(tp).is_ok_and(|p| *offset < p.high_watermark()))
            .map(|(tp, _)| tp)
            .collect();
        let mut starts: BTreeMap<TopicPartition, i64> = BTreeMap::new();
        if d.state.is_unstable() {
            for (tp, first) in &d.first_offsets {
                starts.insert(tp.clone(), *first);
            }
            for (tp, offset) in c.pending_sends_of(&d.id) {
                let e = starts.entry(tp).or_insert(offset);
                *e = (*e).min(offset);
            }
        }
        let mut touched: BTreeSet<TopicPartition> = starts.keys().cloned().collect();
        let partitions: Vec<TopicPartition> = match d.state {
            TransactionState::Ongoing => {
                let wire = producers
                    .transactional
                    .get(&d.id)
                    .and_then(|p| p.open.as_ref())
                    .filter(|o| latest.get(d.id.as_str()) == Some(&o.instance));
                if let Some(open) = wire {
                    touched.extend(open.partitions.iter().cloned());
                }
                touched.into_iter().collect()
            }
            TransactionState::PrepareCommit | TransactionState::PrepareAbort => touched
                .into_iter()
                .filter(|tp| !done.contains(tp))
                .collect(),
            TransactionState::CompleteCommit | TransactionState::CompleteAbort => Vec::new(),
        };
        out.insert(
            d.id.clone(),
            TxnView {
                id: d.id.clone(),
                state: kafka_state(d.state),
                producer_id,
                producer_epoch,
                start_ms: d
                    .started_ms
                    .and_then(|m| i64::try_from(m).ok())
                    .unwrap_or(-1),
                partitions,
                starts,
            },
        );
    }
    for (id, p) in &producers.transactional {
        out.entry(id.clone()).or_insert_with(|| TxnView {
            id: id.clone(),
            state: "Empty",
            producer_id: p.producer_id,
            producer_epoch: p.epoch,
            start_ms: -1,
            partitions: Vec::new(),
            starts: BTreeMap::new(),
        });
    }
    out.into_values().collect()
}
