//! Deferred journal syncs, for a single-threaded caller that answers its
//! clients later (`mk-tui serve`'s driver thread; docs/engine-decisions.md,
//! "Journal group commit"). Under the kafka rules' group commit a
//! journaling step waits for its frames' `fdatasync` before it returns
//! (`TransactionManager::journaled`); one thread handling one request at a
//! time then pays one sync per frame, as nothing else writes meanwhile.
//! With syncs deferred, the step returns once its frames are written, and
//! the caller makes everything written so far durable with one
//! [`BrokerCluster::sync_journal`] before it answers any request handled
//! meanwhile. PREPARE_* still waits inside its step: the markers written
//! next must rest on a durable decision.
//!
//! Deferring changes no state and writes the same bytes: only the moment
//! of the sync moves.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::engine::core::cluster::BrokerCluster;
use crate::engine::error::Result;

/// Whether journaling steps leave their sync to the caller, and whether one
/// did since the last [`BrokerCluster::sync_journal`].
#[derive(Debug, Default)]
pub(super) struct DeferredSyncs {
    on: AtomicBool,
    /// A step returned without waiting. Kept apart from the group commit's
    /// own written/synced lengths, which a crash's reopen starts again
    /// from the file's length, taken as synced: the frames written before
    /// the crash may still be only in the page cache.
    skipped: AtomicBool,
}

impl BrokerCluster {
    /// Journaling steps return without waiting for their sync (`true`),
    /// or wait again (`false`). Nothing changes under the book's rules,
    /// whose frames are fsynced as they are written.
    pub fn defer_journal_syncs(&self, on: bool) {
        self.shared.deferred.on.store(on, Ordering::SeqCst);
    }

    /// Whether the journal's frames are group-committed (the kafka rules,
    /// frames fsynced): only then is there a sync to defer.
    pub fn journal_group_committed(&self) -> bool {
        self.with_state(|s| s.transactions().journal_group_commit().is_some())
    }

    /// Whether a journaling step may skip its wait now: syncs are deferred.
    /// The step says it did with [`Self::skipped_journal_sync`].
    pub(crate) fn journal_syncs_deferred(&self) -> bool {
        self.shared.deferred.on.load(Ordering::SeqCst)
    }

    /// A journaling step returned with its frames not yet durable.
    pub(crate) fn skipped_journal_sync(&self) {
        self.shared.deferred.skipped.store(true, Ordering::SeqCst);
    }

    /// Whether journal frames were written that no sync covered yet (a
    /// deferred step's, a timeout's abort, a fencing begin's completion).
    pub fn journal_unsynced(&self) -> bool {
        self.shared.deferred.skipped.load(Ordering::SeqCst)
            || self.with_state(|s| {
                s.transactions()
                    .journal_group_commit()
                    .is_some_and(|g| g.unsynced())
            })
    }

    /// Makes every journal frame written so far durable: one `fdatasync`
    /// (the group commit's leader path), or none when nothing is waiting.
    /// Returns whether it synced. A failed sync fails as a group commit's
    /// does: the journal is cut back to its last synced length and takes no
    /// more frames (`KafkaStorageException`) until a crash reopens it; the
    /// frames written since the last sync must then be treated as lost by
    /// whoever holds answers resting on them. Nothing to do under the book's
    /// rules.
    pub fn sync_journal(&self) -> Result<bool> {
        if !self.journal_unsynced() {
            return Ok(false);
        }
        let Some(group) = self.with_state(|s| s.transactions().journal_group_commit().cloned())
        else {
            self.shared.deferred.skipped.store(false, Ordering::SeqCst);
            return Ok(false);
        };
        // Cleared first: a step that skips during the sync (another
        // thread) sets it again, and is covered by a later call. Not set
        // again on failure: the journal was cut back to what is durable
        // and takes no more frames, so nothing is left to sync.
        self.shared.deferred.skipped.store(false, Ordering::SeqCst);
        group.sync_all()?;
        Ok(true)
    }

    /// `fdatasync` calls the journal's group commit made since the journal
    /// was last opened (0 under the book's rules, whose syncs are not
    /// counted here).
    pub fn journal_syncs(&self) -> u64 {
        self.with_state(|s| {
            s.transactions()
                .journal_group_commit()
                .map_or(0, |g| g.syncs())
        })
    }
}
