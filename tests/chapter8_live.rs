//! Chapter 8 live, as written (issue 13, item 9): on the demo cluster, a
//! student runs the chapter's experiment with keys on topic `out` (one
//! partition, no transaction of the demo's on it) and sees the chapter's
//! measured lines: a transactional write is read by read_uncommitted at
//! once, by read_committed only after its COMMIT marker, and an aborted
//! write stays in the log but is filtered out. `docs/lectures.md` walks
//! through the same keys.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use minikafka::demo;
use minikafka::session::Driver;
use minikafka::session::Snapshot;
use minikafka::session::snapshot::source::apply_all;
use minikafka::ui::app::App;
use minikafka::ui::i18n::Lang;
use minikafka::ui::layout;
use minikafka::ui::theme::Theme;

fn send(app: &mut App, key: KeyEvent) {
    if let Some(msg) = minikafka::ui::run::message(app, &Event::Key(key)) {
        app.update(msg).unwrap();
    }
}

/// Presses `keys`; `\n` is Enter and `^` is Ctrl-U (clear the prompt).
fn press(app: &mut App, keys: &str) {
    for c in keys.chars() {
        let k = match c {
            '\n' => KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
            '^' => KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
            c => KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
        };
        send(app, k);
    }
}

/// The dashboard live on the demo cluster, in `lang`, as `mk-tui` starts.
fn live_demo(lang: Lang) -> App {
    let d = demo::recording();
    let mut driver = Driver::new(&d.header, None).unwrap();
    let before = apply_all(&mut driver, d.steps.iter().map(|s| &s.action));
    App::live(
        driver,
        d.header.clone(),
        None,
        layout::builtin_default(),
        lang,
        Theme::colored(),
    )
    .with_before(before)
    .with_history(d.steps.clone())
}

/// What a fresh consumer of `out-0` reads at each isolation level, as the
/// chapter prints it.
fn reads(app: &App) -> (Vec<String>, Vec<String>) {
    let s = Snapshot::of(app.driver().unwrap());
    let values = |m: &std::collections::BTreeMap<String, Vec<Option<String>>>| {
        m["out-0"]
            .iter()
            .map(|v| v.clone().unwrap_or_default())
            .collect()
    };
    (
        values(&s.consumers.read_uncommitted),
        values(&s.consumers.read_committed),
    )
}

#[test]
fn the_chapters_experiment_runs_with_keys_on_the_demo() {
    let mut app = live_demo(Lang::En);
    // The demo leaves `out` empty, with no open transaction on it.
    assert_eq!(reads(&app), (vec![], vec![]));
    // b Enter: begin tx-1 (the default id). s: send to `out` (the default
    // topic); the value typed over the default. r: a follower fetches.
    press(&mut app, "b\n");
    press(&mut app, "s^tx-1 out pending\n");
    press(&mut app, "r");
    let (ru, rc) = reads(&app);
    assert_eq!(ru, ["pending"], "before marker, read_uncommitted");
    assert!(rc.is_empty(), "before marker, read_committed: {rc:?}");
    // c Enter: commit tx-1; r: the COMMIT marker reaches the ISR.
    press(&mut app, "c\n");
    press(&mut app, "r");
    assert_eq!(reads(&app).1, ["pending"], "after commit marker");
    // A second transaction, aborted: its data stays in the log, filtered.
    press(&mut app, "b\n");
    press(&mut app, "s^tx-2 out discard-me\n");
    press(&mut app, "r");
    press(&mut app, "a^tx-2\n");
    press(&mut app, "r");
    let (ru, rc) = reads(&app);
    assert_eq!(rc, ["pending"], "after abort marker");
    assert_eq!(
        ru,
        ["pending", "discard-me"],
        "the aborted write stays in the log"
    );
    let s = Snapshot::of(app.driver().unwrap());
    let out = s.partition("out-0").unwrap();
    let markers: Vec<&str> = out
        .batches
        .iter()
        .filter_map(|b| b.control.map(|c| c.name()))
        .collect();
    assert_eq!(markers, ["commit", "abort"]);
    assert!(
        s.errors
            .iter()
            .all(|e| e.step <= demo::recording().steps.len()),
        "{:?}",
        s.errors
    );
}

/// A new user's trial on the demo: `b Enter`, `s Enter` (waits for broker
/// 2), `X Enter` (`prepare`). The commit waits behind the send with a
/// crash armed at its cut point; the Pending pane's row and the status
/// say so, in English and Chinese, until `r` lets it run and crash.
#[test]
fn an_armed_crash_shows_while_its_commit_waits() {
    use minikafka::ui::headless::{buffer_text, frame_buffer};
    for (lang, row, status) in [
        (
            Lang::En,
            "✝ crash at prepare",
            "commit: pending; crash armed at cut point prepare",
        ),
        (
            Lang::Zh,
            "✝ 崩溃于切点 prepare",
            "提交：等待中；已设定在切点 prepare 崩溃",
        ),
    ] {
        let mut app = live_demo(lang);
        press(&mut app, "b\ns\nX\n");
        let s = Snapshot::of(app.driver().unwrap());
        let commit = s.pending.iter().find(|p| p.kind == "commit").unwrap();
        assert_eq!(commit.crash_after.as_deref(), Some("prepare"));
        assert!(commit.queued_behind.is_some(), "{commit:?}");
        let text = buffer_text(&frame_buffer(&app, 160, 48));
        // Under its operation's row (its own line in a narrow pane).
        let lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains(row))
            .unwrap_or_else(|| panic!("{row:?} not on the frame:\n{text}"));
        assert!(
            lines[at - 1..=at]
                .iter()
                .any(|l| l.contains(" tx-1 out-0@0")),
            "{text}"
        );
        assert!(text.contains(status), "status:\n{text}");
        // r: the send completes, the commit runs and crashes there.
        press(&mut app, "r");
        let s = Snapshot::of(app.driver().unwrap());
        assert!(s.pending.iter().all(|p| p.crash_after.is_none()));
    }
}
