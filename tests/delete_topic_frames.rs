//! The dashboard after `delete_topic` (SPEC §6; docs/recording-format.md
//! `delete_topic`): topics a and b with records, b deleted, a written
//! again. The frame after the deletion (snapshotted with insta) draws a
//! alone in the partitions, replicas, log and offsets panes, and its
//! events pane tells the deletion as an ok step is told; stepping back
//! before the deletion draws b again.

#[allow(dead_code)]
#[path = "common/frame_panes.rs"]
mod frame_panes;

use frame_panes::{pane_has, pane_rows};
use minikafka::session::Recording;
use minikafka::ui::app::App;
use minikafka::ui::headless::buffer_text;
use minikafka::ui::i18n::Lang;
use minikafka::ui::layout;
use minikafka::ui::panes::PaneId;
use minikafka::ui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use serde_json::json;

/// The step that deletes b.
const DELETE: usize = 6;
const LAST: usize = 7;
const SIZE: (u16, u16) = (160, 48);

fn recording() -> Recording {
    let header = json!({
        "mk_recording": 1, "title": "b deleted", "rules": "kafka",
        "cluster": {"brokers": [1, 2, 3], "topics": []},
    });
    let actions = [
        json!({"create_topic": {"name": "a", "partitions": 1, "replication_factor": 2}}),
        json!({"create_topic": {"name": "b", "partitions": 2, "replication_factor": 2}}),
        json!({"produce": {"topic": "a", "partition": 0, "value": "a0"}}),
        json!({"produce": {"topic": "b", "partition": 1, "value": "b1"}}),
        json!({"replicate": {}}),
        json!({"delete_topic": {"name": "b"}}),
        json!({"produce": {"topic": "a", "partition": 0, "value": "a1"}}),
    ];
    assert_eq!(actions.len(), LAST);
    assert_eq!(actions[DELETE - 1]["delete_topic"]["name"], "b");
    let mut lines = vec![header.to_string()];
    lines.extend(
        actions
            .iter()
            .enumerate()
            .map(|(i, a)| json!({"at_ms": i * 1000, "action": a}).to_string()),
    );
    Recording::parse("delete.jsonl", &lines.join("\n")).unwrap()
}

fn frame_at(app: &mut App, step: usize) -> (Buffer, String, Vec<(PaneId, Rect)>) {
    frame_panes::frame_at(app, step, SIZE)
}

/// The style of the first cell of the events pane's row holding `what`.
fn event_style(buf: &Buffer, panes: &[(PaneId, Rect)], what: &str) -> Style {
    let (area, rows) = pane_rows(buf, panes, PaneId::Events);
    let (y, row) = rows
        .iter()
        .find(|(_, r)| r.contains(what))
        .unwrap_or_else(|| panic!("no event {what:?}:\n{}", buffer_text(buf)));
    let at = row.find(what).unwrap();
    buf[(area.x + row[..at].chars().count() as u16, *y)].style()
}

#[test]
fn a_deleted_topic_leaves_every_pane_and_stepping_back_draws_it_again() {
    let mut app = App::replay(
        recording(),
        layout::load("default").unwrap(),
        Lang::En,
        Theme::colored(),
    )
    .unwrap();
    app.update(minikafka::ui::app::Msg::Resize(SIZE.0, SIZE.1))
        .unwrap();
    let (buf, text, panes) = frame_at(&mut app, LAST);
    insta::assert_snapshot!("deleted_default_160x48", text);
    for id in [PaneId::Partitions, PaneId::Replicas, PaneId::Log] {
        assert!(
            pane_has(&buf, &panes, id, "a-0"),
            "{id:?} lacks a-0:\n{text}"
        );
        for gone in ["b-0", "b-1"] {
            assert!(
                !pane_has(&buf, &panes, id, gone),
                "{id:?} still has {gone}:\n{text}"
            );
        }
    }
    // The deletion is told as an ok step is: the same style as a produce.
    let deleted = event_style(&buf, &panes, "delete_topic: ok");
    assert_eq!(deleted, event_style(&buf, &panes, "produce: ok"), "{text}");
    assert!(text.contains("delete_topic: ok; topic b"), "{text}");

    let (buf, text, panes) = frame_at(&mut app, DELETE - 1);
    assert!(pane_has(&buf, &panes, PaneId::Partitions, "b-1"), "{text}");
    assert!(pane_has(&buf, &panes, PaneId::Log, "b-1"), "{text}");
}
