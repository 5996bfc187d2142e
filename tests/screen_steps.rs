//! `ui` steps (SPEC §4: "focus / select / toggle (UI-only steps, so a
//! replay shows the same screen)") as a new user's trial met them, live
//! with `--record` on the demo and in its replay (docs/dashboard.md
//! "Decisions"): undo undoes the last cluster step, a screen change writes
//! no event and keeps the caption, and a recorded help overlay is drawn at
//! its steps however they are reached without swallowing the replay keys.

use std::path::Path;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use minikafka::demo;
use minikafka::session::snapshot::source::apply_all;
use minikafka::session::{Action, Driver, Recording, RecordingWriter, Step};
use minikafka::ui::app::App;
use minikafka::ui::headless::{self, Format, buffer_text, frame_buffer};
use minikafka::ui::i18n::Lang;
use minikafka::ui::layout;
use minikafka::ui::theme::Theme;

fn key(app: &mut App, code: KeyCode) {
    let key = Event::Key(KeyEvent::new(code, KeyModifiers::NONE));
    if let Some(msg) = minikafka::ui::run::message(app, &key) {
        app.update(msg).unwrap();
    }
}

fn press(app: &mut App, keys: &str) {
    for c in keys.chars() {
        key(app, KeyCode::Char(c));
    }
}

/// `mk-tui --record path`, as `run_live` starts it: the demo's steps in the
/// file and the history, their events left out of the Events pane.
fn live_recording(path: &Path) -> App {
    let demo = demo::recording();
    let mut writer = RecordingWriter::create(path, &demo.header).unwrap();
    for s in &demo.steps {
        writer.append(s).unwrap();
    }
    let mut driver = Driver::new(&demo.header, None).unwrap();
    apply_all(&mut driver, demo.steps.iter().map(|s| &s.action));
    App::live(
        driver,
        demo.header.clone(),
        Some(writer),
        layout::builtin_default(),
        Lang::En,
        Theme::colored(),
    )
    .with_history(demo.steps.clone())
    .with_clean_events()
}

fn status(app: &App) -> String {
    app.status
        .as_ref()
        .map_or(String::new(), |s| s.text.clone())
}

fn is_ui(s: &Step) -> bool {
    matches!(s.action, Action::Ui(_))
}

/// The trial: `?` `Esc` `u` said `undid step 51 (ui)` and left the file
/// ending on a lone help opening; after `J`, `u` undid the selection.
#[test]
fn undo_undoes_the_last_cluster_step_and_keeps_the_screen_changes_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s1.jsonl");
    let mut app = live_recording(&path);
    let start = app.driver().unwrap().step();
    let last_demo = demo::recording().steps.last().unwrap().action.name();
    press(&mut app, "?");
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.driver().unwrap().step(), start + 2, "two ui steps");
    press(&mut app, "u");
    assert_eq!(status(&app), format!("undid step {start} ({last_demo})"));
    assert!(!app.show_help, "the screen stays as it was");
    let file = Recording::load(&path).unwrap();
    assert_eq!(file.steps.len(), start + 1);
    let tail = &file.steps[start - 1..];
    assert!(
        tail.iter().all(is_ui),
        "the help's opening and closing stay"
    );
    // The file's screen is the screen: help closed.
    let help = minikafka::cli::state_of_recording(&path, None, None).unwrap();
    assert_eq!(help.step, start + 1);
    // A selection is a screen change too: `u` after `J` undoes a cluster
    // step, and the selection stays.
    press(&mut app, "r");
    press(&mut app, "J");
    let selected = app.selected.clone();
    assert!(selected.is_some());
    press(&mut app, "u");
    assert_eq!(
        status(&app),
        format!("undid step {} (replicate)", start + 2)
    );
    assert_eq!(app.selected, selected);
    let file = Recording::load(&path).unwrap();
    assert!(
        file.steps[start - 1..].iter().all(is_ui),
        "{:?}",
        file.steps
    );
}

/// The trial: `?` took the demo's caption (the one that says `? shows
/// every key`) off the screen, and `step 36: ui: ok` … filled Events.
#[test]
fn a_screen_change_keeps_the_caption_and_writes_no_event() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s2.jsonl");
    let mut app = live_recording(&path);
    let caption = app.view().caption.clone();
    assert!(caption.is_some(), "the demo's caption");
    press(&mut app, "r");
    let events = app.view().events.len();
    assert!(events > 0, "r says what it did");
    press(&mut app, "?");
    key(&mut app, KeyCode::Esc);
    press(&mut app, "iJ");
    key(&mut app, KeyCode::Tab);
    let view = app.view();
    assert_eq!(view.events.len(), events, "{:?}", view.events);
    assert!(!view.events.iter().any(|e| e.text.contains("ui")));
    // The caption of `r`'s step (none) stays, and before `r`, the demo's.
    assert_eq!(view.caption, None);
    let file = Recording::load(&path).unwrap();
    assert_eq!(file.steps.len(), demo::recording().steps.len() + 6);
    let replay = |step| {
        let mut app = App::replay(
            file.clone(),
            layout::builtin_default(),
            Lang::En,
            Theme::colored(),
        )
        .unwrap();
        app.goto_step(step).unwrap();
        app.view().caption.clone()
    };
    let demo_end = demo::recording().steps.len();
    assert_eq!(replay(demo_end), caption, "the demo's last step");
    assert_eq!(replay(demo_end + 6), None, "`r`'s, kept over five ui steps");
    // Live: `?` right after the demo keeps its caption; the replay too.
    let path = dir.path().join("s3.jsonl");
    let mut app = live_recording(&path);
    press(&mut app, "?");
    assert_eq!(app.view().caption, caption);
    let file = Recording::load(&path).unwrap();
    let mut replay = App::replay(
        file.clone(),
        layout::builtin_default(),
        Lang::En,
        Theme::colored(),
    )
    .unwrap();
    replay.goto_step(file.steps.len()).unwrap();
    assert_eq!(replay.view().caption, caption);
}

/// A recording ending on a lone `{"ui":{"toggle":"help"}}` (what undo
/// left before): the trial's `End` showed the help, and `g 50 Enter` went
/// into it, so the replay stayed at the last step.
#[test]
fn a_recorded_help_is_drawn_at_its_steps_and_never_swallows_the_replay_keys() {
    let mut rec = demo::recording();
    rec.steps.push(Step {
        present: None,
        at_ms: rec.steps.last().unwrap().at_ms + 1000,
        action: Action::from_json(&serde_json::json!({"ui": {"toggle": "help"}})).unwrap(),
        caption: None,
    });
    let last = rec.steps.len();
    let help_title = "Help (as recorded";
    let drawn = |app: &App| buffer_text(&frame_buffer(app, 160, 48)).contains(help_title);
    let mut app = App::replay(
        rec.clone(),
        layout::builtin_default(),
        Lang::En,
        Theme::colored(),
    )
    .unwrap();
    key(&mut app, KeyCode::End);
    assert_eq!(app.driver().unwrap().step(), last);
    assert!(drawn(&app), "the recording shows the help at its last step");
    // `g 5 Enter` is the replayer's: it goes to step 5.
    press(&mut app, "g");
    assert!(app.prompt.is_some(), "g opens its prompt under the help");
    press(&mut app, "5");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.driver().unwrap().step(), 5);
    assert!(!drawn(&app));
    // However the step is reached, the same screen: a jump, → and ←.
    app.goto_step(last).unwrap();
    assert!(drawn(&app));
    key(&mut app, KeyCode::Left);
    assert!(!drawn(&app));
    key(&mut app, KeyCode::Right);
    assert!(drawn(&app));
    // `render --step N` draws what the replay shows.
    let frames = headless::render(
        rec,
        &[last - 1, last],
        160,
        48,
        Format::Text,
        layout::builtin_default(),
        Lang::En,
    )
    .unwrap();
    assert!(!frames[0].contains(help_title) && frames[1].contains(help_title));
    // Esc hides it, for the viewer, until the next move.
    key(&mut app, KeyCode::Esc);
    assert!(!drawn(&app));
    key(&mut app, KeyCode::Home);
    key(&mut app, KeyCode::End);
    assert!(drawn(&app));
    // The viewer's own `?` is still the modal help, titled as ever.
    key(&mut app, KeyCode::Home);
    press(&mut app, "?");
    let frame = buffer_text(&frame_buffer(&app, 160, 48));
    assert!(frame.contains("Help (?/Esc close"), "{frame}");
    key(&mut app, KeyCode::End);
    assert_eq!(
        app.driver().unwrap().step(),
        0,
        "modal: End is not let through"
    );
}
