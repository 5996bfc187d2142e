//! The caption pane (SPEC §6 "caption"): the current step's caption in the
//! interface language, wrapped, first (the pane is often a few rows high);
//! then a line with the recording's title, `step X/Y`, the clock and the
//! rules. In a replay the whole bottom border is a timeline of the steps,
//! with the captioned ones and the current one marked, and the scroll
//! marks go on the top border so nothing covers it (docs/dashboard.md
//! "The timeline").

use crate::session::snapshot::field;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Block;

use super::{PaneContext, frame, lines, marks, top_scroll_marks};
use crate::session::snapshot::Snapshot;
use crate::ui::wrap::wrap;

/// How many scroll positions the caption and its title line have in `area`
/// (the whole pane): one when they fit, so the caption never scrolls away
/// (a `j` over a caption that fits would hide it), else one per row past
/// the pane's height.
pub fn row_count(view: &Snapshot, ctx: &PaneContext, area: Rect) -> usize {
    let inner = Block::bordered().inner(area);
    let rows = rows(view, ctx, inner.width).len();
    rows.saturating_sub(usize::from(inner.height)) + 1
}

/// Draws the pane; `ctx.scroll` scrolls the caption.
pub fn render(view: &Snapshot, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let inner = frame(ctx, super::PaneId::Caption, area, buf);
    let rows = rows(view, ctx, inner.width);
    // A scroll left from a longer caption never hides a shorter one.
    let skip = ctx
        .scroll
        .min(rows.len().saturating_sub(usize::from(inner.height)));
    let shown = (rows.len() - skip).min(usize::from(inner.height));
    let below = rows.len() - skip - shown;
    let out = rows.into_iter().skip(skip).take(shown).collect();
    lines(out, inner, buf);
    // A replay's timeline is the whole bottom border, always in view: the
    // last step at its right end. Nothing is drawn over it: the scroll
    // marks go on the top border, both of them (docs/dashboard.md "The
    // timeline").
    let room = area.width.saturating_sub(2);
    if view.total_steps.is_some() && room >= 8 && area.height >= 2 {
        top_scroll_marks(ctx.lang, ctx.theme, area, skip, below, buf);
    } else {
        marks(ctx, area, skip, below, buf);
    }
    if let Some(total) = view.total_steps
        && room >= 8
        && area.height >= 2
    {
        let at = Rect::new(area.x + 1, area.bottom() - 1, room, 1);
        let line = timeline(
            view.step,
            total,
            &view.captioned_steps,
            usize::from(room),
            ctx,
        );
        ratatui::widgets::Widget::render(line, at, buf);
    }
}

/// The caption, then the title line, wrapped by display width (CJK too)
/// into rows `width` wide, so the rows out of view can be counted.
fn rows<'a>(view: &Snapshot, ctx: &PaneContext, width: u16) -> Vec<Line<'a>> {
    let t = |k| ctx.lang.t(k);
    let step = format!("{} {}", t("step"), view.step_label());
    let mut title = Vec::new();
    if !view.title.is_empty() {
        title.push(Span::styled(
            format!("{} · ", view.title),
            ctx.theme.strong(),
        ));
    }
    title.push(Span::styled(step, ctx.theme.strong()));
    // A cluster observed over the protocol has no engine clock.
    let ms = if view.lacks(field::CLOCK_MS) {
        "?".to_string()
    } else {
        format!("{} ms", view.clock_ms)
    };
    title.push(Span::raw(format!(
        " · {} {ms} · {} {}",
        t("clock"),
        t("rules"),
        ctx.lang.rules_name(&view.rules)
    )));
    let width = usize::from(width);
    let mut rows: Vec<Line> = view
        .caption
        .as_ref()
        .map(|c| wrap(c.text(ctx.lang.code()), width))
        .unwrap_or_default()
        .into_iter()
        .map(Line::raw)
        .collect();
    let title = Line::from(title).style(ctx.theme.dim());
    if title.width() <= width {
        rows.push(title);
    } else {
        let text: String = title.spans.iter().map(|s| s.content.as_ref()).collect();
        rows.extend(
            wrap(&text, width)
                .into_iter()
                .map(|l| Line::styled(l, ctx.theme.dim())),
        );
    }
    rows
}

/// The step a click at (`col`, `row`) on a replay's timeline goes to;
/// `area` is the caption pane's, as [`render`] drew it. A cell holding a
/// captioned step's `●` goes to that caption (the first, when several share
/// the cell: what the eye aimed at); another cell to the step nearest its
/// place on the line. None off the timeline, or when none is drawn.
pub fn timeline_step(
    area: Rect,
    total: usize,
    captioned: &[usize],
    col: u16,
    row: u16,
) -> Option<usize> {
    let room = area.width.saturating_sub(2);
    if room < 8 || area.height < 2 || row != area.bottom() - 1 {
        return None;
    }
    let cell = usize::from(col.checked_sub(area.x + 1)?);
    let width = usize::from(room);
    if cell >= width {
        return None;
    }
    let span = width - 1;
    let col_of = |s: usize| s.min(total) * span / total.max(1);
    if let Some(&c) = captioned.iter().find(|&&c| col_of(c) == cell) {
        return Some(c);
    }
    Some(((cell * total + span / 2) / span).min(total))
}

/// A replay's timeline, `width` cells for steps 0 to `total`: `─`, `●` at
/// each captioned step (what `]` and `[` jump between), `▲` at the current
/// step. Steps that share a cell show the most telling mark.
fn timeline<'a>(
    step: usize,
    total: usize,
    captioned: &[usize],
    width: usize,
    ctx: &PaneContext,
) -> Line<'a> {
    let col = |s: usize| s.min(total) * (width - 1) / total.max(1);
    let mut cells = vec!['─'; width];
    for &c in captioned {
        cells[col(c)] = '●';
    }
    let at = col(step);
    cells[at] = '▲';
    let text = |r: std::ops::Range<usize>| cells[r].iter().collect::<String>();
    // Drawn in the border's own style: it is the border.
    let border = ctx.theme.border(ctx.focused);
    Line::from(vec![
        Span::styled(text(0..at), border),
        Span::styled("▲", border.patch(ctx.theme.strong())),
        Span::styled(text(at + 1..width), border),
    ])
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_timeline_marks_captions_and_the_current_step() {
        let ctx = super::super::testkit::ctx();
        let line = super::timeline(3, 10, &[1, 5, 10], 11, &ctx);
        let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "─●─▲─●────●");
        let current = line.spans.iter().find(|s| s.content == "▲").unwrap();
        assert!(
            current
                .style
                .add_modifier
                .contains(ratatui::style::Modifier::BOLD)
        );
        // The current step wins a cell it shares with a caption.
        let line = super::timeline(5, 10, &[5], 11, &ctx);
        let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "─────▲─────");
    }

    use super::super::testkit::{ctx, draw, view};
    use super::super::{PaneContext, PaneId};
    use crate::session::snapshot::Snapshot;
    use crate::ui::i18n::Lang;

    #[test]
    fn a_click_on_the_timeline_names_the_step_under_it() {
        // A pane 22 wide: 20 cells for steps 0..=40, two steps per cell.
        use ratatui::layout::Rect;
        let area = Rect::new(10, 5, 22, 6);
        let row = area.bottom() - 1;
        let at = |col| super::timeline_step(area, 40, &[7, 8, 30], col, row);
        // The first and last cells are the first and last steps.
        assert_eq!(at(11), Some(0));
        assert_eq!(at(30), Some(40));
        // Step 7 and 8 share cell 3 (7*19/40 = 3, 8*19/40 = 3): the first
        // caption there wins over the nearest step (6).
        assert_eq!(at(11 + 3), Some(7));
        // A cell with no caption: the nearest step (10*40/19 = 21.05).
        assert_eq!(at(11 + 10), Some(21));
        // Off the line: the borders' corners, another row, outside.
        assert_eq!(at(10), None);
        assert_eq!(at(31), None);
        assert_eq!(super::timeline_step(area, 40, &[], 15, row - 1), None);
        // Too narrow for a timeline: none drawn, none clicked.
        let narrow = Rect::new(0, 0, 9, 4);
        assert_eq!(super::timeline_step(narrow, 40, &[], 3, 3), None);
    }

    #[test]
    fn title_line_and_wrapped_caption() {
        let text = draw(PaneId::Caption, &view(), &ctx(), 60, 5);
        assert!(
            text.contains("demo · step 8/12 · clock 1500 ms · rules kafka"),
            "{text}"
        );
        assert!(
            text.contains("The LSO stops at the open transaction."),
            "{text}"
        );
        let narrow = draw(PaneId::Caption, &view(), &ctx(), 20, 12);
        assert!(narrow.contains("transaction."), "wrapped:\n{narrow}");
        let live = Snapshot {
            total_steps: None,
            caption: None,
            title: String::new(),
            ..view()
        };
        assert!(draw(PaneId::Caption, &live, &ctx(), 60, 4).contains("│step 8 · clock"));
    }

    #[test]
    fn caption_in_chinese() {
        let zh = draw(
            PaneId::Caption,
            &view(),
            &PaneContext {
                lang: Lang::Zh,
                ..ctx()
            },
            60,
            5,
        );
        assert!(
            zh.contains("LSO 停在未决事务处。") && zh.contains("步骤 8/12"),
            "{zh}"
        );
    }
}
