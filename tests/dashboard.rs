//! The dashboard, headless (SPEC §5, §6): frames drawn through the same code
//! as the live UI into ratatui's TestBackend, snapshotted with insta; keys
//! and prompts driving a live session; recording and replaying it; casts.

use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use minikafka::demo;
use minikafka::session::{Recording, Snapshot};
use minikafka::ui::app::{App, Msg};
use minikafka::ui::headless::{self, Format, buffer_text, frame_buffer};
use minikafka::ui::i18n::Lang;
use minikafka::ui::keys::{self, KeyCommand, PromptEdit};
use minikafka::ui::layout;
use minikafka::ui::theme::Theme;

fn ch08() -> Recording {
    Recording::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings/ch08-visibility.jsonl"))
        .unwrap()
}

fn replay_frame(step: usize, cols: u16, rows: u16, lang: Lang) -> String {
    let layout = layout::load("transactions").unwrap();
    headless::render(ch08(), &[step], cols, rows, Format::Text, layout, lang)
        .unwrap()
        .remove(0)
}

#[test]
fn chapter_8_frames_at_80x24() {
    for step in [0, 2, 3, 6] {
        insta::assert_snapshot!(
            format!("ch08_80x24_step{step}"),
            replay_frame(step, 80, 24, Lang::En)
        );
    }
}

#[test]
fn chapter_8_frame_on_a_projector_at_200x60() {
    insta::assert_snapshot!("ch08_200x60_step6", replay_frame(6, 200, 60, Lang::En));
}

#[test]
fn chapter_8_frame_in_chinese() {
    let frame = replay_frame(2, 120, 36, Lang::Zh);
    assert!(
        frame.contains("分区") && frame.contains("事务日志"),
        "{frame}"
    );
    assert!(
        frame.contains("标记之前"),
        "the caption in Chinese: {frame}"
    );
    insta::assert_snapshot!("ch08_120x36_step2_zh", frame);
}

#[test]
fn the_frame_shows_the_chapters_facts() {
    let frame = replay_frame(2, 120, 36, Lang::En);
    assert!(
        frame.contains("out-0 leader 1 e0 HW 1 LSO 0 LEO 1"),
        "{frame}"
    );
    assert!(frame.contains("tx-1"), "{frame}");
    assert!(frame.contains("Before the marker"), "{frame}");
    let after_abort = replay_frame(6, 120, 36, Lang::En);
    assert!(
        after_abort.contains("ABORT") && after_abort.contains("COMMIT"),
        "{after_abort}"
    );
}

#[test]
fn a_terminal_too_small_gets_a_message() {
    let frame = replay_frame(2, 40, 10, Lang::En);
    assert!(frame.contains("Terminal too small: 40x10"), "{frame}");
    assert!(frame.contains("needs 80x24"), "{frame}");
    // and the tiniest terminals do not panic
    for (c, r) in [(1, 1), (5, 2), (0, 0)] {
        let _ = headless::render(
            ch08(),
            &[6],
            c.max(1),
            r.max(1),
            Format::Text,
            layout::builtin_default(),
            Lang::En,
        );
    }
}

#[test]
fn the_same_frame_twice_is_the_same_bytes() {
    let a = headless::render(
        ch08(),
        &[0, 3, 6],
        120,
        36,
        Format::Ansi,
        layout::builtin_default(),
        Lang::En,
    )
    .unwrap();
    let b = headless::render(
        ch08(),
        &[0, 3, 6],
        120,
        36,
        Format::Ansi,
        layout::builtin_default(),
        Lang::En,
    )
    .unwrap();
    assert_eq!(a, b);
    assert!(a[1].contains("\u{1b}["), "ANSI escape sequences");
}

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

/// Presses keys as the event loop does: each key becomes a message.
fn press(app: &mut App, keys: &str) {
    for c in keys.chars() {
        let k = if c == '\n' {
            KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)
        } else {
            key(c)
        };
        send_key(app, k);
    }
}

fn send_key(app: &mut App, k: KeyEvent) {
    let event = crossterm::event::Event::Key(k);
    if let Some(msg) = minikafka::ui::run::message(app, &event) {
        app.update(msg).unwrap();
    }
}

fn handle(app: &mut App, command: KeyCommand) {
    app.update(Msg::Command(command)).unwrap();
}

fn status(app: &App) -> &str {
    app.status.as_ref().map_or("", |s| s.text.as_str())
}

/// One key plus Enter does something useful: the prompts' defaults.
#[test]
fn keys_and_prompts_drive_a_live_session_and_record_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.jsonl");
    let demo = demo::recording();
    let mut driver = minikafka::session::Driver::new(&demo.header, None).unwrap();
    let mut writer = minikafka::session::RecordingWriter::create(&path, &demo.header).unwrap();
    for s in &demo.steps {
        driver.apply(&s.action);
        writer.append(s).unwrap();
    }
    let mut app = App::live(
        driver,
        demo.header.clone(),
        Some(writer),
        layout::builtin_default(),
        Lang::En,
        Theme::colored(),
    );
    let start = app.driver().unwrap().step();
    press(&mut app, "p\n"); // produce with the default
    assert!(status(&app).ends_with("produce: ok"), "{:?}", app.status);
    press(&mut app, "b\n"); // begin tx-1
    press(&mut app, "s\n"); // send in tx-1 (pending: acks=all on a replicated topic)
    assert!(status(&app).contains("send: pending"), "{:?}", app.status);
    press(&mut app, "r"); // replicate
    press(&mut app, "c\n"); // commit tx-1
    press(&mut app, "rr");
    press(&mut app, "t\n"); // advance the clock by the default 1000 ms
    assert_eq!(app.driver().unwrap().step(), start + 8);
    let state = Snapshot::of(app.driver().unwrap());
    let json = state.to_json();
    assert!(
        json.contains(r#""id":"tx-1","state":"complete_commit""#),
        "{json}"
    );
    assert_eq!(state.clock_ms, 11_001);
    // a bad prompt is an error message, not an action
    press(&mut app, "t");
    for _ in 0..4 {
        send_key(
            &mut app,
            KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE),
        );
    }
    press(&mut app, "soon\n");
    let prompt = app.prompt.as_ref().expect("a refused prompt stays open");
    assert!(
        prompt
            .refusal
            .as_deref()
            .unwrap()
            .contains("must be a whole number"),
        "{prompt:?}"
    );
    send_key(&mut app, KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    assert!(app.prompt.is_none());
    assert_eq!(app.driver().unwrap().step(), start + 8);
    // the recording replays to the same state
    let recorded = Recording::load(&path).unwrap();
    assert_eq!(recorded.steps.len(), start + 8);
    let mut again = minikafka::session::Driver::new(&recorded.header, None).unwrap();
    for s in &recorded.steps {
        again.apply(&s.action);
    }
    assert_eq!(Snapshot::of(&again).to_json(), json);
}

#[test]
fn replay_keys_move_forward_and_back_and_engine_keys_are_off() {
    let mut app = App::replay(
        ch08(),
        layout::builtin_default(),
        Lang::En,
        Theme::colored(),
    )
    .unwrap();
    handle(&mut app, KeyCommand::NextStep);
    handle(&mut app, KeyCommand::NextStep);
    assert_eq!(app.driver().unwrap().step(), 2);
    handle(&mut app, KeyCommand::PrevStep);
    assert_eq!(app.driver().unwrap().step(), 1);
    handle(&mut app, KeyCommand::LastStep);
    assert_eq!(app.driver().unwrap().step(), 6);
    handle(&mut app, KeyCommand::NextStep);
    assert_eq!(app.driver().unwrap().step(), 6, "stays at the end");
    handle(&mut app, KeyCommand::FirstStep);
    assert_eq!(app.driver().unwrap().step(), 0);
    handle(&mut app, KeyCommand::PlayPause);
    assert_eq!(app.next_step_delay_ms(), Some(0), "step 1 is at 0 ms");
    app.update(Msg::Tick).unwrap();
    assert_eq!(app.next_step_delay_ms(), Some(1500), "the recorded pace");
    handle(&mut app, KeyCommand::ReplicateAll);
    assert!(status(&app).contains("engine keys are off"));
    let frame = buffer_text(&frame_buffer(&app, 120, 36));
    assert!(
        frame.contains("replay") && frame.contains("step 1/6"),
        "{frame}"
    );
}

#[test]
fn the_help_overlay_lists_the_keys() {
    let mut app = App::replay(
        ch08(),
        layout::builtin_default(),
        Lang::En,
        Theme::colored(),
    )
    .unwrap();
    handle(&mut app, KeyCommand::ToggleHelp);
    let frame = buffer_text(&frame_buffer(&app, 120, 36));
    assert!(frame.contains("play/pause at recorded pace"), "{frame}");
    assert!(frame.contains("previous step"), "{frame}");
}

#[test]
fn the_cast_is_asciicast_v2_paced_by_at_ms_with_markers() {
    let mut out = Vec::new();
    headless::export_cast(
        ch08(),
        120,
        36,
        layout::builtin_default(),
        Lang::En,
        (0, 6),
        &mut out,
    )
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    let mut lines = text.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(
        (
            header["version"].as_u64(),
            header["width"].as_u64(),
            header["height"].as_u64()
        ),
        (Some(2), Some(120), Some(36))
    );
    let events: Vec<serde_json::Value> = lines.map(|l| serde_json::from_str(l).unwrap()).collect();
    let outputs: Vec<f64> = events
        .iter()
        .filter(|e| e[1] == "o")
        .map(|e| e[0].as_f64().unwrap())
        .collect();
    assert_eq!(
        outputs,
        [0.0, 2.0, 3.5, 5.0, 6.5, 8.0, 9.5],
        "step 0 held under the title, then one frame per step at at_ms"
    );
    let markers: Vec<&str> = events
        .iter()
        .filter(|e| e[1] == "m")
        .map(|e| e[2].as_str().unwrap())
        .collect();
    assert_eq!(
        markers.len(),
        6,
        "the title, then one marker per captioned step"
    );
    assert_eq!(markers[0], "Chapter 8: the visibility boundary");
    assert!(
        markers[1].starts_with("step 1: Open transaction tx-1"),
        "{markers:?}"
    );
    assert!(markers[1..].iter().all(|m| m.starts_with("step ")));
    assert!(
        events
            .iter()
            .all(|e| e[1] != "o" || e[2].as_str().unwrap().contains('\u{1b}') || e[2] == "")
    );
}

#[test]
fn the_isolation_key_shows_what_read_uncommitted_sees() {
    let mut app = App::replay(
        ch08(),
        layout::builtin_default(),
        Lang::En,
        Theme::colored(),
    )
    .unwrap();
    handle(&mut app, KeyCommand::LastStep);
    let committed = buffer_text(&frame_buffer(&app, 160, 48));
    assert!(
        committed.contains("✗ 2") && committed.contains("aborted"),
        "{committed}"
    );
    handle(&mut app, keys::command(key('i'), true).unwrap());
    let uncommitted = buffer_text(&frame_buffer(&app, 160, 48));
    assert!(
        uncommitted.contains("view read_uncommitted"),
        "{uncommitted}"
    );
    // The fate stays "aborted"; the mark says read_uncommitted reads it.
    assert!(
        uncommitted.contains("✗ 2     aborted    ● tx-2"),
        "the aborted batch is read by read_uncommitted: {uncommitted}"
    );
    assert!(
        committed.contains("✗ 2     aborted    · tx-2"),
        "and not by read_committed: {committed}"
    );
    handle(&mut app, KeyCommand::SelectNext);
    handle(&mut app, KeyCommand::SelectNext);
    handle(&mut app, KeyCommand::SelectNext);
    let explained = buffer_text(&frame_buffer(&app, 160, 48));
    assert!(
        explained.contains("tx-2 aborted: ABORT marker at offset 3 ·")
            && explained.contains("read_uncommitted: seen"),
        "{explained}"
    );
}

/// Every size from tiny to large, every layout, both languages: no panic,
/// and every frame has exactly the terminal's rows.
#[test]
fn no_size_or_layout_panics() {
    let demo = demo::recording();
    let last = demo.steps.len();
    for name in ["default", "transactions", "replication", "crash"] {
        for lang in [Lang::En, Lang::Zh] {
            for (cols, rows) in [
                (1, 1),
                (3, 2),
                (20, 5),
                (79, 23),
                (80, 24),
                (81, 25),
                (133, 41),
                (200, 60),
                (301, 90),
            ] {
                let frames = headless::render(
                    demo.clone(),
                    &[last],
                    cols,
                    rows,
                    Format::Text,
                    layout::load(name).unwrap(),
                    lang,
                )
                .unwrap();
                assert_eq!(
                    frames[0].lines().count(),
                    rows as usize,
                    "{name} {cols}x{rows}"
                );
            }
        }
    }
}

/// Review findings, as regressions: a committed batch behind the LSO is not
/// shown as committed; prompt defaults follow the open transaction; the
/// selection stops at the last batch; play at the end starts over.
#[test]
fn review_regressions() {
    use minikafka::session::Action;
    let demo = demo::recording();
    let mut driver = minikafka::session::Driver::new(&demo.header, None).unwrap();
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
    // tx-open holds orders-1's LSO at 5; a transaction committed after it is
    // not visible to read_committed yet.
    for a in [
        r#"{"begin":{"txn":"late"}}"#,
        r#"{"send":{"txn":"late","topic":"orders","partition":1,"value":"late-1"}}"#,
        r#"{"replicate":{}}"#,
        r#"{"commit":{"txn":"late"}}"#,
        r#"{"replicate":{}}"#,
        r#"{"replicate":{}}"#,
    ] {
        app.update(Msg::Apply(
            Action::from_json(&serde_json::from_str(a).unwrap()).unwrap(),
        ))
        .unwrap();
    }
    // Values are read for the rows a frame draws: a frame of 200x60.
    let mut view = app.snapshot_for(ratatui::layout::Rect::new(0, 0, 200, 60));
    let p = (view.partitions.iter())
        .position(|p| p.name() == "orders-1")
        .unwrap();
    let b = (view.partitions[p].batches.iter())
        .position(|b| {
            b.records
                .iter()
                .any(|r| r.value.as_deref() == Some("late-1"))
        })
        .unwrap();
    // A frame's snapshot says why only for the selected batch; the source
    // says it for any batch asked.
    app.session().source().explain(&mut view, p, b);
    let late = &view.partitions[p].batches[b];
    assert_eq!(
        late.fate,
        minikafka::session::snapshot::Fate::HeldBack,
        "{}",
        late.explanation
    );
    assert!(
        late.explanation
            .contains("waits behind an earlier open transaction")
    );
    // prompt defaults: `late` is complete; send defaults to the open tx-open
    press(&mut app, "s");
    assert!(
        app.prompt.as_ref().unwrap().text.starts_with("tx-open "),
        "{:?}",
        app.prompt
    );
    // Ctrl/Alt characters do not go into a prompt
    send_key(
        &mut app,
        KeyEvent::new(KeyCode::Char('x'), KeyModifiers::CONTROL),
    );
    assert!(!app.prompt.as_ref().unwrap().text.ends_with('x'));
    app.update(Msg::Edit(PromptEdit::Cancel)).unwrap();
    // start broker defaults to the stopped broker
    press(&mut app, "Z");
    assert_eq!(app.prompt.as_ref().unwrap().text, "3");
    app.update(Msg::Edit(PromptEdit::Cancel)).unwrap();
    // the selection stops at the last batch
    for _ in 0..500 {
        handle(&mut app, KeyCommand::SelectNext);
    }
    let last = minikafka::ui::panes::partitions::selectable(&app.snapshot()) - 1;
    assert_eq!(app.selected_row(), Some(last));
    // play at the end of a replay starts over
    let mut replay = App::replay(
        ch08(),
        layout::builtin_default(),
        Lang::En,
        Theme::colored(),
    )
    .unwrap();
    handle(&mut replay, KeyCommand::LastStep);
    handle(&mut replay, KeyCommand::PlayPause);
    assert_eq!(replay.driver().unwrap().step(), 0);
    let frame = buffer_text(&frame_buffer(&replay, 120, 36));
    assert!(frame.contains("▶ replay"), "{frame}");
}

/// `ui` steps put a replay in the recorded screen state: focus, the selected
/// batch (its explanation shows), the isolation view.
#[test]
fn ui_steps_replay_the_same_screen() {
    let mut r = ch08();
    let ui = |json: &str| minikafka::session::Step {
        present: None,
        at_ms: 8000,
        action: minikafka::session::Action::from_json(&serde_json::from_str(json).unwrap())
            .unwrap(),
        caption: None,
    };
    r.steps.push(ui(r#"{"ui":{"select":2}}"#));
    r.steps.push(ui(r#"{"ui":{"toggle":"isolation"}}"#));
    let frames = headless::render(
        r,
        &[7, 8],
        120,
        36,
        Format::Text,
        layout::builtin_default(),
        Lang::En,
    )
    .unwrap();
    assert!(
        frames[0].contains("tx-2 aborted: ABORT marker at offset 3"),
        "{}",
        frames[0]
    );
    assert!(frames[1].contains("view read_uncommitted"), "{}", frames[1]);
}

/// A crash drops actions queued behind a pending one; they do not run on
/// the recovered cluster.
#[test]
fn a_crash_drops_queued_actions() {
    use minikafka::session::{Action, Driver, Outcome};
    let h: minikafka::session::recording::Header = serde_json::from_str(
        r#"{"mk_recording":1,"cluster":{"brokers":[1,2],"topics":[{"name":"out","partitions":1,"replication_factor":2}]}}"#,
    )
    .unwrap();
    let mut d = Driver::new(&h, None).unwrap();
    let act = |j: &str| Action::from_json(&serde_json::from_str(j).unwrap()).unwrap();
    assert_eq!(d.apply(&act(r#"{"begin":{"txn":"t"}}"#)), Outcome::Ok);
    assert_eq!(
        d.apply(&act(r#"{"send":{"txn":"t","topic":"out","value":"a"}}"#)),
        Outcome::Pending
    );
    assert_eq!(
        d.apply(&act(r#"{"commit":{"txn":"t","crash_after":"prepare"}}"#)),
        Outcome::Pending
    );
    assert_eq!(
        d.apply(&act(r#"{"send":{"txn":"t","topic":"out","value":"b"}}"#)),
        Outcome::Pending
    );
    d.apply(&act(r#"{"crash":{}}"#));
    let state: serde_json::Value = serde_json::from_str(&Snapshot::of(&d).to_json()).unwrap();
    let failed: Vec<u64> = state["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["step"].as_u64().unwrap())
        .collect();
    assert_eq!(failed, [2, 3, 4], "{state}");
    assert_eq!(
        state["transactions"][0]["state"], "ongoing",
        "the queued commit never ran"
    );
    assert!(state["pending"].as_array().unwrap().is_empty());
}

/// Issue 7's P1: a frame reads record values only for the batch rows it
/// draws, while the view still carries the whole window (for selection).
#[test]
fn a_frame_reads_record_values_only_for_the_rows_it_draws() {
    let workload = minikafka::perf::DashboardWorkload::new(4, 2_000);
    let area = ratatui::layout::Rect::new(0, 0, 80, 24);
    let view = workload.app.snapshot_for(area);
    let batches: Vec<_> = view.partitions.iter().flat_map(|p| &p.batches).collect();
    let loaded: Vec<(usize, usize)> = view
        .partitions
        .iter()
        .enumerate()
        .flat_map(|(p, part)| {
            part.batches
                .iter()
                .enumerate()
                .filter(|(_, b)| !b.records.is_empty())
                .map(move |(i, _)| (p, i))
        })
        .collect();
    assert_eq!(batches.len(), 4 * 20, "every partition's window is carried");
    // Exactly the batches the partitions pane's rows and the log pane's
    // cells draw are read: one partition's cells (one per batch) and a few
    // rows, not the four windows.
    let wanted = minikafka::ui::frame::visible_batches(&workload.app, &view, area);
    assert_eq!(
        loaded,
        wanted.iter().map(|&(p, i, _)| (p, i)).collect::<Vec<_>>()
    );
    assert!(
        !loaded.is_empty() && loaded.len() < 2 * 20,
        "{} of {} batches read",
        loaded.len(),
        batches.len()
    );
    // The newest batches are the ones drawn (the list follows new data),
    // and each row shows the values read for it.
    let text = minikafka::ui::headless::buffer_text(&workload.frame(80, 24));
    let rows = loaded
        .iter()
        .map(|&(p, i)| &view.partitions[p].batches[i])
        .filter(|b| text.contains(&format!("{}-{}", b.base_offset, b.last_offset)))
        .count();
    // The log pane draws the newest batches of t-0, one cell each.
    let cells = text
        .lines()
        .find(|l| l.contains("1 ldr│"))
        .map_or(0, |l| l.matches("│✓").count());
    assert!(cells > 0, "{text}");
    assert_eq!(
        cells,
        loaded.iter().filter(|(p, _)| *p == 0).count(),
        "{text}"
    );
    assert!(rows <= loaded.len());
    // Each as far as a pane draws it: a partitions pane row its first
    // values, a log pane cell (one per batch here) its first.
    for &(p, i, n) in &wanted {
        let b = &view.partitions[p].batches[i];
        assert_eq!(b.records.len(), n);
        assert!(n == 1 || n == minikafka::session::snapshot::VALUES_SHOWN);
    }
    assert!(wanted.iter().any(|&(_, _, n)| n == 1), "{wanted:?}");
    assert!(app_view_has_no_values(&workload.app));
}

fn app_view_has_no_values(app: &minikafka::ui::app::App) -> bool {
    app.snapshot()
        .partitions
        .iter()
        .flat_map(|p| &p.batches)
        .all(|b| b.records.is_empty())
}

/// A caption that fits its pane never scrolls away: wheel notches and `j`
/// over it keep it on screen, at this step and at the next captioned one
/// (one notch used to hide it for the rest of the lesson).
#[test]
fn a_caption_that_fits_never_scrolls_away() {
    let recording = ch08();
    let captioned: Vec<usize> = (1..=recording.steps.len())
        .filter(|&i| recording.steps[i - 1].caption.is_some())
        .collect();
    assert!(captioned.len() >= 2, "{captioned:?}");
    let (cols, rows) = (160, 48);
    let mut app = App::replay(
        recording.clone(),
        layout::builtin("default").unwrap(),
        Lang::En,
        Theme::colored(),
    )
    .unwrap();
    app.update(Msg::Resize(cols, rows)).unwrap();
    for &step in &captioned[..2] {
        app.update(Msg::Goto(step)).unwrap();
        let (_, rect) = *app
            .frame_map()
            .unwrap()
            .panes
            .iter()
            .find(|(id, _)| id.name() == "caption")
            .expect("the default layout shows the caption");
        let text = recording.steps[step - 1]
            .caption
            .as_ref()
            .unwrap()
            .text("en");
        let first: String = text
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ");
        for _ in 0..3 {
            app.update(Msg::Wheel(rect.x + 2, rect.y + 1, false))
                .unwrap();
            app.update(Msg::Command(KeyCommand::ScrollDown)).unwrap();
        }
        let frame = buffer_text(&frame_buffer(&app, cols, rows));
        assert!(
            frame.contains(&first),
            "step {step}: {first:?} scrolled away:\n{frame}"
        );
    }
}
