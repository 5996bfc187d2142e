//! The model of the transaction actions as the driver runs them (E10):
//! begin, send (append, wait for acks=all, journal), send_offsets, and
//! commit or abort (PREPARE_*, a marker per partition waiting for acks=all,
//! offsets, COMPLETE_*), with their cut points (E13).

use super::driver::{Phase, Progress};
use super::recovery::Damage;
use super::*;

impl Model {
    /// Starts a transaction action (its turn has come).
    pub(super) fn run_txn(&mut self, i: usize, id: &str, action: &Action) -> Progress {
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
                    if let Some(old) = m.coord.latest(id) {
                        let state = m.coord.instance(old).state;
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
                value: Some(value),
                ..
            } => {
                let tp: Tp = (topic.clone(), partition.expect("chosen at issue"));
                let handle = match self.handle(id) {
                    Ok(h) => h,
                    Err(e) => return Progress::Finished(Err(e)),
                };
                let r = self.mutate(|m| {
                    let index = m.require(id, handle, &[TxState::Ongoing])?;
                    let pid = m.coord.instance(index).producer.unwrap_or((-1, -1));
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
                        let mut data = m.coord.instance(index).clone();
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
                    let mut data = m.coord.instance(index).clone();
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
                use minikafka::engine::transaction::CutPoint;
                let cut = *crash_after;
                let crash_after = match cut {
                    Some(CutPoint::Prepare) => Some(0),
                    Some(CutPoint::Markers) => Some(n),
                    Some(CutPoint::Marker(k)) => Some(k.min(n)),
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
                    cut == Some(CutPoint::Offsets),
                    generation,
                )
            }
            other => panic!("not a transaction action: {other:?}"),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn send_acked(
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
            if let Action::Send {
                value: Some(value), ..
            } = action
            {
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
                .latest(id)
                .and_then(|i| self.coord.instance(i).producer.map(|p| p.1))
        });
        let r = self.mutate(|m| {
            if m.generation != generation {
                return Err(Failure::Crashed);
            }
            let index = m.require(id, handle, &[TxState::Ongoing])?;
            m.coord.abandon_send(index, &tp, offset);
            let mut data = m.coord.instance(index).clone();
            data.record_write(&tp, offset);
            m.coord.write(data);
            Ok(())
        });
        if let Action::Send {
            value: Some(value), ..
        } = action
        {
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

    pub(super) fn check_in_flight(&self, index: usize, commit: bool) -> Result<(), Failure> {
        let d = self.coord.instance(index);
        let running = self.coord.in_flight.contains(&index)
            && self.coord.latest(&d.id) == Some(index)
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
    pub(super) fn write_marker(
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
            let (_, ack) = m.append(&tp, payload, true, pid, Some(index))?;
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
    pub(super) fn marker_acked(
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
    pub(super) fn end_rest(
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
            // An abort's discard is journaled with COMPLETE_ABORT next (E10);
            // nothing reads the staged offsets in between.
            if commit {
                let staged = m.coord.instance(index).staged.clone();
                m.publish(&staged);
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
            let mut data = m.coord.instance(index).clone();
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
}
