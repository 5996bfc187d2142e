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
    let mut app = App::replay(rec, layout::builtin_default(), Lang::En, Theme::colored()).unwrap();
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
    for v in (0..8)
        .map(|i| format!("✓r{i}"))
        .chain((0..5).map(|i| format!("▵t{i}")))
    {
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
    assert_eq!(
        view.consumers.read_uncommitted["out-0"].len(),
        64,
        "bounded list"
    );
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

/// After an abort read_committed reads fewer records than read_uncommitted
/// and is up to date all the same: its count is drawn in the "good" colour,
/// not the "waiting" one (which says the LSO holds records back).
#[test]
fn read_committed_after_an_abort_is_not_behind() {
    let rec = recording(
        1,
        &[
            json!({"produce": {"topic": "out", "partition": 0, "value": "a", "acks": "1"}}),
            json!({"begin": {"txn": "tx"}}),
            json!({"send": {"txn": "tx", "topic": "out", "partition": 0, "value": "t"}}),
            json!({"replicate": {"broker": 2}}),
            json!({"replicate": {"broker": 3}}),
            json!({"abort": {"txn": "tx"}}),
            json!({"replicate": {"broker": 2}}),
            json!({"replicate": {"broker": 3}}),
        ],
    );
    let app = replay(rec, 8);
    let view = app.snapshot();
    let counts = view.consumers.count("out-0");
    assert_eq!((counts.read_uncommitted, counts.read_committed), (2, 1));
    let p = view
        .partitions
        .iter()
        .find(|p| p.name() == "out-0")
        .unwrap();
    assert_eq!(p.last_stable_offset, p.high_watermark, "nothing held back");
    let buf = frame_buffer(&app, 160, 48);
    let text = buffer_text(&buf);
    let theme = Theme::colored();
    let (x, y) = find(&text, "out-0 (1)").expect("read_committed's count");
    assert_eq!(Some(buf[(x, y)].fg), theme.good().fg, "up to date:\n{text}");
}

/// Ten 3-record batches on out-1, the oldest selected (the new form of a
/// `ui` step, by partition and base offset), then a write to out-0 (an
/// earlier partition) and one to out-1.
fn selection_recording(select: Value) -> Recording {
    let mut actions: Vec<Value> = (0..10)
        .map(|i| {
            let recs: Vec<Value> = (0..3)
                .map(|j| json!({"value": format!("b{i}-{j}")}))
                .collect();
            json!({"produce": {"topic": "out", "partition": 1, "records": recs, "acks": "1"}})
        })
        .collect();
    actions.push(json!({"ui": {"select": select}}));
    actions.push(json!({"produce": {"topic": "out", "partition": 0, "value": "x", "acks": "1"}}));
    actions.push(json!({"produce": {"topic": "out", "partition": 1,
                                    "records": [{"value": "new0"}, {"value": "new1"}],
                                    "acks": "1"}}));
    recording(2, &actions)
}

/// The selected batch stays the same batch when a client writes to an
/// earlier partition (it was a global row index, so out-1@0 became
/// out-0@0), and the batch a client just wrote is still drawn with a
/// selection anchored, at 160x48 and 80x24. A recording's old bare index
/// still reads, as the row it names.
#[test]
fn the_selection_is_a_batch_and_the_new_batch_is_still_drawn() {
    use minikafka::session::ui_step::{BatchRef, Selection};
    let rec = selection_recording(json!({"partition": "out-1", "offset": 0}));
    let mut app = replay(rec, 11);
    let out1_0 = Selection::Batch(BatchRef {
        partition: "out-1".into(),
        offset: 0,
    });
    assert_eq!(app.selected, out1_0);
    assert_eq!(app.selected_row(), Some(0), "out-0 is empty yet");
    let explanation = |app: &App| {
        let text = buffer_text(&frame_buffer(app, 160, 48));
        text.lines()
            .find(|l| l.contains("offset"))
            .map(|l| l.chars().take(58).collect::<String>())
            .unwrap_or_default()
    };
    let before = explanation(&app);
    app.update(Msg::Goto(12)).unwrap();
    assert_eq!(app.selected, out1_0, "a write to out-0 does not move it");
    assert_eq!(app.selected_row(), Some(1), "one row further down now");
    assert_eq!(explanation(&app), before);
    // The selected row is drawn reversed: out-1's 0-2.
    let buf = frame_buffer(&app, 160, 48);
    let text = buffer_text(&buf);
    let (x, y) = find(&text, " 0-2 ").unwrap();
    assert!(
        buf[(x + 1, y)]
            .modifier
            .contains(ratatui::style::Modifier::REVERSED)
    );
    // The step that writes to out-1 again: its new batch is drawn, marked.
    app.update(Msg::Goto(13)).unwrap();
    for (cols, rows, name) in [
        (160, 48, "selection_new_batch_160x48"),
        (80, 24, "selection_new_batch_80x24"),
    ] {
        let buf = frame_buffer(&app, cols, rows);
        let text = buffer_text(&buf);
        insta::assert_snapshot!(name, text);
        let pane: Vec<&str> = text
            .lines()
            .skip(1)
            .take_while(|l| !l.starts_with('└'))
            .collect();
        let row = pane
            .iter()
            .find(|l| l.contains("30-31"))
            .unwrap_or_else(|| panic!("the new batch at {cols}x{rows}:\n{text}"));
        assert!(row.contains('▸'), "{row}");
        let (x, y) = find(&text, "30-31").unwrap();
        assert!(
            buf[(x, y)]
                .modifier
                .contains(ratatui::style::Modifier::BOLD)
        );
    }
    assert_eq!(app.selected, out1_0);
    // The old form: row 1 (all windows counted), as before.
    let old = replay(selection_recording(json!(1)), 11);
    assert_eq!(old.selected, Selection::Row(1));
    assert_eq!(old.selected_row(), Some(1));
}

/// A 50-record batch, a single record and a 10,000-record batch: the log
/// pane (one cell per batch) says each multi-record cell's count
/// (`a0…×50`), the partitions pane each row's (`0-49 ×50`), with the
/// offsets column as wide as the widest range shown so the rows stay in
/// columns.
#[test]
fn a_batch_says_how_many_records_it_holds() {
    let rec = recording(
        1,
        &[
            json!({"produce": {"topic": "out", "partition": 0,
                               "records": records("a", 50), "acks": "1"}}),
            json!({"produce": {"topic": "out", "partition": 0, "value": "solo", "acks": "1"}}),
            json!({"produce": {"topic": "out", "partition": 0,
                               "records": records("b", 10_000), "acks": "1"}}),
        ],
    );
    let app = replay(rec, 3);
    let buf = frame_buffer(&app, 160, 48);
    let text = buffer_text(&buf);
    insta::assert_snapshot!("batch_counts_160x48", text);
    let log = log_pane(&text).join("\n");
    assert!(log.contains("1 cell = 1 batch"), "{log}");
    for cell in ["│▵a0…×50 ", "│▵solo ", "▸▵b0…×10000 "] {
        assert!(log.contains(cell), "{cell}:\n{log}");
    }
    assert!(!log.contains("solo…") && !log.contains("solo×"), "{log}");
    // The partitions pane: the count after the range, the fate labels in
    // one column whatever the range's width.
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("above HW   · -"))
        .collect();
    assert_eq!(rows.len(), 3, "{text}");
    assert!(rows[0].contains(" 0-49 ×50 ") && rows[2].contains(" 51-10050 ×10000 "));
    assert!(
        rows[1].contains(" 50 ") && !rows[1].contains("×1"),
        "{}",
        rows[1]
    );
    let label_at: Vec<usize> = rows
        .iter()
        .map(|r| r[..r.find("above HW").unwrap()].chars().count())
        .collect();
    assert!(label_at.windows(2).all(|w| w[0] == w[1]), "{rows:#?}");
    // Narrow (80x24): the count is kept over the value.
    let text = buffer_text(&frame_buffer(&app, 80, 24));
    let log = log_pane(&text).join("\n");
    assert!(log.contains("×50") && log.contains("×10000"), "{log}");
}

/// One cell per record: a changed batch of five records is marked `▸`
/// once, at its boundary, and keeps its `┊` record separators, so it still
/// reads as one batch; its cells are all drawn in the changed style.
#[test]
fn a_changed_batch_keeps_its_record_separators() {
    let rec = recording(
        1,
        &[
            json!({"produce": {"topic": "out", "partition": 0,
                               "records": records("r", 3), "acks": "1"}}),
            json!({"produce": {"topic": "out", "partition": 0,
                               "records": records("t", 5), "acks": "1"}}),
        ],
    );
    let app = replay(rec, 2);
    let buf = frame_buffer(&app, 160, 48);
    let text = buffer_text(&buf);
    insta::assert_snapshot!("changed_batch_160x48", text);
    let leader = log_pane(&text)
        .into_iter()
        .find(|l| l.contains("1 ldr"))
        .unwrap()
        .to_string();
    assert!(
        leader.contains("┊▵r1") && leader.contains("│▵r0"),
        "{leader}"
    );
    assert_eq!(leader.matches('▸').count(), 1, "{leader}");
    assert!(leader.contains("▸▵t0"), "{leader}");
    for i in 1..5 {
        assert!(leader.contains(&format!("┊▵t{i}")), "t{i}: {leader}");
    }
    let theme = Theme::colored();
    let (x, y) = find(&text, "┊▵t3").unwrap();
    assert_eq!(buf[(x, y)].symbol(), "┊");
    assert!(
        buf[(x + 1, y)]
            .modifier
            .contains(ratatui::style::Modifier::BOLD)
    );
    let (x, y) = find(&text, "▸▵t0").unwrap();
    assert_eq!(Some(buf[(x, y)].fg), theme.changed_mark().fg);
}

/// A 50-record acks=all produce waiting for broker 2: the pending pane
/// says what waits (partition, offsets and record count) and for whom,
/// on a second line where the pane is narrow; the state JSON carries the
/// batch too.
#[test]
fn the_pending_pane_says_what_waits() {
    let rec = recording(
        1,
        &[
            json!({"produce": {"topic": "out", "partition": 0,
                               "records": records("a", 50), "acks": "1"}}),
            json!({"replicate": {"broker": 2}}),
            json!({"replicate": {"broker": 3}}),
            json!({"produce": {"topic": "out", "partition": 0,
                               "records": records("b", 50), "acks": "all"}}),
            json!({"replicate": {"broker": 3}}),
        ],
    );
    let app = replay(rec, 5);
    let view = app.snapshot();
    assert_eq!(view.pending.len(), 1);
    assert_eq!(view.pending[0].batches[0].text(), "out-0@50-99 (50)");
    let buf = frame_buffer(&app, 160, 48);
    let text = buffer_text(&buf);
    insta::assert_snapshot!("pending_batch_160x48", text);
    let (x, y) = find(&text, "… step 4 produce out-0@50-99 (50)").expect("what waits");
    assert_eq!(Some(buf[(x, y)].fg), Theme::colored().waiting().fg);
    // Under it (the pane is 38 columns wide here), for whom.
    let below: String = text
        .lines()
        .nth(usize::from(y) + 1)
        .unwrap()
        .chars()
        .skip(usize::from(x))
        .take(20)
        .collect();
    assert!(below.starts_with("  waiting for [2]"), "{below:?}\n{text}");
    // Wide enough, one line.
    let wide = minikafka::ui::headless::buffer_text(&frame_buffer(&app, 240, 60));
    assert!(
        wide.contains("… step 4 produce out-0@50-99 (50) waiting for [2]"),
        "{wide}"
    );
    let state: Value = serde_json::from_str(&view.to_json()).unwrap();
    assert_eq!(
        state["pending"][0]["batches"][0],
        json!({"partition": "out-0", "base_offset": 50, "last_offset": 99})
    );
}

/// A transaction's 5-record batch decided then committed, and a 50-record
/// plain batch selected: the events and the explanation name each batch by
/// its range (`out-0@0-4 now decided`, `plain data at offsets 6-55 < LSO
/// 56`), never its base offset alone, in English and in Chinese.
#[test]
fn sentences_name_a_batch_by_its_range() {
    let actions = [
        json!({"begin": {"txn": "tx"}}),
        json!({"send": {"txn": "tx", "topic": "out", "partition": 0,
                        "records": records("t", 5)}}),
        json!({"replicate": {"broker": 2}}),
        json!({"replicate": {"broker": 3}}),
        json!({"commit": {"txn": "tx"}}),
        json!({"replicate": {"broker": 2}}),
        json!({"replicate": {"broker": 3}}),
        json!({"produce": {"topic": "out", "partition": 0,
                           "records": records("p", 50), "acks": "1"}}),
        json!({"replicate": {"broker": 2}}),
        json!({"replicate": {"broker": 3}}),
        json!({"ui": {"select": {"partition": "out-0", "offset": 6}}}),
    ];
    let events = |app: &App| -> Vec<(String, String)> {
        let c = app.snapshot().changes;
        c.sentences.into_iter().zip(c.sentences_zh).collect()
    };
    let app = replay(recording(1, &actions), 5);
    let said = events(&app);
    assert!(
        said.contains(&(
            "out-0@0-4 now decided, not complete yet".into(),
            "out-0@0-4 现在已决定，尚未完成".into()
        )),
        "{said:?}"
    );
    // Decided, its COMMIT marker in the leader's log but not yet
    // acknowledged: the explanation says it is not complete until the
    // marker is written and acknowledged, not that the marker is missing.
    let mut view = app.snapshot();
    let batches = &view.partitions[0].batches;
    assert!(batches.iter().any(|b| b.control.is_some()), "{batches:?}");
    let first = batches.iter().position(|b| b.base_offset == 0).unwrap();
    app.session().source().explain(&mut view, 0, first);
    let why = &view.partitions[0].batches[first];
    assert!(
        why.explanation.contains(
            "decided, but not complete until its marker on out-0 is written and acknowledged"
        ) && !why.explanation.contains("missing"),
        "{}",
        why.explanation
    );
    assert!(
        why.explanation_zh.contains("写入并确认之前还没有完成"),
        "{}",
        why.explanation_zh
    );
    let app = replay(recording(1, &actions), 7);
    assert!(
        events(&app)
            .iter()
            .any(|(en, zh)| en == "out-0@0-4 now committed" && zh == "out-0@0-4 现在已提交"),
        "{:?}",
        events(&app)
    );
    let app = replay(recording(1, &actions), 11);
    let view = app.snapshot();
    let b = view.partitions[0]
        .batches
        .iter()
        .find(|b| b.base_offset == 6)
        .unwrap();
    assert_eq!(
        b.explanation,
        "plain data at offsets 6-55 < LSO 56: every consumer reads it"
    );
    assert_eq!(
        b.explanation_zh,
        "普通数据，offset 6-55 < LSO 56：所有消费者都能读到"
    );
    let text = buffer_text(&frame_buffer(&app, 160, 48));
    insta::assert_snapshot!("range_explained_160x48", text);
    assert!(
        text.contains("plain data at offsets 6-55 < LSO 56"),
        "{text}"
    );
    // One record: one offset, as before.
    let single = replay(
        recording(
            1,
            &[json!({"produce": {"topic": "out", "partition": 0, "value": "x"}})],
        ),
        1,
    );
    // Nothing selected: the frame's snapshot decided the fate but made no
    // sentence; the source makes the one asked for.
    let mut view = single.snapshot();
    assert_eq!(
        view.partitions[0].batches[0].fate,
        minikafka::session::snapshot::Fate::AboveHighWatermark
    );
    assert_eq!(view.partitions[0].batches[0].explanation, "");
    single.session().source().explain(&mut view, 0, 0);
    let b = &view.partitions[0].batches[0];
    assert!(
        b.explanation.starts_with("offset 0 >= HW 0"),
        "{}",
        b.explanation
    );
    let mut zh = App::replay(
        recording(1, &actions),
        layout::builtin_default(),
        Lang::Zh,
        Theme::colored(),
    )
    .unwrap();
    zh.update(Msg::Goto(11)).unwrap();
    let text = buffer_text(&frame_buffer(&zh, 160, 48));
    assert!(text.contains("offset 6-55 < LSO 56"), "{text}");
}

/// The clients pane at 160 columns (the `clients` layout), a producer's
/// batch waiting in the cluster: the request in flight is drawn whole,
/// `Produce v9 waiting in the cluster`, the columns as wide as their
/// values, and where the pane is narrow the columns go before the request
/// is cut (the review saw it cut at 28 cells with free width beside it;
/// at this branch's base the column is already sized from its values, so
/// this holds it there).
#[test]
fn the_request_in_flight_is_drawn_whole_at_160_columns() {
    use minikafka::session::snapshot::{ClientSnapshot, ListenerSnapshot};
    let rec = recording(1, &[]);
    let driver = minikafka::session::Driver::new(&rec.header, None).unwrap();
    let mut view = minikafka::session::Snapshot::of(&driver);
    view.title = "clients".into();
    view.listeners = vec![ListenerSnapshot {
        broker: 1,
        address: "127.0.0.1:9092".into(),
        open: true,
    }];
    let client = |connection, in_flight: Option<&str>| ClientSnapshot {
        connection,
        broker: 1,
        peer: format!("127.0.0.1:5068{connection}"),
        client_id: "rdkafka".into(),
        requests: 6,
        in_flight: in_flight.map(str::to_string),
        producer_id: Some(4000),
        producer_epoch: Some(0),
        transactional_id: Some("tx-1".into()),
        group: None,
    };
    view.clients = vec![
        client(1, Some("Produce v9 acks=all waiting")),
        client(2, Some("Produce v9 waiting in the cluster")),
        client(3, None),
    ];
    let theme = Theme::colored();
    for (cols, rows) in [(160, 48), (80, 24)] {
        let app = App::saved(
            view.clone(),
            layout::builtin("clients").unwrap(),
            Lang::En,
            theme,
        );
        let buf = frame_buffer(&app, cols, rows);
        let text = buffer_text(&buf);
        if cols == 160 {
            insta::assert_snapshot!("clients_in_flight_160x48", text);
        }
        assert!(
            text.contains("Produce v9 waiting in the cluster"),
            "{cols}x{rows}:\n{text}"
        );
        assert!(!text.contains("waiting in the cl…"), "{text}");
        let cell = &buf[find(&text, "Produce v9 waiting in the cluster").unwrap()];
        assert_eq!(Some(cell.fg), theme.waiting().fg);
    }
}

/// 230 steps of multi-record batches over 8 partitions of three topics
/// (replication factors 1 to 3) with followers fetching now and then: at
/// every 7th step, in the `default` and `clients` layouts at 160x48 and
/// 80x24, the Log pane begins with a partition's header (or its border
/// says more is above). The review saw a ruler with no header at step 224
/// of a recording not in the repository; this does not reproduce it, and
/// holds the rule.
#[test]
fn the_log_pane_begins_with_a_partition_header() {
    let topics = [("t1", 3u32, 3u32), ("t2", 3, 2), ("t3", 2, 1)];
    let header = json!({"mk_recording": 1, "title": "long", "rules": "minikafka",
        "cluster": {"brokers": [1, 2, 3],
            "topics": topics.iter()
                .map(|(n, p, r)| json!({"name": n, "partitions": p, "replication_factor": r}))
                .collect::<Vec<_>>(),
            "config": {}}});
    let mut text = header.to_string();
    text.push('\n');
    let mut n = 7u64;
    for i in 0..230u64 {
        n = n
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let (t, parts, _) = topics[(n >> 33) as usize % topics.len()];
        let p = (n >> 40) as u32 % parts;
        let k = 1 + (n >> 50) as usize % 60;
        let a = match i % 11 {
            3 => json!({"replicate": {}}),
            5 => json!({"replicate": {"broker": 2}}),
            _ => json!({"produce": {"topic": t, "partition": p,
                                    "records": records("v", k), "acks": "1"}}),
        };
        text.push_str(&json!({"action": a}).to_string());
        text.push('\n');
    }
    let rec = Recording::parse("long.jsonl", &text).unwrap();
    let steps = rec.steps.len();
    let names: Vec<String> = topics.iter().map(|(n, _, _)| format!("│{n}-")).collect();
    for lname in ["default", "clients"] {
        let layout = layout::builtin(lname).unwrap();
        let mut app = App::replay(rec.clone(), layout, Lang::En, Theme::colored()).unwrap();
        for s in (0..=steps).step_by(7) {
            app.update(Msg::Goto(s)).unwrap();
            for (c, r) in [(160u16, 48u16), (80, 24)] {
                let t = buffer_text(&frame_buffer(&app, c, r));
                let log = log_pane(&t);
                // The partition the step touched is marked `▸`.
                let first = log[1].replacen("│▸", "│", 1);
                let ok =
                    log[0].contains("more") || names.iter().any(|n| first.starts_with(n.as_str()));
                assert!(ok, "{lname} step {s} {c}x{r}:\n{}", log.join("\n"));
            }
        }
    }
}

/// One batch of `records` produced to out-0 and replicated until its high
/// watermark covers it: the dashboard replayed to its last step, and the
/// driver that applied the same steps (for the state).
fn one_batch_replicated(records: Value) -> (App, minikafka::session::Driver) {
    let rec = recording(
        1,
        &[
            json!({"produce": {"topic": "out", "partition": 0, "records": records}}),
            json!({"replicate": {"broker": 2}}),
            json!({"replicate": {"broker": 3}}),
            json!({"replicate": {"broker": 2}}),
        ],
    );
    let mut driver = minikafka::session::Driver::new(&rec.header, None).unwrap();
    for step in &rec.steps {
        driver.apply(&step.action);
    }
    (replay(rec, 4), driver)
}

/// A value's newline, tab and escape character are drawn as `\n`, `\t`
/// and `\u{1b}` in every pane that shows values (a new user's review: a
/// terminal cell cannot hold them, so `line1\nline2` read `line1line2`),
/// while `mk-tui state` keeps the value itself.
#[test]
fn control_characters_in_values_are_drawn_as_escapes() {
    let (app, driver) = one_batch_replicated(json!([{"value": "a\nb"}, {"value": "c\td\u{1b}"}]));
    let text = buffer_text(&frame_buffer(&app, 160, 48));
    let pane = |name: &str| -> String {
        text.lines()
            .skip_while(|l| !l.contains(&format!("┌{name}")))
            .take_while(|l| !l.starts_with('└') || l.contains(&format!("┌{name}")))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // The Partitions pane lists the batch's values, the Log pane draws a
    // cell per record, the Consumers pane lists what a consumer reads.
    assert!(pane("Partitions").contains(r"[a\nb, c\td\u{1b}]"), "{text}");
    assert!(
        log_pane(&text).iter().any(|l| l.contains(r"a\nb")),
        "{text}"
    );
    assert!(pane("Consumers").contains(r"a\nb c\td\u{1b}"), "{text}");
    assert!(!text.contains("ab,") && !text.contains("cd"), "{text}");
    let state = minikafka::session::Snapshot::of(&driver);
    let values: Vec<_> = state.partitions[0].batches[0]
        .records
        .iter()
        .map(|r| r.value.clone().unwrap())
        .collect();
    assert_eq!(values, ["a\nb", "c\td\u{1b}"]);
}

/// A commit waiting for its marker to replicate (acks=all) names the
/// marker as one in the Pending pane, `out-0@1 ◆COMMIT`, not as a bare
/// offset that reads like a data batch (a new user's review).
#[test]
fn a_pending_marker_is_named_as_a_marker() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/recordings/ch08-acks-all-pending.jsonl"
    );
    let rec = Recording::load(std::path::Path::new(path)).unwrap();
    for (step, marker) in [(4, "out-0@1 ◆COMMIT"), (9, "out-0@3 ◆ABORT")] {
        let app = replay(rec.clone(), step);
        let text = buffer_text(&frame_buffer(&app, 160, 48));
        let pending: Vec<&str> = text.lines().filter(|l| l.contains("… step")).collect();
        assert!(
            pending.iter().any(|l| l.contains(marker)),
            "step {step}: {marker:?} in {pending:#?}\n{text}"
        );
    }
}

/// A binary value (a client's Avro or Protobuf record: a schema id, then
/// bytes that are not UTF-8), given in base64 as a recording spells it, is
/// drawn with the bytes that are not UTF-8 as `\xNN` in every pane that
/// shows values, and `mk-tui state` keeps the same text.
#[test]
fn binary_values_are_drawn_with_their_bytes_escaped() {
    // "ab" 0xff 0xc3 "(" : two bytes that are not UTF-8 between text.
    let (app, driver) = one_batch_replicated(json!([{"value": {"base64": "YWL/wyg="}}]));
    let text = buffer_text(&frame_buffer(&app, 160, 48));
    let shown = r"ab\xff\xc3(";
    assert!(log_pane(&text).iter().any(|l| l.contains(shown)), "{text}");
    assert!(text.contains(&format!("[{shown}]")), "Partitions: {text}");
    let state = minikafka::session::Snapshot::of(&driver);
    let value = state.partitions[0].batches[0].records[0].value.clone();
    assert_eq!(value.as_deref(), Some(shown));
}
