//! The model's crash, tear and recovery (E12, E13): pending work fails,
//! the damaged file loses its tail, the cluster reopens from what is left,
//! PREPARE_* transactions complete, and (kafka rules) markers are re-sent
//! and timed-out transactions abort.

use super::replication::{Part, Replica};
use super::*;

/// What a tear does to a file before the cluster reopens.
pub(super) enum Damage {
    None,
    JournalCut(u64),
    JournalGarbage(u64),
    LogCut(Tp, Broker),
    LogGarbage(Tp, Broker),
}

impl Model {
    pub(super) fn crash(&mut self, damage: Damage) {
        self.generation += 1;
        for part in self.parts.values_mut() {
            for p in part.pending.drain(..) {
                self.mailbox.insert(p.id, Err(Failure::Crashed));
            }
        }
        let mut report = Recovery::default();
        self.truth.below_hw_lost.clear();
        // What each partition's consumers could read: the batches below the HW.
        let readable = |part: &Part| -> Vec<u64> {
            part.leader_log()[..part.hw as usize]
                .iter()
                .map(|b| b.uid)
                .collect()
        };
        let before: BTreeMap<Tp, Vec<u64>> = self
            .parts
            .iter()
            .map(|(tp, p)| (tp.clone(), readable(p)))
            .collect();
        // The journal frames that survive.
        let mut kept = self.coord.frames.len();
        match damage {
            Damage::None => {}
            Damage::JournalCut(n) => {
                let frames = &self.coord.frames;
                let total: u64 = frames.iter().map(TxData::line_len).sum();
                let len = total.saturating_sub(n);
                let mut end = 0;
                kept = 0;
                for f in frames {
                    if end + f.line_len() > len {
                        break;
                    }
                    end += f.line_len();
                    kept += 1;
                }
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
                    self.reelect_if_torn(&tp, b, &mut report);
                }
            }
            Damage::LogGarbage(tp, b) => {
                report.logs_truncated.push((tp_name(&tp), b));
                self.reelect_if_torn(&tp, b, &mut report);
            }
        }
        self.coord.reopen(kept);
        let (now, settings) = (self.clock, self.settings);
        for part in self.parts.values_mut() {
            part.reopen(now);
            part.judge_on_open(now, &settings);
        }
        for (tp, part) in &self.parts {
            let was = &before[tp];
            let now = readable(part);
            if now.len() < was.len() || now[..was.len()] != was[..] {
                self.truth.below_hw_lost.push(tp.clone());
            }
        }
        self.cursors.clear();
        // Markers are found in the leaders' logs whenever they are asked
        // for (`txn.rs`): nothing to rebuild.
        let current: Vec<usize> = self.coord.current().into_values().collect();
        for index in current {
            let d = self.coord.instance(index);
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
}

impl Model {
    /// A torn leader replica (its tail cut, or garbage cut after its last
    /// frame) is replaced on open by the most up-to-date replica: the
    /// highest (leader epoch of the last batch, LEO); a tie keeps the
    /// leader, else the first in assignment order; the winner leads under
    /// the next epoch (E2, E13, engine-decisions.md). Acknowledged writes
    /// only the torn leader held are lost, outside the promise.
    fn reelect_if_torn(&mut self, tp: &Tp, torn: Broker, report: &mut Recovery) {
        let part = self.parts.get_mut(tp).expect("a partition");
        if torn != part.leader {
            return;
        }
        let rank = |b: &Broker| {
            let log = &part.replicas[b].log;
            (log.last().map(|batch| batch.epoch), log.len())
        };
        let best = part.assignment.iter().map(rank).max().expect("a replica");
        let winner = if rank(&part.leader) == best {
            part.leader
        } else {
            *part
                .assignment
                .iter()
                .find(|b| rank(b) == best)
                .expect("a best replica")
        };
        if winner != part.leader {
            report
                .leaders_reelected
                .push((tp_name(tp), part.leader, winner, part.epoch + 1));
            part.leader = winner;
            part.epoch += 1;
        }
        let log = part.leader_log();
        let held = |w: &Written| {
            log.get(w.offset as usize).is_some_and(
                |b| matches!(&b.payload, Payload::Data { value, .. } if *value == w.value),
            )
        };
        // What the torn leader alone held before the tear is gone; what a
        // surviving replica held must be in the new leader's log (checked
        // by the invariants, not excused here).
        let others: Vec<&Replica> = part
            .replicas
            .iter()
            .filter(|(b, _)| **b != torn)
            .map(|(_, r)| r)
            .collect();
        let on_other = |w: &Written| {
            others.iter().any(|r| {
                r.log.get(w.offset as usize).is_some_and(
                    |b| matches!(&b.payload, Payload::Data { value, .. } if *value == w.value),
                )
            })
        };
        let (lost, kept): (Vec<Written>, Vec<Written>) = std::mem::take(&mut self.truth.acked)
            .into_iter()
            .partition(|w| w.tp == *tp && !held(w) && !on_other(w));
        self.truth.acked = kept;
        self.truth.lost.extend(lost);
    }
}
