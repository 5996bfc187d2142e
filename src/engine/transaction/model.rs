//! The book's `model.py`: `TransactionState` and `TransactionData` (E10),
//! and their journal JSON (FORMATS.md "Transaction journal"). Under the
//! kafka rules a transaction also carries its producer id, epoch and start
//! time (E14), written only when set: under the book's rules a journal is
//! exactly the book's.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::engine::consumer::offsets::GroupOffsets;
use crate::engine::core::metadata::TopicPartition;

/// The five states of the book's transaction state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransactionState {
    Ongoing,
    PrepareCommit,
    CompleteCommit,
    PrepareAbort,
    CompleteAbort,
}

impl TransactionState {
    /// The journal's lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            TransactionState::Ongoing => "ongoing",
            TransactionState::PrepareCommit => "prepare_commit",
            TransactionState::CompleteCommit => "complete_commit",
            TransactionState::PrepareAbort => "prepare_abort",
            TransactionState::CompleteAbort => "complete_abort",
        }
    }

    /// ONGOING and PREPARE_*: the outcome is not visible yet, so the LSO
    /// stops at the transaction's first offset (E11).
    pub fn is_unstable(self) -> bool {
        !self.is_complete()
    }

    /// COMPLETE_COMMIT or COMPLETE_ABORT.
    pub fn is_complete(self) -> bool {
        matches!(
            self,
            TransactionState::CompleteCommit | TransactionState::CompleteAbort
        )
    }
}

impl fmt::Display for TransactionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One transaction's whole current state: what each journal frame holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionData {
    pub id: String,
    pub state: TransactionState,
    /// Partitions touched, sorted by topic then partition: the book keeps a
    /// set and journals and marks it sorted (E9, E10), so the journal's
    /// bytes and the order of the markers are the book's (issue 16).
    pub partitions: Vec<TopicPartition>,
    /// The first offset written on each touched partition, in the same order.
    pub first_offsets: Vec<(TopicPartition, i64)>,
    /// Consumer offsets staged by `send_offsets`, published only on commit.
    pub staged_offsets: BTreeMap<String, GroupOffsets>,
    /// Kafka rules: the producer id and epoch of this transactional id.
    pub producer: Option<(i64, i32)>,
    /// Kafka rules: clock time of `begin`, for the transaction timeout.
    pub started_ms: Option<u64>,
    /// Transaction version 2: the epoch the commit or abort bumped the
    /// producer to (KIP-890). Its markers carry it, the producer's next
    /// transaction uses it, and a write of `producer`'s older epoch is
    /// fenced. Set with PREPARE_*; `None` under version 1.
    pub next_producer_epoch: Option<i32>,
}

impl TransactionData {
    /// A new ONGOING transaction.
    pub fn begin(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            state: TransactionState::Ongoing,
            partitions: Vec::new(),
            first_offsets: Vec::new(),
            staged_offsets: BTreeMap::new(),
            producer: None,
            started_ms: None,
            next_producer_epoch: None,
        }
    }

    /// The producer epoch this transaction's markers carry: the bumped one
    /// under version 2, else the transaction's own.
    pub fn marker_epoch(&self) -> Option<i32> {
        self.next_producer_epoch
            .or(self.producer.map(|(_, epoch)| epoch))
    }

    /// The first offset written on `tp`, if the transaction touched it.
    pub fn first_offset(&self, tp: &TopicPartition) -> Option<i64> {
        self.first_offsets
            .iter()
            .find(|(p, _)| p == tp)
            .map(|(_, o)| *o)
    }

    /// Records a write to `tp` at `offset`: the lowest offset written on a
    /// partition is its first offset (acks can complete out of order).
    pub fn record_write(&mut self, tp: &TopicPartition, offset: i64) {
        match self.first_offsets.iter_mut().find(|(p, _)| p == tp) {
            Some((_, first)) => *first = (*first).min(offset),
            None => {
                let at = self.partitions.partition_point(|p| p < tp);
                self.partitions.insert(at, tp.clone());
                let at = self.first_offsets.partition_point(|(p, _)| p < tp);
                self.first_offsets.insert(at, (tp.clone(), offset));
            }
        }
    }

    /// The journal line's JSON: compact, sorted keys, ASCII (the book's).
    pub fn to_journal_json(&self) -> String {
        crate::engine::fsutil::to_book_json(&JournalRecord::from(self))
    }

    /// Parses a journal line's JSON.
    pub fn from_journal_json(json: &[u8]) -> Result<Self, String> {
        let record: JournalRecord = serde_json::from_slice(json).map_err(|e| e.to_string())?;
        Ok(record.into())
    }
}

/// The journal's JSON shape (the book's `journal.append` payload); fields
/// in alphabetical order, as Python's `sort_keys` writes them.
#[derive(Debug, Serialize, Deserialize)]
struct JournalRecord {
    first_offsets: Vec<(String, u32, i64)>,
    id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    next_producer_epoch: Option<i32>,
    partitions: Vec<(String, u32)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    producer_epoch: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    producer_id: Option<i64>,
    staged_offsets: BTreeMap<String, Vec<(String, u32, i64)>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    started_ms: Option<u64>,
    state: TransactionState,
}

/// `[topic, partition, offset]`, and back.
fn triple((tp, offset): (&TopicPartition, &i64)) -> (String, u32, i64) {
    (tp.topic.clone(), tp.partition, *offset)
}

fn untriple((topic, partition, offset): (String, u32, i64)) -> (TopicPartition, i64) {
    (TopicPartition::new(topic, partition), offset)
}

impl From<&TransactionData> for JournalRecord {
    fn from(d: &TransactionData) -> Self {
        let staged = d.staged_offsets.iter();
        Self {
            first_offsets: d
                .first_offsets
                .iter()
                .map(|(tp, o)| triple((tp, o)))
                .collect(),
            id: d.id.clone(),
            next_producer_epoch: d.next_producer_epoch,
            partitions: (d.partitions.iter())
                .map(|tp| (tp.topic.clone(), tp.partition))
                .collect(),
            producer_epoch: d.producer.map(|(_, e)| e),
            producer_id: d.producer.map(|(p, _)| p),
            staged_offsets: (staged.map(|(g, o)| (g.clone(), o.iter().map(triple).collect())))
                .collect(),
            started_ms: d.started_ms,
            state: d.state,
        }
    }
}

impl From<JournalRecord> for TransactionData {
    fn from(r: JournalRecord) -> Self {
        let staged = r.staged_offsets.into_iter();
        let mut data = Self {
            id: r.id,
            state: r.state,
            partitions: (r.partitions.into_iter())
                .map(|(t, p)| TopicPartition::new(t, p))
                .collect(),
            first_offsets: r.first_offsets.into_iter().map(untriple).collect(),
            staged_offsets: (staged.map(|(g, list)| (g, list.into_iter().map(untriple).collect())))
                .collect(),
            producer: r.producer_id.zip(r.producer_epoch),
            started_ms: r.started_ms,
            next_producer_epoch: r.next_producer_epoch,
        };
        // The book reads them into a set: a frame in another order (an older
        // mk-tui's first-write order) is the same transaction.
        data.partitions.sort();
        data.first_offsets.sort_by(|a, b| a.0.cmp(&b.0));
        data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_json_is_the_books_exactly() {
        let mut d = TransactionData::begin("tx-1");
        d.record_write(&TopicPartition::new("out", 0), 5);
        d.record_write(&TopicPartition::new("out", 0), 0);
        d.record_write(&TopicPartition::new("out", 0), 3);
        d.staged_offsets
            .entry("workers".into())
            .or_default()
            .insert(TopicPartition::new("in", 0), 7);
        assert_eq!(
            d.to_journal_json(),
            r#"{"first_offsets":[["out",0,0]],"id":"tx-1","partitions":[["out",0]],"staged_offsets":{"workers":[["in",0,7]]},"state":"ongoing"}"#
        );
        assert_eq!(
            TransactionData::from_journal_json(d.to_journal_json().as_bytes()).unwrap(),
            d
        );
    }

    #[test]
    fn kafka_fields_round_trip_only_when_set() {
        let mut d = TransactionData::begin("t");
        d.producer = Some((4, 2));
        d.started_ms = Some(1500);
        d.state = TransactionState::PrepareAbort;
        let json = d.to_journal_json();
        assert!(
            json.contains(r#""producer_epoch":2,"producer_id":4"#),
            "{json}"
        );
        assert!(json.contains(r#""state":"prepare_abort""#));
        assert_eq!(
            TransactionData::from_journal_json(json.as_bytes()).unwrap(),
            d
        );
    }

    #[test]
    fn the_bumped_epoch_of_version_2_round_trips_and_marks() {
        let mut d = TransactionData::begin("t");
        d.producer = Some((4, 2));
        assert_eq!(d.marker_epoch(), Some(2));
        d.next_producer_epoch = Some(3);
        d.state = TransactionState::PrepareCommit;
        let json = d.to_journal_json();
        assert!(json.contains(r#""next_producer_epoch":3,"#), "{json}");
        assert_eq!(d.marker_epoch(), Some(3));
        assert_eq!(
            TransactionData::from_journal_json(json.as_bytes()).unwrap(),
            d
        );
    }

    #[test]
    fn states_have_the_journal_names() {
        assert_eq!(TransactionState::PrepareCommit.name(), "prepare_commit");
        assert!(TransactionState::PrepareAbort.is_unstable());
        assert!(TransactionState::CompleteAbort.is_complete());
    }
}
