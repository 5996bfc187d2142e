//! The groups pane and the group and cleanup keys (chapter 9, E15; chapter
//! 4, E16): the rebalance lesson's frames in its `groups` layout at 160x48
//! and 80x24 (and in Chinese), what the pane says at the lesson's steps and
//! what its colours mean, and the keys `g` `G` `h` `E` `d` `C` driving a
//! live session end to end (key, prompt, action, engine, state).

use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use minikafka::session::{Driver, Recording, Snapshot};
use minikafka::ui::app::App;
use minikafka::ui::headless::{self, Format, buffer_text, frame_buffer};
use minikafka::ui::i18n::Lang;
use minikafka::ui::layout;
use minikafka::ui::panes::{self, PaneContext, PaneId};
use minikafka::ui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

/// The lesson's steps the frames show: member-1 joins; member-2 joins
/// (orders-1 and orders-3 move); member-2 heartbeats; member-1 expires
/// (generation 3); member-2 leaves.
const STEPS: [usize; 5] = [5, 8, 13, 14, 17];

fn ch09() -> Recording {
    Recording::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings/ch09-rebalance.jsonl"))
        .unwrap()
}

/// The lesson's frames at `steps`, in the layout its header names.
fn frames(steps: &[usize], cols: u16, rows: u16, lang: Lang) -> String {
    let recording = ch09();
    let name = recording.header.layout.clone().expect("a layout");
    let layout = layout::load(&name).unwrap();
    let frames =
        headless::render(recording, steps, cols, rows, Format::Text, layout, lang).unwrap();
    steps
        .iter()
        .zip(frames)
        .map(|(step, f)| format!("--- step {step} ---\n{f}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The state after each step (index 0: the fresh cluster).
fn states() -> Vec<Snapshot> {
    let recording = ch09();
    let mut driver = Driver::new(&recording.header, None).unwrap();
    let mut out = vec![Snapshot::of(&driver)];
    for step in &recording.steps {
        driver.apply(&step.action);
        out.push(Snapshot::of(&driver));
    }
    out
}

fn ctx(lang: Lang) -> PaneContext {
    PaneContext {
        lang,
        theme: Theme::colored(),
        focused: true,
        scroll: 0,
        selected: None,
        isolation: Default::default(),
        touched: None,
    }
}

/// The groups pane alone in a `w` x `h` buffer.
fn pane(s: &Snapshot, w: u16, h: u16, lang: Lang) -> (Buffer, String) {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    panes::render(PaneId::Groups, s, &ctx(lang), area, &mut buf);
    let text = buffer_text(&buf);
    (buf, text)
}

/// The style of the cell where `needle` starts on the row holding
/// `row_has` (both on one row).
fn style_at(buf: &Buffer, text: &str, row_has: &str, needle: &str) -> ratatui::style::Style {
    let (y, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains(row_has))
        .unwrap_or_else(|| panic!("no row with {row_has:?}:\n{text}"));
    let at = line
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} in {line:?}"));
    let x = line[..at].chars().count() as u16;
    buf[(x, y as u16)].style()
}

#[test]
fn the_lesson_opens_in_the_groups_layout() {
    assert_eq!(ch09().header.layout.as_deref(), Some("groups"));
    let panes = layout::load("groups").unwrap().panes();
    assert_eq!(
        panes[0],
        PaneId::Groups,
        "the groups pane has the focus first"
    );
}

#[test]
fn lesson_frames_at_160x48() {
    let text = frames(&STEPS, 160, 48, Lang::En);
    assert!(text.contains("Consumer groups"), "{text}");
    insta::assert_snapshot!("ch09_groups_160x48", text);
}

#[test]
fn lesson_frames_at_80x24() {
    let text = frames(&STEPS, 80, 24, Lang::En);
    insta::assert_snapshot!("ch09_groups_80x24", text);
}

#[test]
fn lesson_frame_in_chinese() {
    let text = frames(&[8, 14], 160, 48, Lang::Zh);
    for zh in ["消费组", "第 2 代", "第 3 代", "拥有者", "上次重平衡"] {
        assert!(text.contains(zh), "{zh}:\n{text}");
    }
    insta::assert_snapshot!("ch09_groups_160x48_zh", text);
}

#[test]
fn the_pane_says_each_steps_facts() {
    let s = states();
    let (_, t5) = pane(&s[5], 64, 14, Lang::En);
    assert!(t5.contains("workers · stable · generation 1"), "{t5}");
    assert!(t5.contains("orders-3  member-1"), "{t5}");
    // Step 7 commits orders-0 at 2 and orders-1 at 1: lag 0 and 1.
    let (_, t7) = pane(&s[7], 64, 14, Lang::En);
    assert!(t7.contains("orders-0  member-1         2  2 0 ✓"), "{t7}");
    assert!(t7.contains("orders-1  member-1         1  2 1 …"), "{t7}");
    // Step 8: member-2 joins; member-1's client still holds generation 1.
    let (_, t8) = pane(&s[8], 64, 14, Lang::En);
    assert!(t8.contains("generation 2"), "{t8}");
    assert!(
        t8.contains("member-1 until 10000 (+10000) ⚠ holds generation 1"),
        "{t8}"
    );
    assert!(t8.contains("▸ orders-1  member-2"), "{t8}");
    assert!(t8.contains("▸ orders-3  member-2"), "{t8}");
    assert!(t8.contains("  orders-0  member-1"), "{t8}");
    // Step 13: member-2's heartbeat moved its deadline; member-1's did not.
    let (_, t13) = pane(&s[13], 64, 14, Lang::En);
    assert!(t13.contains("member-1 until 10000 (+4000)"), "{t13}");
    assert!(t13.contains("member-2 until 16000 (+10000)"), "{t13}");
    // Step 14: member-1 expired, generation 3 gives member-2 everything.
    let (_, t14) = pane(&s[14], 64, 14, Lang::En);
    assert!(t14.contains("generation 3"), "{t14}");
    assert!(!t14.contains("member-1 until"), "{t14}");
    assert!(t14.contains("▸ orders-0 member-1 → member-2"), "{t14}");
    assert!(t14.contains("▸ orders-2 member-1 → member-2"), "{t14}");
    // Step 17: member-2 left; the committed offsets stay.
    let (_, t17) = pane(&s[17], 64, 14, Lang::En);
    assert!(t17.contains("workers · empty · generation 4"), "{t17}");
    assert!(t17.contains("▸ orders-0  -              2  2 0 ✓"), "{t17}");
    assert!(t17.contains("▸ orders-3 member-2 → nobody"), "{t17}");
}

/// What the colours mean, on the lesson's own state: lag 0 is the good
/// colour, lag above 0 the waiting colour, the moved marker the changed
/// mark's, the moved row bold; the stale generation waits.
#[test]
fn colours_mean_lag_and_moves() {
    let s = states();
    let theme = Theme::colored();
    let (buf, text) = pane(&s[8], 64, 14, Lang::En);
    assert_eq!(
        style_at(&buf, &text, "orders-0  member-1", "0 ✓").fg,
        theme.good().fg
    );
    assert_eq!(
        style_at(&buf, &text, "orders-1  member-2", "1 …").fg,
        theme.waiting().fg
    );
    assert_eq!(
        style_at(&buf, &text, "orders-1  member-2", "▸").fg,
        theme.changed_mark().fg
    );
    assert!(
        style_at(&buf, &text, "orders-1  member-2", "orders-1")
            .add_modifier
            .contains(theme.changed().add_modifier)
    );
    assert_eq!(
        style_at(&buf, &text, "holds generation", "⚠").fg,
        theme.waiting().fg
    );
    assert_eq!(
        style_at(&buf, &text, "workers", "stable").fg,
        theme.good().fg
    );
    let (buf, text) = pane(&s[17], 64, 14, Lang::En);
    assert_eq!(style_at(&buf, &text, "workers", "empty").fg, theme.dim().fg);
}

fn press(app: &mut App, keys: &str) {
    for c in keys.chars() {
        let k = match c {
            '\n' => KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
            // Ctrl-U: clear the prompt's default to type another.
            '^' => KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
            c => KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
        };
        let event = crossterm::event::Event::Key(k);
        if let Some(msg) = minikafka::ui::run::message(app, &event) {
            app.update(msg).unwrap();
        }
    }
}

fn status(app: &App) -> String {
    app.status
        .as_ref()
        .map_or(String::new(), |s| s.text.clone())
}

/// Each key opens its prompt with a default from the state, and Enter
/// applies the action it names: join, join, heartbeat, expire (the clock
/// just past the member's deadline), leave, retention, compaction. A bad
/// value is refused in one line and nothing is applied.
#[test]
fn group_and_cleanup_keys_drive_a_live_session() {
    let recording = ch09();
    let mut driver = Driver::new(&recording.header, None).unwrap();
    for step in &recording.steps[..4] {
        driver.apply(&step.action);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.jsonl");
    let writer = minikafka::session::RecordingWriter::create(&path, &recording.header).unwrap();
    let mut app = App::live(
        driver,
        recording.header.clone(),
        Some(writer),
        layout::load("groups").unwrap(),
        Lang::En,
        Theme::colored(),
    );
    let snap = |app: &App| Snapshot::of(app.driver().unwrap());
    // The groups pane has the focus: its keys lead the key bar.
    let bar = buffer_text(&frame_buffer(&app, 80, 24));
    let bar = bar.lines().last().unwrap().to_string();
    assert!(
        bar.starts_with(" g join G leave h heartbeat E expire"),
        "{bar}"
    );
    press(&mut app, "g\n");
    assert!(status(&app).contains("join_group: ok"), "{}", status(&app));
    press(&mut app, "g\n");
    let s = snap(&app);
    let g = &s.groups[0];
    assert_eq!((g.group.as_str(), g.generation), ("workers", 2));
    let members: Vec<&str> = g.members.iter().map(|m| m.member.as_str()).collect();
    assert_eq!(members, ["member-1", "member-2"]);
    assert_eq!(g.members[0].subscriptions, ["orders"]);
    // One second on, member-1 heartbeats at generation 2: its deadline
    // passes member-2's, so `E` now expires member-2.
    press(&mut app, "t\n");
    press(&mut app, "h\n");
    assert!(status(&app).contains("heartbeat: ok"), "{}", status(&app));
    let s = snap(&app);
    assert_eq!(s.clock_ms, 1000);
    assert_eq!(s.groups[0].members[0].deadline_ms, 11_000);
    assert_eq!(s.groups[0].members[1].deadline_ms, 10_000);
    let steps = app.driver().unwrap().step();
    press(&mut app, "E^workers member-9\n");
    let refusal = app.prompt.as_ref().and_then(|p| p.refusal.clone());
    assert_eq!(
        refusal.as_deref(),
        Some(r#""member-9" is not a member of workers: its members are member-1, member-2"#)
    );
    assert_eq!(app.driver().unwrap().step(), steps, "nothing applied");
    press(&mut app, "^workers member-2\n");
    assert!(app.prompt.is_none());
    let s = snap(&app);
    assert_eq!(s.clock_ms, 10_001, "just past member-2's deadline");
    let g = &s.groups[0];
    assert_eq!(g.generation, 3);
    let members: Vec<&str> = g.members.iter().map(|m| m.member.as_str()).collect();
    assert_eq!(members, ["member-1"], "member-2 expired");
    press(&mut app, "G\n");
    let s = snap(&app);
    assert_eq!(
        (s.groups[0].state.as_str(), s.groups[0].members.len()),
        ("empty", 0)
    );
    // Chapter 4's keys on the same cluster: retention by bytes, then a
    // compaction, each on every partition of the topic.
    press(&mut app, "d^orders retention_bytes=1\n");
    assert!(status(&app).contains("retention: ok"), "{}", status(&app));
    press(&mut app, "C\n");
    assert!(status(&app).contains("compact: ok"), "{}", status(&app));
    drop(app);
    let written = Recording::load(&path).unwrap();
    let names: Vec<&str> = written
        .steps
        .iter()
        .map(|s| s.action.name())
        .filter(|n| *n != "ui")
        .collect();
    assert_eq!(
        names,
        [
            "join_group",
            "join_group",
            "advance_clock",
            "heartbeat",
            "advance_clock",
            "leave_group",
            "retention",
            "compact"
        ]
    );
}
