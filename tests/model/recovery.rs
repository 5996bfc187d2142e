//! The model's crash, tear and recovery (E12, E13): pending work fails,
//! the damaged file loses its tail, the cluster reopens from what is left,
//! PREPARE_* transactions complete, and (kafka rules) markers are re-sent
//! and timed-out transactions abort.

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
}
