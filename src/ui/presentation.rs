//! Presentation mode (`P`): for a lecture on a projector, the body shows only
//! the focused pane and, under it, the step's caption large. A terminal cannot
//! draw a bigger font, so "large" means what a room can read from the back,
//! set like a slide: bold text on a short measure (at most [`MEASURE`]
//! columns, centred, with margins), a line of space between the lines when
//! they fit, the recording's title and step above it, the whole block centred
//! in a box that takes a third of the body ([`MIN_SHARE`]) and grows with its
//! text up to [`MAX_SHARE`]; text that still does not fit is marked "↓ N
//! more".

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Widget};

use crate::session::snapshot::Snapshot;
use crate::ui::frame::ViewState;
use crate::ui::panes;
use crate::ui::wrap::{width, wrap};

/// The longest caption line, in columns: longer lines are hard to follow
/// on a wall.
pub const MEASURE: usize = 64;
/// The caption's box is never lower than this (borders included)...
pub const MIN_ROWS: u16 = 6;
/// ...nor lower than this share of the body, in percent...
pub const MIN_SHARE: u16 = 33;
/// ...nor higher than this one (unless the minimum rows need more).
pub const MAX_SHARE: u16 = 45;

/// Columns left free on each side of the text.
const MARGIN: u16 = 3;

/// The step heading: the recording's title and the step.
fn heading(app: &ViewState, view: &Snapshot) -> String {
    let step = match view.total_steps {
        Some(total) => format!("{} {}/{total}", app.lang.t("step"), view.step),
        None => format!("{} {}", app.lang.t("step"), view.step),
    };
    if view.title.is_empty() {
        step
    } else {
        format!("{} · {step}", view.title)
    }
}

/// The caption's lines for a box `outer_w` wide.
fn caption_lines(app: &ViewState, view: &Snapshot, outer_w: u16) -> Vec<String> {
    let text_w = usize::from(outer_w.saturating_sub(2 + 2 * MARGIN)).min(MEASURE);
    match &view.caption {
        Some(c) => wrap(c.text(app.lang.code()), text_w),
        None => Vec::new(),
    }
}

/// Whether `n` caption lines are set double-spaced in `rows` text rows
/// (after the heading and its blank line).
fn double_spaced(n: usize, rows: usize) -> bool {
    n > 0 && 2 * n - 1 <= rows
}

/// The rows the caption's box wants in a body `width` wide: borders, the
/// heading, a blank row, and the caption double-spaced; clamped to the
/// module's bounds by [`crate::ui::frame::map`]'s split.
pub fn caption_height(app: &ViewState, view: &Snapshot, width: u16) -> u16 {
    let n = caption_lines(app, view, width).len();
    let want = 2 + 2 + (2 * n).saturating_sub(1);
    let want = u16::try_from(want).unwrap_or(u16::MAX);
    want.max(MIN_ROWS)
}

/// The box's height in a body of `body_h` rows: what it wants, within the
/// bounds.
pub fn clamp_height(want: u16, body_h: u16) -> u16 {
    let floor = MIN_ROWS.min(body_h);
    let max = (body_h * MAX_SHARE / 100).max(floor);
    let min = (body_h * MIN_SHARE / 100).max(floor);
    want.clamp(min, max)
}

/// Draws the large caption into `area`.
pub fn draw_caption(app: &ViewState, view: &Snapshot, area: Rect, buf: &mut Buffer) {
    let area = area.intersection(buf.area);
    let theme = app.theme;
    let block = Block::bordered()
        .title(app.lang.t("caption"))
        .title_style(theme.title(true))
        .border_type(theme.border_type(true))
        .border_style(theme.border(true));
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.is_empty() {
        return;
    }
    let text = Rect {
        x: inner.x + MARGIN.min(inner.width / 4),
        width: inner.width - 2 * MARGIN.min(inner.width / 4),
        ..inner
    };
    let caption = caption_lines(app, view, area.width);
    let rows = usize::from(text.height).saturating_sub(2);
    let spaced = double_spaced(caption.len(), rows);
    let centre = |s: &str| {
        let pad = usize::from(text.width).saturating_sub(width(s)) / 2;
        format!("{}{s}", " ".repeat(pad))
    };
    let mut lines = vec![
        Line::styled(
            centre(&heading(app, view)),
            theme.dim().patch(theme.strong()),
        ),
        Line::raw(""),
    ];
    let mut shown = 0;
    for (i, line) in caption.iter().enumerate() {
        let need = if spaced && i > 0 { 2 } else { 1 };
        if lines.len() + need > usize::from(text.height) {
            break;
        }
        if spaced && i > 0 {
            lines.push(Line::raw(""));
        }
        lines.push(Line::styled(centre(line), theme.strong()));
        shown += 1;
    }
    // The block sits in the middle of the box, as on a slide.
    let used = u16::try_from(lines.len()).unwrap_or(u16::MAX);
    let text = Rect {
        y: text.y + text.height.saturating_sub(used) / 2,
        height: used.min(text.height),
        ..text
    };
    Paragraph::new(lines).render(text, buf);
    panes::scroll_marks(app.lang, theme, area, 0, caption.len() - shown, buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn double_spacing_needs_room_for_the_gaps() {
        assert!(double_spaced(3, 5));
        assert!(!double_spaced(3, 4));
        assert!(!double_spaced(0, 9));
        assert!(double_spaced(1, 1));
    }

    #[test]
    fn the_box_stays_within_its_share() {
        assert_eq!(clamp_height(30, 46), 20);
        assert_eq!(clamp_height(8, 46), 15, "a third of the body at least");
        assert_eq!(clamp_height(17, 46), 17);
        assert_eq!(clamp_height(30, 10), 6, "never below the minimum that fits");
        assert_eq!(clamp_height(30, 4), 4);
    }
}
