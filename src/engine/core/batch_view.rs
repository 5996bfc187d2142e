//! A logged batch read in place: its MKB1 header and its records as slices
//! of the frame's payload, with no key, value or header copied into owned
//! values. What a reader that only copies the bytes on (a Kafka fetch,
//! which writes them out as its own batches) reads instead of a
//! [`RecordBatch`], whose every record is a few allocations.
//!
//! A view checks exactly what [`codec::decode_payload`] checks, so a frame
//! views if and only if it decodes, and to the same fields.

use crate::engine::core::batch::RecordBatch;
use crate::engine::core::codec::{self, BatchHeader, FrameError, Reader};

/// One record of a [`BatchView`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordView<'a> {
    pub offset_delta: i32,
    pub timestamp_ms: i64,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    /// (key, value) of each header, in order.
    pub headers: Vec<(&'a str, Option<&'a [u8]>)>,
}

/// One batch's header and records, borrowed from its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchView<'a> {
    pub header: BatchHeader,
    pub records: Vec<RecordView<'a>>,
}

impl BatchView<'_> {
    /// The batch with its header's fields and no records: what deciding
    /// a batch's visibility reads (its producer, transaction and marker).
    pub fn without_records(&self) -> RecordBatch {
        let h = &self.header;
        RecordBatch {
            base_offset: h.base_offset,
            leader_epoch: h.leader_epoch,
            producer_id: h.producer_id,
            producer_epoch: h.producer_epoch,
            base_sequence: h.base_sequence,
            transactional_id: h.transactional_id.clone(),
            control: h.control,
            last_offset_delta: h.last_offset_delta,
            records: Vec::new(),
        }
    }
}

/// Views a payload whose CRC has been checked (as
/// [`codec::decode_payload`] decodes one).
pub fn view_payload(payload: &[u8]) -> Result<BatchView<'_>, FrameError> {
    let mut reader = Reader::new(payload);
    let header = codec::read_header(&mut reader)?;
    let count = header.record_count as usize;
    let mut records = Vec::with_capacity(count.min(1 << 16));
    let mut previous = -1;
    for _ in 0..count {
        let offset_delta = reader.i32()?;
        codec::check_delta(offset_delta, previous, header.last_offset_delta)?;
        previous = offset_delta;
        let timestamp_ms = reader.i64()?;
        let key_len = reader.i32()?;
        let value_len = reader.i32()?;
        let header_count = reader.u16()?;
        let key = reader.nullable(key_len)?;
        let value = reader.nullable(value_len)?;
        let mut headers = Vec::with_capacity(usize::from(header_count));
        for _ in 0..header_count {
            let key_len = reader.u16()?;
            let key = std::str::from_utf8(reader.take(usize::from(key_len))?)
                .map_err(|_| codec::malformed("header key is not UTF-8"))?;
            let value_len = reader.i32()?;
            headers.push((key, reader.nullable(value_len)?));
        }
        records.push(RecordView {
            offset_delta,
            timestamp_ms,
            key,
            value,
            headers,
        });
    }
    reader.finish()?;
    Ok(BatchView { header, records })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::core::batch::ControlType;
    use crate::engine::core::record::{Header, Record};

    fn batches() -> Vec<RecordBatch> {
        let mut plain = RecordBatch::new(vec![
            Record::keyed("k", "v").with_header("h", Some(b"x".to_vec().into())),
            Record {
                offset_delta: 0,
                timestamp_ms: -5,
                key: None,
                value: None,
                headers: vec![Header {
                    key: "null".into(),
                    value: None,
                }],
            },
        ]);
        plain.base_offset = 40;
        // A compacted batch: its records keep their deltas, with a gap.
        plain.records[1].offset_delta = 3;
        plain.last_offset_delta = 4;
        let mut txn = RecordBatch::of_values(["a", "b"]);
        txn.transactional_id = Some("tx".into());
        txn.producer_id = 7;
        txn.producer_epoch = 2;
        txn.base_sequence = 5;
        let mut marker = RecordBatch::new(Vec::new());
        marker.transactional_id = Some("tx".into());
        marker.control = Some(ControlType::Abort);
        marker.producer_id = 7;
        vec![plain, txn, marker]
    }

    /// A view holds what decoding gives: the same header fields and the
    /// same records, borrowed.
    #[test]
    fn a_view_holds_what_decoding_gives() {
        for batch in batches() {
            let frame = codec::encode(&batch);
            let (payload, _) = codec::split_frame(&frame).unwrap();
            let decoded = codec::decode_payload(payload).unwrap();
            let view = view_payload(payload).unwrap();
            let mut header_only = decoded.clone();
            header_only.records.clear();
            assert_eq!(view.without_records(), header_only);
            assert_eq!(view.records.len(), decoded.records.len());
            for (v, r) in view.records.iter().zip(&decoded.records) {
                assert_eq!(v.offset_delta, r.offset_delta);
                assert_eq!(v.timestamp_ms, r.timestamp_ms);
                assert_eq!(v.key, r.key.as_deref());
                assert_eq!(v.value, r.value.as_deref());
                let headers: Vec<_> = r
                    .headers
                    .iter()
                    .map(|h| (h.key.as_str(), h.value.as_deref()))
                    .collect();
                assert_eq!(v.headers, headers);
            }
        }
    }

    /// What decoding refuses, viewing refuses: a payload cut short, a
    /// trailing byte.
    #[test]
    fn a_view_refuses_what_decoding_refuses() {
        let frame = codec::encode(&batches()[0]);
        let (payload, _) = codec::split_frame(&frame).unwrap();
        let cut = &payload[..payload.len() - 1];
        assert_eq!(
            view_payload(cut).unwrap_err(),
            codec::decode_payload(cut).unwrap_err()
        );
        let mut longer = payload.to_vec();
        longer.push(0);
        assert_eq!(
            view_payload(&longer).unwrap_err(),
            codec::decode_payload(&longer).unwrap_err()
        );
    }
}
