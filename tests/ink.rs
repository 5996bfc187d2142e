//! How much of a 160x48 screen each lesson draws on (docs/dashboard.md
//! "Ink"), in the `default` layout and in presentation mode: every
//! recording in recordings/ and the held-out lessons in tests/lessons/,
//! which are not built in, so the presentation layout is not tuned to the
//! lessons it ships with. A lesson's ink is the mean over its steps of
//! each step's frame's inked share. Prints the table; asserts that every
//! held-out lesson reaches the thresholds.

use std::path::{Path, PathBuf};

use minikafka::session::Recording;
use minikafka::ui::app::{App, Msg};
use minikafka::ui::headless::frame_buffer;
use minikafka::ui::i18n::Lang;
use minikafka::ui::ink::ink;
use minikafka::ui::keys::KeyCommand;
use minikafka::ui::layout;
use minikafka::ui::theme::Theme;

/// The default layout's threshold, and presentation mode's.
const DEFAULT_AT_LEAST: f64 = 0.18;
const PRESENTING_AT_LEAST: f64 = 0.25;
const COLS: u16 = 160;
const ROWS: u16 = 48;

fn lessons(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    out.sort();
    out
}

/// The mean ink over every step of the lesson at `path`, in the `default`
/// layout, presenting or not.
fn mean_ink(path: &Path, presenting: bool, lang: Lang) -> f64 {
    let recording = Recording::load(path).unwrap();
    let steps = recording.steps.len();
    let theme = Theme::colored();
    let mut app = App::replay(recording, layout::builtin_default(), lang, theme).unwrap();
    if presenting {
        app.update(Msg::Command(KeyCommand::TogglePresentation))
            .unwrap();
    }
    let mut sum = 0.0;
    for step in 1..=steps {
        app.update(Msg::Goto(step)).unwrap();
        sum += ink(&frame_buffer(&app, COLS, ROWS), theme).share();
    }
    sum / steps as f64
}

struct Row {
    name: String,
    held_out: bool,
    default: f64,
    presenting: f64,
}

fn table(lang: Lang) -> Vec<Row> {
    let mut rows = Vec::new();
    for (dir, held_out) in [("recordings", false), ("tests/lessons", true)] {
        for path in lessons(dir) {
            rows.push(Row {
                name: path.file_stem().unwrap().to_string_lossy().into_owned(),
                held_out,
                default: mean_ink(&path, false, lang),
                presenting: mean_ink(&path, true, lang),
            });
        }
    }
    println!("ink at {COLS}x{ROWS} ({lang:?}): lesson, default layout, presentation");
    for r in &rows {
        println!(
            "| {}{} | {:.0}% | {:.0}% |",
            r.name,
            if r.held_out { " (held out)" } else { "" },
            100.0 * r.default,
            100.0 * r.presenting
        );
    }
    let mean = |f: fn(&Row) -> f64, held: bool| {
        let v: Vec<f64> = rows.iter().filter(|r| r.held_out == held).map(f).collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    println!(
        "| mean, built in | {:.0}% | {:.0}% |\n| mean, held out | {:.0}% | {:.0}% |",
        100.0 * mean(|r| r.default, false),
        100.0 * mean(|r| r.presenting, false),
        100.0 * mean(|r| r.default, true),
        100.0 * mean(|r| r.presenting, true),
    );
    rows
}

#[test]
fn every_held_out_lesson_inks_enough_of_a_projector() {
    let rows = table(Lang::En);
    assert!(rows.iter().filter(|r| r.held_out).count() >= 3);
    for r in rows.iter().filter(|r| r.held_out) {
        assert!(
            r.default >= DEFAULT_AT_LEAST,
            "{}: {:.1}% in the default layout",
            r.name,
            100.0 * r.default
        );
        assert!(
            r.presenting >= PRESENTING_AT_LEAST,
            "{}: {:.1}% presenting",
            r.name,
            100.0 * r.presenting
        );
    }
}
