//! E12-E14: the whole cut-point matrix. For commit and abort, every cut point,
//! replication factor 1 and 2, and both rule sets, the transaction is driven
//! to the cut, the process crashes and recovers, and the documented outcome
//! is checked:
//!
//! | cut | markers in the log after recovery (book / kafka) | state | offsets (commit / abort) | read_committed (commit / abort) |
//! | --- | --- | --- | --- | --- |
//! | prepare  | 0 / 2 | COMPLETE_* | 7 / none | both values / nothing |
//! | marker:1 | 1 / 2 | COMPLETE_* | 7 / none | both values / nothing |
//! | markers  | 2 / 2 | COMPLETE_* | 7 / none | both values / nothing |
//! | offsets  | 2 / 2 | COMPLETE_* | 7 / none | both values / nothing |
//!
//! The book decides visibility from the journal, so a committed transaction
//! is visible even where its markers are missing; the kafka rules re-send the
//! missing markers during recovery.

mod common;

use common::{TestCluster, committed, drive, tp};
use minikafka::engine::config::Rules;
use minikafka::engine::transaction::{CutPoint, EndOutcome, Transaction, TransactionState};
use minikafka::engine::{ControlType, MiniKafkaConfig};

/// Sends `value` to `out-p` in `tx`, replicating until it is acknowledged.
async fn send(t: &TestCluster, tx: &Transaction, p: u32, value: &'static str) {
    let tx = tx.clone();
    drive(
        &t.cluster,
        async move { tx.send_record("out", Some(p), None, value).await },
        5,
    )
    .await
    .unwrap();
}

fn markers(t: &TestCluster, partition: u32) -> usize {
    t.cluster
        .leader_log(&tp("out", partition))
        .unwrap()
        .all_batches()
        .unwrap()
        .iter()
        .filter(|b| b.is_control())
        .count()
}

async fn run_cell(control: ControlType, cut: CutPoint, rf: u32, rules: Rules) {
    let cell = format!(
        "{control:?} cut {} rf {rf} rules {}",
        cut.name(),
        rules.name()
    );
    let t = TestCluster::with_config(&[1, 2], |c| MiniKafkaConfig {
        ..c.with_rules(rules)
    });
    t.cluster.create_topic("out", 2, rf).unwrap();
    t.cluster.create_topic("in", 1, 1).unwrap();
    let tx = t.cluster.transactions().begin("tx").await.unwrap();
    for (p, v) in [(0, "a"), (1, "b")] {
        send(&t, &tx, p, v).await;
    }
    tx.send_offsets("workers", [(tp("in", 0), 7)])
        .await
        .unwrap();
    let outcome = drive(
        &t.cluster,
        {
            let tx = tx.clone();
            async move {
                match control {
                    ControlType::Commit => tx.commit_until(Some(cut)).await,
                    ControlType::Abort => tx.abort_until(Some(cut)).await,
                }
            }
        },
        10,
    )
    .await
    .unwrap_or_else(|e| panic!("{cell}: {e}"));
    let EndOutcome::Crashed(report) = outcome else {
        panic!("{cell}: the cut point must crash");
    };

    let written_before_crash = match cut {
        CutPoint::Prepare => 0,
        CutPoint::Marker(k) => k.min(2),
        CutPoint::Markers | CutPoint::Offsets => 2,
    };
    let expected_resent = if rules == Rules::Kafka {
        2 - written_before_crash
    } else {
        0
    };
    assert_eq!(
        report.markers_resent.len(),
        expected_resent,
        "{cell}: markers re-sent"
    );
    let total = markers(&t, 0) + markers(&t, 1);
    assert_eq!(
        total,
        written_before_crash + expected_resent,
        "{cell}: markers in the log"
    );
    assert!(
        report.markers_resent.iter().all(|m| m.control == control),
        "{cell}: re-sent markers have the decision's type"
    );

    let (prepare, complete) = match control {
        ControlType::Commit => (
            TransactionState::PrepareCommit,
            TransactionState::CompleteCommit,
        ),
        ControlType::Abort => (
            TransactionState::PrepareAbort,
            TransactionState::CompleteAbort,
        ),
    };
    assert_eq!(report.completed.len(), 1, "{cell}");
    assert_eq!(
        (report.completed[0].from, report.completed[0].to),
        (prepare, complete),
        "{cell}"
    );
    assert_eq!(
        t.cluster.transactions().get("tx").unwrap().state,
        complete,
        "{cell}"
    );

    let offset = t.cluster.offsets().get("workers", &tp("in", 0));
    let expected_offset = (control == ControlType::Commit).then_some(7);
    assert_eq!(offset, expected_offset, "{cell}: committed offset");

    // Let followers catch up with any re-sent marker, then read.
    t.cluster.replicate_all_once().unwrap();
    let visible = [
        committed(&t.cluster, &tp("out", 0)),
        committed(&t.cluster, &tp("out", 1)),
    ];
    let expected: [Vec<String>; 2] = match control {
        ControlType::Commit => [vec!["a".into()], vec!["b".into()]],
        ControlType::Abort => [vec![], vec![]],
    };
    assert_eq!(visible, expected, "{cell}: read_committed");
    for p in [0, 1] {
        let out = tp("out", p);
        let hw = t.cluster.replica_set(&out).unwrap().high_watermark();
        assert_eq!(
            t.cluster.last_stable_offset(&out).unwrap(),
            hw,
            "{cell}: nothing holds the LSO back"
        );
        if rf == 2 {
            let leader = t.cluster.leader_log(&out).unwrap().all_batches().unwrap();
            let follower = t
                .cluster
                .replica_log(&out, if p == 0 { 2 } else { 1 })
                .unwrap()
                .all_batches()
                .unwrap();
            assert_eq!(leader, follower, "{cell}: replicas agree");
        }
    }
}

#[tokio::test]
async fn every_cell_of_the_cut_point_matrix() {
    let mut cells = 0;
    for control in [ControlType::Commit, ControlType::Abort] {
        for cut in [
            CutPoint::Prepare,
            CutPoint::Marker(1),
            CutPoint::Markers,
            CutPoint::Offsets,
        ] {
            for rf in [1, 2] {
                for rules in [Rules::Minikafka, Rules::Kafka] {
                    run_cell(control, cut, rf, rules).await;
                    cells += 1;
                }
            }
        }
    }
    assert_eq!(cells, 32);
}

#[tokio::test]
async fn marker_cut_points_past_the_count_mean_all_markers() {
    run_cell(
        ControlType::Commit,
        CutPoint::Marker(5),
        1,
        Rules::Minikafka,
    )
    .await;
    run_cell(ControlType::Abort, CutPoint::Marker(0), 2, Rules::Kafka).await;
}

#[tokio::test]
async fn without_a_cut_point_nothing_crashes() {
    let t = TestCluster::new(&[1], 1);
    t.cluster.create_topic("out", 1, 1).unwrap();
    let tx = t.cluster.transactions().begin("tx").await.unwrap();
    tx.send("out", b"v".to_vec()).await.unwrap();
    let generation = t.cluster.generation();
    assert_eq!(tx.commit_until(None).await.unwrap(), EndOutcome::Completed);
    assert_eq!(t.cluster.generation(), generation);
}

/// A commit that staged no offsets leaves `offsets.json` as it was (the
/// store does not replace it with the same bytes, docs/book-differences.md
/// "offsets.json"). Crashed at every cut point, under both rules and RF 1
/// and 2, it recovers what the book's order recovers: the transaction
/// COMPLETE_COMMIT and visible, the earlier transaction's offset still
/// committed, `offsets.json` byte for byte what it held before (the bytes
/// the book would have rewritten), no `.tmp` left, and the journal's frames
/// the book's five (three ONGOING, PREPARE_COMMIT, COMPLETE_COMMIT).
/// Without an earlier commit the file is the book's empty one.
#[tokio::test]
async fn a_commit_without_staged_offsets_recovers_the_same_at_every_cut_point() {
    use minikafka::engine::consumer::offsets::OFFSETS_FILE;
    let mut cells = 0;
    for cut in [
        CutPoint::Prepare,
        CutPoint::Marker(1),
        CutPoint::Markers,
        CutPoint::Offsets,
    ] {
        for rf in [1, 2] {
            for rules in [Rules::Minikafka, Rules::Kafka] {
                for earlier in [true, false] {
                    let cell = format!(
                        "cut {} rf {rf} rules {} earlier commit {earlier}",
                        cut.name(),
                        rules.name()
                    );
                    let t = TestCluster::with_config(&[1, 2], |c| c.with_rules(rules));
                    t.cluster.create_topic("out", 2, rf).unwrap();
                    t.cluster.create_topic("in", 1, 1).unwrap();
                    let offsets_path = t.dir.path().join(OFFSETS_FILE);
                    let mut expected_values = [Vec::<String>::new(), Vec::new()];
                    if earlier {
                        let tx = t.cluster.transactions().begin("first").await.unwrap();
                        send(&t, &tx, 0, "x").await;
                        tx.send_offsets("workers", [(tp("in", 0), 7)])
                            .await
                            .unwrap();
                        let commit = tx.clone();
                        drive(&t.cluster, async move { commit.commit().await }, 10)
                            .await
                            .unwrap();
                        expected_values[0].push("x".into());
                    }
                    let before = std::fs::read(&offsets_path).ok();
                    let frames_before = journal_states(&t).len();

                    let tx = t.cluster.transactions().begin("tx").await.unwrap();
                    for (p, v) in [(0, "a"), (1, "b")] {
                        send(&t, &tx, p, v).await;
                        expected_values[p as usize].push(v.into());
                    }
                    let commit = tx.clone();
                    let outcome = drive(
                        &t.cluster,
                        async move { commit.commit_until(Some(cut)).await },
                        10,
                    )
                    .await
                    .unwrap_or_else(|e| panic!("{cell}: {e}"));
                    assert!(
                        matches!(outcome, EndOutcome::Crashed(_)),
                        "{cell}: the cut point must crash"
                    );

                    let state = t.cluster.transactions().get("tx").unwrap().state;
                    assert_eq!(state, TransactionState::CompleteCommit, "{cell}");
                    let offset = t.cluster.offsets().get("workers", &tp("in", 0));
                    assert_eq!(offset, earlier.then_some(7), "{cell}: committed offset");
                    let after = std::fs::read(&offsets_path).unwrap();
                    let expected_file = before
                        .clone()
                        .unwrap_or_else(|| br#"{"groups":{},"version":1}"#.to_vec());
                    assert_eq!(
                        String::from_utf8_lossy(&after),
                        String::from_utf8_lossy(&expected_file),
                        "{cell}: offsets.json"
                    );
                    assert!(
                        !t.dir.path().join("offsets.json.tmp").exists(),
                        "{cell}: no temporary file left"
                    );
                    let states = journal_states(&t)[frames_before..].to_vec();
                    assert_eq!(
                        states,
                        [
                            TransactionState::Ongoing,
                            TransactionState::Ongoing,
                            TransactionState::Ongoing,
                            TransactionState::PrepareCommit,
                            TransactionState::CompleteCommit,
                        ],
                        "{cell}: journal frames"
                    );
                    t.cluster.replicate_all_once().unwrap();
                    let visible = [
                        committed(&t.cluster, &tp("out", 0)),
                        committed(&t.cluster, &tp("out", 1)),
                    ];
                    assert_eq!(visible, expected_values, "{cell}: read_committed");
                    cells += 1;
                }
            }
        }
    }
    assert_eq!(cells, 32);
}

/// The state of every journal frame, oldest first.
fn journal_states(t: &TestCluster) -> Vec<TransactionState> {
    t.cluster.with_state(|s| {
        s.transactions()
            .journal_frames()
            .iter()
            .map(|f| f.state)
            .collect()
    })
}
