//! Issue 17, items 2-5: what is in a data directory besides mk-tui's own
//! regular files (docs/reliability.md, "Files that are not what they
//! seem"). A stale `.tmp` symlink is replaced, never written through; a
//! leader epoch at its largest is refused, not wrapped; a symlinked broker
//! directory is copied by `state --data-dir` as the in-place open reads it;
//! the copy takes the lock shared and names a running writer. The refusals
//! that print one line (FIFOs, `/dev/zero`, a negative HW, 20,000
//! replicas) are cases of the bad-input catalogue (`tests/bad_inputs/`).

mod common;

use std::fs;
use std::path::Path;

use common::{TestCluster, tp};
use minikafka::engine::config::Rules;
use minikafka::engine::consumer::offsets::OFFSETS_FILE;
use minikafka::engine::core::cluster::{LOCK_FILE, lock_shared};
use minikafka::engine::core::metadata::{MAX_LEADER_EPOCH, METADATA_FILE};
use minikafka::engine::layout::CHECKPOINT_FILE;
use minikafka::engine::producer::identity::IDENTITIES_FILE;
use minikafka::engine::{AckMode, BrokerCluster, ManualClock, MiniKafkaConfig, MiniKafkaError};
use minikafka::session::Driver;

/// Item 2: every file replaced through a `.tmp` sibling (the HW
/// checkpoint, `metadata.json`, `offsets.json`, the producer identities)
/// meets a stale `.tmp` that is a symlink to a file outside the data
/// directory: the write replaces the link and leaves that file as it was.
#[tokio::test]
async fn a_stale_tmp_symlink_is_replaced_never_written_through() {
    let outside = tempfile::tempdir().unwrap();
    let t = TestCluster::new(&[1], 1);
    let mut targets = Vec::new();
    for name in [
        CHECKPOINT_FILE,
        METADATA_FILE,
        OFFSETS_FILE,
        IDENTITIES_FILE,
    ] {
        let target = outside.path().join(format!("precious-{name}"));
        fs::write(&target, "keep me").unwrap();
        let tmp = t.dir.path().join(format!("{name}.tmp"));
        std::os::unix::fs::symlink(&target, &tmp).unwrap();
        targets.push((name, target, tmp));
    }
    t.cluster.create_topic("out", 1, 1).unwrap();
    let p = tp("out", 0);
    t.append(&p, "v1", AckMode::Leader).await.unwrap();
    t.cluster.flush().unwrap();
    t.cluster.offsets().commit("g", &p, 1).unwrap();
    t.cluster.producer("p").unwrap();
    for (name, target, tmp) in &targets {
        assert_eq!(fs::read_to_string(target).unwrap(), "keep me", "{name}");
        assert!(fs::symlink_metadata(tmp).is_err(), "{name}: .tmp left");
        let written = fs::symlink_metadata(t.dir.path().join(name)).unwrap();
        assert!(written.file_type().is_file(), "{name}");
    }
    let t = t.reopen();
    assert_eq!(t.cluster.replica_set(&p).unwrap().high_watermark(), 1);
    assert_eq!(t.cluster.offsets().get("g", &p), Some(1));
}

/// A stale `.tmp` that is a regular file (left by a crash) is replaced too.
#[test]
fn a_stale_tmp_file_is_removed_first() {
    let t = TestCluster::new(&[1], 1);
    let tmp = t.dir.path().join(format!("{METADATA_FILE}.tmp"));
    fs::write(
        &tmp,
        "stale half-written garbage that is longer than metadata",
    )
    .unwrap();
    t.cluster.create_topic("out", 1, 1).unwrap();
    assert!(!tmp.exists());
    let t = t.reopen();
    assert_eq!(t.cluster.topics(), [("out".to_string(), 1)]);
}

/// Item 3: a partition whose leader epoch is the largest (Kafka's int32)
/// cannot elect another leader: refused, the epoch and `metadata.json` as
/// they were (it used to wrap to 0, in release builds, and to panic in
/// debug ones).
#[test]
fn a_promotion_at_the_largest_leader_epoch_is_refused_not_wrapped() {
    let t = TestCluster::new(&[1, 2], 1);
    t.cluster.create_topic("out", 1, 2).unwrap();
    let config = t.cluster.config();
    let dir = t.dir;
    drop(t.cluster);
    let path = dir.path().join(METADATA_FILE);
    let text = fs::read_to_string(&path).unwrap();
    let edited = text.replace(
        "\"leader_epoch\":0",
        &format!("\"leader_epoch\":{MAX_LEADER_EPOCH}"),
    );
    assert_ne!(text, edited);
    fs::write(&path, &edited).unwrap();
    let cluster = BrokerCluster::open(config, ManualClock::new()).unwrap();
    let p = tp("out", 0);
    cluster.replicate_all_once().unwrap();
    let err = cluster.promote(&p, 2).unwrap_err();
    assert!(
        matches!(err, MiniKafkaError::InvalidPromotion { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("2147483647"), "{err}");
    let set = cluster.replica_set(&p).unwrap();
    assert_eq!((set.leader_id(), set.leader_epoch()), (1, MAX_LEADER_EPOCH));
    assert_eq!(fs::read_to_string(&path).unwrap(), edited);
}

/// Item 4: a broker directory that is a symlink (to another disk, say) is
/// followed by `state --data-dir`'s copy as the in-place open follows it.
#[test]
fn the_copy_follows_a_symlinked_broker_directory_as_the_open_does() {
    let t = TestCluster::new(&[1, 2], 1);
    t.cluster.create_topic("out", 1, 2).unwrap();
    let p = tp("out", 0);
    let ack = t.append(&p, "v1", AckMode::All);
    t.cluster.replicate_all_once().unwrap();
    // A driver owns a runtime: this test runs outside one.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(ack).unwrap();
    let dir = t.dir;
    drop(t.cluster);
    let elsewhere = tempfile::tempdir().unwrap();
    let moved = elsewhere.path().join("broker-2");
    fs::rename(dir.path().join("broker-2"), &moved).unwrap();
    std::os::unix::fs::symlink(&moved, dir.path().join("broker-2")).unwrap();
    let before = common::dir_snapshot(elsewhere.path());
    let copy = Driver::open_copy(dir.path(), Rules::Minikafka).unwrap();
    let follower = copy.cluster().replica_log(&p, 2).unwrap();
    assert_eq!(follower.log_end_offset().unwrap(), 1);
    drop(copy);
    assert_eq!(common::dir_snapshot(elsewhere.path()), before, "copy only");
    let in_place = Driver::open_in_place(dir.path(), Rules::Minikafka).unwrap();
    let follower = in_place.cluster().replica_log(&p, 2).unwrap();
    assert_eq!(follower.log_end_offset().unwrap(), 1);
}

/// Item 5: the copy takes the lock shared: refused, naming the holder's
/// pid, while a cluster holds the directory; a writer cannot take it while
/// a copy is being made; free again once the holder is gone.
#[test]
fn the_copy_holds_the_lock_shared_and_names_a_running_writer() {
    let t = TestCluster::new(&[1], 1);
    let err = lock_shared(t.dir.path()).unwrap_err();
    match &err {
        MiniKafkaError::DataDirLocked { pid, .. } => {
            assert_eq!(*pid, Some(std::process::id()), "{err}")
        }
        other => panic!("{other}"),
    }
    assert!(
        err.to_string().contains(&format!(
            "in use by another mk-tui (pid {})",
            std::process::id()
        )),
        "{err}"
    );
    let err = Driver::open_copy(t.dir.path(), Rules::Minikafka)
        .unwrap_err()
        .to_string();
    assert!(err.contains("in use by another mk-tui (pid"), "{err}");
    let dir = t.dir;
    drop(t.cluster);
    let shared = lock_shared(dir.path())
        .unwrap()
        .expect("a lock file exists");
    let err =
        BrokerCluster::open(MiniKafkaConfig::new(dir.path()), ManualClock::new()).unwrap_err();
    assert!(matches!(err, MiniKafkaError::DataDirLocked { .. }), "{err}");
    drop(shared);
    Driver::open_copy(dir.path(), Rules::Minikafka).unwrap();
    BrokerCluster::open(MiniKafkaConfig::new(dir.path()), ManualClock::new()).unwrap();
}

/// A directory no mk-tui ever opened (no lock file) is copied without
/// creating one: `state --data-dir` writes nothing there.
#[test]
fn the_copy_of_a_directory_without_a_lock_file_creates_none() {
    let t = TestCluster::new(&[1], 1);
    t.cluster.create_topic("out", 1, 1).unwrap();
    let dir = t.dir;
    drop(t.cluster);
    fs::remove_file(dir.path().join(LOCK_FILE)).unwrap();
    assert!(lock_shared(dir.path()).unwrap().is_none());
    Driver::open_copy(dir.path(), Rules::Minikafka).unwrap();
    assert!(!Path::new(&dir.path().join(LOCK_FILE)).exists());
}

const LOW_LIMIT_ENV: &str = "MK_TEST_LOW_NOFILE";

/// Item 3, at run time: a topic whose logs would not all fit in the open
/// files this process may have is refused whole, before `metadata.json`
/// names it or any directory is made (it used to fail with "Too many open
/// files" half way, the topic named in `metadata.json` but half of its
/// partitions missing). Runs itself again under `RLIMIT_NOFILE` 256.
#[test]
fn a_topic_whose_files_cannot_all_be_opened_is_refused_whole() {
    if std::env::var_os(LOW_LIMIT_ENV).is_none() {
        use std::os::unix::process::CommandExt;
        let mut command = std::process::Command::new(std::env::current_exe().unwrap());
        command
            .args([
                "--exact",
                "a_topic_whose_files_cannot_all_be_opened_is_refused_whole",
                "--test-threads",
                "1",
            ])
            .env(LOW_LIMIT_ENV, "1");
        // SAFETY: setrlimit is async-signal-safe; nothing else runs between
        // fork and exec.
        unsafe {
            command.pre_exec(|| {
                let limit = libc::rlimit {
                    rlim_cur: 256,
                    rlim_max: 256,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
        let out = command.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let t = TestCluster::new(&[1], 1);
    t.cluster.create_topic("small", 4, 1).unwrap();
    let metadata = fs::read(t.dir.path().join(METADATA_FILE)).unwrap();
    let err = t.cluster.create_topic("big", 256, 1).unwrap_err();
    assert!(matches!(err, MiniKafkaError::TooLarge { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("topic \"big\": its 256 replicas need 584 open files"),
        "{err}"
    );
    assert_eq!(t.cluster.topics(), [("small".to_string(), 4)]);
    assert_eq!(
        fs::read(t.dir.path().join(METADATA_FILE)).unwrap(),
        metadata
    );
    assert!(!t.dir.path().join("broker-1/big-0").exists());
    t.cluster.create_topic("medium", 8, 1).unwrap();
}

/// A broker that holds no replica is still part of the cluster: its
/// directory is made at open, so reopening by the directory alone (`state
/// --data-dir`, `serve --data-dir`) finds every configured broker (found
/// trying `serve` as a new user: topics at replication factor 2 on three
/// brokers came back as a two-broker cluster).
#[test]
fn a_broker_without_replicas_is_found_again_by_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let header = serde_json::from_str(
        r#"{"mk_recording":1,"title":"t","rules":"minikafka","cluster":{"brokers":[1,2,3],"topics":[{"name":"t","partitions":1,"replication_factor":2}]}}"#,
    )
    .unwrap();
    let driver = Driver::new(&header, Some(&data)).unwrap();
    drop(driver);
    assert!(
        data.join("broker-3").is_dir(),
        "made though it holds nothing"
    );
    let reopened = Driver::open_in_place(&data, Rules::Minikafka).unwrap();
    assert_eq!(reopened.cluster().config().broker_ids, [1, 2, 3]);
}
