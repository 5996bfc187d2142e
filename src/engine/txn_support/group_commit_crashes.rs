//! Crashes against the journal's group commit (Kafka rules,
//! `txn_support::group_commit`): a frame written but not yet synced may be
//! lost by a power cut; one whose request was answered may not. A power
//! cut is modelled as a copy of the data directory whose journal is cut to
//! any length between its synced length and its end (the disk kept some
//! prefix of what was not yet synced), opened and recovered. Inside the
//! crate because the frames written but not synced are made by calling the
//! coordinator under the state lock directly, as a request whose sync has
//! not yet returned.

use crate::engine::clock::ManualClock;
use crate::engine::config::{MiniKafkaConfig, Rules};
use crate::engine::core::batch::ControlType;
use crate::engine::core::cluster::BrokerCluster;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::fault::{CutPoint, EndOutcome};
use crate::engine::transaction::TransactionState;
use std::sync::{Arc, Mutex};

fn open(dir: &std::path::Path, clock: &ManualClock) -> BrokerCluster {
    let config = MiniKafkaConfig::new(dir).with_rules(Rules::Kafka);
    BrokerCluster::open(config, clock.clone()).unwrap()
}

/// The values of `tp` a read_committed reader sees.
fn committed(cluster: &BrokerCluster, tp: &TopicPartition) -> Vec<String> {
    let batches = cluster.leader_log(tp).unwrap().all_batches().unwrap();
    let manager = cluster.transactions();
    batches
        .iter()
        .filter(|b| !b.is_control() && manager.is_committed(tp, b))
        .flat_map(|b| b.records.iter())
        .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
        .collect()
}

fn state(cluster: &BrokerCluster, id: &str) -> Option<TransactionState> {
    cluster.with_state(|s| s.transactions().get(id).map(|d| d.state))
}

/// (synced length, written length) of the journal.
fn lengths(cluster: &BrokerCluster) -> (u64, u64) {
    cluster.with_state(|s| {
        let t = s.transactions();
        let group = t.journal_group_commit().expect("kafka rules group-commit");
        (group.synced(), t.journal_size())
    })
}

/// The scenario: `a` committed and `c` begun and sent (answered: durable);
/// then, unanswered, `c`'s PREPARE_COMMIT written and `b` (begun and sent
/// before) timed out: PREPARE_ABORT and COMPLETE_ABORT written by the
/// expiry, which no request waits for. Returns the end of `c`'s
/// PREPARE_COMMIT frame.
async fn scenario(cluster: &BrokerCluster, clock: &ManualClock) -> u64 {
    let out = TopicPartition::new("out", 0);
    cluster.create_topic("out", 1, 1).unwrap();
    let manager = cluster.transactions();
    let b = manager.begin("b").await.unwrap();
    b.send_record("out", Some(0), None, "vb").await.unwrap();
    clock.advance(59_000);
    let a = manager.begin("a").await.unwrap();
    a.send_record("out", Some(0), None, "va").await.unwrap();
    a.commit().await.unwrap();
    let c = manager.begin("c").await.unwrap();
    c.send_record("out", Some(0), None, "vc").await.unwrap();
    let acknowledged = lengths(cluster);
    assert_eq!(acknowledged.0, acknowledged.1, "every answer waited");
    cluster
        .mutate(|s, _| {
            s.transactions
                .prepare("c", c.instance(), ControlType::Commit)
                .map(drop)
        })
        .unwrap();
    let prepared = lengths(cluster).1;
    clock.advance(1_000);
    cluster.mutate(|_, _| Ok(())).unwrap(); // the expiry of `b`
    assert_eq!(state(cluster, "b"), Some(TransactionState::CompleteAbort));
    let (synced, written) = lengths(cluster);
    assert_eq!(synced, acknowledged.0, "nothing since was synced");
    assert!(written > prepared && prepared > synced);
    assert_eq!(committed(cluster, &out), ["va"]);
    prepared
}

/// A copy of the data directory `from` at `to` (the state a power cut
/// leaves, before the journal's unsynced tail is cut).
fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[tokio::test]
async fn a_power_cut_anywhere_past_the_synced_length_keeps_every_answered_frame() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new();
    let (synced, written, prepared) = {
        let cluster = open(dir.path(), &clock);
        let prepared = scenario(&cluster, &clock).await;
        let (synced, written) = lengths(&cluster);
        (synced, written, prepared)
    };
    let out = TopicPartition::new("out", 0);
    for kept in synced..=written {
        // The disk kept the synced bytes and `kept - synced` of the rest.
        let copy = tempfile::tempdir().unwrap();
        copy_dir(dir.path(), copy.path());
        let journal = copy.path().join(crate::engine::layout::JOURNAL_FILE);
        assert_eq!(std::fs::metadata(&journal).unwrap().len(), written);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&journal)
            .unwrap()
            .set_len(kept)
            .unwrap();
        let config = MiniKafkaConfig {
            sync_writes: false, // what recovery reads is the point, not its syncs
            ..MiniKafkaConfig::new(copy.path()).with_rules(Rules::Kafka)
        };
        let cluster = BrokerCluster::open(config, clock.clone()).unwrap();
        let at = format!("{kept} of {written} bytes kept (synced {synced})");
        assert_eq!(
            state(&cluster, "a"),
            Some(TransactionState::CompleteCommit),
            "{at}"
        );
        assert_eq!(
            state(&cluster, "b"),
            Some(TransactionState::CompleteAbort),
            "{at}: journaled, or timed out again at the reopen"
        );
        let c = cluster.with_state(|s| s.transactions().get("c").cloned());
        let c = c.unwrap_or_else(|| panic!("{at}: c's answered begin was lost"));
        assert!(
            c.partitions.contains(&out),
            "{at}: c's answered send was lost"
        );
        let (state_c, values) = if kept >= prepared {
            (TransactionState::CompleteCommit, vec!["va", "vc"])
        } else {
            (TransactionState::Ongoing, vec!["va"])
        };
        assert_eq!(c.state, state_c, "{at}");
        assert_eq!(committed(&cluster, &out), values, "{at}");
    }
}

#[tokio::test]
async fn at_every_cut_point_what_the_commit_answered_so_far_is_durable() {
    for cut in [
        CutPoint::Prepare,
        CutPoint::Marker(1),
        CutPoint::Markers,
        CutPoint::Offsets,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let clock = ManualClock::new();
        let cluster = open(dir.path(), &clock);
        cluster.create_topic("out", 2, 1).unwrap();
        let tx = cluster.transactions().begin("tx").await.unwrap();
        for p in [0, 1] {
            tx.send_record("out", Some(p), None, "v").await.unwrap();
        }
        let seen = Arc::new(Mutex::new(None));
        let observed = seen.clone();
        cluster.set_crash_observer(Some(Arc::new(move |s, _, _| {
            let t = s.transactions();
            let synced = t.journal_group_commit().map(|g| g.synced());
            *observed.lock().unwrap() = Some((synced, t.journal_size()));
        })));
        let outcome = cluster.transactions().commit(&tx, Some(cut)).await;
        assert!(matches!(outcome, Ok(EndOutcome::Crashed(_))), "{cut:?}");
        let (synced, size) = seen.lock().unwrap().take().expect("observed");
        assert_eq!(
            synced,
            Some(size),
            "{cut:?}: a power cut at the crash would lose nothing journaled"
        );
        assert_eq!(
            state(&cluster, "tx"),
            Some(TransactionState::CompleteCommit),
            "{cut:?}"
        );
    }
}

#[tokio::test]
async fn concurrent_requests_before_one_sync_share_it() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new();
    let cluster = open(dir.path(), &clock);
    let syncs = || cluster.with_state(|s| s.transactions().journal_group_commit().unwrap().syncs());
    let before = syncs();
    // Two begins written under the state lock, as two requests whose syncs
    // have not begun: the first waiter's sync covers both.
    let mut tickets = Vec::new();
    for id in ["x", "y"] {
        let ticket = cluster
            .mutate(|s, now| {
                let (partitions, offsets) = (&mut s.partitions, &mut s.offsets);
                s.transactions
                    .begin(id, None, partitions.untracked(), offsets, now)?;
                Ok(s.transactions.journal_ticket())
            })
            .unwrap();
        tickets.push(ticket);
    }
    let (synced, written) = lengths(&cluster);
    assert!(synced < written);
    tickets[0].wait().unwrap();
    assert_eq!(syncs(), before + 1);
    assert_eq!(lengths(&cluster), (written, written));
    tickets[1].wait().unwrap();
    assert_eq!(
        syncs(),
        before + 1,
        "the second request found its frame durable"
    );
}

#[test]
fn the_books_rules_and_unsynced_journals_have_no_group_commit() {
    for (rules, sync, grouped) in [
        (Rules::Minikafka, true, false),
        (Rules::Kafka, false, false),
        (Rules::Kafka, true, true),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let config = MiniKafkaConfig {
            sync_writes: sync,
            ..MiniKafkaConfig::new(dir.path()).with_rules(rules)
        };
        let cluster = BrokerCluster::open(config, ManualClock::new()).unwrap();
        let group = cluster.with_state(|s| s.transactions().journal_group_commit().is_some());
        assert_eq!(group, grouped, "{rules:?} sync {sync}");
        let ticket = cluster.with_state(|s| s.transactions().journal_ticket());
        assert_eq!(ticket.waits(), grouped, "{rules:?} sync {sync}");
    }
}
