//! The log pane (issue 13, item 1): each replica's batches in the snapshot
//! agree with the leader's and mark exactly a divergent tail; at every step
//! of every recording the pane draws one cell per offset (or batch) of the
//! window each replica holds, aligned across replicas, with the fate's glyph
//! and colour (a divergent cell its own); the old leader of ch06 keeps its
//! divergent tail until its fetch truncates it; every chapter-8 layout shows
//! HW against LSO; and frames with the pane at 80x24, 160x48 and in Chinese
//! are snapshotted.

mod common;

use std::path::Path;

use minikafka::session::snapshot::{Fate, PartitionSnapshot, Snapshot};
use minikafka::session::{Driver, Recording};
use minikafka::ui::headless::{self, Format};
use minikafka::ui::i18n::Lang;
use minikafka::ui::layout;
use minikafka::ui::panes::log::{Placed, placement};
use minikafka::ui::panes::{self, PaneContext, PaneId};
use minikafka::ui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;

fn load(name: &str) -> Recording {
    Recording::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("recordings/{name}.jsonl")))
        .unwrap()
}

/// The full snapshot after each step (index 0: the fresh cluster).
fn states(recording: &Recording) -> Vec<Snapshot> {
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
        focused: false,
        scroll: 0,
        selected: None,
        isolation: Default::default(),
        touched: None,
    }
}

/// The log pane alone in a `w` x `h` buffer.
fn pane(s: &Snapshot, w: u16, h: u16) -> Buffer {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    panes::render(PaneId::Log, s, &ctx(Lang::En), area, &mut buf);
    buf
}

fn row_text(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect()
}

#[test]
fn replica_logs_agree_with_the_leader_and_mark_only_a_divergent_tail() {
    let mut divergent_seen = 0;
    for path in common::recordings() {
        let recording = Recording::load(&path).unwrap();
        for s in states(&recording) {
            let at = format!("{} step {}", path.display(), s.step);
            for p in &s.partitions {
                for r in &p.replicas {
                    // In order, ending at the replica's LEO (contiguous but
                    // where key compaction left a gap, E16).
                    for pair in r.log.windows(2) {
                        assert!(pair[0].last_offset < pair[1].base_offset, "{at}");
                    }
                    if let Some(last) = r.log.last() {
                        assert_eq!(last.last_offset + 1, r.log_end_offset, "{at}");
                    }
                    // Shared batches first, then (maybe) a divergent tail.
                    let shared = r.log.iter().take_while(|b| !b.divergent).count();
                    assert!(r.log[shared..].iter().all(|b| b.divergent), "{at}");
                    for b in &r.log[..shared] {
                        assert!(
                            p.batches.iter().any(|l| (
                                l.base_offset,
                                l.last_offset,
                                l.leader_epoch
                            ) == (
                                b.base_offset,
                                b.last_offset,
                                b.leader_epoch
                            )),
                            "{at}: b{} {b:?} is the leader's",
                            r.broker
                        );
                    }
                    if r.is_leader {
                        assert_eq!(shared, r.log.len(), "{at}: the leader never diverges");
                        let own: Vec<_> = r
                            .log
                            .iter()
                            .map(|b| (b.base_offset, b.last_offset))
                            .collect();
                        let batches: Vec<_> = p
                            .batches
                            .iter()
                            .map(|b| (b.base_offset, b.last_offset))
                            .collect();
                        assert_eq!(own, batches, "{at}");
                    }
                    divergent_seen += r.log.len() - shared;
                }
            }
        }
    }
    assert!(divergent_seen > 0, "some recording shows a divergent tail");
}

#[test]
fn the_old_leader_keeps_its_divergent_tail_until_its_fetch_truncates_it() {
    let s = states(&load("ch06-leader-failure"));
    let tail = |step: usize| -> Vec<(i64, u32, Option<String>)> {
        let r = s[step].partitions[0]
            .replicas
            .iter()
            .find(|r| r.broker == 1)
            .unwrap();
        r.log
            .iter()
            .filter(|b| b.divergent)
            .map(|b| {
                let value = b.records.first().and_then(|r| r.value.clone());
                (b.base_offset, b.leader_epoch, value)
            })
            .collect()
    };
    let lost = vec![
        (1, 0, Some("lost-1".to_string())),
        (2, 0, Some("lost-2".to_string())),
    ];
    // Step 5: broker 1 still leads; 6: broker 2 is promoted; 7: it writes
    // "new" at offset 1; 8: broker 1 restarts; 9: its fetch truncates.
    assert_eq!(tail(5), []);
    for step in [6, 7, 8] {
        assert_eq!(tail(step), lost, "step {step}");
    }
    assert_eq!(tail(9), []);

    // On screen, frame by frame (values read for the frame only).
    let recording = load("ch06-leader-failure");
    let frames = headless::render(
        recording.clone(),
        &[7, 9],
        160,
        48,
        Format::Text,
        layout::load("replication").unwrap(),
        Lang::En,
    )
    .unwrap();
    assert!(
        frames[0].contains("≠lost-1") && frames[0].contains("≠lost-2"),
        "{}",
        frames[0]
    );
    assert!(frames[0].contains("✓new"), "{}", frames[0]);
    assert!(!frames[1].contains('≠'), "truncated: {}", frames[1]);

    // The divergent cells have the divergent style; the leader's cell at
    // offset 1 is committed.
    let state = &s[7];
    let buf = pane(state, 100, 24);
    let placed = placement(state, &ctx(Lang::En), buf.area).remove(0);
    let y_of = |b: u32| placed.rows.iter().find(|r| r.0 == b).unwrap().1;
    let x = |i: usize| placed.x + (i * placed.window.cell) as u16 + 1;
    let theme = Theme::colored();
    for i in [1, 2] {
        let cell = &buf[(x(i), y_of(1))];
        assert_eq!(cell.symbol(), "≠");
        assert_eq!(Some(cell.fg), theme.divergent().fg);
        assert!(
            cell.modifier
                .contains(Modifier::BOLD | Modifier::UNDERLINED)
        );
    }
    let new = &buf[(x(1), y_of(2))];
    assert_eq!(new.symbol(), Theme::fate_glyph(Fate::Committed));
    assert_eq!(Some(new.fg), theme.fate(Fate::Committed).fg);
    // The leader's row is first, and it is shorter than the old leader's.
    assert_eq!(placed.rows[0].0, 2);
    assert_eq!(buf[(x(2), y_of(2))].symbol(), " ");
}

#[test]
fn a_lagging_follower_is_a_shorter_row() {
    // ch08-lso-blocks step 6: p2 at offset 2 is on the leader only.
    let s = &states(&load("ch08-lso-blocks"))[6];
    let buf = pane(s, 80, 20);
    let placed = placement(s, &ctx(Lang::En), buf.area).remove(0);
    let x = |i: usize| placed.x + (i * placed.window.cell) as u16 + 1;
    let (leader, follower) = (placed.rows[0].1, placed.rows[1].1);
    assert_eq!(
        buf[(x(2), leader)].symbol(),
        Theme::fate_glyph(Fate::AboveHighWatermark)
    );
    assert_eq!(buf[(x(2), follower)].symbol(), " ");
    assert!(row_text(&buf, leader).contains("LEO 3"));
    assert!(row_text(&buf, follower).contains("LEO 2"));
    for i in [0, 1] {
        assert_eq!(buf[(x(i), leader)].symbol(), buf[(x(i), follower)].symbol());
        assert_eq!(buf[(x(i), leader)].fg, buf[(x(i), follower)].fg);
    }
}

/// What the pane drew for `placed`, held to the snapshot: on each row, one
/// cell per slot of the window the replica holds (offsets below its LEO),
/// none after; every boundary on the grid of the window's cells (so the
/// rows are aligned by offset); each cell with the glyph and colour of the
/// leader's batch at its offset, or the divergent ones.
fn check(s: &Snapshot, placed: &Placed, buf: &Buffer) -> Result<usize, String> {
    let p: &PartitionSnapshot = &s.partitions[placed.partition];
    let theme = Theme::colored();
    let win = &placed.window;
    let mut drawn = 0;
    for &(broker, y) in &placed.rows {
        let r = p.replicas.iter().find(|r| r.broker == broker).unwrap();
        let held = win
            .slots
            .iter()
            .filter(|s| s.from < r.log_end_offset && s.from >= p.log_start_offset)
            .count();
        let mut cells = 0;
        for (i, slot) in win.slots.iter().enumerate() {
            let left = placed.x + (i * win.cell) as u16;
            let glyph = &buf[(left + 1, y)];
            let edge = buf[(left, y)].symbol();
            // A cell is a glyph right of a boundary (after the last one
            // comes the LEO's label).
            if glyph.symbol() == " " || !matches!(edge, "│" | "┊") {
                continue;
            }
            cells += 1;
            let next = buf[(left + win.cell as u16, y)].symbol();
            if !matches!(next, "│" | "┊") {
                return Err(format!(
                    "{} b{broker} cell {i}: right edge {next:?}",
                    p.name()
                ));
            }
            if i >= held {
                return Err(format!(
                    "{} b{broker}: a cell at {} past its LEO",
                    p.name(),
                    slot.from
                ));
            }
            let own = r
                .log
                .iter()
                .find(|b| (b.base_offset..=b.last_offset).contains(&slot.from));
            let (want_glyph, want_fg) = match own {
                Some(b) if b.divergent => (Theme::DIVERGENT_GLYPH, theme.divergent().fg),
                _ => match p
                    .batches
                    .iter()
                    .find(|b| (b.base_offset..=b.last_offset).contains(&slot.from))
                {
                    // E16: an offset whose record compaction removed, and a
                    // tombstone (a keyed record with a null value).
                    Some(b)
                        if !win.per_batch
                            && b.compacted > 0
                            && !b.records.iter().any(|r| r.offset == slot.from) =>
                    {
                        (Theme::COMPACTED_GLYPH, theme.compacted().fg)
                    }
                    Some(b)
                        if !win.per_batch
                            && b.records.iter().any(|r| {
                                r.offset == slot.from && r.key.is_some() && r.value.is_none()
                            }) =>
                    {
                        (Theme::fate_glyph(b.fate), theme.tombstone().fg)
                    }
                    Some(b) => (Theme::fate_glyph(b.fate), theme.fate(b.fate).fg),
                    None if p.batches.first().is_some_and(|b| b.base_offset < slot.from) => {
                        (Theme::COMPACTED_GLYPH, theme.compacted().fg)
                    }
                    None => ("·", theme.dim().fg),
                },
            };
            if glyph.symbol() != want_glyph || Some(glyph.fg) != want_fg {
                return Err(format!(
                    "{} b{broker} @{}: drawn {:?} {:?}, want {want_glyph:?} {want_fg:?}",
                    p.name(),
                    slot.from,
                    glyph.symbol(),
                    glyph.fg
                ));
            }
        }
        if cells != held {
            return Err(format!(
                "{} b{broker}: {cells} cells drawn, {held} held in {:?}",
                p.name(),
                win.slots
            ));
        }
        // Every boundary of the row is on the window's grid.
        let end = placed.x as usize + win.slots.len() * win.cell;
        for x in placed.x as usize..=end.min(buf.area.width as usize - 1) {
            let sym = buf[(x as u16, y)].symbol();
            if matches!(sym, "│" | "┊") && !(x - placed.x as usize).is_multiple_of(win.cell) {
                return Err(format!(
                    "{} b{broker}: boundary off the grid at {x}",
                    p.name()
                ));
            }
        }
        drawn += cells;
    }
    Ok(drawn)
}

#[test]
fn cells_drawn_are_the_offsets_held_in_the_window_aligned_across_replicas() {
    let mut drawn = 0;
    let mut per_batch = 0;
    for path in common::recordings() {
        let recording = Recording::load(&path).unwrap();
        for s in states(&recording) {
            for (w, h) in [(160, 60), (80, 30), (30, 40)] {
                let buf = pane(&s, w, h);
                for placed in placement(&s, &ctx(Lang::En), buf.area) {
                    per_batch += usize::from(placed.window.per_batch);
                    drawn += check(&s, &placed, &buf).unwrap_or_else(|e| {
                        panic!("{} step {} at {w}x{h}: {e}", path.display(), s.step)
                    });
                }
            }
        }
    }
    assert!(drawn > 1000, "{drawn} cells checked");
    assert!(per_batch > 0, "some narrow pane draws one cell per batch");
}

#[test]
fn a_long_log_is_one_cell_per_batch_following_its_end() {
    // 30 batches of 3 records, a lagging follower, an open transaction.
    let header: minikafka::session::recording::Header = serde_json::from_str(
        r#"{"mk_recording":1,"cluster":{"brokers":[1,2],"topics":[{"name":"t","partitions":1,"replication_factor":2}]}}"#,
    )
    .unwrap();
    let mut d = Driver::new(&header, None).unwrap();
    let act =
        |j: &str| minikafka::session::Action::from_json(&serde_json::from_str(j).unwrap()).unwrap();
    for i in 0..30 {
        d.apply(&act(&format!(
            r#"{{"produce":{{"topic":"t","value":"v{i}"}}}}"#
        )));
    }
    d.apply(&act(r#"{"replicate":{}}"#));
    d.apply(&act(r#"{"begin":{"txn":"x"}}"#));
    d.apply(&act(r#"{"send":{"txn":"x","topic":"t","value":"open"}}"#));
    d.apply(&act(r#"{"produce":{"topic":"t","value":"late"}}"#));
    let s = Snapshot::of(&d);
    let p = &s.partitions[0];
    let buf = pane(&s, 80, 16);
    let placed = placement(&s, &ctx(Lang::En), buf.area).remove(0);
    let slots = &placed.window.slots;
    assert_eq!(
        slots.last().unwrap().to + 1,
        p.log_end_offset,
        "the window ends at the LEO"
    );
    assert!(slots[0].from > 0, "the oldest offsets give way");
    assert!(
        slots[0].from <= p.last_stable_offset && slots[0].from <= p.high_watermark,
        "LSO and HW stay in the window"
    );
    let text = headless::buffer_text(&buf);
    assert!(
        text.contains(&format!("L={}", p.last_stable_offset)),
        "{text}"
    );
    assert!(text.contains(&format!("H={}", p.high_watermark)), "{text}");
    assert!(text.contains("earlier offsets"), "{text}");
    check(&s, &placed, &buf).unwrap();
}

/// The HW and LSO numbers of each partition, as the pane writes them.
fn shows_hw_against_lso(frame: &str, p: &PartitionSnapshot) -> bool {
    let (l, h) = (p.last_stable_offset, p.high_watermark);
    (frame.contains(&format!("L={l}")) || frame.contains(&format!("LSO {l}")))
        && (frame.contains(&format!("H={h}")) || frame.contains(&format!("HW {h}")))
}

#[test]
fn every_chapter_8_layout_shows_hw_against_lso() {
    for path in common::recordings() {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if !name.starts_with("ch08") {
            continue;
        }
        let recording = Recording::load(&path).unwrap();
        let layout_name = recording.header.layout.clone().unwrap();
        let last = recording.steps.len();
        let s = states(&recording).pop().unwrap();
        for (w, h) in [(80, 24), (160, 48)] {
            let frame = headless::render(
                recording.clone(),
                &[last],
                w,
                h,
                Format::Text,
                layout::load(&layout_name).unwrap(),
                Lang::En,
            )
            .unwrap()
            .remove(0);
            assert!(
                shows_hw_against_lso(&frame, &s.partitions[0]),
                "{name} ({layout_name}) at {w}x{h}:\n{frame}"
            );
        }
    }
}

fn frame(name: &str, step: usize, w: u16, h: u16, lang: Lang) -> String {
    let recording = load(name);
    let layout_name = recording.header.layout.clone().unwrap();
    headless::render(
        recording,
        &[step],
        w,
        h,
        Format::Text,
        layout::load(&layout_name).unwrap(),
        lang,
    )
    .unwrap()
    .remove(0)
}

#[test]
fn frames_with_the_log_pane() {
    for (w, h) in [(80, 24), (160, 48)] {
        for step in [2, 6] {
            insta::assert_snapshot!(
                format!("ch08_visibility_{w}x{h}_step{step}"),
                frame("ch08-visibility", step, w, h, Lang::En)
            );
        }
        insta::assert_snapshot!(
            format!("ch06_leader_failure_divergent_{w}x{h}"),
            frame("ch06-leader-failure", 7, w, h, Lang::En)
        );
        insta::assert_snapshot!(
            format!("ch08_lso_blocks_lag_{w}x{h}"),
            frame("ch08-lso-blocks", 6, w, h, Lang::En)
        );
    }
    let zh = frame("ch08-visibility", 2, 160, 48, Lang::Zh);
    assert!(zh.contains("分区日志") && zh.contains("1 主"), "{zh}");
    insta::assert_snapshot!("ch08_visibility_160x48_step2_zh", zh);
    let zh = frame("ch06-leader-failure", 7, 80, 24, Lang::Zh);
    assert!(zh.contains("分叉") || zh.contains('≠'), "{zh}");
    insta::assert_snapshot!("ch06_leader_failure_divergent_80x24_zh", zh);
}

/// A snapshot as `mk-tui observe` makes it of the embedded state `s`
/// (docs/observe.md): no replica's log or LEO, the leader's batches only
/// below the HW (a consumer's fetch ends there).
fn as_observed(s: &Snapshot) -> Snapshot {
    use minikafka::session::snapshot::field;
    let mut o = s.clone();
    o.unavailable = vec![
        field::REPLICA_LOG.to_string(),
        field::REPLICA_LOG_END_OFFSET.to_string(),
        field::LOG_END_OFFSET.to_string(),
    ];
    for p in &mut o.partitions {
        let hw = p.high_watermark;
        p.batches.retain(|b| b.base_offset < hw);
        p.log_end_offset = 0;
        for r in &mut p.replicas {
            r.log.clear();
            r.log_end_offset = 0;
        }
    }
    o
}

#[test]
fn an_observed_cluster_draws_the_leaders_row_up_to_the_hw_and_no_follower_row() {
    // ch08-lso-blocks step 6: HW 2, the leader holds 3 offsets, the
    // follower 2; observed, only the leader's row is drawn, and it ends at
    // the HW with an unknown LEO.
    let embedded = &states(&load("ch08-lso-blocks"))[6];
    let s = &as_observed(embedded);
    let p = &s.partitions[0];
    assert_eq!(p.high_watermark, 2, "the recording changed");
    let buf = pane(s, 80, 12);
    let placed = placement(s, &ctx(Lang::En), buf.area).remove(0);
    assert_eq!(placed.rows.len(), 1, "{placed:?}");
    assert_eq!(placed.rows[0].0, p.leader);
    let y = placed.rows[0].1;
    let x = |i: usize| placed.x + (i * placed.window.cell) as u16 + 1;
    let theme = Theme::colored();
    for (i, slot) in placed.window.slots.iter().enumerate() {
        let drawn = &buf[(x(i), y)];
        match p.batches.iter().find(|b| b.base_offset == slot.from) {
            Some(b) if slot.from < p.high_watermark => {
                assert_eq!(drawn.symbol(), Theme::fate_glyph(b.fate), "@{}", slot.from);
                assert_eq!(Some(drawn.fg), theme.fate(b.fate).fg, "@{}", slot.from);
            }
            _ => assert_eq!(drawn.symbol(), " ", "@{}: nothing past the HW", slot.from),
        }
    }
    let text: Vec<String> = (0..buf.area.height).map(|y| row_text(&buf, y)).collect();
    assert!(text[y as usize].contains("LEO ?"), "{text:#?}");
    assert!(
        !text
            .iter()
            .any(|l| l.contains("LEO 2") || l.contains("LEO 3")),
        "{text:#?}"
    );
    assert!(!text.iter().any(|l| l.contains("2 isr")), "{text:#?}");
    assert!(text[1].contains("leader to the HW"), "{text:#?}");
    insta::assert_snapshot!("observed_leader_row_80x12", text.join("\n"));
}

/// E16 on screen: after compaction the Log pane shows a tombstone as one
/// and the compacted-away offsets as such, each with a glyph and a label
/// (so `NO_COLOR` loses nothing), and their colours mean it: the tombstone
/// its own colour, italic; a compacted offset dim and crossed out.
#[test]
fn compacted_offsets_and_tombstones_have_a_glyph_a_label_and_their_colour() {
    let states = states(&load("ch04-compaction"));
    let theme = Theme::colored();
    let find = |buf: &Buffer, glyph: &str, after: &[&str]| {
        (0..buf.area.height)
            .flat_map(|y| (0..buf.area.width).map(move |x| (x, y)))
            // A cell's glyph, right of its boundary or its fate's glyph
            // (not a note's or the legend's).
            .find(|&(x, y)| {
                x > 0 && buf[(x, y)].symbol() == glyph && after.contains(&buf[(x - 1, y)].symbol())
            })
            .unwrap_or_else(|| panic!("no {glyph} drawn"))
    };
    // Step 8: offsets 0 and 1 compacted away (before the first batch), b's
    // tombstone at offset 3 kept (younger than delete_retention_ms).
    let buf = pane(&states[8], 120, 16);
    let all = (0..buf.area.height)
        .map(|y| row_text(&buf, y))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(all.contains("✂2 compacted away"), "{all}");
    let (x, y) = find(&buf, Theme::TOMBSTONE_GLYPH, &["✓"]);
    assert!(row_text(&buf, y).contains("†tombstone"));
    let cell = &buf[(x, y)];
    assert_eq!(Some(cell.fg), theme.tombstone().fg);
    assert!(cell.modifier.contains(Modifier::ITALIC));
    assert_ne!(theme.tombstone().fg, theme.fate(Fate::Committed).fg);
    let legend = (0..buf.area.height)
        .map(|y| row_text(&buf, y))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(legend.contains("† tombstone"), "{legend}");
    // Step 10: the expired tombstone is gone, its offset a gap between a=2
    // and c=1.
    let buf = pane(&states[10], 120, 16);
    let (x, y) = find(&buf, Theme::COMPACTED_GLYPH, &["│", "┊"]);
    let cell = &buf[(x, y)];
    assert_eq!(Some(cell.fg), theme.compacted().fg);
    assert!(cell.modifier.contains(Modifier::CROSSED_OUT));
    assert!(
        row_text(&buf, y + 1).contains("compacted"),
        "its label under it"
    );
    let text = (0..buf.area.height)
        .map(|y| row_text(&buf, y))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(text.contains("✂ compacted"), "the legend: {text}");
    // Without colour the same glyphs and labels are drawn.
    let area = Rect::new(0, 0, 120, 16);
    let mut plain = Buffer::empty(area);
    let mut c = ctx(Lang::En);
    c.theme = Theme::plain();
    panes::render(PaneId::Log, &states[10], &c, area, &mut plain);
    let plain_text = (0..16)
        .map(|y| row_text(&plain, y))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(plain_text, text, "NO_COLOR loses nothing");
    insta::assert_snapshot!("ch04_compaction_log_pane_step10_120x16", text);
    let zh = {
        let mut buf = Buffer::empty(area);
        panes::render(PaneId::Log, &states[8], &ctx(Lang::Zh), area, &mut buf);
        (0..16)
            .map(|y| row_text(&buf, y))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // (a wide character's second cell reads as a space here)
    let squeezed = zh.replace(' ', "");
    assert!(
        squeezed.contains("†墓碑") && squeezed.contains("已压缩掉"),
        "{zh}"
    );
    insta::assert_snapshot!("ch04_compaction_log_pane_step8_120x16_zh", zh);
}
