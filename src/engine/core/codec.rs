//! The MKB1 batch frame (FORMATS.md "Batch frame"), big-endian throughout:
//!
//! ```text
//! frame   = "MKB1" | payload_length u32 | crc32(payload) u32 | payload
//! payload = version u8 (=1) | base_offset i64 | leader_epoch u32 | producer_id i64
//!         | producer_epoch i32 | base_sequence i32 | flags u8 | last_offset_delta i32
//!         | transactional_id_length u16 | record_count u32 | transactional_id | record*
//! record  = offset_delta i32 | timestamp_ms i64 | key_length i32 | value_length i32
//!         | header_count u16 | key | value | header*
//! header  = key_length u16 | key | value_length i32 | value
//! ```
//!
//! Decoding checks everything the format names as invalid: bad magic, a length
//! past the end, a CRC mismatch, trailing bytes inside a payload, and the
//! structural rules of [`RecordBatch::validate`].

use bytes::Bytes;

use crate::engine::core::batch::{
    ControlType, DELTAS_OUT_OF_ORDER, HEADER_KEY_TOO_LONG, RecordBatch,
};
use crate::engine::core::record::{Header, Record};

/// The four magic bytes that open every frame.
pub const MAGIC: &[u8; 4] = b"MKB1";
/// Bytes before the payload: magic, length, CRC.
pub const FRAME_HEADER_LEN: usize = 12;
/// The only payload version.
pub const VERSION: u8 = 1;
/// Fixed part of the payload before the transactional id.
const PAYLOAD_FIXED_LEN: usize = 1 + 8 + 4 + 8 + 4 + 4 + 1 + 4 + 2 + 4;
/// A record's fixed-width fields: offset delta, timestamp, key and value
/// lengths, header count.
const RECORD_FIXED_LEN: usize = 4 + 8 + 4 + 4 + 2;

const FLAG_TRANSACTIONAL: u8 = 1;
const FLAG_COMMIT: u8 = 2;
const FLAG_ABORT: u8 = 4;

/// Why a frame is not valid. `Incomplete` means the bytes end inside the frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("frame incomplete: needs {needed} bytes, {available} available")]
    Incomplete { needed: usize, available: usize },
    #[error("bad magic {0:02x?}")]
    BadMagic([u8; 4]),
    #[error("crc mismatch: stored {stored:08x}, computed {computed:08x}")]
    CrcMismatch { stored: u32, computed: u32 },
    #[error("malformed payload: {0}")]
    Malformed(String),
}

/// The batch-level fields of a frame, read without decoding its records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchHeader {
    pub base_offset: i64,
    pub leader_epoch: u32,
    pub producer_id: i64,
    pub producer_epoch: i32,
    pub base_sequence: i32,
    pub control: Option<ControlType>,
    pub last_offset_delta: i32,
    pub record_count: u32,
    pub transactional_id: Option<String>,
    /// The frame's CRC32: with the offsets and epoch it identifies the batch's
    /// content, which is how followers find where their log diverges.
    pub crc: u32,
}

impl BatchHeader {
    /// The offset of the batch's last record or marker.
    pub fn last_offset(&self) -> i64 {
        self.base_offset + i64::from(self.last_offset_delta)
    }
}

/// Encodes a batch as one MKB1 frame.
pub fn encode(batch: &RecordBatch) -> Vec<u8> {
    let mut out = Vec::with_capacity(encoded_len(batch));
    encode_into(batch, &mut out);
    out
}

/// Appends one MKB1 frame for `batch` to `out`, as it is (no rule checked,
/// no timestamp changed).
pub fn encode_into(batch: &RecordBatch, out: &mut Vec<u8>) {
    write_frame::<false>(batch, out, Stamp::Keep).expect("an unchecked encoding cannot fail");
}

/// How an encoding sets each record's timestamp: the leader stamps a
/// producer's batch as it writes the frame, so that the records are walked
/// once (docs/performance.md, P3, "fourth pass").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stamp {
    /// Each record's own timestamp.
    Keep,
    /// This time for the records whose timestamp is 0 (CreateTime: a
    /// producer that left it unset gets the leader's clock).
    Unset(i64),
    /// This time for every record (LogAppendTime: the records carry the
    /// time the leader appended them, Kafka's `message.timestamp.type`).
    All(i64),
}

impl Stamp {
    /// A record's timestamp once stamped (the one rule: the frame's
    /// encoding and [`RecordBatch::stamp`] both apply it).
    pub fn timestamp(self, record_ms: i64) -> i64 {
        match self {
            Stamp::Keep => record_ms,
            Stamp::Unset(now) if record_ms == 0 => now,
            Stamp::Unset(_) => record_ms,
            Stamp::All(now) => now,
        }
    }
}

/// Appends one MKB1 frame for `batch` to `out` with its timestamps set by
/// `stamp`, checking the record rules of [`RecordBatch::validate`] (offset
/// deltas, header key lengths) while it walks the records: the caller has
/// checked the batch-level rules ([`RecordBatch::validate_batch`]). A record
/// that breaks a rule leaves `out` as it was and returns the reason
/// `validate` gives, the first in record order.
pub fn encode_checked_into(
    batch: &RecordBatch,
    out: &mut Vec<u8>,
    stamp: Stamp,
) -> Result<(), &'static str> {
    let start = out.len();
    write_frame::<true>(batch, out, stamp).inspect_err(|_| out.truncate(start))
}

/// The one encoding: the batch header, then each record's five fixed-width
/// fields as one 22-byte block (one bounds check, not five), its key and
/// value, its headers; the CRC once over the finished payload (crc32fast
/// folds 64-byte blocks, faster over the whole payload than record by
/// record). With `CHECK`, the record rules are checked in the same walk.
fn write_frame<const CHECK: bool>(
    batch: &RecordBatch,
    out: &mut Vec<u8>,
    stamp: Stamp,
) -> Result<(), &'static str> {
    let start = out.len();
    let tid = batch.transactional_id.as_deref().unwrap_or("");
    let mut flags = 0;
    if batch.transactional_id.is_some() {
        flags |= FLAG_TRANSACTIONAL;
    }
    match batch.control {
        Some(ControlType::Commit) => flags |= FLAG_COMMIT,
        Some(ControlType::Abort) => flags |= FLAG_ABORT,
        None => {}
    }
    let mut head = [0u8; FRAME_HEADER_LEN + PAYLOAD_FIXED_LEN];
    head[..4].copy_from_slice(MAGIC); // length and crc, filled below
    let p = &mut head[FRAME_HEADER_LEN..];
    p[0] = VERSION;
    p[1..9].copy_from_slice(&batch.base_offset.to_be_bytes());
    p[9..13].copy_from_slice(&batch.leader_epoch.to_be_bytes());
    p[13..21].copy_from_slice(&batch.producer_id.to_be_bytes());
    p[21..25].copy_from_slice(&batch.producer_epoch.to_be_bytes());
    p[25..29].copy_from_slice(&batch.base_sequence.to_be_bytes());
    p[29] = flags;
    p[30..34].copy_from_slice(&batch.last_offset_delta.to_be_bytes());
    p[34..36].copy_from_slice(&(tid.len() as u16).to_be_bytes());
    p[36..40].copy_from_slice(&(batch.records.len() as u32).to_be_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(tid.as_bytes());
    let mut previous = -1;
    for record in &batch.records {
        if CHECK {
            if record.offset_delta <= previous || record.offset_delta > batch.last_offset_delta {
                return Err(DELTAS_OUT_OF_ORDER);
            }
            previous = record.offset_delta;
        }
        let key = record.key.as_deref();
        let value = record.value.as_deref();
        let (key, value, key_len, value_len) = (
            key.unwrap_or_default(),
            value.unwrap_or_default(),
            nullable_len(key),
            nullable_len(value),
        );
        let mut fixed = [0u8; RECORD_FIXED_LEN];
        fixed[..4].copy_from_slice(&record.offset_delta.to_be_bytes());
        fixed[4..12].copy_from_slice(&stamp.timestamp(record.timestamp_ms).to_be_bytes());
        fixed[12..16].copy_from_slice(&key_len.to_be_bytes());
        fixed[16..20].copy_from_slice(&value_len.to_be_bytes());
        fixed[20..].copy_from_slice(&(record.headers.len() as u16).to_be_bytes());
        out.reserve(RECORD_FIXED_LEN + key.len() + value.len());
        out.extend_from_slice(&fixed);
        out.extend_from_slice(key);
        out.extend_from_slice(value);
        for header in &record.headers {
            if CHECK && header.key.len() > usize::from(u16::MAX) {
                return Err(HEADER_KEY_TOO_LONG);
            }
            out.extend_from_slice(&(header.key.len() as u16).to_be_bytes());
            out.extend_from_slice(header.key.as_bytes());
            let value = header.value.as_deref();
            out.extend_from_slice(&nullable_len(value).to_be_bytes());
            out.extend_from_slice(value.unwrap_or_default());
        }
    }
    let payload_start = start + FRAME_HEADER_LEN;
    let payload_len = (out.len() - payload_start) as u32;
    let crc = crc32fast::hash(&out[payload_start..]);
    out[start + 4..start + 8].copy_from_slice(&payload_len.to_be_bytes());
    out[start + 8..start + 12].copy_from_slice(&crc.to_be_bytes());
    Ok(())
}

/// The exact size of `batch`'s frame.
pub fn encoded_len(batch: &RecordBatch) -> usize {
    let records: usize = batch
        .records
        .iter()
        .map(|r| {
            RECORD_FIXED_LEN
                + r.key.as_ref().map_or(0, Bytes::len)
                + r.value.as_ref().map_or(0, Bytes::len)
                + r.headers
                    .iter()
                    .map(|h| 6 + h.key.len() + h.value.as_ref().map_or(0, Bytes::len))
                    .sum::<usize>()
        })
        .sum();
    FRAME_HEADER_LEN
        + PAYLOAD_FIXED_LEN
        + batch.transactional_id.as_ref().map_or(0, String::len)
        + records
}

/// A nullable field's length as the frame spells it: -1 for null.
fn nullable_len(bytes: Option<&[u8]>) -> i32 {
    bytes.map_or(-1, |b| b.len() as i32)
}

/// Reads the frame at the start of `bytes`: checks magic, length and CRC and
/// returns the payload and the frame's total length.
pub fn split_frame(bytes: &[u8]) -> Result<(&[u8], usize), FrameError> {
    if bytes.len() < FRAME_HEADER_LEN {
        if !bytes.is_empty() && !MAGIC.starts_with(&bytes[..bytes.len().min(4)]) {
            return Err(FrameError::BadMagic(magic_of(bytes)));
        }
        return Err(FrameError::Incomplete {
            needed: FRAME_HEADER_LEN,
            available: bytes.len(),
        });
    }
    if &bytes[..4] != MAGIC {
        return Err(FrameError::BadMagic(magic_of(bytes)));
    }
    let payload_len = u32::from_be_bytes(bytes[4..8].try_into().unwrap()) as usize;
    let stored = u32::from_be_bytes(bytes[8..12].try_into().unwrap());
    let total = FRAME_HEADER_LEN + payload_len;
    if bytes.len() < total {
        return Err(FrameError::Incomplete {
            needed: total,
            available: bytes.len(),
        });
    }
    let payload = &bytes[FRAME_HEADER_LEN..total];
    let computed = crc32fast::hash(payload);
    if computed != stored {
        return Err(FrameError::CrcMismatch { stored, computed });
    }
    Ok((payload, total))
}

/// The CRC stored in a frame's header (the caller checked the frame).
pub fn frame_crc(frame: &[u8]) -> u32 {
    u32::from_be_bytes(
        frame[8..12]
            .try_into()
            .expect("a frame has a 12-byte header"),
    )
}

fn magic_of(bytes: &[u8]) -> [u8; 4] {
    let mut m = [0; 4];
    let n = bytes.len().min(4);
    m[..n].copy_from_slice(&bytes[..n]);
    m
}

/// Decodes one whole frame at the start of `bytes`. Returns the batch and the
/// number of bytes the frame took.
pub fn decode(bytes: &[u8]) -> Result<(RecordBatch, usize), FrameError> {
    let (payload, total) = split_frame(bytes)?;
    Ok((decode_payload(payload)?, total))
}

/// Checks a frame completely (as [`decode`] does) but keeps only its header:
/// no record is allocated. Used by the recovery scan.
pub fn validate(bytes: &[u8]) -> Result<(BatchHeader, usize), FrameError> {
    let (payload, total) = split_frame(bytes)?;
    let mut reader = Reader::new(payload);
    let mut header = read_header(&mut reader)?;
    header.crc = frame_crc(bytes);
    let mut previous = -1;
    for _ in 0..header.record_count {
        previous = skip_record(&mut reader, previous, header.last_offset_delta)?;
    }
    reader.finish()?;
    Ok((header, total))
}

/// Decodes a payload whose CRC has been checked.
pub fn decode_payload(payload: &[u8]) -> Result<RecordBatch, FrameError> {
    let mut reader = Reader::new(payload);
    let header = read_header(&mut reader)?;
    let batch = read_records(&mut reader, header, usize::MAX)?;
    reader.finish()?;
    Ok(batch)
}

/// Decodes a batch's header and its first `max_records` records from the
/// start of its payload, which may stop anywhere after them: what the
/// dashboard shows of a batch, read without the rest of a large frame (its
/// cost does not grow with the batch). The CRC is not checked, and a prefix
/// cut inside those records is an error: the caller reads the whole frame
/// then. The batch keeps its header's offsets; only `records` is cut short.
pub fn decode_head(payload_prefix: &[u8], max_records: usize) -> Result<RecordBatch, FrameError> {
    let mut reader = Reader::new(payload_prefix);
    let header = read_header(&mut reader)?;
    read_records(&mut reader, header, max_records)
}

/// Reads up to `max_records` records after a batch header.
fn read_records(
    reader: &mut Reader<'_>,
    header: BatchHeader,
    max_records: usize,
) -> Result<RecordBatch, FrameError> {
    let count = (header.record_count as usize).min(max_records);
    let mut records = Vec::with_capacity(count.min(1 << 16));
    let mut previous = -1;
    for _ in 0..count {
        let offset_delta = reader.i32()?;
        check_delta(offset_delta, previous, header.last_offset_delta)?;
        previous = offset_delta;
        let timestamp_ms = reader.i64()?;
        let key_len = reader.i32()?;
        let value_len = reader.i32()?;
        let header_count = reader.u16()?;
        let key = reader.nullable(key_len)?.map(Bytes::copy_from_slice);
        let value = reader.nullable(value_len)?.map(Bytes::copy_from_slice);
        let mut headers = Vec::with_capacity(usize::from(header_count));
        for _ in 0..header_count {
            let key_len = reader.u16()?;
            let key = std::str::from_utf8(reader.take(usize::from(key_len))?)
                .map_err(|_| malformed("header key is not UTF-8"))?
                .to_string();
            let value_len = reader.i32()?;
            let value = reader.nullable(value_len)?.map(Bytes::copy_from_slice);
            headers.push(Header { key, value });
        }
        records.push(Record {
            offset_delta,
            timestamp_ms,
            key,
            value,
            headers,
        });
    }
    Ok(RecordBatch {
        base_offset: header.base_offset,
        leader_epoch: header.leader_epoch,
        producer_id: header.producer_id,
        producer_epoch: header.producer_epoch,
        base_sequence: header.base_sequence,
        transactional_id: header.transactional_id,
        control: header.control,
        last_offset_delta: header.last_offset_delta,
        records,
    })
}

pub(crate) fn malformed(why: &str) -> FrameError {
    FrameError::Malformed(why.to_string())
}

pub(crate) fn check_delta(delta: i32, previous: i32, last: i32) -> Result<(), FrameError> {
    if delta <= previous || delta > last {
        return Err(malformed(
            "record offset deltas must increase within last_offset_delta",
        ));
    }
    Ok(())
}

pub(crate) fn read_header(reader: &mut Reader<'_>) -> Result<BatchHeader, FrameError> {
    let version = reader.u8()?;
    if version != VERSION {
        return Err(FrameError::Malformed(format!(
            "unsupported version {version}"
        )));
    }
    let base_offset = reader.i64()?;
    let leader_epoch = reader.u32()?;
    let producer_id = reader.i64()?;
    let producer_epoch = reader.i32()?;
    let base_sequence = reader.i32()?;
    let flags = reader.u8()?;
    let last_offset_delta = reader.i32()?;
    let tid_len = reader.u16()?;
    let record_count = reader.u32()?;
    if flags & !(FLAG_TRANSACTIONAL | FLAG_COMMIT | FLAG_ABORT) != 0 {
        return Err(FrameError::Malformed(format!("unknown flags {flags:#04x}")));
    }
    if base_offset < 0 || last_offset_delta < 0 {
        return Err(malformed("negative offset"));
    }
    if base_offset
        .checked_add(i64::from(last_offset_delta) + 1)
        .is_none()
    {
        return Err(malformed("offsets overflow i64"));
    }
    let transactional_id = if flags & FLAG_TRANSACTIONAL != 0 {
        let bytes = reader.take(usize::from(tid_len))?;
        Some(
            std::str::from_utf8(bytes)
                .map_err(|_| malformed("transactional id is not UTF-8"))?
                .to_string(),
        )
    } else if tid_len != 0 {
        return Err(malformed(
            "transactional id length set on a non-transactional batch",
        ));
    } else {
        None
    };
    let control = match (flags & FLAG_COMMIT != 0, flags & FLAG_ABORT != 0) {
        (true, true) => return Err(malformed("both COMMIT and ABORT set")),
        (true, false) => Some(ControlType::Commit),
        (false, true) => Some(ControlType::Abort),
        (false, false) => None,
    };
    if control.is_some() {
        if record_count != 0 || last_offset_delta != 0 {
            return Err(malformed("a control batch has no records and one offset"));
        }
        if transactional_id.is_none() {
            return Err(malformed("a control batch must carry a transactional id"));
        }
    } else if record_count == 0 {
        return Err(malformed("a data batch needs at least one record"));
    }
    Ok(BatchHeader {
        base_offset,
        leader_epoch,
        producer_id,
        producer_epoch,
        base_sequence,
        control,
        last_offset_delta,
        record_count,
        transactional_id,
        crc: 0,
    })
}

/// Walks one record without allocating; returns its offset delta.
fn skip_record(reader: &mut Reader<'_>, previous: i32, last_delta: i32) -> Result<i32, FrameError> {
    let offset_delta = reader.i32()?;
    check_delta(offset_delta, previous, last_delta)?;
    let _timestamp = reader.i64()?;
    let key_len = reader.i32()?;
    let value_len = reader.i32()?;
    let header_count = reader.u16()?;
    reader.nullable(key_len)?;
    reader.nullable(value_len)?;
    for _ in 0..header_count {
        let key_len = reader.u16()?;
        std::str::from_utf8(reader.take(usize::from(key_len))?)
            .map_err(|_| malformed("header key is not UTF-8"))?;
        let value_len = reader.i32()?;
        reader.nullable(value_len)?;
    }
    Ok(offset_delta)
}

/// A bounds-checked big-endian cursor over a payload.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, pos: 0 }
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], FrameError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| malformed("payload ends inside a field"))?;
        let slice = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], FrameError> {
        Ok(self.take(N)?.try_into().expect("take returns N bytes"))
    }

    pub(crate) fn u8(&mut self) -> Result<u8, FrameError> {
        Ok(self.array::<1>()?[0])
    }
    pub(crate) fn u16(&mut self) -> Result<u16, FrameError> {
        Ok(u16::from_be_bytes(self.array()?))
    }
    pub(crate) fn u32(&mut self) -> Result<u32, FrameError> {
        Ok(u32::from_be_bytes(self.array()?))
    }
    pub(crate) fn i32(&mut self) -> Result<i32, FrameError> {
        Ok(i32::from_be_bytes(self.array()?))
    }
    pub(crate) fn i64(&mut self) -> Result<i64, FrameError> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    pub(crate) fn nullable(&mut self, len: i32) -> Result<Option<&'a [u8]>, FrameError> {
        match len {
            -1 => Ok(None),
            n if n < -1 => Err(malformed("negative length")),
            n => self.take(n as usize).map(Some),
        }
    }

    pub(crate) fn finish(&self) -> Result<(), FrameError> {
        if self.pos != self.bytes.len() {
            return Err(FrameError::Malformed(format!(
                "{} trailing bytes inside the payload",
                self.bytes.len() - self.pos
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full_batch() -> RecordBatch {
        let mut b = RecordBatch::new(vec![
            Record::keyed("k", "v").with_header("h1", Some(b"x".to_vec().into())),
            Record {
                key: None,
                value: None,
                timestamp_ms: -5,
                headers: vec![Header {
                    key: "null-valued".into(),
                    value: None,
                }],
                ..Record::default()
            },
            Record {
                key: Some(vec![].into()),
                value: Some(vec![0, 255, 10].into()),
                timestamp_ms: i64::MAX,
                ..Record::default()
            },
        ])
        .with_producer(42, 3, 17)
        .with_transactional_id("tx-é");
        b.base_offset = 1234;
        b.leader_epoch = 9;
        b
    }

    #[test]
    fn every_field_round_trips() {
        let b = full_batch();
        let frame = encode(&b);
        assert_eq!(frame.len(), encoded_len(&b));
        let (back, used) = decode(&frame).unwrap();
        assert_eq!(used, frame.len());
        assert_eq!(back, b);
        let (header, _) = validate(&frame).unwrap();
        assert_eq!(header.base_offset, 1234);
        assert_eq!(header.record_count, 3);
        assert_eq!(header.transactional_id.as_deref(), Some("tx-é"));
    }

    #[test]
    fn control_markers_round_trip_with_flags() {
        for control in [ControlType::Commit, ControlType::Abort] {
            let mut m = RecordBatch::control_marker(control, "tx-1");
            m.base_offset = 5;
            let frame = encode(&m);
            // flags byte: version(1)+offset(8)+epoch(4)+pid(8)+pepoch(4)+seq(4)
            let flags = frame[FRAME_HEADER_LEN + 29];
            let expected = match control {
                ControlType::Commit => 0b011,
                ControlType::Abort => 0b101,
            };
            assert_eq!(flags, expected);
            assert_eq!(decode(&frame).unwrap().0, m);
        }
    }

    #[test]
    fn layout_matches_the_format_byte_for_byte() {
        let mut b = RecordBatch::of_values(["v"]);
        b.base_offset = 2;
        b.records[0].timestamp_ms = 7;
        let f = encode(&b);
        assert_eq!(&f[..4], b"MKB1");
        let payload_len = u32::from_be_bytes(f[4..8].try_into().unwrap()) as usize;
        assert_eq!(payload_len, f.len() - 12);
        assert_eq!(
            u32::from_be_bytes(f[8..12].try_into().unwrap()),
            crc32fast::hash(&f[12..])
        );
        let p = &f[12..];
        assert_eq!(p[0], 1);
        assert_eq!(i64::from_be_bytes(p[1..9].try_into().unwrap()), 2);
        assert_eq!(
            i64::from_be_bytes(p[13..21].try_into().unwrap()),
            -1,
            "producer id"
        );
        assert_eq!(
            u32::from_be_bytes(p[36..40].try_into().unwrap()),
            1,
            "record count"
        );
        // record: delta 0, ts 7, key -1, value 1, 0 headers, "v"
        let r = &p[40..];
        assert_eq!(i32::from_be_bytes(r[0..4].try_into().unwrap()), 0);
        assert_eq!(i64::from_be_bytes(r[4..12].try_into().unwrap()), 7);
        assert_eq!(i32::from_be_bytes(r[12..16].try_into().unwrap()), -1);
        assert_eq!(i32::from_be_bytes(r[16..20].try_into().unwrap()), 1);
        assert_eq!(&r[20..23], &[0, 0, b'v']);
        assert_eq!(r.len(), 23);
    }

    #[test]
    fn invalid_frames_are_rejected() {
        let frame = encode(&full_batch());
        for cut in 0..frame.len() {
            assert!(
                decode(&frame[..cut]).is_err(),
                "cut at {cut} must not decode"
            );
            assert!(validate(&frame[..cut]).is_err());
        }
        let mut bad_magic = frame.clone();
        bad_magic[0] = b'X';
        assert!(matches!(decode(&bad_magic), Err(FrameError::BadMagic(_))));
        let mut bad_crc = frame.clone();
        let last = bad_crc.len() - 1;
        bad_crc[last] ^= 1;
        assert!(matches!(
            decode(&bad_crc),
            Err(FrameError::CrcMismatch { .. })
        ));
        // trailing bytes inside the payload, with a CRC that matches them
        let mut trailing = frame.clone();
        trailing.push(0);
        let len = (trailing.len() - 12) as u32;
        trailing[4..8].copy_from_slice(&len.to_be_bytes());
        let crc = crc32fast::hash(&trailing[12..]);
        trailing[8..12].copy_from_slice(&crc.to_be_bytes());
        assert!(matches!(decode(&trailing), Err(FrameError::Malformed(_))));
        assert!(matches!(validate(&trailing), Err(FrameError::Malformed(_))));
    }

    #[test]
    fn offsets_that_overflow_are_malformed() {
        let mut b = RecordBatch::of_values(["a", "b"]);
        b.base_offset = i64::MAX - 1;
        assert!(b.validate().is_err());
        let frame = encode(&b);
        assert!(matches!(decode(&frame), Err(FrameError::Malformed(_))));
        assert!(matches!(validate(&frame), Err(FrameError::Malformed(_))));
    }

    #[test]
    fn both_control_flags_is_malformed() {
        let mut m = RecordBatch::control_marker(ControlType::Commit, "t");
        m.base_offset = 0;
        let mut f = encode(&m);
        f[FRAME_HEADER_LEN + 29] = 0b111;
        let crc = crc32fast::hash(&f[12..]);
        f[8..12].copy_from_slice(&crc.to_be_bytes());
        assert!(matches!(decode(&f), Err(FrameError::Malformed(_))));
    }

    #[test]
    fn the_checked_encoding_writes_the_bytes_of_the_stamped_batch() {
        let mut b = full_batch();
        b.records[0].timestamp_ms = 0;
        let mut prefix = b"before".to_vec();
        for (stamp, stamped) in [
            (Stamp::Keep, b.clone()),
            (Stamp::Unset(77), {
                let mut s = b.clone();
                s.stamp(Stamp::Unset(77));
                s
            }),
            (Stamp::All(78), {
                let mut s = b.clone();
                s.stamp(Stamp::All(78));
                s
            }),
        ] {
            prefix.truncate(6);
            encode_checked_into(&b, &mut prefix, stamp).unwrap();
            assert_eq!(&prefix[..6], b"before");
            assert_eq!(prefix[6..], encode(&stamped), "{stamp:?}");
        }
    }

    #[test]
    fn the_checked_encoding_refuses_what_validate_refuses() {
        let mut disordered = RecordBatch::of_values(["a", "b", "c"]);
        disordered.records[2].offset_delta = 1;
        let mut beyond = RecordBatch::of_values(["a", "b"]);
        beyond.records[1].offset_delta = 5;
        let long_key = Record::value("v").with_header("k".repeat(65536), None);
        let long_header = RecordBatch::new(vec![Record::value("a"), long_key]);
        // The first broken rule in record order: a long header key before
        // a later record's delta.
        let mut both = long_header.clone();
        both.records.push(Record::value("z"));
        both.last_offset_delta = 2;
        for batch in [disordered, beyond, long_header, both] {
            let mut out = b"kept".to_vec();
            let why = encode_checked_into(&batch, &mut out, Stamp::Keep).unwrap_err();
            assert_eq!(out, b"kept", "a refused batch leaves the buffer as it was");
            match batch.validate() {
                Err(crate::engine::error::MiniKafkaError::InvalidBatch(reason)) => {
                    assert_eq!(reason, why)
                }
                other => panic!("validate gave {other:?}"),
            }
        }
    }
}
