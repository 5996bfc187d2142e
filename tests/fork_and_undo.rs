//! Time you can scrub and fork (issue 13, item 7): from any replay step,
//! `b` branches into a live session in that exact state, whose recording
//! starts with the replay's steps up to there; `u` undoes a live step; `]`
//! and `[` jump between captioned steps.

use std::path::{Path, PathBuf};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use minikafka::demo;
use minikafka::session::snapshot::source::apply_all;
use minikafka::session::{Action, Driver, Recording, RecordingWriter, Snapshot};
use minikafka::ui::app::{App, Msg, StatusKind};
use minikafka::ui::headless::frame_buffer;
use minikafka::ui::i18n::Lang;
use minikafka::ui::layout;
use minikafka::ui::theme::Theme;

fn recording(name: &str) -> (PathBuf, Recording) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("recordings")
        .join(name);
    let r = Recording::load(&path).unwrap();
    (path, r)
}

fn press(app: &mut App, c: char) {
    let key = Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    if let Some(msg) = minikafka::ui::run::message(app, &key) {
        app.update(msg).unwrap();
    }
}

/// A state without the fields that name where it came from (a recording's
/// title, length and caption) or what its last step changed.
fn engine_state(mut s: Snapshot) -> String {
    s.title.clear();
    (s.total_steps, s.caption) = (None, None);
    s.changes = Default::default();
    s.captioned_steps.clear();
    s.to_json()
}

fn theme() -> Theme {
    Theme::colored()
}

#[test]
fn branching_takes_over_live_from_the_exact_replay_step_and_records_from_there() {
    let (path, rec) = recording("ch08-visibility.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("branch.jsonl");
    let out2 = out.clone();
    let mut app = App::replay(rec.clone(), layout::builtin_default(), Lang::En, theme())
        .unwrap()
        .with_branch_recorder(Box::new(move |header, steps| {
            let mut w = RecordingWriter::create(&out2, header)
                .map_err(|e| minikafka::session::SessionError::io(&out2, e))?;
            for s in steps {
                w.append(s)
                    .map_err(|e| minikafka::session::SessionError::io(&out2, e))?;
            }
            Ok(w)
        }));
    app.update(Msg::Goto(2)).unwrap();
    let at_two = engine_state(Snapshot::of(app.driver().unwrap()));
    press(&mut app, 'b');
    assert!(!app.is_replay(), "live now");
    assert_eq!(app.status.as_ref().unwrap().kind, StatusKind::Ok);
    assert!(app.title.contains("branched at step 2"), "{}", app.title);
    let live = app.driver().unwrap();
    assert_eq!(live.step(), 2);
    assert_eq!(engine_state(Snapshot::of(live)), at_two, "the same state");
    // The recording holds the replay's steps up to the branch.
    let recorded = Recording::load(&out).unwrap();
    assert_eq!(recorded.steps, rec.steps[..2]);
    // "What if we crash here instead?" A key now drives the engine.
    press(&mut app, 'x');
    assert_eq!(app.driver().unwrap().step(), 3);
    assert_eq!(app.status.as_ref().unwrap().kind, StatusKind::Recovered);
    // Live too, a crash first shows its moment of death; space, the recovery.
    assert!(app.live_at_moment());
    let title = minikafka::ui::headless::buffer_text(&frame_buffer(&app, 120, 36));
    assert!(
        title.lines().next().unwrap().contains("moment of death") && title.contains("step 3✝"),
        "{title}"
    );
    press(&mut app, ' ');
    assert!(!app.live_at_moment());
    let recorded = Recording::load(&out).unwrap();
    assert_eq!(recorded.steps.len(), 3);
    assert_eq!(recorded.steps[2].action, Action::Crash {});
    // Replaying the branch's recording reaches the same state and frame.
    let live_state = engine_state(Snapshot::of(app.driver().unwrap()));
    let replayed = minikafka::cli::state_of_recording(&out, None, None).unwrap();
    assert_eq!(engine_state(replayed), live_state);
    let mut replay = App::replay(recorded, layout::builtin_default(), Lang::En, theme()).unwrap();
    replay.update(Msg::Goto(3)).unwrap();
    let (a, b) = (frame_buffer(&app, 120, 36), frame_buffer(&replay, 120, 36));
    // Every pane but the caption, which names the recording and its length.
    let body = |buf: &ratatui::buffer::Buffer| -> Vec<String> {
        let text = minikafka::ui::headless::buffer_text(buf);
        text.lines()
            .skip(1)
            .take_while(|l| !l.starts_with("┌Caption"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        body(&a),
        body(&b),
        "the branch replays to the frame it showed"
    );
    // The source recording is untouched.
    assert_eq!(Recording::load(&path).unwrap().steps, rec.steps);
}

#[test]
fn undo_goes_back_one_step_in_state_and_in_the_recording() {
    let demo = demo::recording();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.jsonl");
    let mut writer = RecordingWriter::create(&path, &demo.header).unwrap();
    for s in &demo.steps {
        writer.append(s).unwrap();
    }
    let mut driver = Driver::new(&demo.header, None).unwrap();
    let before = apply_all(&mut driver, demo.steps.iter().map(|s| &s.action));
    let mut app = App::live(
        driver,
        demo.header.clone(),
        Some(writer),
        layout::builtin_default(),
        Lang::En,
        theme(),
    )
    .with_before(before)
    .with_history(demo.steps.clone());
    let start = app.driver().unwrap().step();
    let state0 = engine_state(Snapshot::of(app.driver().unwrap()));
    let file0 = std::fs::read(&path).unwrap();
    app.update(Msg::Apply(Action::Produce {
        topic: "orders".into(),
        partition: Some(0),
        key: None,
        value: Some("oops".into()),
        records: vec![],
        acks: None,
        producer: None,
        wire: None,
    }))
    .unwrap();
    press(&mut app, 'x');
    assert_eq!(app.driver().unwrap().step(), start + 2);
    press(&mut app, 'u');
    assert_eq!(app.driver().unwrap().step(), start + 1);
    assert!(
        app.status.as_ref().unwrap().text.contains("undid step"),
        "{:?}",
        app.status
    );
    press(&mut app, 'u');
    assert_eq!(app.driver().unwrap().step(), start);
    assert_eq!(
        engine_state(Snapshot::of(app.driver().unwrap())),
        state0,
        "the state before the two steps"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        file0,
        "and the recording too"
    );
    // Undo goes on into the demo's own steps, and the session goes on.
    press(&mut app, 'u');
    assert_eq!(app.driver().unwrap().step(), start - 1);
    press(&mut app, 'r');
    assert_eq!(app.driver().unwrap().step(), start);
    let recorded = Recording::load(&path).unwrap();
    assert_eq!(recorded.steps.len(), start);
    assert_eq!(recorded.steps[..start - 1], demo.steps[..start - 1]);
    let replayed = minikafka::cli::state_of_recording(&path, None, None).unwrap();
    assert_eq!(
        engine_state(replayed),
        engine_state(Snapshot::of(app.driver().unwrap()))
    );
}

#[test]
fn undo_refuses_a_session_whose_data_the_user_keeps() {
    let demo = demo::recording();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut driver = Driver::new(&demo.header, Some(&data)).unwrap();
    apply_all(&mut driver, demo.steps.iter().map(|s| &s.action));
    let mut app = App::live(
        driver,
        demo.header.clone(),
        None,
        layout::builtin_default(),
        Lang::En,
        theme(),
    )
    .with_history(demo.steps.clone());
    let step = app.driver().unwrap().step();
    press(&mut app, 'u');
    assert_eq!(app.driver().unwrap().step(), step, "nothing undone");
    let status = app.status.as_ref().unwrap();
    assert_eq!(status.kind, StatusKind::Error);
    assert!(
        status.text.contains("temporary directory"),
        "{}",
        status.text
    );
    // A session without history has nothing to undo.
    let demo_driver = demo::driver(None).unwrap();
    let mut bare = App::live(
        demo_driver,
        demo.header.clone(),
        None,
        layout::builtin_default(),
        Lang::En,
        theme(),
    );
    press(&mut bare, 'u');
    assert!(
        bare.status
            .as_ref()
            .unwrap()
            .text
            .contains("nothing to undo")
    );
}

#[test]
fn brackets_jump_between_captioned_steps() {
    let (_, rec) = recording("ch08-visibility.jsonl");
    let captioned: Vec<usize> = rec
        .steps
        .iter()
        .enumerate()
        .filter(|(_, s)| s.caption.is_some())
        .map(|(i, _)| i + 1)
        .collect();
    assert!(captioned.len() >= 3, "{captioned:?}");
    let mut app = App::replay(rec.clone(), layout::builtin_default(), Lang::En, theme()).unwrap();
    let mut seen = Vec::new();
    for _ in 0..captioned.len() {
        press(&mut app, ']');
        seen.push(app.driver().unwrap().step());
    }
    assert_eq!(seen, captioned, "forward through every caption");
    press(&mut app, ']');
    assert_eq!(
        app.driver().unwrap().step(),
        rec.steps.len(),
        "then the end"
    );
    let mut back = Vec::new();
    for _ in 0..captioned.len() {
        press(&mut app, '[');
        back.push(app.driver().unwrap().step());
    }
    let mut want: Vec<usize> = captioned
        .iter()
        .copied()
        .filter(|&s| s < rec.steps.len())
        .rev()
        .collect();
    want.push(0);
    want.truncate(captioned.len());
    assert_eq!(back, want, "and back");
}

/// The mouse (issue 13, item 8): a click focuses the pane under it, the
/// wheel scrolls the pane under it, and both wait while the help is open.
#[test]
fn a_click_focuses_the_pane_under_it_and_the_wheel_scrolls_it() {
    let (_, rec) = recording("ch08-offsets.jsonl");
    let mut app = App::replay(rec, layout::builtin_default(), Lang::En, theme()).unwrap();
    app.update(Msg::Resize(120, 36)).unwrap();
    app.update(Msg::Goto(18)).unwrap();
    let view = app.snapshot();
    let area = ratatui::layout::Rect::new(0, 0, 120, 36);
    // One cell inside each pane of the layout.
    let mut found = Vec::new();
    for pane in app.layout.panes() {
        let cell = (0..36u16)
            .flat_map(|y| (0..120u16).map(move |x| (x, y)))
            .find(|&(x, y)| minikafka::ui::frame::pane_at(&app, &view, area, x, y) == Some(pane));
        found.push((pane, cell.expect("every pane is somewhere on screen")));
    }
    for (pane, (x, y)) in &found {
        app.update(Msg::Click(*x, *y)).unwrap();
        assert_eq!(app.focused(), Some(*pane), "click at {x},{y}");
    }
    // The title bar and the key bar are no pane: a click there changes nothing.
    let focus = app.focus;
    app.update(Msg::Click(5, 0)).unwrap();
    app.update(Msg::Click(5, 35)).unwrap();
    assert_eq!(app.focus, focus);
    // The wheel focuses and scrolls the pane under it.
    let (pane, (x, y)) = found
        .iter()
        .find(|(p, _)| *p == minikafka::ui::panes::PaneId::Events)
        .copied()
        .unwrap();
    app.update(Msg::Click(found[0].1.0, found[0].1.1)).unwrap();
    let scroll = |app: &App| app.scroll.get(&pane).copied().unwrap_or(0);
    let before = scroll(&app);
    app.update(Msg::Wheel(x, y, true)).unwrap();
    assert_eq!(app.focused(), Some(pane));
    assert_ne!(scroll(&app), before, "the wheel scrolled the events back");
    // With the help open the mouse waits, as the keys do.
    press(&mut app, '?');
    let (other, (ox, oy)) = found.iter().find(|(p, _)| *p != pane).copied().unwrap();
    app.update(Msg::Click(ox, oy)).unwrap();
    assert_ne!(app.focused(), Some(other));
}

/// `g` opens a prompt that goes to step N (and refuses a step past the
/// end, with the reason); `+` and `-` change the play speed, which paces
/// the next step and shows in the title bar.
#[test]
fn go_to_a_step_and_play_faster_or_slower() {
    let (_, rec) = recording("ch08-visibility.jsonl");
    let mut app = App::replay(rec.clone(), layout::builtin_default(), Lang::En, theme()).unwrap();
    let enter = Event::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let ctrl_u = Event::Key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    let submit = |app: &mut App, text: &str| {
        press(app, 'g');
        let msg = minikafka::ui::run::message(app, &ctrl_u).unwrap();
        app.update(msg).unwrap();
        for c in text.chars() {
            press(app, c);
        }
        let msg = minikafka::ui::run::message(app, &enter).unwrap();
        app.update(msg).unwrap();
    };
    submit(&mut app, "4");
    assert_eq!(app.driver().unwrap().step(), 4);
    assert!(app.prompt.is_none());
    submit(&mut app, "99");
    assert_eq!(app.driver().unwrap().step(), 4, "refused");
    let refusal = app.prompt.as_ref().and_then(|p| p.refusal.clone()).unwrap();
    assert_eq!(
        refusal,
        format!("no step 99: a step from 0 to {}", rec.steps.len())
    );
    let esc = Event::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    let msg = minikafka::ui::run::message(&app, &esc).unwrap();
    app.update(msg).unwrap();
    assert!(app.prompt.is_none());
    // Speed: the gap to the next step, at the recorded pace, x2 and x0.5.
    app.update(Msg::Goto(1)).unwrap();
    press(&mut app, 'p');
    let gap = rec.steps[1].at_ms - rec.steps[0].at_ms;
    assert_eq!(app.next_step_delay_ms(), Some(gap));
    press(&mut app, '+');
    assert_eq!(app.next_step_delay_ms(), Some(gap / 2));
    let title = minikafka::ui::headless::buffer_text(&frame_buffer(&app, 120, 36));
    assert!(
        title.lines().next().unwrap().contains("▶ replay ×2"),
        "{title}"
    );
    press(&mut app, '-');
    press(&mut app, '-');
    assert_eq!(app.next_step_delay_ms(), Some(gap * 2));
    for _ in 0..10 {
        press(&mut app, '+');
    }
    assert_eq!(
        app.next_step_delay_ms(),
        Some((gap as f64 / 8.0).round() as u64),
        "x8 at most"
    );
}
