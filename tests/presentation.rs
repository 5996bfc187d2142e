//! Presentation and help (issue 13 items 5 and 6), headless: zoom,
//! presentation mode, the three themes, the modal help, the key bar while
//! playing, the prompt's cursor, and the partitions pane keeping what a
//! student just wrote on screen. Frames are drawn through the same code as
//! the live UI into ratatui's TestBackend; text frames and style maps are
//! insta snapshots, and styles are also asserted cell by cell.

use std::path::Path;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use minikafka::demo;
use minikafka::session::{Driver, Recording, RecordingWriter};
use minikafka::ui::app::{App, Msg};
use minikafka::ui::headless::{buffer_text, frame_buffer};
use minikafka::ui::i18n::Lang;
use minikafka::ui::keys::KeyCommand;
use minikafka::ui::layout::{self, Layout};
use minikafka::ui::theme::{Palette, Theme};
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

fn ch08() -> Recording {
    Recording::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings/ch08-visibility.jsonl"))
        .unwrap()
}

/// A layout of the tests' own, so the built-in layouts can change without
/// these frames changing: partitions and journal side by side, consumers
/// and events under them, the caption at the bottom.
fn test_layout() -> Layout {
    layout::parse(
        "presentation-test.json",
        r#"{"layout":1,"name":"presentation-test","min_size":{"cols":80,"rows":24},
            "root":{"split":"vertical","children":[
              {"split":"horizontal","size":{"fill":2},"children":[
                {"pane":"partitions","size":{"percent":50}},
                {"pane":"journal","size":{"fill":1}}]},
              {"split":"horizontal","size":{"fill":1},"children":[
                {"pane":"consumers","size":{"percent":50}},
                {"pane":"events","size":{"fill":1}}]},
              {"pane":"caption","size":{"length":4}}]}}"#,
    )
    .unwrap()
}

/// The chapter 8 replay at `step`.
fn replay(step: usize, lang: Lang, theme: Theme) -> App {
    let mut app = App::replay(ch08(), test_layout(), lang, theme).unwrap();
    app.update(Msg::Goto(step)).unwrap();
    app
}

/// The demo session, live; recording into `path` if given.
fn live(path: Option<&Path>, lang: Lang) -> App {
    let demo = demo::recording();
    let mut driver = Driver::new(&demo.header, None).unwrap();
    let mut writer = path.map(|p| RecordingWriter::create(p, &demo.header).unwrap());
    for s in &demo.steps {
        driver.apply(&s.action);
        if let Some(w) = &mut writer {
            w.append(s).unwrap();
        }
    }
    App::live(
        driver,
        demo.header.clone(),
        writer,
        test_layout(),
        lang,
        Theme::colored(),
    )
}

fn send(app: &mut App, key: KeyEvent) {
    if let Some(msg) = minikafka::ui::run::message(app, &Event::Key(key)) {
        app.update(msg).unwrap();
    }
}

fn press(app: &mut App, keys: &str) {
    for c in keys.chars() {
        let k = match c {
            '\n' => KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
            '\u{1b}' => KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE),
            '\t' => KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE),
            c => KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
        };
        send(app, k);
    }
}

fn text(app: &App, cols: u16, rows: u16) -> String {
    buffer_text(&frame_buffer(app, cols, rows))
}

/// The sizes every presentation frame is snapshotted at.
const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];

/// The buffer's styles: its text, then a letter per cell naming the cell's
/// style, and the legend of the letters (in order of first appearance, so
/// the map is the same every run).
fn style_map(buf: &Buffer) -> String {
    let letters: Vec<char> = ('a'..='z').chain('A'..='Z').chain('0'..='9').collect();
    let mut legend: Vec<String> = Vec::new();
    let mut map = String::new();
    let area = buf.area;
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            let c = &buf[(x, y)];
            let style = format!("fg {:?} bg {:?} {:?}", c.fg, c.bg, c.modifier);
            let i = legend.iter().position(|s| *s == style).unwrap_or_else(|| {
                legend.push(style);
                legend.len() - 1
            });
            map.push(letters.get(i).copied().unwrap_or('*'));
        }
        map.push('\n');
    }
    let legend: String = legend
        .iter()
        .zip(&letters)
        .map(|(s, l)| format!("{l}: {s}\n"))
        .collect();
    format!("{}\n{legend}\n{map}", buffer_text(buf))
}

/// Whether the cell holds a box-drawing character (a border).
fn is_border(symbol: &str) -> bool {
    symbol
        .chars()
        .next()
        .is_some_and(|c| ('\u{2500}'..='\u{257f}').contains(&c))
}

#[test]
fn zoom_fills_the_screen_with_the_focused_pane_and_goes_back() {
    let mut app = replay(6, Lang::En, Theme::colored());
    let before = text(&app, 80, 24);
    press(&mut app, "\tf");
    assert!(app.zoomed);
    for (cols, rows) in SIZES {
        let frame = text(&app, cols, rows);
        let lines: Vec<&str> = frame.lines().collect();
        assert!(lines[1].starts_with("┌Transaction journal"), "{frame}");
        assert!(
            lines[rows as usize - 2].starts_with('└'),
            "one pane, the whole body: {frame}"
        );
        assert!(
            !frame.contains("Partitions") && !frame.contains("Events"),
            "{frame}"
        );
        assert!(lines[rows as usize - 1].starts_with(" f unzoom"), "{frame}");
        insta::assert_snapshot!(format!("zoom_{cols}x{rows}"), frame);
    }
    // Zoomed, Tab moves the focus and so the zoomed pane.
    press(&mut app, "\t");
    assert!(
        text(&app, 80, 24)
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("┌Consumers")
    );
    // f again, or Esc, goes back to the layout.
    press(&mut app, "\u{1b}");
    assert!(!app.zoomed);
    press(&mut app, "\t\t\t\tff");
    assert_eq!(text(&app, 80, 24), before, "back as it was");
    // Zoom is not a ui step and changes nothing in the session.
    assert_eq!(app.driver().unwrap().step(), 6);
}

#[test]
fn zoom_in_chinese() {
    let mut app = replay(6, Lang::Zh, Theme::colored());
    press(&mut app, "f");
    let frame = text(&app, 80, 24);
    assert!(
        frame.lines().nth(1).unwrap().starts_with("┌分区"),
        "{frame}"
    );
    assert!(frame.contains("还原"), "{frame}");
    insta::assert_snapshot!("zoom_80x24_zh", frame);
}

/// The rows of `frame` whose text has the block font's cells.
fn block_rows(frame: &str) -> usize {
    frame
        .lines()
        .filter(|l| l.contains('█') || l.contains('▀') || l.contains('▄'))
        .count()
}

#[test]
fn presentation_shows_the_touched_panes_side_by_side_above_a_large_caption() {
    // Step 3 commits tx-1: what readers see changed, so Log and Consumers.
    let mut app = replay(3, Lang::En, Theme::colored());
    press(&mut app, "P");
    assert!(app.presenting);
    for (cols, rows) in SIZES {
        let buf = frame_buffer(&app, cols, rows);
        let frame = buffer_text(&buf);
        let lines: Vec<&str> = frame.lines().collect();
        assert!(lines[1].starts_with("┌Log"), "{frame}");
        if cols >= 100 {
            assert!(lines[1].contains("┐┌Consumers"), "side by side: {frame}");
            assert!(frame.contains("┌Events"), "the events strip: {frame}");
        } else {
            // Too narrow to stand side by side: Consumers under Log, both
            // above the caption, read_uncommitted against read_committed
            // in view.
            let below = lines
                .iter()
                .position(|l| l.starts_with("┌Consumers"))
                .unwrap_or_else(|| panic!("stacked at 80 columns: {frame}"));
            let caption = lines.iter().position(|l| l.starts_with("┌Caption"));
            assert!(below > 2 && caption > Some(below), "{frame}");
            assert!(lines[below + 1].contains("read_committed"), "{frame}");
        }
        for gone in ["Transaction journal", "Partitions"] {
            assert!(!frame.contains(gone), "{frame}");
        }
        // The headline "Commit" in the block font, bold, centred.
        let top = lines
            .iter()
            .position(|l| l.starts_with("┌Caption"))
            .unwrap();
        let (y, line) = lines
            .iter()
            .enumerate()
            .skip(top)
            .find(|(_, l)| l.contains('█') || l.contains('▀') || l.contains('▄'))
            .unwrap_or_else(|| panic!("no block font: {frame}"));
        let x = line.chars().position(|c| "█▀▄".contains(c)).unwrap();
        assert!(x > 8, "centred: {line}");
        let cell = &buf[(x as u16, y as u16)];
        assert!(cell.modifier.contains(Modifier::BOLD), "bold: {cell:?}");
        assert!(block_rows(&frame) >= 3, "{frame}");
        insta::assert_snapshot!(format!("presentation_{cols}x{rows}"), frame);
    }
    // At 80x24 the rest of the caption is bold text, centred.
    let buf = frame_buffer(&app, 80, 24);
    let frame = buffer_text(&buf);
    let (y, line) = frame
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("read_committed now sees"))
        .unwrap_or_else(|| panic!("{frame}"));
    let x = line[..line.find("read_committed").unwrap()].chars().count();
    assert!(x > 8, "centred: {line}");
    assert!(buf[(x as u16, y as u16)].modifier.contains(Modifier::BOLD));
    // v cycles through the pairs, passing over the one on screen: the
    // step shows Log+Consumers, the first pair, so the first press shows
    // Journal+Offsets and the second Log+Replicas.
    let second = |app: &App| text(app, 160, 48).lines().nth(1).unwrap().to_string();
    assert!(
        second(&app).starts_with("┌Log") && second(&app).contains("┌Consumers"),
        "{}",
        text(&app, 160, 48)
    );
    press(&mut app, "v");
    assert!(
        second(&app).starts_with("┌Transaction journal")
            && second(&app).contains("┌Consumer offsets"),
        "{}",
        text(&app, 160, 48)
    );
    press(&mut app, "v");
    assert!(
        second(&app).starts_with("┌Log") && second(&app).contains("┌Replicas"),
        "{}",
        text(&app, 160, 48)
    );
    // P again ends it; P once more starts from the step's pair.
    press(&mut app, "PP");
    assert_eq!(app.present_pick, None);
    assert!(
        text(&app, 160, 48)
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("┌Log")
    );
    press(&mut app, "P");
    assert!(!app.presenting);
    for (cols, rows) in SIZES {
        let mut app = replay(3, Lang::Zh, Theme::colored());
        press(&mut app, "P");
        let buf = frame_buffer(&app, cols, rows);
        let zh = buffer_text(&buf);
        assert!(zh.contains("结束演示") && zh.contains("说明"), "{zh}");
        // Chinese has no block font: the headline is bold text on a line
        // of its own.
        assert_eq!(block_rows(&zh), 0, "{zh}");
        let (y, line) = zh
            .lines()
            .enumerate()
            .find(|(_, l)| l.trim_matches(['│', ' ']) == "提交")
            .unwrap_or_else(|| panic!("{zh}"));
        let x = headless_col(line, "提交");
        assert!(buf[(x, y as u16)].modifier.contains(Modifier::BOLD));
        insta::assert_snapshot!(format!("presentation_{cols}x{rows}_zh"), zh);
    }
}

/// The column where `needle` starts in `line` (wide characters counted as
/// two).
fn headless_col(line: &str, needle: &str) -> u16 {
    let before = &line[..line.find(needle).unwrap()];
    before
        .chars()
        .map(|c| ratatui::text::Span::raw(c.to_string()).width() as u16)
        .sum()
}

#[test]
fn a_lesson_chooses_the_panes_and_auto_gives_the_choice_back() {
    let text_of = r#"{"mk_recording":1,"title":"present hints","cluster":{"brokers":[1],"topics":[{"name":"out","partitions":1,"replication_factor":1}]}}
{"action":{"produce":{"topic":"out","value":"a"}},"caption":"A write.","present":["journal","replicas"]}
{"action":{"produce":{"topic":"out","value":"b"}},"caption":"Another."}
{"action":{"produce":{"topic":"out","value":"c"}},"caption":"Back to the step's.","present":"auto"}
"#;
    let recording = Recording::parse("hints.jsonl", text_of).unwrap();
    let mut app = App::replay(recording, test_layout(), Lang::En, Theme::colored()).unwrap();
    press(&mut app, "P");
    let second_line = |app: &App| text(app, 160, 48).lines().nth(1).unwrap().to_string();
    for step in [1, 2] {
        app.update(Msg::Goto(step)).unwrap();
        let line = second_line(&app);
        assert!(
            line.starts_with("┌Transaction journal") && line.contains("┌Replicas"),
            "step {step}: the lesson's pair holds until the next hint: {line}"
        );
    }
    app.update(Msg::Goto(3)).unwrap();
    let line = second_line(&app);
    assert!(
        line.starts_with("┌Log") && line.contains("┌Consumers"),
        "{line}"
    );
    // A key's pick wins over the lesson's.
    app.update(Msg::Goto(1)).unwrap();
    press(&mut app, "v");
    assert!(second_line(&app).contains("┌Consumers"));
}

#[test]
fn three_themes_style_maps() {
    for palette in Palette::ALL {
        for (cols, rows) in SIZES {
            let app = replay(6, Lang::En, Theme::of(palette));
            insta::assert_snapshot!(
                format!("theme_{}_{cols}x{rows}", palette.name()),
                style_map(&frame_buffer(&app, cols, rows))
            );
        }
        let app = replay(6, Lang::Zh, Theme::of(palette));
        insta::assert_snapshot!(
            format!("theme_{}_80x24_zh", palette.name()),
            style_map(&frame_buffer(&app, 80, 24))
        );
    }
}

/// The cell of the fate glyph that starts the batch row `needle` (one
/// column wide characters only, as in the partitions pane).
fn glyph_cell<'a>(buf: &'a Buffer, needle: &str) -> &'a ratatui::buffer::Cell {
    let text = buffer_text(buf);
    let (y, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains(needle))
        .unwrap();
    let x = line[..line.find(needle).unwrap()].chars().count();
    &buf[(x as u16, y as u16)]
}

#[test]
fn light_borders_and_titles_read_on_white() {
    let theme = Theme::of(Palette::Light);
    let mut app = replay(6, Lang::En, theme);
    press(&mut app, "?");
    for (cols, rows) in SIZES {
        let buf = frame_buffer(&app, cols, rows);
        let faint = [
            Color::Reset,
            Color::Gray,
            Color::White,
            Color::DarkGray,
            Color::Yellow,
            Color::LightYellow,
            Color::Cyan,
        ];
        for cell in buf.content.iter() {
            // The frame paints its own white ground under everything.
            assert_eq!(cell.bg, Color::Indexed(231), "{cell:?}");
            assert!(!faint.contains(&cell.fg), "{cell:?} on white");
        }
        // Borders and titles are black (or the focused blue), never grey.
        let borders: Vec<Color> = buf
            .content
            .iter()
            .filter(|c| is_border(c.symbol()))
            .map(|c| c.fg)
            .collect();
        assert!(!borders.is_empty());
        assert!(
            borders
                .iter()
                .all(|c| [Color::Indexed(16), Color::Indexed(25)].contains(c)),
            "{borders:?}"
        );
    }
    // Fates stay apart.
    press(&mut app, "?");
    let buf = frame_buffer(&app, 160, 48);
    let committed = glyph_cell(&buf, "✓ 0     committed").fg;
    let aborted = glyph_cell(&buf, "✗ 2     aborted").fg;
    let control = glyph_cell(&buf, "◆ 3     control").fg;
    assert!(committed != aborted && aborted != control && committed != control);
}

#[test]
fn high_contrast_is_bold_and_thick_on_black() {
    let app = replay(6, Lang::En, Theme::of(Palette::HighContrast));
    let buf = frame_buffer(&app, 160, 48);
    assert!(buf.content.iter().all(|c| c.bg == Color::Black));
    assert!(buf.content.iter().all(|c| c.fg != Color::DarkGray));
    // The focused pane (partitions) has a thick, bold, bright border.
    let corner = &buf[(0, 1)];
    assert_eq!(corner.symbol(), "┏");
    assert!(corner.modifier.contains(Modifier::BOLD));
    assert_eq!(corner.fg, Color::LightYellow);
    // The others are white, plain lines.
    let text = buffer_text(&buf);
    let journal_x = text
        .lines()
        .nth(1)
        .unwrap()
        .chars()
        .position(|c| c == '┌')
        .unwrap();
    assert_eq!(buf[(journal_x as u16, 1)].fg, Color::White);
    for needle in ["✓ 0     committed", "✗ 2     aborted", "◆ 3     control"] {
        let cell = glyph_cell(&buf, needle);
        assert!(cell.modifier.contains(Modifier::BOLD), "{needle}: {cell:?}");
    }
    // NO_COLOR: no colour and no ground, the thick border and bold stay.
    let plain = replay(
        6,
        Lang::En,
        Theme {
            color: false,
            palette: Palette::HighContrast,
        },
    );
    let buf = frame_buffer(&plain, 160, 48);
    assert!(
        buf.content
            .iter()
            .all(|c| c.fg == Color::Reset && c.bg == Color::Reset)
    );
    assert_eq!(buf[(0, 1)].symbol(), "┏");
}

#[test]
fn the_dark_theme_draws_what_it_always_drew() {
    let app = replay(6, Lang::En, Theme::colored());
    let buf = frame_buffer(&app, 80, 24);
    assert!(
        buf.content.iter().all(|c| c.bg == Color::Reset),
        "no ground"
    );
    assert_eq!(buf[(0, 1)].fg, Color::Cyan, "the focused border");
    let bottom_left = &buf[(0, 23 - 5)];
    assert!(is_border(bottom_left.symbol()));
    assert_eq!(bottom_left.fg, Color::Gray, "an unfocused border");
}

/// The app's state that a key could change, besides the help itself.
fn behind(app: &App) -> String {
    format!(
        "step {:?} focus {} selected {:?} isolation {:?} zoom {} present {} prompt {:?} scroll {:?} quit {}",
        app.driver().map(|d| d.step()),
        app.focus,
        app.selected,
        app.isolation,
        app.zoomed,
        app.presenting,
        app.prompt,
        app.scroll,
        app.quit
    )
}

#[test]
fn the_help_is_modal_no_key_reaches_the_engine_behind_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.jsonl");
    let mut app = live(Some(&path), Lang::En);
    press(&mut app, "?");
    assert!(app.show_help);
    let recorded = std::fs::read(&path).unwrap();
    let state = behind(&app);
    let step = app.driver().unwrap().step();
    // x crashes the cluster when the help is closed; not now.
    press(&mut app, "x");
    assert_eq!(app.driver().unwrap().step(), step, "x did not crash");
    app.update(Msg::Command(KeyCommand::Crash)).unwrap();
    app.update(Msg::Command(KeyCommand::ReplicateAll)).unwrap();
    // Every other key too: letters, digits, punctuation, Enter, Tab, arrows.
    let mut keys: Vec<KeyEvent> = (' '..='~')
        .filter(|c| !"?qjk".contains(*c))
        .map(|c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
        .collect();
    keys.extend(
        [
            KeyCode::Enter,
            KeyCode::Tab,
            KeyCode::BackTab,
            KeyCode::Left,
            KeyCode::Right,
            KeyCode::Home,
            KeyCode::End,
            KeyCode::Backspace,
            KeyCode::Delete,
            KeyCode::F(2),
        ]
        .map(|c| KeyEvent::new(c, KeyModifiers::NONE)),
    );
    keys.push(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    for k in keys {
        send(&mut app, k);
        assert!(app.show_help, "{k:?} closed the help");
        assert_eq!(behind(&app), state, "{k:?} reached the screen behind");
    }
    assert_eq!(app.driver().unwrap().step(), step);
    assert_eq!(std::fs::read(&path).unwrap(), recorded, "nothing recorded");
    assert_eq!(app.status, None, "not even a status message");
    // j/k scroll the help, not the pane behind.
    press(&mut app, "jjj");
    assert_eq!(app.help_scroll, 3);
    assert_eq!(behind(&app), state);
    press(&mut app, "k");
    assert_eq!(app.help_scroll, 2);
    // Esc closes it (a ui step, as `?` is), and then x crashes.
    press(&mut app, "\u{1b}");
    assert!(!app.show_help);
    assert_eq!(app.driver().unwrap().step(), step + 1, "the help toggle");
    press(&mut app, "x");
    assert_eq!(app.driver().unwrap().step(), step + 2, "x crashed");
    // q closes the help too instead of quitting; Ctrl-C still quits.
    press(&mut app, "?q");
    assert!(!app.show_help && !app.quit);
    press(&mut app, "?");
    send(
        &mut app,
        KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
    );
    assert!(app.quit);
}

#[test]
fn the_help_scrolls_and_wraps_instead_of_cutting() {
    let mut app = live(None, Lang::En);
    app.update(Msg::Resize(80, 24)).unwrap();
    press(&mut app, "?");
    let first = text(&app, 80, 24);
    insta::assert_snapshot!("help_80x24", first);
    assert!(first.contains("↓ "), "more below: {first}");
    // The presentation line is wrapped under its key, not cut.
    assert!(
        first.contains("presentation: the step's panes above a large caption"),
        "{first}"
    );
    assert!(first.contains("(v: other"), "{first}");
    for _ in 0..40 {
        press(&mut app, "j");
    }
    let last = text(&app, 80, 24);
    assert!(last.contains("scroll the help"), "the last entry: {last}");
    assert!(last.contains("↑ "), "more above: {last}");
    assert!(!last.contains("↓ "), "nothing below: {last}");
    insta::assert_snapshot!("help_80x24_scrolled", last);
    // The last page is full, and scrolling stopped there: one k moves it.
    let at_end = app.help_scroll;
    assert_eq!(at_end, minikafka::ui::help::last_first(&app, 80, 24));
    assert!(at_end > 0 && at_end < minikafka::ui::help::entries(&app) - 1);
    press(&mut app, "k");
    assert_eq!(app.help_scroll, at_end - 1);
    assert_ne!(text(&app, 80, 24), last, "one k scrolls back at once");
    // Every line of every help entry is on some screen at 80x24, whole.
    let mut seen = String::new();
    press(&mut app, "?");
    press(&mut app, "?");
    for _ in 0..40 {
        seen.push_str(&text(&app, 80, 24));
        press(&mut app, "j");
    }
    for k in minikafka::ui::keys::COMMON_KEYS
        .iter()
        .chain(minikafka::ui::keys::LIVE_KEYS)
        .chain(minikafka::ui::keys::PROMPT_KEYS)
    {
        for word in k.en.split(' ') {
            assert!(seen.contains(word), "{:?}: {word:?} is cut", k.keys);
        }
    }
    // At 160x48 everything fits: nothing to scroll, whatever was pressed.
    press(&mut app, "jjjj");
    let wide = text(&app, 160, 48);
    let title = wide.lines().find(|l| l.contains("Help (")).unwrap();
    assert!(!title.contains('↑'), "{wide}");
    assert!(
        wide.contains("?  help") && wide.contains("scroll the help"),
        "{wide}"
    );
    insta::assert_snapshot!("help_160x48", wide);
    let mut zh = live(None, Lang::Zh);
    press(&mut zh, "?");
    insta::assert_snapshot!("help_80x24_zh", text(&zh, 80, 24));
    let mut replay_help = replay(2, Lang::En, Theme::colored());
    press(&mut replay_help, "?");
    let frame = text(&replay_help, 160, 48);
    assert!(
        frame.contains("play/pause at recorded pace") && !frame.contains("In a prompt"),
        "{frame}"
    );
}

#[test]
fn the_key_bar_says_pause_while_playing() {
    let mut app = replay(0, Lang::En, Theme::colored());
    let bar = |app: &App| text(app, 80, 24).lines().last().unwrap().to_string();
    assert!(
        bar(&app).contains("p play") && !bar(&app).contains("pause"),
        "{}",
        bar(&app)
    );
    press(&mut app, "p");
    assert!(bar(&app).contains("p pause"), "{}", bar(&app));
    app.update(Msg::Tick).unwrap();
    assert!(
        bar(&app).contains("p pause"),
        "still playing: {}",
        bar(&app)
    );
    press(&mut app, "p");
    assert!(bar(&app).contains("p play"), "{}", bar(&app));
    // Playing to the end stops, and says play again.
    press(&mut app, "p");
    for _ in 0..10 {
        app.update(Msg::Tick).unwrap();
    }
    assert!(bar(&app).contains("p play"), "{}", bar(&app));
    let mut zh = replay(0, Lang::Zh, Theme::colored());
    press(&mut zh, "p");
    assert!(text(&zh, 80, 24).contains("p 暂停"));
}

#[test]
fn the_prompt_edits_at_a_drawn_cursor() {
    let mut app = live(None, Lang::En);
    press(&mut app, "p");
    let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
    let prompt = |app: &App| app.prompt.clone().unwrap();
    let default = prompt(&app).text;
    assert!(default.starts_with("out "), "chapter 8's topic: {default}");
    // Home, past "out", Ctrl-U: the topic is gone; type another.
    send(&mut app, key(KeyCode::Home));
    for _ in 0.."out".len() {
        send(&mut app, key(KeyCode::Right));
    }
    send(
        &mut app,
        KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
    );
    assert_eq!(prompt(&app).text, default["out".len()..]);
    press(&mut app, "payments");
    assert!(
        prompt(&app).text.starts_with("payments "),
        "{:?}",
        prompt(&app)
    );
    // The cursor is drawn: the cell under it is reversed.
    let buf = frame_buffer(&app, 120, 36);
    let y = buf.area.bottom() - 1;
    let row: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
    let x = row.find("payments").unwrap() + "payments".len();
    let x = row[..x].chars().count() as u16;
    assert_eq!(
        buf[(x, y)].symbol(),
        " ",
        "under the cursor: the space after the topic"
    );
    assert!(buf[(x, y)].modifier.contains(Modifier::REVERSED));
    assert!(!buf[(x - 1, y)].modifier.contains(Modifier::REVERSED));
    // At the end the cursor is a reversed space after the text.
    send(&mut app, key(KeyCode::End));
    let buf = frame_buffer(&app, 120, 36);
    let row: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
    let end = row.find("acks=1").unwrap() + "acks=1".len();
    let end = row[..end].chars().count() as u16;
    assert!(buf[(end, y)].modifier.contains(Modifier::REVERSED));
    press(&mut app, "\n");
    let status = app.status.clone().unwrap().text;
    assert!(status.ends_with("produce: ok"), "{status}");
    let view = app.snapshot();
    assert!(
        view.partitions
            .iter()
            .any(|p| p.topic == "payments" && p.log_end_offset > 0)
    );
}

/// A layout whose partitions pane has 7 rows: fewer than the demo's five
/// partitions and their batches need.
fn short_partitions() -> Layout {
    layout::parse(
        "short-partitions.json",
        r#"{"layout":1,"name":"short-partitions","min_size":{"cols":80,"rows":24},
            "root":{"split":"vertical","children":[
              {"pane":"partitions","size":{"length":9}},
              {"pane":"events","size":{"fill":1}}]}}"#,
    )
    .unwrap()
}

#[test]
fn the_partitions_pane_shows_every_partition_and_what_was_just_written() {
    let mut app = live(None, Lang::En);
    app.layout = short_partitions();
    let names = [
        "orders-0",
        "orders-1",
        "orders-2",
        "payments-0",
        "payments-1",
    ];
    let frame = text(&app, 80, 24);
    for n in names {
        assert!(frame.contains(n), "{n}: {frame}");
    }
    // The pane opens at the top: the first partition's header is its first row.
    assert!(
        frame.lines().nth(2).unwrap().starts_with("│orders-0"),
        "{frame}"
    );
    // payments-1 is last; with too few rows for every batch, the batch just
    // written there is drawn all the same.
    press(&mut app, "p");
    send(
        &mut app,
        KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
    );
    press(&mut app, "payments newest partition=1\n");
    assert!(app.status.as_ref().unwrap().text.ends_with("produce: ok"));
    let frame = text(&app, 80, 24);
    assert!(frame.contains("[newest]"), "{frame}");
    for n in names {
        assert!(frame.contains(n), "{n}: {frame}");
    }
    insta::assert_snapshot!("partitions_follow_80x24", frame);
    // k gives the rows back to the first partitions: it was the anchor that
    // kept the new batch on screen.
    press(&mut app, "kkkk");
    assert!(!text(&app, 80, 24).contains("[newest]"));
    // Writing to orders-0 brings it back to the top one.
    press(&mut app, "p");
    send(
        &mut app,
        KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
    );
    press(&mut app, "orders again partition=0\n");
    assert!(text(&app, 80, 24).contains("[again]"));
    // j/k stop at the partitions there are: no presses lost past the end.
    // (The demo has six partitions: orders-0..2, out-0, payments-0..1.)
    press(&mut app, "jjjjjjjjjj");
    assert_eq!(app.scroll[&minikafka::ui::panes::PaneId::Partitions], 5);
    press(&mut app, "k");
    assert_eq!(app.scroll[&minikafka::ui::panes::PaneId::Partitions], 4);
}

#[test]
fn a_replay_step_keeps_its_batch_on_screen_too() {
    // The demo recording writes to payments-1 at some step: stepping onto
    // it anchors the pane there, as the live session did.
    let demo =
        Recording::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings/demo.jsonl"))
            .unwrap();
    let mut app = App::replay(demo, test_layout(), Lang::En, Theme::colored()).unwrap();
    let mut anchors = Vec::new();
    for _ in 0..app.driver().map_or(0, |_| 40) {
        press(&mut app, " ");
        anchors.push(
            app.scroll
                .get(&minikafka::ui::panes::PaneId::Partitions)
                .copied(),
        );
    }
    assert!(
        anchors.contains(&Some(4)),
        "payments-1 was written: {anchors:?}"
    );
    assert!(anchors.contains(&Some(0)), "{anchors:?}");
}

#[test]
fn scrolling_stops_at_the_end_of_what_a_pane_holds() {
    use minikafka::ui::panes::PaneId;
    let mut app = replay(6, Lang::En, Theme::colored());
    app.update(Msg::Resize(80, 24)).unwrap();
    // The caption: two wrapped rows and its title line, in two rows.
    press(&mut app, "\t\t\t\t");
    assert_eq!(app.focused(), Some(PaneId::Caption));
    let top = text(&app, 80, 24);
    assert!(top.contains("↓ 1 more"), "{top}");
    press(&mut app, "jjjjjjjjjj");
    // It stops where its last row is at the bottom: the box stays full.
    assert_eq!(app.scroll[&PaneId::Caption], 1, "the last page, not ten");
    let end = text(&app, 80, 24);
    assert!(
        end.contains("↑ 1 more") && end.contains("step 6/6 · clock"),
        "{end}"
    );
    press(&mut app, "k");
    assert_eq!(app.scroll[&PaneId::Caption], 0, "one k comes back at once");
    // Replicas and watermarks scroll by partition: one here.
    let mut app = App::replay(
        ch08(),
        layout::load("replication").unwrap(),
        Lang::En,
        Theme::colored(),
    )
    .unwrap();
    let panes = app.layout.panes();
    app.focus = panes.iter().position(|p| *p == PaneId::Replicas).unwrap();
    press(&mut app, "jjj");
    assert_eq!(app.scroll.get(&PaneId::Replicas).copied().unwrap_or(0), 0);
}

#[test]
fn presentation_of_a_held_out_lesson_shows_what_waits() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lessons/orders-pipeline.jsonl");
    let recording = Recording::load(&path).unwrap();
    let mut app = App::replay(recording, test_layout(), Lang::En, Theme::colored()).unwrap();
    // Step 6's send_offsets queues behind step 5's send, which waits for
    // broker 2: the log and what waits.
    app.update(Msg::Goto(6)).unwrap();
    press(&mut app, "P");
    for (cols, rows) in SIZES {
        let buf = frame_buffer(&app, cols, rows);
        let frame = buffer_text(&buf);
        let second = frame.lines().nth(1).unwrap();
        assert!(second.starts_with("┌Log"), "{frame}");
        if cols >= 100 {
            assert!(second.contains("┌Pending"), "{frame}");
            assert!(frame.contains("waiting for [2]"), "{frame}");
        }
        // Every block-font cell is bold in the caption's strong style.
        let blocks: Vec<_> = buf
            .content
            .iter()
            .filter(|c| ["█", "▀", "▄"].contains(&c.symbol()))
            .collect();
        // At 80 columns this headline needs more than three lines of the
        // block font: it is bold text.
        assert_eq!(blocks.len() > 50, cols >= 100, "{frame}");
        assert!(blocks.iter().all(|c| c.modifier.contains(Modifier::BOLD)));
        let ink = minikafka::ui::ink::ink(&buf, Theme::colored()).share();
        assert!(ink > 0.2, "{cols}x{rows}: {ink}");
        insta::assert_snapshot!(format!("presentation_held_out_{cols}x{rows}"), frame);
    }
}

/// A new user's trial: presenting a step recorded live (no caption) showed
/// a caption box with only the title, and at a moment of death the step
/// lost its `✝`. The slide says what the step did (its event, as the
/// Events pane says it) and the heading keeps the mark.
#[test]
fn a_live_step_is_said_by_its_event_and_a_moment_of_death_keeps_its_mark() {
    let mut app = live(None, Lang::En);
    press(&mut app, "b\nP");
    let frame = text(&app, 160, 48);
    let caption: Vec<&str> = frame
        .lines()
        .skip_while(|l| !l.contains("Caption"))
        .take_while(|l| !l.starts_with('└'))
        .collect();
    assert!(!caption.is_empty(), "{frame}");
    // The heading, then the event (`begin: ok`, set like a caption).
    let written = caption[1..]
        .iter()
        .filter(|l| l.trim_matches(['│', '└', '─', '┘', ' ']).chars().count() > 0)
        .count();
    assert!(
        written >= 2,
        "the begin step's event under the heading:\n{frame}"
    );
    press(&mut app, "x");
    let frame = text(&app, 160, 48);
    let heading = frame
        .lines()
        .skip_while(|l| !l.contains("Caption"))
        .find(|l| l.contains("step "))
        .unwrap_or_else(|| panic!("{frame}"));
    assert!(heading.contains('✝'), "{heading}\n{frame}");
}
