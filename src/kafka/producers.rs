//! What the wire protocol keeps of transactional clients: the producer id
//! and epoch each transactional id was given by InitProducerId, the
//! transaction it has open in the engine, the partitions and groups it
//! added to it, and (the book's rules only, where a transaction's batches
//! carry no producer id) the sequence numbers of its recent batches.
//!
//! The engine keeps its own state of the rest (E7 producer state, E10 the
//! transaction journal), and after a restart this table is filled again
//! from it ([`crate::kafka::handlers::txn_client::recall`]). It is not part
//! of a recording: a replay applies the actions, not the requests
//! (docs/kafka-protocol.md, *Producer ids and epochs*).
//!
//! Ordered maps only, so what it holds never depends on hash order.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::engine::TopicPartition;
use crate::kafka::producer_ids::ProducerIds;
use crate::session::Driver;
use crate::session::SessionError;

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
    /// (E7's rules at the edge: a new epoch starts at 0; with nothing
    /// known, any sequence is taken, as Kafka takes it).
    pub fn check(&self, epoch: i16, base_sequence: i32, count: i32) -> SequenceVerdict {
        let last = base_sequence.wrapping_add(count - 1);
        if self.recent.is_empty() {
            return SequenceVerdict::Next;
        }
        if epoch != self.epoch {
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
    /// Open across a restart: the client's recent sequences in it are
    /// lost, so a batch it retries could not be told from a new one.
    pub recalled: bool,
}

impl OpenTxn {
    pub fn new(instance: usize) -> Self {
        Self {
            instance,
            partitions: BTreeSet::new(),
            groups: BTreeSet::new(),
            recalled: false,
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
    /// The client began a transaction (AddPartitionsToTxn or
    /// AddOffsetsToTxn) that the engine did not open (a failed `begin`):
    /// its abort ends nothing.
    pub attempting: bool,
    pub sequences: BTreeMap<TopicPartition, Sequences>,
}

/// The transactional producers the server has given an id, and where
/// ids come from. Idempotent producers need no entry: their batches carry
/// their identity into the engine, whose producer state (E7) judges them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProducerTable {
    pub transactional: BTreeMap<String, TxnProducer>,
    /// Opened from the data directory at the first id given.
    ids: Option<ProducerIds>,
}

impl ProducerTable {
    /// The next producer id the server gives out itself, never one given
    /// before, across restarts too ([`ProducerIds`]).
    pub fn allocate_id(&mut self, driver: &Driver) -> Result<i64, SessionError> {
        self.ids(driver)?.allocate()
    }

    /// The server's ids, opened from `driver`'s data directory.
    pub fn ids(&mut self, driver: &Driver) -> Result<&mut ProducerIds, SessionError> {
        if self.ids.is_none() {
            let floor = driver.cluster().with_state(|s| {
                let in_logs = s.partitions().values().filter_map(|set| {
                    let state = &set.leader().producer_state;
                    state.producers().keys().next_back().copied()
                });
                let in_journal = s
                    .transactions()
                    .instances()
                    .iter()
                    .filter_map(|d| d.producer.map(|(id, _)| id))
                    .collect::<Vec<_>>();
                in_logs.chain(in_journal).max().map_or(0, |id| id + 1)
            });
            let sync = driver.cluster().config().sync_writes;
            self.ids = Some(ProducerIds::open(driver.data_dir(), floor, sync)?);
        }
        Ok(self.ids.as_mut().expect("opened above"))
    }

    /// InitProducerId without a transactional id: a new producer id at
    /// epoch 0, always, as Kafka's coordinator answers it (a client that
    /// names its id and epoch, KIP-360, gets a new id too; an idempotent
    /// client bumps its epoch by itself, which E7 accepts from sequence 0).
    pub fn init_idempotent(&mut self, driver: &Driver) -> Result<(i64, i16), SessionError> {
        Ok((self.allocate_id(driver)?, 0))
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
                attempting: false,
                sequences: BTreeMap::new(),
            },
        );
    }

    /// The identity the server itself gives `txn` next (book rules, where
    /// the engine gives transactions none): the same id at the next epoch,
    /// or a new id at epoch 0; persisted before it is returned.
    pub fn next_transactional_identity(
        &mut self,
        driver: &Driver,
        txn: &str,
    ) -> Result<(i64, i16), SessionError> {
        let known = match self.transactional.get(txn) {
            Some(p) => Some((p.producer_id, p.epoch)),
            None => self.ids(driver)?.transactional(txn),
        };
        let identity = match known {
            Some((id, epoch)) => (id, epoch.saturating_add(1)),
            None => (self.allocate_id(driver)?, 0),
        };
        self.ids(driver)?.set_transactional(txn, identity)?;
        Ok(identity)
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
            SequenceVerdict::Next,
            "nothing known (a restart): the client's sequence is taken"
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
}
