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

mod driver;
mod recovery;
pub mod replication;
mod transactions;
pub mod txn;
mod txn_ops;

use std::collections::BTreeMap;

use minikafka::session::Action;

use driver::{Op, Work};
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
    /// (partition, old leader, new leader, new leader epoch): a torn
    /// leader replaced by the most up-to-date replica.
    pub leaders_reelected: Vec<(String, Broker, Broker, u32)>,
    pub completed: Vec<String>,
    /// (txn, partition, control, offset).
    pub markers_resent: Vec<(String, String, &'static str, i64)>,
    pub left_open: Vec<String>,
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
    /// Acknowledged writes a leader tear destroyed while no other replica
    /// held them (acks=all with the leader alone in the ISR): outside the
    /// promise, so no longer checked.
    pub lost: Vec<Written>,
    /// Partitions whose last recovery lost records below the HW (a torn
    /// leader alone held them; the HW may fall, or the new leader may hold
    /// other records there): what consumers read may change.
    pub below_hw_lost: Vec<Tp>,
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
            isr_at_fetch: !setup.kafka,
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
        let log = self.parts[tp].leader_log();
        self.consumers_by(tp, |offset| self.coord.is_committed(tp, offset, log))
    }

    /// The same, with `committed` deciding whether the transactional data
    /// batch at an offset of the leader's log is committed (the sabotage
    /// checks pass deliberately wrong rules).
    pub fn consumers_by(
        &self,
        tp: &Tp,
        committed: impl Fn(i64) -> bool,
    ) -> (Vec<String>, Vec<String>) {
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
            let committed = txn.is_none() || committed(offset);
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
                    Work::Txn { id, .. } => match self.coord.latest(id) {
                        None => Vec::new(),
                        Some(index) => {
                            let mut b: Vec<(Tp, i64)> = self
                                .coord
                                .pending_sends
                                .iter()
                                .filter(|((i, _), _)| *i == index)
                                .flat_map(|((_, tp), o)| o.iter().map(move |o| (tp.clone(), *o)))
                                .collect();
                            if matches!(op.kind, "commit" | "abort") {
                                for (tp, part) in &self.parts {
                                    let markers =
                                        self.coord.markers_of(index, tp, part.leader_log());
                                    b.extend(markers.into_iter().map(|(o, _)| (tp.clone(), o)));
                                }
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
