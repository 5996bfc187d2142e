//! `Session`: what the dashboard shows and drives, one type for its four
//! modes: live (keys and Kafka clients drive one engine), a replay of a
//! recording, a saved state (`render --state`) and an observed Kafka
//! cluster (live or replayed). The dashboard keeps only how it looks
//! (focus, selection, scroll, prompt, help) and asks the session for the
//! rest: [`Session::snapshot`], [`Session::apply`], [`Session::goto`],
//! [`Session::undo`], [`Session::branch`]. What differs between the modes
//! is decided here, each mode in its own file ([`Live`], [`Replay`],
//! [`Observed`]), so the dashboard's `update` does not branch on them.

use crate::session::SessionError;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

use crate::session::client_steps::Told;
use crate::session::listeners::Listeners;
use crate::session::live::{Applied, ArmError, Live};
use crate::session::observation::{ObservationTimeline, ObservedSession, Refresher};
use crate::session::observed::{Observed, ObservedLive, Refreshes};
use crate::session::recording::{Caption, Header, Step};
use crate::session::replay::{Move, Replay, Travel, recorded_screen};
use crate::session::said::Said;
use crate::session::snapshot::source::apply_all;
use crate::session::snapshot::{Bounds, SavedState, Snapshot, SnapshotSource};
use crate::session::step_log::StepLog;
use crate::session::ui_step::{UiScreen, UiStep};
use crate::session::{Action, Driver, Recording, RecordingWriter, Timeline};

/// Opens the recording a branch writes (`replay FILE --record OUT`): given
/// the header and the replay's steps up to the branch.
pub type BranchRecorder =
    Box<dyn FnOnce(&Header, &[Step]) -> Result<RecordingWriter, SessionError>>;

/// Opens the Kafka listeners of a branch (`replay FILE --listen ADDR`):
/// given the branch's driver; returns them and the line saying where they
/// listen.
pub type BranchListeners =
    Box<dyn FnOnce(&Driver) -> Result<(Box<dyn Listeners>, String), SessionError>>;

/// The session behind the dashboard (see the module's comment).
pub struct Session {
    mode: Mode,
    /// Replay: how a branch records its live session (`--record`).
    branch_recorder: Option<BranchRecorder>,
    /// Replay: how a branch opens its Kafka listeners (`--listen`).
    branch_listeners: Option<BranchListeners>,
}

enum Mode {
    Live(Box<Live>),
    Replay(Replay),
    Saved(Box<SavedState>),
    Observed(Observed),
}

/// Where a [`Session::goto`] went.
#[derive(Debug)]
pub enum Went {
    /// Nowhere: the session has no steps to move through (live, saved).
    Nowhere,
    /// A recording's timeline moved: the screens its `ui` steps record at
    /// the step left and at the step reached, and how the move went.
    Recording {
        left: UiScreen,
        reached: UiScreen,
        moved: Result<(), SessionError>,
    },
    /// An observation moved to another refresh.
    Observation,
}

/// What a [`Session::branch`] did.
#[derive(Debug)]
pub enum Branch {
    /// Nothing: only a replay branches.
    NotHere,
    /// This session cannot branch (an observation): why.
    Refused(Said),
    /// A live session now, from the replay's step: its title and what the
    /// status line says.
    Branched { title: Said, said: Said },
}

/// What the listeners or the refresher brought ([`Session::serve`]).
#[derive(Debug)]
pub enum Served {
    Nothing,
    /// Kafka clients were served (`--listen`): whether the engine changed,
    /// and the last step they applied.
    Clients {
        changed: bool,
        told: Option<Told>,
    },
    /// Refreshes of an observed cluster were taken.
    Refreshes(Refreshes),
}

impl Session {
    fn of(mode: Mode) -> Self {
        Self {
            mode,
            branch_recorder: None,
            branch_listeners: None,
        }
    }

    /// A live session on `driver` (freshly created from `header`).
    pub fn live(driver: Driver, header: Header, recorder: Option<RecordingWriter>) -> Self {
        Self::of(Mode::Live(Box::new(Live {
            driver,
            header,
            log: StepLog::dashboard(Vec::new(), recorder),
            before: None,
            at_moment: false,
            listeners: None,
            intro: None,
            guide: None,
            setup_steps: 0,
        })))
    }

    /// A replay of `recording` at step 0, checkpointing every `every`
    /// steps.
    pub fn replay(recording: Recording, every: usize) -> Result<Self, SessionError> {
        let timeline = Timeline::new(recording, every)?;
        Ok(Self::of(Mode::Replay(Replay {
            timeline: Box::new(timeline),
            playing: false,
        })))
    }

    /// A saved state (`render --state`): one snapshot, nothing to drive.
    pub fn saved(snapshot: Snapshot) -> Self {
        Self::of(Mode::Saved(Box::new(SavedState(snapshot))))
    }

    /// A live observation of a Kafka cluster.
    pub fn observing(session: ObservedSession, refresher: Box<dyn Refresher>) -> Self {
        Self::of(Mode::Observed(Observed::Live(Box::new(ObservedLive {
            session,
            refresher,
        }))))
    }

    /// A replay of an observation recording, at step 0.
    pub fn observation_replay(timeline: ObservationTimeline) -> Self {
        Self::of(Mode::Observed(Observed::Replay {
            timeline: Box::new(timeline),
            playing: false,
        }))
    }

    /// Live: `caption` is shown until the first step of the session's own
    /// (the steps it has now are where it starts), so a start whose last
    /// step has no caption, or the wrong one, says what to try.
    pub fn set_intro(&mut self, caption: Caption) {
        if let Mode::Live(live) = &mut self.mode {
            live.intro = Some((live.log.len(), caption));
        }
    }

    /// Live: a lab's key guide from now on: its intro until the first
    /// step, then on every step the keys that remain.
    pub fn set_guide(&mut self, guide: crate::session::guide::Guide) {
        if let Mode::Live(live) = &mut self.mode {
            live.intro = Some((live.log.len(), guide.intro.clone()));
            live.guide = Some((live.log.len(), guide));
        }
    }

    /// Live: the steps it has now built the cluster it starts on; their
    /// events are left out of the Events pane, which starts clean.
    pub fn hide_setup_events(&mut self) {
        if let Mode::Live(live) = &mut self.mode {
            live.setup_steps = live.log.len();
        }
    }

    /// Live: the snapshot before the driver's last step, so the first
    /// frame shows what that step changed.
    pub fn set_before(&mut self, before: Option<Snapshot>) {
        if let Mode::Live(live) = &mut self.mode {
            live.before = before;
        }
    }

    /// Live: the steps the driver has applied (the demo's): undo can go
    /// back into them, and new steps are paced after the last one's.
    pub fn set_history(&mut self, steps: Vec<Step>) {
        if let Mode::Live(live) = &mut self.mode {
            let clock = live.driver.clock_ms();
            live.log.start_from(steps, clock);
        }
    }

    /// Live: Kafka listeners beside the driver (`--listen`).
    pub fn set_listeners(&mut self, listeners: Box<dyn Listeners>) {
        if let Mode::Live(live) = &mut self.mode {
            live.listeners = Some(listeners);
        }
    }

    /// Replay: how a branch opens its recording (`--record`).
    pub fn set_branch_recorder(&mut self, open: BranchRecorder) {
        self.branch_recorder = Some(open);
    }

    /// Replay: how a branch opens its Kafka listeners (`--listen`).
    pub fn set_branch_listeners(&mut self, open: BranchListeners) {
        self.branch_listeners = Some(open);
    }

    /// True live (keys drive the engine).
    pub fn is_live(&self) -> bool {
        matches!(self.mode, Mode::Live(_))
    }

    /// True for a saved state.
    pub fn is_saved(&self) -> bool {
        matches!(self.mode, Mode::Saved(_))
    }

    /// True replaying a recording or an observation.
    pub fn is_replay(&self) -> bool {
        matches!(
            self.mode,
            Mode::Replay(_) | Mode::Observed(Observed::Replay { .. })
        )
    }

    /// True while a replay plays at the recorded pace.
    pub fn is_playing(&self) -> bool {
        matches!(
            self.mode,
            Mode::Replay(Replay { playing: true, .. })
                | Mode::Observed(Observed::Replay { playing: true, .. })
        )
    }

    /// True while observing a cluster live (`r` refreshes).
    pub fn is_observing(&self) -> bool {
        matches!(self.mode, Mode::Observed(Observed::Live(_)))
    }

    /// True live while the last step's moment of death is shown.
    pub fn live_at_moment(&self) -> bool {
        matches!(&self.mode, Mode::Live(live) if live.at_moment)
    }

    /// The driver behind the current state (none for a saved state or an
    /// observation).
    pub fn driver(&self) -> Option<&Driver> {
        match &self.mode {
            Mode::Live(live) => Some(&live.driver),
            Mode::Replay(replay) => Some(replay.timeline.driver()),
            Mode::Saved(_) | Mode::Observed(_) => None,
        }
    }

    /// The replayed recording's timeline.
    pub fn timeline(&self) -> Option<&Timeline> {
        match &self.mode {
            Mode::Replay(replay) => Some(&replay.timeline),
            _ => None,
        }
    }

    /// The steps a live session applied, in order (none otherwise).
    pub fn history(&self) -> &[Step] {
        match &self.mode {
            Mode::Live(live) => live.log.steps(),
            _ => &[],
        }
    }

    /// The action of the step on screen: a live session's last step, a
    /// replay's current one (none at step 0, for a saved state or an
    /// observation).
    pub fn action_on_screen(&self) -> Option<&Action> {
        match &self.mode {
            Mode::Live(live) => live.log.steps().last().map(|s| &s.action),
            Mode::Replay(replay) => {
                let step = replay.timeline.step().checked_sub(1)?;
                replay
                    .timeline
                    .recording()
                    .steps
                    .get(step)
                    .map(|s| &s.action)
            }
            Mode::Saved(_) | Mode::Observed(_) => None,
        }
    }

    /// The step on screen, of the driver or of the observation (none for a
    /// saved state).
    pub fn step_now(&self) -> Option<usize> {
        match &self.mode {
            Mode::Observed(o) => Some(o.step()),
            _ => self.driver().map(|d| d.step()),
        }
    }

    /// In a replay, the step on screen (where `g` starts).
    pub fn replay_step(&self) -> Option<usize> {
        match &self.mode {
            Mode::Replay(replay) => Some(replay.timeline.step()),
            Mode::Observed(o @ Observed::Replay { .. }) => Some(o.step()),
            _ => None,
        }
    }

    /// The last step `g` may go to.
    pub fn last_step(&self) -> usize {
        match &self.mode {
            Mode::Replay(replay) => replay.timeline.recording().steps.len(),
            Mode::Observed(o) => o.last_step(),
            _ => 0,
        }
    }

    /// Why keys that change the engine do nothing here (None: live).
    pub fn engine_keys_off(&self) -> Option<Said> {
        let (en, zh) = match self.mode {
            Mode::Live(_) => return None,
            Mode::Replay(_) => ("replay: engine keys are off", "回放：引擎按键不可用"),
            Mode::Saved(_) => (
                "saved state: engine keys are off",
                "保存的状态：引擎按键不可用",
            ),
            Mode::Observed(_) => (
                "observed: engine keys are off (read-only)",
                "观察：引擎按键不可用（只读）",
            ),
        };
        Some(Said::new(en, zh))
    }

    /// What wakes the event loop when listeners or a refresher have
    /// something, and how long until a server timer is due (None: nothing
    /// wakes it).
    pub fn wake(&self) -> Option<(Arc<Notify>, Option<Duration>)> {
        match &self.mode {
            Mode::Live(live) => live.listeners.as_ref().map(|l| (l.wake(), l.next_due())),
            Mode::Observed(o) => o.wake().map(|w| (w, None)),
            _ => None,
        }
    }

    /// Where the frames' snapshots (and their record values) come from.
    pub fn source(&self) -> &dyn SnapshotSource {
        match &self.mode {
            Mode::Live(live) => &live.driver,
            Mode::Replay(replay) => &*replay.timeline,
            Mode::Saved(saved) => &**saved,
            Mode::Observed(observed) => observed.source(),
        }
    }

    /// The snapshot of the current state as a frame shows it
    /// ([`Bounds::FRAME`], no record values).
    pub fn snapshot(&self) -> Snapshot {
        let snapshot = self.source().snapshot(&Bounds::FRAME);
        match &self.mode {
            Mode::Live(live) => live.shown(snapshot),
            _ => snapshot,
        }
    }

    /// Live: applies `action` as the next step (with `caption`, if any),
    /// kept and recorded. Err: why it was not applied (not live, past a
    /// limit), or why it was applied but not recorded.
    pub fn apply(&mut self, action: Action, caption: Option<Caption>) -> Result<Applied, Said> {
        if let Some(off) = self.engine_keys_off() {
            return Err(off);
        }
        let Mode::Live(live) = &mut self.mode else {
            unreachable!("engine keys are on only live")
        };
        live.apply(action, caption)
    }

    /// Live and recording: a screen change becomes a `ui` step (Some: it
    /// did, and how it went). Without a recording a screen change is not a
    /// step of the session.
    pub fn record_ui(&mut self, ui: UiStep) -> Option<Result<(), Said>> {
        match &mut self.mode {
            Mode::Live(live) if live.log.is_recording() => {
                Some(live.apply(Action::Ui(ui), None).map(|_| ()))
            }
            _ => None,
        }
    }

    /// Live: undoes the last step (None: not live; see [`Live::undo`]).
    pub fn undo(&mut self) -> Option<Result<Said, Said>> {
        match &mut self.mode {
            Mode::Live(live) => Some(live.undo()),
            _ => None,
        }
    }

    /// Where a replay key goes. Live, `space` at a crash's moment of death
    /// shows its recovery; nothing else moves outside a replay.
    pub fn travel(&mut self, mv: Move) -> Travel {
        match &mut self.mode {
            Mode::Live(live) if mv == Move::Next && live.at_moment => {
                live.at_moment = false;
                Travel::Stay
            }
            Mode::Replay(replay) => replay.travel(mv),
            Mode::Observed(o) => o.travel(mv),
            _ => Travel::Stay,
        }
    }

    /// After going forward from step `from` ([`Travel::To`]): a step
    /// reached that crashed the cluster shows its moment of death first.
    /// True when it does.
    pub fn land_on_moment(&mut self, from: usize) -> bool {
        match &mut self.mode {
            Mode::Replay(replay) => {
                replay.timeline.step() == from + 1 && replay.timeline.show_moment(true)
            }
            _ => false,
        }
    }

    /// Moves a replay to `step`.
    pub fn goto(&mut self, step: usize) -> Went {
        match &mut self.mode {
            Mode::Replay(replay) => {
                let timeline = &mut replay.timeline;
                let left = recorded_screen(timeline, timeline.step());
                let moved = timeline.goto(step).map(|_| ());
                let reached = recorded_screen(timeline, timeline.step());
                Went::Recording {
                    left,
                    reached,
                    moved,
                }
            }
            Mode::Observed(o) => {
                o.goto(step);
                Went::Observation
            }
            _ => Went::Nowhere,
        }
    }

    /// Play or pause a replay. Some(0): playing from the end starts over
    /// there.
    pub fn play_pause(&mut self) -> Option<usize> {
        let (step, last) = (self.replay_step()?, self.last_step());
        let playing = match &mut self.mode {
            Mode::Replay(Replay { playing, .. })
            | Mode::Observed(Observed::Replay { playing, .. }) => playing,
            _ => return None,
        };
        *playing = !*playing;
        (*playing && step >= last).then_some(0)
    }

    /// A replay playing stops at the end (after the last step's recovery).
    pub fn stop_at_end(&mut self) {
        match &mut self.mode {
            Mode::Replay(replay) if replay.at_end() => replay.playing = false,
            Mode::Observed(o) => o.stop_at_end(),
            _ => {}
        }
    }

    /// The recorded pace while a replay plays: milliseconds to the next
    /// step at `speed` times the recorded pace.
    pub fn next_step_delay_ms(&self, speed: f64) -> Option<u64> {
        match &self.mode {
            Mode::Replay(replay) => replay.next_step_delay_ms(speed),
            Mode::Observed(o) => o.next_step_delay_ms(speed),
            _ => None,
        }
    }

    /// Branch here: a new live session starts from this exact step of a
    /// replay. Its driver replays the recording's steps up to here (the
    /// engine is a pure function of them, so it is the same state), its
    /// history and its recording (if `--record` was given) start with
    /// those steps, and keys now drive the engine. RaftScope's fork: "what
    /// if we crash here instead?" Err: the branch could not start.
    pub fn branch(&mut self) -> Result<Branch, SessionError> {
        let timeline = match &self.mode {
            Mode::Replay(replay) => &replay.timeline,
            Mode::Observed(Observed::Replay { .. }) => {
                return Ok(Branch::Refused(Said::new(
                    "an observation cannot branch: there is no engine behind it to go live with",
                    "观察记录不能分支：背后没有可以接着运行的引擎",
                )));
            }
            _ => return Ok(Branch::NotHere),
        };
        let step = timeline.step();
        let recording = timeline.recording();
        let header = recording.header.clone();
        let steps = recording.steps[..step].to_vec();
        let mut driver = Driver::new(&header, None)?;
        let before = apply_all(&mut driver, steps.iter().map(|s| &s.action));
        let (listeners, listening) = match self.branch_listeners.take() {
            Some(open) => {
                let (l, said) = open(&driver)?;
                (Some(l), format!("; {said}"))
            }
            None => (None, String::new()),
        };
        let recorder = match self.branch_recorder.take() {
            Some(open) => Some(open(&header, &steps)?),
            None => None,
        };
        let title = Said::new(
            format!("{} (branched at step {step})", header.title),
            format!("{}（在步骤 {step} 分支）", header.title_in("zh")),
        );
        let said = Said::new(
            format!("branched at step {step}: keys now drive the engine{listening}"),
            format!("已在步骤 {step} 分支：现在按键驱动引擎{listening}"),
        );
        let intro = Caption::Bilingual {
            en: format!(
                "Branched at step {step} of \u{201c}{}\u{201d}: keys now drive the engine from here. Try x to crash here, r to replicate, u to undo a step.",
                header.title
            ),
            zh: format!(
                "已在\u{201c}{}\u{201d}的步骤 {step} 分支：从这里起按键驱动引擎。试试 x 在此崩溃、r 复制、u 撤销一步。",
                header.title_in("zh")
            ),
        };
        self.mode = Mode::Live(Box::new(Live {
            driver,
            header,
            log: StepLog::dashboard(steps, recorder),
            before,
            at_moment: false,
            listeners,
            intro: Some((step, intro)),
            guide: None,
            setup_steps: 0,
        }));
        Ok(Branch::Branched { title, said })
    }

    /// Takes what the listeners (`--listen`) or the refresher (observing)
    /// have: requests and due timers, each a step; refreshes, each a step.
    pub fn serve(&mut self) -> Served {
        match &mut self.mode {
            Mode::Live(live) => {
                let (changed, told) = live.serve();
                Served::Clients { changed, told }
            }
            Mode::Observed(o) => o
                .take_refreshes()
                .map_or(Served::Nothing, Served::Refreshes),
            _ => Served::Nothing,
        }
    }

    /// `D` (`--listen`): see [`Live::arm_drop_produce_response`]. Err with
    /// `NoListeners` outside a live session too.
    pub fn arm_drop_produce_response(&mut self) -> Result<Option<Told>, ArmError> {
        match &mut self.mode {
            Mode::Live(live) => live.arm_drop_produce_response(),
            _ => Err(ArmError::NoListeners),
        }
    }

    /// Observing live: asks for a refresh now (`r`). None when not
    /// observing live; else the step it will make and whether one may
    /// still be asked for.
    pub fn request_refresh(&mut self) -> Option<(usize, bool)> {
        match &mut self.mode {
            Mode::Observed(o) => o.request_refresh(),
            _ => None,
        }
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
