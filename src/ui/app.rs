//! `App`: the dashboard's state (mode, focus, selection, toggles, prompt,
//! status) and [`App::update`], the one place it changes. As in ratatui's
//! own apps (demo2, crates-tui), the event loop turns terminal events into
//! [`Msg`]s (`ui::run::message`) and hands each to `update`; tests,
//! `render` and `export` send the same messages.
//!
//! In a live session with `--record`, every screen change (focus, selected
//! batch, isolation view, help) is also a `ui` step of the session (SPEC §4),
//! applied through the driver like any action so the step numbers of the
//! session and of its replay agree. A replay applies the recorded `ui` steps
//! as the timeline passes over them, forward and back (see
//! [`App::update`] and docs/dashboard.md).
//!
//! Zoom (`f`), presentation (`P`) and scrolling are the room's view, not the
//! lesson's screen: they are not `ui` steps and a replay leaves them as the
//! viewer set them. The help overlay is modal: while it is open only
//! closing it, scrolling it and quitting do anything (see
//! [`App::update`]).
//!
//! The app never lays the screen out: it keeps the map the last frame drew
//! ([`App::draw`], [`App::frame_map`]) for clicks and scrolling, and builds
//! the snapshot once per change of state ([`App::view`]).

use std::cell::{Cell, OnceCell};
use std::collections::BTreeMap;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::session::listeners::Listeners;
use crate::session::recording::{Header, Step};
use crate::session::snapshot::source::{apply_all, step_view};
use crate::session::snapshot::{Bounds, Isolation, SavedState, Snapshot, SnapshotSource};
use crate::session::ui_step::{PaneName, Selection, Toggle, UiScreen, UiStep};
use crate::session::{Action, Driver, Outcome, Recording, RecordingWriter, Timeline};
use crate::ui::frame::{self, FrameInput, FrameMap, Shown, ViewState};
use crate::ui::i18n::Lang;
use crate::ui::keys::{KeyCommand, PromptEdit, PromptKind};
use crate::ui::layout::Layout;
use crate::ui::panes::PaneId;
use crate::ui::prompt::{self, Facts, Prompt};
use crate::ui::theme::Theme;

mod observed;
pub use crate::ui::status::{Status, StatusKind};
pub use observed::Observed;

/// How many request log lines a frame's snapshot carries (`--listen`):
/// as many as the server keeps (200), so that the clients pane, which
/// folds a consumer's empty fetches into one line, still has the produces
/// and transactions of the last minute or so to show between them.
const CLIENT_LOG_LINES: usize = 200;

/// The pace of a live recording: its steps are this far apart in `at_ms`.
const LIVE_STEP_MS: u64 = 1000;

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
    /// Live with `--listen`: requests came in or a server timer is due;
    /// handle them ([`App::serve_clients`]).
    Serve,
}

/// A live session: keys drive the engine, and are recorded if asked.
pub struct LiveSession {
    pub driver: Driver,
    pub header: Header,
    pub recorder: Option<RecordingWriter>,
    /// Time in the session, for the `at_ms` of recorded steps.
    pub elapsed_ms: u64,
    /// A frame's snapshot taken just before the last action: what that
    /// step changed is the difference.
    pub before: Option<Snapshot>,
    /// Every step applied since the header, in order (the demo's, or a
    /// branched replay's, first): what undo replays, and what a recording
    /// of the session holds.
    pub history: Vec<Step>,
    /// The last step crashed the cluster and its moment of death is on
    /// screen; `space` shows the recovery (docs/dashboard.md "Crashes as
    /// moments").
    pub at_moment: bool,
    /// The Kafka listeners beside the driver (`--listen`): clients drive
    /// the same driver as the keys, and their actions are steps too.
    pub listeners: Option<Box<dyn Listeners>>,
}

/// Opens the recording a branch writes (`replay FILE --record OUT`): given
/// the header and the replay's steps up to the branch.
pub type BranchRecorder = Box<dyn FnOnce(&Header, &[Step]) -> Result<RecordingWriter, String>>;

/// Opens the Kafka listeners of a branch (`replay FILE --listen ADDR`):
/// given the branch's driver; returns them and the line saying where they
/// listen.
pub type BranchListeners = Box<dyn FnOnce(&Driver) -> Result<(Box<dyn Listeners>, String), String>>;

/// Live (keys drive the engine), replay (keys move through a recording) or
/// a saved state (`render --state`: one snapshot, nothing to drive).
pub enum Mode {
    Live(Box<LiveSession>),
    Replay {
        timeline: Box<Timeline>,
        playing: bool,
    },
    Saved(Box<SavedState>),
    /// A real Kafka cluster observed over its protocol (`mk-tui observe`),
    /// live or replayed from its recording ([`Observed`]).
    Observed(Observed),
}

/// The dashboard's state. Fields are public for drawing and for tests to
/// read; [`App::update`] is what changes them.
pub struct App {
    pub mode: Mode,
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
    pub show_help: bool,
    /// The help overlay's first line shown.
    pub help_scroll: usize,
    /// The terminal's size, from [`Msg::Resize`] (none headless).
    pub size: Option<(u16, u16)>,
    /// `f`: the focused pane fills the body.
    pub zoomed: bool,
    /// `P`: the focused pane above a large caption.
    pub presenting: bool,
    pub prompt: Option<Prompt>,
    /// The last outcome or error.
    pub status: Option<Status>,
    /// The transaction last begun from a key: the default for send/commit.
    pub last_txn: Option<String>,
    /// The consumer whose eyes the partitions pane uses (`i` toggles).
    pub isolation: Isolation,
    pub quit: bool,
    /// Replay: how a branch records its live session (`--record`).
    branch_recorder: Option<BranchRecorder>,
    /// Replay: how a branch opens its Kafka listeners (`--listen`).
    branch_listeners: Option<BranchListeners>,
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
        Self::with_mode(
            Mode::Live(Box::new(LiveSession {
                driver,
                header,
                recorder,
                elapsed_ms: 0,
                before: None,
                history: Vec::new(),
                at_moment: false,
                listeners: None,
            })),
            title,
            layout,
            lang,
            theme,
        )
    }

    /// A replay of a recording, at step 0.
    pub fn replay(
        recording: Recording,
        layout: Layout,
        lang: Lang,
        theme: Theme,
    ) -> Result<Self, String> {
        let every = crate::session::timeline::DEFAULT_CHECKPOINT_EVERY;
        Self::replay_every(recording, every, layout, lang, theme)
    }

    /// A replay that checkpoints every `every` steps (`usize::MAX`: only
    /// step 0). `render` and `export` only go forward, so they take no
    /// checkpoints: each is a copy of the data directory, and one every 50
    /// steps made a long recording cost O(steps²) (issue 17 item 11).
    pub fn replay_every(
        recording: Recording,
        every: usize,
        layout: Layout,
        lang: Lang,
        theme: Theme,
    ) -> Result<Self, String> {
        let title = recording.header.title_in(lang.code()).to_string();
        let timeline = Timeline::new(recording, every)?;
        Ok(Self::with_mode(
            Mode::Replay {
                timeline: Box::new(timeline),
                playing: false,
            },
            title,
            layout,
            lang,
            theme,
        ))
    }

    fn with_mode(mode: Mode, title: String, layout: Layout, lang: Lang, theme: Theme) -> Self {
        Self {
            mode,
            layout,
            lang,
            theme,
            title,
            focus: 0,
            scroll: BTreeMap::new(),
            selected: Selection::Clear,
            show_help: false,
            help_scroll: 0,
            size: None,
            zoomed: false,
            presenting: false,
            prompt: None,
            status: None,
            last_txn: None,
            isolation: Isolation::ReadCommitted,
            quit: false,
            branch_recorder: None,
            branch_listeners: None,
            speed: NORMAL_SPEED,
            view: OnceCell::new(),
            builds: Cell::new(0),
            last_map: None,
            generation: 0,
        }
    }

    /// True in replay mode.
    pub fn is_replay(&self) -> bool {
        matches!(
            self.mode,
            Mode::Replay { .. } | Mode::Observed(Observed::Replay { .. })
        )
    }

    /// True while a replay plays at the recorded pace.
    pub fn is_playing(&self) -> bool {
        matches!(
            self.mode,
            Mode::Replay { playing: true, .. }
                | Mode::Observed(Observed::Replay { playing: true, .. })
        )
    }

    /// The help's last useful scroll position: its last page in the
    /// frame's map, or (size unknown) its last entry.
    fn help_scroll_limit(&mut self) -> usize {
        match self.frame_map() {
            Some(map) => map.help_last,
            None => crate::ui::help::entries(&*self).saturating_sub(1),
        }
    }

    /// How far pane `pane` scrolls, in its own unit (partitions, frames,
    /// rows): past it the pane would show nothing new. Panes whose rows
    /// wrap count them at their width in the frame's map when they are on
    /// screen; otherwise they get a bound that is never too short.
    fn scroll_limit(&mut self, pane: PaneId) -> usize {
        let exact = self
            .frame_map()
            .and_then(|map| map.rows.get(&pane))
            .map(|n| n.saturating_sub(1));
        exact.unwrap_or_else(|| crate::ui::panes::scroll_limit(pane, self.view()))
    }

    /// The map of the frame on screen: the last one drawn ([`Self::draw`]),
    /// or, before the first draw or when the state changed since one drawn
    /// only for its map, the current state drawn at the terminal's size
    /// into a throwaway buffer by the same [`frame::draw`]
    /// (docs/dashboard.md "The frame's map"). None while the size is
    /// unknown.
    pub fn frame_map(&mut self) -> Option<&FrameMap> {
        let area = self.size.map(|(cols, rows)| Rect::new(0, 0, cols, rows));
        let kept = match &self.last_map {
            Some((map, None)) => area.is_none_or(|a| a == map.area),
            Some((map, Some(n))) => Some(map.area) == area && *n == self.generation,
            None => false,
        };
        if !kept {
            let mut buf = Buffer::empty(area?);
            let input = FrameInput {
                values: None,
                ..self.frame_input()
            };
            let map = frame::draw(&input, &mut buf);
            self.last_map = Some((map, Some(self.generation)));
        }
        self.last_map.as_ref().map(|(map, _)| map)
    }

    /// Draws the frame into `buf` (the terminal's) and keeps its map for
    /// the clicks and scrolling that follow.
    pub fn draw(&mut self, buf: &mut Buffer) {
        let map = frame::draw(&self.frame_input(), buf);
        self.last_map = Some((map, None));
    }

    /// What the next frame is drawn from: the current snapshot and view
    /// state, and the source of its values.
    pub fn frame_input(&self) -> FrameInput<'_> {
        FrameInput {
            view: self.view(),
            state: self.into(),
            values: Some(self.source()),
        }
    }

    /// A live app that knows the snapshot before its driver's last step
    /// (see `session::snapshot::source::apply_all`), so its first frame
    /// shows what that step changed.
    pub fn with_before(mut self, before: Option<Snapshot>) -> Self {
        self.touched();
        if let Mode::Live(live) = &mut self.mode {
            live.before = before;
        }
        self
    }

    /// A live app that knows the steps its driver has applied (the demo's):
    /// undo can then go back into them, and new steps are paced after the
    /// last one's `at_ms`.
    pub fn with_history(mut self, steps: Vec<Step>) -> Self {
        self.touched();
        if let Mode::Live(live) = &mut self.mode {
            live.elapsed_ms = steps.last().map_or(0, |s| s.at_ms + LIVE_STEP_MS);
            live.history = steps;
        }
        self
    }

    /// A live app with Kafka listeners beside its driver (`--listen`).
    pub fn with_listeners(mut self, listeners: Box<dyn Listeners>) -> Self {
        self.touched();
        if let Mode::Live(live) = &mut self.mode {
            live.listeners = Some(listeners);
        }
        self
    }

    /// With `--listen`: what wakes the loop when a request comes in, and
    /// how long until a server timer is due (None: no listeners).
    pub fn serve_wake(
        &self,
    ) -> Option<(
        std::sync::Arc<tokio::sync::Notify>,
        Option<std::time::Duration>,
    )> {
        match &self.mode {
            Mode::Live(live) => live.listeners.as_ref().map(|l| (l.wake(), l.next_due())),
            Mode::Observed(o) => o.wake().map(|w| (w, None)),
            _ => None,
        }
    }

    /// Handles what the listeners have (requests, due timers) through the
    /// session's one driver; each action they apply is a step of the
    /// session as a key's is ([`crate::ui::client_steps`]). True when the
    /// engine changed.
    pub fn serve_clients(&mut self) -> bool {
        // The listeners' registry (clients, their log) is in the snapshot.
        self.touched();
        let Mode::Live(live) = &mut self.mode else {
            return false;
        };
        let LiveSession {
            driver,
            recorder,
            elapsed_ms,
            before,
            history,
            at_moment,
            listeners: Some(listeners),
            ..
        } = &mut **live
        else {
            return false;
        };
        let mut steps = crate::ui::client_steps::ClientSteps {
            recorder,
            history,
            elapsed_ms,
            before,
            at_moment,
            step_ms: LIVE_STEP_MS,
            lang: self.lang,
            status: None,
        };
        let changed = listeners.serve(driver, &mut steps);
        if let Some(status) = steps.status {
            self.status = Some(status);
        }
        if changed {
            self.follow();
        }
        changed
    }

    /// `D` (`--listen`): the listeners drop the response of the next
    /// Produce; the arming is a `note` step of the session, recorded with
    /// its caption ([`crate::kafka::fault`]).
    fn arm_drop_produce_response(&mut self) {
        self.touched();
        if let Some(off) = self.engine_keys_off() {
            self.status = Some(Status::error(off));
            return;
        }
        let Mode::Live(live) = &mut self.mode else {
            return;
        };
        let LiveSession {
            driver,
            recorder,
            elapsed_ms,
            before,
            history,
            at_moment,
            listeners,
            ..
        } = &mut **live;
        let Some(listeners) = listeners else {
            let text = self.lang.t("no_listeners").to_string();
            self.status = Some(Status::error(text));
            return;
        };
        let mut steps = crate::ui::client_steps::ClientSteps {
            recorder,
            history,
            elapsed_ms,
            before,
            at_moment,
            step_ms: LIVE_STEP_MS,
            lang: self.lang,
            status: None,
        };
        let armed = listeners.arm_drop_produce_response(driver, &mut steps);
        self.status = match armed {
            Ok(()) => steps.status,
            Err(e) => Some(Status::error(e)),
        };
        self.follow();
    }

    /// A replay that can branch into a recorded live session: `open` makes
    /// the recording when `b` is pressed.
    pub fn with_branch_recorder(mut self, open: BranchRecorder) -> Self {
        self.branch_recorder = Some(open);
        self
    }

    /// A replay whose branch opens Kafka listeners beside its live
    /// session (`replay FILE --listen ADDR`): the replay itself has none,
    /// the live session after `b` does.
    pub fn with_branch_listeners(mut self, open: BranchListeners) -> Self {
        self.branch_listeners = Some(open);
        self
    }

    /// A saved state drawn as the dashboard would (`render --state`).
    pub fn saved(snapshot: Snapshot, layout: Layout, lang: Lang, theme: Theme) -> Self {
        let title = snapshot.title.clone();
        Self::with_mode(
            Mode::Saved(Box::new(SavedState(snapshot))),
            title,
            layout,
            lang,
            theme,
        )
    }

    /// The driver behind the current frame (none for a saved state).
    pub fn driver(&self) -> Option<&Driver> {
        match &self.mode {
            Mode::Live(live) => Some(&live.driver),
            Mode::Replay { timeline, .. } => Some(timeline.driver()),
            Mode::Saved(_) | Mode::Observed(_) => None,
        }
    }

    /// Where the frames' snapshots come from.
    fn source(&self) -> &dyn SnapshotSource {
        match &self.mode {
            Mode::Live(live) => &live.driver,
            Mode::Replay { timeline, .. } => &**timeline,
            Mode::Saved(saved) => &**saved,
            Mode::Observed(observed) => observed.source(),
        }
    }

    /// The focused pane.
    pub fn focused(&self) -> Option<PaneId> {
        self.layout.panes().get(self.focus).copied()
    }

    /// The snapshot of the current state, bounded to what a frame shows
    /// ([`Bounds::FRAME`]), without record values: built at the first ask
    /// after a change, then shared until the next.
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
        let mut snapshot = self.source().snapshot(&Bounds::FRAME);
        if let Mode::Live(live) = &self.mode {
            // After a crash the moment of death first, then (space) the
            // recovery, as a replay shows them.
            snapshot = step_view(&live.driver, live.before.as_ref(), live.at_moment, snapshot);
            // The caption of the session's last step, if it has one (the
            // listeners' `note` steps: a fault, a retry answered from the
            // sequence check); keys' steps have none.
            if live.history.len() == live.driver.step() {
                snapshot.caption = live.history.last().and_then(|s| s.caption.clone());
            }
            if let Some(l) = &live.listeners {
                // The server's registry, not the engine: the room's view.
                snapshot.listeners = l.listeners();
                snapshot.clients = l.clients();
                snapshot.client_log = l.log(CLIENT_LOG_LINES);
                // The listeners' own word: armed until the response it
                // takes is dropped.
                snapshot.fault_armed = l.armed_fault();
            }
        }
        // The title in the interface's language (the state JSON keeps the
        // header's `title`); a saved state shows the title it was saved with.
        if !matches!(self.mode, Mode::Saved(_)) {
            snapshot.title = self.title.clone();
        }
        snapshot
    }

    /// The snapshot a frame of `area` is drawn from: [`Self::view`] with
    /// the records of the batch rows that frame draws.
    pub fn snapshot_for(&self, area: Rect) -> Snapshot {
        let input = self.frame_input();
        frame::with_values(&input, &frame::map(&input, area)).into_owned()
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

    /// The recorded pace: milliseconds from the current step to the next one,
    /// if playing and there is a next step.
    pub fn next_step_delay_ms(&self) -> Option<u64> {
        if let Mode::Observed(o) = &self.mode {
            return o.next_step_delay_ms(SPEEDS[self.speed]);
        }
        let Mode::Replay {
            timeline,
            playing: true,
        } = &self.mode
        else {
            return None;
        };
        let steps = &timeline.recording().steps;
        let step = timeline.step();
        let next = steps.get(step)?;
        let now = step
            .checked_sub(1)
            .and_then(|i| steps.get(i))
            .map_or(0, |s| s.at_ms);
        let mut gap = next.at_ms.saturating_sub(now) as f64 / SPEEDS[self.speed];
        // A step that crashed shows two sub-steps (the moment of death,
        // then the recovery): they share its gap, so playing keeps the
        // recorded pace.
        if timeline.driver().last_moment().is_some() {
            gap /= 2.0;
        }
        Some(gap.round() as u64)
    }

    /// True in a live session whose last step's moment of death is shown.
    pub fn live_at_moment(&self) -> bool {
        matches!(&self.mode, Mode::Live(live) if live.at_moment)
    }

    /// The one place the dashboard's state changes. An error (a replay step
    /// that cannot be restored) is also the status line's message; the
    /// interactive loop shows it there, headless callers return it.
    pub fn update(&mut self, msg: Msg) -> Result<(), String> {
        let done = self.handle(msg);
        self.generation += 1;
        done
    }

    fn handle(&mut self, msg: Msg) -> Result<(), String> {
        match msg {
            Msg::Command(command) => self.command(command),
            Msg::Edit(edit) => {
                self.edit(edit);
                Ok(())
            }
            Msg::Tick if matches!(self.mode, Mode::Observed(_)) => {
                self.observed_tick();
                Ok(())
            }
            Msg::Tick => {
                let result = self.move_replay(KeyCommand::NextStep);
                if let Mode::Replay { timeline, playing } = &mut self.mode
                    && timeline.step() >= timeline.recording().steps.len()
                    && !timeline.at_moment()
                {
                    *playing = false;
                }
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
                self.focus_at(col, row);
                Ok(())
            }
            Msg::Serve if matches!(self.mode, Mode::Observed(_)) => {
                self.take_refreshes();
                Ok(())
            }
            Msg::Serve => {
                self.serve_clients();
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
        for step in ui_steps(before, self.screen()) {
            self.record_ui(step);
        }
        true
    }

    /// Replay: moves to `step` ([`Msg::Goto`]; headless render and export).
    pub fn goto_step(&mut self, step: usize) -> Result<(), String> {
        self.update(Msg::Goto(step))
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

    fn command(&mut self, command: KeyCommand) -> Result<(), String> {
        if self.show_help && !Self::help_allows(command) {
            return Ok(());
        }
        if let Some(done) = self.observed_command(command) {
            return done;
        }
        let before = self.screen();
        let panes = self.layout.panes().len().max(1);
        match command {
            KeyCommand::Quit => self.quit = true,
            KeyCommand::ToggleHelp => {
                self.show_help = !self.show_help;
                self.help_scroll = 0;
            }
            KeyCommand::Back => {
                if self.show_help {
                    self.show_help = false;
                    self.help_scroll = 0;
                } else if self.zoomed {
                    self.zoomed = false;
                } else {
                    self.presenting = false;
                }
            }
            KeyCommand::ToggleZoom => self.zoomed = !self.zoomed,
            KeyCommand::TogglePresentation => {
                self.presenting = !self.presenting;
                // Presentation shows the focused pane, not the zoomed one.
                self.zoomed = false;
            }
            KeyCommand::ToggleIsolation => self.isolation = self.isolation.toggled(),
            KeyCommand::FocusNext => self.focus = (self.focus + 1) % panes,
            KeyCommand::FocusPrev => self.focus = (self.focus + panes - 1) % panes,
            KeyCommand::ScrollUp | KeyCommand::ScrollDown if self.show_help => {
                self.help_scroll = if command == KeyCommand::ScrollDown {
                    (self.help_scroll + 1).min(self.help_scroll_limit())
                } else {
                    self.help_scroll.saturating_sub(1)
                };
            }
            KeyCommand::ScrollUp | KeyCommand::ScrollDown => {
                if let Some(pane) = self.focused() {
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
            KeyCommand::Faster | KeyCommand::Slower => {}
            KeyCommand::Prompt(PromptKind::GotoStep) => {
                if let Mode::Replay { timeline, .. } = &self.mode {
                    // The current step, selected: typing a number
                    // replaces it.
                    let text = timeline.step().to_string();
                    self.prompt = Some(Prompt::selecting(PromptKind::GotoStep, text));
                }
            }
            KeyCommand::Prompt(kind) => {
                if let Some(off) = self.engine_keys_off() {
                    self.status = Some(Status::error(off));
                } else {
                    let text = prompt::default_text(kind, self.view(), self.last_txn.as_deref());
                    self.prompt = Some(Prompt::new(kind, text));
                }
            }
            KeyCommand::ReplicateAll => self.apply(Action::Replicate {
                broker: None,
                topic: None,
                partition: None,
            }),
            KeyCommand::Crash => self.apply(Action::Crash {}),
            // Live: from a crash's moment of death to its recovery.
            KeyCommand::NextStep if self.live_at_moment() => {
                self.touched();
                if let Mode::Live(live) = &mut self.mode {
                    live.at_moment = false;
                }
            }
            KeyCommand::NextStep
            | KeyCommand::PrevStep
            | KeyCommand::FirstStep
            | KeyCommand::LastStep
            | KeyCommand::NextCaption
            | KeyCommand::PrevCaption => return self.move_replay(command),
            KeyCommand::Branch => return self.branch(),
            KeyCommand::Undo => self.undo(),
            KeyCommand::DropProduceResponse => self.arm_drop_produce_response(),
            KeyCommand::PlayPause => {
                if let Mode::Replay { timeline, playing } = &mut self.mode {
                    *playing = !*playing;
                    // Playing from the end starts over.
                    if *playing && timeline.step() >= timeline.recording().steps.len() {
                        return self.goto(0);
                    }
                }
            }
        }
        for step in ui_steps(before, self.screen()) {
            self.record_ui(step);
        }
        Ok(())
    }

    /// Edits the open prompt. Enter applies it only if it parses and passes
    /// its checks; otherwise the prompt stays open with the reason and
    /// nothing is applied or recorded.
    fn edit(&mut self, edit: PromptEdit) {
        let Some(prompt) = &self.prompt else {
            return;
        };
        if edit == PromptEdit::Submit && prompt.kind == PromptKind::GotoStep {
            let last = match &self.mode {
                Mode::Replay { timeline, .. } => timeline.recording().steps.len(),
                Mode::Observed(o) => o.last_step(),
                _ => 0,
            };
            let reason = match prompt::parse_step(&prompt.text, last, self.lang) {
                Ok(n) => {
                    self.prompt = None;
                    if let Err(e) = self.goto(n) {
                        self.status = Some(Status::error(e));
                    }
                    return;
                }
                Err(reason) => reason,
            };
            if let Some(p) = &mut self.prompt {
                p.refusal = Some(reason);
                p.selected = !p.text.is_empty();
                p.cursor = p.text.len();
            }
            return;
        }
        if edit == PromptEdit::Submit {
            match prompt::parse(prompt.kind, &prompt.text, &self.facts()) {
                Ok(action) => {
                    self.prompt = None;
                    self.apply(action);
                }
                Err(reason) => {
                    let reason = reason.get(self.lang.zh()).to_string();
                    if let Some(p) = &mut self.prompt {
                        p.refusal = Some(reason);
                    }
                }
            }
            return;
        }
        let Some(prompt) = &mut self.prompt else {
            return;
        };
        if edit == PromptEdit::Cancel {
            self.prompt = None;
        } else if prompt.edit(edit) {
            prompt.refusal = None;
        }
    }

    /// A step that crashed the cluster is two sub-steps (docs/dashboard.md
    /// "Crashes as moments"): forward onto it shows its moment of death
    /// first and the next forward its recovery; back goes the same way in
    /// reverse. Neither sub-step move touches the engine.
    fn move_replay(&mut self, command: KeyCommand) -> Result<(), String> {
        self.touched();
        let Mode::Replay { timeline, .. } = &mut self.mode else {
            return Ok(());
        };
        let step = timeline.step();
        match command {
            KeyCommand::NextStep if timeline.at_moment() => {
                timeline.show_moment(false);
                return Ok(());
            }
            KeyCommand::PrevStep if timeline.show_moment(true) => return Ok(()),
            _ => {}
        }
        let steps = &timeline.recording().steps;
        // Step n's caption is on line n of the recording (steps[n - 1]).
        let captioned = |n: &usize| steps[*n - 1].caption.is_some();
        let target = match command {
            KeyCommand::NextStep => step + 1,
            KeyCommand::PrevStep => step.saturating_sub(1),
            KeyCommand::FirstStep => 0,
            KeyCommand::NextCaption => (step + 1..=steps.len())
                .find(captioned)
                .unwrap_or(steps.len()),
            KeyCommand::PrevCaption => (1..step).rev().find(captioned).unwrap_or(0),
            _ => steps.len(),
        };
        let moved = self.goto(target);
        if command == KeyCommand::NextStep
            && let Mode::Replay { timeline, .. } = &mut self.mode
            && timeline.step() == step + 1
            && timeline.show_moment(true)
        {
            // Its moment of death first: the snapshot the partitions pane
            // followed above was the recovery's.
            self.touched();
        }
        moved
    }

    /// Replay: branch here. A new live session starts from this exact
    /// step: its driver replays the recording's steps up to here (the
    /// engine is a pure function of them, so it is the same state), its
    /// history and its recording (if `--record` was given) start with
    /// those steps, and keys now drive the engine. RaftScope's fork: "what
    /// if we crash here instead?"
    fn branch(&mut self) -> Result<(), String> {
        let Mode::Replay { timeline, .. } = &self.mode else {
            return Ok(());
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
        self.title = self.lang.pick(
            format!("{} (branched at step {step})", header.title),
            format!("{}（在步骤 {step} 分支）", header.title_in("zh")),
        );
        self.touched();
        self.mode = Mode::Live(Box::new(LiveSession {
            driver,
            header,
            recorder,
            elapsed_ms: steps.last().map_or(0, |s| s.at_ms + LIVE_STEP_MS),
            before,
            history: steps,
            at_moment: false,
            listeners,
        }));
        self.status = Some(Status {
            kind: StatusKind::Ok,
            text: self.lang.pick(
                format!("branched at step {step}: keys now drive the engine{listening}"),
                format!("已在步骤 {step} 分支：现在按键驱动引擎{listening}"),
            ),
        });
        Ok(())
    }

    /// Live: undo the last step, by replaying the session's steps but the
    /// last into a fresh driver (the engine is a pure function of its
    /// steps) and, when recording, rewriting the recording without it. A
    /// session whose data directory the user keeps (`--data-dir`) is not
    /// undone: that directory has the step on disk.
    fn undo(&mut self) {
        let Mode::Live(live) = &mut self.mode else {
            return;
        };
        let Some(last) = live.history.last() else {
            self.status = Some(Status::error(self.lang.pick(
                "undo: nothing to undo".into(),
                "撤销：没有可撤销的步骤".into(),
            )));
            return;
        };
        if live.listeners.is_some() {
            self.status = Some(Status::error(self.lang.pick(
                "undo: Kafka clients were answered for these steps (--listen); undo would change what they were told".into(),
                "撤销：这些步骤已经回复了 Kafka 客户端 (--listen)；撤销会改变它们得到的回答".into(),
            )));
            return;
        }
        if !live.driver.is_private() {
            self.status = Some(Status::error(format!(
                "undo: {} keeps this session's data on disk; undo needs a session in a temporary directory",
                live.driver.data_dir().display()
            )));
            return;
        }
        let undone = (live.driver.step(), last.action.name());
        let keep = &live.history[..live.history.len() - 1];
        let mut driver = match Driver::new(&live.header, None) {
            Ok(d) => d,
            Err(e) => {
                self.status = Some(Status::error(format!("undo: {e}")));
                return;
            }
        };
        let before = apply_all(&mut driver, keep.iter().map(|s| &s.action));
        if let Some(w) = &mut live.recorder
            && let Err(e) = w.rewrite(&live.header, keep)
        {
            self.status = Some(Status::error(format!(
                "undo: {}: cannot rewrite the recording: {e}",
                w.path().display()
            )));
            return;
        }
        let old = std::mem::replace(&mut live.driver, driver);
        self.view.take();
        drop(old.dispose());
        live.history.pop();
        live.before = before;
        live.at_moment = false;
        self.status = Some(Status {
            kind: StatusKind::Ok,
            text: self.lang.pick(
                format!("undid step {} ({})", undone.0, undone.1),
                format!(
                    "已撤销步骤 {}（{}）",
                    undone.0,
                    crate::session::said::action_zh(undone.1)
                ),
            ),
        });
    }

    /// Replay: moves the timeline to `step` and the screen to the recorded
    /// screen of that step. A screen field (focus, selection, isolation,
    /// help) is set from the fold of the `ui` steps up to `step` when that
    /// fold differs from the one at the step we leave, so a replay shows
    /// the recorded screen at every step, forward and back, while a field
    /// the recording does not change between the two steps keeps what the
    /// viewer chose with their own keys.
    fn goto(&mut self, step: usize) -> Result<(), String> {
        self.touched();
        if let Mode::Observed(o) = &mut self.mode {
            o.goto(step);
            self.moved_in_observation();
            return Ok(());
        }
        let Mode::Replay { timeline, .. } = &mut self.mode else {
            return Ok(());
        };
        let old = recorded_screen(timeline, timeline.step());
        let moved = timeline.goto(step).map(|_| ()).map_err(String::from);
        let new = recorded_screen(timeline, timeline.step());
        if old.focus != new.focus {
            let panes = self.layout.panes();
            match new.focus {
                None => self.focus = 0,
                Some(name) => {
                    if let Some(i) = panes.iter().position(|p| pane_name(*p) == name) {
                        self.focus = i;
                    }
                }
            }
        }
        if old.selected != new.selected {
            self.selected = new.selected.clone();
        }
        if old.isolation != new.isolation {
            self.isolation = new.isolation;
        }
        if old.help != new.help {
            self.show_help = new.help;
        }
        self.follow();
        if let Err(e) = &moved {
            self.status = Some(Status::error(e.clone()));
        }
        moved
    }

    /// After a step that changed a partition's log (appended a batch,
    /// removed one, moved its start), the partitions pane gives that
    /// partition its rows first, so the batch just written is on screen.
    /// The step's changes are the snapshot's (`Snapshot::changes`, the
    /// same diff the panes mark with ▸), so at a step that wrote to a
    /// log a replay anchors where the live session did, however it got
    /// there (forward, back or by a jump).
    fn follow(&mut self) {
        if let Some(p) = crate::ui::panes::partitions::written(self.view()) {
            self.scroll.insert(PaneId::Partitions, p);
        }
    }

    /// The screen as `ui` steps describe it.
    fn screen(&self) -> UiScreen {
        UiScreen {
            focus: self.focused().map(pane_name),
            selected: self.selected.clone(),
            isolation: self.isolation,
            help: self.show_help,
        }
    }

    /// Live, recording: a screen change becomes a `ui` step. Without a
    /// recorder a screen change is not a step of the session.
    fn record_ui(&mut self, ui: UiStep) {
        let Mode::Live(live) = &self.mode else {
            return;
        };
        if live.recorder.is_none() {
            return;
        }
        // The status keeps the last engine outcome unless recording fails.
        if let Err(e) = self.step_live(Action::Ui(ui)) {
            self.status = Some(Status::error(e));
        }
    }

    /// Why engine keys do nothing here, outside a live session.
    fn engine_keys_off(&self) -> Option<&'static str> {
        match self.mode {
            Mode::Live(_) => None,
            Mode::Replay { .. } => Some(if self.lang.zh() {
                "回放：引擎按键不可用"
            } else {
                "replay: engine keys are off"
            }),
            Mode::Saved(_) => Some(if self.lang.zh() {
                "保存的状态：引擎按键不可用"
            } else {
                "saved state: engine keys are off"
            }),
            Mode::Observed(_) => Some(if self.lang.zh() {
                "观察：引擎按键不可用（只读）"
            } else {
                "observed: engine keys are off (read-only)"
            }),
        }
    }

    /// Applies an action in live mode, records it, and reports the outcome.
    fn apply(&mut self, action: Action) {
        if let Some(off) = self.engine_keys_off() {
            self.status = Some(Status::error(off));
            return;
        }
        if let Action::Begin { txn } = &action {
            self.last_txn = Some(txn.clone());
        }
        let name = action.name();
        self.status = Some(match self.step_live(action) {
            Ok((step, outcome)) => match &self.mode {
                Mode::Live(live) => {
                    Status::of_step(step, &outcome, live.driver.last_said(), self.lang)
                }
                _ => Status::of_outcome(step, name, &outcome),
            },
            Err(e) => Status::error(e),
        });
        self.follow();
    }

    /// One live step: applied by the driver, then appended to the
    /// recording. Returns the step number and outcome, or why the step
    /// could not be recorded.
    fn step_live(&mut self, action: Action) -> Result<(usize, Outcome), String> {
        self.touched();
        let Mode::Live(live) = &mut self.mode else {
            return Err(self.engine_keys_off().unwrap_or_default().into());
        };
        let LiveSession {
            driver,
            recorder,
            elapsed_ms,
            before,
            history,
            at_moment,
            listeners,
            ..
        } = &mut **live;
        // An action past a limit (docs/recording-format.md) is neither
        // applied nor recorded: the recording would not read back.
        driver
            .refuse(&action)
            .map_err(|e| format!("{}: refused: {e}", action.name()))?;
        *before = Some(driver.snapshot(&Bounds::FRAME));
        let outcome = driver.apply(&action);
        *at_moment = driver.last_moment().is_some();
        if let Some(l) = listeners {
            // `r` may finish a client's acks=all produce; a stopped
            // broker's listener closes.
            l.after_step(driver);
        }
        let step = Step {
            at_ms: *elapsed_ms,
            action,
            caption: None,
        };
        *elapsed_ms += LIVE_STEP_MS;
        // The step is applied: it is history whether or not it records.
        history.push(step);
        if let Some(w) = recorder {
            let step = history.last().expect("pushed above");
            w.append(step)
                .map_err(|e| format!("{}: cannot record: {e}", w.path().display()))?;
        }
        Ok((driver.step(), outcome))
    }
}

impl<'a> From<&'a App> for ViewState<'a> {
    /// The view state a frame of `app` is drawn with.
    fn from(app: &'a App) -> Self {
        let shown = match &app.mode {
            Mode::Live(_) => Shown::Live,
            Mode::Saved(_) => Shown::Saved,
            _ if app.is_playing() => Shown::Playing,
            _ if app.is_replay() => Shown::Replay,
            _ => Shown::Observing,
        };
        ViewState {
            layout: &app.layout,
            lang: app.lang,
            theme: app.theme,
            focus: app.focused(),
            scroll: &app.scroll,
            selected: &app.selected,
            isolation: app.isolation,
            zoomed: app.zoomed,
            presenting: app.presenting,
            help: app.show_help.then_some(app.help_scroll),
            prompt: app.prompt.as_ref(),
            status: app.status.as_ref(),
            shown,
            speed: (app.speed != NORMAL_SPEED).then_some(SPEEDS[app.speed]),
            live_at_moment: app.live_at_moment(),
            bar: crate::ui::keys::BarState {
                replay: app.is_replay(),
                playing: app.is_playing(),
                zoomed: app.zoomed,
                presenting: app.presenting,
                saved: matches!(app.mode, Mode::Saved(_)),
                observing: app.is_observing(),
            },
        }
    }
}

/// A dashboard pane's name in recordings (the two enums list the same
/// names; a test checks it).
pub fn pane_name(pane: PaneId) -> PaneName {
    PaneName::from_name(pane.name()).expect("every pane has a recording name")
}

/// The screen the `ui` steps among a recording's first `step` steps leave.
fn recorded_screen(timeline: &Timeline, step: usize) -> UiScreen {
    timeline.recording().steps[..step.min(timeline.recording().steps.len())]
        .iter()
        .filter_map(|s| match &s.action {
            Action::Ui(ui) => Some(ui),
            _ => None,
        })
        .fold(UiScreen::default(), |screen, ui| screen.apply(ui))
}

/// The `ui` steps that take the screen from `before` to `after`: focus and
/// selection set to their new values, each flipped switch toggled.
fn ui_steps(before: UiScreen, after: UiScreen) -> Vec<UiStep> {
    let mut steps = Vec::new();
    let mut first = UiStep {
        focus: after.focus.filter(|_| before.focus != after.focus),
        select: (before.selected != after.selected).then(|| after.selected.clone()),
        toggle: None,
    };
    let mut toggles = Vec::new();
    if before.isolation != after.isolation {
        toggles.push(Toggle::Isolation);
    }
    if before.help != after.help {
        toggles.push(Toggle::Help);
    }
    let mut toggles = toggles.into_iter();
    first.toggle = toggles.next();
    if first != UiStep::default() {
        steps.push(first);
    }
    steps.extend(toggles.map(|t| UiStep {
        toggle: Some(t),
        ..UiStep::default()
    }));
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pane_names_are_the_same_in_the_session_and_the_dashboard() {
        let dashboard: Vec<&str> = PaneId::ALL.iter().map(|p| p.name()).collect();
        let session: Vec<&str> = PaneName::ALL.iter().map(|p| p.name()).collect();
        assert_eq!(dashboard, session);
        for p in PaneId::ALL {
            assert_eq!(pane_name(p).name(), p.name());
        }
    }

    #[test]
    fn screen_changes_become_the_ui_steps_that_replay_them() {
        let base = UiScreen {
            focus: Some(PaneName::Partitions),
            ..UiScreen::default()
        };
        let changed = [
            UiScreen {
                focus: Some(PaneName::Journal),
                ..base.clone()
            },
            UiScreen {
                selected: Selection::Batch(crate::session::ui_step::BatchRef {
                    partition: "out-0".into(),
                    offset: 4,
                }),
                ..base.clone()
            },
            UiScreen {
                isolation: Isolation::ReadUncommitted,
                ..base.clone()
            },
            UiScreen {
                help: true,
                ..base.clone()
            },
            UiScreen {
                isolation: Isolation::ReadUncommitted,
                help: true,
                selected: Selection::Clear,
                focus: Some(PaneName::Events),
            },
        ];
        for after in changed {
            let steps = ui_steps(base.clone(), after.clone());
            assert!(!steps.is_empty(), "{after:?}");
            let replayed = steps.iter().fold(base.clone(), |s, step| s.apply(step));
            assert_eq!(replayed, after);
        }
        assert!(
            ui_steps(base.clone(), base.clone()).is_empty(),
            "no change, no step"
        );
        let from_selected = UiScreen {
            selected: Selection::Row(2),
            ..base.clone()
        };
        assert_eq!(
            ui_steps(from_selected, base),
            [UiStep {
                select: Some(Selection::Clear),
                ..UiStep::default()
            }]
        );
    }
}
