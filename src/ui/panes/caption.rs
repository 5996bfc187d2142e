//! The caption pane (SPEC §6 "caption"): the current step's caption in the
//! interface language, wrapped, first (the pane is often a few rows high);
//! then a line with the recording's title, `step X/Y`, the clock and the
//! rules.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Block;

use super::{PaneContext, frame, lines, marks};
use crate::session::snapshot::Snapshot;
use crate::ui::wrap::wrap;

/// How many rows the caption and its title line take in `area` (the whole
/// pane): what its scrolling can reach.
pub fn row_count(view: &Snapshot, ctx: &PaneContext, area: Rect) -> usize {
    rows(view, ctx, Block::bordered().inner(area).width).len()
}

/// Draws the pane; `ctx.scroll` scrolls the caption.
pub fn render(view: &Snapshot, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let inner = frame(ctx, "caption", area, buf);
    let rows = rows(view, ctx, inner.width);
    let skip = ctx.scroll.min(rows.len());
    let shown = (rows.len() - skip).min(usize::from(inner.height));
    marks(ctx, area, skip, rows.len() - skip - shown, buf);
    let out = rows.into_iter().skip(skip).take(shown).collect();
    lines(out, inner, buf);
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
    title.push(Span::raw(format!(
        " · {} {} ms · {} {}",
        t("clock"),
        view.clock_ms,
        t("rules"),
        view.rules
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

#[cfg(test)]
mod tests {
    use super::super::testkit::{ctx, draw, view};
    use super::super::{PaneContext, PaneId};
    use crate::session::snapshot::Snapshot;
    use crate::ui::i18n::Lang;

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
