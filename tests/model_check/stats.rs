//! What the model-based cases exercised, to judge the generator: counts
//! printed with `--nocapture` and checked by the long runs.

use std::collections::BTreeMap;

use minikafka::session::{Action, Outcome, Snapshot};

use crate::model::Model;
use crate::model::replication::Payload;

/// What a run exercised, to judge the generator's coverage.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    pub cases: u64,
    pub steps: u64,
    pub skipped: u64,
    pub by_action: BTreeMap<&'static str, u64>,
    pub errors: BTreeMap<String, u64>,
    pub pending: u64,
    pub committed_visible: u64,
    pub aborted_hidden: u64,
    pub cut_crashes: u64,
    pub recovered: u64,
    pub markers_resent: u64,
    pub journal_cut: u64,
    pub logs_cut: u64,
    pub promotions: u64,
    pub offsets_committed: u64,
    pub expired: u64,
    pub fenced: u64,
    pub resumed_markers: u64,
    pub acks_failed: u64,
    pub orphans: u64,
    /// Sends the client saw fail whose record read_committed shows (their
    /// instance committed anyway: see docs/reliability.md).
    pub failed_sends_visible: u64,
    /// Leader logs that rolled past one segment.
    pub rolled_logs: u64,
    /// Tears of a leader's log (cut or garbage).
    pub leader_tears: u64,
    /// Torn leaders replaced by a more up-to-date replica on open.
    pub reelections: u64,
    /// Acknowledged writes lost with a torn leader that alone held them.
    pub acked_lost: u64,
    /// Recoveries that lost records below a partition's HW (a torn leader
    /// alone held them).
    pub below_hw_lost: u64,
}

impl Stats {
    pub fn add(&mut self, o: &Stats) {
        self.cases += o.cases;
        self.steps += o.steps;
        self.skipped += o.skipped;
        for (k, v) in &o.by_action {
            *self.by_action.entry(k).or_default() += v;
        }
        for (k, v) in &o.errors {
            *self.errors.entry(k.clone()).or_default() += v;
        }
        self.pending += o.pending;
        self.committed_visible += o.committed_visible;
        self.aborted_hidden += o.aborted_hidden;
        self.cut_crashes += o.cut_crashes;
        self.recovered += o.recovered;
        self.markers_resent += o.markers_resent;
        self.journal_cut += o.journal_cut;
        self.logs_cut += o.logs_cut;
        self.promotions += o.promotions;
        self.offsets_committed += o.offsets_committed;
        self.expired += o.expired;
        self.fenced += o.fenced;
        self.resumed_markers += o.resumed_markers;
        self.acks_failed += o.acks_failed;
        self.orphans += o.orphans;
        self.failed_sends_visible += o.failed_sends_visible;
        self.rolled_logs += o.rolled_logs;
        self.leader_tears += o.leader_tears;
        self.reelections += o.reelections;
        self.acked_lost += o.acked_lost;
        self.below_hw_lost += o.below_hw_lost;
    }

    /// Counts what a finished case's model saw: every error (also those of
    /// operations that failed after they were pending), the rarer paths,
    /// and transactional batches no instance owns.
    pub fn finish(&mut self, m: &Model) {
        for (_, f) in &m.errors {
            *self.errors.entry(format!("{f:?}")).or_default() += 1;
        }
        let c = &m.coverage;
        self.expired += c.expired;
        self.fenced += c.fenced;
        self.resumed_markers += c.resumed_markers;
        self.acks_failed += c.acks_failed;
        self.acked_lost += m.truth.lost.len() as u64;
        for w in &m.truth.failed_sends {
            if !m.parts[&w.tp].leader_stopped() && m.consumers(&w.tp).1.contains(&w.value) {
                self.failed_sends_visible += 1;
            }
        }
        for (tp, part) in &m.parts {
            for (o, b) in part.leader_log().iter().enumerate() {
                if let Payload::Data { txn: Some(_), .. } = &b.payload {
                    let owner = m.coord.owner(tp, o as i64, part.leader_log());
                    self.orphans += u64::from(owner.is_none());
                }
            }
        }
    }

    /// Counts one step's action and outcome.
    pub fn count(&mut self, action: &Action, outcome: &Outcome) {
        let s = self;
        s.steps += 1;
        *s.by_action.entry(action.name()).or_default() += 1;
        if *outcome == Outcome::Pending {
            s.pending += 1;
        }
        match action {
            Action::Commit {
                crash_after: Some(_),
                ..
            }
            | Action::Abort {
                crash_after: Some(_),
                ..
            } if matches!(outcome, Outcome::Recovered(_)) => s.cut_crashes += 1,
            Action::Promote { .. } if *outcome == Outcome::Ok => s.promotions += 1,
            _ => {}
        }
    }

    /// Counts what the state after a step shows (`crashed`: the step
    /// crashed the cluster, so its recovery report is new).
    pub fn count_state(&mut self, state: &Snapshot, crashed: bool) {
        let s = self;
        if let Some(r) = state.last_recovery.as_ref().filter(|_| crashed) {
            s.recovered += r.completed.len() as u64;
            s.markers_resent += r.markers_resent.len() as u64;
            s.journal_cut += u64::from(r.journal_truncated_bytes > 0);
            s.logs_cut += r.logs_truncated.len() as u64;
            s.reelections += r.leaders_reelected.len() as u64;
        }
        for part in &state.partitions {
            for b in &part.batches {
                if b.transactional_id.is_some() && b.kind == "data" {
                    let value = b.records[0].value.clone();
                    let rc = &state.consumers.read_committed
                        [&format!("{}-{}", part.topic, part.partition)];
                    if rc.contains(&value) {
                        s.committed_visible += 1;
                    } else if b.last_offset < part.last_stable_offset {
                        s.aborted_hidden += 1;
                    }
                }
            }
        }
        s.offsets_committed += state
            .committed_offsets
            .values()
            .map(|g| g.len() as u64)
            .sum::<u64>();
    }
}
