//! The generated cases: a cluster setup and a list of abstract actions,
//! made concrete (a recording step) against the model's state when applied.

use minikafka::session::action::{GarbageSpec, OffsetSpec, TearTargetSpec};
use minikafka::session::{Action, Driver};
use proptest::prelude::*;

use crate::model::{Model, Setup, Tp};

/// The transaction ids a case uses; two, so instances interleave and ids
/// are reused.
const TXNS: [&str; 2] = ["tx-a", "tx-b"];
/// The consumer group of every `send_offsets`.
const GROUP: &str = "workers";

/// An action before it meets the cluster: indices are taken modulo what
/// exists, and a few choices (which follower to tear, how many bytes) are
/// made against the model's state when the step is applied.
#[derive(Debug, Clone)]
pub enum Op {
    Produce {
        topic: u8,
        partition: Option<u8>,
        acks: u8,
    },
    Begin(u8),
    Send {
        txn: u8,
        topic: u8,
        partition: Option<u8>,
    },
    SendOffsets {
        txn: u8,
        topic: u8,
        partition: u8,
    },
    End {
        txn: u8,
        commit: bool,
        cut: Option<u8>,
    },
    Replicate {
        broker: Option<u8>,
        partition: Option<(u8, u8)>,
    },
    Clock(u64),
    Crash,
    /// Cut bytes of the journal's last frame, or append garbage (None).
    TearJournal(Option<u16>),
    /// Tear the leader's log: cut bytes of its last frame, or garbage.
    TearLeader {
        topic: u8,
        partition: u8,
        cut: Option<u8>,
    },
    /// Tear a follower's log: cut bytes of its last frame, or garbage.
    TearFollower {
        topic: u8,
        partition: u8,
        follower: u8,
        cut: Option<u8>,
    },
    Stop(u8),
    Start(u8),
    Promote {
        topic: u8,
        partition: u8,
        broker: u8,
    },
}

/// One abstract action; the weights favour produces, sends, replication
/// and transaction ends, the actions most states are made of.
pub fn op() -> impl Strategy<Value = Op> {
    let txn = 0u8..2;
    prop_oneof![
        6 => (any::<u8>(), prop::option::weighted(0.5, any::<u8>()), 0u8..3)
            .prop_map(|(topic, partition, acks)| Op::Produce { topic, partition, acks }),
        3 => txn.clone().prop_map(Op::Begin),
        6 => (txn.clone(), any::<u8>(), prop::option::weighted(0.5, any::<u8>()))
            .prop_map(|(txn, topic, partition)| Op::Send { txn, topic, partition }),
        1 => (txn.clone(), any::<u8>(), any::<u8>())
            .prop_map(|(txn, topic, partition)| Op::SendOffsets { txn, topic, partition }),
        4 => (txn, prop::bool::weighted(0.7), prop::option::weighted(0.25, 0u8..5))
            .prop_map(|(txn, commit, cut)| Op::End { txn, commit, cut }),
        6 => (prop::option::weighted(0.3, any::<u8>()), prop::option::weighted(0.3, any::<(u8, u8)>()))
            .prop_map(|(broker, partition)| Op::Replicate { broker, partition }),
        2 => prop_oneof![Just(300u64), Just(800), Just(1500), Just(4500)].prop_map(Op::Clock),
        1 => Just(Op::Crash),
        1 => prop::option::weighted(0.7, any::<u16>()).prop_map(Op::TearJournal),
        1 => (any::<u8>(), any::<u8>(), any::<u8>(), prop::option::weighted(0.7, any::<u8>()))
            .prop_map(|(topic, partition, follower, cut)| Op::TearFollower { topic, partition, follower, cut }),
        1 => (any::<u8>(), any::<u8>(), prop::option::weighted(0.7, any::<u8>()))
            .prop_map(|(topic, partition, cut)| Op::TearLeader { topic, partition, cut }),
        1 => any::<u8>().prop_map(Op::Stop),
        1 => any::<u8>().prop_map(Op::Start),
        1 => (any::<u8>(), any::<u8>(), any::<u8>())
            .prop_map(|(topic, partition, broker)| Op::Promote { topic, partition, broker }),
    ]
}

/// 2-3 brokers, 1-2 topics of 1-3 partitions, min ISR 1-3, followers out
/// of the ISR after 1 s without a fetch or (sometimes) 3 offsets behind,
/// segments of 1 MiB or (sometimes) 256 bytes.
pub fn setup(kafka: bool) -> impl Strategy<Value = Setup> {
    (
        2u32..=3,
        prop::collection::vec((1u32..=3, 1u32..=3), 1..=2),
        prop_oneof![5 => Just(1usize), 3 => Just(2usize), 1 => Just(3usize)],
        prop_oneof![3 => Just(10_000u64), 1 => Just(3u64)],
        prop_oneof![3 => Just(1u64 << 20), 1 => Just(256u64)],
    )
        .prop_map(
            move |(n, topics, min_isr, lag_max_offsets, segment_max_bytes)| Setup {
                kafka,
                brokers: (1..=n).collect(),
                topics: topics
                    .iter()
                    .enumerate()
                    .map(|(i, &(p, rf))| (format!("t{i}"), p, rf.min(n)))
                    .collect(),
                min_isr,
                lag_time_ms: 1000,
                lag_max_offsets,
                segment_max_bytes,
                timeout_ms: 4000,
            },
        )
}

/// A setup and 5-40 actions under one rule set.
pub fn case(kafka: bool) -> impl Strategy<Value = (Setup, Vec<Op>)> {
    (setup(kafka), prop::collection::vec(op(), 5..=40))
}

/// The concrete action for `op` at step `step`, or None when it does not
/// apply: a transaction action while another transaction id has work
/// pending (the model then need not predict which ready work runs first),
/// or a tear with nothing to tear.
pub fn concretize(op: &Op, m: &Model, driver: &Driver, step: usize) -> Option<Action> {
    let s = &m.setup;
    let topic = |t: u8| &s.topics[t as usize % s.topics.len()];
    let tp = |t: u8, p: u8| {
        let (name, count, _) = topic(t);
        (name.clone(), u32::from(p) % count)
    };
    let broker = |b: u8| s.brokers[b as usize % s.brokers.len()];
    let value = format!("v{step}");
    let txn_free = |txn: u8| {
        let id = TXNS[txn as usize];
        m.busy_txns().iter().all(|b| b == id)
    };
    // A transaction action on an id never begun becomes its begin, most of
    // the time: otherwise most would only be refused.
    let unknown = |txn: u8| m.coord.latest(TXNS[txn as usize]).is_none();
    let op = match *op {
        Op::Send { txn, topic, .. } | Op::SendOffsets { txn, topic, .. }
            if unknown(txn) && topic % 4 != 0 =>
        {
            Op::Begin(txn)
        }
        Op::End { txn, .. } if unknown(txn) => Op::Begin(txn),
        ref other => other.clone(),
    };
    Some(match op {
        Op::Produce {
            topic: t,
            partition,
            acks,
        } => Action::Produce {
            topic: topic(t).0.clone(),
            partition: partition.map(|p| tp(t, p).1),
            key: None,
            value: Some(value),
            records: vec![],
            acks: Some(
                ["0", "1", "all"][acks as usize]
                    .parse()
                    .expect("a spelling"),
            ),
            producer: None,
            wire: None,
        },
        Op::Begin(txn) if txn_free(txn) => Action::Begin {
            txn: TXNS[txn as usize].into(),
            init: false,
        },
        Op::Send {
            txn,
            topic: t,
            partition,
        } if txn_free(txn) => Action::Send {
            txn: TXNS[txn as usize].into(),
            topic: topic(t).0.clone(),
            partition: partition.map(|p| tp(t, p).1),
            key: None,
            value: Some(value),
            records: vec![],
            wire: None,
        },
        Op::SendOffsets {
            txn,
            topic: t,
            partition,
        } if txn_free(txn) => {
            let (topic, partition) = tp(t, partition);
            Action::SendOffsets {
                txn: TXNS[txn as usize].into(),
                group: GROUP.into(),
                // The step number: a committed value names its send_offsets.
                offsets: vec![OffsetSpec {
                    topic,
                    partition,
                    offset: step as i64,
                }],
            }
        }
        Op::End { txn, commit, cut } if txn_free(txn) => {
            let txn = TXNS[txn as usize].to_string();
            let crash_after = cut.map(|c| {
                ["prepare", "marker:1", "marker:2", "markers", "offsets"][c as usize]
                    .parse()
                    .expect("a spelling")
            });
            if commit {
                Action::Commit { txn, crash_after }
            } else {
                Action::Abort { txn, crash_after }
            }
        }
        Op::Begin(_) | Op::Send { .. } | Op::SendOffsets { .. } | Op::End { .. } => return None,
        Op::Replicate {
            broker: b,
            partition,
        } => {
            let tp = partition.map(|(t, p)| tp(t, p));
            Action::Replicate {
                broker: b.map(broker),
                topic: tp.as_ref().map(|tp| tp.0.clone()),
                partition: tp.map(|tp| tp.1),
            }
        }
        Op::Clock(ms) => Action::AdvanceClock { ms },
        Op::Crash => Action::Crash {},
        Op::TearJournal(cut) => match cut {
            // A torn last write: at most the last frame's bytes.
            Some(c) => Action::Tear {
                target: TearTargetSpec::Journal,
                cut_bytes: Some(1 + u64::from(c) % m.last_frame_len()?),
                append_garbage: None,
            },
            None => Action::Tear {
                target: TearTargetSpec::Journal,
                cut_bytes: None,
                append_garbage: Some(GarbageSpec::Default(true)),
            },
        },
        Op::TearLeader {
            topic: t,
            partition,
            cut,
        } => {
            let tp = tp(t, partition);
            let leader = m.parts[&tp].leader;
            tear_log(driver, tp, leader, cut)?
        }
        Op::TearFollower {
            topic: t,
            partition,
            follower,
            cut,
        } => {
            let tp = tp(t, partition);
            let followers = m.parts[&tp].followers();
            let b = *followers.get(follower as usize % followers.len().max(1))?;
            tear_log(driver, tp, b, cut)?
        }
        Op::Stop(b) => Action::StopBroker { broker: broker(b) },
        Op::Start(b) => Action::StartBroker { broker: broker(b) },
        Op::Promote {
            topic: t,
            partition,
            broker: b,
        } => {
            let (topic, partition) = tp(t, partition);
            Action::Promote {
                topic,
                partition,
                broker: broker(b),
            }
        }
    })
}

/// A tear of `broker`'s replica of `tp`: `cut` bytes (1-40, less than any
/// frame, so exactly its last batch is torn) or, when None, garbage.
fn tear_log(driver: &Driver, tp: Tp, broker: u32, cut: Option<u8>) -> Option<Action> {
    // A tear cuts the replica's active segment, which a torn tail cut
    // before can have left empty (small segments): then nothing would be
    // cut, so no cut is tried.
    if cut.is_some() && active_segment_empty(driver, &tp, broker) {
        return None;
    }
    Some(Action::Tear {
        target: TearTargetSpec::Log {
            topic: tp.0,
            partition: tp.1,
            broker,
        },
        cut_bytes: cut.map(|c| 1 + u64::from(c) % 40),
        append_garbage: cut.is_none().then_some(GarbageSpec::Default(true)),
    })
}

/// Whether `broker`'s active segment of `tp` is empty (read from its files).
fn active_segment_empty(driver: &Driver, tp: &Tp, broker: u32) -> bool {
    let tp = minikafka::engine::TopicPartition::new(tp.0.clone(), tp.1);
    let segments = driver
        .cluster()
        .replica_log(&tp, broker)
        .and_then(|l| l.segment_paths())
        .expect("a replica");
    segments
        .last()
        .is_none_or(|p| std::fs::metadata(p).map_or(true, |m| m.len() == 0))
}
