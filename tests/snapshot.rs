//! The one Snapshot (issue 12): fates agree with the consumers over every
//! step of every recording, the partitions pane draws each batch's fate
//! (label, glyph and colour), building a snapshot changes nothing, and a
//! saved state draws the same frame as the step it was saved at.

mod common;
#[path = "common/fates.rs"]
mod fates;

use std::path::Path;
use std::process::Command;

use minikafka::session::snapshot::{Fate, Isolation, Snapshot};
use minikafka::session::{Driver, Recording};
use minikafka::ui::i18n::Lang;
use minikafka::ui::panes::{self, PaneContext, PaneId};
use minikafka::ui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

/// The partitions pane alone, tall enough for every batch row.
fn partitions_pane(s: &Snapshot) -> Buffer {
    let rows: usize = s.partitions.iter().map(|p| 1 + p.window().len()).sum();
    pane(PaneId::Partitions, s, rows as u16 + 2)
}

fn row_text(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect()
}

/// Checks that the pane draws batch `b` of partition `p` with its fate's
/// label, glyph and colour, on the row the list gives it.
fn pane_shows_fates(s: &Snapshot, buf: &Buffer) -> Result<(), String> {
    let theme = Theme::colored();
    let mut y = 1u16; // inside the border
    for p in &s.partitions {
        y += 1; // the partition's header
        for b in p.window() {
            let text = row_text(buf, y);
            let label = Lang::En.t(b.fate.name());
            let glyph = Theme::fate_glyph(b.fate);
            // After the border and the changed-mark gutter.
            let row = &text[text.find('│').map_or(0, |i| i + '│'.len_utf8())..];
            let row = row
                .strip_prefix(Theme::CHANGED_GLYPH)
                .or_else(|| row.strip_prefix(' '));
            if !row.is_some_and(|r| r.starts_with(glyph)) || !text.contains(&format!(" {label} ")) {
                return Err(format!(
                    "step {}: {} batch {} is {:?}, drawn as {text:?}",
                    s.step,
                    p.name(),
                    b.base_offset,
                    b.fate
                ));
            }
            // The glyph's cell carries the fate's colour.
            let cell = &buf[(2, y)];
            if cell.fg != theme.fate(b.fate).fg.unwrap_or_default() {
                return Err(format!(
                    "step {}: {} batch {} ({:?}) coloured {:?}",
                    s.step,
                    p.name(),
                    b.base_offset,
                    b.fate,
                    cell.fg
                ));
            }
            y += 1;
        }
    }
    Ok(())
}

#[test]
fn fates_agree_with_the_consumers_and_the_pane_at_every_step_of_every_recording() {
    let mut seen = std::collections::BTreeSet::new();
    let mut steps = 0;
    for path in common::recordings() {
        let recording = Recording::load(&path).unwrap();
        let mut driver = Driver::new(&recording.header, None).unwrap();
        for step in std::iter::once(None).chain(recording.steps.iter().map(Some)) {
            if let Some(step) = step {
                driver.apply(&step.action);
            }
            let s = Snapshot::of(&driver);
            let wrong = fates::disagreements(&s);
            assert!(wrong.is_empty(), "{}: {wrong:#?}", path.display());
            // The counts a frame shows (from the batch summaries) are the
            // lengths of the full lists (the engine's fetch).
            for (tp, c) in &s.consumers.counts {
                let lens = (
                    s.consumers.read_uncommitted[tp].len(),
                    s.consumers.read_committed[tp].len(),
                );
                assert_eq!(
                    (c.read_uncommitted, c.read_committed),
                    lens,
                    "{} {tp}",
                    path.display()
                );
            }
            assert_eq!(s.consumers.counts.len(), s.partitions.len());
            pane_shows_fates(&s, &partitions_pane(&s))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            seen.extend(
                s.partitions
                    .iter()
                    .flat_map(|p| p.batches.iter().map(|b| b.fate)),
            );
            steps += 1;
        }
    }
    assert!(steps > 100, "{steps} steps walked");
    // The recordings reach every fate, so each one was checked somewhere.
    let missing: Vec<Fate> = Fate::ALL
        .into_iter()
        .filter(|f| !seen.contains(f))
        .collect();
    assert!(missing.is_empty(), "no recording shows {missing:?}");
}

#[test]
fn the_fate_check_catches_a_wrong_fate() {
    let recording = Recording::load(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/recordings/ch08-visibility.jsonl"
    )))
    .unwrap();
    let mut driver = Driver::new(&recording.header, None).unwrap();
    for step in &recording.steps {
        driver.apply(&step.action);
    }
    let honest = Snapshot::of(&driver);
    assert!(fates::disagreements(&honest).is_empty());
    for (from, to) in [
        (Fate::Committed, Fate::HeldBack),
        (Fate::Aborted, Fate::Committed),
    ] {
        let mut s = honest.clone();
        let b = s.partitions[0]
            .batches
            .iter_mut()
            .find(|b| b.fate == from)
            .unwrap();
        b.fate = to;
        assert!(
            !fates::disagreements(&s).is_empty(),
            "{from:?} -> {to:?} caught"
        );
        assert!(pane_shows_fates(&honest, &partitions_pane(&s)).is_err());
    }
}

#[test]
fn building_a_snapshot_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let recording = Recording::load(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/recordings/ch06-isr-shrink.jsonl"
    )))
    .unwrap();
    let mut driver = Driver::new(&recording.header, Some(&data)).unwrap();
    for step in &recording.steps {
        driver.apply(&step.action);
        let before = common::dir_snapshot(&data);
        let first = Snapshot::of(&driver).to_json();
        let frame = minikafka::session::SnapshotSource::snapshot(
            &driver,
            &minikafka::session::snapshot::Bounds::FRAME,
        );
        let second = Snapshot::of(&driver).to_json();
        assert_eq!(first, second, "two reads, the same bytes");
        assert_eq!(
            frame.partitions.len(),
            Snapshot::of(&driver).partitions.len()
        );
        assert!(
            common::dir_snapshot(&data) == before,
            "step {}: the data directory changed on read",
            driver.step()
        );
    }
}

fn mk_tui(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every line but the title bar and the key bar.
fn body(frame: &str) -> Vec<&str> {
    let lines: Vec<&str> = frame.lines().collect();
    lines[1..lines.len() - 1].to_vec()
}

#[test]
fn render_state_draws_the_frame_of_its_step() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("recordings/ch08-torn-journal.jsonl", "8", "transactions"),
        ("recordings/ch08-offsets.jsonl", "4", "default"),
        ("recordings/ch06-leader-failure.jsonl", "5", "replication"),
    ];
    for (rec, step, layout) in cases {
        let rec = format!("{}/{rec}", env!("CARGO_MANIFEST_DIR"));
        let state = dir.path().join("state.json");
        std::fs::write(&state, mk_tui(&["state", &rec, "--step", step])).unwrap();
        let state = state.to_str().unwrap();
        for size in ["80x24", "120x36", "200x60"] {
            let from_state = mk_tui(&[
                "render", "--state", state, "--size", size, "--layout", layout,
            ]);
            let from_step = mk_tui(&[
                "render", &rec, "--step", step, "--size", size, "--layout", layout,
            ]);
            assert_eq!(
                body(&from_state),
                body(&from_step),
                "{rec} step {step} at {size}:\n{from_state}\n{from_step}"
            );
            assert!(from_state.lines().count() == from_step.lines().count());
        }
    }
}

#[test]
fn render_state_refuses_a_file_that_is_not_a_state_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"step\": \"three\"}\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mk-tui"))
        .args(["render", "--state", bad.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("bad.json:1:") && err.contains("not a state"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

/// The ui layer draws from the snapshot alone (issue 12): no file under
/// `src/ui/` names the engine, and the snapshot's types name no engine type.
#[test]
fn the_ui_layer_never_names_the_engine() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut stack = vec![root.join("src/ui")];
    let mut files = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (n, line) in text.lines().enumerate() {
                assert!(
                    !line.contains("crate::engine") && !line.contains(".cluster()"),
                    "{}:{}: {line}",
                    path.display(),
                    n + 1
                );
            }
            files += 1;
        }
    }
    assert!(files > 10, "{files} ui files read");
    let types = std::fs::read_to_string(root.join("src/session/snapshot/mod.rs")).unwrap();
    assert!(
        !types.contains("crate::engine"),
        "the Snapshot's types are its own"
    );
}

/// Draws pane `id` alone, tall enough for everything it lists.
fn pane(id: PaneId, s: &Snapshot, rows: u16) -> Buffer {
    let area = Rect::new(0, 0, 120, rows);
    let mut buf = Buffer::empty(area);
    let ctx = PaneContext {
        lang: Lang::En,
        theme: Theme::colored(),
        focused: false,
        scroll: 0,
        selected: None,
        isolation: Isolation::ReadCommitted,
        touched: None,
    };
    panes::render(id, s, &ctx, area, &mut buf);
    buf
}

/// Whether row `y` carries the changed mark in its gutter (x = 1), drawn
/// in the mark's style, with the rest of the row bold.
fn marked(buf: &Buffer, y: u16) -> bool {
    let theme = Theme::colored();
    let cell = &buf[(1, y)];
    let is_mark = cell.symbol() == Theme::CHANGED_GLYPH;
    if is_mark {
        assert_eq!(
            cell.fg,
            theme.changed_mark().fg.unwrap(),
            "the mark's colour"
        );
        assert!(
            buf[(2, y)]
                .modifier
                .contains(ratatui::style::Modifier::BOLD),
            "a marked row is bold: {}",
            row_text(buf, y)
        );
    } else {
        assert!(
            !buf[(2, y)]
                .modifier
                .contains(ratatui::style::Modifier::BOLD),
            "an unmarked row is not bold: {}",
            row_text(buf, y)
        );
    }
    is_mark
}

/// What a step changed is the diff of the snapshots before and after it,
/// whatever bounds they were read with, and the partitions and journal
/// panes mark exactly the batches and frames it names: at every step of
/// every recording.
#[test]
fn the_highlight_marks_exactly_what_the_step_changed() {
    use minikafka::session::snapshot::{Bounds, diff};
    use minikafka::session::{SnapshotSource, Timeline};
    let mut marked_rows = 0;
    for path in common::recordings() {
        let recording = Recording::load(&path).unwrap();
        let steps = recording.steps.len();
        let mut timeline = Timeline::new(recording, 50).unwrap();
        let mut before = timeline.snapshot(&Bounds::FULL);
        assert!(before.changes.is_empty() && before.changes.since_step.is_none());
        for step in 1..=steps {
            timeline.goto(step).unwrap();
            let after = timeline.snapshot(&Bounds::FULL);
            let at = format!("{} step {step}", path.display());
            // A step that crashed the cluster is two sub-steps
            // (docs/dashboard.md "Crashes as moments"): its moment of death
            // shows what the step did up to the crash, the recovered state
            // what recovery changed since the moment.
            let moment = after.at_moment();
            if let Some(view) = &moment {
                assert!(timeline.show_moment(true), "{path:?} step {step}");
                let mut at_moment = timeline.snapshot(&Bounds::FULL);
                assert!(at_moment.before_recovery);
                let mut want = diff(&before, view);
                (want.sentences, at_moment.changes.sentences) = (Vec::new(), Vec::new());
                assert_eq!(at_moment.changes, want, "{path:?} step {step}, moment");
                timeline.show_moment(false);
            }
            let base = moment.as_ref().unwrap_or(&before);
            // A frame's snapshot before (what the timeline keeps) and a
            // full one give the same changes.
            let mut want = diff(base, &after);
            let mut got = after.changes.clone();
            (want.sentences, got.sentences) = (Vec::new(), Vec::new());
            assert_eq!(got, want, "{at}");
            // The partitions pane: a row is marked iff its batch is new or
            // changed its fate.
            let buf = partitions_pane(&after);
            let mut y = 1u16;
            for p in &after.partitions {
                y += 1;
                for b in p.window() {
                    let changed = after
                        .changes
                        .partition(&p.name())
                        .is_some_and(|c| c.touches_batch(b.base_offset));
                    assert_eq!(
                        marked(&buf, y),
                        changed,
                        "{at}: {} @{}",
                        p.name(),
                        b.base_offset
                    );
                    marked_rows += usize::from(changed);
                    y += 1;
                }
            }
            // The journal pane: a frame is marked iff the step wrote it.
            let jbuf = pane(PaneId::Journal, &after, 200);
            for yy in 1..jbuf.area.height - 1 {
                let text = row_text(&jbuf, yy);
                let Some(n) = text
                    .split('#')
                    .nth(1)
                    .and_then(|t| t.split_whitespace().next())
                    .and_then(|n| n.parse::<usize>().ok())
                else {
                    continue;
                };
                if !text.contains(" @") {
                    continue; // a summary or recovery line
                }
                assert_eq!(
                    marked(&jbuf, yy),
                    after.changes.journal_frames.contains(&n),
                    "{at}: frame {n}: {text}"
                );
            }
            before = after;
        }
    }
    assert!(marked_rows > 20, "{marked_rows} rows marked in all");
}

/// The commit step of chapter 8's experiment, in words: the marker, the
/// batch it commits, the marks that move, what read_committed now reads,
/// the journal frames it wrote.
#[test]
fn the_commit_step_of_chapter_8_says_what_it_did() {
    let rec = format!(
        "{}/recordings/ch08-visibility.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let s = Snapshot::from_json(&mk_tui(&["state", &rec, "--step", "3"])).unwrap();
    assert_eq!(s.changes.since_step, Some(2));
    let out0 = s.changes.partition("out-0").unwrap();
    assert_eq!(out0.new_batches, [1], "the COMMIT marker");
    assert_eq!(out0.fate_changed, [0], "the data it commits");
    assert_eq!(out0.high_watermark, Some((1, 2)));
    assert_eq!(out0.last_stable_offset, Some((0, 2)));
    assert_eq!(out0.read_committed_gained, [0]);
    assert!(
        out0.read_uncommitted_gained.is_empty(),
        "read_uncommitted read it already"
    );
    assert_eq!(s.changes.journal_frames, [3, 4]);
    assert_eq!(
        s.changes.sentences,
        [
            "COMMIT marker of tx-1 at out-0@1",
            "out-0@0 now committed",
            "out-0 HW 1 → 2",
            "out-0 LSO 0 → 2",
            "out-0 broker 1 LEO 1 → 2",
            "read_committed now reads pending",
            "tx-1 ongoing → complete_commit",
            "journal: 2 new frames (212 B → 459 B)",
        ]
    );
    // Step 0 compares with nothing.
    let s0 = Snapshot::from_json(&mk_tui(&["state", &rec, "--step", "0"])).unwrap();
    assert!(s0.changes.since_step.is_none() && s0.changes.is_empty());
}
