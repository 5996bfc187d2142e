//! A cache for readers that fold a leader's batch summaries from the log's
//! start: without it, the dashboard's count of what a fresh consumer reads
//! (`session::snapshot`'s reader counts) would walk every batch of every
//! partition on each frame, and a step back's frame would grow with history.
//!
//! The engine does not know what is folded; it keeps, per partition, the
//! result of a fold over the first `k` summaries of the leader's log
//! together with that log's [`Lineage`] at the time, and hands the result
//! back only while the leader's log is still of that lineage (so still
//! begins with those very summaries: a log that loses a summary gets a new
//! lineage, and one that only grows keeps it) under the same leader,
//! leader epoch and log start. Whether the fold of a batch can change
//! while its summary does not (the batch's transaction state, say) is the
//! reader's to bound: it asks only for prefixes it knows to be settled (see
//! `snapshot::build::reader_counts`).
//!
//! The cache lives in the `ClusterState` it describes. A crash's reopen
//! builds a new state, and keeps a partition's fold only where the new
//! leader's log was opened trusting at least the folded summaries from the
//! crashed log the fold was read from, under the same leader, epoch and
//! log start ([`ReaderCache::carry_across_crash`]): otherwise every crash
//! would fold each partition from its start again, and a recording that
//! crashes every few hundred steps would cost O(steps²). A time-travel restore gets
//! the checkpoint's (its memo keeps it, with each log's summaries and
//! lineage), so the first frame after a step back finds it too. A cache
//! and the logs it describes always come from the same state: a restored
//! log may grow apart from the checkpoint's, but the checkpoint's memo
//! never grows.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::engine::config::BrokerId;
use crate::engine::core::metadata::TopicPartition;
use crate::engine::log::PartitionLog;
use crate::engine::log::lineage::Lineage;

/// One partition's cached fold (see the module's comment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixFold {
    /// The broker whose log was folded.
    leader: BrokerId,
    leader_epoch: u32,
    log_start: i64,
    /// The leader's log's lineage when it held the `len` summaries folded.
    lineage: Lineage,
    len: usize,
    folded: (usize, usize),
}

/// Where a leader's log is read from: its broker, epoch and log start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaderAt {
    pub leader: BrokerId,
    pub leader_epoch: u32,
    pub log_start: i64,
}

/// Every partition's cached fold, and a count of the work the cache did
/// not save.
#[derive(Debug, Default)]
pub struct ReaderCache {
    folds: Mutex<BTreeMap<TopicPartition, PrefixFold>>,
    /// Summaries the readers folded themselves ([`Self::note_folded`]),
    /// in this state and the states a crash reopened it from: the unit of
    /// work `tests/growth_cost.rs` counts. Nothing of it reaches output.
    folded: AtomicU64,
}

impl ReaderCache {
    /// A cache holding `folds` (a checkpoint's, see [`Self::folds`]).
    pub(super) fn with(folds: BTreeMap<TopicPartition, PrefixFold>) -> Self {
        Self {
            folds: Mutex::new(folds),
            folded: AtomicU64::new(0),
        }
    }

    /// Counts `n` summaries a reader folded past the cached prefix.
    pub fn note_folded(&self, n: usize) {
        self.folded.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// The summaries readers folded past the cache since the cluster was
    /// opened (crashes included; a time-travel restore starts again at 0).
    pub fn folded(&self) -> u64 {
        self.folded.load(Ordering::Relaxed)
    }

    /// Goes on counting from `crashed`'s count (a crash's reopen).
    pub(super) fn count_from(&self, crashed: &ReaderCache) {
        self.folded.fetch_add(crashed.folded(), Ordering::Relaxed);
    }

    /// Drops `tp`'s fold (its topic was deleted).
    pub(super) fn forget(&self, tp: &TopicPartition) {
        self.lock().remove(tp);
    }

    /// Every partition's cached fold, for a checkpoint's memo.
    pub(super) fn folds(&self) -> BTreeMap<TopicPartition, PrefixFold> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<TopicPartition, PrefixFold>> {
        self.folds
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The cached fold of `tp`'s first `k` summaries, `(k, folded)`, if the
    /// leader's `log`, read `at`, still holds them and `k` is at most
    /// `at_most`; else `None`.
    pub fn lookup(
        &self,
        tp: &TopicPartition,
        at: LeaderAt,
        log: &PartitionLog,
        at_most: usize,
    ) -> Option<(usize, (usize, usize))> {
        let folds = self.lock();
        let f = folds.get(tp)?;
        let k = f.len;
        let same = f.leader == at.leader
            && f.leader_epoch == at.leader_epoch
            && f.log_start == at.log_start
            && k <= at_most
            && k <= log.batch_summaries().len()
            && f.lineage == *log.lineage();
        same.then_some((k, f.folded))
    }

    /// After a crash's reopen (see the module's comment): keeps `tp`'s
    /// `fold`, read from the crashed leader's log of lineage `crashed`, for
    /// the reopened leader's `log`, read `at`, when that log begins with the
    /// folded summaries (`begins(k)`: its first `k` are the crashed log's)
    /// under the same leader, epoch and log start. Whether the fold of a
    /// settled prefix still holds under the reopened coordinator is the
    /// reader's to bound, as for any fold: a crash replays the same journal
    /// (`snapshot::build::reader_counts`).
    pub(super) fn carry_across_crash(
        &self,
        tp: &TopicPartition,
        fold: &PrefixFold,
        crashed: &Lineage,
        begins: impl FnOnce(usize) -> bool,
        at: LeaderAt,
        log: &PartitionLog,
    ) {
        let same = fold.leader == at.leader
            && fold.leader_epoch == at.leader_epoch
            && fold.log_start == at.log_start
            && fold.lineage == *crashed
            && begins(fold.len);
        if same {
            self.store(tp, at, log, fold.len, fold.folded);
        }
    }

    /// Keeps `folded`, the fold of the first `k` of the leader's `log`'s
    /// summaries, read `at`.
    pub fn store(
        &self,
        tp: &TopicPartition,
        at: LeaderAt,
        log: &PartitionLog,
        k: usize,
        folded: (usize, usize),
    ) {
        debug_assert!(k <= log.batch_summaries().len());
        self.lock().insert(
            tp.clone(),
            PrefixFold {
                leader: at.leader,
                leader_epoch: at.leader_epoch,
                log_start: at.log_start,
                lineage: log.lineage().clone(),
                len: k,
                folded,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RecordBatch;
    use crate::engine::log::partition_log::LogConfig;

    const AT: LeaderAt = LeaderAt {
        leader: 1,
        leader_epoch: 0,
        log_start: 0,
    };

    fn open(dir: &std::path::Path) -> PartitionLog {
        let config = LogConfig {
            segment_max_bytes: 1 << 20,
            index_interval_bytes: 4096,
            fsync: false,
        };
        PartitionLog::open(dir, config).unwrap().0
    }

    fn append(log: &mut PartitionLog, value: &str, count: usize) {
        for _ in 0..count {
            let mut b = RecordBatch::of_values([value]);
            b.base_offset = log.leo();
            log.append(&b).unwrap();
        }
    }

    /// A log cut and grown again to the same length, with other batches,
    /// is not served the fold of the batches it lost; one that only grew
    /// is, and so is a log restored from a checkpoint's memo, until it is
    /// cut in turn.
    #[test]
    fn a_fold_is_served_only_while_the_log_still_begins_with_its_summaries() {
        let dir = tempfile::tempdir().unwrap();
        let tp = TopicPartition::new("t", 0);
        let mut log = open(dir.path());
        append(&mut log, "a", 10);
        let cache = ReaderCache::default();
        cache.store(&tp, AT, &log, 8, (8, 7));
        assert_eq!(cache.lookup(&tp, AT, &log, 10), Some((8, (8, 7))));
        assert_eq!(cache.lookup(&tp, AT, &log, 7), None, "more than asked");
        let moved = LeaderAt {
            leader_epoch: 1,
            ..AT
        };
        assert_eq!(cache.lookup(&tp, moved, &log, 10), None, "another epoch");

        // Grown: still served.
        append(&mut log, "a", 5);
        assert_eq!(cache.lookup(&tp, AT, &log, 15), Some((8, (8, 7))));

        // A checkpoint's memo, and a log restored from it with the cache
        // the checkpoint kept: served.
        let memo = log.memo().unwrap();
        let kept = ReaderCache::with(cache.folds());
        let restored_dir = tempfile::tempdir().unwrap();
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, restored_dir.path().join(path.file_name().unwrap())).unwrap();
        }
        let config = log.config;
        let (mut restored, _) =
            PartitionLog::open_remembered(restored_dir.path().to_path_buf(), config, memo).unwrap();
        assert_eq!(kept.lookup(&tp, AT, &restored, 15), Some((8, (8, 7))));

        // Cut below the fold and grown back to the same length with other
        // batches: the summaries differ, and neither log is served.
        log.truncate_to(3).unwrap();
        append(&mut log, "b", 12);
        assert_eq!(log.batch_summaries().len(), 15);
        assert_ne!(log.batch_summaries()[5], restored.batch_summaries()[5]);
        assert_eq!(cache.lookup(&tp, AT, &log, 15), None);
        assert_eq!(kept.lookup(&tp, AT, &restored, 15), Some((8, (8, 7))));
        restored.truncate_to(3).unwrap();
        append(&mut restored, "c", 12);
        assert_eq!(kept.lookup(&tp, AT, &restored, 15), None);

        // A cut that keeps the fold's summaries still gives a new lineage
        // (a cut is rare; no summary is compared).
        cache.store(&tp, AT, &log, 8, (8, 3));
        assert_eq!(cache.lookup(&tp, AT, &log, 15), Some((8, (8, 3))));
        log.truncate_to(12).unwrap();
        assert_eq!(cache.lookup(&tp, AT, &log, 15), None);
    }
}
