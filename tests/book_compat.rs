//! FORMATS.md compatibility, both ways, against `tests/compat/book_formats.py`:
//! an independent Python implementation of the book's formats written from
//! the format description, in the style of the book's reference code.

mod common;

use std::path::Path;
use std::process::Command;

use common::{TestCluster, tp};
use minikafka::engine::core::codec;
use minikafka::engine::core::record::{Header, Record};
use minikafka::engine::{
    AckMode, BrokerCluster, ControlType, IsolationLevel, ManualClock, MiniKafkaConfig, RecordBatch,
};
use serde_json::{Value, json};

fn book(args: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/compat/book_formats.py");
    let out = Command::new("python3")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs (CI installs it)");
    assert!(
        out.status.success(),
        "book_formats.py {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn hex(bytes: &Option<bytes::Bytes>) -> Value {
    bytes.as_ref().map_or(Value::Null, |b| {
        Value::String(b.iter().map(|x| format!("{x:02x}")).collect())
    })
}

/// A batch in the shape `book_formats.py dump` prints.
fn as_book_json(b: &RecordBatch) -> Value {
    json!({
        "base_offset": b.base_offset,
        "last_offset": b.last_offset(),
        "leader_epoch": b.leader_epoch,
        "producer_id": b.producer_id,
        "producer_epoch": b.producer_epoch,
        "base_sequence": b.base_sequence,
        "transactional_id": b.transactional_id,
        "control": b.control.map(ControlType::name),
        "records": b.records.iter().map(|r| json!({
            "offset": b.base_offset + i64::from(r.offset_delta),
            "timestamp": r.timestamp_ms,
            "key": hex(&r.key),
            "value": hex(&r.value),
            "headers": r.headers.iter().map(|h| json!([h.key, hex(&h.value)])).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// The batches `book_formats.py write` puts in out-0, built with our API.
fn expected_book_batches() -> Vec<RecordBatch> {
    let mut first = RecordBatch::new(vec![
        Record {
            key: Some(b"k".to_vec().into()),
            value: Some(b"hello".to_vec().into()),
            timestamp_ms: 1000,
            headers: vec![
                Header {
                    key: "h".into(),
                    value: Some(b"v".to_vec().into()),
                },
                Header {
                    key: "n".into(),
                    value: None,
                },
            ],
            ..Record::default()
        },
        Record {
            value: Some(b"world".to_vec().into()),
            timestamp_ms: 1001,
            ..Record::default()
        },
    ])
    .with_producer(0, 0, 0);
    first.records[1].offset_delta = 1;
    let mut pending = RecordBatch::new(vec![Record {
        value: Some(b"pending".to_vec().into()),
        timestamp_ms: 1002,
        ..Record::default()
    }])
    .with_transactional_id("tx-1");
    pending.base_offset = 2;
    let mut marker = RecordBatch::control_marker(ControlType::Commit, "tx-1");
    marker.base_offset = 3;
    let mut nulls = RecordBatch::new(vec![Record {
        key: Some(vec![].into()),
        value: None,
        timestamp_ms: 1003,
        ..Record::default()
    }]);
    nulls.base_offset = 4;
    vec![first, pending, marker, nulls]
}

#[tokio::test]
async fn a_directory_written_by_the_book_opens_here() {
    let dir = tempfile::tempdir().unwrap();
    book(&["write", dir.path().to_str().unwrap()]);
    let segment = dir.path().join("broker-1/out-0/00000000000000000000.log");
    let book_bytes = std::fs::read(&segment).unwrap();

    // Byte for byte: our encoder writes exactly the book's frames.
    let ours: Vec<u8> = expected_book_batches()
        .iter()
        .flat_map(codec::encode)
        .collect();
    assert_eq!(ours, book_bytes);

    let config = MiniKafkaConfig::new(dir.path()).with_brokers([1, 2]);
    let cluster = BrokerCluster::open(config, ManualClock::new()).unwrap();
    assert!(cluster.last_recovery().is_clean());
    let p0 = tp("out", 0);
    assert_eq!(
        cluster.leader_log(&p0).unwrap().all_batches().unwrap(),
        expected_book_batches()
    );
    assert_eq!(cluster.replica_set(&tp("out", 1)).unwrap().leader_id(), 2);
    let set = cluster.replica_set(&p0).unwrap();
    assert_eq!(
        set.high_watermark(),
        5,
        "no checkpoint: the lowest replica LEO"
    );
    let visible = cluster
        .fetch(&p0, 0, 100, IsolationLevel::ReadUncommitted)
        .unwrap();
    assert_eq!(
        visible.iter().map(|r| r.offset).collect::<Vec<_>>(),
        [0, 1, 2, 4],
        "the marker is not a record"
    );
    assert_eq!(cluster.offsets().get("workers", &tp("in", 0)), Some(7));
    // Producer state was rebuilt from the book's log: the retry is a duplicate.
    let retry = expected_book_batches()[0].clone();
    let r = cluster
        .append_batch(&p0, retry, AckMode::Leader)
        .await
        .unwrap();
    assert_eq!((r.offsets, r.duplicate), (Some((0, 1)), true));
    // The named producer keeps its id and gets the next epoch.
    let producer = cluster.producer("book").unwrap();
    assert_eq!((producer.producer_id(), producer.epoch()), (0, 1));
}

#[tokio::test]
async fn a_directory_written_here_reads_in_the_book() {
    let t = TestCluster::with_config(&[1, 2], |c| MiniKafkaConfig {
        segment_max_bytes: 300,
        ..c
    });
    t.cluster.create_topic("out", 2, 2).unwrap();
    let p = tp("out", 0);
    let mut producer = t.cluster.producer("app").unwrap();
    for i in 0..6 {
        producer
            .send_records(
                &p,
                vec![
                    Record::keyed(format!("k{i}"), "é-ü-".repeat(i + 1)).with_header("trace", None),
                ],
            )
            .unwrap()
            .await
            .unwrap();
    }
    t.cluster
        .append_batch(
            &p,
            RecordBatch::of_values(["tx-data"]).with_transactional_id("tx-é"),
            AckMode::Leader,
        )
        .await
        .unwrap();
    t.cluster
        .append_batch(
            &p,
            RecordBatch::control_marker(ControlType::Abort, "tx-é"),
            AckMode::Leader,
        )
        .await
        .unwrap();
    t.cluster.replicate_all_once().unwrap();
    t.cluster
        .offsets()
        .commit("workers", &tp("in", 0), 7)
        .unwrap();
    assert!(
        t.cluster
            .leader_log(&p)
            .unwrap()
            .segment_paths()
            .unwrap()
            .len()
            > 1,
        "several segments"
    );

    let dumped: Value =
        serde_json::from_str(&book(&["dump", t.dir.path().to_str().unwrap()])).unwrap();
    for broker in [1, 2] {
        let ours: Vec<Value> = t
            .cluster
            .replica_log(&p, broker)
            .unwrap()
            .all_batches()
            .unwrap()
            .iter()
            .map(as_book_json)
            .collect();
        assert_eq!(
            dumped["logs"][format!("broker-{broker}/out-0")],
            Value::Array(ours),
            "broker {broker}"
        );
    }
    assert_eq!(
        dumped["metadata.json"]["topics"]["out"]["partitions"]["1"],
        json!({"leader_epoch": 0, "leader_id": 2, "replicas": [2, 1]})
    );
    assert_eq!(
        dumped["offsets.json"]["groups"]["workers"],
        json!([{"offset": 7, "partition": 0, "topic": "in"}])
    );
    assert_eq!(dumped["producer-identities.json"]["app"], json!([0, 0]));
}

/// Issue 25 item 3: `cluster.json` is an extra file beside the book's.
/// A directory the book wrote opens through the driver (under the book's
/// rules, no file to contradict) and gets one, and the book still reads
/// every file it defines as it wrote them; a directory the driver made
/// (with its `cluster.json`) reads in the book too.
#[test]
fn cluster_json_beside_the_books_files_keeps_both_ways() {
    use minikafka::session::Driver;
    let dir = tempfile::tempdir().unwrap();
    book(&["write", dir.path().to_str().unwrap()]);
    let before: Value =
        serde_json::from_str(&book(&["dump", dir.path().to_str().unwrap()])).unwrap();
    let driver = Driver::open_in_place(dir.path(), None).unwrap();
    assert_eq!(driver.rules(), "minikafka");
    assert_eq!(driver.cluster().config().broker_ids, [1, 2]);
    drop(driver);
    let file: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("cluster.json")).unwrap()).unwrap();
    assert_eq!(file["rules"], "minikafka");
    let after: Value =
        serde_json::from_str(&book(&["dump", dir.path().to_str().unwrap()])).unwrap();
    assert_eq!(after, before, "the book reads its files as it wrote them");

    let made = tempfile::tempdir().unwrap();
    let data = made.path().join("data");
    let header = serde_json::from_value(json!({
        "mk_recording": 1, "rules": "kafka",
        "cluster": {"brokers": [2, 1], "topics": [{"name": "out", "partitions": 1, "replication_factor": 2}],
                    "config": {"segment_max_bytes": 300}},
    }))
    .unwrap();
    let mut driver = Driver::new(&header, Some(&data)).unwrap();
    let produce = minikafka::session::Action::from_json(
        &json!({"produce": {"topic": "out", "partition": 0, "value": "v"}}),
    )
    .unwrap();
    driver.apply(&produce);
    drop(driver);
    let dumped: Value = serde_json::from_str(&book(&["dump", data.to_str().unwrap()])).unwrap();
    assert_eq!(
        dumped["metadata.json"]["topics"]["out"]["partitions"]["0"]["replicas"],
        json!([2, 1])
    );
    assert_eq!(
        dumped["logs"]["broker-2/out-0"][0]["records"][0]["value"],
        "76"
    );
}

/// E16 in the book's formats: a log compacted here (updates of a key,
/// a tombstone kept within `delete_retention_ms`, offsets left with gaps)
/// reads in `book_formats.py` as the engine reads it, record for record,
/// on the leader and on the follower it replicated to, and the directory
/// opens here again with the same records.
#[test]
fn a_directory_compacted_here_reads_in_the_book() {
    use minikafka::session::{Action, Driver, Snapshot};
    let made = tempfile::tempdir().unwrap();
    let data = made.path().join("data");
    let header = serde_json::from_value(json!({
        "mk_recording": 1, "rules": "minikafka",
        "cluster": {"brokers": [1, 2], "topics": [{"name": "s", "partitions": 1, "replication_factor": 2}],
                    "config": {"segment_max_bytes": 150}},
    }))
    .unwrap();
    let mut driver = Driver::new(&header, Some(&data)).unwrap();
    let apply = |d: &mut Driver, v: Value| d.apply(&Action::from_json(&v).unwrap());
    for (key, value) in [
        ("c", Some("1")),
        ("a", Some("1")),
        ("a", Some("2")),
        ("b", Some("1")),
        ("b", None),
        ("a", Some("3")),
    ] {
        let record = match value {
            Some(v) => json!({"key": key, "value": v}),
            None => json!({"key": key, "tombstone": true}),
        };
        apply(
            &mut driver,
            json!({"produce": {"topic": "s", "records": [record], "acks": "all"}}),
        );
    }
    apply(&mut driver, json!({"replicate": {}}));
    apply(
        &mut driver,
        json!({"compact": {"topic": "s", "partition": 0, "delete_retention_ms": 60000}}),
    );
    apply(&mut driver, json!({"replicate": {}}));
    let state = serde_json::to_value(Snapshot::of(&driver)).unwrap();
    assert!(
        state["errors"].as_array().is_none_or(|e| e.is_empty()),
        "{}",
        state["errors"]
    );
    let leader = triples(&driver, 1);
    let offsets: Vec<i64> = leader.iter().map(|r| r.0).collect();
    assert!(
        offsets.windows(2).any(|w| w[1] > w[0] + 1),
        "compaction left a gap in the offsets: {offsets:?}"
    );
    assert!(
        leader.iter().any(|r| r.2.is_null()),
        "the recent tombstone is kept: {leader:?}"
    );
    let before_reopen = leader.clone();
    let follower = triples(&driver, 2);
    drop(driver);
    let dumped: Value = serde_json::from_str(&book(&["dump", data.to_str().unwrap()])).unwrap();
    for (broker, records) in [(1, &before_reopen), (2, &follower)] {
        let book_records: Vec<(i64, Value, Value)> = dumped["logs"][format!("broker-{broker}/s-0")]
            .as_array()
            .unwrap_or_else(|| panic!("broker {broker}: {dumped}"))
            .iter()
            .flat_map(|b| b["records"].as_array().unwrap().clone())
            .map(|r| {
                (
                    r["offset"].as_i64().unwrap(),
                    r["key"].clone(),
                    r["value"].clone(),
                )
            })
            .collect();
        assert_eq!(&book_records, records, "broker {broker}");
    }
    let reopened = Driver::open_in_place(&data, None).unwrap();
    let again = triples(&reopened, 1);
    assert_eq!(again, before_reopen, "the directory opens here as it was");
}

/// (offset, key, value) of every record in `broker`'s replica of s-0, keys
/// and values in `book_formats.py dump`'s hex.
fn triples(driver: &minikafka::session::Driver, broker: u32) -> Vec<(i64, Value, Value)> {
    driver
        .cluster()
        .replica_log(&tp("s", 0), broker)
        .unwrap()
        .all_batches()
        .unwrap()
        .iter()
        .flat_map(|b| {
            b.records
                .iter()
                .map(|r| {
                    (
                        b.base_offset + i64::from(r.offset_delta),
                        hex(&r.key),
                        hex(&r.value),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect()
}
