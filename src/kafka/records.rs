//! Kafka's v2 record batches (CRC-32C) at the edge: what a producer sends is
//! decoded here into records the `produce` action can carry, and the engine's
//! batches are encoded here for a fetch. The engine never sees the wire
//! format; MKB1 stays the on-disk format.
//!
//! Both directions use the `kafka-protocol` crate's records module, which
//! checks and writes the CRC-32C.

use bytes::{Buf, Bytes, BytesMut};
use kafka_protocol::compression::MAX_DECOMPRESSED_BYTES;
use kafka_protocol::error::ResponseError;
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression, Record as WireRecord, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions,
    TimestampType,
};

use crate::engine::{ControlType, RecordBatch};
use crate::kafka::errors::code;

/// One record of a produce request, as the `produce` and `send` actions
/// take it.
pub use crate::session::action::RecordSpec as IncomingRecord;
use crate::session::action::{HeaderSpec, Payload};

/// A partition's records as the batches of `produce` or `send` actions:
/// in order, each within the caps of one action's batch
/// (`limits::MAX_BATCH_RECORDS` and `MAX_BATCH_BYTES`, which are Kafka's
/// `message.max.bytes`, so a client's batch is one action unless it is
/// larger than Kafka itself would take).
pub fn action_batches(records: Vec<IncomingRecord>) -> Vec<Vec<IncomingRecord>> {
    use crate::session::limits::{MAX_BATCH_BYTES, MAX_BATCH_RECORDS};
    let mut batches: Vec<Vec<IncomingRecord>> = Vec::new();
    let mut bytes = 0;
    for record in records {
        let size = record.bytes();
        let fits = batches
            .last()
            .is_some_and(|b| b.len() < MAX_BATCH_RECORDS && bytes + size <= MAX_BATCH_BYTES);
        if !fits {
            batches.push(Vec::new());
            bytes = 0;
        }
        bytes += size;
        batches.last_mut().expect("pushed above").push(record);
    }
    batches
}

/// The payload fields (`key`, `value`, `records`) of an action carrying
/// `batch`: one bare record as `key`/`value`, the shape a recording writes
/// for one, and more, or one with a timestamp or headers, as `records`.
pub fn payload_fields(
    mut batch: Vec<IncomingRecord>,
) -> (Option<String>, Option<String>, Vec<IncomingRecord>) {
    if batch.len() == 1 && !batch[0].has_extras() {
        let one = batch.pop().expect("one record");
        // Without extras its key and value are text (`has_extras`).
        let text = |p: Payload| p.into_text().expect("a record without extras is text");
        return (one.key.map(text), Some(text(one.value)), Vec::new());
    }
    (None, None, batch)
}

/// A produce partition refused before anything was appended: the Kafka
/// error code and the message the response carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: i16,
    pub message: String,
}

impl Refusal {
    fn new(code: i16, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// Offset of the magic byte in a v2 batch header.
const MAGIC_AT: usize = 16;
/// Offset of the attributes (after base offset, length, leader epoch,
/// magic and CRC).
const ATTRIBUTES_AT: usize = 21;
/// Offset of the producer id.
const PRODUCER_ID_AT: usize = 43;

/// The attributes of the v2 batch `rest` starts with, after the check
/// both decoders make first: a whole header, format v2. Compressed
/// batches (gzip, snappy, lz4, zstd) are decompressed by the protocol
/// crate's codecs; the engine keeps their records uncompressed.
fn batch_attributes(rest: &Bytes) -> Result<i16, Refusal> {
    if rest.len() < PRODUCER_ID_AT + 8 {
        return Err(Refusal::new(
            code::CORRUPT_MESSAGE,
            "a record batch shorter than its header",
        ));
    }
    let magic = rest[MAGIC_AT] as i8;
    if magic != 2 {
        return Err(Refusal::new(
            code::UNSUPPORTED_FOR_MESSAGE_FORMAT,
            format!("record batch format v{magic}: only v2 is supported"),
        ));
    }
    let attributes = i16::from_be_bytes([rest[ATTRIBUTES_AT], rest[ATTRIBUTES_AT + 1]]);
    if attributes & 0x7 > 4 {
        return Err(Refusal::new(
            code::UNSUPPORTED_COMPRESSION_TYPE,
            format!(
                "compression type {}: Kafka knows 0-4 (none, gzip, snappy, lz4, zstd)",
                attributes & 0x7
            ),
        ));
    }
    Ok(attributes)
}

/// How the log names the compression of a produce partition's first
/// batch: `", zstd"` and the like, or nothing when it is uncompressed
/// (or too short to say).
pub fn compression_note(records: &Bytes) -> &'static str {
    if records.len() <= ATTRIBUTES_AT + 1 {
        return "";
    }
    match records[ATTRIBUTES_AT + 1] & 0x7 {
        1 => ", gzip",
        2 => ", snappy",
        3 => ", lz4",
        4 => ", zstd",
        _ => "",
    }
}

/// Decodes the record batches of one produce partition.
///
/// This slice carries what the `produce` action holds: plain (not
/// idempotent, not transactional) batches, compressed or not, whose keys,
/// values and header values are UTF-8 text; each record keeps its
/// timestamp and headers. Anything else is refused whole with the Kafka
/// code that says why (docs/kafka-protocol.md).
pub fn decode_produce(records: &Bytes) -> Result<Vec<IncomingRecord>, Refusal> {
    let mut out = Vec::new();
    let mut rest = records.clone();
    let mut decoded = 0;
    while rest.has_remaining() {
        within_bound(decoded)?;
        let attributes = batch_attributes(&rest)?;
        if attributes & (1 << 4) != 0 || attributes & (1 << 5) != 0 {
            return Err(Refusal::new(
                code::INVALID_RECORD,
                "transactional and control batches from clients are not supported yet",
            ));
        }
        let producer_id = i64::from_be_bytes(
            rest[PRODUCER_ID_AT..PRODUCER_ID_AT + 8]
                .try_into()
                .expect("eight bytes"),
        );
        if producer_id >= 0 {
            return Err(Refusal::new(
                code::INVALID_RECORD,
                "idempotent batches are not supported yet: set enable.idempotence=false",
            ));
        }
        let set = RecordBatchDecoder::decode(&mut rest).map_err(|e| {
            let e = crate::kafka::codec::one_line(e);
            Refusal::new(code::CORRUPT_MESSAGE, format!("bad record batch: {e}"))
        })?;
        for r in set.records {
            let r = incoming(r);
            decoded += r.bytes();
            out.push(r);
        }
    }
    within_bound(decoded)?;
    if out.is_empty() {
        return Err(Refusal::new(
            code::INVALID_RECORD,
            "a produce with no records",
        ));
    }
    Ok(out)
}

/// Refuses a produce partition whose records, decompressed, pass what one
/// batch may decompress to: several small compressed batches must not add
/// up to what one may not be.
fn within_bound(bytes: usize) -> Result<(), Refusal> {
    if bytes > MAX_DECOMPRESSED_BYTES {
        return Err(Refusal::new(
            ResponseError::MessageTooLarge.code(),
            format!(
                "{bytes} bytes of records in one produce partition; the cap is {MAX_DECOMPRESSED_BYTES}"
            ),
        ));
    }
    Ok(())
}

/// Kafka's `message.timestamp.after.max.ms` (one hour, its default since
/// Kafka 4.0): a producer's timestamp further ahead of the broker's wall
/// clock is refused. Kafka's `before` bound is unlimited by default, so
/// any past timestamp is kept.
pub const TIMESTAMP_AFTER_MAX_MS: i64 = 3_600_000;

/// Refuses the records with `INVALID_TIMESTAMP`, as Kafka does, if one is
/// stamped more than [`TIMESTAMP_AFTER_MAX_MS`] after `now_ms` (the wall
/// clock, `RealTime::unix_ms`). A refusal appends nothing, so the engine
/// never depends on the wall clock.
pub fn check_timestamps<'a>(
    records: impl IntoIterator<Item = &'a IncomingRecord>,
    now_ms: i64,
) -> Result<(), Refusal> {
    let latest = now_ms.saturating_add(TIMESTAMP_AFTER_MAX_MS);
    for (i, r) in records.into_iter().enumerate() {
        if let Some(t) = r.timestamp_ms.filter(|t| *t > latest) {
            return Err(Refusal::new(
                ResponseError::InvalidTimestamp.code(),
                format!(
                    "record {i} is stamped {t}, more than {TIMESTAMP_AFTER_MAX_MS} ms after \
                     the broker's clock ({now_ms}): Kafka's message.timestamp.after.max.ms"
                ),
            ));
        }
    }
    Ok(())
}

/// The checks a produce partition's records meet at the edge before
/// anything is appended, in Kafka's order: timestamps
/// ([`check_timestamps`]), each record's size ([`check_record_sizes`]) and,
/// for a compacted topic, keys ([`check_compacted_keys`]). Both produce
/// paths (plain and producer batches) call this one.
pub fn check_records<'a, I>(
    records: I,
    now_ms: i64,
    compacted: bool,
    tp: &str,
) -> Result<(), Refusal>
where
    I: IntoIterator<Item = &'a IncomingRecord> + Clone,
{
    check_timestamps(records.clone(), now_ms)?;
    check_record_sizes(records.clone())?;
    check_compacted_keys(records, compacted, tp)
}

/// Refuses a partition's records if one of them alone is past the bytes of
/// keys and values one action's batch may hold (`limits::MAX_BATCH_BYTES`,
/// 1 MiB, the cap every recording has): no split can carry it. Kafka
/// answers a batch past `message.max.bytes` (1 MiB by default) with
/// MESSAGE_TOO_LARGE; its cap is on the batch as sent (compressed), this
/// one on the record's bytes once decompressed (docs/kafka-differences.md,
/// "A record past 1 MiB"). A refusal appends nothing.
fn check_record_sizes<'a>(
    records: impl IntoIterator<Item = &'a IncomingRecord>,
) -> Result<(), Refusal> {
    use crate::session::limits::MAX_BATCH_BYTES;
    for (i, r) in records.into_iter().enumerate() {
        let bytes = r.bytes();
        if bytes > MAX_BATCH_BYTES {
            return Err(Refusal::new(
                ResponseError::MessageTooLarge.code(),
                format!(
                    "record {i} holds {bytes} bytes of key and value (decompressed), past \
                     mk-tui's cap of {MAX_BATCH_BYTES} bytes per record batch (Kafka's \
                     message.max.bytes, which Kafka applies to the compressed batch)"
                ),
            ));
        }
    }
    Ok(())
}

/// Refuses records without a key for a compacted topic, as Kafka does
/// (INVALID_RECORD): compaction keeps each key's latest record, and a
/// record without one has nothing to be kept by. A refusal appends nothing.
fn check_compacted_keys<'a>(
    records: impl IntoIterator<Item = &'a IncomingRecord>,
    compacted: bool,
    tp: &str,
) -> Result<(), Refusal> {
    if !compacted {
        return Ok(());
    }
    match records.into_iter().position(|r| r.key.is_none()) {
        None => Ok(()),
        Some(i) => Err(Refusal::new(
            ResponseError::InvalidRecord.code(),
            format!(
                "record {i} has no key: compacted topic {tp} cannot accept a record without one"
            ),
        )),
    }
}

/// One record batch of an idempotent or transactional producer, with the
/// producer fields of its header (E1, E7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerBatch {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub transactional: bool,
    pub records: Vec<IncomingRecord>,
}

/// The producer id in the header of the first batch of a produce
/// partition, if the bytes are long enough to hold one (-1: a plain
/// producer's).
pub fn first_producer_id(records: &Bytes) -> Option<i64> {
    (records.len() >= PRODUCER_ID_AT + 8).then(|| {
        i64::from_be_bytes(
            records[PRODUCER_ID_AT..PRODUCER_ID_AT + 8]
                .try_into()
                .expect("eight bytes"),
        )
    })
}

/// Decodes the record batches of one produce partition from an
/// idempotent or transactional producer: v2 batches that all carry the
/// same producer id and epoch, with records as [`decode_produce`] takes
/// them. Control batches from
/// clients are refused (only the coordinator writes markers).
pub fn decode_producer_batches(records: &Bytes) -> Result<Vec<ProducerBatch>, Refusal> {
    let mut out: Vec<ProducerBatch> = Vec::new();
    let mut rest = records.clone();
    let mut decoded = 0;
    while rest.has_remaining() {
        within_bound(decoded)?;
        let attributes = batch_attributes(&rest)?;
        if attributes & (1 << 5) != 0 {
            return Err(Refusal::new(
                code::INVALID_RECORD,
                "control batches are written by the transaction coordinator, not by clients",
            ));
        }
        let set = RecordBatchDecoder::decode(&mut rest).map_err(|e| {
            let e = crate::kafka::codec::one_line(e);
            Refusal::new(code::CORRUPT_MESSAGE, format!("bad record batch: {e}"))
        })?;
        let Some(first) = set.records.first() else {
            continue;
        };
        let batch = ProducerBatch {
            producer_id: first.producer_id,
            producer_epoch: first.producer_epoch,
            base_sequence: first.sequence,
            transactional: first.transactional,
            records: Vec::new(),
        };
        if batch.producer_id < 0 {
            return Err(Refusal::new(
                code::INVALID_RECORD,
                "a batch without a producer id among an idempotent producer's",
            ));
        }
        if let Some(prev) = out.first()
            && (prev.producer_id, prev.producer_epoch, prev.transactional)
                != (batch.producer_id, batch.producer_epoch, batch.transactional)
        {
            return Err(Refusal::new(
                code::INVALID_RECORD,
                "batches of different producers in one produce partition",
            ));
        }
        let mut batch = batch;
        for r in set.records {
            batch.records.push(incoming(r));
        }
        decoded += batch
            .records
            .iter()
            .map(IncomingRecord::bytes)
            .sum::<usize>();
        out.push(batch);
    }
    within_bound(decoded)?;
    if out.is_empty() {
        return Err(Refusal::new(
            code::INVALID_RECORD,
            "a produce with no records",
        ));
    }
    Ok(out)
}

fn incoming(r: WireRecord) -> IncomingRecord {
    // Any bytes are kept (Kafka keeps any): a recording spells those that
    // are not UTF-8 in base64 (`session::payload`).
    let key = r.key.map(Payload::from);
    // A null value is a tombstone (E16): kept null, as the book's records.
    let (value, tombstone) = match r.value {
        Some(v) => (Payload::from(v), false),
        None => (Payload::default(), true),
    };
    let headers = r
        .headers
        .into_iter()
        .map(|(k, v)| HeaderSpec {
            key: k.to_string(),
            value: v.map(Payload::from),
        })
        .collect();
    IncomingRecord {
        key,
        value,
        tombstone,
        timestamp_ms: Some(r.timestamp),
        headers,
    }
}

/// Encodes engine batches as Kafka v2 batches, one wire batch per engine
/// batch, with their offsets, leader epoch, producer fields and control
/// markers as Kafka writes them (a control record with key version 0 and
/// type 0 abort / 1 commit).
///
/// `log_append_origin`: the topic is LogAppendTime, and its records' times
/// (the engine clock's, when the leader appended them) are sent as Unix
/// times counted from this origin, with the batch's LogAppendTime bit.
///
/// A fetch does not call this: it writes each batch from its frame
/// ([`crate::kafka::wire_batch::write_v2`]), whose bytes the tests hold
/// equal to these, the protocol crate's own encoding of the decoded batch.
pub fn encode_batches(
    batches: &[RecordBatch],
    log_append_origin: Option<i64>,
) -> Result<Bytes, crate::session::SessionError> {
    let mut buf = BytesMut::new();
    let options = RecordEncodeOptions {
        version: 2,
        compression: Compression::None,
    };
    for batch in batches {
        let mut wire = wire_records(batch);
        if let Some(origin) = log_append_origin {
            for w in wire.iter_mut().filter(|w| !w.control) {
                w.timestamp_type = TimestampType::LogAppend;
                w.timestamp = origin.saturating_add(w.timestamp);
            }
        }
        RecordBatchEncoder::encode(&mut buf, wire.iter(), &options).map_err(|e| {
            crate::session::SessionError::Frame(format!(
                "cannot encode the batch at offset {}: {}",
                batch.base_offset,
                crate::kafka::codec::one_line(e)
            ))
        })?;
    }
    Ok(buf.freeze())
}

fn wire_records(batch: &RecordBatch) -> Vec<WireRecord> {
    let base = |offset_delta: i32, timestamp: i64| WireRecord {
        transactional: batch.is_transactional(),
        control: batch.is_control(),
        delete_horizon: false,
        partition_leader_epoch: batch.leader_epoch as i32,
        producer_id: batch.producer_id,
        producer_epoch: batch.producer_epoch as i16,
        timestamp_type: TimestampType::Creation,
        offset: batch.base_offset + i64::from(offset_delta),
        // The encoder keeps records in one batch while offset minus
        // sequence is constant; the batch's base sequence comes back out.
        sequence: batch.base_sequence.wrapping_add(offset_delta),
        timestamp,
        key: None,
        value: None,
        headers: Default::default(),
    };
    if let Some(control) = batch.control {
        let kind: i16 = match control {
            ControlType::Abort => 0,
            ControlType::Commit => 1,
        };
        let mut key = Vec::with_capacity(4);
        key.extend_from_slice(&0i16.to_be_bytes());
        key.extend_from_slice(&kind.to_be_bytes());
        // Value: version 0, coordinator epoch 0.
        let value = vec![0u8; 6];
        return vec![WireRecord {
            key: Some(Bytes::from(key)),
            value: Some(Bytes::from(value)),
            ..base(0, 0)
        }];
    }
    batch
        .records
        .iter()
        .map(|r| {
            let mut w = base(r.offset_delta, r.timestamp_ms);
            w.key = r.key.clone();
            w.value = r.value.clone();
            for h in &r.headers {
                w.headers
                    .push((StrBytes::from_string(h.key.clone()), h.value.clone()));
            }
            w
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Record;

    /// A partition's records are one action's batch unless they pass its
    /// caps; then they split in order, each part within both caps.
    #[test]
    fn records_split_into_action_batches_only_past_the_caps() {
        use crate::session::limits::{MAX_BATCH_BYTES, MAX_BATCH_RECORDS};
        let small: Vec<_> = (0..5)
            .map(|i| IncomingRecord::new(None, format!("v{i}")))
            .collect();
        assert_eq!(action_batches(small.clone()), vec![small]);
        let many: Vec<_> = (0..MAX_BATCH_RECORDS + 3)
            .map(|i| IncomingRecord::new(None, i.to_string()))
            .collect();
        let parts = action_batches(many.clone());
        assert_eq!(
            parts.iter().map(Vec::len).collect::<Vec<_>>(),
            [MAX_BATCH_RECORDS, 3]
        );
        assert_eq!(parts.concat(), many, "in order, none lost");
        let big = IncomingRecord::new(Some("k".into()), "v".repeat(MAX_BATCH_BYTES / 2));
        let parts = action_batches(vec![big.clone(); 3]);
        assert_eq!(parts.iter().map(Vec::len).collect::<Vec<_>>(), [1, 1, 1]);
        assert!(
            parts
                .iter()
                .all(|p| p.iter().map(IncomingRecord::bytes).sum::<usize>() <= MAX_BATCH_BYTES)
        );
    }

    fn produce_bytes(records: &[(Option<&str>, Option<&str>)], producer_id: i64) -> Bytes {
        encode_wire(&wire_of(records, producer_id), Compression::None)
    }

    fn encode_wire(wire: &[WireRecord], compression: Compression) -> Bytes {
        let mut buf = BytesMut::new();
        RecordBatchEncoder::encode(
            &mut buf,
            wire.iter(),
            &RecordEncodeOptions {
                version: 2,
                compression,
            },
        )
        .unwrap();
        buf.freeze()
    }

    fn wire_of(records: &[(Option<&str>, Option<&str>)], producer_id: i64) -> Vec<WireRecord> {
        records
            .iter()
            .enumerate()
            .map(|(i, (k, v))| WireRecord {
                transactional: false,
                control: false,
                delete_horizon: false,
                partition_leader_epoch: -1,
                producer_id,
                producer_epoch: -1,
                timestamp_type: TimestampType::Creation,
                offset: i as i64,
                sequence: if producer_id >= 0 {
                    i as i32
                } else {
                    -1 + i as i32
                },
                timestamp: 1000,
                key: k.map(|k| Bytes::copy_from_slice(k.as_bytes())),
                value: v.map(|v| Bytes::copy_from_slice(v.as_bytes())),
                headers: Default::default(),
            })
            .collect()
    }

    /// Every compression a Kafka producer may choose decodes to the same
    /// records, each with its own timestamp and headers.
    #[test]
    fn compressed_batches_decode_with_timestamps_and_headers() {
        let mut wire = wire_of(&[(Some("k"), Some("a")), (None, Some("b"))], -1);
        wire[0].timestamp = 1_700_000_000_123;
        wire[1].timestamp = 42;
        wire[0]
            .headers
            .push((StrBytes::from_static_str("trace"), Some(Bytes::from("t-1"))));
        wire[0]
            .headers
            .push((StrBytes::from_static_str("empty"), None));
        let expected = vec![
            IncomingRecord {
                timestamp_ms: Some(1_700_000_000_123),
                headers: vec![
                    HeaderSpec {
                        key: "trace".into(),
                        value: Some("t-1".into()),
                    },
                    HeaderSpec {
                        key: "empty".into(),
                        value: None,
                    },
                ],
                ..IncomingRecord::new(Some("k".into()), "a")
            },
            IncomingRecord {
                timestamp_ms: Some(42),
                ..IncomingRecord::new(None, "b")
            },
        ];
        for compression in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let bytes = encode_wire(&wire, compression);
            assert_eq!(
                bytes[ATTRIBUTES_AT + 1] & 0x7,
                compression as u8,
                "{compression:?} is in the attributes"
            );
            assert_eq!(decode_produce(&bytes).unwrap(), expected, "{compression:?}");
            let note = compression_note(&bytes);
            assert_eq!(
                note.is_empty(),
                compression == Compression::None,
                "{compression:?}: {note:?}"
            );
        }
    }

    /// A small compressed batch that claims more than the bound is refused
    /// with a Kafka code, before it is held whole.
    #[test]
    fn a_decompression_bomb_is_refused() {
        let big = "x".repeat(MAX_DECOMPRESSED_BYTES / 4 + 1);
        let wire = wire_of(&[(None, Some(big.as_str())); 5], -1);
        for compression in [
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let bytes = encode_wire(&wire, compression);
            assert!(bytes.len() < MAX_DECOMPRESSED_BYTES / 16, "{compression:?}");
            let e = decode_produce(&bytes).unwrap_err();
            assert_eq!(e.code, code::CORRUPT_MESSAGE, "{compression:?}: {e:?}");
        }
        // Batches each within the bound, together past it.
        let one = encode_wire(&wire[..3], Compression::Zstd);
        let mut two = one.to_vec();
        two.extend_from_slice(&one);
        let e = decode_produce(&Bytes::from(two)).unwrap_err();
        assert_eq!(e.code, ResponseError::MessageTooLarge.code(), "{e:?}");
    }

    /// A header key sent twice is kept twice, in order, as Kafka keeps it
    /// (the vendored protocol crate decodes headers as a list).
    #[test]
    fn a_repeated_header_key_is_kept_twice_in_order() {
        let mut wire = wire_of(&[(None, Some("v"))], -1);
        for (k, v) in [("a", "1"), ("b", "2"), ("a", "3")] {
            wire[0]
                .headers
                .push((StrBytes::from_static_str(k), Some(Bytes::from(v))));
        }
        let bytes = encode_wire(&wire, Compression::None);
        let got = decode_produce(&bytes).unwrap();
        let spec = |k: &str, v: &str| HeaderSpec {
            key: k.into(),
            value: Some(v.into()),
        };
        assert_eq!(
            got[0].headers,
            vec![spec("a", "1"), spec("b", "2"), spec("a", "3")]
        );
    }

    /// A timestamp more than an hour ahead of the wall clock is refused
    /// whole, as Kafka 4 refuses it; any past one is kept.
    #[test]
    fn a_timestamp_far_in_the_future_is_refused() {
        let now = 1_700_000_000_000;
        let at = |t| IncomingRecord {
            timestamp_ms: Some(t),
            ..IncomingRecord::new(None, "v")
        };
        let ok = [at(1), at(now), at(now + TIMESTAMP_AFTER_MAX_MS)];
        assert!(check_timestamps(&ok, now).is_ok());
        let late = [at(now), at(now + TIMESTAMP_AFTER_MAX_MS + 1)];
        let e = check_timestamps(&late, now).unwrap_err();
        assert_eq!(e.code, ResponseError::InvalidTimestamp.code());
        assert!(
            e.message.starts_with("record 1 is stamped"),
            "{}",
            e.message
        );
    }

    /// One record with a timestamp or headers keeps the `records` form of
    /// an action, which alone carries them.
    #[test]
    fn a_record_with_extras_stays_a_records_payload() {
        let bare = IncomingRecord::new(Some("k".into()), "v");
        assert_eq!(
            payload_fields(vec![bare.clone()]),
            (Some("k".into()), Some("v".into()), Vec::new())
        );
        let stamped = IncomingRecord {
            timestamp_ms: Some(5),
            ..bare
        };
        assert_eq!(
            payload_fields(vec![stamped.clone()]),
            (None, None, vec![stamped])
        );
    }

    #[test]
    fn a_plain_batch_becomes_text_records() {
        let bytes = produce_bytes(&[(Some("k"), Some("a")), (None, Some("b"))], -1);
        let got = decode_produce(&bytes).unwrap();
        assert_eq!(
            got,
            vec![
                IncomingRecord {
                    timestamp_ms: Some(1000),
                    ..IncomingRecord::new(Some("k".into()), "a")
                },
                IncomingRecord {
                    timestamp_ms: Some(1000),
                    ..IncomingRecord::new(None, "b")
                }
            ]
        );
    }

    /// Kafka keeps any bytes, and so does serve: a binary key, value and
    /// header value (a Long key, a schema-registry value: a zero byte, a
    /// schema id, then bytes that are not UTF-8) are carried as they came,
    /// and such a record keeps the `records` form of an action, which a
    /// recording spells in base64.
    #[test]
    fn binary_keys_values_and_header_values_are_carried_byte_for_byte() {
        // -42 as a Long: 0xff..0xd6, not UTF-8.
        let key = (-42i64).to_be_bytes().to_vec();
        let value = vec![0u8, 0, 0, 0, 7, 0xc3, 0x28, 0xff, b'x'];
        let mut wire = wire_of(&[(None, Some("-"))], -1);
        wire[0].key = Some(Bytes::from(key.clone()));
        wire[0].value = Some(Bytes::from(value.clone()));
        wire[0].headers.push((
            StrBytes::from_static_str("trace"),
            Some(Bytes::from_static(&[0xfe, 1])),
        ));
        let got = decode_produce(&encode_wire(&wire, Compression::None)).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].key.as_ref().unwrap().as_bytes(), &key[..]);
        assert_eq!(got[0].value.as_bytes(), &value[..]);
        assert_eq!(
            got[0].headers[0].value.as_ref().unwrap().as_bytes(),
            &[0xfe, 1]
        );
        let (k, v, records) = payload_fields(got.clone());
        assert_eq!((k, v), (None, None), "bytes are not a text key/value");
        assert_eq!(records, got);
        let binary_key_only = IncomingRecord::new(Some(key.into()), "text");
        assert_eq!(payload_fields(vec![binary_key_only]).2.len(), 1);
    }

    #[test]
    fn what_this_slice_cannot_carry_is_refused_with_a_kafka_code() {
        let idempotent = produce_bytes(&[(None, Some("a"))], 7);
        assert_eq!(
            decode_produce(&idempotent).unwrap_err().code,
            code::INVALID_RECORD
        );
        // A null value is a tombstone (E16), carried as one.
        let tombstone = produce_bytes(&[(Some("k"), None)], -1);
        let decoded = decode_produce(&tombstone).unwrap();
        assert!(decoded[0].tombstone);
        assert_eq!(decoded[0].key, Some("k".into()));
        let mut corrupt = produce_bytes(&[(None, Some("abc"))], -1).to_vec();
        let last = corrupt.len() - 1;
        corrupt[last] ^= 0xff;
        assert_eq!(
            decode_produce(&Bytes::from(corrupt)).unwrap_err().code,
            code::CORRUPT_MESSAGE,
            "the CRC-32C catches a flipped byte"
        );
        let mut compressed = produce_bytes(&[(None, Some("a"))], -1).to_vec();
        compressed[ATTRIBUTES_AT + 1] |= 5;
        assert_eq!(
            decode_produce(&Bytes::from(compressed)).unwrap_err().code,
            code::UNSUPPORTED_COMPRESSION_TYPE
        );
        assert_eq!(
            decode_produce(&Bytes::from_static(&[0; 10]))
                .unwrap_err()
                .code,
            code::CORRUPT_MESSAGE
        );
    }

    #[test]
    fn engine_batches_encode_with_their_offsets_and_markers() {
        let mut data = RecordBatch::new(vec![
            Record::keyed("k", "v1"),
            Record::value("v2").with_header("h", Some(b"x".to_vec().into())),
        ]);
        data.base_offset = 5;
        data.leader_epoch = 2;
        let mut marker = RecordBatch::control_marker(ControlType::Commit, "tx-1");
        marker.base_offset = 7;
        let bytes = encode_batches(&[data, marker], None).unwrap();
        let sets = RecordBatchDecoder::decode_all(&mut bytes.clone()).unwrap();
        assert_eq!(sets.len(), 2, "one wire batch per engine batch");
        assert!(
            sets.iter().all(|s| s.compression == Compression::None),
            "fetched batches are uncompressed (docs/kafka-differences.md)"
        );
        let recs = &sets[0].records;
        assert_eq!(recs.len(), 2);
        assert_eq!((recs[0].offset, recs[1].offset), (5, 6));
        assert_eq!(recs[0].partition_leader_epoch, 2);
        assert_eq!(recs[0].key.as_deref(), Some(&b"k"[..]));
        assert_eq!(recs[1].value.as_deref(), Some(&b"v2"[..]));
        assert_eq!(recs[1].headers.len(), 1);
        let m = &sets[1].records[0];
        assert!(m.control && m.transactional);
        assert_eq!(m.offset, 7);
        assert_eq!(
            m.key.as_deref(),
            Some(&[0u8, 0, 0, 1][..]),
            "commit marker key"
        );
    }

    /// A LogAppendTime topic's batch goes out with the timestamp-type bit
    /// (attributes bit 3) and its records' engine stamps as Unix times from
    /// the origin; a CreateTime batch has neither.
    #[test]
    fn a_log_append_time_batch_carries_the_bit_and_unix_times() {
        let mut batch = RecordBatch::new(vec![Record::value("a"), Record::value("b")]);
        batch.stamp(crate::engine::core::codec::Stamp::All(40));
        let origin = 1_700_000_000_000;
        for (log_append, bit, time) in [(Some(origin), true, origin + 40), (None, false, 40)] {
            let bytes = encode_batches(std::slice::from_ref(&batch), log_append).unwrap();
            let attributes = i16::from_be_bytes([bytes[ATTRIBUTES_AT], bytes[ATTRIBUTES_AT + 1]]);
            assert_eq!(attributes & (1 << 3) != 0, bit, "{log_append:?}");
            // The batch's max timestamp, which a client reads for every
            // record of a LogAppendTime batch.
            let max = i64::from_be_bytes(bytes[35..43].try_into().unwrap());
            assert_eq!(max, time);
            let sets = RecordBatchDecoder::decode_all(&mut bytes.clone()).unwrap();
            for r in &sets[0].records {
                let kind = if bit {
                    TimestampType::LogAppend
                } else {
                    TimestampType::Creation
                };
                assert_eq!((r.timestamp_type, r.timestamp), (kind, time));
            }
        }
    }
}
