//! A real Kafka cluster observed over its protocol (`mk-tui observe`;
//! docs/observe.md "Live"), as a mode of the [`Session`](super::Session):
//! live, its refreshes come from a [`Refresher`] on its own thread and
//! each one taken is a step; replayed, the replay keys move through an
//! observation recording's refreshes (no captions, no branching: there is
//! no engine to go live with).

use std::sync::Arc;

use tokio::sync::Notify;

use crate::session::observation::{ObservationTimeline, ObservedSession, Refresher};
use crate::session::replay::{Move, Travel};
use crate::session::snapshot::SnapshotSource;

/// An observation on screen.
pub enum Observed {
    /// Refreshing now.
    Live(Box<ObservedLive>),
    /// An observation recording being replayed.
    Replay {
        timeline: Box<ObservationTimeline>,
        playing: bool,
    },
}

/// A live observation: the session that folds the refreshes into steps
/// (and records them), and where they come from.
pub struct ObservedLive {
    pub session: ObservedSession,
    pub refresher: Box<dyn Refresher>,
}

/// What the refreshes taken at once came to ([`Observed::take_refreshes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refreshes {
    /// The step the last one made.
    pub step: usize,
    /// The last one failed: its error.
    pub failed: Option<String>,
    /// How many changes the last one saw.
    pub changes: usize,
    /// Why one of them could not be recorded.
    pub not_recorded: Option<String>,
}

impl Observed {
    pub(super) fn source(&self) -> &dyn SnapshotSource {
        match self {
            Observed::Live(live) => &live.session,
            Observed::Replay { timeline, .. } => &**timeline,
        }
    }

    /// The current step.
    pub fn step(&self) -> usize {
        match self {
            Observed::Live(live) => live.session.step(),
            Observed::Replay { timeline, .. } => timeline.step(),
        }
    }

    /// What wakes the event loop when a refresh ends (live only).
    pub(super) fn wake(&self) -> Option<Arc<Notify>> {
        match self {
            Observed::Live(live) => Some(live.refresher.wake()),
            Observed::Replay { .. } => None,
        }
    }

    /// The last step `g` may go to (0 live: there is nothing to go to).
    pub(super) fn last_step(&self) -> usize {
        match self {
            Observed::Live(_) => 0,
            Observed::Replay { timeline, .. } => timeline.observation().len(),
        }
    }

    pub(super) fn goto(&mut self, step: usize) {
        if let Observed::Replay { timeline, .. } = self {
            timeline.goto(step);
        }
    }

    /// Where a replay key goes in a replayed observation (nowhere live).
    pub(super) fn travel(&self, mv: Move) -> Travel {
        if let Observed::Live(_) = self {
            return Travel::Stay;
        }
        Travel::To(match mv {
            Move::Next => self.step() + 1,
            Move::Prev => self.step().saturating_sub(1),
            Move::First => 0,
            Move::Last => self.last_step(),
            Move::NextCaption => self.eventful(true),
            Move::PrevCaption => self.eventful(false),
        })
    }

    /// A replay playing stops at the last refresh.
    pub(super) fn stop_at_end(&mut self) {
        let last = self.last_step();
        if let Observed::Replay { timeline, playing } = self
            && timeline.step() >= last
        {
            *playing = false;
        }
    }

    /// The next (`forward`) or previous refresh where something happened
    /// (changed, failed, answered again), else the end or the start: the
    /// observation's `]` and `[`, as it has no captions.
    fn eventful(&self, forward: bool) -> usize {
        let (step, last) = (self.step(), self.last_step());
        let Observed::Replay { timeline, .. } = self else {
            return step;
        };
        let eventful = timeline.eventful_steps();
        if forward {
            eventful.range(step + 1..).next().copied().unwrap_or(last)
        } else {
            eventful.range(..step).next_back().copied().unwrap_or(0)
        }
    }

    /// While a replay plays: the time to the next refresh at the recorded
    /// pace, divided by `speed`.
    pub(super) fn next_step_delay_ms(&self, speed: f64) -> Option<u64> {
        let Observed::Replay {
            timeline,
            playing: true,
        } = self
        else {
            return None;
        };
        let (step, observation) = (timeline.step(), timeline.observation());
        if step >= observation.len() {
            return None;
        }
        let gap = observation.at_ms(step + 1) - observation.at_ms(step);
        Some((gap as f64 / speed).round() as u64)
    }

    /// Live: makes each refresh that ended a step. None when none had.
    pub(super) fn take_refreshes(&mut self) -> Option<Refreshes> {
        let Observed::Live(live) = self else {
            return None;
        };
        let refreshed = live.refresher.take();
        if refreshed.is_empty() {
            return None;
        }
        let mut not_recorded = None;
        for r in refreshed {
            if let Err(e) = live.session.push(r) {
                not_recorded = Some(e.to_string());
            }
        }
        let view = live.session.view();
        let failed = crate::session::observation::is_stale(view).then(|| {
            view.errors
                .last()
                .map_or_else(String::new, |e| e.message.clone())
        });
        Some(Refreshes {
            step: view.step,
            failed,
            changes: view.changes.sentences.len(),
            not_recorded,
        })
    }

    /// Live: asks for a refresh now (`r`). None when not live; else the
    /// step it will make and whether one may still be asked for.
    pub(super) fn request_refresh(&mut self) -> Option<(usize, bool)> {
        let Observed::Live(live) = self else {
            return None;
        };
        Some((live.session.step() + 1, live.refresher.request()))
    }
}
