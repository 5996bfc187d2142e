//! The model of the session driver (SPEC §4): an action starts at once or
//! becomes pending work; after each action, ready work runs until nothing
//! can move; actions on one transaction id run in order.

use minikafka::session::action::{GarbageSpec, TearTargetSpec};

use super::recovery::Damage;
use super::*;

/// A transaction action's step.
#[derive(Debug, Clone)]
pub(super) enum Phase {
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
pub(super) enum Work {
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
pub(super) struct Op {
    pub(super) step: usize,
    pub(super) kind: &'static str,
    pub(super) work: Work,
}

pub(super) enum Progress {
    Blocked,
    Advanced,
    Finished(Result<(), Failure>),
}

impl Model {
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
                value: Some(value),
                acks,
                key: None,
                producer: None,
                ..
            } => {
                let acks_all = *acks == Some(minikafka::engine::AckMode::All);
                let tp = self.choose(topic, *partition)?;
                let (offset, ack) = self.mutate(|m| {
                    m.append(
                        &tp,
                        Payload::Data {
                            value: value.clone(),
                            txn: None,
                        },
                        acks_all,
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
            Action::Begin { txn, .. }
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
                ..
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
                        records: vec![],
                        wire: None,
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
                    (TearTargetSpec::Journal, Some(n), None) => Damage::JournalCut(*n),
                    (TearTargetSpec::Journal, None, Some(g)) => Damage::JournalGarbage(garbage(g)),
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
                    let part = m
                        .parts
                        .get_mut(&(topic.clone(), *partition))
                        .ok_or(Failure::UnknownTopicOrPartition)?;
                    part.promote(*broker, now, &s, &mut m.mailbox)?;
                    Ok(())
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

    pub(super) fn set_phase(&mut self, i: usize, phase: Phase) -> Progress {
        if let Work::Txn { phase: p, .. } = &mut self.ops[i].work {
            *p = phase;
        }
        Progress::Advanced
    }
}
