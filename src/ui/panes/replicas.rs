//! The replicas pane (SPEC §6 "replicas (LEO, lag, ISR)"): a table per
//! partition with each broker's role, LEO, lag, time since its last fetch,
//! ISR membership and whether it is stopped.

use crate::session::snapshot::field;
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
fn row<'a>(
    r: &ReplicaSnapshot,
    ctx: &PaneContext,
    fit: Fit,
    changed: bool,
    known: Known,
) -> Row<'a> {
    let t = |k| ctx.lang.t(k);
    let role = match (r.is_leader, fit) {
        (false, _) => Cell::from(""),
        (true, Fit::Words) => Cell::from(format!("*{}", t("leader"))).style(ctx.theme.strong()),
        (true, _) => Cell::from(t("log_leader")).style(ctx.theme.strong()),
    };
    let style = match r.lag {
        0 => ctx.theme.good(),
        1.. => ctx.theme.waiting(),
        _ => ctx.theme.divergent(),
    };
    let lag = match (known.lag, r.offset_lag) {
        (true, _) => Cell::from(lag_text(r, ctx, fit)).style(style),
        // An observed replica's DescribeLogDirs lag: below the HW, not
        // behind the leader's LEO (docs/observe.md "Replica lag").
        (false, Some(o)) => Cell::from(hw_lag_text(o)).style(if o == 0 {
            ctx.theme.good()
        } else {
            ctx.theme.waiting()
        }),
        (false, None) => Cell::from("?").style(ctx.theme.dim()),
    };
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
    let unknown = || Cell::from("?").style(ctx.theme.dim());
    let leo = if known.leo {
        Cell::from(r.log_end_offset.to_string())
    } else {
        unknown()
    };
    let mut cells = vec![broker, role, leo, lag];
    if fit < Fit::Tiny {
        cells.push(if known.ms {
            Cell::from(format!("{}ms", r.ms_since_fetch))
        } else {
            unknown()
        });
    }
    cells.push(isr);
    if fit == Fit::Words {
        cells.push(stopped);
    }
    Row::new(cells).style(row_style)
}

/// Which of a replica's numbers the source could see: all of them for the
/// embedded cluster; none for a cluster observed over the Kafka protocol,
/// which tells no replica's LEO (docs/observe.md). The pane then says `?`.
#[derive(Debug, Clone, Copy)]
struct Known {
    leo: bool,
    lag: bool,
    ms: bool,
}

impl Known {
    fn of(view: &Snapshot) -> Self {
        Self {
            leo: !view.lacks(field::REPLICA_LOG_END_OFFSET),
            lag: !view.lacks(field::REPLICA_LAG),
            ms: !view.lacks(field::REPLICA_MS_SINCE_FETCH),
        }
    }
}

/// The lag column of a replica: the leader's LEO minus its own, as the
/// snapshot has it; but a replica whose LEO is beyond the leader's (an old
/// leader's divergent tail after a promotion, E6, until its next fetch
/// truncates it) lags by nothing: it is ahead on a history the leader
/// does not have, so it says `≠ +2 ahead` (`≠+2` in short), with the log
/// pane's divergent glyph and style, never `-2`.
fn lag_text(r: &ReplicaSnapshot, ctx: &PaneContext, fit: Fit) -> String {
    match (r.lag, fit) {
        (0.., _) => r.lag.to_string(),
        (lag, Fit::Words) => format!(
            "{} +{} {}",
            Theme::DIVERGENT_GLYPH,
            lag.unsigned_abs(),
            ctx.lang.t("ahead")
        ),
        (lag, _) => format!("{}+{}", Theme::DIVERGENT_GLYPH, lag.unsigned_abs()),
    }
}

/// DescribeLogDirs' offset lag as the lag column shows it: `HW-2` for a
/// replica two offsets below the HW, `≥HW` for one that has it (Kafka's 0
/// says no more).
fn hw_lag_text(offset_lag: i64) -> String {
    if offset_lag > 0 {
        format!("HW-{offset_lag}")
    } else {
        "≥HW".to_string()
    }
}

/// What the lag column shows for `r`.
fn lag_shown(r: &ReplicaSnapshot, ctx: &PaneContext, fit: Fit, known: Known) -> String {
    match (known.lag, r.offset_lag) {
        (true, _) => lag_text(r, ctx, fit),
        (false, Some(o)) => hw_lag_text(o),
        (false, None) => "?".to_string(),
    }
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
    let known = Known::of(view);
    let lag = view
        .partitions
        .iter()
        .flat_map(|p| &p.replicas)
        .map(|r| width(&lag_shown(r, ctx, fit, known)))
        .max()
        .unwrap_or(1)
        .max(width(t("lag")));
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
/// The smallest scroll (in partitions) at which a pane in `area` draws
/// partition `p`'s table whole (its name, the column names, a row per
/// replica).
pub fn scroll_to(view: &Snapshot, area: Rect, p: usize) -> usize {
    let inner = ratatui::widgets::Block::bordered().inner(area);
    let heights: Vec<usize> = view
        .partitions
        .iter()
        .map(|q| q.replicas.len() + 2)
        .collect();
    super::touched::first_shown(&heights, usize::from(inner.height), p)
}

pub fn render(view: &Snapshot, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let inner = frame(ctx, super::PaneId::Replicas, area, buf);
    if super::no_topics(view, ctx, inner, buf) {
        return;
    }
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
    for (i, p) in view.partitions.iter().enumerate().skip(skip) {
        if y >= inner.bottom() {
            break;
        }
        let isr: Vec<String> = p.isr.iter().map(u32::to_string).collect();
        // In words, in short words, or only the ISR (the rows say who leads).
        let isr = isr.join(",");
        let name = p.name();
        // The touched partition's name has its mark before it.
        let named = width(&name) + u16::from(ctx.touched == Some(i));
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
        .find(|s| named + width(s) <= inner.width)
        .unwrap_or(format!(" ISR [{isr}]"));
        let mut title = super::touched::name_spans(ctx, i, name);
        title.push(Span::raw(text));
        let title = Line::from(title);
        shorten(title, usize::from(inner.width)).render(Rect::new(inner.x, y, inner.width, 1), buf);
        y += 1;
        let room = usize::from(inner.bottom() - y);
        let n = p.replicas.len().min(room.saturating_sub(1));
        let h = if room == 0 { 0 } else { n as u16 + 1 };
        // A table cut at the bottom is not shown: the mark below counts it,
        // so a replica row out of sight is never silently missing.
        if room > 0 && n == p.replicas.len() {
            drawn += 1;
        }
        let changes = view.changes.partition(&p.name());
        let known = Known::of(view);
        let rows = p.replicas[..n].iter().map(|r| {
            row(
                r,
                ctx,
                fit,
                changes.is_some_and(|c| c.touches_replica(r.broker)),
                known,
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
    fn an_observed_replica_shows_its_lag_behind_the_hw_never_a_guessed_lag() {
        use crate::session::snapshot::field;
        let mut v = view();
        v.unavailable = [
            field::REPLICA_LOG_END_OFFSET,
            field::REPLICA_LAG,
            field::REPLICA_MS_SINCE_FETCH,
        ]
        .map(String::from)
        .into();
        let replicas = &mut v.partitions[0].replicas;
        replicas[0].offset_lag = Some(0);
        replicas[1].offset_lag = Some(2);
        let text = draw(PaneId::Replicas, &v, &ctx(), 70, 8);
        let line = |b: &str| {
            text.lines()
                .find(|l| l.starts_with(&format!("│{b} ")) || l.starts_with(&format!("│{b}■")))
                .unwrap()
                .to_string()
        };
        assert!(line("1").contains("≥HW"), "{text}");
        assert!(line("2").contains("HW-2"), "{text}");
        assert!(
            !line("3").contains("HW") && line("3").contains('?'),
            "not asked: {text}"
        );
        let embedded = draw(PaneId::Replicas, &view(), &ctx(), 70, 8);
        assert!(
            !embedded.contains("HW-"),
            "the embedded lag wins: {embedded}"
        );
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
    fn a_follower_ahead_of_the_leader_is_divergent_not_a_negative_lag() {
        let mut v = view();
        // Broker 2 holds two offsets the leader does not (an old leader
        // after a promotion): LEO 8 against the leader's 6.
        v.partitions[0].replicas[1].log_end_offset = 8;
        v.partitions[0].replicas[1].lag = -2;
        let text = draw(PaneId::Replicas, &v, &ctx(), 70, 8);
        assert!(!text.contains("-2"), "{text}");
        let row2 = text.lines().find(|l| l.starts_with("│2 ")).unwrap();
        assert!(row2.contains("8   ≠ +2 ahead"), "{text}");
        let short = draw(PaneId::Replicas, &v, &ctx(), 34, 8);
        let row2 = short.lines().find(|l| l.starts_with("│2 ")).unwrap();
        assert!(row2.contains("≠+2") && !short.contains("-2"), "{short}");
        // In the divergent style, as the log pane's divergent cells.
        let mut buf = ratatui::buffer::Buffer::empty(ratatui::layout::Rect::new(0, 0, 70, 8));
        super::render(&v, &ctx(), buf.area, &mut buf);
        let y = text.lines().position(|l| l.starts_with("│2 ")).unwrap() as u16;
        let x = row2_x(&text, y, '≠');
        let cell = &buf[(x, y)];
        let divergent = ctx().theme.divergent();
        assert_eq!(Some(cell.fg), divergent.fg, "{cell:?}");
        assert!(cell.modifier.contains(ratatui::style::Modifier::UNDERLINED));
        // A follower behind keeps its number, in the waiting colour.
        let y3 = text.lines().position(|l| l.starts_with("│3■")).unwrap() as u16;
        let lag3 = row2_x(&text, y3, '4');
        assert_eq!(Some(buf[(lag3, y3)].fg), ctx().theme.waiting().fg);
    }

    /// The column of the first `c` on row `y` of a drawn pane.
    fn row2_x(text: &str, y: u16, c: char) -> u16 {
        let line = text.lines().nth(usize::from(y)).unwrap();
        line.chars().position(|x| x == c).unwrap() as u16
    }

    #[test]
    fn rows_are_cut_at_the_bottom() {
        let text = draw(PaneId::Replicas, &view(), &ctx(), 70, 5);
        assert!(text.contains("│1 ") && !text.contains("│2 "), "{text}");
    }

    #[test]
    fn a_partition_cut_at_the_bottom_is_counted_below() {
        // Two partitions of three replicas: 5 rows each with the name and
        // the column names. A pane 11 high (9 inside its border) holds the
        // first whole and the second without its last replica.
        let mut v = view();
        let mut second = v.partitions[0].clone();
        second.partition = 1;
        v.partitions.push(second);
        let text = draw(PaneId::Replicas, &v, &ctx(), 70, 11);
        assert!(text.contains("out-1"), "the cut table is drawn: {text}");
        assert!(text.contains("1 more"), "and counted below: {text}");
        let whole = draw(PaneId::Replicas, &v, &ctx(), 70, 12);
        assert!(!whole.contains("more"), "{whole}");
    }
}
