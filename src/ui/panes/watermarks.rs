//! The watermarks pane (SPEC §6 "watermarks (a ruler per partition: log
//! start, LSO, HW, each replica's LEO)"): a legend, then per partition a
//! ruler scaled to the width and a line with the numbers. The ruler is `=`
//! up to the LSO ("stable": read_committed may read there), `~` from LSO to
//! HW ("unstable", Kafka's word: only read_uncommitted reads there) and `-`
//! from HW to the leader's LEO; `[` marks the log
//! start, `L` the LSO, `H` the HW and a broker's digit its LEO.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::{PaneContext, frame, lines, marks};
use crate::session::snapshot::{PartitionSnapshot, Snapshot};
use crate::ui::theme::Theme;

fn legend<'a>(ctx: &PaneContext) -> Line<'a> {
    let (s, t) = (ctx.theme.strong(), |k| ctx.lang.t(k));
    Line::from(vec![
        Span::styled("L", s),
        Span::raw(" LSO  "),
        Span::styled("H", s),
        Span::raw(" HW  "),
        Span::styled("1-9", s),
        Span::raw(" LEO  "),
        Span::styled("=", ctx.theme.good()),
        Span::raw(format!(" {}  ", t("below_lso"))),
        Span::styled("~", ctx.theme.waiting()),
        Span::raw(format!(" {}  ", t("lso_to_hw"))),
        Span::styled("-", ctx.theme.dim()),
        Span::raw(format!(" {}", t("above_hw"))),
    ])
}

/// The ruler of `p`, `width` cells between the bars.
fn ruler<'a>(p: &PartitionSnapshot, ctx: &PaneContext, width: usize) -> Vec<Span<'a>> {
    let leos = p.replicas.iter().map(|r| r.log_end_offset);
    let hi = leos
        .clone()
        .chain([p.log_end_offset, p.high_watermark, 1])
        .max()
        .unwrap_or(1);
    let cell =
        |o: i64| (i128::from(o.clamp(0, hi)) * (width as i128 - 1) / i128::from(hi)) as usize;
    let (cs, cl, ch, ce) = (
        cell(p.log_start_offset),
        cell(p.last_stable_offset),
        cell(p.high_watermark),
        cell(p.log_end_offset),
    );
    let theme = &ctx.theme;
    let mut cells: Vec<(char, Style)> = (0..width)
        .map(|c| match c {
            c if c < cs => (' ', Style::new()),
            c if c < cl => ('=', theme.good()),
            c if c < ch => ('~', theme.waiting()),
            c if c < ce => ('-', theme.dim()),
            _ => (' ', Style::new()),
        })
        .collect();
    for r in &p.replicas {
        let digit = char::from_digit(r.broker, 10).unwrap_or('+');
        cells[cell(r.log_end_offset)] = (digit, theme.strong());
    }
    for (c, mark) in [(cs, '['), (cl, 'L'), (ch, 'H')] {
        cells[c] = (mark, theme.strong());
    }
    let mut spans = vec![Span::raw("|")];
    spans.extend(
        cells
            .into_iter()
            .map(|(c, s)| Span::styled(c.to_string(), s)),
    );
    spans.push(Span::raw("|"));
    spans
}

/// The numbers under a ruler; `▸` (and bold) when a mark moved at the last
/// step.
fn numbers<'a>(p: &PartitionSnapshot, ctx: &PaneContext, moved: bool) -> Line<'a> {
    let leos: Vec<String> = p
        .replicas
        .iter()
        .map(|r| format!("{}:{}", r.broker, r.log_end_offset))
        .collect();
    let text = format!(
        "[{} LSO {} HW {} LEO {}",
        p.log_start_offset,
        p.last_stable_offset,
        p.high_watermark,
        leos.join(" ")
    );
    if moved {
        Line::from(vec![
            Span::styled(
                format!("{} ", Theme::CHANGED_GLYPH),
                ctx.theme.changed_mark(),
            ),
            Span::styled(text, ctx.theme.changed()),
        ])
    } else {
        Line::raw(format!("  {text}"))
    }
}

/// Draws the pane; `ctx.scroll` skips whole partitions.
/// The smallest scroll (in partitions) at which a pane in `area` draws
/// partition `p`'s ruler and numbers (under the legend).
pub fn scroll_to(view: &Snapshot, area: Rect, p: usize) -> usize {
    let inner = ratatui::widgets::Block::bordered().inner(area);
    let heights = vec![2; view.partitions.len()];
    let height = usize::from(inner.height).saturating_sub(1);
    super::touched::first_shown(&heights, height, p)
}

pub fn render(view: &Snapshot, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let inner = frame(ctx, super::PaneId::Watermarks, area, buf);
    let height = usize::from(inner.height);
    let mut out = vec![legend(ctx)];
    let skip = ctx.scroll.min(view.partitions.len());
    let mut drawn = 0;
    for (i, p) in view.partitions.iter().enumerate().skip(skip) {
        if out.len() >= height {
            break;
        }
        drawn += 1;
        let name = p.name();
        let mut ruler_line = super::touched::name_spans(ctx, i, name);
        let named: usize = ruler_line.iter().map(Span::width).sum();
        let width = usize::from(inner.width).saturating_sub(named + 3);
        ruler_line.push(Span::raw(" "));
        if width >= 2 {
            ruler_line.extend(ruler(p, ctx, width));
        }
        out.push(Line::from(ruler_line));
        let moved = view
            .changes
            .partition(&p.name())
            .is_some_and(|c| c.moves_marks());
        out.push(numbers(p, ctx, moved));
    }
    out.truncate(height);
    lines(out, inner, buf);
    marks(ctx, area, skip, view.partitions.len() - skip - drawn, buf);
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{ctx, draw, view};
    use super::super::{PaneContext, PaneId};
    use crate::ui::i18n::Lang;

    #[test]
    fn ruler_marks_and_numbers() {
        // 13 cells for offsets 0..=6: offset o at cell 2 * o; H hides broker 2.
        let text = draw(PaneId::Watermarks, &view(), &ctx(), 23, 5);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[2], "│out-0 |[===3=L~~~H-1|│", "{text}");
        let wide = draw(PaneId::Watermarks, &view(), &ctx(), 100, 5);
        assert!(wide.contains("  [0 LSO 3 HW 5 LEO 1:6 2:5 3:2"), "{wide}");
        assert!(
            wide.contains("L LSO  H HW  1-9 LEO  = stable  ~ unstable  - above HW"),
            "{wide}"
        );
        let zh = draw(
            PaneId::Watermarks,
            &view(),
            &PaneContext {
                lang: Lang::Zh,
                ..ctx()
            },
            80,
            5,
        );
        assert!(zh.contains("已稳定") && zh.contains("未稳定"), "{zh}");
    }

    #[test]
    fn narrow_pane_keeps_the_name() {
        let text = draw(PaneId::Watermarks, &view(), &ctx(), 9, 5);
        assert!(text.contains("out-0"), "{text}");
    }
}
