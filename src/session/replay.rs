//! A recording replayed, as a mode of the [`Session`](super::Session): its
//! timeline, whether it plays, and how the replay keys move through it. A
//! step that crashed the cluster is two sub-steps (docs/dashboard.md
//! "Crashes as moments"): forward onto it shows its moment of death first
//! and the next forward its recovery; back goes the same way in reverse.
//! Neither sub-step move touches the engine.

use crate::session::Action;
use crate::session::Timeline;
use crate::session::ui_step::UiScreen;

/// A recording being replayed.
pub struct Replay {
    pub timeline: Box<Timeline>,
    pub playing: bool,
}

/// A move of the replay keys through the steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    Next,
    Prev,
    First,
    Last,
    /// The next captioned step (an observation: the next eventful one).
    NextCaption,
    PrevCaption,
}

/// Where a [`Move`] goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Travel {
    /// Nowhere in the recording: nothing to move, or only a crash's
    /// sub-step changed (the screen shows it; nothing else follows).
    Stay,
    /// To this step ([`super::Session::goto`]); after it, forward onto a
    /// step that crashed shows its moment first
    /// ([`super::Session::land_on_moment`]).
    To(usize),
}

impl Replay {
    /// Where `mv` goes from the current step.
    pub fn travel(&mut self, mv: Move) -> Travel {
        let timeline = &mut self.timeline;
        let step = timeline.step();
        match mv {
            Move::Next if timeline.at_moment() => {
                timeline.show_moment(false);
                return Travel::Stay;
            }
            Move::Prev if timeline.show_moment(true) => return Travel::Stay,
            _ => {}
        }
        let steps = &timeline.recording().steps;
        // Step n's caption is on line n of the recording (steps[n - 1]).
        let captioned = |n: &usize| steps[*n - 1].caption.is_some();
        Travel::To(match mv {
            Move::Next => step + 1,
            Move::Prev => step.saturating_sub(1),
            Move::First => 0,
            Move::NextCaption => (step + 1..=steps.len())
                .find(captioned)
                .unwrap_or(steps.len()),
            Move::PrevCaption => (1..step).rev().find(captioned).unwrap_or(0),
            Move::Last => steps.len(),
        })
    }

    /// The recorded pace: milliseconds from the current step to the next
    /// one, divided by `speed`, if playing and there is a next step.
    pub fn next_step_delay_ms(&self, speed: f64) -> Option<u64> {
        if !self.playing {
            return None;
        }
        let timeline = &self.timeline;
        let steps = &timeline.recording().steps;
        let step = timeline.step();
        let next = steps.get(step)?;
        let now = step
            .checked_sub(1)
            .and_then(|i| steps.get(i))
            .map_or(0, |s| s.at_ms);
        let mut gap = next.at_ms.saturating_sub(now) as f64 / speed;
        // A step that crashed shows two sub-steps (the moment of death,
        // then the recovery): they share its gap, so playing keeps the
        // recorded pace.
        if timeline.driver().last_moment().is_some() {
            gap /= 2.0;
        }
        Some(gap.round() as u64)
    }

    /// True at the end of the recording, after the last step's recovery.
    pub fn at_end(&self) -> bool {
        self.timeline.step() >= self.timeline.recording().steps.len() && !self.timeline.at_moment()
    }
}

/// The screen the `ui` steps among a recording's first `step` steps leave.
pub fn recorded_screen(timeline: &Timeline, step: usize) -> UiScreen {
    timeline.recording().steps[..step.min(timeline.recording().steps.len())]
        .iter()
        .filter_map(|s| match &s.action {
            Action::Ui(ui) => Some(ui),
            _ => None,
        })
        .fold(UiScreen::default(), |screen, ui| screen.apply(ui))
}
