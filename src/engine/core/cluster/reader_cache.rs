//! A cache for readers that fold a leader's batch summaries from the log's
//! start: without it, the dashboard's count of what a fresh consumer reads
//! (`session::snapshot`'s reader counts) would walk every batch of every
//! partition on each frame, and a step back's frame would grow with history.
//!
//! The engine does not know what is folded; it keeps, per partition, the
//! result of a fold over the first `k` summaries of the leader's log
//! together with those summaries' chunks (a clone of the leader's
//! [`SharedVec`], cut to `k`, a multiple of its chunk size), and hands the
//! result back only while the leader's log still holds those very chunks
//! (`Arc` identity: a chunk another clone shares is copied before any
//! write, so the same chunk means the same summaries) under the same
//! leader, leader epoch and log start. Whether the fold of a batch can
//! change while its summary does not (the batch's transaction state, say)
//! is the reader's to bound: it asks only for prefixes it knows to be
//! settled (see `snapshot::build::reader_counts`).
//!
//! The cache lives in the `ClusterState` it describes: a crash's reopen
//! builds a new state with an empty cache, and a time-travel restore gets
//! the checkpoint's (its memo keeps it), so the first frame after a step
//! back finds it too.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::engine::config::BrokerId;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::log::BatchSummary;
use crate::engine::shared_vec::{CHUNK, SharedVec};

/// One partition's cached fold (see the module's comment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixFold {
    leader: BrokerId,
    leader_epoch: u32,
    log_start: i64,
    prefix: SharedVec<BatchSummary>,
    folded: (usize, usize),
}

/// Where a leader's log is read from: its broker, epoch and log start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaderAt {
    pub leader: BrokerId,
    pub leader_epoch: u32,
    pub log_start: i64,
}

/// Every partition's cached fold.
#[derive(Debug, Default)]
pub struct ReaderCache(Mutex<BTreeMap<TopicPartition, PrefixFold>>);

impl ReaderCache {
    /// A cache holding `folds` (a checkpoint's, see [`Self::folds`]).
    pub(super) fn with(folds: BTreeMap<TopicPartition, PrefixFold>) -> Self {
        Self(Mutex::new(folds))
    }

    /// Every partition's cached fold, for a checkpoint's memo.
    pub(super) fn folds(&self) -> BTreeMap<TopicPartition, PrefixFold> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<TopicPartition, PrefixFold>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The cached fold of `tp`'s first `k` summaries, `(k, folded)`, if the
    /// leader's log `summaries`, read `at`, still holds them and `k` is at
    /// most `at_most`; else `None`.
    pub fn lookup(
        &self,
        tp: &TopicPartition,
        at: LeaderAt,
        summaries: &SharedVec<BatchSummary>,
        at_most: usize,
    ) -> Option<(usize, (usize, usize))> {
        let folds = self.lock();
        let f = folds.get(tp)?;
        let k = f.prefix.len();
        let same = f.leader == at.leader
            && f.leader_epoch == at.leader_epoch
            && f.log_start == at.log_start
            && k <= at_most
            && summaries.shared_chunks(&f.prefix) * CHUNK == k;
        same.then_some((k, f.folded))
    }

    /// Keeps `folded`, the fold of the first `k` (a multiple of [`CHUNK`])
    /// of the leader's `summaries`, read `at`.
    pub fn store(
        &self,
        tp: &TopicPartition,
        at: LeaderAt,
        summaries: &SharedVec<BatchSummary>,
        k: usize,
        folded: (usize, usize),
    ) {
        debug_assert!(k.is_multiple_of(CHUNK) && k <= summaries.len());
        let mut prefix = summaries.clone();
        prefix.truncate(k);
        self.lock().insert(
            tp.clone(),
            PrefixFold {
                leader: at.leader,
                leader_epoch: at.leader_epoch,
                log_start: at.log_start,
                prefix,
                folded,
            },
        );
    }
}
