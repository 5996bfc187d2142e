//! The replicas pane (SPEC §6 "replicas (LEO, lag, ISR)"): a table per
//! partition with each broker's role, LEO, lag, time since its last fetch,
//! ISR membership and whether it is stopped.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Row, Table, Widget};

use super::{PaneContext, frame, marks, shorten};
use crate::session::snapshot::{ReplicaSnapshot, Snapshot};
use crate::ui::theme::Theme;

/// How much of a row a pane's width allows: everything in words; the
/// short words chosen for 80x24 (`ldr`, `✓ isr`, `✗ out`, stopped as the
/// `■` by the broker); and without the ms since the last fetch, with ISR
/// membership as its glyph alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fit {
    Words,
    Short,
    Tiny,
}

/// A replica's row in `fit`; `changed` (its LEO moved, it joined or left
/// the ISR, or it became or stopped being the leader at the last step)
/// marks it `▸`.
fn row<'a>(r: &ReplicaSnapshot, ctx: &PaneContext, fit: Fit, changed: bool) -> Row<'a> {
    let t = |k| ctx.lang.t(k);
    let role = match (r.is_leader, fit) {
        (false, _) => Cell::from(""),
        (true, Fit::Words) => Cell::from(format!("*{}", t("leader"))).style(ctx.theme.strong()),
        (true, _) => Cell::from(t("log_leader")).style(ctx.theme.strong()),
    };
    let lag = Cell::from(r.lag.to_string()).style(if r.lag > 0 {
        ctx.theme.waiting()
    } else {
        ctx.theme.good()
    });
    let (yes, no) = match fit {
        Fit::Words => (
            format!("✓ {}", t("in_sync")),
            format!("✗ {}", t("out_of_sync")),
        ),
        Fit::Short => (
            format!("✓ {}", t("log_in_sync")),
            format!("✗ {}", t("log_out_of_sync")),
        ),
        Fit::Tiny => ("✓".to_string(), "✗".to_string()),
    };
    let isr = if r.in_sync {
        Cell::from(yes).style(ctx.theme.good())
    } else {
        Cell::from(no).style(ctx.theme.bad())
    };
    let stopped = if r.stopped && fit == Fit::Words {
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
    let mut cells = vec![broker, role, Cell::from(r.log_end_offset.to_string()), lag];
    if fit < Fit::Tiny {
        cells.push(Cell::from(format!("{}ms", r.ms_since_fetch)));
    }
    cells.push(isr);
    if fit == Fit::Words {
        cells.push(stopped);
    }
    Row::new(cells).style(row_style)
}

fn width(s: &str) -> u16 {
    Span::raw(s).width() as u16
}

/// The columns for `fit`, sized to the labels of `ctx`'s language and to
/// the widest numbers of `view`, and the width they need.
fn columns(
    view: &Snapshot,
    ctx: &PaneContext,
    fit: Fit,
) -> (Vec<Constraint>, Vec<&'static str>, u16) {
    let t = |k| ctx.lang.t(k);
    let numbers = |f: fn(&ReplicaSnapshot) -> String| {
        view.partitions
            .iter()
            .flat_map(|p| &p.replicas)
            .map(|r| width(&f(r)))
            .max()
            .unwrap_or(1)
    };
    let leo = numbers(|r| r.log_end_offset.to_string()).max(3);
    let lag = numbers(|r| r.lag.to_string()).max(width(t("lag")));
    let ms = numbers(|r| format!("{}ms", r.ms_since_fetch)).max(2);
    // Room for the changed mark and the stopped mark.
    let broker = numbers(|r| format!("▸{}■", r.broker)).max(1);
    let (role, isr) = match fit {
        Fit::Words => (
            width(t("leader")) + 1,
            width(t("out_of_sync")).max(width(t("in_sync"))) + 2,
        ),
        Fit::Short => (
            width(t("log_leader")),
            width(t("log_out_of_sync")).max(width(t("log_in_sync"))) + 2,
        ),
        Fit::Tiny => (width(t("log_leader")), 3),
    };
    let mut widths = vec![broker, role, leo, lag];
    let mut header = vec!["#", "", "LEO", t("lag")];
    if fit < Fit::Tiny {
        widths.push(ms);
        header.push("ms");
    }
    widths.push(isr);
    header.push("ISR");
    if fit == Fit::Words {
        widths.push(width(t("stopped")) + 2);
        header.push("");
    }
    let need = widths.iter().sum::<u16>() + widths.len() as u16 - 1;
    (
        widths.into_iter().map(Constraint::Length).collect(),
        header,
        need,
    )
}

/// Draws the pane; `ctx.scroll` skips whole partitions.
pub fn render(view: &Snapshot, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let inner = frame(ctx, "replicas", area, buf);
    let t = |k| ctx.lang.t(k);
    let (fit, (widths, header, _)) = [Fit::Words, Fit::Short, Fit::Tiny]
        .into_iter()
        .map(|f| (f, columns(view, ctx, f)))
        .find(|(_, (_, _, need))| *need <= inner.width)
        .unwrap_or_else(|| (Fit::Tiny, columns(view, ctx, Fit::Tiny)));
    let header = Row::new(header).style(ctx.theme.dim());
    let mut y = inner.y;
    let skip = ctx.scroll.min(view.partitions.len());
    let mut drawn = 0;
    for p in view.partitions.iter().skip(skip) {
        if y >= inner.bottom() {
            break;
        }
        drawn += 1;
        let isr: Vec<String> = p.isr.iter().map(u32::to_string).collect();
        // In words, in short words, or only the ISR (the rows say who leads).
        let isr = isr.join(",");
        let name = p.name();
        let text = [
            format!(
                " {} {} e{} ISR [{isr}]",
                t("leader"),
                p.leader,
                p.leader_epoch
            ),
            format!(
                " {} {} e{} ISR [{isr}]",
                t("log_leader"),
                p.leader,
                p.leader_epoch
            ),
        ]
        .into_iter()
        .skip(usize::from(fit != Fit::Words))
        .find(|s| width(&name) + width(s) <= inner.width)
        .unwrap_or(format!(" ISR [{isr}]"));
        let title = Line::from(vec![
            Span::styled(name, ctx.theme.strong()),
            Span::raw(text),
        ]);
        shorten(title, usize::from(inner.width)).render(Rect::new(inner.x, y, inner.width, 1), buf);
        y += 1;
        let room = usize::from(inner.bottom() - y);
        let n = p.replicas.len().min(room.saturating_sub(1));
        let h = if room == 0 { 0 } else { n as u16 + 1 };
        let changes = view.changes.partition(&p.name());
        let rows = p.replicas[..n].iter().map(|r| {
            row(
                r,
                ctx,
                fit,
                changes.is_some_and(|c| c.touches_replica(r.broker)),
            )
        });
        Table::new(rows, widths.clone())
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
    fn narrow_panes_use_short_words_never_half_words() {
        let text = draw(PaneId::Replicas, &view(), &ctx(), 34, 8);
        assert!(text.contains("out-0 ldr 1 e0 ISR [1,2]"), "{text}");
        assert!(
            text.contains(" ldr ") && text.contains("✓ isr") && text.contains("✗ out"),
            "{text}"
        );
        assert!(!text.contains("*le") && !text.contains("in s"), "{text}");
        let tiny = draw(PaneId::Replicas, &view(), &ctx(), 22, 8);
        let row3 = tiny.lines().find(|l| l.starts_with("│3■")).unwrap();
        assert!(row3.contains('✗') && !row3.contains("ms"), "{tiny}");
        assert!(tiny.contains(" ldr "), "{tiny}");
    }

    #[test]
    fn rows_are_cut_at_the_bottom() {
        let text = draw(PaneId::Replicas, &view(), &ctx(), 70, 5);
        assert!(text.contains("│1 ") && !text.contains("│2 "), "{text}");
    }
}
