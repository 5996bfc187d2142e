//! E4-E6: follower pull, the ISR rules, a monotonic HW, acks 0/1/all, broker
//! stop/start, promotion with epochs and fencing, divergent-tail truncation.

mod common;

use common::{TestCluster, tp};
use minikafka::engine::config::RuleSwitches;
use minikafka::engine::{AckMode, IsolationLevel, MiniKafkaError, RecordBatch};

fn two_replicas(min_isr: usize) -> TestCluster {
    let t = TestCluster::new(&[1, 2], min_isr);
    t.cluster.create_topic("t", 1, 2).unwrap();
    t
}

#[tokio::test]
async fn followers_pull_whole_batches_and_the_hw_follows_the_isr() {
    let t = two_replicas(1);
    let p = tp("t", 0);
    t.cluster
        .append_batch(&p, RecordBatch::of_values(["a", "b"]), AckMode::Leader)
        .await
        .unwrap();
    let set = t.cluster.replica_set(&p).unwrap();
    assert_eq!(set.high_watermark(), 0, "the follower has not fetched");
    assert!(t.visible(&p).is_empty(), "read_uncommitted stops at the HW");
    let outcome = t.cluster.replicate_all_once().unwrap();
    assert_eq!(outcome.batches, 1);
    assert_eq!(set.high_watermark(), 2);
    assert_eq!(t.visible(&p), ["a", "b"]);
    let leader = t.cluster.leader_log(&p).unwrap().all_batches().unwrap();
    let follower = t.cluster.replica_log(&p, 2).unwrap().all_batches().unwrap();
    assert_eq!(
        leader, follower,
        "the follower holds the leader's batches byte for byte"
    );
}

#[tokio::test]
async fn one_follower_or_one_partition_at_a_time() {
    let t = TestCluster::new(&[1, 2, 3], 1);
    t.cluster.create_topic("t", 2, 3).unwrap();
    let (p0, p1) = (tp("t", 0), tp("t", 1));
    t.append(&p0, "x", AckMode::Leader).await.unwrap();
    t.append(&p1, "y", AckMode::Leader).await.unwrap();
    // partition 0: replicas [1,2,3]; partition 1: [2,3,1]
    t.cluster
        .replica_set(&p0)
        .unwrap()
        .replicate_follower(2)
        .unwrap();
    let leo = |p, b| {
        t.cluster
            .replica_log(p, b)
            .unwrap()
            .log_end_offset()
            .unwrap()
    };
    assert_eq!((leo(&p0, 2), leo(&p0, 3)), (1, 0));
    t.cluster.replicate_partition(&p1).unwrap();
    assert_eq!((leo(&p1, 3), leo(&p1, 1)), (1, 1));
    assert_eq!(leo(&p0, 3), 0, "only partition 1 replicated");
    t.cluster.replicate_broker(3).unwrap();
    assert_eq!(leo(&p0, 3), 1);
    assert!(matches!(
        t.cluster.replicate_broker(9),
        Err(MiniKafkaError::UnknownBroker(9))
    ));
}

#[tokio::test]
async fn a_follower_leaves_the_isr_by_offset_lag_and_rejoins_when_caught_up() {
    // The clock-driven evaluation (kafka rules) judges on every operation.
    let t = TestCluster::with_config(&[1, 2], |c| {
        let mut c = minikafka::engine::MiniKafkaConfig {
            replica_lag_max_offsets: 3,
            ..c
        };
        c.rules.isr_by_clock = true;
        c
    });
    t.cluster.create_topic("t", 1, 2).unwrap();
    let p = tp("t", 0);
    let set = t.cluster.replica_set(&p).unwrap();
    for i in 0..3 {
        t.append(&p, &format!("v{i}"), AckMode::Leader)
            .await
            .unwrap();
    }
    assert_eq!(
        set.isr(),
        [1, 2],
        "3 behind is within replica_lag_max_offsets"
    );
    t.append(&p, "v3", AckMode::Leader).await.unwrap();
    assert_eq!(set.isr(), [1], "4 behind is out");
    assert_eq!(
        set.high_watermark(),
        4,
        "the HW moves with the ISR that is left"
    );
    let status = &set.replicas()[1];
    assert_eq!((status.broker, status.lag, status.in_sync), (2, 4, false));
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(set.isr(), [1, 2], "caught up and covering the HW: back in");
}

/// The book's rules judge the offset lag only after a fetch round (its
/// `refresh_isr`): appends alone leave the ISR and the HW where they are.
#[tokio::test]
async fn under_the_books_rules_offset_lag_is_judged_at_fetch() {
    let t = TestCluster::with_config(&[1, 2, 3], |c| minikafka::engine::MiniKafkaConfig {
        replica_lag_max_offsets: 2,
        ..c
    });
    t.cluster.create_topic("t", 1, 3).unwrap();
    let p = tp("t", 0);
    let set = t.cluster.replica_set(&p).unwrap();
    for i in 0..3 {
        t.append(&p, &format!("v{i}"), AckMode::Leader)
            .await
            .unwrap();
    }
    assert_eq!(
        (set.isr(), set.high_watermark()),
        (vec![1, 2, 3], 0),
        "no fetch, no judgement: the leader alone does not commit"
    );
    t.cluster.stop_broker(3).unwrap();
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(
        (set.isr(), set.high_watermark()),
        (vec![1, 2], 3),
        "after the round broker 3 is 3 behind (> 2): out"
    );
}

#[tokio::test]
async fn a_stopped_follower_leaves_the_isr_by_time_on_the_clock() {
    // The clock-driven evaluation (kafka rules).
    let t = TestCluster::with_config(&[1, 2], |c| {
        let mut c = c;
        c.rules.isr_by_clock = true;
        c
    });
    t.cluster.create_topic("t", 1, 2).unwrap();
    let p = tp("t", 0);
    let set = t.cluster.replica_set(&p).unwrap();
    t.cluster.stop_broker(2).unwrap();
    // Time moves through the clock's action (`advance_clock` ticks the
    // cluster); reading the ISR never re-evaluates it (issue 12).
    t.clock.advance(10_000);
    t.cluster.tick().unwrap();
    assert_eq!(
        set.isr(),
        [1, 2],
        "exactly replica_lag_time_ms is still in sync"
    );
    t.clock.advance(1);
    assert_eq!(set.isr(), [1, 2], "a read does not re-evaluate the ISR");
    t.cluster.tick().unwrap();
    assert_eq!(set.isr(), [1], "past replica_lag_time_ms it leaves");
    assert_eq!(set.replicas()[1].ms_since_fetch, 10_001);
    assert!(set.replicas()[1].stopped);
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(set.isr(), [1], "a stopped broker does not fetch");
    t.cluster.start_broker(2).unwrap();
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(set.isr(), [1, 2]);
}

/// The book's rules: time alone changes nothing; the next fetch round
/// finds the stopped follower silent past the lag time.
#[tokio::test]
async fn under_the_books_rules_a_stopped_follower_leaves_at_the_next_fetch_round() {
    let t = two_replicas(1);
    let p = tp("t", 0);
    let set = t.cluster.replica_set(&p).unwrap();
    t.cluster.stop_broker(2).unwrap();
    t.clock.advance(10_001);
    t.cluster.tick().unwrap();
    assert_eq!(set.isr(), [1, 2], "the clock alone judges nothing");
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(
        set.isr(),
        [1],
        "the round judges broker 2: 10 001 ms silent"
    );
    t.cluster.start_broker(2).unwrap();
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(set.isr(), [1, 2]);
}

#[tokio::test]
async fn a_follower_whose_leo_is_below_the_hw_is_not_in_sync() {
    let t = TestCluster::new(&[1, 2, 3], 1);
    t.cluster.create_topic("t", 1, 3).unwrap();
    let p = tp("t", 0);
    let set = t.cluster.replica_set(&p).unwrap();
    t.cluster.stop_broker(3).unwrap();
    t.clock.advance(10_001);
    t.append(&p, "a", AckMode::Leader).await.unwrap();
    t.cluster.replicate_all_once().unwrap();
    assert_eq!((set.isr(), set.high_watermark()), (vec![1, 2], 1));
    // broker 3 restarts and fetches, but fetches nothing new while stopped
    // again: its LEO 0 is below HW 1, so fetching recently is not enough.
    t.cluster.start_broker(3).unwrap();
    t.cluster
        .replica_set(&p)
        .unwrap()
        .replicate_follower(3)
        .unwrap();
    assert_eq!(set.isr(), [1, 2, 3], "one fetch brought it to the HW");
    assert_eq!(set.replicas()[2].log_end_offset, 1);
}

#[tokio::test]
async fn the_hw_never_goes_back_while_the_leader_runs() {
    let t = TestCluster::new(&[1, 2, 3], 1);
    t.cluster.create_topic("t", 1, 3).unwrap();
    let p = tp("t", 0);
    let set = t.cluster.replica_set(&p).unwrap();
    let mut last = 0;
    // A deterministic mix of appends, partial replication, stops and time.
    for step in 0..60u32 {
        match step % 6 {
            0 | 1 => {
                t.append(&p, &format!("v{step}"), AckMode::Leader)
                    .await
                    .unwrap();
            }
            2 => {
                set.replicate_follower(2 + step % 2).unwrap();
            }
            3 if step % 12 == 3 => t.cluster.stop_broker(3).unwrap(),
            3 => t.cluster.start_broker(3).unwrap(),
            4 => t.clock.advance(4_000),
            _ => {
                t.cluster.replicate_all_once().unwrap();
            }
        }
        let hw = set.high_watermark();
        assert!(hw >= last, "step {step}: HW went from {last} to {hw}");
        let min_isr_leo = set
            .replicas()
            .iter()
            .filter(|r| r.in_sync)
            .map(|r| r.log_end_offset)
            .min()
            .unwrap();
        assert!(
            hw <= min_isr_leo,
            "step {step}: HW {hw} above an ISR member's LEO {min_isr_leo}"
        );
        last = hw;
    }
    assert!(last > 0);
}

#[tokio::test]
async fn acks_0_returns_no_offsets_and_acks_1_completes_on_the_leader() {
    let t = two_replicas(2);
    let p = tp("t", 0);
    let r0 = t.append(&p, "zero", AckMode::None).await.unwrap();
    assert_eq!(r0.offsets, None);
    let r1 = t.append(&p, "one", AckMode::Leader).await.unwrap();
    assert_eq!(r1.offsets, Some((1, 1)));
    assert_eq!(
        t.cluster.leader_log(&p).unwrap().log_end_offset().unwrap(),
        2
    );
}

#[tokio::test]
async fn acks_all_stays_pending_until_replicate_all_once() {
    let t = two_replicas(1);
    let p = tp("t", 0);
    let mut pending = t.append(&p, "durable", AckMode::All);
    tokio::task::yield_now().await;
    assert!(
        pending.try_take().is_none(),
        "pending before the follower fetched"
    );
    let views = t.cluster.replica_set(&p).unwrap().pending();
    assert_eq!(views.len(), 1);
    assert_eq!(
        (views[0].base_offset, views[0].waiting_for.clone()),
        (0, vec![2])
    );
    // The same check through a spawned task, as the book does.
    let task = tokio::spawn(t.append(&p, "second", AckMode::All));
    tokio::task::yield_now().await;
    assert!(!task.is_finished());
    t.cluster.replicate_all_once().unwrap();
    let first = pending
        .try_take()
        .expect("complete after replication")
        .unwrap();
    assert_eq!(first.offsets, Some((0, 0)));
    assert_eq!(task.await.unwrap().unwrap().offsets, Some((1, 1)));
    assert!(t.cluster.replica_set(&p).unwrap().pending().is_empty());
}

#[tokio::test]
async fn acks_all_fails_before_append_when_the_isr_is_below_min() {
    let t = two_replicas(2);
    let p = tp("t", 0);
    t.cluster.stop_broker(2).unwrap();
    t.clock.advance(10_001);
    t.cluster.replicate_all_once().unwrap();
    let err = t.append(&p, "refused", AckMode::All).await.unwrap_err();
    assert!(
        matches!(
            err,
            MiniKafkaError::NotEnoughReplicas { isr: 1, min: 2, .. }
        ),
        "{err}"
    );
    assert_eq!(
        t.cluster.leader_log(&p).unwrap().log_end_offset().unwrap(),
        0,
        "nothing was appended"
    );
    // acks=1 is still accepted
    t.append(&p, "ok", AckMode::Leader).await.unwrap();
}

#[tokio::test]
async fn acks_all_fails_after_append_when_the_isr_shrinks_below_min_first() {
    let t = two_replicas(2);
    let p = tp("t", 0);
    let pending = t.append(&p, "in-flight", AckMode::All);
    t.cluster.stop_broker(2).unwrap();
    t.clock.advance(10_001);
    // The fetch round judges the ISR (the book's rules).
    t.cluster.replicate_all_once().unwrap();
    let err = pending.await.unwrap_err();
    assert!(
        matches!(
            err,
            MiniKafkaError::NotEnoughReplicasAfterAppend {
                offset: 0,
                isr: 1,
                min: 2,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        t.cluster.leader_log(&p).unwrap().log_end_offset().unwrap(),
        1,
        "the batch stays in the leader's log"
    );
}

#[tokio::test]
async fn acks_all_waits_for_the_captured_isr_in_the_books_rules() {
    let t = TestCluster::new(&[1, 2, 3], 1);
    t.cluster.create_topic("t", 1, 3).unwrap();
    let p = tp("t", 0);
    let mut pending = t.append(&p, "v", AckMode::All);
    t.cluster.stop_broker(3).unwrap();
    t.cluster.replicate_all_once().unwrap();
    t.clock.advance(10_001);
    t.cluster.replicate_all_once().unwrap();
    let set = t.cluster.replica_set(&p).unwrap();
    assert_eq!(set.isr(), [1, 2]);
    assert_eq!(set.high_watermark(), 1);
    assert!(
        pending.try_take().is_none(),
        "broker 3 was in the captured ISR"
    );
    assert_eq!(set.pending()[0].waiting_for, [3]);
    t.cluster.start_broker(3).unwrap();
    t.cluster.replicate_all_once().unwrap();
    assert!(pending.try_take().unwrap().is_ok());
}

#[tokio::test]
async fn acks_all_completes_by_hw_under_the_kafka_completion_rule() {
    let t = TestCluster::with_config(&[1, 2, 3], |c| minikafka::engine::MiniKafkaConfig {
        rules: RuleSwitches {
            acks_all_by_high_watermark: true,
            ..RuleSwitches::default()
        },
        ..c
    });
    t.cluster.create_topic("t", 1, 3).unwrap();
    let p = tp("t", 0);
    let mut pending = t.append(&p, "v", AckMode::All);
    t.cluster.stop_broker(3).unwrap();
    t.cluster.replicate_all_once().unwrap();
    assert!(
        pending.try_take().is_none(),
        "HW is held back while 3 is in the ISR"
    );
    t.clock.advance(10_001);
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(pending.try_take().unwrap().unwrap().offsets, Some((0, 0)));
}

#[tokio::test]
async fn an_append_to_a_stopped_leader_is_refused() {
    let t = two_replicas(1);
    let p = tp("t", 0);
    t.cluster.stop_broker(1).unwrap();
    let err = t.append(&p, "x", AckMode::Leader).await.unwrap_err();
    assert!(
        matches!(err, MiniKafkaError::LeaderNotAvailable { broker: 1, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("t-0"));
    assert!(
        t.cluster
            .fetch(&p, 0, 1, IsolationLevel::ReadUncommitted)
            .is_err()
    );
}

#[tokio::test]
async fn promotion_accepts_only_running_isr_members_and_bumps_the_epoch() {
    let t = TestCluster::new(&[1, 2, 3], 1);
    t.cluster.create_topic("t", 1, 3).unwrap();
    let p = tp("t", 0);
    let refused = |b| t.cluster.promote(&p, b).unwrap_err();
    assert!(
        matches!(refused(1), MiniKafkaError::InvalidPromotion { .. }),
        "already leader"
    );
    assert!(refused(7).to_string().contains("not a replica"));
    t.cluster.stop_broker(3).unwrap();
    assert!(refused(3).to_string().contains("stopped"));
    // Under --lang zh each reason is Chinese too, only Kafka's terms kept.
    for e in [refused(1), refused(7), refused(3)] {
        let zh = minikafka::session::error_zh::error_zh(&e);
        let english: Vec<&str> = zh
            .split(|c: char| !c.is_ascii_alphabetic())
            .filter(|w| w.len() >= 3 && !["broker", "leader", "ISR"].contains(w))
            .collect();
        assert!(english.is_empty(), "{zh}: {english:?}");
    }
    t.cluster.start_broker(3).unwrap();
    t.append(&p, "a", AckMode::Leader).await.unwrap();
    t.cluster
        .replica_set(&p)
        .unwrap()
        .replicate_follower(2)
        .unwrap();
    let t2 = &t;
    // broker 3 falls 1 behind: fine for the ISR by lag, but leave by time
    t2.clock.advance(10_001);
    t2.cluster
        .replica_set(&p)
        .unwrap()
        .replicate_follower(2)
        .unwrap();
    assert!(refused(3).to_string().contains("not in the ISR"));
    let zh = minikafka::session::error_zh::error_zh(&refused(3));
    assert!(zh.contains("不在 ISR [") && !zh.contains("not in"), "{zh}");
    assert_eq!(t.cluster.promote(&p, 2).unwrap(), 1);
    let set = t.cluster.replica_set(&p).unwrap();
    assert_eq!((set.leader_id(), set.leader_epoch()), (2, 1));
    // the new leader stamps its epoch on new batches
    t.append(&p, "b", AckMode::Leader).await.unwrap();
    let batches = t.cluster.leader_log(&p).unwrap().all_batches().unwrap();
    assert_eq!(
        batches.iter().map(|b| b.leader_epoch).collect::<Vec<_>>(),
        [0, 1]
    );
    // and the choice is durable
    drop(set);
    let t = t.reopen();
    let set = t.cluster.replica_set(&p).unwrap();
    assert_eq!((set.leader_id(), set.leader_epoch()), (2, 1));
}

#[tokio::test]
async fn promotion_fences_pending_acks_and_stale_epoch_appends() {
    let t = two_replicas(1);
    let p = tp("t", 0);
    let pending = t.append(&p, "in-flight", AckMode::All);
    t.cluster.stop_broker(1).unwrap();
    t.cluster.promote(&p, 2).unwrap();
    let err = pending.await.unwrap_err();
    assert!(
        matches!(
            err,
            MiniKafkaError::NotLeaderOrFenced { old: 0, new: 1, .. }
        ),
        "{err}"
    );
    let stale = t
        .cluster
        .try_append(
            &p,
            RecordBatch::of_values(["zombie"]),
            AckMode::Leader,
            Some(0),
        )
        .unwrap_err();
    assert!(
        matches!(
            stale,
            MiniKafkaError::FencedLeaderEpoch {
                request: 0,
                current: 1,
                ..
            }
        ),
        "{stale}"
    );
    let ok = t
        .cluster
        .try_append(
            &p,
            RecordBatch::of_values(["current"]),
            AckMode::Leader,
            Some(1),
        )
        .unwrap()
        .await
        .unwrap();
    assert_eq!(
        ok.offsets,
        Some((0, 0)),
        "the new leader never had the fenced batch"
    );
}

/// The book's leader-failure lab (E6), with the truncation checked on disk.
#[tokio::test]
async fn an_acks_1_write_is_lost_on_failover_and_the_old_leader_truncates() {
    let t = two_replicas(1);
    let p = tp("t", 0);
    let ack = t.append(&p, "lost", AckMode::Leader).await.unwrap();
    assert_eq!(ack.base_offset(), Some(0));
    assert_eq!(t.cluster.replica_set(&p).unwrap().high_watermark(), 0);
    t.cluster.stop_broker(1).unwrap();
    t.cluster.promote(&p, 2).unwrap();
    t.append(&p, "after-failover", AckMode::Leader)
        .await
        .unwrap();
    t.cluster.start_broker(1).unwrap();
    assert_eq!(
        t.cluster
            .replica_log(&p, 1)
            .unwrap()
            .log_end_offset()
            .unwrap(),
        1
    );
    let outcome = t.cluster.replicate_all_once().unwrap();
    assert!(outcome.truncated_bytes > 0, "the divergent tail was cut");
    let old_leader = t.cluster.replica_log(&p, 1).unwrap().all_batches().unwrap();
    let new_leader = t.cluster.leader_log(&p).unwrap().all_batches().unwrap();
    assert_eq!(old_leader, new_leader);
    assert_eq!(t.visible(&p), ["after-failover"]);
}

/// A stale follower's tail past the HW is not counted until it fetched under
/// the new epoch, so a divergent record can never raise the HW.
#[tokio::test]
async fn a_divergent_tail_never_counts_toward_the_hw() {
    // With the clock-driven evaluation broker 3 stays in the ISR through the
    // promotion, with its divergent tail; the book's rules leave the new
    // leader alone in it (`promotion_leaves_the_new_leader_alone_in_the_isr`).
    let t = TestCluster::with_config(&[1, 2, 3], |c| {
        let mut c = c;
        c.rules.isr_by_clock = true;
        c
    });
    t.cluster.create_topic("t", 1, 3).unwrap();
    let p = tp("t", 0);
    t.append(&p, "committed", AckMode::Leader).await.unwrap();
    t.cluster.replicate_all_once().unwrap();
    // Broker 3 gets two uncommitted records from leader 1; broker 2 does not.
    t.append(&p, "u1", AckMode::Leader).await.unwrap();
    t.append(&p, "u2", AckMode::Leader).await.unwrap();
    t.cluster
        .replica_set(&p)
        .unwrap()
        .replicate_follower(3)
        .unwrap();
    t.cluster.stop_broker(1).unwrap();
    t.cluster.promote(&p, 2).unwrap();
    // The new leader writes two different records at offsets 1 and 2.
    t.append(&p, "n1", AckMode::Leader).await.unwrap();
    t.append(&p, "n2", AckMode::Leader).await.unwrap();
    let set = t.cluster.replica_set(&p).unwrap();
    assert_eq!(
        set.high_watermark(),
        1,
        "broker 3's old-epoch LEO 3 must not count"
    );
    assert_eq!(
        set.isr(),
        [2, 3],
        "the failed old leader left the ISR at promotion"
    );
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(set.high_watermark(), 3);
    assert_eq!(t.visible(&p), ["committed", "n1", "n2"]);
    let follower = t.cluster.replica_log(&p, 3).unwrap().all_batches().unwrap();
    assert_eq!(
        follower,
        t.cluster.leader_log(&p).unwrap().all_batches().unwrap()
    );
}

/// The book's `promote`: the new leader alone in the ISR, so acks=all with
/// min.insync.replicas 2 is refused until a fetch round lets a follower
/// back (issue 16).
#[tokio::test]
async fn promotion_leaves_the_new_leader_alone_in_the_isr() {
    let t = two_replicas(2);
    let p = tp("t", 0);
    let set = t.cluster.replica_set(&p).unwrap();
    t.cluster.promote(&p, 2).unwrap();
    assert_eq!(set.isr(), [2]);
    let err = t.append(&p, "x", AckMode::All).await.unwrap_err();
    assert!(
        matches!(
            err,
            MiniKafkaError::NotEnoughReplicas { isr: 1, min: 2, .. }
        ),
        "{err}"
    );
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(set.isr(), [1, 2]);
}

#[tokio::test]
async fn the_hw_survives_a_restart() {
    let t = two_replicas(1);
    let p = tp("t", 0);
    t.append(&p, "a", AckMode::Leader).await.unwrap();
    t.cluster.replicate_all_once().unwrap();
    t.cluster.stop_broker(2).unwrap();
    t.clock.advance(10_001);
    // The next fetch round finds broker 2 silent (the book's rules judge
    // the ISR at fetch): it leaves, and "b" is committed by the leader.
    t.cluster.replicate_all_once().unwrap();
    t.append(&p, "b", AckMode::Leader).await.unwrap();
    assert_eq!(t.cluster.replica_set(&p).unwrap().high_watermark(), 2);
    let t = t.reopen();
    assert_eq!(t.cluster.replica_set(&p).unwrap().high_watermark(), 2);
    assert_eq!(
        t.visible(&p),
        ["a", "b"],
        "a crash does not hide what consumers could read"
    );
}

/// Regression: an old leader rejoining with a tail written under an older
/// epoch truncates to where its log diverges from the new leader's, even when
/// the HW has moved past its LEO.
#[tokio::test]
async fn a_rejoining_leader_truncates_to_the_divergence_point_not_the_hw() {
    let t = TestCluster::new(&[1, 2, 3], 1);
    t.cluster.create_topic("t", 1, 3).unwrap();
    let p = tp("t", 0);
    t.cluster
        .append_batch(&p, RecordBatch::of_values(["a", "b"]), AckMode::Leader)
        .await
        .unwrap();
    t.cluster.replicate_all_once().unwrap();
    t.cluster
        .append_batch(
            &p,
            RecordBatch::of_values(["lost1", "lost2"]),
            AckMode::Leader,
        )
        .await
        .unwrap();
    t.cluster.stop_broker(1).unwrap();
    t.cluster.promote(&p, 2).unwrap();
    for v in ["n0", "n1", "n2"] {
        t.cluster
            .append_batch(&p, RecordBatch::of_values([v]), AckMode::Leader)
            .await
            .unwrap();
    }
    t.cluster.replicate_all_once().unwrap();
    let set = t.cluster.replica_set(&p).unwrap();
    assert_eq!(
        set.isr(),
        [2, 3],
        "the stopped old leader left the ISR at promotion"
    );
    assert_eq!(set.high_watermark(), 5);
    t.cluster.start_broker(1).unwrap();
    t.cluster.replicate_all_once().unwrap();
    let old = t.cluster.replica_log(&p, 1).unwrap().all_batches().unwrap();
    assert_eq!(
        old,
        t.cluster.leader_log(&p).unwrap().all_batches().unwrap()
    );
    assert_eq!(set.isr(), [1, 2, 3]);
    assert_eq!(t.visible(&p), ["a", "b", "n0", "n1", "n2"]);
}

/// Regression: promotion removes a stopped old leader from the ISR at once,
/// so an acks=all append does not wait for it.
#[tokio::test]
async fn acks_all_after_failover_does_not_wait_for_the_dead_leader() {
    let t = TestCluster::new(&[1, 2, 3], 2);
    t.cluster.create_topic("t", 1, 3).unwrap();
    let p = tp("t", 0);
    t.cluster.stop_broker(1).unwrap();
    t.cluster.promote(&p, 2).unwrap();
    // The book's rules leave the new leader alone in the ISR until a fetch
    // round lets broker 3 back; the stopped old leader stays out.
    t.cluster.replicate_all_once().unwrap();
    let mut pending = t.append(&p, "v", AckMode::All);
    assert_eq!(
        t.cluster.replica_set(&p).unwrap().pending()[0].waiting_for,
        [3]
    );
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(pending.try_take().unwrap().unwrap().offsets, Some((0, 0)));
}

/// Regression: an idempotent retry under acks=all is answered only once the
/// original batch is replicated, with the original offsets.
#[tokio::test]
async fn an_acks_all_retry_waits_for_replication_of_the_original() {
    let t = two_replicas(1);
    let p = tp("t", 0);
    let mut producer = t.cluster.producer("p").unwrap().with_acks(AckMode::All);
    let mut first = producer.send(&p.topic, Some(0), None, "once").unwrap().1;
    let mut retry = producer.retry_last(&p).unwrap();
    assert!(first.try_take().is_none());
    assert!(
        retry.try_take().is_none(),
        "the original is not replicated yet"
    );
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(first.try_take().unwrap().unwrap().offsets, Some((0, 0)));
    let r = retry.try_take().unwrap().unwrap();
    assert_eq!((r.offsets, r.duplicate), (Some((0, 0)), true));
    assert_eq!(t.visible(&p), ["once"]);
}

/// A leader whose tail was rewritten on disk at the same offsets and epoch
/// holds a different batch there; followers detect it by CRC after the
/// restart and truncate before fetching. (A torn leader tail no longer leads
/// here: recovery elects the follower that holds more, see
/// `tests/torn_tails.rs`.)
#[tokio::test]
async fn followers_detect_a_rewritten_tail_by_crc_after_a_restart() {
    let t = two_replicas(1);
    let p = tp("t", 0);
    t.append(&p, "kept", AckMode::Leader).await.unwrap();
    t.append(&p, "replaced", AckMode::Leader).await.unwrap();
    t.cluster.replicate_all_once().unwrap();
    let segment = t
        .cluster
        .leader_log(&p)
        .unwrap()
        .segment_paths()
        .unwrap()
        .pop()
        .unwrap();
    let bytes = std::fs::read(&segment).unwrap();
    let (_, first_len) = minikafka::engine::core::codec::decode(&bytes).unwrap();
    let mut other = RecordBatch::of_values(["other"]);
    other.base_offset = 1;
    let mut rewritten = bytes[..first_len].to_vec();
    rewritten.extend(minikafka::engine::core::codec::encode(&other));
    std::fs::write(&segment, &rewritten).unwrap();
    let report = t.cluster.crash().unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(t.cluster.replica_set(&p).unwrap().leader_id(), 1);
    assert_eq!(t.cluster.replica_set(&p).unwrap().high_watermark(), 2);
    let fetched = t.cluster.replicate_all_once().unwrap();
    assert!(
        fetched.truncated_bytes > 0,
        "the follower cut its old batch"
    );
    let follower = t.cluster.replica_log(&p, 2).unwrap().all_batches().unwrap();
    assert_eq!(
        follower,
        t.cluster.leader_log(&p).unwrap().all_batches().unwrap()
    );
    assert_eq!(t.visible(&p), ["kept", "other"]);
}

/// The HW checkpoint is written by `flush` (the driver calls it after every
/// step), before a crash and on close, not on every append (issue 7, P3): a
/// crash right after an HW moved still recovers that HW.
#[tokio::test]
async fn the_hw_checkpoint_is_written_on_flush_on_crash_and_on_close() {
    let t = two_replicas(1);
    let p = tp("t", 0);
    let checkpoint = t.dir.path().join("replication-offset-checkpoint");
    let read = || std::fs::read_to_string(&checkpoint).unwrap_or_default();
    let before = read();
    t.cluster
        .append_batch(&p, RecordBatch::of_values(["a"]), AckMode::Leader)
        .await
        .unwrap();
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(t.cluster.replica_set(&p).unwrap().high_watermark(), 1);
    assert_eq!(read(), before, "an append only moves the HW in memory");
    t.cluster.flush().unwrap();
    assert_eq!(read(), "0\n1\nt 0 1\n");

    t.cluster
        .append_batch(&p, RecordBatch::of_values(["b"]), AckMode::Leader)
        .await
        .unwrap();
    t.cluster.replicate_all_once().unwrap();
    t.cluster.crash().unwrap();
    assert_eq!(read(), "0\n1\nt 0 2\n", "written before the crash");
    assert_eq!(t.cluster.replica_set(&p).unwrap().high_watermark(), 2);

    t.cluster
        .append_batch(&p, RecordBatch::of_values(["c"]), AckMode::Leader)
        .await
        .unwrap();
    t.cluster.replicate_all_once().unwrap();
    let t = t.reopen();
    assert_eq!(read(), "0\n1\nt 0 3\n", "written when the cluster closed");
    assert_eq!(t.visible(&p), ["a", "b", "c"]);
}

/// A follower copies the leader's frames as written and checks each one:
/// a frame changed on the leader's disk (one flipped byte) is refused with
/// the typed error (Kafka's CORRUPT_MESSAGE) naming the leader's segment,
/// and the follower appends nothing of that fetch, not even the good frames
/// before it. Once the byte is back, the follower copies the log and holds
/// the leader's segment byte for byte.
#[tokio::test]
async fn a_corrupted_leader_frame_is_refused_by_the_follower_and_nothing_is_appended() {
    let t = two_replicas(1);
    let p = tp("t", 0);
    for v in ["a", "b", "c"] {
        t.append(&p, v, AckMode::Leader).await.unwrap();
    }
    let leader_segment = t.cluster.leader_log(&p).unwrap().segment_paths().unwrap()[0].clone();
    let follower_segment = t
        .cluster
        .replica_log(&p, 2)
        .unwrap()
        .segment_paths()
        .unwrap()[0]
        .clone();
    let pristine = std::fs::read(&leader_segment).unwrap();
    let mut flipped = pristine.clone();
    *flipped.last_mut().unwrap() ^= 1; // the last record's value
    std::fs::write(&leader_segment, &flipped).unwrap();

    let err = t.cluster.replicate_all_once().unwrap_err();
    assert_eq!(err.code(), "Corrupt", "{err}");
    assert!(
        matches!(err, MiniKafkaError::Corrupt { ref path, .. } if *path == leader_segment),
        "{err}"
    );
    assert!(err.to_string().contains("crc mismatch"), "{err}");
    let follower = t.cluster.replica_log(&p, 2).unwrap();
    assert_eq!(follower.log_end_offset().unwrap(), 0);
    assert_eq!(
        std::fs::metadata(&follower_segment).unwrap().len(),
        0,
        "nothing appended"
    );
    assert_eq!(t.cluster.replica_set(&p).unwrap().high_watermark(), 0);

    std::fs::write(&leader_segment, &pristine).unwrap();
    t.cluster.replicate_all_once().unwrap();
    assert_eq!(follower.log_end_offset().unwrap(), 3);
    assert_eq!(std::fs::read(&follower_segment).unwrap(), pristine);
    assert_eq!(t.visible(&p), ["a", "b", "c"]);
}
