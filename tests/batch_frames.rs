//! Frames of multi-record batches (a Kafka client's batch is one engine
//! batch: `produce`/`send` with `records: [...]`), from a new user's
//! review of the panes: each drawn through the same code as the live UI
//! into ratatui's TestBackend as an insta snapshot, with the Buffer's cell
//! styles asserted where a colour means something. docs/dashboard.md says
//! what each decides.

use minikafka::session::Recording;
use minikafka::ui::app::{App, Msg};
use minikafka::ui::headless::{buffer_text, frame_buffer};
use minikafka::ui::i18n::Lang;
use minikafka::ui::layout;
use minikafka::ui::theme::Theme;
use serde_json::{Value, json};

/// `n` records `{prefix}0..`, every other one keyed.
fn records(prefix: &str, n: usize) -> Value {
    (0..n)
        .map(|i| {
            if i % 2 == 1 {
                json!({"key": "k", "value": format!("{prefix}{i}")})
            } else {
                json!({"value": format!("{prefix}{i}")})
            }
        })
        .collect()
}

/// A recording of `actions` on topic `out` (`partitions` of three
/// replicas), one step each.
fn recording(partitions: u32, actions: &[Value]) -> Recording {
    let header = json!({
        "mk_recording": 1,
        "title": "batches",
        "rules": "minikafka",
        "cluster": {"brokers": [1, 2, 3],
                    "topics": [{"name": "out", "partitions": partitions,
                                "replication_factor": 3}],
                    "config": {}},
    });
    let mut text = header.to_string();
    for (i, a) in actions.iter().enumerate() {
        text.push('\n');
        text.push_str(&json!({"at_ms": i * 100, "action": a}).to_string());
    }
    text.push('\n');
    Recording::parse("batches.jsonl", &text).unwrap()
}

fn replay(rec: Recording, step: usize) -> App {
    let mut app = App::replay(
        rec,
        layout::builtin_default(),
        Lang::En,
        Theme::colored(),
    )
    .unwrap();
    app.update(Msg::Goto(step)).unwrap();
    app
}

/// Where `what` starts in the frame: (column, row) in cells.
fn find(text: &str, what: &str) -> Option<(u16, u16)> {
    text.lines().enumerate().find_map(|(y, l)| {
        l.find(what)
            .map(|i| (l[..i].chars().count() as u16, y as u16))
    })
}

/// The Log pane's lines of `text` (from its top border to its bottom).
fn log_pane(text: &str) -> Vec<&str> {
    text.lines()
        .skip_while(|l| !l.starts_with("┌Log"))
        .take_while(|l| !l.starts_with('└'))
        .collect()
}

/// An 8-record batch and a 5-record transactional batch on out-0: the log
/// pane draws one cell per record, and every record cell shows its value
/// (a frame used to read only a batch's first four, so r4..r7 and t4 were
/// blank cells).
#[test]
fn every_record_cell_of_a_batch_shows_its_value() {
    let rec = recording(
        2,
        &[
            json!({"produce": {"topic": "out", "partition": 0,
                               "records": records("r", 8), "acks": "1"}}),
            json!({"replicate": {"broker": 2}}),
            json!({"replicate": {"broker": 3}}),
            json!({"begin": {"txn": "tx"}}),
            json!({"send": {"txn": "tx", "topic": "out", "partition": 0,
                            "records": records("t", 5)}}),
        ],
    );
    let app = replay(rec, 5);
    let buf = frame_buffer(&app, 160, 48);
    let text = buffer_text(&buf);
    insta::assert_snapshot!("record_cells_160x48", text);
    let log = log_pane(&text).join("\n");
    for v in (0..8).map(|i| format!("✓r{i}")).chain((0..5).map(|i| format!("↑t{i}"))) {
        assert!(log.contains(&v), "{v} drawn:\n{log}");
    }
    // The followers hold the same batch: their cells have its values too.
    assert_eq!(log.matches("✓r7").count(), 3, "{log}");
    // The fifth record's cell in its fate's colour (committed).
    let (x, y) = find(&text, "✓r4").unwrap();
    let fate = minikafka::session::snapshot::Fate::Committed;
    assert_eq!(Some(buf[(x, y)].fg), Theme::colored().fate(fate).fg);
    // At 80x24 too, where the cells are narrower.
    let text = buffer_text(&frame_buffer(&app, 80, 24));
    let log = log_pane(&text).join("\n");
    assert!(log.contains("✓r7") || log.contains("· batches"), "{log}");
}

/// An 80-record batch, then an ongoing transaction's 30-record batch, all
/// replicated: read_uncommitted reads 110 records, read_committed 80 (the
/// LSO holds it back). The consumers pane lists the first 64 values of
/// each, with `…` after, but counts the real numbers, and colours the
/// read_committed count "waiting" because it is behind (both used to say
/// `(64)`, the list's cap, in the same colour).
#[test]
fn the_consumers_pane_counts_every_record_a_consumer_reads() {
    let rec = recording(
        1,
        &[
            json!({"produce": {"topic": "out", "partition": 0,
                               "records": records("a", 80), "acks": "1"}}),
            json!({"begin": {"txn": "tx"}}),
            json!({"send": {"txn": "tx", "topic": "out", "partition": 0,
                            "records": records("t", 30)}}),
            json!({"replicate": {"broker": 2}}),
            json!({"replicate": {"broker": 3}}),
        ],
    );
    let app = replay(rec, 5);
    let view = app.snapshot();
    let counts = view.consumers.count("out-0");
    assert_eq!((counts.read_uncommitted, counts.read_committed), (110, 80));
    assert_eq!(view.consumers.read_uncommitted["out-0"].len(), 64, "bounded list");
    let buf = frame_buffer(&app, 160, 48);
    let text = buffer_text(&buf);
    insta::assert_snapshot!("consumer_counts_160x48", text);
    let theme = Theme::colored();
    let (x, y) = find(&text, "out-0 (110)").expect("the real count");
    assert_ne!(Some(buf[(x, y)].fg), theme.waiting().fg);
    let (x, y) = find(&text, "out-0 (80)").expect("the real count");
    assert_eq!(Some(buf[(x, y)].fg), theme.waiting().fg, "behind: waiting");
    assert_ne!(theme.waiting().fg, theme.good().fg);
    assert!(!text.contains("(64)"), "{text}");
}
