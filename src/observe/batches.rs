//! Kafka v2 record batches from a Fetch response, decoded into what the
//! snapshot shows of a batch (docs/observe.md): the header fields read
//! here from their fixed places (base offset, leader epoch, CRC,
//! attributes, last offset delta, producer id and epoch, base sequence),
//! the records by the `kafka-protocol` crate's `RecordBatchDecoder`
//! (which checks the CRC-32C, and decompresses gzip, snappy, lz4 and zstd
//! through the codecs `serve` builds in, bounded as serve bounds a
//! produced batch). A batch cut short at the end of the
//! response (a broker may stop inside one at its byte limit) is dropped,
//! as a consumer drops it. A batch whose stored CRC does not match its
//! bytes is decoded anyway and flagged ([`WireBatch::bad_crc`]), as
//! librdkafka's consumer reads it (`check.crcs` is off by default):
//! librdkafka's mock cluster writes its transaction markers with CRC 0
//! (docs/observe.md "Tested implementations"), and one bad batch should
//! not hide the whole cluster.

use bytes::{Buf, Bytes};
use kafka_protocol::records::RecordBatchDecoder;

use crate::session::SessionError;
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
    /// Whether the batch came compressed (its records are decoded all the
    /// same).
    pub compressed: bool,
    pub records: Vec<RecordSnapshot>,
    /// The CRC-32C of the batch's bytes when `crc` (the stored one)
    /// differs from it: the batch was decoded unchecked.
    pub bad_crc: Option<u32>,
}

/// Where a v2 batch's CRC is stored, and where the bytes it covers start.
const CRC_AT: usize = 17;
const CRC_FROM: usize = 21;

/// The whole batches in `bytes`, in order.
pub fn decode_batches(bytes: &Bytes) -> Result<Vec<WireBatch>, SessionError> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while bytes.len() - at >= LOG_OVERHEAD {
        let b = &bytes[at..];
        let base_offset = i64::from_be_bytes(b[0..8].try_into().expect("8 bytes"));
        let length = i32::from_be_bytes(b[8..12].try_into().expect("4 bytes"));
        let Ok(length) = usize::try_from(length) else {
            return Err(SessionError::Frame(format!(
                "the batch at offset {base_offset} has a negative length {length}"
            )));
        };
        let total = LOG_OVERHEAD + length;
        if b.len() < total {
            break; // cut at the response's byte limit: a consumer drops it too
        }
        if total < HEADER_BYTES {
            return Err(SessionError::Frame(format!(
                "the batch at offset {base_offset} is {total} bytes, shorter than a v2 header"
            )));
        }
        if b[16] != 2 {
            return Err(SessionError::Frame(format!(
                "the batch at offset {base_offset} is magic v{}, not v2",
                b[16]
            )));
        }
        out.push(decode_one(bytes.slice(at..at + total))?);
        at += total;
    }
    Ok(out)
}

fn decode_one(batch: Bytes) -> Result<WireBatch, SessionError> {
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
    let computed = crc32c(&batch[CRC_FROM..]);
    let bad_crc = (computed != crc).then_some(computed);
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
        bad_crc,
    };
    // The decoder checks the CRC: give it the computed one when the stored
    // one is wrong (the batch is flagged above).
    let mut checked = match bad_crc {
        None => batch.clone(),
        Some(computed) => {
            let mut fixed = batch.to_vec();
            fixed[CRC_AT..CRC_FROM].copy_from_slice(&computed.to_be_bytes());
            Bytes::from(fixed)
        }
    };
    let set = RecordBatchDecoder::decode(&mut checked).map_err(|e| {
        // The protocol crate's messages may end in a newline (issue 25).
        let e = crate::kafka::codec::one_line(e);
        SessionError::Frame(format!(
            "the batch at offset {base_offset} does not decode: {e}"
        ))
    })?;
    if is_control {
        let key = set.records.first().and_then(|r| r.key.clone());
        wire.control = match key.as_deref() {
            Some([_, _, 0, 0, ..]) => Some(ControlKind::Abort),
            Some([_, _, 0, 1, ..]) => Some(ControlKind::Commit),
            _ => {
                return Err(SessionError::Frame(format!(
                    "the control batch at offset {base_offset} has no ABORT or COMMIT key"
                )));
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
            headers: r
                .headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.as_deref().map(text)))
                .collect(),
        })
        .collect();
    Ok(wire)
}

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of
/// a v2 record batch, bit by bit: a fetch holds at most
/// [`super::fetch::PARTITION_MAX_BYTES`] per partition, so speed does not
/// matter, and no dependency is added for it.
pub(crate) fn crc32c(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_has_the_castagnoli_check_value() {
        // The standard check input of every CRC catalogue.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(b""), 0);
    }

    /// A batch as a producer compresses it (Kafka keeps and returns it so)
    /// decodes to its records with each codec: values and headers intact.
    /// A record as the test compares it: offset, value, headers.
    type Seen = (i64, Option<String>, Vec<(String, Option<String>)>);

    #[test]
    fn a_compressed_batch_decodes_to_its_records() {
        use bytes::BytesMut;
        use kafka_protocol::protocol::StrBytes;
        use kafka_protocol::records::{
            Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
        };
        let records: Vec<Record> = (0..3)
            .map(|i| Record {
                transactional: false,
                control: false,
                delete_horizon: false,
                partition_leader_epoch: 0,
                producer_id: -1,
                producer_epoch: -1,
                timestamp_type: TimestampType::Creation,
                offset: 10 + i,
                // The encoder starts a new batch where a record's sequence
                // does not follow on; without a producer id it counts from -1.
                sequence: -1 + i as i32,
                timestamp: 1000 + i,
                key: None,
                value: Some(Bytes::from(format!("v{i}"))),
                headers: vec![(
                    StrBytes::from_static_str("trace"),
                    Some(Bytes::from(format!("t{i}"))),
                )],
            })
            .collect();
        for compression in [
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let mut buf = BytesMut::new();
            let options = RecordEncodeOptions {
                version: 2,
                compression,
            };
            RecordBatchEncoder::encode(&mut buf, records.iter(), &options).unwrap();
            let batches = decode_batches(&buf.freeze()).unwrap();
            assert_eq!(batches.len(), 1, "{compression:?}");
            let b = &batches[0];
            assert!(b.compressed, "{compression:?}");
            assert_eq!((b.base_offset, b.last_offset), (10, 12));
            let got: Vec<Seen> = b
                .records
                .iter()
                .map(|r| (r.offset, r.value.clone(), r.headers.clone()))
                .collect();
            let want: Vec<Seen> = (0..3)
                .map(|i| {
                    (
                        10 + i,
                        Some(format!("v{i}")),
                        vec![("trace".to_string(), Some(format!("t{i}")))],
                    )
                })
                .collect();
            assert_eq!(got, want, "{compression:?}");
        }
    }
}
