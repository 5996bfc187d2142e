//! `mk-tui lab ch08` and plain `mk-tui`, frame by frame (TestBackend +
//! insta): the lab opens on the chapter's cluster with its keys in the
//! caption; after the chapter's keystrokes the frame reads as the
//! chapter's output, the colours saying the same (the aborted write in
//! the aborted colour, read_committed drawn up to date); the demo opens
//! with its caption and a clean Events pane.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use minikafka::demo;
use minikafka::lab::Lab;
use minikafka::session::Driver;
use minikafka::session::snapshot::Fate;
use minikafka::ui::app::App;
use minikafka::ui::headless::{buffer_text, frame_buffer};
use minikafka::ui::i18n::Lang;
use minikafka::ui::layout;
use minikafka::ui::theme::Theme;
use ratatui::buffer::Buffer;

fn lab(lang: Lang) -> App {
    let lab = Lab::named("ch08").unwrap();
    let r = lab.recording().unwrap();
    let layout = layout::load(r.header.layout.as_deref().unwrap()).unwrap();
    let driver = Driver::new(&r.header, None).unwrap();
    App::live(driver, r.header, None, layout, lang, Theme::colored()).with_guide(lab.guide())
}

/// Presses `keys`; `\n` is Enter and `^` is Ctrl-W (delete a word).
fn press(app: &mut App, keys: &str) {
    for c in keys.chars() {
        let k = match c {
            '\n' => KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
            '^' => KeyEvent::new(KeyCode::Char('w'), KeyModifiers::CONTROL),
            c => KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
        };
        if let Some(msg) = minikafka::ui::run::message(app, &Event::Key(k)) {
            app.update(msg).unwrap();
        }
    }
}

/// The cell where `text` starts on the frame (its first occurrence).
fn find(buf: &Buffer, text: &str) -> (u16, u16) {
    let lines = buffer_text(buf);
    for (y, line) in lines.lines().enumerate() {
        if let Some(at) = line.find(text) {
            let x = line[..at].chars().count();
            return (x as u16, y as u16);
        }
    }
    panic!("{text:?} not on the frame:\n{lines}");
}

/// At start nothing is committed: the Consumer offsets pane says so after
/// its `✓ committed` heading (a new user's trial saw the heading alone,
/// with nothing under it), dimmed as the pane's other "nothing" lines.
#[test]
fn the_ch08_lab_starts_where_the_chapter_starts() {
    for (lang, name, none) in [
        (Lang::En, "lab_ch08_start", "✓ committed: none yet"),
        (Lang::Zh, "lab_ch08_start_zh", "✓ 已提交：暂无"),
    ] {
        let app = lab(lang);
        let buf = frame_buffer(&app, 120, 36);
        let text = buffer_text(&buf);
        assert!(
            text.contains("out-0 leader 1 e0 HW 0 LSO 0 LEO 0"),
            "{text}"
        );
        insta::assert_snapshot!(name, text);
        // In cells: a wide character before it on the row takes two.
        let (y, line) = text
            .lines()
            .enumerate()
            .find(|(_, l)| l.contains(none))
            .unwrap();
        let x = ratatui::text::Span::raw(&line[..line.find(none).unwrap()]).width() as u16;
        let y = y as u16;
        let theme = Theme::colored();
        assert_eq!(Some(buf[(x, y)].fg), theme.good().fg, "the heading");
        // The first cell of the last character of "none yet".
        let w = |s: &str| ratatui::text::Span::raw(s).width() as u16;
        let last = w(none) - w(&none.chars().last().unwrap().to_string());
        assert_eq!(Some(buf[(x + last, y)].fg), theme.dim().fg, "{name}");
    }
    // Once an offset is committed the heading has rows, and no "none yet".
    let mut app = lab(Lang::En);
    press(&mut app, "b\no\nc\n");
    let text = buffer_text(&frame_buffer(&app, 120, 36));
    assert!(text.contains("│✓ committed "), "{text}");
    assert!(!text.contains("none yet"), "{text}");
}

#[test]
fn the_chapters_keys_end_on_the_chapters_output_in_words_and_colours() {
    let mut app = lab(Lang::En);
    press(&mut app, "b\ns^pending\nc\nb\ns^discard-me\na\n");
    let buf = frame_buffer(&app, 120, 36);
    let text = buffer_text(&buf);
    insta::assert_snapshot!("lab_ch08_after_the_chapters_keys", text);
    let theme = Theme::colored();
    let (x, y) = find(&buf, "✗discard-me");
    assert_eq!(
        Some(buf[(x, y)].fg),
        theme.fate(Fate::Aborted).fg,
        "aborted colour"
    );
    let (x, y) = find(&buf, "✓pending");
    assert_eq!(Some(buf[(x, y)].fg), theme.fate(Fate::Committed).fg);
    // read_committed reads "pending" and is up to date: drawn good, not
    // in the colour of being held back.
    let head = text
        .lines()
        .position(|l| l.contains("│read_uncommitted "))
        .unwrap();
    let rc_x = text.lines().nth(head).unwrap()[..]
        .split("read_committed")
        .next()
        .unwrap()
        .chars()
        .count();
    let row = (head + 1) as u16;
    let cell = (rc_x as u16..120)
        .map(|x| &buf[(x, row)])
        .find(|c| c.symbol() == "o")
        .expect("out-0 under read_committed");
    assert_eq!(Some(cell.fg), theme.good().fg, "read_committed up to date");
}

/// The keys stay on screen while the experiment runs (a lecturer's trial
/// found them gone after the first `b Enter`): after each step the caption
/// says how many are done and names the keys that remain, in both
/// languages; a `J` between steps loses nothing; `u` takes a stage back.
#[test]
fn the_labs_caption_keeps_the_keys_that_remain() {
    for (lang, after_begin, after_all) in [
        (
            Lang::En,
            "Chapter 8 live, 1 of 6 done. Next: s Ctrl-W pending Enter; then c Enter, b Enter, s Ctrl-W discard-me Enter, a Enter.",
            "Chapter 8 live, 6 of 6 done: Consumers shows the chapter's four lines.",
        ),
        (
            Lang::Zh,
            "第 8 章现场实验：已完成 1/6。下一步：s Ctrl-W pending 回车；之后：c 回车，b 回车，s Ctrl-W discard-me 回车，a 回车。",
            "第 8 章现场实验：已完成 6/6。消费者 面板显示本章的四行结果。",
        ),
    ] {
        let mut app = lab(lang);
        press(&mut app, "b\nJ");
        let caption = |app: &App| {
            let view = app.session().snapshot();
            view.caption.map(|c| c.text(lang.code()).to_string())
        };
        assert!(
            caption(&app).is_some_and(|c| c.starts_with(after_begin)),
            "{:?}",
            caption(&app)
        );
        let text = buffer_text(&frame_buffer(&app, 160, 48));
        let head: String = after_begin.chars().take(16).collect();
        assert!(text.contains(&head), "on the frame:\n{text}");
        press(&mut app, "s^pending\nc\nb\ns^discard-me\na\n");
        assert!(
            caption(&app).is_some_and(|c| c.starts_with(after_all)),
            "{:?}",
            caption(&app)
        );
        press(&mut app, "u");
        assert!(
            caption(&app).is_some_and(|c| c.contains("5/6") || c.contains("5 of 6")),
            "undo takes the abort back: {:?}",
            caption(&app)
        );
    }
    let mut app = lab(Lang::En);
    press(&mut app, "b\n");
    insta::assert_snapshot!(
        "lab_ch08_after_begin",
        buffer_text(&frame_buffer(&app, 120, 36))
    );
}

#[test]
fn plain_mk_tui_opens_with_a_caption_and_a_clean_events_pane() {
    let d = demo::recording();
    let driver = {
        let mut driver = Driver::new(&d.header, None).unwrap();
        for s in &d.steps {
            driver.apply(&s.action);
        }
        driver
    };
    let app = App::live(
        driver,
        d.header.clone(),
        None,
        layout::builtin_default(),
        Lang::En,
        Theme::colored(),
    )
    .with_history(d.steps.clone())
    .with_clean_events();
    let text = buffer_text(&frame_buffer(&app, 160, 48));
    assert!(
        text.contains("Try b (begin a transaction), s (send), c (commit)"),
        "{text}"
    );
    let events: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.contains("┌Events"))
        .take_while(|l| !l.contains('└'))
        .collect();
    assert!(!events.is_empty(), "{text}");
    assert!(
        events
            .iter()
            .all(|l| !l.contains("step ") && !l.contains("▸ ")),
        "{events:#?}"
    );
    assert!(!events[0].contains("more"), "{}", events[0]);
}

#[test]
fn n_creates_a_topic_on_disk_and_on_screen() {
    let mut app = lab(Lang::En);
    // Ctrl-U clears the default; a topic of two partitions, one replica.
    press(&mut app, "n");
    press_key(&mut app, KeyCode::Char('u'), KeyModifiers::CONTROL);
    press(&mut app, "lab 2 1\n");
    let driver = app.driver().unwrap();
    let s = minikafka::session::Snapshot::of(driver);
    assert!(s.partition("lab-0").is_some() && s.partition("lab-1").is_some());
    let metadata = std::fs::read_to_string(driver.data_dir().join("metadata.json")).unwrap();
    assert!(metadata.contains("\"lab\""), "{metadata}");
    let text = buffer_text(&frame_buffer(&app, 120, 36));
    assert!(
        text.contains("lab-1 leader 1 e0 HW 0 LSO 0 LEO 0"),
        "{text}"
    );
    assert!(text.contains("step 1: create_topic: ok"), "{text}");
    // A name that exists is refused in the prompt, which stays open.
    press(&mut app, "n");
    press_key(&mut app, KeyCode::Char('u'), KeyModifiers::CONTROL);
    press(&mut app, "out 1 1\n");
    let refusal = app.prompt.as_ref().and_then(|p| p.refusal.clone());
    assert_eq!(refusal.as_deref(), Some("topic \"out\" exists already"));
}

fn press_key(app: &mut App, code: KeyCode, modifiers: KeyModifiers) {
    let k = KeyEvent::new(code, modifiers);
    if let Some(msg) = minikafka::ui::run::message(app, &Event::Key(k)) {
        app.update(msg).unwrap();
    }
}
