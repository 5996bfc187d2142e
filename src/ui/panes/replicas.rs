//! The replicas pane (SPEC §6 "replicas (LEO, lag, ISR)"): a table per
//! partition with each broker's role, LEO, lag, time since its last fetch,
//! ISR membership and whether it is stopped.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Row, Table, Widget};

use super::{PaneContext, frame, marks};
use crate::session::snapshot::{ReplicaSnapshot, Snapshot};
use crate::ui::theme::Theme;

/// A replica's row; `changed` (its LEO moved, it joined or left the ISR, or
/// it became or stopped being the leader at the last step) marks it `▸`.
fn row<'a>(r: &ReplicaSnapshot, ctx: &PaneContext, changed: bool) -> Row<'a> {
    let t = |k| ctx.lang.t(k);
    let role = if r.is_leader {
        Cell::from(format!("*{}", t("leader"))).style(ctx.theme.strong())
    } else {
        Cell::from("")
    };
    let lag = Cell::from(r.lag.to_string()).style(if r.lag > 0 {
        ctx.theme.waiting()
    } else {
        ctx.theme.good()
    });
    let isr = if r.in_sync {
        Cell::from(format!("✓ {}", t("in_sync"))).style(ctx.theme.good())
    } else {
        Cell::from(format!("✗ {}", t("out_of_sync"))).style(ctx.theme.bad())
    };
    let stopped = if r.stopped {
        Cell::from(format!("■ {}", t("stopped"))).style(ctx.theme.bad())
    } else {
        Cell::from("")
    };
    // A stopped broker is marked in its id column too: the label column is
    // the first to go when the pane is narrow.
    let mark = if changed { Theme::CHANGED_GLYPH } else { "" };
    let broker = if r.stopped {
        Cell::from(format!("{mark}{}■", r.broker)).style(ctx.theme.bad())
    } else {
        Cell::from(format!("{mark}{}", r.broker))
    };
    let row_style = if changed {
        ctx.theme.changed()
    } else {
        ratatui::style::Style::new()
    };
    Row::new(vec![
        broker,
        role,
        Cell::from(r.log_end_offset.to_string()),
        lag,
        Cell::from(format!("{}ms", r.ms_since_fetch)),
        isr,
        stopped,
    ])
    .style(row_style)
}

/// Draws the pane; `ctx.scroll` skips whole partitions.
pub fn render(view: &Snapshot, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let inner = frame(ctx, "replicas", area, buf);
    let t = |k| ctx.lang.t(k);
    let role_w = Span::raw(t("leader")).width() as u16 + 1;
    let isr_w = Span::raw(t("out_of_sync"))
        .width()
        .max(Span::raw(t("in_sync")).width()) as u16
        + 2;
    let widths = [
        Constraint::Length(4),
        Constraint::Length(role_w.max(4)),
        Constraint::Length(5),
        Constraint::Length(5),
        Constraint::Length(7),
        Constraint::Length(isr_w),
        Constraint::Min(0),
    ];
    let header = Row::new(vec!["#", "", "LEO", t("lag"), "ms", "ISR", ""]).style(ctx.theme.dim());
    let mut y = inner.y;
    let skip = ctx.scroll.min(view.partitions.len());
    let mut drawn = 0;
    for p in view.partitions.iter().skip(skip) {
        if y >= inner.bottom() {
            break;
        }
        drawn += 1;
        let isr: Vec<String> = p.isr.iter().map(u32::to_string).collect();
        let title = Line::from(vec![
            Span::styled(p.name(), ctx.theme.strong()),
            Span::raw(format!(
                " {} {} e{} ISR [{}]",
                t("leader"),
                p.leader,
                p.leader_epoch,
                isr.join(",")
            )),
        ]);
        title.render(Rect::new(inner.x, y, inner.width, 1), buf);
        y += 1;
        let room = usize::from(inner.bottom() - y);
        let n = p.replicas.len().min(room.saturating_sub(1));
        let h = if room == 0 { 0 } else { n as u16 + 1 };
        let changes = view.changes.partition(&p.name());
        let rows = p.replicas[..n]
            .iter()
            .map(|r| row(r, ctx, changes.is_some_and(|c| c.touches_replica(r.broker))));
        Table::new(rows, widths)
            .header(header.clone())
            .column_spacing(1)
            .render(Rect::new(inner.x, y, inner.width, h), buf);
        y += h;
    }
    let below = view.partitions.len() - skip - drawn;
    marks(ctx, area, skip, below, buf);
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{ctx, draw, view};
    use super::super::{PaneContext, PaneId};
    use crate::ui::i18n::Lang;

    #[test]
    fn leader_lag_and_isr_per_broker() {
        let text = draw(PaneId::Replicas, &view(), &ctx(), 70, 8);
        assert!(text.contains("out-0 leader 1 e0 ISR [1,2]"), "{text}");
        let line = |b: &str| {
            text.lines()
                .find(|l| l.starts_with(&format!("│{b} ")) || l.starts_with(&format!("│{b}■")))
                .unwrap()
                .to_string()
        };
        assert!(
            line("1").contains("*leader") && line("1").contains("✓ in sync"),
            "{text}"
        );
        assert!(
            line("2").contains("5 ") && line("2").contains("80ms"),
            "{text}"
        );
        assert!(
            line("3").starts_with("│3■")
                && line("3").contains("✗ out of sync")
                && line("3").contains("■ stopped"),
            "{text}"
        );
        let zh = draw(
            PaneId::Replicas,
            &view(),
            &PaneContext {
                lang: Lang::Zh,
                ..ctx()
            },
            70,
            8,
        );
        assert!(zh.contains("不同步") && zh.contains("已停止"), "{zh}");
    }

    #[test]
    fn rows_are_cut_at_the_bottom() {
        let text = draw(PaneId::Replicas, &view(), &ctx(), 70, 5);
        assert!(text.contains("│1 ") && !text.contains("│2 "), "{text}");
    }
}
