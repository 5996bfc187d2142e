//! Deferred journal syncs (`BrokerCluster::defer_journal_syncs`, the
//! caller `mk-tui serve`'s driver thread): journaling steps return with
//! their frames written, not synced, except PREPARE_*, and one
//! `sync_journal` makes everything durable; a failure cuts back and goes
//! offline; a crash between the write and the sync does not make the sync
//! skip the frames written before it.

use crate::engine::clock::ManualClock;
use crate::engine::config::{MiniKafkaConfig, Rules};
use crate::engine::core::cluster::BrokerCluster;
use crate::engine::io_fault::{Effect, Errno, FileOp, inject};

fn open(dir: &std::path::Path, rules: Rules) -> BrokerCluster {
    let config = MiniKafkaConfig::new(dir).with_rules(rules);
    let cluster = BrokerCluster::open(config, ManualClock::new()).unwrap();
    cluster.create_topic("out", 1, 1).unwrap();
    cluster
}

fn journal_len(cluster: &BrokerCluster) -> u64 {
    cluster.with_state(|s| s.transactions().journal_size())
}

#[tokio::test]
async fn deferred_steps_leave_one_sync_to_the_caller_but_prepare_waits() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = open(dir.path(), Rules::Kafka);
    assert!(cluster.journal_group_committed());
    let manager = cluster.transactions();
    cluster.defer_journal_syncs(true);
    let before = cluster.journal_syncs();
    let a = manager.begin("a").await.unwrap();
    let b = manager.begin("b").await.unwrap();
    a.send_to("out", 0, "va").await.unwrap();
    b.send_to("out", 0, "vb").await.unwrap();
    assert_eq!(cluster.journal_syncs(), before, "four frames, no sync");
    assert!(cluster.journal_unsynced());
    assert!(cluster.sync_journal().unwrap(), "one sync for them");
    assert_eq!(cluster.journal_syncs(), before + 1);
    assert!(!cluster.journal_unsynced());
    assert!(!cluster.sync_journal().unwrap(), "nothing new: no sync");
    assert_eq!(cluster.journal_syncs(), before + 1);
    // A commit: PREPARE_COMMIT is synced inside its step (the markers rest
    // on it), COMPLETE_COMMIT is left to the caller.
    a.commit().await.unwrap();
    assert_eq!(cluster.journal_syncs(), before + 2, "PREPARE's own sync");
    assert!(cluster.journal_unsynced(), "COMPLETE waits for the caller");
    cluster.defer_journal_syncs(false);
    b.commit().await.unwrap();
    assert_eq!(
        cluster.journal_syncs(),
        before + 4,
        "not deferring: PREPARE and COMPLETE each wait again"
    );
    let (synced, written) = cluster.with_state(|s| {
        let t = s.transactions();
        (t.journal_group_commit().unwrap().synced(), t.journal_size())
    });
    assert_eq!(synced, written, "b's waits covered a's COMPLETE");
}

#[tokio::test]
async fn under_the_books_rules_nothing_is_deferred() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = open(dir.path(), Rules::Minikafka);
    assert!(!cluster.journal_group_committed());
    cluster.defer_journal_syncs(true);
    let tx = cluster.transactions().begin("a").await.unwrap();
    tx.send_to("out", 0, "v").await.unwrap();
    assert!(
        !cluster.journal_unsynced(),
        "each frame fsynced as written (E9)"
    );
    assert!(!cluster.sync_journal().unwrap());
}

#[tokio::test]
async fn a_failed_deferred_sync_cuts_back_to_what_was_durable_and_goes_offline() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = open(dir.path(), Rules::Kafka);
    let manager = cluster.transactions();
    manager.begin("a").await.unwrap();
    let durable = journal_len(&cluster);
    cluster.defer_journal_syncs(true);
    manager.begin("b").await.unwrap();
    assert!(journal_len(&cluster) > durable);
    let path = cluster.with_state(|s| s.transactions().journal_path().to_path_buf());
    {
        let _fault = inject(&path, FileOp::Sync, 1, Effect::Fail(Errno::Io));
        let err = cluster.sync_journal().unwrap_err();
        assert_eq!(err.code(), "KafkaStorageException", "{err}");
    }
    assert_eq!(std::fs::metadata(&path).unwrap().len(), durable, "cut back");
    assert!(!cluster.journal_unsynced(), "nothing left to sync");
    let err = manager.begin("c").await.unwrap_err();
    assert!(err.to_string().contains("offline"), "{err}");
}

#[tokio::test]
async fn a_crash_between_a_deferred_write_and_the_sync_still_gets_its_sync() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = open(dir.path(), Rules::Kafka);
    cluster.defer_journal_syncs(true);
    cluster.transactions().begin("a").await.unwrap();
    cluster.crash().unwrap();
    // The reopened journal takes its bytes as synced; the frame written
    // before the crash may still be only in the page cache.
    let before = cluster.journal_syncs();
    assert!(cluster.journal_unsynced());
    assert!(cluster.sync_journal().unwrap());
    assert_eq!(cluster.journal_syncs(), before + 1);
}
