//! E1 property tests: every batch the API can build round-trips through the
//! MKB1 codec, and decoding arbitrary or damaged bytes never panics.

use minikafka::engine::core::codec;
use minikafka::engine::core::record::{Header, Record};
use minikafka::engine::{ControlType, RecordBatch};
use proptest::prelude::*;

fn bytes() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop::option::of(prop::collection::vec(any::<u8>(), 0..40))
}

fn record() -> impl Strategy<Value = Record> {
    (
        bytes(),
        bytes(),
        any::<i64>(),
        prop::collection::vec(("[a-zé]{0,8}", bytes()), 0..3),
    )
        .prop_map(|(key, value, timestamp_ms, headers)| Record {
            key: key.map(Into::into),
            value: value.map(Into::into),
            timestamp_ms,
            headers: headers
                .into_iter()
                .map(|(key, value)| Header {
                    key,
                    value: value.map(Into::into),
                })
                .collect(),
            offset_delta: 0,
        })
}

fn batch() -> impl Strategy<Value = RecordBatch> {
    let data = (
        prop::collection::vec(record(), 1..6),
        prop::option::of("[a-z0-9-]{1,12}"),
        any::<(i64, i32, i32)>(),
    )
        .prop_map(|(records, tid, (pid, epoch, seq))| {
            let mut b = RecordBatch::new(records).with_producer(pid, epoch, seq);
            b.transactional_id = tid;
            b
        });
    let control = ("[a-z0-9-]{1,12}", any::<bool>()).prop_map(|(tid, commit)| {
        RecordBatch::control_marker(
            if commit {
                ControlType::Commit
            } else {
                ControlType::Abort
            },
            tid,
        )
    });
    (
        prop_oneof![3 => data, 1 => control],
        0..i64::MAX / 2,
        any::<u32>(),
    )
        .prop_map(|(mut b, base, epoch)| {
            b.base_offset = base;
            b.leader_epoch = epoch;
            b
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_batch_round_trips(b in batch()) {
        let frame = codec::encode(&b);
        prop_assert_eq!(frame.len(), codec::encoded_len(&b));
        let (back, used) = codec::decode(&frame).unwrap();
        prop_assert_eq!(used, frame.len());
        prop_assert_eq!(&back, &b);
        let (header, _) = codec::validate(&frame).unwrap();
        prop_assert_eq!(header.last_offset(), b.last_offset());
    }

    #[test]
    fn damaged_frames_are_rejected_not_panicked_on(b in batch(), at in any::<prop::sample::Index>(), flip in 1u8..=255) {
        let mut frame = codec::encode(&b);
        let i = at.index(frame.len());
        frame[i] ^= flip;
        // A flipped bit is caught by magic, length or CRC; it never decodes
        // to a different batch.
        if let Ok((back, _)) = codec::decode(&frame) {
            prop_assert_eq!(back, b);
        }
        prop_assert!(codec::validate(&frame[..i]).is_err());
    }

    /// `decode_head` (the dashboard's partial read, issue 7's P1) gives the
    /// batch's header and exactly its first `n` records from any prefix of
    /// the payload that holds them, and an error from one that does not.
    #[test]
    fn a_payload_prefix_decodes_to_the_first_records(b in batch(), n in 0usize..6, cut in any::<prop::sample::Index>()) {
        let frame = codec::encode(&b);
        let payload = &frame[codec::FRAME_HEADER_LEN..];
        let mut want = b.clone();
        want.records.truncate(n);
        // The shortest prefix that holds the first n records.
        let needed = (0..=payload.len())
            .find(|&len| codec::decode_head(&payload[..len], n).is_ok())
            .expect("the whole payload holds them");
        let len = needed + cut.index(payload.len() - needed + 1);
        prop_assert_eq!(codec::decode_head(&payload[..len], n).unwrap(), want.clone());
        if needed > 0 {
            prop_assert!(codec::decode_head(&payload[..needed - 1], n).is_err());
        }
        prop_assert_eq!(codec::decode_head(payload, usize::MAX).unwrap(), b);
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..200)) {
        let _ = codec::decode(&data);
        let _ = codec::validate(&data);
        let _ = codec::decode_payload(&data);
        let _ = codec::decode_head(&data, 3);
    }
}
