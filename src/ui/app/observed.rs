//! The dashboard over a real Kafka cluster (issue 15 item 3;
//! docs/observe.md "Live"): the same panes, drawn from the observation's
//! snapshots, live or replayed from an observation recording. Live, the
//! refreshes come from a [`Refresher`] on its own thread; the event loop
//! wakes when one ends ([`App::serve_wake`]) and [`App::take_refreshes`]
//! makes each a step. `r` (the live dashboard's replicate key) asks for a
//! refresh now; engine keys are off, as for a saved state. Replayed, the
//! replay keys move through the recording's refreshes (no captions, no
//! branching: there is no engine to go live with).

use std::sync::Arc;

use tokio::sync::Notify;

use super::{App, Mode, Status, StatusKind};
use crate::session::observation::{ObservationTimeline, ObservedSession, Refresher};
use crate::session::snapshot::SnapshotSource;
use crate::ui::i18n::Lang;
use crate::ui::keys::{KeyCommand, PromptKind};
use crate::ui::layout::Layout;
use crate::ui::prompt::Prompt;
use crate::ui::theme::Theme;

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
}

impl App {
    /// The live dashboard over an observed cluster.
    pub fn observing(
        session: ObservedSession,
        refresher: Box<dyn Refresher>,
        layout: Layout,
        lang: Lang,
        theme: Theme,
    ) -> Self {
        let title = session.header().title.clone();
        let mut app = Self::with_mode(
            Mode::Observed(Observed::Live(Box::new(ObservedLive {
                session,
                refresher,
            }))),
            title,
            layout,
            lang,
            theme,
        );
        app.status = Some(Status {
            kind: StatusKind::Pending,
            text: app.lang.pick(
                "refresh 1: asking the cluster…".into(),
                "刷新 1：正在询问集群……".into(),
            ),
        });
        app
    }

    /// A replay of an observation recording, at step 0.
    pub fn observation_replay(
        timeline: ObservationTimeline,
        layout: Layout,
        lang: Lang,
        theme: Theme,
    ) -> Self {
        let title = timeline.observation().header.title.clone();
        Self::with_mode(
            Mode::Observed(Observed::Replay {
                timeline: Box::new(timeline),
                playing: false,
            }),
            title,
            layout,
            lang,
            theme,
        )
    }

    /// True while observing a cluster live (`r` refreshes).
    pub fn is_observing(&self) -> bool {
        matches!(self.mode, Mode::Observed(Observed::Live(_)))
    }

    /// The step on screen, of the driver or of the observation (none for a
    /// saved state): the event loop redraws when it moves.
    pub fn step_now(&self) -> Option<usize> {
        match &self.mode {
            Mode::Observed(o) => Some(o.step()),
            _ => self.driver().map(|d| d.step()),
        }
    }

    /// Live: makes each refresh that ended a step, and says how the last
    /// one went on the status line.
    pub(super) fn take_refreshes(&mut self) {
        self.touched();
        let Mode::Observed(Observed::Live(live)) = &mut self.mode else {
            return;
        };
        let refreshed = live.refresher.take();
        if refreshed.is_empty() {
            return;
        }
        let mut failed_to_record = None;
        for r in refreshed {
            if let Err(e) = live.session.push(r) {
                failed_to_record = Some(e);
            }
        }
        let view = live.session.view();
        let n = view.step;
        let status = match crate::session::observation::is_stale(view) {
            true => Status::error(
                view.errors
                    .last()
                    .map_or_else(String::new, |e| e.message.clone()),
            ),
            false => {
                let changes = view.changes.sentences.len();
                Status {
                    kind: StatusKind::Ok,
                    text: self.lang.pick(
                        match changes {
                            0 => format!("refresh {n}: ok, nothing changed"),
                            1 => format!("refresh {n}: ok, 1 change"),
                            c => format!("refresh {n}: ok, {c} changes"),
                        },
                        format!("刷新 {n}：成功，{changes} 处变化"),
                    ),
                }
            }
        };
        self.status = Some(match failed_to_record {
            Some(e) => Status::error(e),
            None => status,
        });
        self.follow();
    }

    /// Replay playing: the next refresh; the end stops playing.
    pub(super) fn observed_tick(&mut self) {
        if let Mode::Observed(o @ Observed::Replay { .. }) = &mut self.mode {
            let next = o.step() + 1;
            o.goto(next);
            if let Observed::Replay { timeline, playing } = o
                && timeline.step() >= timeline.observation().len()
            {
                *playing = false;
            }
            self.moved_in_observation();
        }
    }

    /// A replay moved to another refresh: the partitions pane follows what
    /// it changed, and the status line says a failed refresh's error, as
    /// the live screen said it (nothing for one that answered).
    pub(super) fn moved_in_observation(&mut self) {
        self.touched();
        let view = self.view();
        self.status = crate::session::observation::is_stale(view)
            .then(|| view.errors.last().map(|e| Status::error(e.message.clone())))
            .flatten();
        self.follow();
    }

    /// The keys that mean something else over an observation: `r` live;
    /// the replay keys in a replay. None: the key does what it does
    /// everywhere (focus, scroll, zoom, …), or is an engine key, off.
    pub(super) fn observed_command(&mut self, command: KeyCommand) -> Option<Result<(), String>> {
        let Mode::Observed(o) = &mut self.mode else {
            return None;
        };
        match (o, command) {
            (Observed::Live(live), KeyCommand::ReplicateAll) => {
                let n = live.session.step() + 1;
                self.status = Some(if live.refresher.request() {
                    Status {
                        kind: StatusKind::Pending,
                        text: self.lang.pick(
                            format!("refresh {n}: asking the cluster…"),
                            format!("刷新 {n}：正在询问集群……"),
                        ),
                    }
                } else {
                    Status::error(self.lang.pick(
                        "no more refreshes: --refreshes is reached".into(),
                        "不再刷新：已达到 --refreshes 的次数".into(),
                    ))
                });
                Some(Ok(()))
            }
            (Observed::Live(_), _) => None,
            (o @ Observed::Replay { .. }, command) => {
                let (step, last) = (o.step(), o.last_step());
                let target = match command {
                    KeyCommand::NextStep => step + 1,
                    KeyCommand::PrevStep => step.saturating_sub(1),
                    KeyCommand::FirstStep => 0,
                    KeyCommand::LastStep => last,
                    // No captions here: `]` and `[` go to the next and
                    // previous refresh where something happened (changed,
                    // failed, answered again), else to the end or start.
                    KeyCommand::NextCaption | KeyCommand::PrevCaption => {
                        let Observed::Replay { timeline, .. } = &*o else {
                            unreachable!("matched a replay above")
                        };
                        let eventful = timeline.eventful_steps();
                        if command == KeyCommand::NextCaption {
                            eventful.range(step + 1..).next().copied().unwrap_or(last)
                        } else {
                            eventful.range(..step).next_back().copied().unwrap_or(0)
                        }
                    }
                    KeyCommand::PlayPause => {
                        if let Observed::Replay { playing, .. } = o {
                            *playing = !*playing;
                            // Playing from the end starts over.
                            if !*playing || step < last {
                                return Some(Ok(()));
                            }
                        }
                        0
                    }
                    KeyCommand::Prompt(PromptKind::GotoStep) => {
                        self.prompt =
                            Some(Prompt::selecting(PromptKind::GotoStep, step.to_string()));
                        return Some(Ok(()));
                    }
                    KeyCommand::Branch => {
                        self.status = Some(Status::error(self.lang.pick(
                            "an observation cannot branch: there is no engine behind it to go live with".into(),
                            "观察记录不能分支：背后没有可以接着运行的引擎".into(),
                        )));
                        return Some(Ok(()));
                    }
                    _ => return None,
                };
                Some(self.goto(target))
            }
        }
    }
}
