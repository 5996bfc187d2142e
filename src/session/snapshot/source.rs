//! One seam for sources (issue 12, item 2): whatever can say how things
//! stand, as a [`Snapshot`]. The live driver, the replay timeline and a saved
//! state (`mk-tui render --state FILE.json`) implement it today; an observer
//! of a real Kafka cluster is the next. The ui draws from the snapshot alone
//! and never asks the source anything else.

use crate::session::driver::Driver;
use crate::session::snapshot::{Bounds, Snapshot, build, build::load_values};
use crate::session::timeline::Timeline;

/// A source of snapshots.
pub trait SnapshotSource {
    /// The snapshot now, read within `bounds`. Never changes the source.
    fn snapshot(&self, bounds: &Bounds) -> Snapshot;

    /// Fills in the records of the batches `wanted` ((partition, index into
    /// its `batches`)) that a frame draws, when `bounds` left them out.
    /// Sources that hold every record already have nothing to do.
    fn load_values(&self, snapshot: &mut Snapshot, wanted: &[(usize, usize)]) {
        let _ = (snapshot, wanted);
    }
}

impl SnapshotSource for Driver {
    fn snapshot(&self, bounds: &Bounds) -> Snapshot {
        build(self, bounds)
    }

    fn load_values(&self, snapshot: &mut Snapshot, wanted: &[(usize, usize)]) {
        load_values(self, snapshot, wanted);
    }
}

impl SnapshotSource for Timeline {
    /// The driver's snapshot with the recording's title, its length and the
    /// current step's caption.
    fn snapshot(&self, bounds: &Bounds) -> Snapshot {
        let mut snapshot = build(self.driver(), bounds);
        let recording = self.recording();
        snapshot.title = recording.header.title.clone();
        snapshot.total_steps = Some(recording.steps.len());
        snapshot.caption = self
            .step()
            .checked_sub(1)
            .and_then(|i| recording.steps.get(i))
            .and_then(|s| s.caption.clone());
        snapshot
    }

    fn load_values(&self, snapshot: &mut Snapshot, wanted: &[(usize, usize)]) {
        load_values(self.driver(), snapshot, wanted);
    }
}

/// A state saved by `mk-tui state`: it holds every record already.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedState(pub Snapshot);

impl SnapshotSource for SavedState {
    fn snapshot(&self, _bounds: &Bounds) -> Snapshot {
        self.0.clone()
    }
}
