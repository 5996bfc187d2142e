//! Randomized model check of E4-E6 (and the engine decisions on failover):
//! random sequences of appends, follower fetches, broker stops/starts, clock
//! moves, promotions and crashes on a 3-broker cluster, with the replication
//! invariants checked after every step. Failing sequences are shrunk by
//! proptest; `PROPTEST_CASES=5000` runs a longer search.

use std::collections::BTreeMap;

use minikafka::engine::config::RuleSwitches;
use minikafka::engine::replication::model::AppendFuture;
use minikafka::engine::{
    AckMode, BrokerCluster, IsolationLevel, ManualClock, MiniKafkaConfig, MiniKafkaError,
    RecordBatch, TopicPartition,
};
use proptest::prelude::*;

const BROKERS: [u32; 3] = [1, 2, 3];

#[derive(Debug, Clone, Copy)]
struct Setup {
    rf: u32,
    min_isr: usize,
    /// Extra knobs (the defaults in `setup()`): `replica_lag_max_offsets`,
    /// `replica_fetch_max_bytes` and the acks=all completion rule.
    lag_max_offsets: u64,
    fetch_max_bytes: u64,
    hw_completion: bool,
}

#[derive(Debug, Clone, Copy)]
enum Op {
    /// acks 0, 1 or all; 1-3 records.
    Append(AckMode, usize),
    ReplicateAll,
    /// One fetch by one broker (an error if it is not a follower of the partition).
    ReplicateOne(u32),
    Stop(u32),
    Start(u32),
    /// Advance the ManualClock, then tick.
    Tick(u64),
    Promote(u32),
    Crash,
}

fn op() -> impl Strategy<Value = Op> {
    let acks = prop_oneof![
        Just(AckMode::None),
        Just(AckMode::Leader),
        Just(AckMode::All)
    ];
    let broker = 1u32..=3;
    prop_oneof![
        6 => (acks, 1usize..=3).prop_map(|(a, n)| Op::Append(a, n)),
        3 => Just(Op::ReplicateAll),
        3 => broker.clone().prop_map(Op::ReplicateOne),
        2 => broker.clone().prop_map(Op::Stop),
        2 => broker.clone().prop_map(Op::Start),
        2 => (0u64..15_000).prop_map(Op::Tick),
        2 => broker.prop_map(Op::Promote),
        1 => Just(Op::Crash),
    ]
}

fn setup() -> impl Strategy<Value = Setup> {
    (prop_oneof![Just(2u32), Just(3u32)], 1usize..=2).prop_map(|(rf, min_isr)| Setup {
        rf,
        min_isr,
        lag_max_offsets: 10_000,
        fetch_max_bytes: 1024 * 1024,
        hw_completion: false,
    })
}

/// `setup()` plus a small offset lag limit, small fetches (one or two
/// batches) and Kafka's HW completion rule for acks=all.
fn setup_wide() -> impl Strategy<Value = Setup> {
    (
        setup(),
        prop_oneof![Just(2u64), Just(4), Just(10_000)],
        prop_oneof![Just(1u64), Just(300), Just(1024 * 1024)],
        any::<bool>(),
    )
        .prop_map(|(s, lag, fetch, hw)| Setup {
            lag_max_offsets: lag,
            fetch_max_bytes: fetch,
            hw_completion: hw,
            ..s
        })
}

/// An acks=all append still waiting, with the ISR captured when it was made.
struct Pending {
    step: usize,
    future: AppendFuture,
    captured: Vec<u32>,
    values: Vec<Vec<u8>>,
}

struct Harness {
    _dir: tempfile::TempDir,
    clock: ManualClock,
    cluster: BrokerCluster,
    tp: TopicPartition,
    replicas: Vec<u32>,
    /// Every (offset -> value) a read_uncommitted fetch ever returned.
    seen: BTreeMap<i64, Vec<u8>>,
    /// Every (offset -> value) of an acks=all append that completed Ok.
    acked: BTreeMap<i64, Vec<u8>>,
    pending: Vec<Pending>,
    last_hw: i64,
    hw_completion: bool,
    stats: Stats,
}

/// What a sequence exercised (for judging the generator's coverage).
#[derive(Debug, Default, Clone, Copy)]
struct Stats {
    promotions: u32,
    acks_all_ok: u32,
    acks_all_failed: u32,
    truncations: u32,
    crashes: u32,
    max_hw: i64,
}

impl std::ops::AddAssign for Stats {
    fn add_assign(&mut self, o: Stats) {
        self.promotions += o.promotions;
        self.acks_all_ok += o.acks_all_ok;
        self.acks_all_failed += o.acks_all_failed;
        self.truncations += o.truncations;
        self.crashes += o.crashes;
        self.max_hw = self.max_hw.max(o.max_hw);
    }
}

type Check = Result<(), String>;

fn fail<T>(step: usize, msg: impl Into<String>) -> Result<T, String> {
    Err(format!("step {step}: {}", msg.into()))
}

impl Harness {
    fn new(s: Setup) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let clock = ManualClock::new();
        let config = MiniKafkaConfig::new(dir.path())
            .with_brokers(BROKERS)
            .with_min_insync_replicas(s.min_isr);
        let config = MiniKafkaConfig {
            replica_lag_max_offsets: s.lag_max_offsets,
            replica_fetch_max_bytes: s.fetch_max_bytes,
            rules: RuleSwitches {
                acks_all_by_high_watermark: s.hw_completion,
                ..RuleSwitches::default()
            },
            ..config
        };
        let cluster = BrokerCluster::open(config, clock.clone()).unwrap();
        cluster.create_topic("t", 1, s.rf).unwrap();
        let tp = TopicPartition::new("t", 0);
        let replicas = cluster.replica_set(&tp).unwrap().assignment_brokers();
        Self {
            _dir: dir,
            clock,
            cluster,
            tp,
            replicas,
            seen: BTreeMap::new(),
            acked: BTreeMap::new(),
            pending: Vec::new(),
            last_hw: 0,
            hw_completion: s.hw_completion,
            stats: Stats::default(),
        }
    }

    fn log_values(&self, broker: u32, from: i64, n: usize) -> Vec<(i64, Vec<u8>)> {
        self.cluster
            .replica_log(&self.tp, broker)
            .and_then(|l| l.fetch(from, n))
            .map(|rs| {
                rs.into_iter()
                    .map(|r| (r.offset, r.value.unwrap_or_default().to_vec()))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn apply(&mut self, step: usize, op: Op) -> Check {
        let set = self.cluster.replica_set(&self.tp).unwrap();
        match op {
            Op::Append(acks, n) => {
                let values: Vec<Vec<u8>> = (0..n)
                    .map(|i| format!("s{step}r{i}").into_bytes())
                    .collect();
                let captured = set.isr();
                let leo_before = self
                    .cluster
                    .leader_log(&self.tp)
                    .unwrap()
                    .log_end_offset()
                    .unwrap();
                let mut future = self.cluster.append_batch(
                    &self.tp,
                    RecordBatch::of_values(values.clone()),
                    acks,
                );
                if acks == AckMode::All {
                    match future.try_take() {
                        None => self.pending.push(Pending {
                            step,
                            future,
                            captured,
                            values,
                        }),
                        Some(Err(MiniKafkaError::NotEnoughReplicas { .. })) => {
                            let leader = self.cluster.leader_log(&self.tp).unwrap();
                            if leader.log_end_offset().unwrap() != leo_before {
                                return fail(step, "NotEnoughReplicas, but the batch was appended");
                            }
                        }
                        Some(Err(_)) => {}
                        // Completed at once: checked like a later completion.
                        Some(Ok(r)) => self.pending.push(Pending {
                            step,
                            future: AppendFuture::ready(Ok(r)),
                            captured,
                            values,
                        }),
                    }
                }
            }
            Op::ReplicateAll => {
                if let Ok(o) = self.cluster.replicate_all_once() {
                    self.stats.truncations += u32::from(o.truncated_bytes > 0);
                }
            }
            Op::ReplicateOne(b) => {
                if let Ok(o) = set.replicate_follower(b) {
                    self.stats.truncations += u32::from(o.truncated_bytes > 0);
                }
            }
            Op::Stop(b) => {
                let _ = self.cluster.stop_broker(b);
            }
            Op::Start(b) => {
                let _ = self.cluster.start_broker(b);
            }
            Op::Tick(ms) => {
                self.clock.advance(ms);
                let _ = self.cluster.tick();
            }
            Op::Promote(b) => {
                self.stats.promotions += u32::from(self.cluster.promote(&self.tp, b).is_ok());
            }
            Op::Crash => {
                self.stats.crashes += 1;
                self.cluster
                    .crash()
                    .map_err(|e| format!("step {step}: crash failed: {e}"))?;
            }
        }
        Ok(())
    }

    /// Invariants 2-4 and 6 after a step.
    fn check(&mut self, step: usize, crashed: bool) -> Check {
        let set = self.cluster.replica_set(&self.tp).unwrap();
        let hw = set.high_watermark();
        let statuses = set.replicas();
        let isr = set.isr();
        // 2. HW monotonic (except across crash), <= leader LEO, <= current ISR LEOs.
        if !crashed && hw < self.last_hw {
            return fail(step, format!("HW went back from {} to {hw}", self.last_hw));
        }
        self.last_hw = hw;
        self.stats.max_hw = self.stats.max_hw.max(hw);
        for r in &statuses {
            if r.is_leader && r.log_end_offset < hw {
                return fail(
                    step,
                    format!("HW {hw} above leader {} LEO {}", r.broker, r.log_end_offset),
                );
            }
            if r.in_sync && r.epoch_current && r.log_end_offset < hw {
                return fail(
                    step,
                    format!(
                        "HW {hw} above ISR member {} LEO {}",
                        r.broker, r.log_end_offset
                    ),
                );
            }
        }
        // 6 and 4: completed acks=all appends.
        let mut still = Vec::new();
        for mut p in std::mem::take(&mut self.pending) {
            match p.future.try_take() {
                None => still.push(p),
                Some(Err(_)) => self.stats.acks_all_failed += 1,
                Some(Ok(r)) => {
                    self.stats.acks_all_ok += 1;
                    let (base, last) = r.offsets.expect("acks=all returns offsets");
                    let want: Vec<(i64, Vec<u8>)> =
                        (base..=last).zip(p.values.iter().cloned()).collect();
                    // 6. The book's rule: every member of the captured ISR has it.
                    let captured = if self.hw_completion {
                        &[][..]
                    } else {
                        &p.captured[..]
                    };
                    for &b in captured {
                        if self.log_values(b, base, want.len()) != want {
                            return fail(
                                step,
                                format!(
                                    "acks=all of step {} completed Ok at {base}..={last} but captured ISR member {b} lacks it",
                                    p.step
                                ),
                            );
                        }
                    }
                    for &b in &isr {
                        if self.log_values(b, base, want.len()) != want {
                            return fail(
                                step,
                                format!(
                                    "acks=all of step {} completed Ok at {base}..={last} but ISR member {b} lacks it",
                                    p.step
                                ),
                            );
                        }
                    }
                    self.acked.extend(want);
                }
            }
        }
        self.pending = still;
        // 4. Acked records stay in the leader's log at their offsets.
        let leader = set.leader_id();
        let leader_log: BTreeMap<i64, Vec<u8>> = self
            .log_values(leader, 0, usize::MAX / 2)
            .into_iter()
            .collect();
        for (o, v) in &self.acked {
            if leader_log.get(o) != Some(v) {
                return fail(
                    step,
                    format!(
                        "acked offset {o} ({}) lost: leader {leader} has {:?}",
                        String::from_utf8_lossy(v),
                        leader_log
                            .get(o)
                            .map(|v| String::from_utf8_lossy(v).into_owned())
                    ),
                );
            }
        }
        // 3. Records once visible stay visible at the same offset.
        match self
            .cluster
            .fetch(&self.tp, 0, usize::MAX / 2, IsolationLevel::ReadUncommitted)
        {
            Ok(records) => {
                let visible: BTreeMap<i64, Vec<u8>> = records
                    .into_iter()
                    .map(|r| (r.offset, r.value.unwrap_or_default().to_vec()))
                    .collect();
                for (o, v) in &self.seen {
                    if visible.get(o) != Some(v) {
                        return fail(
                            step,
                            format!(
                                "offset {o} was read as {} but now reads {:?} (HW {hw}, leader {leader})",
                                String::from_utf8_lossy(v),
                                visible
                                    .get(o)
                                    .map(|v| String::from_utf8_lossy(v).into_owned())
                            ),
                        );
                    }
                }
                self.seen.extend(visible);
            }
            Err(_) => {
                for (o, v) in &self.seen {
                    if leader_log.get(o) != Some(v) {
                        return fail(
                            step,
                            format!("read offset {o} is gone from stopped leader {leader}'s log"),
                        );
                    }
                }
            }
        }
        Ok(())
    }

    /// 5. With every broker started, replication converges to identical logs.
    fn converge(&mut self, step: usize) -> Check {
        for b in BROKERS {
            self.cluster.start_broker(b).map_err(|e| e.to_string())?;
        }
        self.check(step, false)?;
        for round in 0..100 {
            let out = self
                .cluster
                .replicate_all_once()
                .map_err(|e| format!("replicate: {e}"))?;
            self.check(step + 1 + round, false)?;
            if out.batches == 0 && out.truncated_bytes == 0 {
                break;
            }
        }
        let logs: Vec<_> = self
            .replicas
            .iter()
            .map(|&b| {
                (
                    b,
                    self.cluster
                        .replica_log(&self.tp, b)
                        .unwrap()
                        .all_batches()
                        .unwrap(),
                )
            })
            .collect();
        for (b, batches) in &logs[1..] {
            if batches != &logs[0].1 {
                return fail(
                    step,
                    format!(
                        "after convergence broker {b} holds {} batches, broker {} holds {}",
                        batches.len(),
                        logs[0].0,
                        logs[0].1.len()
                    ),
                );
            }
        }
        let set = self.cluster.replica_set(&self.tp).unwrap();
        let leo = self
            .cluster
            .leader_log(&self.tp)
            .unwrap()
            .log_end_offset()
            .unwrap();
        if set.high_watermark() != leo || set.isr() != self.replicas {
            return fail(
                step,
                format!(
                    "after convergence HW {} LEO {leo} ISR {:?}",
                    set.high_watermark(),
                    set.isr()
                ),
            );
        }
        Ok(())
    }
}

/// The partition's replicas, sorted by broker id.
trait AssignmentBrokers {
    fn assignment_brokers(&self) -> Vec<u32>;
}

impl AssignmentBrokers for minikafka::engine::core::cluster::ReplicaSetHandle {
    fn assignment_brokers(&self) -> Vec<u32> {
        let mut b: Vec<u32> = self.replicas().iter().map(|r| r.broker).collect();
        b.sort_unstable();
        b
    }
}

/// Runs one sequence, checking every invariant after every step.
fn run(s: Setup, ops: &[Op]) -> Result<Stats, String> {
    let mut h = Harness::new(s);
    for (step, &op) in ops.iter().enumerate() {
        h.apply(step, op)?;
        h.check(step, matches!(op, Op::Crash))?;
    }
    h.converge(ops.len())?;
    Ok(h.stats)
}

proptest! {
    #![proptest_config(ProptestConfig {
        max_shrink_iters: 20_000,
        ..ProptestConfig::default()
    })]

    #[test]
    fn replication_invariants_hold_under_random_faults(
        s in setup(),
        ops in prop::collection::vec(op(), 0..=60),
    ) {
        if let Err(msg) = run(s, &ops) {
            prop_assert!(false, "{msg}\nsetup {s:?}\nops {ops:#?}");
        }
    }

    #[test]
    fn replication_invariants_hold_with_small_lag_small_fetches_and_hw_completion(
        s in setup_wide(),
        ops in prop::collection::vec(op(), 0..=60),
    ) {
        if let Err(msg) = run(s, &ops) {
            prop_assert!(false, "{msg}\nsetup {s:?}\nops {ops:#?}");
        }
    }
}

fn book_setup(rf: u32, fetch_max_bytes: u64) -> Setup {
    Setup {
        rf,
        min_isr: 1,
        lag_max_offsets: 10_000,
        fetch_max_bytes,
        hw_completion: false,
    }
}

/// Minimal sequences the search found (each broke an invariant once).
#[test]
fn regressions_found_by_the_search() {
    use Op::*;
    let cases: [(&str, Setup, Vec<Op>); 5] = [
        (
            "a crash puts the stopped old leader back in the ISR with a divergent log below the HW",
            book_setup(2, 1 << 20),
            vec![
                Append(AckMode::None, 1),
                Append(AckMode::None, 2),
                Stop(1),
                Promote(2),
                Append(AckMode::None, 1),
                Append(AckMode::None, 1),
                Crash,
                Promote(1),
            ],
        ),
        (
            "start_broker puts the stopped old leader back in the ISR without a fetch",
            book_setup(3, 1 << 20),
            vec![
                Append(AckMode::Leader, 1),
                ReplicateAll,
                Append(AckMode::Leader, 1),
                Stop(1),
                Promote(2),
                Append(AckMode::Leader, 1),
                ReplicateAll,
                Start(1),
                Promote(1),
            ],
        ),
        (
            "a promotion resets the fetch time of a stale follower that was out of the ISR",
            book_setup(3, 1 << 20),
            vec![
                Append(AckMode::Leader, 1),
                ReplicateAll,
                Append(AckMode::Leader, 3),
                ReplicateOne(3),
                Promote(2),
                Tick(10_001),
                ReplicateOne(1),
                Append(AckMode::Leader, 1),
                Append(AckMode::Leader, 1),
                ReplicateOne(1),
                Promote(1),
                Promote(3),
            ],
        ),
        (
            "acks=all completes while a replica that joined the ISR after capture lacks the batch",
            book_setup(3, 1 << 20),
            vec![
                ReplicateAll,
                Stop(3),
                Promote(2),
                Append(AckMode::All, 1),
                Start(3),
                ReplicateOne(1),
            ],
        ),
        (
            "the same with a joiner that fetched only up to the HW (one batch per fetch)",
            book_setup(3, 1),
            vec![
                Stop(1),
                Promote(2),
                Append(AckMode::None, 1),
                Append(AckMode::All, 1),
                ReplicateOne(3),
                Start(1),
                ReplicateAll,
            ],
        ),
    ];
    let failures: Vec<String> = cases
        .into_iter()
        .filter_map(|(name, s, ops)| run(s, &ops).err().map(|e| format!("{name}: {e}")))
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Coverage of the generator: `cargo test --test replication_model -- --ignored --nocapture`.
#[test]
#[ignore]
fn generator_coverage() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = (setup_wide(), prop::collection::vec(op(), 0..=60));
    let (mut total, mut failed, n) = (Stats::default(), 0, 2000);
    let mut with = [0u32; 4];
    for _ in 0..n {
        let (s, ops) = strategy.new_tree(&mut runner).unwrap().current();
        match run(s, &ops) {
            Ok(st) => {
                total += st;
                with[0] += u32::from(st.promotions > 0);
                with[1] += u32::from(st.acks_all_ok > 0);
                with[2] += u32::from(st.truncations > 0);
                with[3] += u32::from(st.promotions > 0 && st.crashes > 0 && st.max_hw > 2);
            }
            Err(_) => failed += 1,
        }
    }
    println!("{n} sequences, {failed} failed; totals {total:?}");
    println!(
        "sequences with a promotion {}, an acks=all Ok {}, a truncation {}, promotion+crash+HW>2 {}",
        with[0], with[1], with[2], with[3]
    );
}
