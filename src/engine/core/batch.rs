//! `RecordBatch` (E1): the unit of append, replication and on-disk framing.

use crate::engine::core::codec::Stamp;
use crate::engine::core::record::{ConsumerRecord, Record};
use crate::engine::error::{MiniKafkaError, Result};

/// The type of a control marker (E1, E10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ControlType {
    Commit,
    Abort,
}

impl ControlType {
    /// Lowercase name, as in the state JSON (`"commit"` / `"abort"`).
    pub fn name(self) -> &'static str {
        match self {
            ControlType::Commit => "commit",
            ControlType::Abort => "abort",
        }
    }
}

/// "None" for producer id, epoch and sequence, as on disk.
pub const NO_PRODUCER_ID: i64 = -1;
/// "None" for producer epoch and base sequence.
pub const NO_SEQUENCE: i32 = -1;

/// A batch of records with the producer and transaction fields of E1.
///
/// `base_offset` and `leader_epoch` are assigned by the leader on append; the
/// rest comes from the producer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordBatch {
    pub base_offset: i64,
    pub leader_epoch: u32,
    pub producer_id: i64,
    pub producer_epoch: i32,
    pub base_sequence: i32,
    pub transactional_id: Option<String>,
    pub control: Option<ControlType>,
    pub last_offset_delta: i32,
    pub records: Vec<Record>,
}

impl RecordBatch {
    /// A plain (non-idempotent, non-transactional) batch. Offset deltas are
    /// renumbered 0..n.
    pub fn new(records: Vec<Record>) -> Self {
        let mut batch = Self {
            base_offset: 0,
            leader_epoch: 0,
            producer_id: NO_PRODUCER_ID,
            producer_epoch: NO_SEQUENCE,
            base_sequence: NO_SEQUENCE,
            transactional_id: None,
            control: None,
            last_offset_delta: 0,
            records,
        };
        batch.renumber();
        batch
    }

    /// A batch of values only. The values are copied into one buffer that
    /// the records slice, so the batch is one allocation for its bytes.
    pub fn of_values<V: AsRef<[u8]>>(values: impl IntoIterator<Item = V>) -> Self {
        let mut buffer = Vec::new();
        let mut ends = Vec::new();
        for value in values {
            buffer.extend_from_slice(value.as_ref());
            ends.push(buffer.len());
        }
        let shared = bytes::Bytes::from(buffer);
        let mut start = 0;
        Self::new(
            ends.into_iter()
                .map(|end| Record::value(shared.slice(std::mem::replace(&mut start, end)..end)))
                .collect(),
        )
    }

    /// The same batch stamped with an idempotent producer's identity (E7).
    pub fn with_producer(
        mut self,
        producer_id: i64,
        producer_epoch: i32,
        base_sequence: i32,
    ) -> Self {
        self.producer_id = producer_id;
        self.producer_epoch = producer_epoch;
        self.base_sequence = base_sequence;
        self
    }

    /// The same batch marked transactional for `transactional_id` (E10).
    pub fn with_transactional_id(mut self, transactional_id: impl Into<String>) -> Self {
        self.transactional_id = Some(transactional_id.into());
        self
    }

    /// A COMMIT or ABORT control marker for a transaction (the book's
    /// `RecordBatch.control_marker`): no records, one offset.
    pub fn control_marker(control: ControlType, transactional_id: impl Into<String>) -> Self {
        Self {
            base_offset: 0,
            leader_epoch: 0,
            producer_id: NO_PRODUCER_ID,
            producer_epoch: NO_SEQUENCE,
            base_sequence: NO_SEQUENCE,
            transactional_id: Some(transactional_id.into()),
            control: Some(control),
            last_offset_delta: 0,
            records: Vec::new(),
        }
    }

    /// Sets each record's timestamp by `stamp`, the rule the leader's
    /// encoding applies in the frame (`codec::encode_checked_into`):
    /// CreateTime fills the timestamps a producer left at 0, LogAppendTime
    /// replaces every one.
    pub fn stamp(&mut self, stamp: Stamp) {
        for record in &mut self.records {
            record.timestamp_ms = stamp.timestamp(record.timestamp_ms);
        }
    }

    fn renumber(&mut self) {
        for (i, record) in self.records.iter_mut().enumerate() {
            record.offset_delta = i as i32;
        }
        self.last_offset_delta = self.records.len().saturating_sub(1) as i32;
    }

    /// The offset of the last record (or of the marker).
    pub fn last_offset(&self) -> i64 {
        self.base_offset + i64::from(self.last_offset_delta)
    }

    /// The offset after this batch.
    pub fn next_offset(&self) -> i64 {
        self.last_offset() + 1
    }

    /// How many offsets the batch takes.
    pub fn offset_count(&self) -> i64 {
        i64::from(self.last_offset_delta) + 1
    }

    /// True for COMMIT/ABORT markers.
    pub fn is_control(&self) -> bool {
        self.control.is_some()
    }

    /// True when a transactional id is set (data or marker).
    pub fn is_transactional(&self) -> bool {
        self.transactional_id.is_some()
    }

    /// True when the batch carries an idempotent producer's identity.
    pub fn has_producer_id(&self) -> bool {
        self.producer_id >= 0
    }

    /// The sequence of the last record, as the producer numbered it.
    pub fn last_sequence(&self) -> i32 {
        if self.base_sequence < 0 {
            NO_SEQUENCE
        } else {
            self.base_sequence.wrapping_add(self.last_offset_delta)
        }
    }

    /// Records with absolute offsets, from `from_offset` on.
    pub fn consumer_records(&self, from_offset: i64) -> impl Iterator<Item = ConsumerRecord> + '_ {
        self.records.iter().filter_map(move |r| {
            let offset = self.base_offset + i64::from(r.offset_delta);
            (offset >= from_offset).then(|| ConsumerRecord {
                offset,
                timestamp_ms: r.timestamp_ms,
                key: r.key.clone(),
                value: r.value.clone(),
                headers: r.headers.clone(),
            })
        })
    }

    /// Checks the structural rules of FORMATS.md "Batch frame".
    pub fn validate(&self) -> Result<()> {
        self.validate_batch()?;
        self.validate_records()
    }

    /// The rules of [`Self::validate`] that do not walk the records, in
    /// its order: the leader checks these before an append and the record
    /// rules while it encodes the frame (`codec::encode_checked_into`), one
    /// walk over the records instead of two (docs/performance.md, P3).
    pub fn validate_batch(&self) -> Result<()> {
        self.validate_offsets()?;
        if self
            .transactional_id
            .as_ref()
            .is_some_and(|tid| tid.len() > usize::from(u16::MAX))
        {
            return invalid("transactional id longer than 65535 bytes");
        }
        if self.is_control() {
            if !self.records.is_empty() {
                return invalid("a control batch has no records");
            }
            if self.transactional_id.is_none() {
                return invalid("a control batch must carry a transactional id");
            }
            if self.last_offset_delta != 0 {
                return invalid("a control batch takes exactly one offset");
            }
            return Ok(());
        }
        if self.records.is_empty() {
            return invalid("a data batch needs at least one record");
        }
        Ok(())
    }

    /// The rules of [`Self::validate`] that walk the records (offset deltas
    /// in order, header keys that fit their length field), for a batch
    /// whose [`Self::validate_batch`] passed. The same checks, with the same
    /// reasons, as `codec::encode_checked_into` makes while encoding.
    pub fn validate_records(&self) -> Result<()> {
        let mut previous = -1;
        for record in &self.records {
            if record.offset_delta <= previous || record.offset_delta > self.last_offset_delta {
                return invalid(DELTAS_OUT_OF_ORDER);
            }
            previous = record.offset_delta;
            if record
                .headers
                .iter()
                .any(|h| h.key.len() > usize::from(u16::MAX))
            {
                return invalid(HEADER_KEY_TOO_LONG);
            }
        }
        Ok(())
    }

    /// The batch-level offset rules of [`Self::validate`] alone, without
    /// its walk over the records: what giving a valid batch new offsets
    /// can break.
    pub fn validate_offsets(&self) -> Result<()> {
        if self.base_offset < 0 {
            return invalid("negative base offset");
        }
        if self.last_offset_delta < 0 {
            return invalid("negative last_offset_delta");
        }
        if self
            .base_offset
            .checked_add(i64::from(self.last_offset_delta) + 1)
            .is_none()
        {
            return invalid("offsets overflow i64");
        }
        Ok(())
    }
}

/// The record rules' reasons, given alike by [`RecordBatch::validate`]
/// and the leader's encoding that checks them (`codec::encode_checked_into`).
pub(crate) const DELTAS_OUT_OF_ORDER: &str =
    "record offset deltas must increase within last_offset_delta";
pub(crate) const HEADER_KEY_TOO_LONG: &str = "header key longer than 65535 bytes";

fn invalid(why: &str) -> Result<()> {
    Err(MiniKafkaError::InvalidBatch(why.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_of_a_data_batch_and_a_marker() {
        let mut b = RecordBatch::of_values(["a", "b", "c"]);
        b.base_offset = 10;
        assert_eq!(
            (b.last_offset(), b.next_offset(), b.offset_count()),
            (12, 13, 3)
        );
        let mut m = RecordBatch::control_marker(ControlType::Commit, "tx");
        m.base_offset = 13;
        assert_eq!((m.last_offset(), m.offset_count()), (13, 1));
        assert!(m.validate().is_ok() && m.is_control() && m.is_transactional());
    }

    #[test]
    fn structural_rules_are_enforced() {
        assert!(RecordBatch::new(vec![]).validate().is_err());
        let mut m = RecordBatch::control_marker(ControlType::Abort, "tx");
        m.transactional_id = None;
        assert!(m.validate().is_err());
        let mut m = RecordBatch::control_marker(ControlType::Abort, "tx");
        m.records.push(Record::value("x"));
        assert!(m.validate().is_err());
        let mut b = RecordBatch::of_values(["a", "b"]);
        b.records[1].offset_delta = 0;
        assert!(b.validate().is_err());
    }

    #[test]
    fn the_offset_rules_alone_skip_the_records() {
        let mut b = RecordBatch::of_values(["a", "b"]);
        b.records[1].offset_delta = 0;
        assert!(b.validate_offsets().is_ok() && b.validate().is_err());
        let mut far = RecordBatch::of_values(["a", "b"]);
        far.base_offset = i64::MAX - 1;
        assert_eq!(
            far.validate_offsets().unwrap_err().to_string(),
            far.validate().unwrap_err().to_string()
        );
        assert!(far.validate_offsets().is_err());
    }

    #[test]
    fn last_sequence_follows_the_batch() {
        let b = RecordBatch::of_values(["a", "b", "c"]).with_producer(7, 0, 5);
        assert_eq!(b.last_sequence(), 7);
        assert_eq!(RecordBatch::of_values(["a"]).last_sequence(), NO_SEQUENCE);
    }
}
