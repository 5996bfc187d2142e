//! Every word in Chinese under `--lang zh`: a frame holds no English word
//! but Kafka's own terms (the glossary, `ui::glossary::KEPT_IN_CHINESE`,
//! docs/dashboard.md "Chinese") and the data it shows (topic names,
//! record values, transactional ids, groups and members, error codes),
//! which are collected from the recording's actions and the state, not
//! written down here.
//!
//! Frames: every step of every lesson in `recordings/`, in its own layout at
//! 160x48 and 80x24 and in every built-in layout at 160x48; in the live
//! dashboard (the demo cluster) every prompt, opened and then applied with
//! its default, refused with a bad value, and every key without a prompt
//! (the status line each leaves), the help overlay page by page and the
//! key bars; in replay the same for its own keys.
//!
//! An English word is a run of two or more ASCII letters (and `_`) not
//! touching a digit: `e0`, CRCs and `tx-1`'s `1` are numbers, not words.

mod common;

use common::zh::words;

use std::collections::{BTreeMap, BTreeSet};

use minikafka::session::{Recording, Snapshot};
use minikafka::ui::app::{App, Msg};
use minikafka::ui::glossary::KEPT_IN_CHINESE;
use minikafka::ui::headless::{buffer_text, frame_buffer};
use minikafka::ui::i18n::Lang;
use minikafka::ui::keys::{KeyCommand, PromptEdit, PromptKind};
use minikafka::ui::layout::{self, Layout};
use minikafka::ui::prompt::TYPED_WORDS;
use minikafka::ui::theme::Theme;

const SIZES: [(u16, u16); 2] = [(160, 48), (80, 24)];
const LAYOUTS: [&str; 6] = layout::BUILTIN_NAMES;

/// The data a snapshot shows, which stays as it is in any language.
fn data_words(s: &Snapshot) -> BTreeSet<String> {
    let mut out = common::zh::data_words(s);
    let groups = serde_json::to_value(&s.groups).unwrap();
    strings(&groups, &mut out);
    // An error's code is the Kafka error name the Chinese line keeps.
    for e in &s.errors {
        out.extend(words(&e.code));
    }
    out
}

/// The words a frame shows cut short (`tx-canc…`, a word at the right
/// edge, or `read_` where the help overlay covers the rest): a cut word is
/// allowed when a whole word allowed starts with it.
fn cut_words(text: &str, help_open: bool) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let end = line.trim_end();
        if let Some(last) = words(end).into_iter().find(|w| end.ends_with(w.as_str())) {
            out.insert(last);
        }
        for (i, _) in line.match_indices('…') {
            out.extend(
                words(&line[..i])
                    .into_iter()
                    .filter(|w| line[..i].ends_with(w.as_str())),
            );
        }
    }
    if help_open {
        out.extend(words(text));
    }
    out
}

/// The words of every string in a JSON value (not its keys).
fn strings(v: &serde_json::Value, out: &mut BTreeSet<String>) {
    match v {
        serde_json::Value::String(s) => out.extend(words(s)),
        serde_json::Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
        serde_json::Value::Object(o) => o.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// The values of the recording's actions (topics, values, keys, ids,
/// groups, members) and its topics' names.
fn action_words(recording: &Recording) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for s in &recording.steps {
        let action = serde_json::to_value(&s.action).unwrap();
        // The action's own values, not its name or field names.
        if let serde_json::Value::Object(o) = &action {
            o.values().for_each(|v| strings(v, &mut out));
        }
    }
    for t in &recording.header.cluster.topics {
        out.extend(words(&t.name));
    }
    out
}

/// Stray English words, each with the first frame it was seen in.
#[derive(Default)]
struct Strays {
    seen: BTreeMap<String, (usize, String)>,
    frames: usize,
    /// What was typed in a prompt: data from then on (a produced value).
    typed: BTreeSet<String>,
}

impl Strays {
    fn check(&mut self, app: &App, data: &BTreeSet<String>, (cols, rows): (u16, u16), at: &str) {
        let text = buffer_text(&frame_buffer(app, cols, rows));
        let mut allowed = data_words(app.view());
        allowed.extend(data.iter().cloned());
        // An open prompt shows what is typed (data) and the words its
        // parser takes as they are (`acks=`, a cut point's name).
        if let Some(p) = &app.prompt {
            self.typed.extend(words(&p.text));
            allowed.extend(TYPED_WORDS.iter().map(|w| w.to_string()));
        }
        allowed.extend(self.typed.iter().cloned());
        self.frames += 1;
        let cut = cut_words(&text, app.show_help);
        let kept = |w: &str| allowed.contains(w) || KEPT_IN_CHINESE.contains(&w);
        for w in words(&text) {
            let cut_short = cut.contains(&w)
                && (allowed.iter().any(|a| a.starts_with(&w))
                    || KEPT_IN_CHINESE.iter().any(|a| a.starts_with(&w)));
            if kept(&w) || cut_short {
                continue;
            }
            let line = text
                .lines()
                .find(|l| words(l).contains(&w))
                .unwrap_or_default()
                .trim()
                .to_string();
            let e = self
                .seen
                .entry(w)
                .or_insert_with(|| (0, format!("{at} at {cols}x{rows}: {line}")));
            e.0 += 1;
        }
    }

    fn assert_none(self, what: &str, at_least: usize) {
        assert!(
            self.frames >= at_least,
            "{what}: only {} frames",
            self.frames
        );
        let total: usize = self.seen.values().map(|(n, _)| n).sum();
        eprintln!(
            "{what}: {} frames, {} distinct English words, {total} occurrences",
            self.frames,
            self.seen.len()
        );
        if self.seen.is_empty() {
            return;
        }
        let list: Vec<String> = self
            .seen
            .iter()
            .map(|(w, (n, first))| format!("{w:?} ({n} times), first in {first}"))
            .collect();
        panic!("{what}: English in Chinese frames:\n{}", list.join("\n"));
    }
}

fn own_layout(recording: &Recording) -> Layout {
    layout::builtin(recording.header.layout.as_deref().unwrap_or("default"))
        .unwrap_or_else(layout::builtin_default)
}

/// A layout's name, the layout, and the sizes to draw it at.
type Look = (String, Layout, &'static [(u16, u16)]);

#[test]
fn every_lesson_frame_in_chinese() {
    let mut strays = Strays::default();
    for path in common::recordings() {
        let recording = Recording::load(&path).unwrap();
        let data = action_words(&recording);
        let last = recording.steps.len();
        // The lesson's own layout at both sizes, every built-in at 160x48.
        let mut looks: Vec<Look> = vec![("own".into(), own_layout(&recording), &SIZES)];
        for name in LAYOUTS {
            looks.push((name.into(), layout::builtin(name).unwrap(), &SIZES[..1]));
        }
        for (name, layout, sizes) in looks {
            let mut app =
                App::replay(recording.clone(), layout, Lang::Zh, Theme::colored()).unwrap();
            for step in 0..=last {
                app.update(Msg::Goto(step)).unwrap();
                for &size in sizes {
                    let at = format!("{} step {step} layout {name}", path.display());
                    strays.check(&app, &data, size, &at);
                }
            }
        }
    }
    strays.assert_none("lessons", 1000);
}

const PROMPTS: [PromptKind; 22] = [
    PromptKind::Produce,
    PromptKind::Begin,
    PromptKind::Send,
    PromptKind::SendOffsets,
    PromptKind::Commit,
    PromptKind::Abort,
    PromptKind::CrashAtCut,
    PromptKind::ReplicateBroker,
    PromptKind::AdvanceClock,
    PromptKind::TearJournal,
    PromptKind::TearLog,
    PromptKind::StopBroker,
    PromptKind::StartBroker,
    PromptKind::Promote,
    PromptKind::JoinGroup,
    PromptKind::LeaveGroup,
    PromptKind::Heartbeat,
    PromptKind::Expire,
    PromptKind::Retention,
    PromptKind::Compact,
    PromptKind::CreateTopic,
    PromptKind::GotoStep,
];

/// The keys without a prompt, in live and in replay.
const COMMANDS: [KeyCommand; 24] = [
    KeyCommand::ToggleIsolation,
    KeyCommand::FocusNext,
    KeyCommand::FocusPrev,
    KeyCommand::ScrollUp,
    KeyCommand::ScrollDown,
    KeyCommand::SelectPrev,
    KeyCommand::SelectNext,
    KeyCommand::ToggleZoom,
    KeyCommand::TogglePresentation,
    KeyCommand::CyclePresentPanes,
    KeyCommand::Back,
    KeyCommand::ReplicateAll,
    KeyCommand::NextStep,
    KeyCommand::PrevStep,
    KeyCommand::FirstStep,
    KeyCommand::LastStep,
    KeyCommand::NextCaption,
    KeyCommand::PrevCaption,
    KeyCommand::Undo,
    KeyCommand::DropProduceResponse,
    KeyCommand::Faster,
    KeyCommand::Slower,
    KeyCommand::PlayPause,
    KeyCommand::Crash,
];

fn live_demo() -> (App, BTreeSet<String>) {
    let demo = minikafka::demo::recording();
    let mut driver = minikafka::session::Driver::new(&demo.header, None).unwrap();
    for s in &demo.steps {
        driver.apply(&s.action);
    }
    let app = App::live(
        driver,
        demo.header.clone(),
        None,
        layout::builtin_default(),
        Lang::Zh,
        Theme::colored(),
    );
    (app, action_words(&demo))
}

fn typed(app: &mut App, text: &str) {
    app.update(Msg::Edit(PromptEdit::End)).unwrap();
    app.update(Msg::Edit(PromptEdit::ClearToStart)).unwrap();
    for c in text.chars() {
        app.update(Msg::Edit(PromptEdit::Char(c))).unwrap();
    }
}

/// The help overlay, every page of it, at both sizes.
fn help_pages(app: &mut App, strays: &mut Strays, data: &BTreeSet<String>, at: &str) {
    app.update(Msg::Command(KeyCommand::ToggleHelp)).unwrap();
    for size in SIZES {
        app.update(Msg::Resize(size.0, size.1)).unwrap();
        for page in 0..40 {
            strays.check(app, data, size, &format!("{at}: help, page {page}"));
            app.update(Msg::Command(KeyCommand::ScrollDown)).unwrap();
        }
        for _ in 0..40 {
            app.update(Msg::Command(KeyCommand::ScrollUp)).unwrap();
        }
    }
    app.update(Msg::Command(KeyCommand::ToggleHelp)).unwrap();
}

#[test]
fn every_prompt_message_and_help_line_in_chinese() {
    let mut strays = Strays::default();
    let (mut app, data) = live_demo();
    help_pages(&mut app, &mut strays, &data, "live");
    // Each prompt: opened, refused with values it cannot take, then
    // applied with its default.
    let bad = ["", "zz", "out 1 2 3 4 5 6 7", "nosuch -1", "out x acks=7"];
    let mut data = data;
    bad.iter().for_each(|t| data.extend(words(t)));
    for kind in PROMPTS {
        for text in bad {
            app.update(Msg::Command(KeyCommand::Prompt(kind))).unwrap();
            for size in SIZES {
                strays.check(&app, &data, size, &format!("live: prompt {kind:?}"));
            }
            typed(&mut app, text);
            app.update(Msg::Edit(PromptEdit::Submit)).unwrap();
            for size in SIZES {
                let at = format!("live: prompt {kind:?} given {text:?}");
                strays.check(&app, &data, size, &at);
            }
            app.update(Msg::Edit(PromptEdit::Cancel)).unwrap();
        }
        app.update(Msg::Command(KeyCommand::Prompt(kind))).unwrap();
        app.update(Msg::Edit(PromptEdit::Submit)).unwrap();
        for size in SIZES {
            let at = format!("live: prompt {kind:?} applied with its default");
            strays.check(&app, &data, size, &at);
        }
        app.update(Msg::Edit(PromptEdit::Cancel)).unwrap();
    }
    for command in COMMANDS {
        for _ in 0..2 {
            app.update(Msg::Command(command)).unwrap();
            for size in SIZES {
                strays.check(&app, &data, size, &format!("live: {command:?}"));
            }
        }
    }
    help_pages(&mut app, &mut strays, &data, "live after the keys");

    // Replay: its own keys, the step prompt, the help.
    for path in common::recordings() {
        let recording = Recording::load(&path).unwrap();
        let data = action_words(&recording);
        let layout = own_layout(&recording);
        let mut app = App::replay(recording, layout, Lang::Zh, Theme::colored()).unwrap();
        let at = format!("replay {}", path.display());
        help_pages(&mut app, &mut strays, &data, &at);
        for text in ["", "zz", "99999", "3"] {
            app.update(Msg::Command(KeyCommand::Prompt(PromptKind::GotoStep)))
                .unwrap();
            typed(&mut app, text);
            app.update(Msg::Edit(PromptEdit::Submit)).unwrap();
            for size in SIZES {
                strays.check(&app, &data, size, &format!("{at}: step prompt {text:?}"));
            }
            app.update(Msg::Edit(PromptEdit::Cancel)).unwrap();
        }
        for command in COMMANDS {
            app.update(Msg::Command(command)).unwrap();
            for size in SIZES {
                strays.check(&app, &data, size, &format!("{at}: {command:?}"));
            }
        }
    }
    strays.assert_none("prompts, messages and help", 500);
}
