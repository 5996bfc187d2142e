//! The dashboard after `create_partitions` (SPEC §6; docs/recording-format.md
//! `create_partitions`): a topic made with 2 partitions grows to 4, keyed
//! records land on the new ones and a recorded group takes them at its next
//! rebalance. The frames (snapshotted with insta) draw t-2 and t-3 in the
//! partitions, replicas, log, consumers and offsets panes, and in the groups
//! pane's assignment, styled as t-0 and t-1 are; stepping back before the
//! growth draws two partitions again.

#[path = "common/frame_panes.rs"]
mod frame_panes;

use frame_panes::{pane_has, pane_rows, style_in};
use minikafka::session::Recording;
use minikafka::session::snapshot::Fate;
use minikafka::ui::app::App;
use minikafka::ui::i18n::Lang;
use minikafka::ui::layout;
use minikafka::ui::panes::PaneId;
use minikafka::ui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use serde_json::json;

/// The step that grows t from 2 to 4 partitions.
const GROW: usize = 6;
/// The last step.
const LAST: usize = 14;
/// Tall enough for the default layout to draw all four partitions in
/// every pane (the log pane takes six rows a partition at replication
/// factor 2); at 120x36 they scroll, and a frame showing t-0 alone would
/// prove nothing.
const SIZE: (u16, u16) = (160, 66);

/// Keys whose partition moves with the count: crc32("e") mod 4 is 2 and
/// crc32("a") mod 4 is 3 (mod 2: 0 and 1); the test checks it.
const TO_T2: &str = "e";
const TO_T3: &str = "a";

fn recording() -> Recording {
    let header = json!({
        "mk_recording": 1, "title": "t grows", "rules": "minikafka",
        "cluster": {"brokers": [1, 2, 3], "topics": []},
    });
    let join =
        |member: &str| json!({"join_group": {"group": "g", "member": member, "topics": ["t"]}});
    let poll = |member: &str| json!({"poll": {"group": "g", "member": member}});
    let commit = |member: &str, parts: [u32; 2]| {
        json!({"commit_group_offsets": {"group": "g", "member": member, "generation": 2,
            "offsets": parts.map(|p| json!({"topic": "t", "partition": p, "offset": 1}))}})
    };
    let actions = [
        json!({"create_topic": {"name": "t", "partitions": 2, "replication_factor": 2}}),
        json!({"produce": {"topic": "t", "partition": 0, "value": "old0"}}),
        json!({"produce": {"topic": "t", "partition": 1, "value": "old1"}}),
        join("m1"),
        json!({"replicate": {}}),
        json!({"create_partitions": {"topic": "t", "count": 4}}),
        json!({"produce": {"topic": "t", "key": TO_T2, "value": "grown2"}}),
        json!({"produce": {"topic": "t", "key": TO_T3, "value": "grown3"}}),
        json!({"replicate": {}}),
        // The group sees the new partitions at its next rebalance.
        join("m2"),
        poll("m1"),
        poll("m2"),
        commit("m1", [0, 2]),
        commit("m2", [1, 3]),
    ];
    assert_eq!(actions.len(), LAST);
    assert_eq!(actions[GROW - 1]["create_partitions"]["count"], 4);
    let mut lines = vec![header.to_string()];
    lines.extend(
        actions
            .iter()
            .enumerate()
            .map(|(i, a)| json!({"at_ms": i * 1000, "action": a}).to_string()),
    );
    Recording::parse("grow.jsonl", &lines.join("\n")).unwrap()
}

fn app(layout: &str) -> App {
    let mut app = App::replay(
        recording(),
        layout::load(layout).unwrap(),
        Lang::En,
        Theme::colored(),
    )
    .unwrap();
    app.update(minikafka::ui::app::Msg::Resize(SIZE.0, SIZE.1))
        .unwrap();
    app
}

/// The frame of `app` at `step` at [`SIZE`].
fn frame_at(app: &mut App, step: usize) -> (Buffer, String, Vec<(PaneId, Rect)>) {
    frame_panes::frame_at(app, step, SIZE)
}

#[test]
fn the_keys_land_on_the_new_partitions() {
    use minikafka::engine::core::partitioner::partition_for_key;
    assert_eq!(partition_for_key(TO_T2.as_bytes(), 4), 2);
    assert_eq!(partition_for_key(TO_T3.as_bytes(), 4), 3);
    // Before the growth they hashed onto the old partitions: they moved.
    assert_eq!(partition_for_key(TO_T2.as_bytes(), 2), 0);
    assert_eq!(partition_for_key(TO_T3.as_bytes(), 2), 1);
}

#[test]
fn every_pane_draws_the_new_partitions_as_it_draws_the_old() {
    let mut app = app("default");
    let (buf, text, panes) = frame_at(&mut app, LAST);
    insta::assert_snapshot!("grown_default_160x66", text);
    let theme = Theme::colored();

    for p in 0..4 {
        let name = format!("t-{p}");
        for id in [
            PaneId::Partitions,
            PaneId::Replicas,
            PaneId::Log,
            PaneId::Consumers,
            PaneId::Offsets,
        ] {
            assert!(
                pane_has(&buf, &panes, id, &name),
                "{id:?} lacks {name}:\n{text}"
            );
        }
    }
    // Placed as create_topic places partitions 2 and 3 (round-robin from
    // broker index p), with their records committed.
    assert!(text.contains("t-2 leader 3 e0 HW 1 LSO 1 LEO 1"), "{text}");
    assert!(text.contains("t-3 leader 1 e0 HW 1 LSO 1 LEO 1"), "{text}");
    assert!(text.contains("t-2 ldr 3 e0 ISR [1,3]"), "{text}");
    assert!(text.contains("t-3 ldr 1 e0 ISR [1,2]"), "{text}");
    assert!(
        text.contains("g t-2 = 1") && text.contains("g t-3 = 1"),
        "{text}"
    );

    // Partitions pane: a new partition's committed batch is a committed
    // batch (the fate's colour), as an old one's is; its name is a heading.
    let committed = theme.fate(Fate::Committed).fg;
    let batch = |value: &str| style_in(&buf, &panes, PaneId::Partitions, value, "✓");
    for value in ["[old0]", "[old1]", "[grown2]", "[grown3]"] {
        assert_eq!(batch(value).fg, committed, "{value}:\n{text}");
    }
    assert_eq!(batch("[grown2]"), batch("[old0]"));
    let heading = |row: &str, name: &str| style_in(&buf, &panes, PaneId::Partitions, row, name);
    assert!(
        heading("t-3 leader 1", "t-3")
            .add_modifier
            .contains(Modifier::BOLD)
    );
    assert_eq!(
        heading("t-3 leader 1", "t-3"),
        heading("t-0 leader 1", "t-0")
    );

    // Replicas pane: the new partitions' leaders are marked as leaders
    // (bold), their followers in sync (the good colour), as the old ones.
    let replicas = |row: &str, needle: &str| style_in(&buf, &panes, PaneId::Replicas, row, needle);
    // Rows are "broker ldr LEO lag ms ISR": t-3's leader is broker 1, as
    // t-0's is, so the first "1   ldr" row is t-0's, and t-2's leader 3
    // has its own.
    let leader_new = replicas("3   ldr", "ldr");
    assert!(
        leader_new.add_modifier.contains(Modifier::BOLD),
        "{leader_new:?}"
    );
    assert_eq!(leader_new, replicas("1   ldr", "ldr"));
    assert_eq!(replicas("3   ldr", "✓ isr").fg, theme.good().fg);

    // Log pane: every replica of the new partitions holds its record as a
    // committed cell, the leader's and the follower's alike.
    let cell = |row: &str| style_in(&buf, &panes, PaneId::Log, row, "✓");
    for (row, leader) in [("3 ldr│✓grown2", true), ("1 isr│✓grown2", false)] {
        assert_eq!(cell(row).fg, committed, "{row} (leader {leader}):\n{text}");
    }
    assert_eq!(cell("1 ldr│✓grown3"), cell("1 ldr│✓old0"));
    assert_eq!(cell("2 isr│✓grown3"), cell("2 isr│✓old0"));

    // Consumers pane: read_committed reads the new partitions' record up to
    // their LSO = HW (the good colour on its count), as the old ones'.
    let (area, rows) = pane_rows(&buf, &panes, PaneId::Consumers);
    let count = |name: &str| {
        let heading = format!("{name} (1)");
        let (y, row) = rows
            .iter()
            .find(|(_, r)| r.contains(&heading))
            .unwrap_or_else(|| panic!("no {heading}:\n{text}"));
        // The second heading on the row is read_committed's; its count
        // carries the colour.
        let at = row.rfind(&heading).unwrap() + heading.find('(').unwrap();
        assert_ne!(Some(at), row.find('('), "two columns: {row}");
        buf[(area.x + row[..at].chars().count() as u16, *y)].style()
    };
    assert_eq!(count("t-2").fg, theme.good().fg, "{text}");
    assert_eq!(count("t-3"), count("t-0"));
}

#[test]
fn the_group_takes_the_new_partitions_in_the_groups_pane() {
    let mut app = app("groups");
    let (buf, text, panes) = frame_at(&mut app, LAST);
    insta::assert_snapshot!("grown_groups_160x66", text);
    let (_, rows) = pane_rows(&buf, &panes, PaneId::Groups);
    let owned = |member: &str| {
        rows.iter()
            .find(|(_, r)| r.contains(&format!("{member}  ")) && r.contains(':'))
            .map(|(_, r)| {
                let after = r.split(':').next_back().unwrap();
                after.trim_matches(|c| c == '│' || c == ' ').to_string()
            })
            .unwrap_or_else(|| panic!("no row of {member}:\n{text}"))
    };
    // Round-robin over the four partitions at generation 2.
    assert_eq!(owned("m1"), "t-0 t-2", "{text}");
    assert_eq!(owned("m2"), "t-1 t-3", "{text}");
    assert!(text.contains("generation 2"), "{text}");
    // The rebalance says what moved: the new partitions from nobody.
    for moved in ["t-1 m1 → m2", "t-2 nobody → m1", "t-3 nobody → m2"] {
        assert!(
            pane_has(&buf, &panes, PaneId::Groups, moved),
            "{moved}:\n{text}"
        );
    }
    // A new partition's committed offset caught up with its HW: lag 0 in
    // the good colour, as an old one's.
    let caught_up = |row: &str| style_in(&buf, &panes, PaneId::Groups, row, "✓");
    assert_eq!(
        caught_up("t-2       m1").fg,
        Theme::colored().good().fg,
        "{text}"
    );
    // (t-3's row is bold: the last step committed it.)
    assert_eq!(
        caught_up("t-3       m2").fg,
        caught_up("t-0       m1").fg,
        "{text}"
    );
}

#[test]
fn stepping_back_before_the_growth_draws_two_partitions_again() {
    let mut app = app("default");
    let (_, grown, _) = frame_at(&mut app, LAST);
    assert!(grown.contains("t-3 leader 1"), "{grown}");
    let (buf, before, panes) = frame_at(&mut app, GROW - 1);
    assert!(before.contains("t-1 leader 2"), "{before}");
    for id in [
        PaneId::Partitions,
        PaneId::Replicas,
        PaneId::Log,
        PaneId::Consumers,
    ] {
        for name in ["t-2", "t-3"] {
            assert!(
                !pane_has(&buf, &panes, id, name),
                "{id:?} has {name}:\n{before}"
            );
        }
    }
    // And forward again: the growth itself draws the new partitions empty.
    let (_, grown, _) = frame_at(&mut app, GROW);
    assert!(
        grown.contains("t-2 leader 3 e0 HW 0 LSO 0 LEO 0"),
        "{grown}"
    );
    assert!(
        grown.contains("t-3 leader 1 e0 HW 0 LSO 0 LEO 0"),
        "{grown}"
    );
}
