//! `App`: focus, selection, mode and prompt of the dashboard, and the one
//! place key commands become session actions (crates-tui style: keys map to
//! commands, commands to `Action`s, one `handle` applies them).

use std::collections::BTreeMap;

use crate::session::recording::{Header, Step};
use crate::session::snapshot::{Bounds, Isolation, SavedState, Snapshot, SnapshotSource};
use crate::session::{Action, Driver, Outcome, Recording, RecordingWriter, Timeline};
use crate::ui::i18n::Lang;
use crate::ui::keys::{KeyCommand, PromptKind};
use crate::ui::layout::Layout;
use crate::ui::panes::PaneId;
use crate::ui::theme::Theme;

/// How far a pane scrolls at most (panes clip what they draw anyway).
const MAX_SCROLL: usize = 10_000;

/// A live session: keys drive the engine, and are recorded if asked.
pub struct LiveSession {
    pub driver: Driver,
    pub header: Header,
    pub recorder: Option<RecordingWriter>,
    /// Time in the session, for the `at_ms` of recorded steps.
    pub elapsed_ms: u64,
}

/// Live (keys drive the engine), replay (keys move through a recording) or
/// a saved state (`render --state`: one snapshot, nothing to drive).
pub enum Mode {
    Live(Box<LiveSession>),
    Replay {
        timeline: Box<Timeline>,
        playing: bool,
    },
    Saved(Box<SavedState>),
}

/// An open prompt: which action, and the text being edited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    pub kind: PromptKind,
    pub text: String,
}

impl Prompt {
    /// What the prompt asks for, shown before the input.
    pub fn label(&self, lang: Lang) -> &'static str {
        if lang == Lang::Zh {
            return match self.kind {
                PromptKind::Produce => "生产：topic value [acks= key= partition= producer=]",
                PromptKind::Begin => "开启事务：事务 id",
                PromptKind::Send => "事务内发送：txn topic value",
                PromptKind::SendOffsets => "暂存 offset：txn group topic-partition offset",
                PromptKind::Commit => "提交：txn",
                PromptKind::Abort => "中止：txn",
                PromptKind::CrashAtCut => "提交并崩溃：txn prepare|marker:N|markers|offsets",
                PromptKind::ReplicateBroker => "复制：broker",
                PromptKind::AdvanceClock => "推进时钟：毫秒",
                PromptKind::TearJournal => "撕裂 journal：截掉的字节数，或 garbage",
                PromptKind::TearLog => "撕裂日志：topic-partition broker 字节数|garbage",
                PromptKind::StopBroker => "停止 broker",
                PromptKind::StartBroker => "启动 broker",
                PromptKind::Promote => "提升副本：topic-partition broker",
            };
        }
        match self.kind {
            PromptKind::Produce => "produce: topic value [acks= key= partition= producer=]",
            PromptKind::Begin => "begin: transaction id",
            PromptKind::Send => "send: txn topic value",
            PromptKind::SendOffsets => "send offsets: txn group topic-partition offset",
            PromptKind::Commit => "commit: txn",
            PromptKind::Abort => "abort: txn",
            PromptKind::CrashAtCut => "commit and crash: txn prepare|marker:N|markers|offsets",
            PromptKind::ReplicateBroker => "replicate: broker",
            PromptKind::AdvanceClock => "advance clock: ms",
            PromptKind::TearJournal => "tear journal: bytes to cut, or 'garbage'",
            PromptKind::TearLog => "tear log: topic-partition broker bytes|garbage",
            PromptKind::StopBroker => "stop broker",
            PromptKind::StartBroker => "start broker",
            PromptKind::Promote => "promote: topic-partition broker",
        }
    }
}

/// The dashboard's state.
pub struct App {
    pub mode: Mode,
    pub layout: Layout,
    pub lang: Lang,
    pub theme: Theme,
    pub title: String,
    /// Index into `layout.panes()`.
    pub focus: usize,
    pub scroll: BTreeMap<PaneId, usize>,
    /// The selected batch row in the partitions pane.
    pub selected: Option<usize>,
    pub show_help: bool,
    pub prompt: Option<Prompt>,
    /// The last message: an outcome or an error.
    pub status: Option<String>,
    /// The transaction last begun from a key: the default for send/commit.
    pub last_txn: Option<String>,
    /// The consumer whose eyes the partitions pane uses (`i` toggles).
    pub isolation: Isolation,
    pub quit: bool,
}

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
        let title = header.title.clone();
        Self::with_mode(
            Mode::Live(Box::new(LiveSession {
                driver,
                header,
                recorder,
                elapsed_ms: 0,
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
        let title = recording.header.title.clone();
        let timeline = Timeline::new(
            recording,
            crate::session::timeline::DEFAULT_CHECKPOINT_EVERY,
        )?;
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
            selected: None,
            show_help: false,
            prompt: None,
            status: None,
            last_txn: None,
            isolation: Isolation::ReadCommitted,
            quit: false,
        }
    }

    /// True in replay mode.
    pub fn is_replay(&self) -> bool {
        matches!(self.mode, Mode::Replay { .. })
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
            Mode::Saved(_) => None,
        }
    }

    /// Where the frames' snapshots come from.
    fn source(&self) -> &dyn SnapshotSource {
        match &self.mode {
            Mode::Live(live) => &live.driver,
            Mode::Replay { timeline, .. } => &**timeline,
            Mode::Saved(saved) => &**saved,
        }
    }

    /// The focused pane.
    pub fn focused(&self) -> Option<PaneId> {
        self.layout.panes().get(self.focus).copied()
    }

    /// The snapshot for the next frame, bounded to what a frame shows
    /// ([`Bounds::FRAME`]), without record values.
    pub fn snapshot(&self) -> Snapshot {
        let mut snapshot = self.source().snapshot(&Bounds::FRAME);
        if let Mode::Live(_) = self.mode {
            snapshot.title = self.title.clone();
        }
        snapshot
    }

    /// The snapshot for a frame of `area`: [`Self::snapshot`] with the
    /// records of the batch rows that frame draws.
    pub fn snapshot_for(&self, area: ratatui::layout::Rect) -> Snapshot {
        let mut snapshot = self.snapshot();
        let wanted = crate::ui::frame::visible_batches(self, &snapshot, area);
        self.source().load_values(&mut snapshot, &wanted);
        snapshot
    }

    /// The recorded pace: milliseconds from the current step to the next one,
    /// if playing and there is a next step.
    pub fn next_step_delay_ms(&self) -> Option<u64> {
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
        Some(next.at_ms.saturating_sub(now))
    }

    /// Handles one key command.
    pub fn handle(&mut self, command: KeyCommand) {
        let panes = self.layout.panes().len().max(1);
        match command {
            KeyCommand::Quit => self.quit = true,
            KeyCommand::ToggleHelp => self.show_help = !self.show_help,
            KeyCommand::ToggleIsolation => {
                self.isolation = self.isolation.toggled();
            }
            KeyCommand::FocusNext => self.focus = (self.focus + 1) % panes,
            KeyCommand::FocusPrev => self.focus = (self.focus + panes - 1) % panes,
            KeyCommand::ScrollUp | KeyCommand::ScrollDown => {
                if let Some(pane) = self.focused() {
                    // Panes that follow new data count rows up from the
                    // bottom; the others count rows down from the top.
                    let from_bottom =
                        matches!(pane, PaneId::Partitions | PaneId::Journal | PaneId::Events);
                    let grow = (command == KeyCommand::ScrollUp) == from_bottom;
                    let s = self.scroll.entry(pane).or_default();
                    *s = if grow {
                        (*s + 1).min(MAX_SCROLL)
                    } else {
                        s.saturating_sub(1)
                    };
                }
            }
            KeyCommand::SelectNext => {
                let last =
                    crate::ui::panes::partitions::selectable(&self.snapshot()).checked_sub(1);
                self.selected = match (self.selected, last) {
                    (_, None) => None,
                    (None, Some(_)) => Some(0),
                    (Some(s), Some(last)) => Some((s + 1).min(last)),
                };
            }
            KeyCommand::SelectPrev => self.selected = self.selected.and_then(|s| s.checked_sub(1)),
            KeyCommand::Prompt(kind) => {
                let text = self.default_prompt(kind);
                self.prompt = Some(Prompt { kind, text });
            }
            KeyCommand::ReplicateAll => self.apply(Action::Replicate {
                broker: None,
                topic: None,
                partition: None,
            }),
            KeyCommand::Crash => self.apply(Action::Crash {}),
            KeyCommand::NextStep
            | KeyCommand::PrevStep
            | KeyCommand::FirstStep
            | KeyCommand::LastStep => self.move_replay(command),
            KeyCommand::PlayPause => {
                if let Mode::Replay { timeline, playing } = &mut self.mode {
                    *playing = !*playing;
                    // Playing from the end starts over.
                    if *playing && timeline.step() >= timeline.recording().steps.len() {
                        self.status = timeline.goto(0).err();
                    }
                }
            }
        }
    }

    fn move_replay(&mut self, command: KeyCommand) {
        let Mode::Replay { timeline, .. } = &mut self.mode else {
            return;
        };
        let step = timeline.step();
        let target = match command {
            KeyCommand::NextStep => step + 1,
            KeyCommand::PrevStep => step.saturating_sub(1),
            KeyCommand::FirstStep => 0,
            _ => timeline.recording().steps.len(),
        };
        self.status = timeline.goto(target).err();
        self.apply_recorded_ui();
    }

    /// Replay: moves to `step` (headless render and export use this).
    pub fn goto_step(&mut self, step: usize) -> Result<(), String> {
        if let Mode::Replay { timeline, .. } = &mut self.mode {
            timeline.goto(step)?;
        }
        self.apply_recorded_ui();
        Ok(())
    }

    /// Replay: puts the screen in the state the recording's `ui` steps up to
    /// the current step describe (focus, selected batch, toggles), so a
    /// replay shows the same screen as the session it recorded.
    fn apply_recorded_ui(&mut self) {
        let Mode::Replay { timeline, .. } = &self.mode else {
            return;
        };
        let panes = self.layout.panes();
        let (mut focus, mut selected, mut isolation, mut help) =
            (0, None, Isolation::ReadCommitted, false);
        for step in &timeline.recording().steps[..timeline.step()] {
            let Action::Ui {
                focus: f,
                select,
                toggle,
            } = &step.action
            else {
                continue;
            };
            if let Some(index) = f
                .as_deref()
                .and_then(PaneId::from_name)
                .and_then(|p| panes.iter().position(|q| *q == p))
            {
                focus = index;
            }
            if let Some(select) = select {
                selected = select.as_u64().map(|s| s as usize);
            }
            match toggle.as_deref() {
                Some("isolation") => {
                    isolation = isolation.toggled();
                }
                Some("help") => help = !help,
                _ => {}
            }
        }
        (self.focus, self.selected, self.isolation, self.show_help) =
            (focus, selected, isolation, help);
    }

    /// One step forward while playing; stops at the end.
    pub fn play_tick(&mut self) {
        self.move_replay(KeyCommand::NextStep);
        if let Mode::Replay { timeline, playing } = &mut self.mode
            && timeline.step() >= timeline.recording().steps.len()
        {
            *playing = false;
        }
    }

    /// Edits the open prompt: a character, backspace, Enter (apply) or Esc.
    pub fn prompt_key(&mut self, key: crossterm::event::KeyEvent) {
        use crossterm::event::KeyCode;
        let Some(prompt) = &mut self.prompt else {
            return;
        };
        match key.code {
            KeyCode::Esc => self.prompt = None,
            KeyCode::Backspace => {
                prompt.text.pop();
            }
            KeyCode::Char(c)
                if !key.modifiers.intersects(
                    crossterm::event::KeyModifiers::CONTROL | crossterm::event::KeyModifiers::ALT,
                ) =>
            {
                prompt.text.push(c)
            }
            KeyCode::Enter => {
                let prompt = self.prompt.take().expect("checked above");
                match parse_prompt(prompt.kind, &prompt.text) {
                    Ok(action) => self.apply(action),
                    Err(e) => self.status = Some(e),
                }
            }
            _ => {}
        }
    }

    /// Applies an action in live mode, records it, and reports the outcome.
    pub fn apply(&mut self, action: Action) {
        let Mode::Live(live) = &mut self.mode else {
            self.status = Some("replay: engine keys are off".into());
            return;
        };
        let LiveSession {
            driver,
            recorder,
            elapsed_ms,
            ..
        } = &mut **live;
        let name = action.name();
        // An invalid action (past a limit) is neither applied nor recorded:
        // the recording would not read back.
        if let Err(e) = driver.refuse(&action) {
            self.status = Some(format!("{name}: refused: {e}"));
            return;
        }
        if let Action::Begin { txn } = &action {
            self.last_txn = Some(txn.clone());
        }
        let outcome = driver.apply(&action);
        if let Some(w) = recorder {
            let step = Step {
                at_ms: *elapsed_ms,
                action,
                caption: None,
            };
            if let Err(e) = w.append(&step) {
                self.status = Some(format!("{}: cannot record: {e}", w.path().display()));
                return;
            }
        }
        *elapsed_ms += 1000;
        self.status = Some(match outcome {
            Outcome::Ok => format!("step {}: {name}: ok", driver.step()),
            Outcome::Pending => format!("step {}: {name}: pending", driver.step()),
            Outcome::Recovered(text) => format!("step {}: {text}", driver.step()),
            Outcome::Error(e) => format!("step {}: {name}: error: {e}", driver.step()),
        });
    }

    /// A useful default for each prompt, from the current state.
    fn default_prompt(&self, kind: PromptKind) -> String {
        let view = self.snapshot();
        let open_txn = view
            .transactions
            .iter()
            .rev()
            .find(|t| t.state.is_unstable())
            .map(|t| t.id.clone());
        // The transaction begun last, while it is open; else the newest open.
        let last_open = self.last_txn.clone().filter(|id| {
            view.transactions
                .iter()
                .any(|t| &t.id == id && t.state.is_unstable())
        });
        let txn = last_open.or(open_txn).unwrap_or_else(|| "tx-1".into());
        let stopped = view
            .partitions
            .iter()
            .flat_map(|p| p.replicas.iter())
            .find(|r| r.stopped)
            .map(|r| r.broker);
        let topic = view
            .partitions
            .first()
            .map_or_else(|| "out".to_string(), |p| p.topic.clone());
        let first_tp = view
            .partitions
            .first()
            .map_or_else(|| "out-0".to_string(), |p| p.name());
        let n = view.step + 1;
        let broker = view
            .partitions
            .first()
            .and_then(|p| p.replicas.iter().find(|r| !r.is_leader))
            .map_or(1, |r| r.broker);
        match kind {
            PromptKind::Produce => format!("{topic} value-{n} acks=1"),
            PromptKind::Begin => (1..)
                .map(|i| format!("tx-{i}"))
                .find(|id| !view.transactions.iter().any(|t| &t.id == id))
                .expect("some id is free"),
            PromptKind::Send => format!("{txn} {topic} value-{n}"),
            PromptKind::SendOffsets => format!("{txn} workers {first_tp} {n}"),
            PromptKind::Commit | PromptKind::Abort => txn,
            PromptKind::CrashAtCut => format!("{txn} prepare"),
            PromptKind::ReplicateBroker => broker.to_string(),
            PromptKind::AdvanceClock => "1000".into(),
            PromptKind::TearJournal => "5".into(),
            PromptKind::TearLog => format!(
                "{first_tp} {} 5",
                view.partitions.first().map_or(1, |p| p.leader)
            ),
            PromptKind::StopBroker => broker.to_string(),
            PromptKind::StartBroker => stopped.unwrap_or(broker).to_string(),
            PromptKind::Promote => format!("{first_tp} {broker}"),
        }
    }
}

/// `topic-partition` split at the last '-'.
fn parse_tp(s: &str) -> Result<(String, u32), String> {
    let (topic, p) = s
        .rsplit_once('-')
        .ok_or_else(|| format!("{s:?}: expected topic-partition, like out-0"))?;
    let p = p
        .parse()
        .map_err(|_| format!("{s:?}: the partition after '-' must be a number"))?;
    Ok((topic.to_string(), p))
}

fn number<T: std::str::FromStr>(s: Option<&str>, what: &str) -> Result<T, String> {
    s.ok_or_else(|| format!("missing {what}"))?
        .parse()
        .map_err(|_| format!("{what} must be a number"))
}

/// Turns a prompt's text into an action.
pub fn parse_prompt(kind: PromptKind, text: &str) -> Result<Action, String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let word = |i: usize, what: &str| {
        words
            .get(i)
            .map(|w| w.to_string())
            .ok_or_else(|| format!("missing {what}"))
    };
    Ok(match kind {
        PromptKind::Produce => {
            let mut fields = BTreeMap::new();
            let mut plain = Vec::new();
            for w in &words {
                match w.split_once('=') {
                    Some((k, v)) => {
                        fields.insert(k.to_string(), v.to_string());
                    }
                    None => plain.push(w.to_string()),
                }
            }
            let topic = plain.first().cloned().ok_or("missing topic")?;
            let value = plain.get(1).cloned().ok_or("missing value")?;
            Action::Produce {
                topic,
                partition: fields
                    .get("partition")
                    .map(|p| p.parse())
                    .transpose()
                    .map_err(|_| "partition must be a number")?,
                key: fields.get("key").cloned(),
                value,
                acks: fields.get("acks").map(|a| a.parse()).transpose()?,
                producer: fields.get("producer").cloned(),
            }
        }
        PromptKind::Begin => Action::Begin {
            txn: word(0, "transaction id")?,
        },
        PromptKind::Send => Action::Send {
            txn: word(0, "transaction id")?,
            topic: word(1, "topic")?,
            partition: None,
            key: None,
            value: word(2, "value")?,
        },
        PromptKind::SendOffsets => {
            let (topic, partition) = parse_tp(&word(2, "topic-partition")?)?;
            Action::SendOffsets {
                txn: word(0, "transaction id")?,
                group: word(1, "group")?,
                offsets: vec![crate::session::action::OffsetSpec {
                    topic,
                    partition,
                    offset: number(words.get(3).copied(), "offset")?,
                }],
            }
        }
        PromptKind::Commit => Action::Commit {
            txn: word(0, "transaction id")?,
            crash_after: None,
        },
        PromptKind::Abort => Action::Abort {
            txn: word(0, "transaction id")?,
            crash_after: None,
        },
        PromptKind::CrashAtCut => Action::Commit {
            txn: word(0, "transaction id")?,
            crash_after: Some(word(1, "cut point")?.parse()?),
        },
        PromptKind::ReplicateBroker => Action::Replicate {
            broker: Some(number(words.first().copied(), "broker")?),
            topic: None,
            partition: None,
        },
        PromptKind::AdvanceClock => Action::AdvanceClock {
            ms: number(words.first().copied(), "milliseconds")?,
        },
        PromptKind::TearJournal => tear(
            crate::session::action::TearTargetSpec::Journal,
            words.first().copied(),
        )?,
        PromptKind::TearLog => {
            let (topic, partition) = parse_tp(&word(0, "topic-partition")?)?;
            let broker = number(words.get(1).copied(), "broker")?;
            tear(
                crate::session::action::TearTargetSpec::Log {
                    topic,
                    partition,
                    broker,
                },
                words.get(2).copied(),
            )?
        }
        PromptKind::StopBroker => Action::StopBroker {
            broker: number(words.first().copied(), "broker")?,
        },
        PromptKind::StartBroker => Action::StartBroker {
            broker: number(words.first().copied(), "broker")?,
        },
        PromptKind::Promote => {
            let (topic, partition) = parse_tp(&word(0, "topic-partition")?)?;
            Action::Promote {
                topic,
                partition,
                broker: number(words.get(1).copied(), "broker")?,
            }
        }
    })
}

fn tear(
    target: crate::session::action::TearTargetSpec,
    how: Option<&str>,
) -> Result<Action, String> {
    Ok(match how {
        Some("garbage") => Action::Tear {
            target,
            cut_bytes: None,
            append_garbage: Some(crate::session::action::GarbageSpec::Default(true)),
        },
        other => Action::Tear {
            target,
            cut_bytes: Some(number(other, "bytes to cut")?),
            append_garbage: None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_parse_into_actions() {
        assert_eq!(
            parse_prompt(PromptKind::Produce, "out hello acks=all key=k").unwrap(),
            Action::Produce {
                topic: "out".into(),
                partition: None,
                key: Some("k".into()),
                value: "hello".into(),
                acks: Some("all".parse().unwrap()),
                producer: None
            }
        );
        assert!(matches!(
            parse_prompt(PromptKind::TearLog, "orders-0 1 garbage").unwrap(),
            Action::Tear { .. }
        ));
        assert!(matches!(
            parse_prompt(PromptKind::Promote, "my-topic-2 3").unwrap(),
            Action::Promote { ref topic, partition: 2, broker: 3 } if topic == "my-topic"
        ));
        assert!(
            parse_prompt(PromptKind::Send, "tx-1 out")
                .unwrap_err()
                .contains("value")
        );
        assert!(
            parse_prompt(PromptKind::AdvanceClock, "soon")
                .unwrap_err()
                .contains("number")
        );
    }
}
