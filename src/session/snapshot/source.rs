//! One seam for sources: whatever can say how things stand, as a [`Snapshot`].
//! The live driver, the replay timeline and a saved state (`mk-tui render
//! --state FILE.json`) implement it today; an observer of a real Kafka cluster
//! is the next. The ui draws from the snapshot alone and never asks the source
//! anything else.

use crate::session::driver::Driver;
use crate::session::snapshot::build::{Wanted, explain, load_values, values};
use crate::session::snapshot::{Bounds, Snapshot, Values, build, diff};
use crate::session::timeline::Timeline;

/// A source of snapshots.
pub trait SnapshotSource {
    /// The snapshot now, read within `bounds`. Never changes the source.
    fn snapshot(&self, bounds: &Bounds) -> Snapshot;

    /// The records of the batches `wanted` ((partition, index into its
    /// `batches`, records drawn)) that a frame draws, when `bounds` left
    /// them out: read beside `snapshot`, which stays as it is (a frame
    /// draws them from there, see [`Values`]). Sources that hold every
    /// record already have nothing to read.
    fn values(&self, snapshot: &Snapshot, wanted: &[Wanted]) -> Values {
        let _ = (snapshot, wanted);
        Values::default()
    }

    /// Fills in why batch `b` of partition `p` has its fate, when `bounds`
    /// left the sentences out ([`Bounds::explanations`]): the explanation
    /// of the batch a frame shows selected. Sources whose snapshots say
    /// why for every batch have nothing to do.
    fn explain(&self, snapshot: &mut Snapshot, p: usize, b: usize) {
        let _ = (snapshot, p, b);
    }
}

impl SnapshotSource for Driver {
    fn snapshot(&self, bounds: &Bounds) -> Snapshot {
        build(self, bounds)
    }

    /// A moment of death holds its values already (see the timeline's).
    fn values(&self, snapshot: &Snapshot, wanted: &[Wanted]) -> Values {
        if snapshot.before_recovery {
            return Values::default();
        }
        values(self, snapshot, wanted)
    }

    /// A moment of death says why for every batch already.
    fn explain(&self, snapshot: &mut Snapshot, p: usize, b: usize) {
        if !snapshot.before_recovery {
            explain(self, snapshot, p, b);
        }
    }
}

impl SnapshotSource for Timeline {
    /// The driver's snapshot with the recording's title, its length, the
    /// current step's caption and what the step changed. For a step that
    /// crashed the cluster (docs/dashboard.md "Crashes as moments"): at its
    /// moment of death, the disk before recovery with what the step did up
    /// to the crash; after it, the recovered state with what recovery
    /// changed since the moment.
    fn snapshot(&self, bounds: &Bounds) -> Snapshot {
        let after = build(self.driver(), bounds);
        let mut snapshot = step_view(self.driver(), self.before_step(), self.at_moment(), after);
        let recording = self.recording();
        snapshot.title = recording.header.title.clone();
        snapshot.total_steps = Some(recording.steps.len());
        snapshot.captioned_steps = captioned_steps(recording);
        // A `ui` step keeps the caption on screen, as it did live.
        snapshot.caption = crate::session::recording::caption_step(&recording.steps, self.step())
            .checked_sub(1)
            .and_then(|i| recording.steps.get(i))
            .and_then(|s| s.caption.clone());
        // A hint holds from its step until the next one.
        snapshot.present = recording.steps[..self.step().min(recording.steps.len())]
            .iter()
            .rev()
            .find_map(|s| s.present.as_ref())
            .map(|p| p.names())
            .unwrap_or_default();
        snapshot
    }

    /// A moment of death holds its values already: the driver's logs are
    /// the recovered ones and must not be read for it.
    fn values(&self, snapshot: &Snapshot, wanted: &[Wanted]) -> Values {
        if snapshot.before_recovery {
            return Values::default();
        }
        values(self.driver(), snapshot, wanted)
    }

    /// A moment of death says why for every batch already (its bounds
    /// have [`Bounds::explanations`]); the driver's logs are the recovered
    /// ones.
    fn explain(&self, snapshot: &mut Snapshot, p: usize, b: usize) {
        if !snapshot.before_recovery {
            explain(self.driver(), snapshot, p, b);
        }
    }
}

/// What a screen shows of the step just applied (`after`, read from
/// `driver`; `before`, the snapshot taken just before it). For a step that
/// crashed the cluster (docs/dashboard.md "Crashes as moments"): at its
/// moment of death (`at_moment`) the disk before recovery with what the
/// step did up to the crash; after it, the recovered state with what
/// recovery changed since the moment. Otherwise `after` with what the step
/// changed. The replay timeline and a live session both show steps so.
pub fn step_view(
    driver: &Driver,
    before: Option<&Snapshot>,
    at_moment: bool,
    after: Snapshot,
) -> Snapshot {
    match after.at_moment() {
        Some(mut moment) if at_moment => {
            if let Some(before) = before {
                moment.changes = diff(before, &moment);
            }
            moment
        }
        Some(moment) => with_changes(driver, Some(&moment), after),
        None => with_changes(driver, before, after),
    }
}

/// `after` with what changed since `before`: the diff, then the values of
/// the batches its sentences name (a frame's snapshot reads none), then the
/// diff again so its sentences say them.
pub fn with_changes(driver: &Driver, before: Option<&Snapshot>, mut after: Snapshot) -> Snapshot {
    let Some(before) = before else {
        return after;
    };
    let changes = diff(before, &after);
    let named = changes.batches_named(&after);
    if named.is_empty() {
        after.changes = changes;
        return after;
    }
    let named: Vec<Wanted> = named
        .into_iter()
        .map(|(p, b)| (p, b, crate::session::snapshot::VALUES_SHOWN))
        .collect();
    load_values(driver, &mut after, &named);
    after.changes = diff(before, &after);
    after
}

/// Applies `actions` in order and returns a frame's snapshot taken just
/// before the last one: what a live session started from a recording
/// (the demo) needs to show what its last step changed.
pub fn apply_all<'a>(
    driver: &mut Driver,
    actions: impl IntoIterator<Item = &'a crate::session::Action>,
) -> Option<Snapshot> {
    let mut before = None;
    let mut actions = actions.into_iter().peekable();
    while let Some(action) = actions.next() {
        if actions.peek().is_none() {
            before = Some(build(driver, &Bounds::FRAME));
        }
        driver.apply(action);
    }
    before
}

/// A state saved by `mk-tui state`: it holds every record already.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedState(pub Snapshot);

impl SnapshotSource for SavedState {
    fn snapshot(&self, _bounds: &Bounds) -> Snapshot {
        self.0.clone()
    }
}

/// The steps of `recording` that have a caption (step n is line n + 1).
pub fn captioned_steps(recording: &crate::session::Recording) -> Vec<usize> {
    recording
        .steps
        .iter()
        .enumerate()
        .filter(|(_, s)| s.caption.is_some())
        .map(|(i, _)| i + 1)
        .collect()
}
