//! `Replica`: one broker's copy of one partition: its log, its producer state,
//! and what the leader knows of it (last fetch time, leader epoch seen).

use crate::engine::config::BrokerId;
use crate::engine::core::batch::RecordBatch;
use crate::engine::core::codec::Stamp;
use crate::engine::error::Result;
use crate::engine::log::{BatchSummary, FetchedFrames, PartitionLog};
use crate::engine::producer::ProducerStateManager;
use crate::engine::vector_ext::VectorExt;

/// One broker's replica of a partition.
#[derive(Debug)]
pub struct Replica {
    pub broker: BrokerId,
    pub log: PartitionLog,
    pub producer_state: ProducerStateManager,
    /// Clock time of the last fetch from the leader (E4 time lag).
    pub last_fetch_ms: u64,
    /// The leader epoch this replica last fetched under. A follower whose
    /// epoch is behind may hold a divergent tail; until it fetches (and
    /// truncates), the leader counts it as holding no more than the HW.
    pub leader_epoch_seen: Option<u32>,
    /// The broker is stopped: it does not fetch, and cannot lead.
    pub stopped: bool,
    /// Stopped since before the partition existed: the controller that
    /// created the partition knew it was down, so it is out of the ISR
    /// until it starts and fetches (`PartitionReplicaSet::open_stopped`).
    pub down_at_creation: bool,
}

impl Replica {
    /// A replica over an opened log; producer state is rebuilt from it.
    pub fn new(broker: BrokerId, log: PartitionLog, now_ms: u64) -> Self {
        let producer_state = ProducerStateManager::rebuild(log.batch_summaries());
        Self {
            broker,
            log,
            producer_state,
            last_fetch_ms: now_ms,
            leader_epoch_seen: None,
            stopped: false,
            down_at_creation: false,
        }
    }

    /// The log end offset.
    pub fn leo(&self) -> i64 {
        self.log.leo()
    }

    /// Appends a batch (already carrying its offsets) and records it in the
    /// producer state.
    pub fn append(&mut self, batch: &RecordBatch) -> Result<BatchSummary> {
        let summary = self.log.append(batch)?.clone();
        self.producer_state.record(&summary);
        Ok(summary)
    }

    /// Appends the frames a follower fetched from its leader as they are
    /// (see [`PartitionLog::append_frames`]) and records each in the
    /// producer state, from its header. Returns how many were appended.
    pub fn append_frames(&mut self, fetched: &FetchedFrames) -> Result<usize> {
        let before = self.log.batch_summaries().len();
        let appended = self.log.append_frames(fetched);
        // Frames written before a failed write stay appended: record them.
        for summary in self.log.batch_summaries().iter_from(before) {
            self.producer_state.record(summary);
        }
        appended
    }

    /// As [`Self::append`], for the leader's append of a batch whose
    /// batch-level rules it has checked, stamped by `stamp` (see
    /// [`PartitionLog::append_stamped`]).
    pub(crate) fn append_stamped(
        &mut self,
        batch: &RecordBatch,
        stamp: Stamp,
    ) -> Result<BatchSummary> {
        let summary = self.log.append_stamped(batch, stamp)?.clone();
        self.producer_state.record(&summary);
        Ok(summary)
    }

    /// Empties the log to start again at `offset` (a follower whose log
    /// ends before its leader's starts) and rebuilds producer state.
    pub fn truncate_fully_and_start_at(&mut self, offset: i64) -> Result<()> {
        self.log.truncate_fully_and_start_at(offset)?;
        self.producer_state = ProducerStateManager::rebuild(self.log.batch_summaries());
        Ok(())
    }

    /// Deletes the closed segments that lie wholly below `offset` (a
    /// follower catching up with its leader's log start, E16).
    pub fn delete_segments_below(&mut self, offset: i64) -> Result<Vec<i64>> {
        let segments = self.log.segments();
        let below: Vec<i64> = self
            .log
            .closed_segments()
            .iter()
            .enumerate()
            .take_while(|(i, _)| segments[i + 1].base_offset() <= offset)
            .map(|(_, s)| s.base_offset())
            .collect();
        self.log.delete_closed_segments(&below)
    }

    /// Truncates the log at a batch boundary and rebuilds producer state.
    /// Returns the bytes removed.
    pub fn truncate_to(&mut self, offset: i64) -> Result<u64> {
        let removed = self.log.truncate_to(offset)?;
        if removed > 0 {
            self.producer_state = ProducerStateManager::rebuild(self.log.batch_summaries());
        }
        Ok(removed)
    }
}
