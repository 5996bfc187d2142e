//! `PartitionReplicaSet` (E4-E6): the replicas of one partition, its leader
//! and leader epoch, the ISR, the high watermark and pending `acks=all`
//! appends.
//!
//! Everything is evaluated at an explicit `now_ms` from the cluster's clock, so
//! the ISR and HW are a pure function of the actions applied. The methods
//! follow the book's order; what the dashboard and the Kafka edge read is in
//! `repl_support/readers.rs`, a time-travel checkpoint's memo in
//! `time_travel/replication.rs`.

use std::collections::{BTreeMap, BTreeSet};

use tokio::sync::oneshot;

use crate::engine::config::{AcksAllCompletion, BrokerId, IsrEvaluation};
use crate::engine::core::batch::RecordBatch;
use crate::engine::core::codec::Stamp;
use crate::engine::core::metadata::{TimestampType, TopicPartition};
use crate::engine::core::record::ConsumerRecord;
use crate::engine::error::{MiniKafkaError, Result};
use crate::engine::log::FetchedFrames;
use crate::engine::producer::SequenceCheck;
use crate::engine::replication::model::{
    AckMode, AppendFuture, AppendResult, IsolationLevel, TransactionVisibility,
};
use crate::engine::replication::replica::Replica;

/// The replication settings of MiniKafkaConfig that a replica set applies.
#[derive(Debug, Clone, Copy)]
pub struct ReplicationSettings {
    pub replica_lag_max_offsets: u64,
    pub replica_lag_time_ms: u64,
    pub replica_fetch_max_bytes: u64,
    pub min_insync_replicas: usize,
    pub acks_all_completion: AcksAllCompletion,
    pub isr_evaluation: IsrEvaluation,
}

/// An `acks=all` append waiting for replication (E5).
#[derive(Debug)]
pub(crate) struct PendingAppend {
    pub(crate) base_offset: i64,
    pub(crate) last_offset: i64,
    pub(crate) leader_epoch: u32,
    /// The ISR captured at append time.
    pub(crate) required: BTreeSet<BrokerId>,
    pub(crate) result: AppendResult,
    pub(crate) reply: oneshot::Sender<Result<AppendResult>>,
}

/// What one follower fetch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FetchOutcome {
    /// Batches copied from the leader.
    pub batches: usize,
    /// Bytes of a divergent tail removed before fetching (E6).
    pub truncated_bytes: u64,
}

impl FetchOutcome {
    /// Adds another fetch's counts.
    pub fn add(&mut self, other: FetchOutcome) {
        self.batches += other.batches;
        self.truncated_bytes += other.truncated_bytes;
    }
}

/// The replicas of one partition and their replication state.
#[derive(Debug)]
pub struct PartitionReplicaSet {
    pub(crate) tp: TopicPartition,
    /// Brokers in assignment order; the first was the initial leader.
    pub(crate) assignment: Vec<BrokerId>,
    pub(crate) replicas: BTreeMap<BrokerId, Replica>,
    pub(crate) leader_id: BrokerId,
    pub(crate) leader_epoch: u32,
    pub(crate) isr: BTreeSet<BrokerId>,
    pub(crate) high_watermark: i64,
    pub(crate) pending: Vec<PendingAppend>,
    pub(crate) settings: ReplicationSettings,
    /// The topic's timestamp type: LogAppendTime has the leader stamp
    /// every record it appends with its clock.
    pub(crate) timestamp_type: TimestampType,
    /// The buffer followers' fetches read the leader's frames into, reused
    /// from one fetch to the next; no state (empty between fetches).
    pub(crate) fetch_buffer: FetchedFrames,
}

impl PartitionReplicaSet {
    /// Assembles a replica set from opened replicas. Every replica starts in
    /// the ISR with its last fetch at `now_ms`; followers count as holding no
    /// more than `high_watermark` until they fetch under this leader epoch.
    pub fn new(
        tp: TopicPartition,
        assignment: Vec<BrokerId>,
        replicas: Vec<Replica>,
        leader_id: BrokerId,
        leader_epoch: u32,
        high_watermark: i64,
        settings: ReplicationSettings,
    ) -> Self {
        let mut replicas: BTreeMap<BrokerId, Replica> =
            replicas.into_iter().map(|r| (r.broker, r)).collect();
        let leader = replicas.get_mut(&leader_id).expect("leader is a replica");
        leader.leader_epoch_seen = Some(leader_epoch);
        let leo = leader.leo();
        let start = leader.log.log_start_offset();
        let now_ms = leader.last_fetch_ms;
        let mut set = Self {
            tp,
            isr: replicas.keys().copied().collect(),
            assignment,
            replicas,
            leader_id,
            leader_epoch,
            high_watermark: high_watermark.clamp(start, leo),
            pending: Vec::new(),
            settings,
            timestamp_type: TimestampType::CreateTime,
            fetch_buffer: FetchedFrames::default(),
        };
        if set.settings.isr_evaluation == IsrEvaluation::AtFetch {
            // The book judges the ISR once when it opens (replicas level with
            // the leader); nothing would judge it again before the next
            // fetch, so a follower a torn tail left below the HW must not
            // stay promotable until then (found by tests/model_based.rs).
            set.isr = set
                .replicas
                .values()
                .filter(|r| set.caught_up(r, now_ms))
                .map(|r| r.broker)
                .collect();
        }
        set
    }

    /// The same set, stamping appends as `timestamp_type` says (the
    /// topic's, from its metadata).
    pub fn with_timestamp_type(mut self, timestamp_type: TimestampType) -> Self {
        self.timestamp_type = timestamp_type;
        self
    }

    /// How many replicas an acks=all append needs in the ISR (the
    /// topic's `min.insync.replicas`, else the cluster's).
    pub fn min_insync_replicas(&self) -> usize {
        self.settings.min_insync_replicas
    }

    /// Applies a topic's new `min.insync.replicas` (an
    /// `alter_topic_config`): the next append is judged by it, and so is
    /// the completion of an acks=all append still waiting, as Kafka judges
    /// it by the topic's config when it completes.
    pub(crate) fn set_min_insync_replicas(&mut self, n: usize) {
        self.settings.min_insync_replicas = n;
    }

    /// The current leader.
    pub fn leader_id(&self) -> BrokerId {
        self.leader_id
    }

    /// The leader's replica.
    pub fn leader(&self) -> &Replica {
        &self.replicas[&self.leader_id]
    }

    /// In-sync replicas, leader included.
    pub fn isr(&self) -> &BTreeSet<BrokerId> {
        &self.isr
    }

    /// Appends a batch on the leader (E5, E6, E7).
    ///
    /// Refused before appending: a stopped leader, a stale `expected_epoch`
    /// (fencing), `acks=all` with the ISR below the minimum, and idempotent
    /// sequence errors. An exact idempotent retry answers with the original
    /// offsets. The leader assigns the base offset and stamps its epoch.
    pub fn append(
        &mut self,
        mut batch: RecordBatch,
        acks: AckMode,
        now_ms: u64,
        expected_epoch: Option<u32>,
    ) -> Result<AppendFuture> {
        self.update(now_ms);
        if self.leader().stopped {
            return Err(MiniKafkaError::LeaderNotAvailable {
                tp: self.tp.to_string(),
                broker: self.leader_id,
            });
        }
        if let Some(epoch) = expected_epoch.filter(|&e| e != self.leader_epoch) {
            return Err(MiniKafkaError::FencedLeaderEpoch {
                tp: self.tp.to_string(),
                request: epoch,
                current: self.leader_epoch,
            });
        }
        if acks == AckMode::All && self.isr.len() < self.settings.min_insync_replicas {
            return Err(MiniKafkaError::NotEnoughReplicas {
                tp: self.tp.to_string(),
                isr: self.isr.len(),
                min: self.settings.min_insync_replicas,
            });
        }
        // The record rules are checked while the frame is encoded (one walk
        // over the records, P3); a refusal before it checks them first, so
        // that an invalid batch is refused as invalid, as it was when the
        // whole batch was validated here.
        batch.validate_batch()?;
        let check = self.leader().producer_state.check(&self.tp, &batch);
        if !matches!(check, Ok(SequenceCheck::Append)) {
            batch.validate_records()?;
        }
        if let SequenceCheck::Duplicate {
            base_offset,
            last_offset,
        } = check?
        {
            let result = AppendResult {
                offsets: (acks != AckMode::None).then_some((base_offset, last_offset)),
                duplicate: true,
            };
            if acks != AckMode::All {
                return Ok(AppendFuture::ready(Ok(result)));
            }
            // An acks=all retry is answered when the original batch satisfies
            // acks=all, exactly as the original would have been.
            return Ok(self.wait_for_acks(base_offset, last_offset, result, now_ms));
        }
        batch.base_offset = self.leader_leo();
        batch.leader_epoch = self.leader_epoch;
        // The records' timestamps are set in the frame as it is encoded.
        let stamp = match self.timestamp_type {
            TimestampType::CreateTime => Stamp::Unset(now_ms as i64),
            TimestampType::LogAppendTime => Stamp::All(now_ms as i64),
        };
        let leader = self.leader_id;
        let summary = self
            .replicas
            .get_mut(&leader)
            .expect("leader is a replica")
            .append_stamped(&batch, stamp)?;
        let result = AppendResult {
            offsets: (acks != AckMode::None).then_some((summary.base_offset, summary.last_offset)),
            duplicate: false,
        };
        if acks != AckMode::All {
            self.update(now_ms);
            return Ok(AppendFuture::ready(Ok(result)));
        }
        Ok(self.wait_for_acks(summary.base_offset, summary.last_offset, result, now_ms))
    }

    /// An `acks=all` wait for a batch already in the leader's log (a marker
    /// found there when a completion resumes): it completes like the
    /// original append would have.
    pub fn await_replication(
        &mut self,
        base_offset: i64,
        last_offset: i64,
        now_ms: u64,
    ) -> AppendFuture {
        let result = AppendResult {
            offsets: Some((base_offset, last_offset)),
            duplicate: true,
        };
        self.wait_for_acks(base_offset, last_offset, result, now_ms)
    }

    /// Registers an `acks=all` wait on the current ISR for a logged batch.
    fn wait_for_acks(
        &mut self,
        base_offset: i64,
        last_offset: i64,
        result: AppendResult,
        now_ms: u64,
    ) -> AppendFuture {
        let (reply, receiver) = oneshot::channel();
        self.pending.push(PendingAppend {
            base_offset,
            last_offset,
            leader_epoch: self.leader_epoch,
            required: self.isr.clone(),
            result,
            reply,
        });
        self.update(now_ms);
        AppendFuture::waiting(receiver)
    }

    /// One fetch by every follower, in assignment order (E4). Under the
    /// book's rules the ISR is refreshed once, after all of them fetched
    /// (its `fetch_followers_once`); under the kafka rules after each.
    /// A follower that fails does not stop the others; the first error is
    /// returned after all have fetched.
    pub fn fetch_followers_once(&mut self, now_ms: u64) -> Result<FetchOutcome> {
        let mut total = FetchOutcome::default();
        let mut first_error = None;
        let by_clock = self.settings.isr_evaluation == IsrEvaluation::ByClock;
        for broker in self.assignment.clone() {
            let fetched = if by_clock {
                self.replicate_follower(broker, now_ms).map(Some)
            } else {
                self.fetch_one(broker, now_ms)
            };
            match fetched {
                Ok(o) => total.add(o.unwrap_or_default()),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if !by_clock {
            self.refresh_isr(now_ms);
        }
        first_error.map_or(Ok(total), Err)
    }

    /// One fetch by one follower (E4). A stopped follower, a stopped leader, or
    /// the leader itself fetch nothing. A follower that has not fetched under
    /// the current leader epoch first truncates any tail past the HW, which
    /// may diverge from the new leader's log (E6).
    pub fn replicate_follower(&mut self, broker: BrokerId, now_ms: u64) -> Result<FetchOutcome> {
        let fetched = self.fetch_one(broker, now_ms)?;
        if fetched.is_some() {
            self.refresh_isr(now_ms);
        }
        Ok(fetched.unwrap_or_default())
    }

    /// The fetch itself, without re-evaluating the ISR: `None` when
    /// nothing fetched (a stopped follower or leader, the leader itself).
    fn fetch_one(&mut self, broker: BrokerId, now_ms: u64) -> Result<Option<FetchOutcome>> {
        let follower = self.replica(broker)?;
        if broker == self.leader_id || follower.stopped || self.leader().stopped {
            return Ok(None);
        }
        let mut outcome = FetchOutcome::default();
        let epoch_current = follower.leader_epoch_seen == Some(self.leader_epoch);
        let leader_leo = self.leader_leo();
        if !epoch_current || follower.leo() > leader_leo {
            let keep = self.divergence_point(broker);
            let follower = self.replicas.get_mut(&broker).expect("checked above");
            if keep < follower.leo() {
                outcome.truncated_bytes = follower.truncate_to(keep)?;
            }
            follower.leader_epoch_seen = Some(self.leader_epoch);
        }
        // The leader's log start (E16): a follower whose log ends before it
        // starts again there (Kafka's truncateFullyAndStartAt); one that
        // holds segments wholly below it deletes them (Kafka's follower
        // moves its log start to the leader's).
        let leader_start = self.leader().log.log_start_offset();
        let follower = self.replicas.get_mut(&broker).expect("checked above");
        if follower.leo() < leader_start {
            follower.truncate_fully_and_start_at(leader_start)?;
        } else {
            follower.delete_segments_below(leader_start)?;
        }
        let from = self.replicas[&broker].leo();
        // The leader's frames are copied as written: the follower checks
        // each (CRC, structure, offsets) and takes its state from the
        // headers, without decoding records.
        let mut fetched = std::mem::take(&mut self.fetch_buffer);
        let copied = self.copy_from_leader(broker, from, &mut fetched);
        fetched.clear();
        self.fetch_buffer = fetched;
        outcome.batches = copied?;
        let follower = self.replicas.get_mut(&broker).expect("checked above");
        follower.last_fetch_ms = now_ms;
        Ok(Some(outcome))
    }

    /// Reads the leader's frames from `from` (at most
    /// `replica_fetch_max_bytes`, at least one batch) into `fetched` and
    /// appends them to `broker`'s log; returns how many were appended.
    fn copy_from_leader(
        &mut self,
        broker: BrokerId,
        from: i64,
        fetched: &mut FetchedFrames,
    ) -> Result<usize> {
        if from < self.leader_leo() {
            self.leader().log.read_frames_into(
                from,
                self.settings.replica_fetch_max_bytes,
                fetched,
            )?;
        }
        self.replicas
            .get_mut(&broker)
            .expect("checked by fetch_one")
            .append_frames(fetched)
    }

    /// Where `broker`'s log stops agreeing with the leader's: the end of its
    /// last batch that the leader holds identically (offsets, epoch, CRC).
    /// Followers check this before their first fetch after a reopen or a
    /// leader change, so everything before a shared batch is shared too.
    fn divergence_point(&self, broker: BrokerId) -> i64 {
        let leader = &self.leader().log;
        let follower = &self.replicas[&broker].log;
        follower
            .batch_summaries()
            .iter()
            .rev()
            .find(|b| leader.holds(b))
            .map_or(follower.log_start_offset(), |b| b.last_offset + 1)
    }

    /// Ends every `acks=all` append still waiting here with
    /// `UnknownTopicOrPartition`: the partition's topic was deleted.
    pub(crate) fn end_pending_as_deleted(&mut self) {
        for p in std::mem::take(&mut self.pending) {
            let _ = p.reply.send(Err(MiniKafkaError::UnknownTopicOrPartition(
                self.tp.to_string(),
            )));
        }
    }

    /// Makes `broker` the leader (E6): only a running ISR member may lead. The
    /// leader epoch goes up; pending appends of the old epoch are fenced;
    /// followers must fetch under the new epoch before they count again.
    pub fn promote(&mut self, broker: BrokerId, now_ms: u64) -> Result<u32> {
        self.update(now_ms);
        let refuse = |reason: String| MiniKafkaError::InvalidPromotion {
            tp: self.tp.to_string(),
            broker,
            reason,
        };
        let replica = self
            .replicas
            .get(&broker)
            .ok_or_else(|| refuse("not a replica".into()))?;
        if broker == self.leader_id {
            return Err(refuse("already the leader".into()));
        }
        if replica.stopped {
            return Err(refuse("the broker is stopped".into()));
        }
        if !self.isr.contains(&broker) {
            let isr: Vec<String> = self.isr.iter().map(u32::to_string).collect();
            return Err(refuse(format!("not in the ISR [{}]", isr.join(","))));
        }
        let old = self.leader_epoch;
        self.leader_epoch += 1;
        self.leader_id = broker;
        for p in std::mem::take(&mut self.pending) {
            let _ = p.reply.send(Err(MiniKafkaError::NotLeaderOrFenced {
                tp: self.tp.to_string(),
                offset: p.base_offset,
                old: p.leader_epoch,
                new: self.leader_epoch,
            }));
        }
        for r in self.replicas.values_mut().filter(|r| !r.stopped) {
            r.last_fetch_ms = now_ms;
        }
        self.replicas
            .get_mut(&broker)
            .expect("checked above")
            .leader_epoch_seen = Some(self.leader_epoch);
        if self.settings.isr_evaluation == IsrEvaluation::AtFetch {
            // The book: the new leader is alone in the ISR until followers
            // fetch from it and the next refresh lets them back.
            self.isr = BTreeSet::from([broker]);
        }
        debug_assert!(old < self.leader_epoch);
        self.update(now_ms);
        Ok(self.leader_epoch)
    }

    /// Marks a broker's replica stopped or running (E6).
    pub fn set_stopped(&mut self, broker: BrokerId, stopped: bool, now_ms: u64) {
        if let Some(r) = self.replicas.get_mut(&broker) {
            r.stopped = stopped;
            r.down_at_creation &= stopped;
        }
        self.update(now_ms);
    }

    /// A new partition's replica on a broker that is stopped when the
    /// partition is created: stopped, and out of the ISR from the start (it
    /// never held the log), as Kafka leaves an offline broker out of a new
    /// partition's ISR. The leader stays in the ISR, stopped or not.
    pub fn open_stopped(&mut self, broker: BrokerId, now_ms: u64) {
        if let Some(r) = self.replicas.get_mut(&broker) {
            r.stopped = true;
            r.down_at_creation = true;
        }
        if broker != self.leader_id {
            self.isr.remove(&broker);
        }
        self.update(now_ms);
    }

    /// The book's `refresh_isr` (E4), run after followers fetch: the ISR
    /// becomes the leader and the followers caught up at `now_ms` (judged
    /// against the HW before this refresh, in one pass), then the HW
    /// advances and pending appends settle. Under the kafka rules it is
    /// [`Self::update`].
    fn refresh_isr(&mut self, now_ms: u64) {
        if self.settings.isr_evaluation == IsrEvaluation::ByClock || self.leader().stopped {
            return self.update(now_ms);
        }
        self.isr = self
            .replicas
            .values()
            .filter(|r| self.caught_up(r, now_ms))
            .map(|r| r.broker)
            .collect();
        self.update(now_ms);
    }

    /// Brings the HW and pending appends up to date at `now_ms`. Under
    /// [`IsrEvaluation::ByClock`] (kafka rules) the ISR is re-evaluated
    /// too, to a fixed point; under the book's [`IsrEvaluation::AtFetch`]
    /// only the HW moves (over the current ISR), as the book's
    /// `_advance_high_watermark`: its ISR changes only in
    /// [`Self::refresh_isr`], after followers fetch. While the leader is
    /// stopped nothing moves: nobody is there to track the followers.
    pub fn update(&mut self, now_ms: u64) {
        if self.leader().stopped {
            return;
        }
        if self.settings.isr_evaluation == IsrEvaluation::AtFetch {
            self.advance_high_watermark();
            self.settle_pending();
            return;
        }
        loop {
            let isr: BTreeSet<BrokerId> = self
                .replicas
                .values()
                .filter(|r| self.caught_up(r, now_ms))
                .map(|r| r.broker)
                .collect();
            let min_leo = isr
                .iter()
                .map(|b| self.effective_leo(&self.replicas[b]))
                .min()
                .unwrap_or(self.high_watermark);
            let hw = self.high_watermark.max(min_leo);
            if isr == self.isr && hw == self.high_watermark {
                break;
            }
            self.isr = isr;
            self.high_watermark = hw;
        }
        self.settle_pending();
    }

    /// E4: a follower is in sync when it is within `replica_lag_max_offsets`,
    /// has fetched within `replica_lag_time_ms`, and its LEO covers the HW.
    fn caught_up(&self, replica: &Replica, now_ms: u64) -> bool {
        if replica.broker == self.leader_id {
            return true;
        }
        if replica.stopped && replica.down_at_creation {
            return false;
        }
        if replica.stopped
            && replica
                .leader_epoch_seen
                .is_some_and(|e| e < self.leader_epoch)
        {
            // A stopped replica of an older epoch (the failed old leader, say)
            // is known dead to the controller that elected this leader.
            return false;
        }
        let leo = self.effective_leo(replica);
        let offset_lag = (self.leader_leo() - leo).max(0) as u64;
        offset_lag <= self.settings.replica_lag_max_offsets
            && now_ms.saturating_sub(replica.last_fetch_ms) <= self.settings.replica_lag_time_ms
            && leo >= self.high_watermark
    }

    /// The LEO the leader may count for `replica`: its real LEO once it has
    /// fetched under this epoch, else at most the HW (its tail may diverge).
    fn effective_leo(&self, replica: &Replica) -> i64 {
        let leo = replica.leo();
        if replica.leader_epoch_seen == Some(self.leader_epoch) {
            leo
        } else {
            // It may have rejoined the ISR without fetching (a reopen, a
            // restart): count only what provably matches the leader.
            leo.min(self.high_watermark)
                .min(self.divergence_point(replica.broker))
        }
    }

    pub(crate) fn leader_leo(&self) -> i64 {
        self.leader().leo()
    }

    /// The book's `_advance_high_watermark`: HW = max(HW, min LEO over the
    /// ISR as it stands).
    fn advance_high_watermark(&mut self) {
        let min_leo = self
            .isr
            .iter()
            .map(|b| self.effective_leo(&self.replicas[b]))
            .min()
            .unwrap_or(self.high_watermark);
        self.high_watermark = self.high_watermark.max(min_leo);
    }

    /// Completes pending appends that replication satisfied, and fails those
    /// whose ISR dropped below `min_insync_replicas` first (E5). Under the
    /// book's rules the ISR is checked first, as the book's
    /// `_resolve_ack_waiters` and Kafka's `checkEnoughReplicasReachOffset`
    /// do: a batch that every captured replica has still fails when the
    /// ISR is below the minimum when it would complete.
    fn settle_pending(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        let isr_first = self.settings.isr_evaluation == IsrEvaluation::AtFetch;
        for p in pending {
            let short = self.isr.len() < self.settings.min_insync_replicas;
            if self.is_satisfied(&p) && !(isr_first && short) {
                let _ = p.reply.send(Ok(p.result));
            } else if short {
                let _ = p
                    .reply
                    .send(Err(MiniKafkaError::NotEnoughReplicasAfterAppend {
                        tp: self.tp.to_string(),
                        offset: p.base_offset,
                        isr: self.isr.len(),
                        min: self.settings.min_insync_replicas,
                    }));
            } else {
                self.pending.push(p);
            }
        }
    }

    fn is_satisfied(&self, p: &PendingAppend) -> bool {
        match self.settings.acks_all_completion {
            // The captured ISR must have the batch (the book), and the HW must
            // have passed it: a replica that joined the ISR since, without
            // the batch, could otherwise be promoted and lose an acked write.
            AcksAllCompletion::CapturedIsr => {
                self.high_watermark > p.last_offset
                    && p.required.iter().all(|&b| self.has_batch(b, p.last_offset))
            }
            AcksAllCompletion::HighWatermark => self.high_watermark > p.last_offset,
        }
    }

    pub(crate) fn has_batch(&self, broker: BrokerId, last_offset: i64) -> bool {
        self.replicas.get(&broker).is_some_and(|r| {
            r.leader_epoch_seen == Some(self.leader_epoch) && r.leo() > last_offset
        })
    }

    /// Consumer fetch through the leader (E4, E11): up to the HW for
    /// `read_uncommitted`; up to the LSO, without control batches and
    /// uncommitted transactional data, for `read_committed`.
    pub fn fetch(
        &self,
        offset: i64,
        max_records: usize,
        isolation: IsolationLevel,
        visibility: &dyn TransactionVisibility,
    ) -> Result<Vec<ConsumerRecord>> {
        self.fetch_until(offset, max_records, isolation, visibility, i64::MAX)
    }

    /// As [`Self::fetch`], reading no batch at or past `end_cap`: a caller
    /// that draws a screen bounds the scan by what it can show, whatever
    /// the isolation filter skips.
    pub fn fetch_until(
        &self,
        offset: i64,
        max_records: usize,
        isolation: IsolationLevel,
        visibility: &dyn TransactionVisibility,
        end_cap: i64,
    ) -> Result<Vec<ConsumerRecord>> {
        let leader = self.leader();
        if leader.stopped {
            return Err(MiniKafkaError::LeaderNotAvailable {
                tp: self.tp.to_string(),
                broker: self.leader_id,
            });
        }
        let log = &leader.log;
        let (start, leo) = (log.log_start_offset(), log.leo());
        if offset < start || offset > leo {
            return Err(MiniKafkaError::OffsetOutOfRange {
                what: self.tp.to_string(),
                offset,
                start,
                end: leo,
            });
        }
        match isolation {
            IsolationLevel::ReadUncommitted => log.fetch_filtered(
                offset,
                max_records,
                self.high_watermark.min(end_cap),
                |_| true,
            ),
            IsolationLevel::ReadCommitted => {
                let lso = visibility
                    .last_stable_offset(&self.tp, self.high_watermark)
                    .min(self.high_watermark);
                log.fetch_filtered(offset, max_records, lso.min(end_cap), |b| {
                    !b.is_transactional() || visibility.is_committed(&self.tp, b)
                })
            }
        }
    }
}
