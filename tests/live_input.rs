//! Live input (issue 12, "Live input"): prompts refuse bad values in the
//! prompt and record nothing; screen changes are `ui` steps of a `--record`
//! file that replay to the same frames; the status line's colour comes from
//! the outcome's kind; `--record` refuses an existing file unless `--force`.

use std::path::Path;
use std::process::Command;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use minikafka::demo;
use minikafka::session::snapshot::source::apply_all;
use minikafka::session::ui_step::{PaneName, Selection, Toggle, UiStep};
use minikafka::session::{Action, Driver, Recording, RecordingWriter};
use minikafka::ui::app::{App, Msg, Status, StatusKind};
use minikafka::ui::headless::{buffer_text, frame_buffer};
use minikafka::ui::i18n::Lang;
use minikafka::ui::keys::{KeyCommand, PromptEdit};
use minikafka::ui::layout::{self, Layout};
use minikafka::ui::theme::Theme;
use ratatui::buffer::Buffer;

/// A layout without the caption pane (its "step N/T" differs between a live
/// session and its replay), so whole bodies of frames can be compared.
fn layout_without_caption() -> Layout {
    layout::parse(
        "test-layout.json",
        r#"{"layout":1,"name":"live-test","min_size":{"cols":80,"rows":24},
            "root":{"split":"horizontal","children":[
              {"pane":"partitions","size":{"percent":50}},
              {"split":"vertical","size":{"fill":1},"children":[
                {"pane":"journal","size":{"fill":1}},
                {"pane":"events","size":{"fill":1}}]}]}}"#,
    )
    .unwrap()
}

/// The demo session, live, recording into `path` (demo steps first, as
/// `mk-tui --record` writes them).
fn live_recording(path: &Path, layout: Layout) -> App {
    let demo = demo::recording();
    let mut driver = Driver::new(&demo.header, None).unwrap();
    let mut writer = RecordingWriter::create(path, &demo.header).unwrap();
    for s in &demo.steps {
        writer.append(s).unwrap();
    }
    let before = apply_all(&mut driver, demo.steps.iter().map(|s| &s.action));
    App::live(
        driver,
        demo.header.clone(),
        Some(writer),
        layout,
        Lang::En,
        Theme::colored(),
    )
    .with_before(before)
}

fn send_key(app: &mut App, k: KeyEvent) {
    if let Some(msg) = minikafka::ui::run::message(app, &Event::Key(k)) {
        app.update(msg).unwrap();
    }
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// Types `text` as key presses.
fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        send_key(app, key(KeyCode::Char(c)));
    }
}

/// Opens the prompt of `key_char`, replaces its default by `text`, presses
/// Enter.
fn prompt(app: &mut App, key_char: char, text: &str) {
    send_key(app, key(KeyCode::Char(key_char)));
    let default_len = app
        .prompt
        .as_ref()
        .expect("the key opens a prompt")
        .text
        .len();
    for _ in 0..default_len {
        send_key(app, key(KeyCode::Backspace));
    }
    type_text(app, text);
    send_key(app, key(KeyCode::Enter));
}

fn bottom_row(buf: &Buffer) -> (String, Vec<ratatui::style::Style>) {
    let y = buf.area.bottom() - 1;
    let mut text = String::new();
    let mut styles = Vec::new();
    for x in buf.area.left()..buf.area.right() {
        text.push_str(buf[(x, y)].symbol());
        styles.push(buf[(x, y)].style());
    }
    (text, styles)
}

/// The styles of the cells on the bottom row where `needle` is drawn.
fn styles_of(buf: &Buffer, needle: &str) -> Vec<ratatui::style::Style> {
    let (text, styles) = bottom_row(buf);
    // Cells are one column each here (ASCII needle); find the column.
    let chars: Vec<char> = text.chars().collect();
    let n: Vec<char> = needle.chars().collect();
    let at = chars
        .windows(n.len())
        .position(|w| w == n.as_slice())
        .unwrap_or_else(|| panic!("{needle:?} is not on the bottom row: {text:?}"));
    styles[at..at + n.len()].to_vec()
}

#[test]
fn invalid_prompt_input_records_nothing_and_keeps_the_prompt_open_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.jsonl");
    let mut app = live_recording(&path, layout::builtin_default());
    let before = std::fs::read(&path).unwrap();
    let step = app.driver().unwrap().step();
    // broker 3 is stopped in the demo; orders has partitions 0-2
    for (key_char, text, reason) in [
        (
            'p',
            "orders v acks=2",
            r#"unknown acks "2": expected "0", "1" or "all""#,
        ),
        ('X', "tx-open whenever", r#"unknown cut point "whenever""#),
        ('e', "orders-0 3", "broker 3 is stopped"),
        (
            'e',
            "orders-0 7",
            "unknown broker 7: the brokers are 1, 2, 3",
        ),
        ('z', "7", "unknown broker 7"),
        ('Z', "x", r#"broker must be a whole number, got "x""#),
        ('p', "nope v", r#"unknown topic "nope""#),
        ('p', "orders v partition=9", "unknown partition orders-9"),
        ('t', "soon", "milliseconds must be a whole number"),
        ('p', r#"orders "hello"#, "unterminated quote"),
        ('p', "orders hello world", r#"one word too many: "world""#),
    ] {
        prompt(&mut app, key_char, text);
        let open = app.prompt.as_ref().expect("a refused prompt stays open");
        assert_eq!(open.text, text, "the text stays for editing");
        let refusal = open.refusal.as_deref().unwrap_or_default();
        assert!(refusal.starts_with(reason), "{text:?}: {refusal}");
        // the reason is on screen, styled as an error
        let frame = frame_buffer(&app, 200, 40);
        let bad = Theme::colored().bad();
        assert!(
            styles_of(&frame, reason.split(':').next().unwrap())
                .iter()
                .all(|s| s.fg == bad.fg),
            "{text:?}: the reason is drawn as an error"
        );
        // Enter again does not apply it either
        send_key(&mut app, key(KeyCode::Enter));
        assert!(app.prompt.is_some());
        assert_eq!(
            app.driver().unwrap().step(),
            step,
            "{text:?} applied nothing"
        );
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "{text:?} recorded nothing"
        );
        send_key(&mut app, key(KeyCode::Esc));
        assert!(app.prompt.is_none(), "Esc cancels");
    }
    // an edit clears the reason
    prompt(&mut app, 't', "soon");
    send_key(&mut app, key(KeyCode::Backspace));
    assert_eq!(app.prompt.as_ref().unwrap().refusal, None);
    send_key(&mut app, key(KeyCode::Esc));
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // a valid quoted value with spaces is applied and recorded whole
    prompt(
        &mut app,
        'p',
        r#"orders "hello world" acks=1 key="k \"1\"""#,
    );
    assert!(app.prompt.is_none());
    let recorded = Recording::load(&path).unwrap();
    assert_eq!(recorded.steps.len(), step + 1);
    assert_eq!(
        recorded.steps[step].action,
        Action::Produce {
            topic: "orders".into(),
            partition: None,
            key: Some(r#"k "1""#.into()),
            value: Some("hello world".into()),
            records: vec![],
            acks: Some("1".parse().unwrap()),
            producer: None,
            wire: None,
        }
    );
    // what the engine refuses by its rules is still a (failed) step
    prompt(&mut app, 'c', "no-such-txn");
    let status = app.status.clone().unwrap();
    assert_eq!(status.kind, StatusKind::Error, "{status:?}");
    assert_eq!(Recording::load(&path).unwrap().steps.len(), step + 2);
}

/// Keys that change the screen, interleaved with engine actions: one group
/// of messages per key (a prompt is a group of edits).
fn screen_session() -> Vec<Vec<Msg>> {
    let cmd = |c| vec![Msg::Command(c)];
    let produce = |text: &str| {
        let mut msgs = vec![Msg::Command(KeyCommand::Prompt(
            minikafka::ui::keys::PromptKind::Produce,
        ))];
        msgs.extend((0..80).map(|_| Msg::Edit(PromptEdit::Backspace)));
        msgs.extend(text.chars().map(|c| Msg::Edit(PromptEdit::Char(c))));
        msgs.push(Msg::Edit(PromptEdit::Submit));
        msgs
    };
    vec![
        cmd(KeyCommand::FocusNext),       // journal
        cmd(KeyCommand::SelectNext),      // row 0
        cmd(KeyCommand::SelectNext),      // row 1
        cmd(KeyCommand::ToggleIsolation), // read_uncommitted
        produce(r#"orders "after the toggle""#),
        cmd(KeyCommand::FocusNext), // events
        cmd(KeyCommand::ToggleHelp),
        cmd(KeyCommand::ToggleHelp),
        cmd(KeyCommand::SelectPrev),      // row 0
        cmd(KeyCommand::SelectPrev),      // none
        cmd(KeyCommand::ToggleIsolation), // read_committed
        cmd(KeyCommand::FocusPrev),       // journal
        vec![Msg::Apply(Action::Replicate {
            broker: None,
            topic: None,
            partition: None,
        })],
        cmd(KeyCommand::SelectNext), // row 0 again
        cmd(KeyCommand::ScrollUp),   // not a ui step
    ]
}

/// What a frame shows of the session, apart from the title bar and the
/// bottom line (live and replay say "live"/"replay", "step N"/"step N/T",
/// and have different key bars).
fn body(buf: &Buffer) -> Buffer {
    let mut body = buf.clone();
    let area = body.area;
    for x in area.left()..area.right() {
        body[(x, area.top())].reset();
        body[(x, area.bottom() - 1)].reset();
    }
    body
}

#[derive(Debug, PartialEq, Eq)]
struct Screen {
    focus: usize,
    selected: Option<usize>,
    isolation: String,
    help: bool,
}

fn screen(app: &App) -> Screen {
    Screen {
        focus: app.focus,
        selected: app.selected_row(),
        isolation: format!("{:?}", app.isolation),
        // Live the viewer's help; in a replay the recording's.
        help: app.help_drawn(),
    }
}

#[test]
fn screen_changes_are_ui_steps_that_replay_to_the_same_frames() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.jsonl");
    let mut app = live_recording(&path, layout_without_caption());
    let start = app.driver().unwrap().step();
    // A selection is written as the batch (partition, base offset) at the
    // row `J`/`K` moved to: the demo's oldest batches, which appends to the
    // log's end do not move.
    let first_view = app.snapshot();
    let at = |r| minikafka::ui::panes::partitions::selection_at(&first_view, Some(r));
    assert!(matches!(at(1), Selection::Batch(_)), "{:?}", at(1));
    // The screen after each step of the session, as it was on screen.
    let mut seen = vec![(start, screen(&app), frame_buffer(&app, 120, 36))];
    for group in screen_session() {
        for msg in group {
            app.update(msg).unwrap();
        }
        if app.driver().unwrap().step() != seen.last().unwrap().0 {
            seen.push((
                app.driver().unwrap().step(),
                screen(&app),
                frame_buffer(&app, 120, 36),
            ));
        }
    }
    assert_eq!(
        app.driver().unwrap().step(),
        start + 14,
        "12 ui steps, a produce and a replicate; scrolling is not a step"
    );
    drop(app);
    let recorded = Recording::load(&path).unwrap();
    // The ui steps of SPEC §4, one per screen change; scrolling is not one.
    let ui: Vec<UiStep> = recorded.steps[start..]
        .iter()
        .filter_map(|s| match &s.action {
            Action::Ui(ui) => Some(ui.clone()),
            _ => None,
        })
        .collect();
    let focus = |p| UiStep {
        focus: Some(p),
        ..UiStep::default()
    };
    let select = |s| UiStep {
        select: Some(s),
        ..UiStep::default()
    };
    let toggle = |t| UiStep {
        toggle: Some(t),
        ..UiStep::default()
    };
    assert_eq!(
        ui,
        [
            focus(PaneName::Journal),
            select(at(0)),
            select(at(1)),
            toggle(Toggle::Isolation),
            focus(PaneName::Events),
            toggle(Toggle::Help),
            toggle(Toggle::Help),
            select(at(0)),
            select(Selection::Clear),
            toggle(Toggle::Isolation),
            focus(PaneName::Journal),
            select(at(0)),
        ]
    );
    let text = std::fs::read_to_string(&path).unwrap();
    for line in [
        r#"{"ui":{"focus":"journal"}}"#,
        &format!(
            r#"{{"ui":{{"select":{}}}}}"#,
            serde_json::to_string(&at(1)).unwrap()
        ),
        r#"{"ui":{"select":null}}"#,
        r#"{"ui":{"toggle":"isolation"}}"#,
        r#"{"ui":{"toggle":"help"}}"#,
    ] {
        assert!(text.contains(line), "{line} in {text}");
    }
    // Replaying shows the same screen at every step: forward, backward, and
    // jumping around.
    let mut replay = App::replay(
        recorded,
        layout_without_caption(),
        Lang::En,
        Theme::colored(),
    )
    .unwrap();
    let forward: Vec<usize> = (0..seen.len()).collect();
    let backward: Vec<usize> = (0..seen.len()).rev().collect();
    let jumps = [7, 2, 11, 0, 13, 5, 9, 1];
    for &i in forward.iter().chain(&backward).chain(&jumps) {
        let Some((step, on_screen, frame)) = seen.get(i) else {
            continue;
        };
        replay.update(Msg::Goto(*step)).unwrap();
        assert_eq!(&screen(&replay), on_screen, "step {step}");
        let replayed = frame_buffer(&replay, 120, 36);
        if on_screen.help {
            // The help overlay lists the mode's own keys; the replay's
            // says it is the recording's and not modal.
            assert!(
                buffer_text(&replayed).contains("Help (as recorded"),
                "step {step}"
            );
            assert!(buffer_text(frame).contains("Help (?"), "step {step}");
        } else {
            assert_eq!(
                body(&replayed),
                body(frame),
                "step {step}:\n{}\nvs live:\n{}",
                buffer_text(&replayed),
                buffer_text(frame)
            );
        }
    }
    assert_eq!(
        seen.len(),
        15,
        "step 0 of the session and each of its steps"
    );
}

#[test]
fn the_status_colour_comes_from_the_outcome_kind_not_its_words() {
    let demo = demo::recording();
    let mut driver = Driver::new(&demo.header, None).unwrap();
    for s in &demo.steps {
        driver.apply(&s.action);
    }
    let mut app = App::live(
        driver,
        demo.header.clone(),
        None,
        layout::builtin_default(),
        Lang::En,
        Theme::colored(),
    );
    let theme = Theme::colored();
    let commit = |txn: &str| Action::Commit {
        txn: txn.into(),
        crash_after: None,
    };
    app.update(Msg::Apply(commit("no-such-txn"))).unwrap();
    assert_eq!(app.status.as_ref().unwrap().kind, StatusKind::Error);
    let frame = frame_buffer(&app, 200, 40);
    let styles = styles_of(&frame, "commit: error");
    assert!(styles.iter().all(|s| s.fg == theme.bad().fg), "{styles:?}");
    app.update(Msg::Apply(Action::AdvanceClock { ms: 5 }))
        .unwrap();
    let frame = frame_buffer(&app, 200, 40);
    let styles = styles_of(&frame, "advance_clock: ok");
    assert!(
        styles
            .iter()
            .all(|s| s.fg != theme.bad().fg && s.fg == theme.dim().fg),
        "{styles:?}"
    );
    // Words do not decide: an ok status that says "error" is not red, an
    // error that says none of the old trigger words is.
    app.status = Some(Status {
        kind: StatusKind::Ok,
        text: "no error: cannot fail, must pass, missing nothing".into(),
    });
    let frame = frame_buffer(&app, 200, 40);
    assert!(
        styles_of(&frame, "no error")
            .iter()
            .all(|s| s.fg != theme.bad().fg)
    );
    app.status = Some(Status::error("the broker went away"));
    let frame = frame_buffer(&app, 200, 40);
    assert!(
        styles_of(&frame, "the broker went away")
            .iter()
            .all(|s| s.fg == theme.bad().fg)
    );
    app.status = Some(Status {
        kind: StatusKind::Pending,
        text: "step 9: send: pending".into(),
    });
    let frame = frame_buffer(&app, 200, 40);
    assert!(
        styles_of(&frame, "send: pending")
            .iter()
            .all(|s| s.fg == theme.waiting().fg)
    );
    // A commit crashed at a cut point is news of its own colour: neither
    // the ok grey nor the error red.
    app.update(Msg::Apply(Action::Commit {
        txn: "tx-open".into(),
        crash_after: Some("prepare".parse().unwrap()),
    }))
    .unwrap();
    assert_eq!(app.status.as_ref().unwrap().kind, StatusKind::Recovered);
    let frame = frame_buffer(&app, 200, 40);
    let styles = styles_of(&frame, "crashed after PREPARE_COMMIT");
    assert!(
        !styles.is_empty()
            && styles.iter().all(|s| s.fg == theme.recovered().fg
                && s.fg != theme.bad().fg
                && s.fg != theme.dim().fg),
        "{styles:?}"
    );
    // a prompt left with Esc changes nothing
    app.update(Msg::Command(KeyCommand::Prompt(
        minikafka::ui::keys::PromptKind::Begin,
    )))
    .unwrap();
    app.update(Msg::Edit(PromptEdit::Cancel)).unwrap();
    assert!(app.prompt.is_none());
}

fn mk_tui(args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .args(args)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn record_refuses_an_existing_file_unless_force() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lesson.jsonl");
    std::fs::write(&file, "precious\n").unwrap();
    let record = std::ffi::OsStr::new("--record");
    let (code, err) = mk_tui(&[record, file.as_os_str()]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("mk-tui: {}: already exists", file.display()))
            && err.contains("--force"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious\n");
    // nothing else was written either: a --data-dir stays absent
    let data = dir.path().join("data");
    let (code, _) = mk_tui(&[
        record,
        file.as_os_str(),
        "--data-dir".as_ref(),
        data.as_os_str(),
    ]);
    assert_eq!(code, Some(2));
    assert!(!data.exists());
    // --force replaces it with the session's recording
    let (code, err) = mk_tui(&[record, file.as_os_str(), "--force".as_ref()]);
    assert_eq!(code, Some(0), "{err}");
    let written = Recording::load(&file).unwrap();
    assert_eq!(written.steps, demo::recording().steps);
    // a new file needs no --force
    let fresh = dir.path().join("fresh.jsonl");
    let (code, err) = mk_tui(&[record, fresh.as_os_str()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(Recording::load(&fresh).is_ok());
    // --force alone is a usage error
    let (code, err) = mk_tui(&["--force".as_ref()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--record"), "{err}");
}

#[test]
fn check_refuses_a_bad_ui_field_naming_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let header = r#"{"mk_recording":1,"cluster":{"brokers":[1],"topics":[{"name":"out","partitions":1,"replication_factor":1}]}}"#;
    for (step, field) in [
        (
            r#"{"action":{"ui":{"focus":"jornal"}}}"#,
            "field action.ui.focus: ",
        ),
        (
            r#"{"action":{"ui":{"select":-1}}}"#,
            "field action.ui.select: ",
        ),
        (
            r#"{"action":{"ui":{"select":"2"}}}"#,
            "field action.ui.select: ",
        ),
        (
            r#"{"action":{"ui":{"toggle":"colour"}}}"#,
            "field action.ui.toggle: ",
        ),
    ] {
        let file = dir.path().join("bad.jsonl");
        let text = format!("{header}\n{{\"action\":\"note\"}}\n{step}\n");
        std::fs::write(&file, &text).unwrap();
        let (code, err) = mk_tui(&["check".as_ref(), file.as_os_str()]);
        assert_eq!(code, Some(2), "{step}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("mk-tui: {}:3: ", file.display())) && err.contains(field),
            "{step}: {err}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    }
    let good = dir.path().join("good.jsonl");
    std::fs::write(
        &good,
        format!(
            "{header}\n{}\n{}\n{}\n",
            r#"{"action":{"ui":{"focus":"journal","select":0}}}"#,
            r#"{"action":{"ui":{"select":null}}}"#,
            r#"{"action":{"ui":{"toggle":"help"}}}"#
        ),
    )
    .unwrap();
    let (code, err) = mk_tui(&["check".as_ref(), good.as_os_str()]);
    assert_eq!(code, Some(0), "{err}");
}
