//! A logged batch written out as a Kafka v2 record batch straight from
//! its MKB1 frame ([`BatchView`]): each key, value and header is copied
//! once, from the frame read off disk into the response, with no record
//! decoded into owned values and no batch encoded apart and copied again.
//!
//! The bytes are those [`records::encode_batches`] writes for the same
//! batch through the protocol crate's encoder (the tests hold the two
//! equal), which is what a fetch answered before: the batch's base offset
//! is its first record's and its last offset delta its last record's (a
//! compacted batch's survivors), its timestamps the records' least and
//! greatest, a control batch's one record the marker Kafka writes.
//!
//! [`records::encode_batches`]: crate::kafka::records::encode_batches

use bytes::{BufMut, BytesMut};

use crate::engine::ControlType;
use crate::engine::core::batch_view::{BatchView, RecordView};

/// Appends `batch` to `buf` as one v2 batch (uncompressed). With
/// `log_append_origin`, a LogAppendTime topic's: each data record's
/// timestamp is the origin plus its engine time, and the batch says so.
pub fn write_v2(buf: &mut BytesMut, batch: &BatchView<'_>, log_append_origin: Option<i64>) {
    let h = &batch.header;
    let marker;
    let records: &[RecordView<'_>] = match h.control {
        Some(control) => {
            marker = [control_record(control)];
            &marker
        }
        None => &batch.records,
    };
    let (Some(first), Some(last)) = (records.first(), records.last()) else {
        // A data batch always has a record (the frame's rule).
        return;
    };
    let log_append = log_append_origin.filter(|_| h.control.is_none());
    let stamp = |r: &RecordView<'_>| {
        log_append.map_or(r.timestamp_ms, |o| o.saturating_add(r.timestamp_ms))
    };
    let min_ts = records.iter().map(stamp).min().expect("a record");
    let max_ts = records.iter().map(stamp).max().expect("a record");
    let first_delta = first.offset_delta;

    buf.put_i64(h.base_offset + i64::from(first_delta));
    let length_at = buf.len();
    buf.put_i32(0); // the batch's length, filled below
    buf.put_i32(h.leader_epoch as i32);
    buf.put_i8(2); // magic
    let crc_at = buf.len();
    buf.put_u32(0); // CRC-32C of the rest, filled below
    let mut attributes: i16 = 0; // no compression
    if log_append.is_some() {
        attributes |= 1 << 3;
    }
    if h.transactional_id.is_some() {
        attributes |= 1 << 4;
    }
    if h.control.is_some() {
        attributes |= 1 << 5;
    }
    buf.put_i16(attributes);
    buf.put_i32(last.offset_delta - first_delta);
    buf.put_i64(min_ts);
    buf.put_i64(max_ts);
    buf.put_i64(h.producer_id);
    buf.put_i16(h.producer_epoch as i16);
    buf.put_i32(h.base_sequence.wrapping_add(first_delta));
    buf.put_i32(records.len() as i32);
    for r in records {
        write_record(buf, r, stamp(r) - min_ts, r.offset_delta - first_delta);
    }
    let length = (buf.len() - length_at - 4) as i32;
    buf[length_at..length_at + 4].copy_from_slice(&length.to_be_bytes());
    let crc = crc32c::crc32c(&buf[crc_at + 4..]);
    buf[crc_at..crc_at + 4].copy_from_slice(&crc.to_be_bytes());
}

/// The one record of a COMMIT or ABORT batch: key version 0 and the
/// type, value version 0 and coordinator epoch 0, time 0.
fn control_record(control: ControlType) -> RecordView<'static> {
    const ABORT: [u8; 4] = [0, 0, 0, 0];
    const COMMIT: [u8; 4] = [0, 0, 0, 1];
    const VALUE: [u8; 6] = [0; 6];
    RecordView {
        offset_delta: 0,
        timestamp_ms: 0,
        key: Some(match control {
            ControlType::Abort => &ABORT,
            ControlType::Commit => &COMMIT,
        }),
        value: Some(&VALUE),
        headers: Vec::new(),
    }
}

fn write_record(buf: &mut BytesMut, r: &RecordView<'_>, timestamp_delta: i64, offset_delta: i32) {
    let nullable_len = |b: Option<&[u8]>| b.map_or(-1, |b| b.len() as i32);
    let nullable_size = |b: Option<&[u8]>| varint_size(nullable_len(b)) + b.map_or(0, <[u8]>::len);
    let mut size = 1 // attributes
        + varlong_size(timestamp_delta)
        + varint_size(offset_delta)
        + nullable_size(r.key)
        + nullable_size(r.value)
        + varint_size(r.headers.len() as i32);
    for (k, v) in &r.headers {
        size += varint_size(k.len() as i32) + k.len() + nullable_size(*v);
    }
    buf.reserve(size + 5);
    put_varint(buf, size as i32);
    buf.put_i8(0);
    put_varlong(buf, timestamp_delta);
    put_varint(buf, offset_delta);
    let put_nullable = |buf: &mut BytesMut, b: Option<&[u8]>| {
        put_varint(buf, nullable_len(b));
        if let Some(b) = b {
            buf.put_slice(b);
        }
    };
    put_nullable(buf, r.key);
    put_nullable(buf, r.value);
    put_varint(buf, r.headers.len() as i32);
    for (k, v) in &r.headers {
        put_varint(buf, k.len() as i32);
        buf.put_slice(k.as_bytes());
        put_nullable(buf, *v);
    }
}

/// Kafka's zig-zag varints (the protocol's `VarInt` and `VarLong`).
fn put_varint(buf: &mut BytesMut, n: i32) {
    put_unsigned(buf, u64::from(((n << 1) ^ (n >> 31)) as u32));
}

fn put_varlong(buf: &mut BytesMut, n: i64) {
    put_unsigned(buf, ((n << 1) ^ (n >> 63)) as u64);
}

fn put_unsigned(buf: &mut BytesMut, mut v: u64) {
    while v >= 0x80 {
        buf.put_u8((v as u8) | 0x80);
        v >>= 7;
    }
    buf.put_u8(v as u8);
}

fn varint_size(n: i32) -> usize {
    unsigned_size(u64::from(((n << 1) ^ (n >> 31)) as u32))
}

fn varlong_size(n: i64) -> usize {
    unsigned_size(((n << 1) ^ (n >> 63)) as u64)
}

fn unsigned_size(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::core::{batch_view, codec};
    use crate::engine::{Header, Record, RecordBatch};
    use crate::kafka::records::encode_batches;
    use bytes::Bytes;

    fn written(batch: &RecordBatch, origin: Option<i64>) -> BytesMut {
        let frame = codec::encode(batch);
        let (payload, _) = codec::split_frame(&frame).unwrap();
        let view = batch_view::view_payload(payload).unwrap();
        let mut buf = BytesMut::new();
        write_v2(&mut buf, &view, origin);
        buf
    }

    fn record(delta: i32, ts: i64, key: Option<&str>, value: Option<&str>) -> Record {
        Record {
            offset_delta: delta,
            timestamp_ms: ts,
            key: key.map(|k| Bytes::copy_from_slice(k.as_bytes())),
            value: value.map(|v| Bytes::copy_from_slice(v.as_bytes())),
            headers: Vec::new(),
        }
    }

    /// Batches of every kind a log holds: plain, idempotent,
    /// transactional, both markers, compacted (gaps, the first and last
    /// records gone), null and empty keys and values, headers, timestamps
    /// negative, out of order and far apart, values long enough for
    /// multi-byte lengths, offsets and sequences near their limits.
    fn batches() -> Vec<RecordBatch> {
        let mut out = Vec::new();
        let mut plain = RecordBatch::of_values(["a", "bb", ""]);
        plain.base_offset = 5;
        out.push(plain);
        let mut rich = RecordBatch::new(vec![
            record(0, 1_700_000_000_000, Some("k"), None),
            record(0, -3, None, Some(&"v".repeat(300))),
            Record {
                headers: vec![
                    Header {
                        key: "h".into(),
                        value: Some(b"x".to_vec().into()),
                    },
                    Header {
                        key: String::new(),
                        value: None,
                    },
                    Header {
                        key: "long".repeat(40),
                        value: Some(vec![7; 200].into()),
                    },
                ],
                ..record(0, 12, Some(""), Some("w"))
            },
        ]);
        rich.base_offset = 1 << 40;
        rich.leader_epoch = 9;
        out.push(rich);
        let mut compacted = RecordBatch::new(vec![
            record(2, 30, Some("a"), Some("1")),
            record(5, 10, Some("b"), Some("2")),
        ]);
        compacted.records[0].offset_delta = 2;
        compacted.records[1].offset_delta = 5;
        compacted.last_offset_delta = 9;
        compacted.base_offset = 100;
        compacted.producer_id = 3;
        compacted.producer_epoch = 1;
        compacted.base_sequence = i32::MAX - 3;
        out.push(compacted);
        let mut txn = RecordBatch::of_values(["t1", "t2"]);
        txn.base_offset = 7;
        txn.transactional_id = Some("tx".into());
        txn.producer_id = 1000;
        txn.producer_epoch = 4;
        txn.base_sequence = 11;
        out.push(txn);
        for control in [ControlType::Commit, ControlType::Abort] {
            let mut marker = RecordBatch::new(Vec::new());
            marker.base_offset = 9;
            marker.transactional_id = Some("tx".into());
            marker.control = Some(control);
            marker.producer_id = 1000;
            marker.producer_epoch = 4;
            out.push(marker);
        }
        out
    }

    /// The bytes are the protocol crate's encoder's for the same batch,
    /// with and without LogAppendTime.
    #[test]
    fn the_bytes_are_the_encoders() {
        for batch in batches() {
            for origin in [None, Some(0), Some(1_800_000_000_000)] {
                let expected = encode_batches(std::slice::from_ref(&batch), origin).unwrap();
                let got = written(&batch, origin);
                assert_eq!(
                    &got[..],
                    &expected[..],
                    "batch at {} (origin {origin:?})",
                    batch.base_offset
                );
            }
        }
    }

    /// Varint sizes at the boundaries of each byte count.
    #[test]
    fn varint_sizes_match_what_is_written() {
        for n in [
            0i64,
            1,
            -1,
            63,
            -64,
            64,
            -65,
            8191,
            8192,
            i32::MAX as i64,
            i32::MIN as i64,
            i64::MAX,
            i64::MIN,
        ] {
            let mut buf = BytesMut::new();
            put_varlong(&mut buf, n);
            assert_eq!(buf.len(), varlong_size(n), "{n}");
            if let Ok(n) = i32::try_from(n) {
                let mut buf = BytesMut::new();
                put_varint(&mut buf, n);
                assert_eq!(buf.len(), varint_size(n), "{n}");
            }
        }
    }
}
