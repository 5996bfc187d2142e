//! Time travel (SPEC §4, §5): the state at any step of a recording, forward
//! and back. Going forward applies the next steps; going back restores the
//! latest checkpoint at or before the target and replays from there. A
//! checkpoint is a copy of the data directory plus the driver's in-memory
//! state, taken every `every` steps (at the first step after that where
//! nothing is pending: a running task cannot be copied), so a step back
//! replays a bounded number of steps, not the whole history. Each restore
//! runs in a temporary directory of its own: a fresh one, or that of a
//! driver it replaced earlier, dropped by then (its files written over in
//! place, which creates few inodes: `Driver::restore`).
//!
//! Neither copies the bytes of history: a checkpoint hard-links the closed
//! segments and the files replaced only by rename, and a restore links those
//! and the checkpoint's journal too, cut back to the length it had when the
//! checkpoint was taken (`engine::shared_files`, which says why that is safe).
//! Nor does a step back parse history again: the checkpoint's memo keeps what
//! an open would parse from the files (each log's summaries and segments, the
//! coordinator's state and markers, the readers' counts), in persistent
//! lists (`imbl::Vector`, see `engine::vector_ext`) that the driver, every
//! memo and every restore share, and a restore takes it after checking the
//! files' lengths (`PartitionLog::scan_remembered`), so one step back costs
//! the same at step 1,000 and at step 100,000 (docs/performance.md). Only the
//! active segments (at most `segment_max_bytes` each) are copied by a
//! restore, and a checkpoint copies the journal as well. Because a restore
//! cuts the checkpoint's journal under whichever driver it replaces, a failed
//! restore leaves the timeline unusable (`broken`) rather than going on with
//! that driver.
//!
//! Memory and disk: a checkpoint's directory is a copy of the data directory
//! at its step, so keeping one every `every` steps for the whole recording
//! would cost O(steps²) of disk, and their memos (each with every event so
//! far) O(steps²) of memory. So the memos share their events (`history.rs`)
//! and the checkpoints are spaced wider the further they are from the current step
//! ([`keep`]): all of the [`DENSE`] nearest are kept, and past them one per
//! window that doubles with the distance. So at most `DENSE * (2 + log2(steps
//! / (every * DENSE)))` checkpoints exist (about 130 for 100,000 steps, 180
//! for 1,000,000), and a step back from the current step still replays at most
//! `every` steps; a jump far back replays at most the window there.

use crate::engine::shared_files::CopyStats;
use crate::session::driver::{Driver, DriverMemo, Outcome};
use crate::session::error::SessionError;
use crate::session::recording::Recording;
use crate::session::snapshot::{Bounds, Snapshot, build};

/// The default checkpoint interval.
pub const DEFAULT_CHECKPOINT_EVERY: usize = 50;

/// How many of the checkpoints nearest the current step are all kept (see
/// [`keep`]).
pub const DENSE: usize = 16;

/// How many of the newest checkpoints keep the state parsed from the files:
/// the transaction coordinator's and the logs' (see
/// `ClusterMemo::forget_parsed`).
pub const REMEMBERED: usize = 16;

struct Checkpoint {
    step: usize,
    dir: tempfile::TempDir,
    memo: DriverMemo,
    /// What taking it copied (its journal's length: a restore links the
    /// journal and cuts it back to that, `shared_files`).
    copied: CopyStats,
}

/// How many replaced drivers' directories are kept for reuse.
const SPARE: usize = 2;

/// A recording being played, with checkpoints for going back.
pub struct Timeline {
    recording: Recording,
    every: usize,
    checkpoints: Vec<Checkpoint>,
    driver: Driver,
    outcomes: Vec<Outcome>,
    replayed: usize,
    /// Replaced drivers being dropped in the background, joined when the
    /// timeline goes; each leaves its directory in `spare`.
    disposals: Vec<std::thread::JoinHandle<()>>,
    /// Directories of dropped drivers for the next restores to reuse
    /// (`Driver::restore`), at most [`SPARE`]; deleted with the timeline.
    spare: std::sync::Arc<std::sync::Mutex<Vec<tempfile::TempDir>>>,
    /// A frame's snapshot of the step before the current one, taken just
    /// before the current step was applied: what the step changed is the
    /// difference (issue 13). None at step 0.
    before: Option<Snapshot>,
    /// Why this timeline can go nowhere: a restore failed after it had
    /// taken a checkpoint's journal, which the driver it would have
    /// replaced may link (`Driver::restore`).
    broken: Option<std::sync::Arc<SessionError>>,
    /// Showing the moment of death of the current step (its first
    /// sub-step, docs/dashboard.md "Crashes as moments") rather than the
    /// state after its recovery.
    at_moment: bool,
}

impl Drop for Timeline {
    /// Waits for the replaced drivers' directories to be deleted, so none
    /// stays behind when the process exits.
    fn drop(&mut self) {
        for handle in self.disposals.drain(..) {
            let _ = handle.join();
        }
        self.spare
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }
}

impl std::fmt::Debug for Timeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timeline")
            .field("step", &self.driver.step())
            .field("steps", &self.recording.steps.len())
            .field("checkpoints", &self.checkpoints.len())
            .finish_non_exhaustive()
    }
}

impl Timeline {
    /// A timeline at step 0 of `recording`, checkpointing every `every`
    /// steps.
    pub fn new(recording: Recording, every: usize) -> Result<Self, SessionError> {
        let driver = Driver::new(&recording.header, None)?;
        let mut timeline = Self {
            recording,
            every: every.max(1),
            checkpoints: Vec::new(),
            driver,
            outcomes: Vec::new(),
            replayed: 0,
            disposals: Vec::new(),
            spare: Default::default(),
            before: None,
            broken: None,
            at_moment: false,
        };
        timeline.checkpoint()?;
        Ok(timeline)
    }

    /// The recording.
    pub fn recording(&self) -> &Recording {
        &self.recording
    }

    /// The driver at the current step.
    pub fn driver(&self) -> &Driver {
        &self.driver
    }

    /// The current step.
    pub fn step(&self) -> usize {
        self.driver.step()
    }

    /// How many steps the last [`Self::goto`] applied.
    pub fn replayed(&self) -> usize {
        self.replayed
    }

    /// Outcomes of the steps applied so far in this run (since the last
    /// restore, they start at the checkpoint's step).
    pub fn last_outcome(&self) -> Option<&Outcome> {
        self.outcomes.last()
    }

    /// The frame snapshot of the step before the current one (see
    /// [`SnapshotSource`](crate::session::SnapshotSource) for the timeline).
    pub fn before_step(&self) -> Option<&Snapshot> {
        self.before.as_ref()
    }

    /// Whether the current step is shown at its moment of death (before
    /// recovery) rather than after its recovery.
    pub fn at_moment(&self) -> bool {
        self.at_moment
    }

    /// Shows the current step's moment of death (`true`) or the state after
    /// its recovery (`false`). Returns whether the view changed: a step
    /// that did not crash the cluster has no moment to show. Nothing is
    /// applied or restored: both sub-steps are read from the driver as it
    /// is.
    pub fn show_moment(&mut self, on: bool) -> bool {
        let on = on && self.driver.last_moment().is_some();
        let changed = on != self.at_moment;
        self.at_moment = on;
        changed
    }

    /// Moves to `target` (clamped to the recording's length), showing it
    /// after recovery if it crashed the cluster. The target's
    /// own step is always applied last (from a checkpoint before it), so the
    /// snapshot just before it is at hand.
    pub fn goto(&mut self, target: usize) -> Result<&Driver, SessionError> {
        if let Some(why) = &self.broken {
            return Err(SessionError::Again(why.clone()));
        }
        let target = target.min(self.recording.steps.len());
        self.replayed = 0;
        self.at_moment = false;
        if target == self.driver.step() {
            return Ok(&self.driver);
        }
        if target < self.driver.step() {
            let checkpoint = self
                .checkpoints
                .iter()
                .rev()
                .find(|c| c.step < target.max(1))
                .expect("step 0 is always checkpointed");
            let reuse = self
                .spare
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .pop();
            let restored = Driver::restore(
                &self.recording.header,
                checkpoint.dir.path(),
                &checkpoint.memo,
                &checkpoint.copied,
                reuse,
            )
            .map_err(|why| {
                let why = std::sync::Arc::new(why);
                self.broken = Some(why.clone());
                SessionError::Again(why)
            })?;
            let old = std::mem::replace(&mut self.driver, restored);
            self.disposals.retain(|h| !h.is_finished());
            // Dropped in the background (closing its files need not hold up
            // the new frame); its directory is kept for a later restore.
            let spare = std::sync::Arc::clone(&self.spare);
            self.disposals.push(std::thread::spawn(move || {
                let Some(dir) = old.into_scratch() else {
                    return;
                };
                let mut spare = spare
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let extra = match spare.len() < SPARE {
                    true => {
                        spare.push(dir);
                        None
                    }
                    false => Some(dir),
                };
                drop(spare);
                drop(extra); // deleted outside the lock
            }));
            self.outcomes.clear();
            self.before = None;
        }
        while self.driver.step() < target {
            if self.driver.step() + 1 == target {
                self.before = Some(build(&self.driver, &Bounds::FRAME));
            }
            let action = self.recording.steps[self.driver.step()].action.clone();
            let outcome = self.driver.apply(&action);
            self.outcomes.push(outcome);
            self.replayed += 1;
            let step = self.driver.step();
            let last = self
                .checkpoints
                .iter()
                .rev()
                .find(|c| c.step <= step)
                .map_or(0, |c| c.step);
            if step >= last.saturating_add(self.every) {
                self.checkpoint()?;
            }
        }
        Ok(&self.driver)
    }

    /// One step forward.
    pub fn step_forward(&mut self) -> Result<&Driver, SessionError> {
        self.goto(self.driver.step() + 1)
    }

    /// One step back.
    pub fn step_back(&mut self) -> Result<&Driver, SessionError> {
        self.goto(self.driver.step().saturating_sub(1))
    }

    /// Takes a checkpoint of the current step if nothing is pending and
    /// none exists for it yet.
    fn checkpoint(&mut self) -> Result<(), SessionError> {
        let step = self.driver.step();
        if self.checkpoints.iter().any(|c| c.step == step) {
            return Ok(());
        }
        // The memo keeps the readers' counts too (see `warm_reader_cache`).
        crate::session::snapshot::build::warm_reader_cache(&self.driver);
        let Some(memo) = self.driver.memo() else {
            return Ok(()); // something is pending: try again after the next step
        };
        let dir = crate::session::scratch::tempdir()
            .map_err(|e| SessionError::os("cannot create a checkpoint directory", e))?;
        let copied = self
            .driver
            .copy_data_dir(dir.path())
            .map_err(|e| SessionError::os("cannot copy the data directory for a checkpoint", e))?;
        let at = self.checkpoints.partition_point(|c| c.step < step);
        self.checkpoints.insert(
            at,
            Checkpoint {
                step,
                dir,
                memo,
                copied,
            },
        );
        let steps: Vec<usize> = self.checkpoints.iter().map(|c| c.step).collect();
        let kept = keep(&steps, step, self.every);
        let mut kept = kept.into_iter();
        // Dropping a checkpoint deletes its directory.
        self.checkpoints.retain(|_| kept.next().unwrap_or(true));
        // Only the newest checkpoints keep the state parsed from the files
        // (a restore from them reads neither the journal nor the logs):
        // stepping back near the present stays bounded by the interval,
        // and memory stays bounded by REMEMBERED checkpoints, not by
        // history.
        let len = self.checkpoints.len();
        for c in &mut self.checkpoints[..len.saturating_sub(REMEMBERED)] {
            c.memo.forget_parsed();
        }
        Ok(())
    }

    /// Steps that have a checkpoint.
    pub fn checkpoint_steps(&self) -> Vec<usize> {
        self.checkpoints.iter().map(|c| c.step).collect()
    }
}

/// Which checkpoints to keep (`steps` in increasing order; the answer in
/// the same order) when the current step is `current`: a checkpoint at
/// distance `d` from it is kept if `d < every * DENSE` (the dense region
/// around the current step), and otherwise if it is the first one of its
/// window of `every * 2^(1 + log2(d / (every * DENSE)))` steps. Step 0's
/// checkpoint is always kept (it is the first of every window). The
/// windows are a function of the steps alone, so the choice is the same on
/// every run.
pub fn keep(steps: &[usize], current: usize, every: usize) -> Vec<bool> {
    let dense = every.saturating_mul(DENSE).max(1);
    let mut seen = std::collections::BTreeSet::new();
    steps
        .iter()
        .map(|&s| {
            let d = s.abs_diff(current);
            if d < dense || s == 0 {
                return true;
            }
            let level = (d / dense).ilog2() + 1;
            let window = every.saturating_mul(1 << level.min(60)).max(1);
            seen.insert((level, s / window))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoints_thin_out_with_distance_and_stay_few() {
        let every = 50;
        // A checkpoint every 50 steps up to step 100,000, thinned as they
        // are taken, as the timeline does.
        let mut steps: Vec<usize> = Vec::new();
        for s in (0..=100_000).step_by(every) {
            steps.push(s);
            let kept = keep(&steps, s, every);
            let mut k = kept.into_iter();
            steps.retain(|_| k.next().unwrap());
        }
        assert!(steps.len() <= DENSE * 10, "{} checkpoints", steps.len());
        assert_eq!(steps[0], 0);
        // The dense region near the current step is whole.
        let near: Vec<usize> = steps
            .iter()
            .copied()
            .filter(|&s| 100_000 - s < every * DENSE)
            .collect();
        assert_eq!(near.len(), DENSE);
        // Gaps grow with the distance but stay within twice the window there.
        for pair in steps.windows(2) {
            let d = 100_000 - pair[1];
            let gap = pair[1] - pair[0];
            assert!(gap <= every.max(4 * d), "gap {gap} at distance {d}");
        }
    }
}
