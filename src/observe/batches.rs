//! Kafka v2 record batches from a Fetch response, decoded into what the
//! snapshot shows of a batch (docs/observe.md): the header fields read
//! here from their fixed places (base offset, leader epoch, CRC,
//! attributes, last offset delta, producer id and epoch, base sequence),
//! the records by the `kafka-protocol` crate's `RecordBatchDecoder`
//! (which checks the CRC-32C). A batch cut short at the end of the
//! response (a broker may stop inside one at its byte limit) is dropped,
//! as a consumer drops it.

use bytes::{Buf, Bytes};
use kafka_protocol::records::RecordBatchDecoder;

use crate::session::snapshot::{ControlKind, RecordSnapshot, text};

/// Bytes before a batch's records: its v2 header.
const HEADER_BYTES: usize = 61;
/// Base offset and batch length: the bytes before what the length counts.
const LOG_OVERHEAD: usize = 12;

/// One record batch as the wire carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireBatch {
    pub base_offset: i64,
    pub last_offset: i64,
    pub leader_epoch: i32,
    pub crc: u32,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub transactional: bool,
    /// The marker's type for a control batch (from its record's key).
    pub control: Option<ControlKind>,
    /// Whether the batch is compressed: its records are then not decoded
    /// (this build has no codecs) and `records` is empty.
    pub compressed: bool,
    pub records: Vec<RecordSnapshot>,
}

/// The whole batches in `bytes`, in order.
pub fn decode_batches(bytes: &Bytes) -> Result<Vec<WireBatch>, String> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while bytes.len() - at >= LOG_OVERHEAD {
        let b = &bytes[at..];
        let base_offset = i64::from_be_bytes(b[0..8].try_into().expect("8 bytes"));
        let length = i32::from_be_bytes(b[8..12].try_into().expect("4 bytes"));
        let Ok(length) = usize::try_from(length) else {
            return Err(format!(
                "the batch at offset {base_offset} has a negative length {length}"
            ));
        };
        let total = LOG_OVERHEAD + length;
        if b.len() < total {
            break; // cut at the response's byte limit: a consumer drops it too
        }
        if total < HEADER_BYTES {
            return Err(format!(
                "the batch at offset {base_offset} is {total} bytes, shorter than a v2 header"
            ));
        }
        if b[16] != 2 {
            return Err(format!(
                "the batch at offset {base_offset} is magic v{}, not v2",
                b[16]
            ));
        }
        out.push(decode_one(bytes.slice(at..at + total))?);
        at += total;
    }
    Ok(out)
}

fn decode_one(batch: Bytes) -> Result<WireBatch, String> {
    let mut h = batch.clone();
    let base_offset = h.get_i64();
    let _length = h.get_i32();
    let leader_epoch = h.get_i32();
    let _magic = h.get_i8();
    let crc = h.get_u32();
    let attributes = h.get_i16();
    let last_offset_delta = h.get_i32();
    let _base_timestamp = h.get_i64();
    let _max_timestamp = h.get_i64();
    let producer_id = h.get_i64();
    let producer_epoch = h.get_i16();
    let base_sequence = h.get_i32();
    let compressed = attributes & 0x07 != 0;
    let transactional = attributes & 0x10 != 0;
    let is_control = attributes & 0x20 != 0;
    let mut wire = WireBatch {
        base_offset,
        last_offset: base_offset + i64::from(last_offset_delta),
        leader_epoch,
        crc,
        producer_id,
        producer_epoch,
        base_sequence,
        transactional,
        control: None,
        compressed,
        records: Vec::new(),
    };
    if compressed && !is_control {
        return Ok(wire);
    }
    let set = RecordBatchDecoder::decode(&mut batch.clone())
        .map_err(|e| format!("the batch at offset {base_offset} does not decode: {e}"))?;
    if is_control {
        let key = set.records.first().and_then(|r| r.key.clone());
        wire.control = match key.as_deref() {
            Some([_, _, 0, 0, ..]) => Some(ControlKind::Abort),
            Some([_, _, 0, 1, ..]) => Some(ControlKind::Commit),
            _ => {
                return Err(format!(
                    "the control batch at offset {base_offset} has no ABORT or COMMIT key"
                ));
            }
        };
        return Ok(wire);
    }
    wire.records = set
        .records
        .iter()
        .map(|r| RecordSnapshot {
            offset: r.offset,
            key: r.key.as_deref().map(text),
            value: r.value.as_deref().map(text),
        })
        .collect();
    Ok(wire)
}
