//! The screen follows the lesson (docs/dashboard.md "Following the step"):
//! at every step of every recording in `recordings/`, in its own layout and
//! in the default one, at 160x48 and at 80x24, every pane that lists
//! partitions (log, consumers, partitions, replicas, watermarks) draws the
//! partition the step touched, marked `▸` in the changed mark's colour;
//! the consumers pane shows it under both isolation levels, and the log
//! pane its leader's row. Scroll keys still move a pane away from it, and
//! the next step brings it back.

use std::path::Path;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

use minikafka::session::Recording;
use minikafka::ui::app::{App, Msg};
use minikafka::ui::headless::frame_buffer;
use minikafka::ui::i18n::Lang;
use minikafka::ui::keys::KeyCommand;
use minikafka::ui::layout::{self, Layout};
use minikafka::ui::panes::PaneId;
use minikafka::ui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

const SIZES: [(u16, u16); 2] = [(160, 48), (80, 24)];

const LISTING: [PaneId; 5] = [
    PaneId::Log,
    PaneId::Consumers,
    PaneId::Partitions,
    PaneId::Replicas,
    PaneId::Watermarks,
];

fn recordings() -> Vec<(String, Recording)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            (name, Recording::load(&p).unwrap_or_else(|e| panic!("{e}")))
        })
        .collect()
}

/// The cells of row `y` of `rect`'s inside (its borders left out), as
/// (column, symbol).
fn inside_row(buf: &Buffer, rect: Rect, y: u16) -> Vec<(u16, String)> {
    (rect.x + 1..rect.right() - 1)
        .map(|x| (x, buf[(x, y)].symbol().to_string()))
        .collect()
}

/// The columns in row `y` of `rect` where `▸` is followed by `name` and
/// then a character that cannot continue a partition's name.
fn marked_at(buf: &Buffer, rect: Rect, y: u16, name: &str) -> Vec<u16> {
    let cells = inside_row(buf, rect, y);
    let want: Vec<String> = std::iter::once("▸".to_string())
        .chain(name.chars().map(String::from))
        .collect();
    (0..cells.len())
        .filter(|&i| {
            cells.len() >= i + want.len()
                && cells[i..i + want.len()]
                    .iter()
                    .zip(&want)
                    .all(|((_, s), w)| s == w)
                && cells
                    .get(i + want.len())
                    .is_none_or(|(_, s)| !s.chars().all(|c| c.is_ascii_digit()))
        })
        .map(|i| cells[i].0)
        .collect()
}

/// Where `pane` (drawn in `rect`) marks partition `name`: the rows and
/// columns of its marks.
fn marks(buf: &Buffer, rect: Rect, name: &str) -> Vec<(u16, u16)> {
    (rect.y + 1..rect.bottom() - 1)
        .flat_map(|y| {
            marked_at(buf, rect, y, name)
                .into_iter()
                .map(move |x| (x, y))
        })
        .collect()
}

fn check(app: &mut App, buf: &Buffer, at: &str, name: &str, theme: Theme) -> Result<usize, String> {
    let map = app.frame_map().expect("the size is known").clone();
    let mut checked = 0;
    for &(pane, rect) in &map.panes {
        if !LISTING.contains(&pane) {
            continue;
        }
        let found = marks(buf, rect, name);
        let inner_height = rect.height.saturating_sub(2);
        let text = || -> String {
            (rect.y..rect.bottom())
                .map(|y| {
                    inside_row(buf, rect, y)
                        .into_iter()
                        .map(|(_, s)| s)
                        .collect::<String>()
                        + "\n"
                })
                .collect()
        };
        let Some(&(x, y)) = found.first() else {
            return Err(format!("{at}: {pane:?} does not mark {name}:\n{}", text()));
        };
        if buf[(x, y)].fg != theme.changed_mark().fg.unwrap() {
            return Err(format!(
                "{at}: {pane:?}'s mark is not in the changed colour"
            ));
        }
        // The consumers pane: both isolation levels, on one row, each
        // heading with its count, and a row of values under; or, too
        // narrow for that, one line with both counts (`▸out-0 3 · 2`).
        let row: String = inside_row(buf, rect, y)
            .into_iter()
            .map(|(_, s)| s)
            .collect();
        let counts = row.matches(" (").count();
        let columns = found.len() == 2 && found[1].1 == y && counts == 2;
        let summary = found.len() == 1 && row.contains(" · ");
        match pane {
            PaneId::Consumers if !columns && !summary => {
                return Err(format!(
                    "{at}: consumers shows {name} {found:?}\n{}",
                    text()
                ));
            }
            // A row under the heading where the pane has one to give (at
            // 80x24 the default layout's consumers pane has two: the
            // levels' names and the headings with their counts).
            PaneId::Consumers | PaneId::Log
                if (columns && inner_height >= 3 || pane == PaneId::Log && inner_height >= 2)
                    && y + 1 >= rect.bottom() - 1 =>
            {
                return Err(format!(
                    "{at}: {pane:?} shows {name}'s heading alone\n{}",
                    text()
                ));
            }
            _ => {}
        }
        checked += 1;
    }
    Ok(checked)
}

#[test]
fn every_pane_that_lists_partitions_shows_the_touched_one_at_every_step() {
    let theme = Theme::colored();
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut steps_followed = 0;
    for (name, recording) in recordings() {
        let own = recording.header.layout.clone().unwrap_or("default".into());
        let mut layouts = vec![own.clone()];
        if own != "default" {
            layouts.push("default".into());
        }
        for layout_name in &layouts {
            for (cols, rows) in SIZES {
                let look: Layout = layout::load(layout_name).unwrap();
                let mut app =
                    App::replay_every(recording.clone(), usize::MAX, look, Lang::En, theme)
                        .unwrap();
                app.update(Msg::Resize(cols, rows)).unwrap();
                for step in 1..=recording.steps.len() {
                    app.goto_step(step).unwrap();
                    let Some(p) = app.touched_partition() else {
                        continue;
                    };
                    steps_followed += 1;
                    let partition = app.view().partitions[p].name();
                    let buf = frame_buffer(&app, cols, rows);
                    let at = format!("{name} ({layout_name}, {cols}x{rows}) step {step}");
                    match check(&mut app, &buf, &at, &partition, theme) {
                        Ok(n) => checked += n,
                        Err(e) => failures.push(e),
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures, the first:\n{}",
        failures.len(),
        failures
            .iter()
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // Every recording has steps that touch a partition, and each was
    // looked for in at least two panes.
    assert!(
        steps_followed > 100 && checked >= 2 * steps_followed,
        "{steps_followed} {checked}"
    );
}

fn press(app: &mut App, keys: &str) {
    for c in keys.chars() {
        let code = if c == '\n' {
            KeyCode::Enter
        } else {
            KeyCode::Char(c)
        };
        let event = Event::Key(KeyEvent::new(code, KeyModifiers::NONE));
        if let Some(msg) = minikafka::ui::run::message(app, &event) {
            app.update(msg).unwrap();
        }
    }
}

/// The live demo (`mk-tui`'s own cluster), where `out` is the 4th of 6
/// partitions: after `b`, `s`, `r` the log and consumers panes show `out`
/// at 80x24 without a key, marked (under `NO_COLOR` too, by the glyph);
/// scrolling the log away works, and the next step brings it back.
#[test]
fn the_live_demo_follows_out_and_keys_still_scroll_away() {
    let demo = minikafka::demo::recording();
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
        Theme::plain(),
    );
    app.update(Msg::Resize(80, 24)).unwrap();
    press(&mut app, "b\ns\nr");
    let out = app.touched_partition().expect("the replicate touched out");
    assert_eq!(app.view().partitions[out].name(), "out-0");
    assert_eq!(out, 3, "the 4th of 6");
    let map = app.frame_map().unwrap().clone();
    let rect = |pane| map.panes.iter().find(|(p, _)| *p == pane).unwrap().1;
    let buf = frame_buffer(&app, 80, 24);
    assert!(!marks(&buf, rect(PaneId::Log), "out-0").is_empty());
    assert!(!marks(&buf, rect(PaneId::Consumers), "out-0").is_empty());
    // The title bar names the program once: the demo's title starts with it.
    let text = minikafka::ui::headless::buffer_text(&buf);
    let title = text.lines().next().unwrap();
    assert!(title.starts_with(" mk-tui demo cluster │ live"), "{title}");
    // Scroll the log away from it with its keys.
    while app.focused() != Some(PaneId::Log) {
        app.update(Msg::Command(KeyCommand::FocusNext)).unwrap();
    }
    // NO_COLOR: the focused pane's border is thick, the others' plain.
    let buf = frame_buffer(&app, 80, 24);
    let corner = |pane| {
        let r = rect(pane);
        buf[(r.x, r.y)].symbol().to_string()
    };
    assert_eq!(corner(PaneId::Log), "┏");
    assert_eq!(corner(PaneId::Consumers), "┌");
    let followed = app.scroll.get(&PaneId::Log).copied().unwrap_or(0);
    assert!(followed > 0, "the log scrolled to out by itself");
    for _ in 0..followed {
        app.update(Msg::Command(KeyCommand::ScrollUp)).unwrap();
    }
    assert_eq!(app.scroll.get(&PaneId::Log).copied(), Some(0));
    let buf = frame_buffer(&app, 80, 24);
    assert!(marks(&buf, rect(PaneId::Log), "out-0").is_empty());
    // The next step that touches `out` follows again.
    press(&mut app, "c\n");
    assert_eq!(app.touched_partition(), Some(out));
    let buf = frame_buffer(&app, 80, 24);
    assert!(!marks(&buf, rect(PaneId::Log), "out-0").is_empty());
}
