//! What the wire protocol keeps of idempotent and transactional clients
//! (issue 14 items 2 and 4): the producer id and epoch each was given by
//! InitProducerId, the transaction it has open in the engine, the
//! partitions and groups it added to it, and the sequence numbers of its
//! recent batches per partition.
//!
//! The engine keeps its own state of all of this (E7 producer state, E10
//! the transaction journal); this table is the edge's map from a client's
//! ids onto the engine's actions (docs/kafka-protocol.md, *Producer ids
//! and epochs*). It is not part of a recording: a replay applies the
//! actions, not the requests.
//!
//! Ordered maps only, so what it holds never depends on hash order.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::engine::TopicPartition;

/// Producer ids the server gives out itself start here; the engine's own
/// ids (its named producers, and transactional ids under `--rules kafka`)
/// count up from 0, so the two are told apart at a glance.
pub const FIRST_SERVER_PRODUCER_ID: i64 = 1000;

/// Batches remembered per producer and partition for retries, as Kafka
/// (and E7) keeps 5.
pub const RECENT_BATCHES: usize = 5;

/// A batch a client sent, as its sequence numbers and where it landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentBatch {
    pub first_sequence: i32,
    pub last_sequence: i32,
    pub base_offset: i64,
}

/// One producer's sequences on one partition, for its current epoch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sequences {
    pub epoch: i16,
    pub recent: VecDeque<SentBatch>,
}

/// The verdict on an incoming batch's sequence numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SequenceVerdict {
    /// The next batch: append it.
    Next,
    /// An exact retry of a recent batch: answer with its offset.
    Duplicate(i64),
    /// A gap or an old sequence: refuse with OUT_OF_ORDER_SEQUENCE_NUMBER.
    OutOfOrder { expected: i32 },
}

impl Sequences {
    /// Checks a batch of `count` records from `base_sequence` at `epoch`
    /// (E7's rules at the edge: a new epoch starts at 0).
    pub fn check(&self, epoch: i16, base_sequence: i32, count: i32) -> SequenceVerdict {
        let last = base_sequence.wrapping_add(count - 1);
        if epoch != self.epoch || self.recent.is_empty() {
            return if base_sequence == 0 {
                SequenceVerdict::Next
            } else {
                SequenceVerdict::OutOfOrder { expected: 0 }
            };
        }
        if let Some(b) = self
            .recent
            .iter()
            .find(|b| b.first_sequence == base_sequence && b.last_sequence == last)
        {
            return SequenceVerdict::Duplicate(b.base_offset);
        }
        let expected = self
            .recent
            .back()
            .map_or(0, |b| b.last_sequence.wrapping_add(1));
        if base_sequence == expected {
            SequenceVerdict::Next
        } else {
            SequenceVerdict::OutOfOrder { expected }
        }
    }

    /// Notes a batch appended at `base_offset`.
    pub fn record(&mut self, epoch: i16, base_sequence: i32, count: i32, base_offset: i64) {
        if epoch != self.epoch {
            self.epoch = epoch;
            self.recent.clear();
        }
        self.recent.push_back(SentBatch {
            first_sequence: base_sequence,
            last_sequence: base_sequence.wrapping_add(count - 1),
            base_offset,
        });
        while self.recent.len() > RECENT_BATCHES {
            self.recent.pop_front();
        }
    }
}

/// An idempotent (not transactional) producer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotentProducer {
    pub epoch: i16,
    pub client_id: String,
    pub sequences: BTreeMap<TopicPartition, Sequences>,
    /// The driver steps of the appends of its recent batches that waited
    /// for acks=all, by partition and first sequence: a retry of a batch
    /// whose appends still wait is answered once they finish, as Kafka
    /// answers a duplicate once the original is replicated.
    pub appends: BTreeMap<(TopicPartition, i32), Vec<usize>>,
}

impl IdempotentProducer {
    /// Notes the steps of a batch's acks=all appends (none: nothing to
    /// wait for), keeping only the batches [`Sequences`] remembers.
    pub fn note_appends(&mut self, tp: &TopicPartition, first_sequence: i32, steps: Vec<usize>) {
        if !steps.is_empty() {
            self.appends.insert((tp.clone(), first_sequence), steps);
        }
        let recent = self.sequences.get(tp);
        self.appends.retain(|(t, seq), _| {
            t != tp || recent.is_some_and(|r| r.recent.iter().any(|b| b.first_sequence == *seq))
        });
    }

    /// The engine's named producer for this wire id and epoch: the
    /// `producer` field of its `produce` actions, naming the client.
    pub fn engine_name(&self, producer_id: i64) -> String {
        let client = if self.client_id.is_empty() {
            "client"
        } else {
            &self.client_id
        };
        if self.epoch == 0 {
            format!("{client}#{producer_id}")
        } else {
            format!("{client}#{producer_id}.{}", self.epoch)
        }
    }
}

/// The transaction a transactional client has open in the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenTxn {
    /// The engine's instance (its index among the coordinator's
    /// instances), so that an instance the cluster ended or replaced is
    /// noticed.
    pub instance: usize,
    /// Partitions added with AddPartitionsToTxn.
    pub partitions: BTreeSet<TopicPartition>,
    /// Groups added with AddOffsetsToTxn.
    pub groups: BTreeSet<String>,
}

impl OpenTxn {
    pub fn new(instance: usize) -> Self {
        Self {
            instance,
            partitions: BTreeSet::new(),
            groups: BTreeSet::new(),
        }
    }

    /// Whether the client has put anything in it yet.
    pub fn used(&self) -> bool {
        !self.partitions.is_empty() || !self.groups.is_empty()
    }
}

/// How a transactional client's last transaction ended, for an EndTxn
/// retried after its answer was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Committed,
    Aborted,
}

/// A transactional producer: one per transactional id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnProducer {
    pub producer_id: i64,
    pub epoch: i16,
    pub client_id: String,
    pub open: Option<OpenTxn>,
    pub last_ended: Option<Ended>,
    pub sequences: BTreeMap<TopicPartition, Sequences>,
}

/// Every producer the server has given an id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProducerTable {
    pub idempotent: BTreeMap<i64, IdempotentProducer>,
    pub transactional: BTreeMap<String, TxnProducer>,
    next_id: Option<i64>,
}

impl ProducerTable {
    /// The next producer id the server gives out itself.
    pub fn allocate_id(&mut self) -> i64 {
        let id = self.next_id.unwrap_or(FIRST_SERVER_PRODUCER_ID);
        self.next_id = Some(id + 1);
        id
    }

    /// InitProducerId without a transactional id: a new idempotent
    /// producer, or (KIP-360, a client that names its id and epoch) the
    /// same id at the next epoch. Returns the id and epoch.
    pub fn init_idempotent(&mut self, client_id: &str, known: Option<(i64, i16)>) -> (i64, i16) {
        if let Some((id, epoch)) = known
            && let Some(p) = self.idempotent.get_mut(&id)
            && p.epoch == epoch
        {
            p.epoch = epoch.saturating_add(1);
            p.sequences.clear();
            p.appends.clear();
            return (id, p.epoch);
        }
        let id = self.allocate_id();
        self.idempotent.insert(
            id,
            IdempotentProducer {
                epoch: 0,
                client_id: client_id.to_string(),
                sequences: BTreeMap::new(),
                appends: BTreeMap::new(),
            },
        );
        (id, 0)
    }

    /// Registers (or re-registers, at a new epoch) the transactional
    /// producer of `txn` with the given identity; forgets its sequences.
    pub fn init_transactional(
        &mut self,
        txn: &str,
        client_id: &str,
        (producer_id, epoch): (i64, i16),
        open: Option<OpenTxn>,
    ) {
        self.transactional.insert(
            txn.to_string(),
            TxnProducer {
                producer_id,
                epoch,
                client_id: client_id.to_string(),
                open,
                last_ended: None,
                sequences: BTreeMap::new(),
            },
        );
    }

    /// The identity the server itself gives `txn` next (book rules, where
    /// the engine gives transactions none): the same id at the next epoch,
    /// or a new id at epoch 0.
    pub fn next_transactional_identity(&mut self, txn: &str) -> (i64, i16) {
        match self.transactional.get(txn) {
            Some(p) => (p.producer_id, p.epoch.saturating_add(1)),
            None => (self.allocate_id(), 0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_follow_e7_at_the_edge() {
        let mut s = Sequences::default();
        assert_eq!(
            s.check(0, 3, 1),
            SequenceVerdict::OutOfOrder { expected: 0 }
        );
        assert_eq!(s.check(0, 0, 2), SequenceVerdict::Next);
        s.record(0, 0, 2, 10);
        assert_eq!(s.check(0, 0, 2), SequenceVerdict::Duplicate(10));
        assert_eq!(
            s.check(0, 3, 1),
            SequenceVerdict::OutOfOrder { expected: 2 }
        );
        assert_eq!(s.check(0, 2, 1), SequenceVerdict::Next);
        assert_eq!(
            s.check(1, 0, 1),
            SequenceVerdict::Next,
            "a new epoch starts at 0"
        );
        for i in 0..7 {
            s.record(0, 2 + i, 1, 12 + i64::from(i));
        }
        assert_eq!(s.recent.len(), RECENT_BATCHES);
        assert_eq!(s.check(0, 8, 1), SequenceVerdict::Duplicate(18));
        assert!(matches!(
            s.check(0, 2, 1),
            SequenceVerdict::OutOfOrder { .. }
        ));
    }

    #[test]
    fn ids_are_the_servers_own_and_epochs_bump_for_a_known_producer() {
        let mut t = ProducerTable::default();
        assert_eq!(t.init_idempotent("rdkafka", None), (1000, 0));
        assert_eq!(t.init_idempotent("rdkafka", None), (1001, 0));
        assert_eq!(t.init_idempotent("rdkafka", Some((1000, 0))), (1000, 1));
        assert_eq!(
            t.init_idempotent("rdkafka", Some((1000, 0))),
            (1002, 0),
            "a stale epoch gets a new producer"
        );
        assert_eq!(t.idempotent[&1000].engine_name(1000), "rdkafka#1000.1");
        assert_eq!(t.idempotent[&1001].engine_name(1001), "rdkafka#1001");
        assert_eq!(t.next_transactional_identity("tx"), (1003, 0));
        t.init_transactional("tx", "c", (1003, 0), None);
        assert_eq!(t.next_transactional_identity("tx"), (1003, 1));
    }
}
