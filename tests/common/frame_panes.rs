//! Reading one pane of a drawn frame: its rows' text, a cell's style where
//! some text starts, whether it shows some text. For frame tests that check
//! what a pane draws and how it is styled, not only the whole frame's text.

use minikafka::ui::app::App;
use minikafka::ui::frame;
use minikafka::ui::headless::{buffer_text, frame_buffer};
use minikafka::ui::panes::PaneId;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

/// The frame of `app` at `step` drawn at `size`: its buffer, its text, and
/// each pane's rectangle.
pub fn frame_at(
    app: &mut App,
    step: usize,
    size: (u16, u16),
) -> (Buffer, String, Vec<(PaneId, Rect)>) {
    app.goto_step(step).unwrap();
    let buf = frame_buffer(app, size.0, size.1);
    let panes = frame::map(&app.frame_input(), buf.area).panes;
    let text = buffer_text(&buf);
    (buf, text, panes)
}

/// The text of pane `id`'s rows, each with its y (one symbol a cell: the
/// frames these tests draw have no wide characters, so a char index is a
/// column).
pub fn pane_rows(buf: &Buffer, panes: &[(PaneId, Rect)], id: PaneId) -> (Rect, Vec<(u16, String)>) {
    let area = panes
        .iter()
        .find(|(p, _)| *p == id)
        .unwrap_or_else(|| panic!("{id:?} is not in the layout"))
        .1;
    let rows = (area.top()..area.bottom())
        .map(|y| {
            let row = (area.left()..area.right())
                .map(|x| buf[(x, y)].symbol())
                .collect();
            (y, row)
        })
        .collect();
    (area, rows)
}

/// In pane `id`, the style of the cell where `needle` starts on the first
/// row holding `row_has` (both on one row).
pub fn style_in(
    buf: &Buffer,
    panes: &[(PaneId, Rect)],
    id: PaneId,
    row_has: &str,
    needle: &str,
) -> Style {
    let (area, rows) = pane_rows(buf, panes, id);
    let (y, row) = rows
        .iter()
        .find(|(_, r)| r.contains(row_has))
        .unwrap_or_else(|| panic!("{id:?}: no row with {row_has:?}:\n{}", buffer_text(buf)));
    let at = row
        .find(needle)
        .unwrap_or_else(|| panic!("{id:?}: {needle:?} in {row:?}"));
    let x = area.x + row[..at].chars().count() as u16;
    buf[(x, *y)].style()
}

/// Whether pane `id` has a row holding `what`.
pub fn pane_has(buf: &Buffer, panes: &[(PaneId, Rect)], id: PaneId, what: &str) -> bool {
    pane_rows(buf, panes, id)
        .1
        .iter()
        .any(|(_, r)| r.contains(what))
}
