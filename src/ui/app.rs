//! `App`: the dashboard's view state (focus, selection, toggles, scroll,
//! prompt, help, presentation, status) over a [`Session`], and
//! [`App::update`], the one place it changes. As in ratatui's own apps
//! (demo2, crates-tui), the event loop turns terminal events into
//! [`Msg`]s (`ui::run::message`) and hands each to `update`; tests,
//! `render` and `export` send the same messages.
//!
//! The session holds what is shown and driven (live, a replay, a saved
//! state or an observation) and decides what differs between them; the
//! app asks it and keeps how the screen looks.
//!
//! In a live session with `--record`, every screen change (focus, selected
//! batch, isolation view, help) is also a `ui` step of the session (SPEC §4),
//! so the step numbers of the session and of its replay agree. A replay
//! shows the recorded `ui` steps as the timeline passes over them, forward
//! and back (see [`App::goto`] and docs/dashboard.md).
//!
//! Zoom (`f`), presentation (`P`) and scrolling are the room's view, not the
//! lesson's screen: they are not `ui` steps and a replay leaves them as the
//! viewer set them. The help overlay is modal: while it is open only
//! closing it, scrolling it and quitting do anything.
//!
//! The app never lays the screen out: it keeps the map the last frame drew
//! ([`App::draw`], [`App::frame_map`]) for clicks and scrolling, and builds
//! the snapshot once per change of state ([`App::view`]).

use crate::session::SessionError;
use std::cell::{Cell, OnceCell};
use std::collections::BTreeMap;

use crate::session::recording::{Header, Step};
use crate::session::replay::{Move, Travel};
use crate::session::session::Went;
use crate::session::snapshot::{Isolation, Snapshot};
use crate::session::ui_step::Selection;
use crate::session::{Action, Driver, Recording, RecordingWriter, Session};
use crate::ui::frame::FrameMap;
use crate::ui::i18n::Lang;
use crate::ui::keys::{KeyCommand, PromptEdit, PromptKind};
use crate::ui::layout::Layout;
use crate::ui::panes::PaneId;
use crate::ui::prompt::{self, Facts, Prompt};
use crate::ui::theme::Theme;

mod edit;
mod frame_map;
mod observed;
mod screen;
mod steps;

use crate::session::listeners::Listeners;
pub use crate::session::session::{BranchListeners, BranchRecorder};
pub use crate::ui::status::{Status, StatusKind};
pub use screen::pane_name;

/// Everything that can happen to the dashboard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Msg {
    /// A key command (no prompt open).
    Command(KeyCommand),
    /// A key in the open prompt.
    Edit(PromptEdit),
    /// Replay while playing: the next step is due at the recorded pace.
    Tick,
    /// The terminal is this many columns and rows (sent at start and on
    /// every resize). Frames are built for their own area whatever this
    /// says; it only bounds scrolling the help, so that no key press is
    /// spent scrolling past its last page.
    Resize(u16, u16),
    /// Replay: go to this step (headless `render` and `export`).
    Goto(usize),
    /// Live: apply this action now, as a key without a prompt does.
    Apply(Action),
    /// A left click at this terminal cell: focuses the pane there.
    Click(u16, u16),
    /// The mouse wheel at this cell: focuses the pane there and scrolls it
    /// (up when true).
    Wheel(u16, u16, bool),
    /// Requests came in or a server timer is due (`--listen`), or a
    /// refresh ended (observing): the session takes them.
    Serve,
}

/// The dashboard's state. Fields are public for drawing and for tests to
/// read; [`App::update`] is what changes them.
pub struct App {
    session: Session,
    pub layout: Layout,
    pub lang: Lang,
    pub theme: Theme,
    pub title: String,
    /// Index into `layout.panes()`.
    pub focus: usize,
    pub scroll: BTreeMap<PaneId, usize>,
    /// The selected batch of the partitions pane: by partition and base
    /// offset, so a client writing elsewhere does not move it (see
    /// [`Self::selected_row`] for the row the panes draw it at).
    pub selected: Selection,
    /// The help the viewer opened with `?`: modal.
    pub show_help: bool,
    /// Replay: the recording shows the help at the step on screen (the
    /// fold of its `ui` steps). Drawn, but not modal: the replayer's own
    /// keys still work under it (docs/dashboard.md "Decisions").
    pub recorded_help: bool,
    /// The help overlay's first line shown.
    pub help_scroll: usize,
    /// The terminal's size, from [`Msg::Resize`] (none headless).
    pub size: Option<(u16, u16)>,
    /// `f`: the focused pane fills the body.
    pub zoomed: bool,
    /// `P`: one or two panes above a large caption.
    pub presenting: bool,
    /// Drawn for a cast (`mk-tui export`): the key bar names the keys of
    /// a cast player, not the dashboard's, which a player does not have.
    pub player_keys: bool,
    /// `v` while presenting: the pair of panes picked (an index into
    /// [`crate::ui::present_panes::PAIRS`]); None follows the lesson or
    /// the step.
    pub present_pick: Option<usize>,
    pub prompt: Option<Prompt>,
    /// The last outcome or error.
    pub status: Option<Status>,
    /// The transaction last begun from a key: the default for send/commit.
    pub last_txn: Option<String>,
    /// The consumer whose eyes the partitions pane uses (`i` toggles).
    pub isolation: Isolation,
    pub quit: bool,
    /// Replay: the play speed, an index into [`SPEEDS`].
    pub speed: usize,
    /// The snapshot of the current state, built once per change
    /// ([`Self::view`]) and shared by every pane, click and key.
    view: OnceCell<Snapshot>,
    /// How many snapshots have been built ([`Self::snapshot_builds`]).
    builds: Cell<usize>,
    /// The map of the last frame drawn: on screen (None), or, when nothing
    /// was drawn since the state changed, into a throwaway buffer at
    /// generation `n` (Some(n)); see [`Self::frame_map`].
    last_map: Option<(FrameMap, Option<u64>)>,
    /// Counts the updates: a throwaway map is the state of one generation.
    generation: u64,
}

/// Play speeds, as multiples of the recorded pace (`+` and `-`).
pub const SPEEDS: [f64; 6] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0];
/// The recorded pace.
const NORMAL_SPEED: usize = 2;

impl App {
    /// A live app on a driver.
    pub fn live(
        driver: Driver,
        header: Header,
        recorder: Option<RecordingWriter>,
        layout: Layout,
        lang: Lang,
        theme: Theme,
    ) -> Self {
        let title = header.title_in(lang.code()).to_string();
        let session = Session::live(driver, header, recorder);
        Self::new(session, title, layout, lang, theme)
    }

    /// A replay of a recording, at step 0.
    pub fn replay(
        recording: Recording,
        layout: Layout,
        lang: Lang,
        theme: Theme,
    ) -> Result<Self, SessionError> {
        let every = crate::session::timeline::DEFAULT_CHECKPOINT_EVERY;
        Self::replay_every(recording, every, layout, lang, theme)
    }

    /// A replay that checkpoints every `every` steps (`usize::MAX`: only
    /// step 0). `render` and `export` only go forward, so they take no
    /// checkpoints: each is a copy of the data directory, and one every 50
    /// steps made a long recording cost O(steps²).
    pub fn replay_every(
        recording: Recording,
        every: usize,
        layout: Layout,
        lang: Lang,
        theme: Theme,
    ) -> Result<Self, SessionError> {
        let title = recording.header.title_in(lang.code()).to_string();
        let session = Session::replay(recording, every)?;
        Ok(Self::new(session, title, layout, lang, theme))
    }

    /// A saved state drawn as the dashboard would (`render --state`).
    pub fn saved(snapshot: Snapshot, layout: Layout, lang: Lang, theme: Theme) -> Self {
        let title = snapshot.title.clone();
        Self::new(Session::saved(snapshot), title, layout, lang, theme)
    }

    /// The dashboard over `session`, titled `title`.
    pub fn new(session: Session, title: String, layout: Layout, lang: Lang, theme: Theme) -> Self {
        Self {
            session,
            layout,
            lang,
            theme,
            title,
            focus: 0,
            scroll: BTreeMap::new(),
            selected: Selection::Clear,
            show_help: false,
            recorded_help: false,
            help_scroll: 0,
            size: None,
            zoomed: false,
            presenting: false,
            player_keys: false,
            present_pick: None,
            prompt: None,
            status: None,
            last_txn: None,
            isolation: Isolation::ReadCommitted,
            quit: false,
            speed: NORMAL_SPEED,
            view: OnceCell::new(),
            builds: Cell::new(0),
            last_map: None,
            generation: 0,
        }
    }

    /// A live app that knows the snapshot before its driver's last step
    /// (see `session::snapshot::source::apply_all`), so its first frame
    /// shows what that step changed.
    pub fn with_before(mut self, before: Option<Snapshot>) -> Self {
        self.touched();
        self.session.set_before(before);
        self
    }

    /// A live app that knows the steps its driver has applied (the demo's):
    /// undo can then go back into them, and new steps are paced after the
    /// last one's `at_ms`.
    pub fn with_history(mut self, steps: Vec<Step>) -> Self {
        self.touched();
        self.session.set_history(steps);
        self
    }

    /// A live app that shows `caption` until its first step of its own
    /// (a lab's start, which has no step to carry one).
    pub fn with_intro(mut self, caption: crate::session::recording::Caption) -> Self {
        self.touched();
        self.session.set_intro(caption);
        self
    }

    /// A live app that follows a lab's key guide: its intro, then after
    /// every step the keys that remain (docs/lectures.md).
    pub fn with_guide(mut self, guide: crate::session::guide::Guide) -> Self {
        self.touched();
        self.session.set_guide(guide);
        self
    }

    /// A live app whose Events pane leaves out the steps that built its
    /// cluster (the demo's), and so starts clean.
    pub fn with_clean_events(mut self) -> Self {
        self.touched();
        self.session.hide_setup_events();
        self
    }

    /// A live app with Kafka listeners beside its driver (`--listen`).
    pub fn with_listeners(mut self, listeners: Box<dyn Listeners>) -> Self {
        self.touched();
        self.session.set_listeners(listeners);
        self
    }

    /// A replay that can branch into a recorded live session: `open` makes
    /// the recording when `b` is pressed.
    pub fn with_branch_recorder(mut self, open: BranchRecorder) -> Self {
        self.session.set_branch_recorder(open);
        self
    }

    /// A replay whose branch opens Kafka listeners beside its live
    /// session (`replay FILE --listen ADDR`): the replay itself has none,
    /// the live session after `b` does.
    pub fn with_branch_listeners(mut self, open: BranchListeners) -> Self {
        self.session.set_branch_listeners(open);
        self
    }

    /// The session behind the dashboard.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// True in replay mode.
    pub fn is_replay(&self) -> bool {
        self.session.is_replay()
    }

    /// True while a replay plays at the recorded pace.
    pub fn is_playing(&self) -> bool {
        self.session.is_playing()
    }

    /// True while observing a cluster live (`r` refreshes).
    pub fn is_observing(&self) -> bool {
        self.session.is_observing()
    }

    /// True in a live session whose last step's moment of death is shown.
    pub fn live_at_moment(&self) -> bool {
        self.session.live_at_moment()
    }

    /// True in a replay showing a step's moment of death, before its
    /// recovery (docs/dashboard.md "Crashes as moments").
    pub fn at_moment(&self) -> bool {
        self.session.timeline().is_some_and(|t| t.at_moment())
    }

    /// The driver behind the current frame (none for a saved state).
    pub fn driver(&self) -> Option<&Driver> {
        self.session.driver()
    }

    /// The step on screen, of the driver or of the observation (none for a
    /// saved state): the event loop redraws when it moves.
    pub fn step_now(&self) -> Option<usize> {
        self.session.step_now()
    }

    /// With `--listen` or observing: what wakes the loop when a request
    /// comes in or a refresh ends, and how long until a server timer is
    /// due (None: nothing wakes it).
    pub fn serve_wake(
        &self,
    ) -> Option<(
        std::sync::Arc<tokio::sync::Notify>,
        Option<std::time::Duration>,
    )> {
        self.session.wake()
    }

    /// The recorded pace: milliseconds from the current step to the next one,
    /// if playing and there is a next step.
    pub fn next_step_delay_ms(&self) -> Option<u64> {
        self.session.next_step_delay_ms(SPEEDS[self.speed])
    }

    /// The focused pane.
    pub fn focused(&self) -> Option<PaneId> {
        self.layout.panes().get(self.focus).copied()
    }

    /// The snapshot of the current state, bounded to what a frame shows,
    /// without record values: built at the first ask after a change, then
    /// shared until the next.
    pub fn view(&self) -> &Snapshot {
        self.view.get_or_init(|| self.build_snapshot())
    }

    /// A snapshot built now: what the next change would show. The
    /// listeners' registry (`--listen`) changes on their own threads, and
    /// the app takes it in at each [`Msg::Serve`]; a caller that polls it
    /// gets it here. Frames, keys and clicks share [`Self::view`].
    pub fn snapshot(&self) -> Snapshot {
        self.build_snapshot()
    }

    /// How many snapshots this app has built: one per change of state
    /// that is drawn or read, and one per [`Self::snapshot`].
    pub fn snapshot_builds(&self) -> usize {
        self.builds.get()
    }

    /// The source changed (a step, a move in time, a served request): the
    /// next [`Self::view`] builds the snapshot again.
    fn touched(&mut self) {
        self.view.take();
    }

    fn build_snapshot(&self) -> Snapshot {
        self.builds.set(self.builds.get() + 1);
        let mut snapshot = self.session.snapshot();
        self.explain_selected(&mut snapshot);
        // The title in the interface's language (the state JSON keeps the
        // header's `title`); a saved state shows the title it was saved with.
        if !self.session.is_saved() {
            snapshot.title = self.title.clone();
        }
        snapshot
    }

    /// Fills in the selected batch's explanation, the one a frame shows: a
    /// frame's snapshot decides every batch's fate but says why only when
    /// asked ([`crate::session::snapshot::Bounds::explanations`]).
    fn explain_selected(&self, snapshot: &mut Snapshot) {
        let selected = crate::ui::panes::partitions::selected_batch(snapshot, &self.selected);
        if let Some((p, b)) = selected {
            self.session.source().explain(snapshot, p, b);
        }
    }

    /// The row (all partitions' windows counted together, as `J`/`K` and
    /// the panes count them) the selected batch is drawn at, or None when
    /// nothing is selected or the batch is not in its window.
    pub fn selected_row(&self) -> Option<usize> {
        crate::ui::panes::partitions::row_of(self.view(), &self.selected)
    }

    /// What prompts check before they make an action (brokers, stopped
    /// brokers, topics, partitions and their replicas), from the current
    /// snapshot: the one read of the state for input checks.
    pub fn facts(&self) -> Facts {
        Facts::of(self.view())
    }

    /// The one place the dashboard's state changes. An error (a replay step
    /// that cannot be restored) is also the status line's message; the
    /// interactive loop shows it there, headless callers return it.
    pub fn update(&mut self, msg: Msg) -> Result<(), SessionError> {
        let done = self.handle(msg);
        // A new selection over the same state: its explanation is made now.
        if let Some(mut view) = self.view.take() {
            self.explain_selected(&mut view);
            let _ = self.view.set(view);
        }
        self.generation += 1;
        done
    }

    fn handle(&mut self, msg: Msg) -> Result<(), SessionError> {
        match msg {
            Msg::Command(command) => self.command(command),
            Msg::Edit(edit) => {
                self.edit(edit);
                Ok(())
            }
            Msg::Tick => {
                let result = self.travel(Move::Next);
                self.session.stop_at_end();
                result
            }
            Msg::Resize(cols, rows) => {
                self.size = Some((cols, rows));
                if self.help_scroll > 0 {
                    self.help_scroll = self.help_scroll.min(self.help_scroll_limit());
                }
                Ok(())
            }
            Msg::Goto(step) => self.goto(step),
            Msg::Apply(action) => {
                self.apply(action);
                Ok(())
            }
            Msg::Click(col, row) => {
                if let Some(step) = self.timeline_click(col, row) {
                    return self.goto(step);
                }
                self.focus_at(col, row);
                Ok(())
            }
            Msg::Serve => {
                self.serve();
                Ok(())
            }
            Msg::Wheel(col, row, up) => {
                if !self.focus_at(col, row) {
                    return Ok(());
                }
                self.command(if up {
                    KeyCommand::ScrollUp
                } else {
                    KeyCommand::ScrollDown
                })
            }
        }
    }

    /// The step a click at (`col`, `row`) on a replay's timeline (the
    /// caption pane's bottom border in the last frame drawn) goes to.
    fn timeline_click(&mut self, col: u16, row: u16) -> Option<usize> {
        if self.show_help || self.prompt.is_some() {
            return None;
        }
        let area = self
            .frame_map()?
            .panes
            .iter()
            .find(|(pane, _)| *pane == PaneId::Caption)?
            .1;
        let view = self.view();
        crate::ui::panes::caption::timeline_step(
            area,
            view.total_steps?,
            &view.captioned_steps,
            col,
            row,
        )
    }

    /// Focuses the pane drawn at (`col`, `row`), recorded as a `ui` step
    /// like Tab; false when no pane is there (or the help or a prompt is
    /// open: they are modal).
    fn focus_at(&mut self, col: u16, row: u16) -> bool {
        if self.show_help || self.prompt.is_some() {
            return false;
        }
        let Some(pane) = self.frame_map().and_then(|map| map.pane_at(col, row)) else {
            return false;
        };
        let Some(index) = self.layout.panes().iter().position(|p| *p == pane) else {
            return false;
        };
        let before = self.screen();
        self.focus = index;
        self.record_screen_change(before);
        true
    }

    /// Replay: moves to `step` ([`Msg::Goto`]; headless render and export).
    pub fn goto_step(&mut self, step: usize) -> Result<(), SessionError> {
        self.update(Msg::Goto(step))
    }

    /// The help overlay is on screen: the viewer's (modal) or the
    /// recording's (not modal).
    pub fn help_drawn(&self) -> bool {
        self.show_help || self.recorded_help
    }

    /// The commands the modal help lets through: everything else is
    /// dropped, so no key reaches the engine or the screen behind it.
    fn help_allows(command: KeyCommand) -> bool {
        matches!(
            command,
            KeyCommand::Quit
                | KeyCommand::ToggleHelp
                | KeyCommand::Back
                | KeyCommand::ScrollUp
                | KeyCommand::ScrollDown
        )
    }

    fn command(&mut self, command: KeyCommand) -> Result<(), SessionError> {
        if self.show_help && !Self::help_allows(command) {
            return Ok(());
        }
        let before = self.screen();
        let panes = self.layout.panes().len().max(1);
        match command {
            KeyCommand::Quit => self.quit = true,
            // The recorded help, when shown, is what `?` and `Esc` close
            // first: the viewer hides it until the next move.
            KeyCommand::ToggleHelp if self.recorded_help && !self.show_help => {
                self.recorded_help = false;
            }
            KeyCommand::ToggleHelp => {
                self.show_help = !self.show_help;
                self.help_scroll = 0;
            }
            KeyCommand::Back => {
                if self.show_help {
                    self.show_help = false;
                    self.help_scroll = 0;
                } else if self.recorded_help {
                    self.recorded_help = false;
                } else if self.zoomed {
                    self.zoomed = false;
                } else {
                    self.presenting = false;
                }
            }
            KeyCommand::ToggleZoom => self.zoomed = !self.zoomed,
            KeyCommand::TogglePresentation => {
                self.presenting = !self.presenting;
                // Presentation shows its own panes, not the zoomed one,
                // and starts from the lesson's or the step's.
                self.zoomed = false;
                self.present_pick = None;
            }
            KeyCommand::CyclePresentPanes if self.presenting => {
                let own = crate::ui::present_panes::own(self.view());
                self.present_pick = crate::ui::present_panes::next_pick(self.present_pick, &own);
            }
            KeyCommand::ToggleIsolation => self.isolation = self.isolation.toggled(),
            KeyCommand::FocusNext => self.focus = (self.focus + 1) % panes,
            KeyCommand::FocusPrev => self.focus = (self.focus + panes - 1) % panes,
            KeyCommand::ScrollUp | KeyCommand::ScrollDown => self.scroll_by(command),
            KeyCommand::SelectNext | KeyCommand::SelectPrev => {
                use crate::ui::panes::partitions::{selectable, selection_at};
                let last = selectable(self.view()).checked_sub(1);
                let row = match (self.selected_row(), last) {
                    (_, None) => None,
                    (s, _) if command == KeyCommand::SelectPrev => s.and_then(|s| s.checked_sub(1)),
                    (None, Some(_)) => Some(0),
                    (Some(s), Some(last)) => Some((s + 1).min(last)),
                };
                self.selected = selection_at(self.view(), row);
            }
            KeyCommand::Faster if self.is_replay() => {
                self.speed = (self.speed + 1).min(SPEEDS.len() - 1);
            }
            KeyCommand::Slower if self.is_replay() => {
                self.speed = self.speed.saturating_sub(1);
            }
            KeyCommand::Faster | KeyCommand::Slower | KeyCommand::CyclePresentPanes => {}
            KeyCommand::Prompt(PromptKind::GotoStep) => {
                if let Some(step) = self.session.replay_step() {
                    // The current step, selected: typing a number
                    // replaces it.
                    let text = step.to_string();
                    self.prompt = Some(Prompt::selecting(PromptKind::GotoStep, text));
                }
            }
            KeyCommand::Prompt(kind) => {
                if let Some(off) = self.session.engine_keys_off() {
                    self.status = Some(Status::refused(&off, self.lang));
                } else {
                    let selected =
                        crate::ui::panes::partitions::selected_batch(self.view(), &self.selected);
                    let text =
                        prompt::default_text(kind, self.view(), self.last_txn.as_deref(), selected);
                    self.prompt = Some(Prompt::new(kind, text));
                }
            }
            KeyCommand::ReplicateAll => self.replicate_all(),
            KeyCommand::Crash => self.apply(Action::Crash {}),
            KeyCommand::NextStep => return self.travel(Move::Next),
            KeyCommand::PrevStep => return self.travel(Move::Prev),
            KeyCommand::FirstStep => return self.travel(Move::First),
            KeyCommand::LastStep => return self.travel(Move::Last),
            KeyCommand::NextCaption => return self.travel(Move::NextCaption),
            KeyCommand::PrevCaption => return self.travel(Move::PrevCaption),
            KeyCommand::Branch => return self.branch(),
            KeyCommand::Undo => self.undo(),
            KeyCommand::DropProduceResponse => self.arm_drop_produce_response(),
            KeyCommand::PlayPause => {
                if let Some(start) = self.session.play_pause() {
                    return self.goto(start);
                }
            }
        }
        self.record_screen_change(before);
        Ok(())
    }

    /// Scrolls the help, or the focused pane within its limit.
    fn scroll_by(&mut self, command: KeyCommand) {
        if self.help_drawn() {
            self.help_scroll = if command == KeyCommand::ScrollDown {
                (self.help_scroll + 1).min(self.help_scroll_limit())
            } else {
                self.help_scroll.saturating_sub(1)
            };
        } else if let Some(pane) = self.focused() {
            // Panes that follow new data count rows up from the
            // bottom; the others count down from the top (the
            // partitions pane: which partition gets the rows).
            let from_bottom = matches!(pane, PaneId::Journal | PaneId::Events);
            let grow = (command == KeyCommand::ScrollUp) == from_bottom;
            let limit = self.scroll_limit(pane);
            let s = self.scroll.entry(pane).or_default();
            *s = if grow {
                (*s + 1).min(limit)
            } else {
                (*s).min(limit).saturating_sub(1)
            };
        }
    }

    /// A replay key: moves through the steps where the session says it
    /// goes. Forward onto a step that crashed shows its moment of death
    /// first (docs/dashboard.md "Crashes as moments").
    fn travel(&mut self, mv: Move) -> Result<(), SessionError> {
        self.touched();
        let from = self.session.replay_step();
        let Travel::To(target) = self.session.travel(mv) else {
            return Ok(());
        };
        let moved = self.goto(target);
        if let (Move::Next, Some(from)) = (mv, from)
            && self.session.land_on_moment(from)
        {
            // Its moment of death first: the snapshot the partitions pane
            // followed above was the recovery's.
            self.touched();
        }
        moved
    }

    /// Moves a replay to `step` and the screen to the recorded screen of
    /// that step. A screen field (focus, selection, isolation, help) is set
    /// from the fold of the `ui` steps up to `step` when that fold differs
    /// from the one at the step we leave, so a replay shows the recorded
    /// screen at every step, forward and back, while a field the recording
    /// does not change between the two steps keeps what the viewer chose
    /// with their own keys.
    fn goto(&mut self, step: usize) -> Result<(), SessionError> {
        self.touched();
        match self.session.goto(step) {
            Went::Nowhere => Ok(()),
            Went::Observation => {
                self.moved_in_observation();
                Ok(())
            }
            Went::Recording {
                left,
                reached,
                moved,
            } => {
                self.show_recorded(&left, &reached);
                self.follow();
                if let Err(e) = &moved {
                    self.status = Some(Status::error(e.to_string()));
                }
                moved
            }
        }
    }

    /// The partition the step on screen touched: the one its changes say
    /// most (`panes::touched::changed`), or, when it changed none, the one
    /// its action names. The panes that list partitions follow and mark it.
    pub fn touched_partition(&self) -> Option<usize> {
        use crate::ui::panes::touched;
        let view = self.view();
        touched::changed(view).or_else(|| {
            let (topic, p) = self.session.action_on_screen()?.partition_named()?;
            touched::named(view, topic, p)
        })
    }

    /// After a step, every pane that lists partitions brings the one it
    /// touched into view (docs/dashboard.md "Following the step"): the
    /// partitions pane gives it its rows first, so the batch just written
    /// is on screen; the log, consumers, replicas and watermarks panes
    /// scroll to it, at the rectangles the frame draws them in. The
    /// step's changes are the snapshot's (`Snapshot::changes`, the same
    /// diff the panes mark with ▸), so a replay follows where the live
    /// session did, however it got there (forward, back or by a jump).
    /// Scrolling away with the keys works as ever, until the next step.
    fn follow(&mut self) {
        let Some(p) = self.touched_partition() else {
            return;
        };
        self.scroll.insert(PaneId::Partitions, p);
        // Before the terminal's size is known there is no frame to
        // measure (the live UI, `render` and `export` all send it first).
        let Some((cols, rows)) = self.size else {
            return;
        };
        let area = ratatui::layout::Rect::new(0, 0, cols, rows);
        let scrolls = crate::ui::frame::follow(&self.frame_input(), area, p);
        self.scroll.extend(scrolls);
    }
}
