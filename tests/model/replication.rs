//! The model of one partition's replicas (SPEC E4-E6 and the choices in
//! `docs/engine-decisions.md` "ISR, HW and time"), written from the rules,
//! not from the engine's code.
//!
//! Every batch the driver writes holds one record (a produce, a send, a
//! marker), and nothing deletes old segments, so a replica's log is a vector
//! whose index is the offset.

use std::collections::{BTreeMap, BTreeSet};

use super::Failure;

pub type Broker = u32;

/// What a batch holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payload {
    Data { value: String, txn: Option<String> },
    Marker { txn: String, commit: bool },
}

/// One batch in a replica's log.
#[derive(Debug, Clone)]
pub struct Batch {
    pub epoch: u32,
    /// One append: copies of a batch share it, two appends never do (the
    /// engine tells batches apart by offsets, epoch and CRC; in one leader
    /// epoch an offset is written once, so this is the same identity).
    pub uid: u64,
    pub payload: Payload,
    /// Producer id and epoch (-1, -1 when none).
    pub producer: (i64, i32),
    /// Ground truth, for the invariants: the transaction instance that
    /// wrote the batch (transactional data and markers).
    pub writer: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct Replica {
    pub log: Vec<Batch>,
    pub last_fetch: u64,
    /// The leader epoch this replica last fetched under (the leader's own
    /// is the current epoch).
    pub epoch_seen: Option<u32>,
    pub stopped: bool,
}

/// An acks=all append waiting for replication.
#[derive(Debug, Clone)]
pub struct PendingAck {
    pub id: u64,
    pub offset: i64,
    /// The ISR when the append was made.
    pub required: BTreeSet<Broker>,
}

/// The replication settings of a case.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub lag_time_ms: u64,
    pub lag_max_offsets: i64,
    pub min_isr: usize,
    /// Kafka rules: acks=all completes when the HW passes the batch.
    pub ack_by_hw: bool,
    /// The book's rules: the ISR changes only after followers fetch (one
    /// refresh per fetch round), and a promotion leaves the new leader
    /// alone in it (docs/book-differences.md).
    pub isr_at_fetch: bool,
}

/// Settled acks=all appends: ack id -> outcome.
pub type Mailbox = BTreeMap<u64, Result<(), Failure>>;

#[derive(Debug, Clone)]
pub struct Part {
    pub assignment: Vec<Broker>,
    pub replicas: BTreeMap<Broker, Replica>,
    pub leader: Broker,
    pub epoch: u32,
    pub isr: BTreeSet<Broker>,
    pub hw: i64,
    pub pending: Vec<PendingAck>,
}

fn leo(r: &Replica) -> i64 {
    r.log.len() as i64
}

impl Part {
    /// A new partition: every replica in sync, HW 0, epoch 0.
    pub fn new(assignment: Vec<Broker>, now: u64) -> Self {
        let leader = assignment[0];
        let replicas = assignment
            .iter()
            .map(|&b| {
                (
                    b,
                    Replica {
                        log: Vec::new(),
                        last_fetch: now,
                        epoch_seen: (b == leader).then_some(0),
                        stopped: false,
                    },
                )
            })
            .collect();
        Self {
            isr: assignment.iter().copied().collect(),
            assignment,
            replicas,
            leader,
            epoch: 0,
            hw: 0,
            pending: Vec::new(),
        }
    }

    pub fn leader_log(&self) -> &[Batch] {
        &self.replicas[&self.leader].log
    }

    pub fn leader_leo(&self) -> i64 {
        leo(&self.replicas[&self.leader])
    }

    pub fn leader_stopped(&self) -> bool {
        self.replicas[&self.leader].stopped
    }

    pub fn followers(&self) -> Vec<Broker> {
        self.assignment
            .iter()
            .copied()
            .filter(|&b| b != self.leader)
            .collect()
    }

    /// Where `b`'s log stops agreeing with the leader's: after its last
    /// batch the leader holds identically.
    fn divergence(&self, b: Broker) -> i64 {
        let leader = self.leader_log();
        let log = &self.replicas[&b].log;
        (0..log.len())
            .rev()
            .find(|&o| leader.get(o).is_some_and(|l| l.uid == log[o].uid))
            .map_or(0, |o| o as i64 + 1)
    }

    /// What the leader may count for `b`: its LEO once it fetched under
    /// this epoch, else no more than the HW and the divergence point.
    fn effective_leo(&self, b: Broker) -> i64 {
        let r = &self.replicas[&b];
        if r.epoch_seen == Some(self.epoch) {
            leo(r)
        } else {
            leo(r).min(self.hw).min(self.divergence(b))
        }
    }

    fn in_sync(&self, b: Broker, now: u64, s: &Settings) -> bool {
        if b == self.leader {
            return true;
        }
        let r = &self.replicas[&b];
        if r.stopped && r.epoch_seen.is_some_and(|e| e < self.epoch) {
            return false;
        }
        let eff = self.effective_leo(b);
        self.leader_leo() - eff <= s.lag_max_offsets
            && now.saturating_sub(r.last_fetch) <= s.lag_time_ms
            && eff >= self.hw
    }

    fn has_batch(&self, b: Broker, offset: i64) -> bool {
        self.replicas
            .get(&b)
            .is_some_and(|r| r.epoch_seen == Some(self.epoch) && leo(r) > offset)
    }

    /// The HW over the ISR (the book's rules) or ISR and HW to a fixed point
    /// (kafka rules), then pending acks settle. A stopped leader freezes the
    /// partition.
    pub fn update(&mut self, now: u64, s: &Settings, mailbox: &mut Mailbox) {
        if self.leader_stopped() {
            return;
        }
        if s.isr_at_fetch {
            let min = self
                .isr
                .iter()
                .map(|&b| self.effective_leo(b))
                .min()
                .unwrap_or(self.hw);
            self.hw = self.hw.max(min);
        } else {
            self.settle_isr(now, s);
        }
        self.settle_acks(s, mailbox);
    }

    /// Kafka rules: ISR and HW to a fixed point.
    fn settle_isr(&mut self, now: u64, s: &Settings) {
        loop {
            let isr: BTreeSet<Broker> = self
                .assignment
                .iter()
                .copied()
                .filter(|&b| self.in_sync(b, now, s))
                .collect();
            let min = isr
                .iter()
                .map(|&b| self.effective_leo(b))
                .min()
                .unwrap_or(self.hw);
            let hw = self.hw.max(min);
            if isr == self.isr && hw == self.hw {
                break;
            }
            self.isr = isr;
            self.hw = hw;
        }
    }

    /// Pending acks complete or fail.
    fn settle_acks(&mut self, s: &Settings, mailbox: &mut Mailbox) {
        let pending = std::mem::take(&mut self.pending);
        for p in pending {
            let done = self.hw > p.offset
                && (s.ack_by_hw || p.required.iter().all(|&b| self.has_batch(b, p.offset)));
            let short = self.isr.len() < s.min_isr;
            if done && !(s.isr_at_fetch && short) {
                mailbox.insert(p.id, Ok(()));
            } else if short {
                mailbox.insert(p.id, Err(Failure::NotEnoughReplicasAfterAppend));
            } else {
                self.pending.push(p);
            }
        }
    }

    /// Appends one batch on the leader. Returns its offset and, for
    /// acks=all, the id of the wait.
    #[allow(clippy::too_many_arguments)]
    pub fn append(
        &mut self,
        payload: Payload,
        acks_all: bool,
        producer: (i64, i32),
        writer: Option<usize>,
        uid: u64,
        now: u64,
        s: &Settings,
        mailbox: &mut Mailbox,
    ) -> Result<(i64, Option<u64>), Failure> {
        self.update(now, s, mailbox);
        if self.leader_stopped() {
            return Err(Failure::LeaderNotAvailable);
        }
        if acks_all && self.isr.len() < s.min_isr {
            return Err(Failure::NotEnoughReplicas);
        }
        let offset = self.leader_leo();
        let epoch = self.epoch;
        let leader = self.leader;
        self.replicas
            .get_mut(&leader)
            .expect("leader")
            .log
            .push(Batch {
                epoch,
                uid,
                payload,
                producer,
                writer,
            });
        if !acks_all {
            self.update(now, s, mailbox);
            return Ok((offset, None));
        }
        Ok((offset, Some(self.wait(offset, uid, now, s, mailbox))))
    }

    /// An acks=all wait on the current ISR for a batch at `offset`, with
    /// `id` as its name.
    pub fn wait(&mut self, offset: i64, id: u64, now: u64, s: &Settings, mb: &mut Mailbox) -> u64 {
        self.pending.push(PendingAck {
            id,
            offset,
            required: self.isr.clone(),
        });
        self.update(now, s, mb);
        id
    }

    /// The book's `refresh_isr`: after followers fetched, the ISR in one
    /// pass against the HW before it, then the HW and acks (kafka rules:
    /// [`Self::update`]).
    fn refresh(&mut self, now: u64, s: &Settings, mb: &mut Mailbox) {
        if s.isr_at_fetch && !self.leader_stopped() {
            self.isr = self
                .assignment
                .iter()
                .copied()
                .filter(|&b| self.in_sync(b, now, s))
                .collect();
        }
        self.update(now, s, mb);
    }

    /// One fetch by follower `b`, then a refresh if it fetched.
    pub fn fetch(
        &mut self,
        b: Broker,
        now: u64,
        s: &Settings,
        mb: &mut Mailbox,
    ) -> Result<(), Failure> {
        if self.fetch_only(b, now)? {
            self.refresh(now, s, mb);
        }
        Ok(())
    }

    /// The fetch itself: false when nothing fetched.
    fn fetch_only(&mut self, b: Broker, now: u64) -> Result<bool, Failure> {
        let Some(r) = self.replicas.get(&b) else {
            return Err(Failure::UnknownTopicOrPartition);
        };
        if b == self.leader || r.stopped || self.leader_stopped() {
            return Ok(false);
        }
        let leader_leo = self.leader_leo();
        if r.epoch_seen != Some(self.epoch) || leo(r) > leader_leo {
            let keep = self.divergence(b) as usize;
            let epoch = self.epoch;
            let r = self.replicas.get_mut(&b).expect("checked");
            r.log.truncate(keep);
            r.epoch_seen = Some(epoch);
        }
        let from = leo(&self.replicas[&b]) as usize;
        let copy: Vec<Batch> = self.leader_log()[from.min(leader_leo as usize)..].to_vec();
        let r = self.replicas.get_mut(&b).expect("checked");
        r.log.extend(copy);
        r.last_fetch = now;
        Ok(true)
    }

    /// One fetch by every follower, in assignment order: the book refreshes
    /// once after all of them, the kafka rules after each.
    pub fn fetch_all(&mut self, now: u64, s: &Settings, mb: &mut Mailbox) {
        for b in self.assignment.clone() {
            if s.isr_at_fetch {
                self.fetch_only(b, now).expect("a replica");
            } else {
                self.fetch(b, now, s, mb).expect("a replica");
            }
        }
        if s.isr_at_fetch {
            self.refresh(now, s, mb);
        }
    }

    /// Makes `b` the leader: only a running ISR member.
    pub fn promote(
        &mut self,
        b: Broker,
        now: u64,
        s: &Settings,
        mb: &mut Mailbox,
    ) -> Result<(), Failure> {
        self.update(now, s, mb);
        let Some(r) = self.replicas.get(&b) else {
            return Err(Failure::InvalidPromotion);
        };
        if b == self.leader || r.stopped || !self.isr.contains(&b) {
            return Err(Failure::InvalidPromotion);
        }
        self.epoch += 1;
        self.leader = b;
        for p in std::mem::take(&mut self.pending) {
            mb.insert(p.id, Err(Failure::NotLeaderOrFenced));
        }
        for r in self.replicas.values_mut().filter(|r| !r.stopped) {
            r.last_fetch = now;
        }
        let epoch = self.epoch;
        self.replicas.get_mut(&b).expect("checked").epoch_seen = Some(epoch);
        if s.isr_at_fetch {
            self.isr = BTreeSet::from([b]);
        }
        self.update(now, s, mb);
        Ok(())
    }

    /// Reopened after a crash: every replica running, in the ISR, fetched
    /// now; followers have not fetched under this epoch; the checkpointed
    /// HW, clamped to the leader's log.
    pub fn reopen(&mut self, now: u64) {
        let epoch = self.epoch;
        let leader = self.leader;
        for (&b, r) in &mut self.replicas {
            r.last_fetch = now;
            r.stopped = false;
            r.epoch_seen = (b == leader).then_some(epoch);
        }
        self.isr = self.assignment.iter().copied().collect();
        self.hw = self.hw.clamp(0, self.leader_leo());
        self.pending.clear();
    }

    /// The book's rules judge the ISR once on open (`reopen` then this).
    pub fn judge_on_open(&mut self, now: u64, s: &Settings) {
        if s.isr_at_fetch {
            self.isr = self
                .assignment
                .iter()
                .copied()
                .filter(|&b| self.in_sync(b, now, s))
                .collect();
        }
    }

    /// The brokers a wait on `offset` still needs (the pending pane).
    pub fn waiting_for(&self, offset: i64) -> Vec<Broker> {
        self.pending
            .iter()
            .filter(|p| p.offset == offset)
            .flat_map(|p| {
                p.required
                    .iter()
                    .copied()
                    .filter(|&b| !self.has_batch(b, p.offset))
            })
            .collect()
    }
}
