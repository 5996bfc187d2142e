//! E2: segmented logs on disk: close and reopen, torn-tail repair of the
//! active segment at every cut length, and closed-segment corruption.

mod common;

use std::fs::{self, OpenOptions};
use std::io::Write;

use common::{TestCluster, dir_snapshot as snapshot, tp, values};
use minikafka::engine::core::codec;
use minikafka::engine::{AckMode, MiniKafkaError};

#[tokio::test]
async fn logs_survive_close_and_reopen() {
    let t = TestCluster::new(&[1], 1);
    t.cluster.create_topic("t", 2, 1).unwrap();
    for i in 0..5 {
        t.append(&tp("t", i % 2), &format!("v{i}"), AckMode::Leader)
            .await
            .unwrap();
    }
    let t = t.reopen();
    assert!(t.cluster.last_recovery().is_clean());
    assert_eq!(t.visible(&tp("t", 0)), ["v0", "v2", "v4"]);
    assert_eq!(t.visible(&tp("t", 1)), ["v1", "v3"]);
    // appends continue at the right offset after reopening
    let r = t.append(&tp("t", 0), "v5", AckMode::Leader).await.unwrap();
    assert_eq!(r.base_offset(), Some(3));
}

/// Cutting any number of bytes out of the last frame of the active segment
/// keeps exactly the frames before it and reports the cut.
#[tokio::test]
async fn torn_tail_of_the_last_frame_is_truncated_at_every_cut_length() {
    let t = TestCluster::new(&[1], 1);
    t.cluster.create_topic("t", 1, 1).unwrap();
    let p = tp("t", 0);
    t.append(&p, "first", AckMode::Leader).await.unwrap();
    t.append(&p, "second", AckMode::Leader).await.unwrap();
    let segment = t
        .cluster
        .leader_log(&p)
        .unwrap()
        .segment_paths()
        .unwrap()
        .pop()
        .unwrap();
    let intact = fs::read(&segment).unwrap();
    let (_, first_len) = codec::decode(&intact).unwrap();
    let last_len = intact.len() - first_len;
    for cut in 1..=last_len {
        fs::write(&segment, &intact[..intact.len() - cut]).unwrap();
        let report = t.cluster.crash().unwrap();
        let expected_cut = (last_len - cut) as u64;
        if expected_cut == 0 {
            assert!(
                report.is_clean(),
                "cut {cut}: a whole frame removed leaves a clean log"
            );
        } else {
            assert_eq!(report.logs_truncated.len(), 1, "cut {cut}");
            assert_eq!(
                report.logs_truncated[0].truncated_bytes, expected_cut,
                "cut {cut}"
            );
            assert_eq!(report.logs_truncated[0].broker, 1);
        }
        assert_eq!(
            fs::read(&segment).unwrap(),
            intact[..first_len],
            "cut {cut}"
        );
        assert_eq!(t.visible(&p), ["first"], "cut {cut}");
    }
}

#[tokio::test]
async fn garbage_after_the_last_frame_is_truncated_and_reported() {
    let t = TestCluster::new(&[1], 1);
    t.cluster.create_topic("t", 1, 1).unwrap();
    let p = tp("t", 0);
    t.append(&p, "kept", AckMode::Leader).await.unwrap();
    let segment = t
        .cluster
        .leader_log(&p)
        .unwrap()
        .segment_paths()
        .unwrap()
        .pop()
        .unwrap();
    let intact = fs::read(&segment).unwrap();
    let mut valid_header_bad_crc = intact.clone();
    let last = valid_header_bad_crc.len() - 1;
    valid_header_bad_crc[last] ^= 0xff;
    for garbage in [
        b"\x00\x01\x02garbage".to_vec(),
        b"MKB1".to_vec(),
        valid_header_bad_crc,
    ] {
        let mut f = OpenOptions::new().append(true).open(&segment).unwrap();
        f.write_all(&garbage).unwrap();
        drop(f);
        let report = t.cluster.crash().unwrap();
        assert_eq!(
            report.logs_truncated[0].truncated_bytes,
            garbage.len() as u64
        );
        assert_eq!(fs::read(&segment).unwrap(), intact);
        assert_eq!(t.visible(&p), ["kept"]);
        // the repaired log accepts appends at the right offset
        assert_eq!(
            t.cluster.leader_log(&p).unwrap().log_end_offset().unwrap(),
            1
        );
    }
}

#[tokio::test]
async fn corruption_in_a_closed_segment_is_an_error_naming_the_file() {
    let t = TestCluster::with_config(&[1], |c| with_segment_max_bytes(c, 200));
    t.cluster.create_topic("t", 1, 1).unwrap();
    let p = tp("t", 0);
    for i in 0..10 {
        t.append(
            &p,
            &format!("value-{i}-{}", "x".repeat(50)),
            AckMode::Leader,
        )
        .await
        .unwrap();
    }
    let segments = t.cluster.leader_log(&p).unwrap().segment_paths().unwrap();
    assert!(segments.len() >= 3, "{segments:?}");
    let closed = &segments[0];
    let mut bytes = fs::read(closed).unwrap();
    bytes[20] ^= 0x55;
    fs::write(closed, &bytes).unwrap();
    let before: Vec<Vec<u8>> = segments.iter().map(|s| fs::read(s).unwrap()).collect();
    let err = t.cluster.crash().unwrap_err();
    assert!(matches!(err, MiniKafkaError::Corrupt { .. }), "{err}");
    let message = err.to_string();
    assert!(message.contains("00000000000000000000.log"), "{message}");
    assert!(message.contains("closed segment"), "{message}");
    // nothing was repaired or deleted
    let after: Vec<Vec<u8>> = segments.iter().map(|s| fs::read(s).unwrap()).collect();
    assert_eq!(before, after);
}

fn with_segment_max_bytes(
    c: minikafka::engine::MiniKafkaConfig,
    bytes: u64,
) -> minikafka::engine::MiniKafkaConfig {
    minikafka::engine::MiniKafkaConfig {
        segment_max_bytes: bytes,
        ..c
    }
}

#[tokio::test]
async fn segments_roll_and_reopen_across_many_files() {
    let t = TestCluster::with_config(&[1], |c| with_segment_max_bytes(c, 256));
    t.cluster.create_topic("t", 1, 1).unwrap();
    let p = tp("t", 0);
    let expected: Vec<String> = (0..50).map(|i| format!("record-{i:03}")).collect();
    for v in &expected {
        t.append(&p, v, AckMode::Leader).await.unwrap();
    }
    let segments = t.cluster.leader_log(&p).unwrap().segment_paths().unwrap();
    assert!(segments.len() > 5);
    for s in &segments {
        assert!(fs::metadata(s).unwrap().len() <= 256);
    }
    let t = t.reopen();
    assert_eq!(t.visible(&p), expected);
    let batches = t
        .cluster
        .leader_log(&p)
        .unwrap()
        .read_batches(25, 2)
        .unwrap();
    assert_eq!(
        values(&batches[0].consumer_records(0).collect::<Vec<_>>()),
        ["record-025"]
    );
}

/// Regression: reads that cross into a later segment must start at that
/// segment's first frame, whatever its sparse index holds.
#[tokio::test]
async fn reads_across_indexed_segments_return_every_batch() {
    let t = TestCluster::with_config(&[1, 2], |c| minikafka::engine::MiniKafkaConfig {
        segment_max_bytes: 1000,
        index_interval_bytes: 100,
        ..c
    });
    t.cluster.create_topic("t", 1, 2).unwrap();
    let p = tp("t", 0);
    let expected: Vec<String> = (0..40)
        .map(|i| format!("record-{i:02}-{}", "y".repeat(40)))
        .collect();
    for v in &expected {
        t.append(&p, v, AckMode::Leader).await.unwrap();
    }
    let leader = t.cluster.leader_log(&p).unwrap();
    assert!(leader.segment_paths().unwrap().len() > 3);
    assert_eq!(leader.all_batches().unwrap().len(), 40);
    assert_eq!(values(&leader.fetch(0, 100).unwrap()), expected);
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(t.visible(&p), expected);
    assert_eq!(
        t.cluster.replica_log(&p, 2).unwrap().all_batches().unwrap(),
        leader.all_batches().unwrap()
    );
    for offset in [0, 9, 10, 17, 25, 39] {
        assert_eq!(
            leader.read_batches(offset, 1).unwrap()[0].base_offset,
            offset
        );
    }
}

/// Regression: after a truncation the `.index` file holds exactly the
/// entries in memory (no hole from a stale write position).
#[tokio::test]
async fn the_index_file_stays_well_formed_after_truncation() {
    use minikafka::engine::log::index::OffsetIndex;
    let t = TestCluster::with_config(&[1], |c| minikafka::engine::MiniKafkaConfig {
        index_interval_bytes: 60,
        ..c
    });
    t.cluster.create_topic("t", 1, 1).unwrap();
    let p = tp("t", 0);
    for i in 0..20 {
        t.append(&p, &format!("v{i}"), AckMode::Leader)
            .await
            .unwrap();
    }
    // Truncate and append through the log itself.
    let dir = t.dir.path().join("broker-1/t-0");
    drop(t.cluster);
    let config = minikafka::engine::log::partition_log::LogConfig {
        segment_max_bytes: 1 << 20,
        index_interval_bytes: 60,
        fsync: false,
    };
    let (mut log, _) = minikafka::engine::log::PartitionLog::open(&dir, config).unwrap();
    log.truncate_to(5).unwrap();
    for i in 5..20 {
        let mut b = minikafka::engine::RecordBatch::of_values([format!("w{i}")]);
        b.base_offset = log.leo();
        log.append(&b).unwrap();
    }
    let index = &log.segments()[0].index();
    let on_disk = OffsetIndex::parse(&fs::read(index.path()).unwrap()).unwrap();
    assert_eq!(on_disk, index.entries());
}

/// E2 with SPEC §5's "nothing is lost": an open that must refuse a bad
/// closed segment refuses before it repairs anything, at every corrupted
/// byte of that segment, even with a torn journal and a torn active segment
/// of another partition waiting to be cut: every file stays as it was.
#[tokio::test]
async fn an_open_refused_for_a_closed_segment_changes_no_file_at_any_corrupted_byte() {
    let t = TestCluster::with_config(&[1], |c| with_segment_max_bytes(c, 200));
    t.cluster.create_topic("a", 1, 1).unwrap();
    t.cluster.create_topic("z", 1, 1).unwrap();
    let (a, z) = (tp("a", 0), tp("z", 0));
    for i in 0..6 {
        t.append(&z, &format!("z{i}-{}", "x".repeat(50)), AckMode::Leader)
            .await
            .unwrap();
        t.append(&a, &format!("a{i}"), AckMode::Leader)
            .await
            .unwrap();
    }
    let tx = t.cluster.transactions().begin("tx").await.unwrap();
    tx.send("a", b"in-tx".to_vec()).await.unwrap();
    let config = t.cluster.config();
    let closed = t.cluster.leader_log(&z).unwrap().segment_paths().unwrap()[0].clone();
    let active_a = t.cluster.leader_log(&a).unwrap().segment_paths().unwrap();
    let active_a = active_a.last().unwrap().clone();
    drop(tx);
    drop(t.cluster);
    // Torn tails that a successful open would cut.
    let mut file = OpenOptions::new().append(true).open(&active_a).unwrap();
    file.write_all(b"MKB1\x00\x00").unwrap();
    let journal = t.dir.path().join("transactions.journal");
    let mut file = OpenOptions::new().append(true).open(&journal).unwrap();
    file.write_all(b"deadbeef {\"id\"").unwrap();
    let intact = fs::read(&closed).unwrap();
    let mut refused = 0;
    for at in 0..intact.len() {
        let mut bytes = intact.clone();
        bytes[at] ^= 0x5a;
        fs::write(&closed, &bytes).unwrap();
        let before = snapshot(t.dir.path());
        let opened = minikafka::engine::BrokerCluster::open(config.clone(), t.clock.clone());
        let err = opened.expect_err("a bad closed segment is refused");
        assert!(
            matches!(err, MiniKafkaError::Corrupt { .. }),
            "byte {at}: {err}"
        );
        assert!(
            err.to_string().contains("closed segment"),
            "byte {at}: {err}"
        );
        assert_eq!(snapshot(t.dir.path()), before, "byte {at}: a file changed");
        refused += 1;
    }
    assert_eq!(refused, intact.len());
    // Repaired by hand, it opens and cuts both torn tails.
    fs::write(&closed, &intact).unwrap();
    let cluster = minikafka::engine::BrokerCluster::open(config, t.clock.clone()).unwrap();
    let report = cluster.last_recovery();
    assert_eq!(report.logs_truncated.len(), 1, "{report:?}");
    assert!(report.journal_truncated_bytes > 0, "{report:?}");
}

/// The same promise for `create_topic` over logs an earlier incarnation
/// left behind: a bad closed segment in partition 1 refuses the topic before
/// `metadata.json` names it or partition 0's log is touched, and the
/// directory still opens.
#[tokio::test]
async fn create_topic_over_a_bad_leftover_log_refuses_with_nothing_written() {
    let old = TestCluster::with_config(&[1], |c| with_segment_max_bytes(c, 200));
    old.cluster.create_topic("t", 2, 1).unwrap();
    for i in 0..20 {
        for p in [0, 1] {
            old.append(
                &tp("t", p),
                &format!("v{i}-{}", "x".repeat(40)),
                AckMode::Leader,
            )
            .await
            .unwrap();
        }
    }
    let config = old.cluster.config();
    let bad = old
        .cluster
        .leader_log(&tp("t", 1))
        .unwrap()
        .segment_paths()
        .unwrap()[0]
        .clone();
    let torn = old
        .cluster
        .leader_log(&tp("t", 0))
        .unwrap()
        .segment_paths()
        .unwrap();
    let torn = torn.last().unwrap().clone();
    drop(old.cluster);
    // An earlier incarnation's logs without its metadata.
    fs::remove_file(old.dir.path().join("metadata.json")).unwrap();
    let mut bytes = fs::read(&bad).unwrap();
    bytes[0] ^= 0x5a;
    fs::write(&bad, &bytes).unwrap();
    OpenOptions::new()
        .append(true)
        .open(&torn)
        .unwrap()
        .write_all(b"MKB1")
        .unwrap();

    let cluster =
        minikafka::engine::BrokerCluster::open(config.clone(), old.clock.clone()).unwrap();
    let before = snapshot(old.dir.path());
    let err = cluster.create_topic("t", 2, 1).unwrap_err();
    assert!(matches!(err, MiniKafkaError::Corrupt { .. }), "{err}");
    assert_eq!(snapshot(old.dir.path()), before, "nothing written");
    assert!(cluster.topic_partitions().is_empty());
    drop(cluster);
    minikafka::engine::BrokerCluster::open(config, old.clock.clone()).expect("still opens");
}
