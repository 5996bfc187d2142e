//! A live session, as a mode of the [`Session`](super::Session): one
//! [`Driver`] that keys and Kafka clients (`--listen`) both drive, every
//! step kept in one [`StepLog`], the snapshot before the last step (what it
//! changed) and, after a crash, whether its moment of death is on screen.

use crate::session::client_steps::{ClientSteps, Told};
use crate::session::guide::Guide;
use crate::session::listeners::Listeners;
use crate::session::recording::{Caption, Header, caption_step};
use crate::session::said::Said;
use crate::session::snapshot::source::{apply_all, step_view};
use crate::session::snapshot::{Bounds, SnapshotSource};
use crate::session::step_log::StepLog;
use crate::session::{Action, Driver, Outcome, Snapshot};

/// How many request log lines a frame's snapshot carries (`--listen`):
/// as many as the server keeps (200), so that the clients pane, which
/// folds a consumer's empty fetches into one line, still has the produces
/// and transactions of the last minute or so to show between them.
const CLIENT_LOG_LINES: usize = 200;

/// A live session: keys drive the engine, and are recorded if asked.
pub struct Live {
    pub(super) driver: Driver,
    pub(super) header: Header,
    pub(super) log: StepLog,
    /// A frame's snapshot taken just before the last action: what that
    /// step changed is the difference.
    pub(super) before: Option<Snapshot>,
    /// The last step crashed the cluster and its moment of death is on
    /// screen; `space` shows the recovery (docs/dashboard.md "Crashes as
    /// moments").
    pub(super) at_moment: bool,
    /// The Kafka listeners beside the driver (`--listen`): clients drive
    /// the same driver as the keys, and their actions are steps too.
    pub(super) listeners: Option<Box<dyn Listeners>>,
    /// A caption for the session's start when its last step has none (a
    /// branch made at an uncaptioned step): shown while the log holds
    /// exactly this many steps (and `ui` steps after them), so the screen
    /// never starts blank.
    pub(super) intro: Option<(usize, Caption)>,
    /// A lab's key guide and the log's length when it started: each step
    /// after it carries the guide's caption (the keys that remain), so
    /// the screen and a `--record`ed replay both keep the keys in view.
    pub(super) guide: Option<(usize, Guide)>,
    /// The steps that built the cluster the session starts on (the
    /// demo's): their events and errors are not the user's, so the Events
    /// pane starts clean and lists only what happened since.
    pub(super) setup_steps: usize,
}

/// A step applied: its number, how it ended and the driver's words for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub step: usize,
    pub outcome: Outcome,
    pub said: Said,
}

/// Why `D` armed nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArmError {
    /// No listeners are open (no `--listen`).
    NoListeners,
    /// The listeners refused (armed already).
    Refused(String),
}

impl Live {
    /// One step: refused past a limit, else applied by the driver, then
    /// kept in the log (and its recording). Err: why it was not applied,
    /// or why it was applied but not recorded.
    pub fn apply(&mut self, action: Action, caption: Option<Caption>) -> Result<Applied, Said> {
        // An action past a limit (docs/recording-format.md) is neither
        // applied nor recorded: the recording would not read back.
        self.driver
            .refuse(&action)
            .map_err(|e| english(format!("{}: refused: {e}", action.name())))?;
        self.before = Some(self.driver.snapshot(&Bounds::FRAME));
        let outcome = self.driver.apply(&action);
        self.at_moment = self.driver.last_moment().is_some();
        if let Some(l) = &mut self.listeners {
            // `r` may finish a client's acks=all produce; a stopped
            // broker's listener closes.
            l.after_step(&self.driver);
        }
        // The step is applied: it is history whether or not it records.
        let clock = self.driver.clock_ms();
        let caption = caption.or_else(|| self.guide_after(&action));
        self.log
            .push(action, caption, clock)
            .map_err(|e| english(e.to_string()))?;
        Ok(Applied {
            step: self.driver.step(),
            outcome,
            said: self.driver.last_said().clone(),
        })
    }

    /// A lab's guide caption once `action` is applied (None: no guide).
    fn guide_after(&self, action: &Action) -> Option<Caption> {
        let (start, guide) = self.guide.as_ref()?;
        let since = self.log.steps().get(*start..).unwrap_or_default();
        Some(guide.caption(since.iter().map(|s| &s.action).chain([action])))
    }

    /// Undoes the last cluster step, by replaying the session's steps
    /// without it into a fresh driver (the engine is a pure function of
    /// its steps) and, when recording, rewriting the recording without it.
    /// The `ui` steps after it (screen changes: `?`, `J`, `Tab` with
    /// `--record`) are kept: undo means the cluster's last step, and the
    /// screen stays what the recording's fold says (a new user's trial:
    /// `?` `Esc` `u` undid the closing of the help and left the recording
    /// ending on a lone help opening). A session whose data directory the
    /// user keeps (`--data-dir`) is not undone: that directory has the
    /// step on disk; nor one whose clients were answered (`--listen`).
    pub fn undo(&mut self) -> Result<Said, Said> {
        let steps = self.log.steps();
        let Some(index) = steps.iter().rposition(|s| !s.is_screen_only()) else {
            return Err(Said::new("undo: nothing to undo", "撤销：没有可撤销的步骤"));
        };
        if self.listeners.is_some() {
            return Err(Said::new(
                "undo: Kafka clients were answered for these steps (--listen); undo would change what they were told",
                "撤销：这些步骤已经回复了 Kafka 客户端 (--listen)；撤销会改变它们得到的回答",
            ));
        }
        if !self.driver.is_private() {
            return Err(english(format!(
                "undo: {} keeps this session's data on disk; undo needs a session in a temporary directory",
                self.driver.data_dir().display()
            )));
        }
        // Step numbers count from the driver's (the log may start later).
        let step = self.driver.step() - (steps.len() - 1 - index);
        let name = steps[index].action.name();
        let mut driver =
            Driver::new(&self.header, None).map_err(|e| english(format!("undo: {e}")))?;
        let before = apply_all(
            &mut driver,
            steps
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != index)
                .map(|(_, s)| &s.action),
        );
        self.log.forget(index, &self.header).map_err(|e| {
            english(format!(
                "undo: {}: cannot rewrite the recording: {}",
                e.path.display(),
                e.error
            ))
        })?;
        let old = std::mem::replace(&mut self.driver, driver);
        drop(old.dispose());
        self.before = before;
        self.at_moment = false;
        Ok(Said::new(
            format!("undid step {step} ({name})"),
            format!(
                "已撤销步骤 {step}（{}）",
                crate::session::said::action_zh(name)
            ),
        ))
    }

    /// Handles what the listeners have (requests, due timers); each
    /// action they apply is a step of the session as a key's is
    /// ([`ClientSteps`]). Returns whether the engine changed and what the
    /// last step was, if there was one.
    pub fn serve(&mut self) -> (bool, Option<Told>) {
        let Some(listeners) = &mut self.listeners else {
            return (false, None);
        };
        let mut steps = ClientSteps {
            log: &mut self.log,
            before: &mut self.before,
            at_moment: &mut self.at_moment,
            told: None,
        };
        let changed = listeners.serve(&mut self.driver, &mut steps);
        (changed, steps.told)
    }

    /// `D` (`--listen`): the listeners drop the response of the next
    /// Produce; the arming is a `note` step of the session, recorded with
    /// its caption.
    pub fn arm_drop_produce_response(&mut self) -> Result<Option<Told>, ArmError> {
        let Some(listeners) = &mut self.listeners else {
            return Err(ArmError::NoListeners);
        };
        let mut steps = ClientSteps {
            log: &mut self.log,
            before: &mut self.before,
            at_moment: &mut self.at_moment,
            told: None,
        };
        listeners
            .arm_drop_produce_response(&mut self.driver, &mut steps)
            .map_err(|e| ArmError::Refused(e.to_string()))?;
        Ok(steps.told)
    }

    /// `snapshot` (the driver's) as the live screen shows it: after a
    /// crash the moment of death first, then the recovery; the caption of
    /// the session's last step; the listeners' registry.
    pub fn shown(&self, snapshot: Snapshot) -> Snapshot {
        let mut snapshot = step_view(&self.driver, self.before.as_ref(), self.at_moment, snapshot);
        // The caption of the session's last step, if it has one (the
        // listeners' `note` steps: a fault, a retry answered from the
        // sequence check); keys' steps have none.
        // A `ui` step keeps the caption on screen (`caption_step`).
        if self.log.len() == self.driver.step() {
            let steps = self.log.steps();
            let shown = caption_step(steps, steps.len());
            snapshot.caption = shown
                .checked_sub(1)
                .and_then(|i| steps[i].caption.clone())
                .or_else(|| {
                    self.intro
                        .as_ref()
                        .filter(|(at, _)| *at == shown)
                        .map(|(_, c)| c.clone())
                });
        }
        let setup = self.setup_steps;
        snapshot.events.retain(|e| e.step > setup);
        snapshot.errors.retain(|e| e.step > setup);
        if let Some(l) = &self.listeners {
            // The server's registry, not the engine: the room's view.
            snapshot.listeners = l.listeners();
            snapshot.clients = l.clients();
            snapshot.client_log = l.log(CLIENT_LOG_LINES);
            // The listeners' own word: armed until the response it
            // takes is dropped.
            snapshot.fault_armed = l.armed_fault();
        }
        snapshot
    }
}

/// A message that has no Chinese: shown in English in both languages.
fn english(text: String) -> Said {
    Said::new(text, "")
}
