//! `mk-tui observe` against fake brokers that misbehave (issue 25 item 5):
//! a batch whose record claims a 2^31 - 1-byte key is refused in one line
//! (the protocol crate's message ends in a newline); brokers that Metadata
//! lists but that never answer, and a leader that answers one batch per
//! fetch slowly, are bounded by one deadline per observation (`--timeout`),
//! what they could not give listed in `unavailable` instead of failing the
//! observation. The fake broker is `tests/common/fake_kafka.rs`.

#[path = "common/fake_kafka.rs"]
mod fake_kafka;

use bytes::{Bytes, BytesMut};
use fake_kafka::Fake;
use std::process::{Command, Output};

fn mk_tui(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .args(args)
        .output()
        .expect("mk-tui runs")
}

/// One record whose key length says 2^31 - 1 bytes: the batch of one
/// record with key `k`, its key length (zigzag varint 2) replaced by
/// 2^31 - 1's (5 bytes), the record's and the batch's lengths fixed.
fn batch_with_a_huge_key() -> Bytes {
    let mut records = Vec::new();
    let r = kafka_protocol::records::Record {
        transactional: false,
        control: false,
        delete_horizon: false,
        partition_leader_epoch: 0,
        producer_id: -1,
        producer_epoch: -1,
        timestamp_type: kafka_protocol::records::TimestampType::Creation,
        offset: 0,
        sequence: 0,
        timestamp: 0,
        key: Some(Bytes::from_static(b"k")),
        value: Some(Bytes::from_static(b"v")),
        headers: Default::default(),
    };
    records.push(r);
    let mut buf = BytesMut::new();
    kafka_protocol::records::RecordBatchEncoder::encode(
        &mut buf,
        records.iter(),
        &kafka_protocol::records::RecordEncodeOptions {
            version: 2,
            compression: kafka_protocol::records::Compression::None,
        },
    )
    .unwrap();
    let mut bytes = buf.to_vec();
    // Header 61 bytes; then the record: length, attributes, timestamp
    // delta, offset delta, key length.
    const RECORD: usize = 61;
    assert_eq!(bytes[RECORD + 4], 2, "key length 1, zigzag");
    bytes.splice(RECORD + 4..RECORD + 5, [0xfe, 0xff, 0xff, 0xff, 0x0f]);
    bytes[RECORD] += 8; // the record's length, zigzag: 4 bytes more
    let batch_length = i32::from_be_bytes(bytes[8..12].try_into().unwrap()) + 4;
    bytes[8..12].copy_from_slice(&batch_length.to_be_bytes());
    Bytes::from(bytes)
}

#[test]
fn a_protocol_crate_error_is_one_line() {
    let mut fake = Fake::with_batches(0, 1);
    fake.log = vec![(0, 0, batch_with_a_huge_key())];
    let address = fake.start();
    let out = mk_tui(&["observe", "--bootstrap", &address, "--state"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty());
    assert_eq!(err.lines().count(), 1, "{err:?}");
    assert!(err.ends_with("remaining in buffer!\n"), "{err:?}");
    assert!(
        err.contains("t-0: Fetch v12 read_uncommitted from")
            && err.contains("the batch at offset 0 does not decode"),
        "{err}"
    );
}
