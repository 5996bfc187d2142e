//! The producer's accumulator on screen (E17): the pending pane draws each
//! batch filling in a producer's accumulator, with its records, its bytes
//! against `batch_size` and when its linger runs out, in the accumulating
//! colour, and "due" in the waiting colour once the clock has passed its
//! linger (the next `advance_clock` sends it); a batch sent is gone from
//! the pane. Frames in English and Chinese are snapshotted.

use std::path::Path;

use minikafka::session::snapshot::Snapshot;
use minikafka::session::{Action, Driver, Recording};
use minikafka::ui::i18n::Lang;
use minikafka::ui::panes::{self, PaneContext, PaneId};
use minikafka::ui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;

fn lesson() -> Recording {
    Recording::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings/ch03-batching.jsonl"))
        .unwrap()
}

/// The state after `steps` of the lesson, then `more` actions.
fn state_after(steps: usize, more: &[serde_json::Value]) -> Snapshot {
    let recording = lesson();
    let mut driver = Driver::new(&recording.header, None).unwrap();
    for step in &recording.steps[..steps] {
        driver.apply(&step.action);
    }
    for a in more {
        driver.apply(&Action::from_json(a).unwrap());
    }
    Snapshot::of(&driver)
}

fn ctx(lang: Lang) -> PaneContext {
    PaneContext {
        lang,
        theme: Theme::colored(),
        focused: false,
        scroll: 0,
        selected: None,
        isolation: Default::default(),
        touched: None,
    }
}

/// The pending pane alone, drawn through a `TestBackend` terminal.
fn pane(s: &Snapshot, lang: Lang, w: u16, h: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal
        .draw(|f| panes::render(PaneId::Pending, s, &ctx(lang), f.area(), f.buffer_mut()))
        .unwrap();
    terminal.backend().buffer().clone()
}

fn text(buf: &Buffer) -> String {
    (0..buf.area.height)
        .map(|y| {
            let row: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
            row.trim_end().to_string() + "\n"
        })
        .collect()
}

/// The cell where `needle` starts on the pane, if drawn.
fn find(buf: &Buffer, needle: &str) -> Option<(u16, u16)> {
    (0..buf.area.height).find_map(|y| {
        let row: Vec<&str> = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        let line: String = row.concat();
        line.find(needle).map(|byte| {
            let col = line[..byte].chars().count() as u16;
            (col, y)
        })
    })
}

#[test]
fn a_batch_filling_is_drawn_in_the_accumulating_colour() {
    let s = state_after(2, &[]);
    let buf = pane(&s, Lang::En, 50, 5);
    let drawn = text(&buf);
    assert!(
        drawn.contains("▤ p events-0 2 rec 80/120 B linger to 100 ms"),
        "{drawn}"
    );
    let (x, y) = find(&buf, "▤").expect("the batch is drawn");
    assert_eq!(buf[(x, y)].fg, Color::Cyan, "accumulating colour");
    assert_eq!(buf[(x + 2, y)].fg, Color::Cyan);
    insta::assert_snapshot!("pending_pane_batch_filling", drawn);
}

#[test]
fn a_batch_past_its_linger_is_due_in_the_waiting_colour() {
    // linger 0: the record is due at once, and waits for the clock to move.
    let s = state_after(
        0,
        &[
            serde_json::json!({"accumulate":{"producer":"q","topic":"events","partition":1,"value":"z","linger_ms":0}}),
        ],
    );
    let buf = pane(&s, Lang::En, 44, 5);
    let drawn = text(&buf);
    assert!(
        drawn.contains("▤ q events-1 1 rec 40/16384 B due"),
        "{drawn}"
    );
    let (x, y) = find(&buf, "▤").unwrap();
    assert_eq!(buf[(x, y)].fg, Color::Yellow, "due: the waiting colour");
    // The next advance_clock, even of 0 ms, sends it: the pane is empty.
    let s = state_after(
        0,
        &[
            serde_json::json!({"accumulate":{"producer":"q","topic":"events","partition":1,"value":"z","linger_ms":0}}),
            serde_json::json!({"advance_clock":{"ms":0}}),
        ],
    );
    assert!(s.accumulators.is_empty());
    assert!(text(&pane(&s, Lang::En, 44, 5)).contains("nothing pending"));
}

#[test]
fn the_linger_goes_on_its_own_line_when_narrow_and_in_chinese() {
    let s = state_after(5, &[]);
    let buf = pane(&s, Lang::En, 30, 5);
    let drawn = text(&buf);
    assert!(drawn.contains("▤ p events-1 1 rec 40/120 B"), "{drawn}");
    assert!(drawn.contains("  linger to 150 ms"), "{drawn}");
    let zh = text(&pane(&s, Lang::Zh, 40, 5));
    assert!(zh.contains("条"), "{zh}");
    insta::assert_snapshot!("pending_pane_batch_filling_narrow", drawn);
    insta::assert_snapshot!("pending_pane_batch_filling_zh", zh);
}
