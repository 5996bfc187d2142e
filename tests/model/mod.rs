//! A small reference model of an mk-tui session (SPEC §3-§5), for the
//! model-based tests in `tests/model_based.rs`. It is written from the spec
//! and the decisions in `docs/`, shares no code with the engine, and
//! predicts, after every action, what the headless state must show: each
//! partition's leader, ISR, HW, LSO and batches, what a read_uncommitted and
//! a read_committed consumer get, transaction states, committed offsets,
//! the journal's size, pending operations, errors and the last recovery.
//!
//! The driver's asynchronous work (acks=all waits, a commit's markers) is
//! modelled as operations that wait for a settled ack and then run their
//! next step. The harness never lets two transaction ids have operations
//! pending at once, so the order in which ready work runs cannot matter.

pub mod replication;
pub mod txn;

use std::collections::BTreeMap;

use minikafka::session::Action;
use minikafka::session::action::{GarbageSpec, TearTargetSpec};

use replication::{Broker, Mailbox, Part, Payload, Settings};
use txn::{Coordinator, TxData, TxState};

/// A topic-partition.
pub type Tp = (String, u32);

pub fn tp_name(tp: &Tp) -> String {
    format!("{}-{}", tp.0, tp.1)
}

/// Why an action failed, as the engine's one-line messages say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Failure {
    UnknownTopicOrPartition,
    UnknownBroker,
    LeaderNotAvailable,
    NotEnoughReplicas,
    NotEnoughReplicasAfterAppend,
    NotLeaderOrFenced,
    InvalidPromotion,
    TransactionAlreadyActive,
    UnknownTransaction,
    InvalidTransactionState,
    TransactionFenced,
    TransactionInProgress,
    SendsPending,
    TransactionInterrupted,
    Crashed,
}

impl Failure {
    /// The failure an engine error message names.
    pub fn classify(message: &str) -> Option<Self> {
        let has = |s: &str| message.contains(s);
        Some(if has("not enough replicas after append") {
            Failure::NotEnoughReplicasAfterAppend
        } else if has("not enough replicas for") {
            Failure::NotEnoughReplicas
        } else if has("unknown topic or partition") {
            Failure::UnknownTopicOrPartition
        } else if has("unknown broker") {
            Failure::UnknownBroker
        } else if has("leader broker") && has("is stopped") {
            Failure::LeaderNotAvailable
        } else if has("before it was acknowledged") {
            Failure::NotLeaderOrFenced
        } else if has("cannot promote") {
            Failure::InvalidPromotion
        } else if has("is already active") {
            Failure::TransactionAlreadyActive
        } else if has("unknown transaction") {
            Failure::UnknownTransaction
        } else if has("handle fenced") {
            Failure::TransactionFenced
        } else if has("already in progress") {
            Failure::TransactionInProgress
        } else if has("still waiting for acks=all") {
            Failure::SendsPending
        } else if has("was interrupted") {
            Failure::TransactionInterrupted
        } else if has("cluster crashed") {
            Failure::Crashed
        } else if has("cannot ") && has(" transaction ") && has(", not ") {
            Failure::InvalidTransactionState
        } else {
            return None;
        })
    }
}

/// How an action ended after the driver went quiet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Pending,
    Error(Failure),
}

/// A case's cluster and rules.
#[derive(Debug, Clone)]
pub struct Setup {
    pub kafka: bool,
    pub brokers: Vec<Broker>,
    /// (name, partitions, replication factor).
    pub topics: Vec<(String, u32, u32)>,
    pub min_isr: usize,
    pub lag_time_ms: u64,
    /// A follower further behind than this leaves the ISR.
    pub lag_max_offsets: u64,
    /// Segments roll at this size (only the active one can be torn).
    pub segment_max_bytes: u64,
    pub timeout_ms: u64,
}

/// What the last crash's recovery reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovery {
    pub journal_truncated_bytes: u64,
    /// (partition, broker) whose log had a bad tail.
    pub logs_truncated: Vec<(String, Broker)>,
    pub completed: Vec<String>,
    /// (txn, partition, control, offset).
    pub markers_resent: Vec<(String, String, &'static str, i64)>,
    pub left_open: Vec<String>,
}

/// What a tear does to a file before the cluster reopens.
enum Damage {
    None,
    JournalCut(u64),
    JournalGarbage(u64),
    LogCut(Tp, Broker),
    LogGarbage(Tp, Broker),
}

/// A transaction action's step.
#[derive(Debug, Clone)]
enum Phase {
    /// Not started (waiting for its turn on the transaction id).
    Queued,
    /// A send waiting for its acks=all.
    Send {
        index: usize,
        tp: Tp,
        offset: i64,
        ack: u64,
        generation: u64,
    },
    /// A commit or abort waiting for marker `i` of `marks`.
    End {
        index: usize,
        commit: bool,
        marks: Vec<Tp>,
        i: usize,
        crash_after: Option<usize>,
        offsets_cut: bool,
        ack: u64,
        generation: u64,
    },
}

#[derive(Debug, Clone)]
enum Work {
    /// A produce: done at once, or when its acks=all wait settles.
    Produce {
        tp: Tp,
        offset: i64,
        ack: Option<u64>,
        value: String,
    },
    Txn {
        id: String,
        action: Action,
        generation: u64,
        phase: Phase,
    },
}

/// One pending operation of the driver.
#[derive(Debug, Clone)]
struct Op {
    step: usize,
    kind: &'static str,
    work: Work,
}

/// What the model expects the pending pane to show for one operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingView {
    pub step: usize,
    pub kind: &'static str,
    pub txn: Option<String>,
    pub waiting_for: Vec<Broker>,
    pub queued_behind: Option<usize>,
}

/// One write the model remembers.
#[derive(Debug, Clone)]
pub struct Written {
    pub tp: Tp,
    pub offset: i64,
    pub value: String,
    /// The transaction instance of a send.
    pub writer: Option<usize>,
}

/// Ground truth kept for the invariants: what was acknowledged.
#[derive(Debug, Clone, Default)]
pub struct Truth {
    /// Acknowledged writes (acks=all produces, acknowledged sends): they
    /// must stay in the leader's log at their offset.
    pub acked: Vec<Written>,
    /// Sends appended whose acks=all wait then failed: the client was told
    /// the write failed.
    pub failed_sends: Vec<Written>,
    /// Every staged offset value -> the instance that staged it.
    pub staged_by: BTreeMap<i64, usize>,
    /// Instances that lost journal frames to a tear.
    pub torn: std::collections::BTreeSet<usize>,
}

/// How often the model took its rarer paths (to judge the generator).
#[derive(Debug, Clone, Default)]
pub struct Coverage {
    /// Kafka rules: ONGOING instances aborted by the timeout.
    pub expired: u64,
    /// Kafka rules: active instances completed by a new begin.
    pub fenced: u64,
    /// Commits or aborts that resumed and awaited a marker already written.
    pub resumed_markers: u64,
    /// Sends and markers whose acks=all wait failed after the append.
    pub acks_failed: u64,
}

enum Progress {
    Blocked,
    Advanced,
    Finished(Result<(), Failure>),
}

pub struct Model {
    pub setup: Setup,
    settings: Settings,
    pub clock: u64,
    pub parts: BTreeMap<Tp, Part>,
    pub coord: Coordinator,
    pub offsets: BTreeMap<String, BTreeMap<Tp, i64>>,
    identities: BTreeMap<String, (i64, i32)>,
    cursors: BTreeMap<String, u32>,
    generation: u64,
    next_id: u64,
    mailbox: Mailbox,
    // The driver.
    pub step: usize,
    /// The handle each transaction id's client holds: the producer epoch
    /// of the instance it began (None under the book's rules).
    refs: BTreeMap<String, Option<i32>>,
    ops: Vec<Op>,
    pub errors: Vec<(usize, Failure)>,
    pub last_recovery: Option<Recovery>,
    own: Option<Result<(), Failure>>,
    pub truth: Truth,
    pub coverage: Coverage,
}

impl Model {
    pub fn new(setup: Setup) -> Self {
        let settings = Settings {
            lag_time_ms: setup.lag_time_ms,
            lag_max_offsets: setup.lag_max_offsets as i64,
            min_isr: setup.min_isr,
            ack_by_hw: setup.kafka,
        };
        let mut parts = BTreeMap::new();
        for (name, count, rf) in &setup.topics {
            for p in 0..*count {
                // FORMATS.md: partition p's replicas start at broker index p.
                let assignment = (0..*rf as usize)
                    .map(|i| setup.brokers[(p as usize + i) % setup.brokers.len()])
                    .collect();
                parts.insert((name.clone(), p), Part::new(assignment, 0));
            }
        }
        Self {
            setup,
            settings,
            clock: 0,
            parts,
            coord: Coordinator::default(),
            offsets: BTreeMap::new(),
            identities: BTreeMap::new(),
            cursors: BTreeMap::new(),
            generation: 0,
            next_id: 0,
            mailbox: Mailbox::new(),
            step: 0,
            refs: BTreeMap::new(),
            ops: Vec::new(),
            errors: Vec::new(),
            last_recovery: None,
            own: None,
            truth: Truth::default(),
            coverage: Coverage::default(),
        }
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Transaction ids with operations pending (running or queued).
    pub fn busy_txns(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .ops
            .iter()
            .filter_map(|op| match &op.work {
                Work::Txn { id, .. } => Some(id.clone()),
                Work::Produce { .. } => None,
            })
            .collect();
        ids.dedup();
        ids
    }

    /// The last journal frame's length, if any.
    pub fn last_frame_len(&self) -> Option<u64> {
        self.coord.frames.last().map(TxData::line_len)
    }

    // ----- the engine's steps -----

    fn update_all(&mut self) {
        let (now, s) = (self.clock, self.settings);
        for part in self.parts.values_mut() {
            part.update(now, &s, &mut self.mailbox);
        }
    }

    /// One engine operation: ISR, HW and acks brought up to the clock and
    /// (kafka rules) expired transactions aborted first; ISR and HW again
    /// after.
    fn mutate<R>(&mut self, f: impl FnOnce(&mut Self) -> Result<R, Failure>) -> Result<R, Failure> {
        self.update_all();
        self.expire();
        let r = f(self);
        self.update_all();
        r
    }

    fn append(
        &mut self,
        tp: &Tp,
        payload: Payload,
        acks_all: bool,
        producer: (i64, i32),
        writer: Option<usize>,
    ) -> Result<(i64, Option<u64>), Failure> {
        let uid = self.id();
        let (now, s) = (self.clock, self.settings);
        let part = self
            .parts
            .get_mut(tp)
            .ok_or(Failure::UnknownTopicOrPartition)?;
        part.append(
            payload,
            acks_all,
            producer,
            writer,
            uid,
            now,
            &s,
            &mut self.mailbox,
        )
    }

    /// SPEC §4: the given partition, else round-robin per topic.
    fn choose(&mut self, topic: &str, partition: Option<u32>) -> Result<Tp, Failure> {
        let count = self
            .setup
            .topics
            .iter()
            .find(|(n, _, _)| n == topic)
            .map(|t| t.1)
            .ok_or(Failure::UnknownTopicOrPartition)?;
        let p = match partition {
            Some(p) if p < count => p,
            Some(_) => return Err(Failure::UnknownTopicOrPartition),
            None => {
                let cursor = self.cursors.entry(topic.to_string()).or_insert(0);
                let p = *cursor % count;
                *cursor += 1;
                p
            }
        };
        Ok((topic.to_string(), p))
    }

    // ----- transactions (E10-E14) -----

    /// The latest instance of `id`, for a handle: under the kafka rules a
    /// handle of an older producer epoch is fenced.
    fn resolve(&self, id: &str, handle: Option<i32>) -> Result<usize, Failure> {
        let &latest = self
            .coord
            .current
            .get(id)
            .ok_or(Failure::UnknownTransaction)?;
        if self.setup.kafka {
            let current = self.coord.instances[latest].producer.map_or(-1, |p| p.1);
            if handle.is_some_and(|e| e < current) {
                return Err(Failure::TransactionFenced);
            }
        }
        Ok(latest)
    }

    fn require(
        &self,
        id: &str,
        handle: Option<i32>,
        allowed: &[TxState],
    ) -> Result<usize, Failure> {
        let index = self.resolve(id, handle)?;
        if allowed.contains(&self.coord.instances[index].state) {
            Ok(index)
        } else {
            Err(Failure::InvalidTransactionState)
        }
    }

    /// The handle the driver's client of `id` holds: the one its begin
    /// returned, else one on the latest instance.
    fn handle(&self, id: &str) -> Result<Option<i32>, Failure> {
        match self.refs.get(id) {
            Some(h) => Ok(*h),
            None => {
                let &i = self
                    .coord
                    .current
                    .get(id)
                    .ok_or(Failure::UnknownTransaction)?;
                Ok(self.coord.instances[i].producer.map(|p| p.1))
            }
        }
    }

    fn marker_payload(&self, index: usize, commit: bool) -> (Payload, (i64, i32)) {
        let d = &self.coord.instances[index];
        (
            Payload::Marker {
                txn: d.id.clone(),
                commit,
            },
            d.producer.unwrap_or((-1, -1)),
        )
    }

    /// Drives an instance to COMPLETE_* at once (recovery, timeout,
    /// fencing): PREPARE_* if not yet, the missing markers with the
    /// leader's append (not waited for), offsets published or discarded,
    /// COMPLETE_*. Returns the markers written.
    fn complete_now(
        &mut self,
        index: usize,
        commit: bool,
        write_markers: bool,
    ) -> Vec<(String, String, &'static str, i64)> {
        let mut data = self.coord.instances[index].clone();
        if data.state == TxState::Ongoing {
            data.state = TxState::prepare(commit);
            self.coord.write(data.clone());
        }
        let mut written = Vec::new();
        if write_markers {
            for (tp, _) in data.first.clone() {
                let stopped = self.parts.get(&tp).is_none_or(Part::leader_stopped);
                if stopped
                    || self
                        .coord
                        .marker(index, &tp, commit, self.parts[&tp].leader_log())
                        .is_some()
                {
                    continue;
                }
                let (payload, pid) = self.marker_payload(index, commit);
                let (offset, _) = self
                    .append(&tp, payload, false, pid, Some(index))
                    .expect("a running leader takes an acks=1 append");
                self.coord.record_marker(index, &tp, offset, commit);
                written.push((
                    data.id.clone(),
                    tp_name(&tp),
                    if commit { "commit" } else { "abort" },
                    offset,
                ));
            }
        }
        if commit {
            self.publish(&data.staged);
        } else {
            data.staged.clear();
        }
        data.state = TxState::completed(commit);
        self.coord.write(data);
        self.coord.in_flight.remove(&index);
        self.coord.pending_sends.retain(|(i, _), _| *i != index);
        written
    }

    fn publish(&mut self, staged: &BTreeMap<String, BTreeMap<Tp, i64>>) {
        for (group, offsets) in staged {
            let entry = self.offsets.entry(group.clone()).or_default();
            entry.extend(offsets.iter().map(|(tp, o)| (tp.clone(), *o)));
        }
    }

    /// Kafka rules: ONGOING instances older than the timeout abort.
    fn expire(&mut self) {
        if !self.setup.kafka {
            return;
        }
        let expired: Vec<usize> = self
            .coord
            .current
            .values()
            .copied()
            .filter(|&i| {
                let d = &self.coord.instances[i];
                d.state == TxState::Ongoing
                    && !self.coord.in_flight.contains(&i)
                    && d.started
                        .is_some_and(|s| self.clock.saturating_sub(s) >= self.setup.timeout_ms)
            })
            .collect();
        for index in expired {
            self.coverage.expired += 1;
            self.complete_now(index, false, true);
        }
    }

    // ----- crash and recovery (E12, E13) -----

    fn crash(&mut self, damage: Damage) {
        self.generation += 1;
        for part in self.parts.values_mut() {
            for p in part.pending.drain(..) {
                self.mailbox.insert(p.id, Err(Failure::Crashed));
            }
        }
        let mut report = Recovery::default();
        let mut frames = std::mem::take(&mut self.coord.frames);
        match damage {
            Damage::None => {}
            Damage::JournalCut(n) => {
                let total: u64 = frames.iter().map(TxData::line_len).sum();
                let len = total.saturating_sub(n);
                let mut end = 0;
                let mut kept = 0;
                for f in &frames {
                    if end + f.line_len() > len {
                        break;
                    }
                    end += f.line_len();
                    kept += 1;
                }
                frames.truncate(kept);
                self.truth
                    .torn
                    .extend(self.coord.frame_instance[kept..].iter().copied());
                report.journal_truncated_bytes = len - end;
            }
            Damage::JournalGarbage(n) => report.journal_truncated_bytes = n,
            Damage::LogCut(tp, b) => {
                let r = self
                    .parts
                    .get_mut(&tp)
                    .expect("a partition")
                    .replicas
                    .get_mut(&b)
                    .expect("a replica");
                if r.log.pop().is_some() {
                    report.logs_truncated.push((tp_name(&tp), b));
                }
            }
            Damage::LogGarbage(tp, b) => report.logs_truncated.push((tp_name(&tp), b)),
        }
        self.coord = Coordinator::from_frames(frames);
        let now = self.clock;
        for part in self.parts.values_mut() {
            part.reopen(now);
        }
        self.cursors.clear();
        // Markers found in the leaders' logs belong to the candidate
        // instance of their id.
        let mut found = Vec::new();
        for (tp, part) in &self.parts {
            for (offset, b) in part.leader_log().iter().enumerate() {
                if let Payload::Marker { txn, commit } = &b.payload
                    && let Some(i) = self.coord.candidate(txn, tp, offset as i64)
                {
                    found.push((i, tp.clone(), offset as i64, *commit));
                }
            }
        }
        for (i, tp, offset, commit) in found {
            self.coord.record_marker(i, &tp, offset, commit);
        }
        let current: Vec<usize> = self.coord.current.values().copied().collect();
        for index in current {
            let d = &self.coord.instances[index];
            let id = d.id.clone();
            let commit = match d.state {
                TxState::PrepareCommit => true,
                TxState::PrepareAbort => false,
                TxState::Ongoing => {
                    report.left_open.push(id);
                    continue;
                }
                _ => continue,
            };
            let resent = self.complete_now(index, commit, self.setup.kafka);
            report.markers_resent.extend(resent);
            report.completed.push(id);
        }
        // Kafka rules: one left open past its timeout aborts at once.
        self.expire();
        self.update_all();
        self.last_recovery = Some(report);
    }

    // ----- the driver (SPEC §4) -----

    /// Applies one action as the driver does, and returns its outcome.
    pub fn apply(&mut self, action: &Action) -> Outcome {
        self.step += 1;
        let step = self.step;
        self.own = None;
        let started = match self.start(action) {
            Err(e) => Outcome::Error(e),
            Ok(None) => Outcome::Ok,
            Ok(Some(work)) => {
                self.ops.push(Op {
                    step,
                    kind: action.name(),
                    work,
                });
                Outcome::Pending
            }
        };
        self.quiesce();
        let outcome = match started {
            Outcome::Pending if self.ops.iter().any(|o| o.step == step) => Outcome::Pending,
            Outcome::Pending => match self.own.take() {
                Some(Err(e)) => Outcome::Error(e),
                _ => Outcome::Ok,
            },
            other => other,
        };
        if let Outcome::Error(e) = outcome {
            self.errors.push((step, e));
        }
        outcome
    }

    fn start(&mut self, action: &Action) -> Result<Option<Work>, Failure> {
        match action {
            Action::Produce {
                topic,
                partition,
                value,
                acks,
                key: None,
                producer: None,
            } => {
                let acks = acks.as_deref().unwrap_or("1");
                let tp = self.choose(topic, *partition)?;
                let (offset, ack) = self.mutate(|m| {
                    m.append(
                        &tp,
                        Payload::Data {
                            value: value.clone(),
                            txn: None,
                        },
                        acks == "all",
                        (-1, -1),
                        None,
                    )
                })?;
                Ok(Some(Work::Produce {
                    tp,
                    offset,
                    ack,
                    value: value.clone(),
                }))
            }
            Action::Begin { txn }
            | Action::SendOffsets { txn, .. }
            | Action::Commit { txn, .. }
            | Action::Abort { txn, .. } => Ok(Some(Work::Txn {
                id: txn.clone(),
                action: action.clone(),
                generation: self.generation,
                phase: Phase::Queued,
            })),
            Action::Send {
                txn,
                topic,
                partition,
                key: None,
                value,
            } => {
                let tp = self.choose(topic, *partition)?;
                Ok(Some(Work::Txn {
                    id: txn.clone(),
                    action: Action::Send {
                        txn: txn.clone(),
                        topic: topic.clone(),
                        partition: Some(tp.1),
                        key: None,
                        value: value.clone(),
                    },
                    generation: self.generation,
                    phase: Phase::Queued,
                }))
            }
            Action::Replicate {
                broker,
                topic,
                partition,
            } => {
                let (now, s) = (self.clock, self.settings);
                match (broker, topic, partition) {
                    (None, None, None) => self.mutate(|m| {
                        for part in m.parts.values_mut() {
                            part.fetch_all(now, &s, &mut m.mailbox);
                        }
                        Ok(())
                    }),
                    (Some(b), None, None) => self.mutate(|m| {
                        if !m.setup.brokers.contains(b) {
                            return Err(Failure::UnknownBroker);
                        }
                        for part in m.parts.values_mut() {
                            if part.assignment.contains(b) {
                                part.fetch(*b, now, &s, &mut m.mailbox)?;
                            }
                        }
                        Ok(())
                    }),
                    (b, Some(t), Some(p)) => self.mutate(|m| {
                        let part = m
                            .parts
                            .get_mut(&(t.clone(), *p))
                            .ok_or(Failure::UnknownTopicOrPartition)?;
                        match b {
                            Some(b) => part.fetch(*b, now, &s, &mut m.mailbox),
                            None => {
                                part.fetch_all(now, &s, &mut m.mailbox);
                                Ok(())
                            }
                        }
                    }),
                    _ => panic!("the harness gives topic and partition together"),
                }?;
                Ok(None)
            }
            Action::AdvanceClock { ms } => {
                self.clock += ms;
                self.mutate(|_| Ok(()))?;
                Ok(None)
            }
            Action::Crash {} => {
                self.crash(Damage::None);
                Ok(None)
            }
            Action::Tear {
                target,
                cut_bytes,
                append_garbage,
            } => {
                let garbage = |g: &GarbageSpec| match g {
                    GarbageSpec::Default(true) => 15,
                    GarbageSpec::Text(t) => t.len() as u64,
                    GarbageSpec::Default(false) => panic!("not generated"),
                };
                let damage = match (target, cut_bytes, append_garbage) {
                    (TearTargetSpec::Named(_), Some(n), None) => Damage::JournalCut(*n),
                    (TearTargetSpec::Named(_), None, Some(g)) => Damage::JournalGarbage(garbage(g)),
                    (
                        TearTargetSpec::Log {
                            topic,
                            partition,
                            broker,
                        },
                        cut,
                        _,
                    ) => {
                        let tp = (topic.clone(), *partition);
                        if cut.is_some() {
                            Damage::LogCut(tp, *broker)
                        } else {
                            Damage::LogGarbage(tp, *broker)
                        }
                    }
                    _ => panic!("not generated"),
                };
                self.crash(damage);
                Ok(None)
            }
            Action::StopBroker { broker } | Action::StartBroker { broker } => {
                let stop = matches!(action, Action::StopBroker { .. });
                self.mutate(|m| {
                    if !m.setup.brokers.contains(broker) {
                        return Err(Failure::UnknownBroker);
                    }
                    let (now, s) = (m.clock, m.settings);
                    for part in m.parts.values_mut() {
                        if let Some(r) = part.replicas.get_mut(broker) {
                            r.stopped = stop;
                        }
                        part.update(now, &s, &mut m.mailbox);
                    }
                    Ok(())
                })?;
                Ok(None)
            }
            Action::Promote {
                topic,
                partition,
                broker,
            } => {
                self.mutate(|m| {
                    let (now, s) = (m.clock, m.settings);
                    m.parts
                        .get_mut(&(topic.clone(), *partition))
                        .ok_or(Failure::UnknownTopicOrPartition)?
                        .promote(*broker, now, &s, &mut m.mailbox)
                })?;
                Ok(None)
            }
            Action::Note {} | Action::Ui { .. } => Ok(None),
            other => panic!("the model does not generate {other:?}"),
        }
    }

    /// Runs ready work until nothing can move.
    fn quiesce(&mut self) {
        loop {
            let mut moved = false;
            let mut i = 0;
            while i < self.ops.len() {
                match self.progress(i) {
                    Progress::Blocked => i += 1,
                    Progress::Advanced => {
                        moved = true;
                        i += 1;
                    }
                    Progress::Finished(result) => {
                        let op = self.ops.remove(i);
                        self.finish(op.step, result);
                        moved = true;
                    }
                }
            }
            if !moved {
                break;
            }
        }
    }

    fn finish(&mut self, step: usize, result: Result<(), Failure>) {
        if step == self.step {
            self.own = Some(result);
        } else if let Err(e) = result {
            self.errors.push((step, e));
        }
    }

    fn progress(&mut self, i: usize) -> Progress {
        let op = self.ops[i].clone();
        match op.work {
            Work::Produce {
                tp,
                offset,
                ack,
                value,
            } => match ack {
                None => Progress::Finished(Ok(())),
                Some(ack) => match self.mailbox.remove(&ack) {
                    None => Progress::Blocked,
                    Some(r) => {
                        if r.is_ok() {
                            self.truth.acked.push(Written {
                                tp,
                                offset,
                                value,
                                writer: None,
                            });
                        }
                        Progress::Finished(r)
                    }
                },
            },
            Work::Txn {
                id,
                action,
                generation,
                phase,
            } => {
                let behind = self.ops[..i]
                    .iter()
                    .any(|o| matches!(&o.work, Work::Txn { id: other, .. } if *other == id));
                if behind {
                    return Progress::Blocked;
                }
                match phase {
                    Phase::Queued if generation != self.generation => {
                        Progress::Finished(Err(Failure::Crashed))
                    }
                    Phase::Queued => self.run_txn(i, &id, &action),
                    Phase::Send {
                        index,
                        tp,
                        offset,
                        ack,
                        generation,
                    } => match self.mailbox.remove(&ack) {
                        None => Progress::Blocked,
                        Some(r) => self.send_acked(&id, index, tp, offset, generation, r, &action),
                    },
                    Phase::End {
                        index,
                        commit,
                        marks,
                        i: k,
                        crash_after,
                        offsets_cut,
                        ack,
                        generation,
                    } => match self.mailbox.remove(&ack) {
                        None => Progress::Blocked,
                        Some(r) => self.marker_acked(
                            i,
                            index,
                            commit,
                            marks,
                            k,
                            crash_after,
                            offsets_cut,
                            generation,
                            r,
                        ),
                    },
                }
            }
        }
    }

    fn set_phase(&mut self, i: usize, phase: Phase) -> Progress {
        if let Work::Txn { phase: p, .. } = &mut self.ops[i].work {
            *p = phase;
        }
        Progress::Advanced
    }

    /// Starts a transaction action (its turn has come).
    fn run_txn(&mut self, i: usize, id: &str, action: &Action) -> Progress {
        match action {
            Action::Begin { .. } => {
                let r = self.mutate(|m| {
                    let producer = if m.setup.kafka {
                        let name = format!("transactional.id:{id}");
                        let next = match m.identities.get(&name) {
                            Some(&(pid, epoch)) => (pid, epoch + 1),
                            None => (
                                m.identities
                                    .values()
                                    .map(|&(p, _)| p + 1)
                                    .max()
                                    .unwrap_or(0),
                                0,
                            ),
                        };
                        m.identities.insert(name, next);
                        Some(next)
                    } else {
                        None
                    };
                    if let Some(&old) = m.coord.current.get(id) {
                        let state = m.coord.instances[old].state;
                        if !state.complete() {
                            if !m.setup.kafka {
                                return Err(Failure::TransactionAlreadyActive);
                            }
                            m.coverage.fenced += 1;
                            m.complete_now(old, state == TxState::PrepareCommit, true);
                        }
                    }
                    m.coord.write(TxData {
                        id: id.to_string(),
                        state: TxState::Ongoing,
                        first: Vec::new(),
                        staged: BTreeMap::new(),
                        producer,
                        started: m.setup.kafka.then_some(m.clock),
                    });
                    Ok(producer.map(|p| p.1))
                });
                Progress::Finished(r.map(|epoch| {
                    self.refs.insert(id.to_string(), epoch);
                }))
            }
            Action::Send {
                topic,
                partition,
                value,
                ..
            } => {
                let tp: Tp = (topic.clone(), partition.expect("chosen at issue"));
                let handle = match self.handle(id) {
                    Ok(h) => h,
                    Err(e) => return Progress::Finished(Err(e)),
                };
                let r = self.mutate(|m| {
                    let index = m.require(id, handle, &[TxState::Ongoing])?;
                    let pid = m.coord.instances[index].producer.unwrap_or((-1, -1));
                    let payload = Payload::Data {
                        value: value.clone(),
                        txn: Some(id.to_string()),
                    };
                    let (offset, ack) = m.append(&tp, payload, true, pid, Some(index))?;
                    m.coord
                        .pending_sends
                        .entry((index, tp.clone()))
                        .or_default()
                        .push(offset);
                    Ok((index, offset, ack.expect("acks=all")))
                });
                match r {
                    Err(e) => Progress::Finished(Err(e)),
                    Ok((index, offset, ack)) => {
                        let generation = self.generation;
                        match self.mailbox.remove(&ack) {
                            Some(r) => {
                                self.send_acked(id, index, tp, offset, generation, r, action)
                            }
                            None => self.set_phase(
                                i,
                                Phase::Send {
                                    index,
                                    tp,
                                    offset,
                                    ack,
                                    generation,
                                },
                            ),
                        }
                    }
                }
            }
            Action::SendOffsets { group, offsets, .. } => {
                let r = self.handle(id).and_then(|handle| {
                    self.mutate(|m| {
                        let index = m.require(id, handle, &[TxState::Ongoing])?;
                        let mut data = m.coord.instances[index].clone();
                        let staged = data.staged.entry(group.clone()).or_default();
                        for o in offsets {
                            staged.insert((o.topic.clone(), o.partition), o.offset);
                            m.truth.staged_by.insert(o.offset, index);
                        }
                        m.coord.write(data);
                        Ok(())
                    })
                });
                Progress::Finished(r)
            }
            Action::Commit { crash_after, .. } | Action::Abort { crash_after, .. } => {
                let commit = matches!(action, Action::Commit { .. });
                let handle = match self.handle(id) {
                    Ok(h) => h,
                    Err(e) => return Progress::Finished(Err(e)),
                };
                let r = self.mutate(|m| {
                    let index =
                        m.require(id, handle, &[TxState::Ongoing, TxState::prepare(commit)])?;
                    if m.coord.in_flight.contains(&index) {
                        return Err(Failure::TransactionInProgress);
                    }
                    if m.coord.sends_pending(index) > 0 {
                        return Err(Failure::SendsPending);
                    }
                    let mut data = m.coord.instances[index].clone();
                    if data.state == TxState::Ongoing {
                        data.state = TxState::prepare(commit);
                        m.coord.write(data.clone());
                    }
                    m.coord.in_flight.insert(index);
                    Ok((
                        index,
                        data.first
                            .iter()
                            .map(|(tp, _)| tp.clone())
                            .collect::<Vec<_>>(),
                    ))
                });
                let (index, marks) = match r {
                    Ok(x) => x,
                    Err(e) => return Progress::Finished(Err(e)),
                };
                let n = marks.len();
                let cut = crash_after.as_deref();
                let crash_after = match cut {
                    Some("prepare") => Some(0),
                    Some("markers") => Some(n),
                    Some(c) if c.starts_with("marker:") => {
                        Some(c["marker:".len()..].parse::<usize>().expect("N").min(n))
                    }
                    _ => None,
                };
                if crash_after == Some(0) {
                    self.crash(Damage::None);
                    return Progress::Finished(Ok(()));
                }
                let generation = self.generation;
                self.write_marker(
                    i,
                    index,
                    commit,
                    marks,
                    0,
                    crash_after,
                    cut == Some("offsets"),
                    generation,
                )
            }
            other => panic!("not a transaction action: {other:?}"),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn send_acked(
        &mut self,
        id: &str,
        index: usize,
        tp: Tp,
        offset: i64,
        generation: u64,
        ack: Result<(), Failure>,
        action: &Action,
    ) -> Progress {
        if let Err(e) = ack {
            if e != Failure::Crashed {
                self.coverage.acks_failed += 1;
            }
            if let Action::Send { value, .. } = action {
                self.truth.failed_sends.push(Written {
                    tp: tp.clone(),
                    offset,
                    value: value.clone(),
                    writer: Some(index),
                });
            }
            if self.generation == generation {
                self.coord.abandon_send(index, &tp, offset);
            }
            return Progress::Finished(Err(e));
        }
        let handle = self.refs.get(id).copied().flatten().or_else(|| {
            self.coord
                .current
                .get(id)
                .and_then(|&i| self.coord.instances[i].producer.map(|p| p.1))
        });
        let r = self.mutate(|m| {
            if m.generation != generation {
                return Err(Failure::Crashed);
            }
            let index = m.require(id, handle, &[TxState::Ongoing])?;
            m.coord.abandon_send(index, &tp, offset);
            let mut data = m.coord.instances[index].clone();
            data.record_write(&tp, offset);
            m.coord.write(data);
            Ok(())
        });
        if let Action::Send { value, .. } = action {
            let w = Written {
                tp,
                offset,
                value: value.clone(),
                writer: Some(index),
            };
            if r.is_ok() {
                self.truth.acked.push(w);
            } else {
                self.truth.failed_sends.push(w);
            }
        }
        Progress::Finished(r)
    }

    fn check_in_flight(&self, index: usize, commit: bool) -> Result<(), Failure> {
        let d = &self.coord.instances[index];
        let running = self.coord.in_flight.contains(&index)
            && self.coord.current.get(&d.id) == Some(&index)
            && d.state == TxState::prepare(commit);
        if running {
            Ok(())
        } else {
            Err(Failure::TransactionInterrupted)
        }
    }

    /// Marker `k` of a commit or abort: appended with acks=all (or, if the
    /// instance already has it, its replication awaited), then the next.
    #[allow(clippy::too_many_arguments)]
    fn write_marker(
        &mut self,
        i: usize,
        index: usize,
        commit: bool,
        marks: Vec<Tp>,
        k: usize,
        crash_after: Option<usize>,
        offsets_cut: bool,
        generation: u64,
    ) -> Progress {
        if k == marks.len() {
            return self.end_rest(index, commit, offsets_cut, generation);
        }
        let tp = marks[k].clone();
        let r = self.mutate(|m| {
            if m.generation != generation {
                return Err(Failure::Crashed);
            }
            m.check_in_flight(index, commit)?;
            let log = m.parts.get(&tp).map_or(&[][..], |p| p.leader_log());
            if let Some(offset) = m.coord.marker(index, &tp, commit, log) {
                m.coverage.resumed_markers += 1;
                let id = m.id();
                let (now, s) = (m.clock, m.settings);
                let part = m.parts.get_mut(&tp).expect("a partition");
                return Ok(part.wait(offset, id, now, &s, &mut m.mailbox));
            }
            let (payload, pid) = m.marker_payload(index, commit);
            let (offset, ack) = m.append(&tp, payload, true, pid, Some(index))?;
            m.coord.record_marker(index, &tp, offset, commit);
            Ok(ack.expect("acks=all"))
        });
        let ack = match r {
            Ok(ack) => ack,
            Err(e) => {
                if self.generation == generation {
                    self.coord.in_flight.remove(&index);
                }
                return Progress::Finished(Err(e));
            }
        };
        match self.mailbox.remove(&ack) {
            Some(r) => self.marker_acked(
                i,
                index,
                commit,
                marks,
                k,
                crash_after,
                offsets_cut,
                generation,
                r,
            ),
            None => self.set_phase(
                i,
                Phase::End {
                    index,
                    commit,
                    marks,
                    i: k,
                    crash_after,
                    offsets_cut,
                    ack,
                    generation,
                },
            ),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn marker_acked(
        &mut self,
        i: usize,
        index: usize,
        commit: bool,
        marks: Vec<Tp>,
        k: usize,
        crash_after: Option<usize>,
        offsets_cut: bool,
        generation: u64,
        ack: Result<(), Failure>,
    ) -> Progress {
        if let Err(e) = ack {
            if e != Failure::Crashed {
                self.coverage.acks_failed += 1;
            }
            if self.generation == generation {
                self.coord.in_flight.remove(&index);
            }
            return Progress::Finished(Err(e));
        }
        if crash_after == Some(k + 1) {
            self.crash(Damage::None);
            return Progress::Finished(Ok(()));
        }
        self.write_marker(
            i,
            index,
            commit,
            marks,
            k + 1,
            crash_after,
            offsets_cut,
            generation,
        )
    }

    /// After the markers: offsets published (commit) or discarded (abort),
    /// then COMPLETE_*.
    fn end_rest(
        &mut self,
        index: usize,
        commit: bool,
        offsets_cut: bool,
        generation: u64,
    ) -> Progress {
        let settle = self.mutate(|m| {
            if m.generation != generation {
                return Err(Failure::Crashed);
            }
            m.check_in_flight(index, commit)?;
            if commit {
                let staged = m.coord.instances[index].staged.clone();
                m.publish(&staged);
            } else {
                m.coord.instances[index].staged.clear();
            }
            Ok(())
        });
        if let Err(e) = settle {
            return Progress::Finished(Err(e));
        }
        if offsets_cut {
            self.crash(Damage::None);
            return Progress::Finished(Ok(()));
        }
        let r = self.mutate(|m| {
            if m.generation != generation {
                return Err(Failure::Crashed);
            }
            m.check_in_flight(index, commit)?;
            let mut data = m.coord.instances[index].clone();
            data.state = TxState::completed(commit);
            if !commit {
                data.staged.clear();
            }
            m.coord.write(data);
            m.coord.in_flight.remove(&index);
            Ok(())
        });
        Progress::Finished(r)
    }

    // ----- what the state must show (SPEC §5) -----

    /// Brings the model to where reading the state leaves the engine: a
    /// read is an engine operation too (ISR, HW and, under the kafka rules,
    /// timeouts are brought up to the clock).
    pub fn observe(&mut self) {
        self.update_all();
        self.expire();
        self.update_all();
    }

    /// The values each isolation level returns from offset 0 on `tp`.
    pub fn consumers(&self, tp: &Tp) -> (Vec<String>, Vec<String>) {
        let part = &self.parts[tp];
        if part.leader_stopped() {
            return (Vec::new(), Vec::new());
        }
        let lso = self.lso(tp);
        let mut ru = Vec::new();
        let mut rc = Vec::new();
        for (offset, b) in part.leader_log().iter().enumerate() {
            let offset = offset as i64;
            let Payload::Data { value, txn } = &b.payload else {
                continue;
            };
            if offset < part.hw {
                ru.push(value.clone());
            }
            let committed = txn.as_ref().is_none_or(|id| {
                self.coord
                    .is_committed(id, tp, offset, b.producer, part.leader_log())
            });
            if offset < lso && committed {
                rc.push(value.clone());
            }
        }
        (ru, rc)
    }

    pub fn lso(&self, tp: &Tp) -> i64 {
        let hw = self.parts[tp].hw;
        self.coord.lso(tp, hw)
    }

    /// The pending pane: each operation, what it is queued behind, and the
    /// replicas its batches still wait for.
    pub fn pending(&self) -> Vec<PendingView> {
        self.ops
            .iter()
            .enumerate()
            .map(|(i, op)| {
                let txn = match &op.work {
                    Work::Txn { id, .. } => Some(id.clone()),
                    Work::Produce { .. } => None,
                };
                let queued_behind = self.ops[..i]
                    .iter()
                    .filter(|o| {
                        txn.is_some()
                            && matches!(&o.work, Work::Txn { id, .. } if Some(id) == txn.as_ref())
                    })
                    .map(|o| o.step)
                    .next_back();
                let batches: Vec<(Tp, i64)> = match &op.work {
                    Work::Produce { tp, offset, .. } => vec![(tp.clone(), *offset)],
                    Work::Txn { id, .. } => match self.coord.current.get(id) {
                        None => Vec::new(),
                        Some(&index) => {
                            let mut b: Vec<(Tp, i64)> = self
                                .coord
                                .pending_sends
                                .iter()
                                .filter(|((i, _), _)| *i == index)
                                .flat_map(|((_, tp), o)| o.iter().map(move |o| (tp.clone(), *o)))
                                .collect();
                            if matches!(op.kind, "commit" | "abort") {
                                b.extend(
                                    self.coord
                                        .markers
                                        .iter()
                                        .filter(|((i, _), _)| *i == index)
                                        .flat_map(|((_, tp), m)| {
                                            m.iter().map(move |(o, _)| (tp.clone(), *o))
                                        }),
                                );
                            }
                            b
                        }
                    },
                };
                let mut waiting_for: Vec<Broker> = batches
                    .iter()
                    .flat_map(|(tp, o)| self.parts[tp].waiting_for(*o))
                    .collect();
                waiting_for.sort_unstable();
                waiting_for.dedup();
                PendingView {
                    step: op.step,
                    kind: op.kind,
                    txn,
                    waiting_for: if queued_behind.is_some() {
                        Vec::new()
                    } else {
                        waiting_for
                    },
                    queued_behind,
                }
            })
            .collect()
    }
}
