//! The consumers pane (SPEC §6 "consumers (read_uncommitted vs
//! read_committed side by side)"): what a fresh consumer reads from offset 0
//! at each isolation level, per partition, in two aligned columns.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Block;

use super::{PaneContext, frame, lines, marks, visible};
use crate::session::snapshot::{Snapshot, TAIL};

/// Which of `values` each line takes when they are packed into lines of at
/// most `width` cells, at most `max` lines. The line's width is kept as
/// values join it (a value's width and one for the space before it):
/// measured again for each value, the line cost the square of its length.
/// A line's text is its values joined as [`join`] does; an empty value
/// adds nothing, not even a space. Counting rows needs only these ranges,
/// so the pane counts its rows without building their text.
fn pack<S: AsRef<str>>(values: &[S], width: usize, max: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut end) = (0, 0);
    // The bytes and the cells of the line being packed.
    let (mut cur_len, mut cur_width) = (0, 0);
    for (i, v) in values.iter().enumerate() {
        if out.len() >= max {
            break;
        }
        let v = v.as_ref();
        let v_width = Span::raw(v).width();
        let need = cur_width + v_width + usize::from(cur_len > 0);
        if cur_len > 0 && need > width {
            out.push(start..end);
            (start, cur_len, cur_width) = (end, 0, 0);
        }
        if cur_len > 0 {
            cur_len += 1;
            cur_width += 1;
        }
        cur_len += v.len();
        cur_width += v_width;
        end = i + 1;
    }
    if cur_len > 0 {
        out.push(start..end);
    }
    out.truncate(max);
    out
}

/// One packed line's text: its values, a space between each two (none
/// before or after an empty one at the line's start).
fn join<S: AsRef<str>>(values: &[S]) -> String {
    let mut line = String::new();
    for v in values {
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(v.as_ref());
    }
    line
}

/// `values` packed into lines of at most `width` cells, at most `max` lines.
fn wrap<S: AsRef<str>>(values: &[S], width: usize, max: usize) -> Vec<String> {
    pack(values, width, max)
        .into_iter()
        .map(|r| join(&values[r]))
        .collect()
}

/// The widths of the two columns in an inner area `width` wide.
fn widths(width: u16) -> (u16, u16) {
    let lw = width.saturating_sub(1) / 2;
    (lw, width.saturating_sub(lw + 1))
}

/// How many rows the pane's columns have below their headings in `area`
/// (the whole pane): what its scrolling can reach.
pub fn row_count(view: &Snapshot, ctx: &PaneContext, area: Rect) -> usize {
    let (lw, rw) = widths(Block::bordered().inner(area).width);
    if too_narrow(view, lw, rw) {
        return view.partitions.len();
    }
    layout(view, ctx, lw, rw).last().map_or(0, |r| r.end)
}

/// Whether columns `lw` and `rw` wide are too narrow for some partition's
/// heading, its mark, name and count (`▸orders-0 (12)`): a cut heading
/// would hide the count, the one thing the pane compares. The pane then
/// says each partition on one line across both columns ([`summary`]).
fn too_narrow(view: &Snapshot, lw: u16, rw: u16) -> bool {
    let room = usize::from(lw.min(rw));
    view.partitions.iter().any(|p| {
        let c = view.consumers.count(&p.name());
        let n = c.read_uncommitted.max(c.read_committed);
        1 + Span::raw(format!("{} ({n})", p.name())).width() > room
    })
}

/// One line per partition, across the pane, under `RU · RC`: its name and
/// how many records each isolation level reads, `▸orders-0 12 · 10`, the
/// read_committed count in the columns' "waiting" or "good" colour.
fn summary<'a>(view: &Snapshot, ctx: &PaneContext) -> Vec<Line<'a>> {
    view.partitions
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let name = p.name();
            let c = view.consumers.count(&name);
            let style = if p.last_stable_offset < p.high_watermark {
                ctx.theme.waiting()
            } else {
                ctx.theme.good()
            };
            let mut spans = super::touched::name_spans(ctx, i, name);
            spans.push(Span::raw(format!(" {} · ", c.read_uncommitted)));
            spans.push(Span::styled(c.read_committed.to_string(), style));
            Line::from(spans)
        })
        .collect()
}

/// The smallest scroll (in rows) at which a pane in `area` shows
/// partition `p`'s heading and as many of its rows as fit: both isolation
/// levels of the partition the last step touched, side by side.
pub fn scroll_to(view: &Snapshot, ctx: &PaneContext, area: Rect, p: usize) -> usize {
    let inner = Block::bordered().inner(area);
    let (lw, rw) = widths(inner.width);
    // Below the isolation levels' names.
    let height = usize::from(inner.height).saturating_sub(1);
    if too_narrow(view, lw, rw) {
        return (p + 1).saturating_sub(height).min(p);
    }
    let Some(rows) = layout(view, ctx, lw, rw).get(p).cloned() else {
        return 0;
    };
    let (start, end) = (rows.start, rows.end);
    let shown = (end - start).min(height);
    (start + shown).saturating_sub(height)
}

/// Partition `tp`'s values in a column: at most [`TAIL`], the first a
/// fresh consumer reads, then `…` when it reads more (`count`, the real
/// number of records it reads). Borrowed from the snapshot where a value
/// shows as it is.
fn column_values<'v>(
    map: &'v BTreeMap<String, Vec<Option<String>>>,
    tp: &str,
    count: usize,
    ctx: &PaneContext,
) -> Vec<Cow<'v, str>> {
    let Some(listed) = map.get(tp) else {
        return Vec::new();
    };
    let mut values: Vec<Cow<'v, str>> = listed
        .iter()
        .take(TAIL)
        // A tombstone's value: `null`, in Chinese 空值.
        .map(|v| {
            v.as_deref()
                .map_or(Cow::Borrowed(ctx.lang.t("null_value")), visible)
        })
        .collect();
    if count > values.len() && !values.is_empty() {
        values.push(Cow::Borrowed("…"));
    }
    values
}

/// Each partition's rows in the columns, its heading's row to the row
/// after its last: a heading, then as many rows as the longer of its two
/// wrapped lists (a list with no line shows `-`, one row). Counted from
/// the values' widths alone, no row's text built: the pane draws a
/// screenful of the rows, and this is what its scrolling and its marks
/// need of the others.
fn layout(view: &Snapshot, ctx: &PaneContext, lw: u16, rw: u16) -> Vec<Range<usize>> {
    let mut at = 0;
    view.partitions
        .iter()
        .map(|p| {
            let name = p.name();
            let counts = view.consumers.count(&name);
            let list_rows = |map, count, w: u16| {
                let values = column_values(map, &name, count, ctx);
                pack(&values, usize::from(w), usize::MAX).len().max(1)
            };
            let uncommitted = list_rows(
                &view.consumers.read_uncommitted,
                counts.read_uncommitted,
                lw,
            );
            let committed = list_rows(&view.consumers.read_committed, counts.read_committed, rw);
            let n = uncommitted.max(committed);
            let rows = at..at + 1 + n;
            at = rows.end;
            rows
        })
        .collect()
}

/// Both columns' rows `want` (of the rows [`layout`] places): per
/// partition a heading with the count, then the values wrapped. Only the
/// partitions with a row in `want` are wrapped. The count is the real
/// number of records the consumer reads (the snapshot's
/// [`count`](crate::session::snapshot::Consumers::count)), not the number
/// listed. The "waiting" colour says read_committed is held back (its LSO
/// below the HW), not that it reads fewer records: after an abort it reads
/// fewer and is up to date.
fn columns<'a>(
    view: &Snapshot,
    ctx: &PaneContext,
    (lw, rw): (u16, u16),
    placed: &[Range<usize>],
    want: Range<usize>,
) -> (Vec<Line<'a>>, Vec<Line<'a>>) {
    let column = |map, tp: &str, count, w: u16| {
        let mut rows = wrap(
            &column_values(map, tp, count, ctx),
            usize::from(w),
            usize::MAX,
        );
        if rows.is_empty() {
            rows.push("-".into());
        }
        rows
    };
    let (mut ls, mut rs) = (Vec::new(), Vec::new());
    for ((i, p), rows) in view.partitions.iter().enumerate().zip(placed) {
        if rows.end <= want.start || rows.start >= want.end {
            continue;
        }
        let name = p.name();
        let counts = view.consumers.count(&name);
        let (ln, rn) = (counts.read_uncommitted, counts.read_committed);
        let lrows = column(&view.consumers.read_uncommitted, &name, ln, lw);
        let rrows = column(&view.consumers.read_committed, &name, rn, rw);
        // Behind means held back: records below the HW that read_committed
        // will read once the LSO passes them. Aborted records it will
        // never read leave it up to date, however fewer its count.
        let style = if p.last_stable_offset < p.high_watermark {
            ctx.theme.waiting()
        } else {
            ctx.theme.good()
        };
        let heading = |n: usize, style| {
            let mut spans = super::touched::name_spans(ctx, i, format!("{name} ({n})"));
            if let Some(last) = spans.last_mut() {
                last.style = last.style.patch(style);
            }
            Line::from(spans)
        };
        // Row `rows.start + k` of the columns: the heading, then the lists.
        let list_row =
            |list: &[String], k: usize| Line::raw(list.get(k - 1).cloned().unwrap_or_default());
        for at in rows.start.max(want.start)..rows.end.min(want.end) {
            match at - rows.start {
                0 => {
                    ls.push(heading(ln, ctx.theme.strong()));
                    rs.push(heading(rn, ctx.theme.strong().patch(style)));
                }
                k => {
                    ls.push(list_row(&lrows, k));
                    rs.push(list_row(&rrows, k));
                }
            }
        }
    }
    (ls, rs)
}

/// Draws the pane; `ctx.scroll` skips rows below the column headers.
pub fn render(view: &Snapshot, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let inner = frame(ctx, super::PaneId::Consumers, area, buf);
    if super::no_topics(view, ctx, inner, buf) {
        return;
    }
    if inner.is_empty() {
        return;
    }
    let (lw, rw) = widths(inner.width);
    let height = usize::from(inner.height).saturating_sub(1);
    if too_narrow(view, lw, rw) {
        let rows = summary(view, ctx);
        let skip = ctx.scroll.min(rows.len());
        let shown = (rows.len() - skip).min(height);
        marks(ctx, area, skip, rows.len() - skip - shown, buf);
        let names = format!("{} · {}", ctx.lang.t("RU"), ctx.lang.t("RC"));
        let head = Line::styled(names, ctx.theme.strong().underlined());
        let body = rows.into_iter().skip(skip).take(height);
        lines(std::iter::once(head).chain(body).collect(), inner, buf);
        return;
    }
    let (left, right) = (
        Rect::new(inner.x, inner.y, lw, inner.height),
        Rect::new(inner.x + lw + 1, inner.y, rw, inner.height),
    );
    let placed = layout(view, ctx, lw, rw);
    let total = placed.last().map_or(0, |r| r.end);
    let skip = ctx.scroll.min(total);
    let shown = (total - skip).min(height);
    marks(ctx, area, skip, total - skip - shown, buf);
    let (ls, rs) = columns(view, ctx, (lw, rw), &placed, skip..skip + shown);
    // The isolation levels in words, or in the short words chosen for
    // narrow columns (`uncommitted`, then `RU`), the same for both, never
    // cut.
    let names = [
        ["read_uncommitted", "read_committed"],
        ["ru_short", "rc_short"],
        ["RU", "RC"],
    ];
    let fits = |[l, r]: &[&'static str; 2]| {
        Span::raw(ctx.lang.t(l)).width() <= usize::from(lw)
            && Span::raw(ctx.lang.t(r)).width() <= usize::from(rw)
    };
    let [lkey, rkey] = names.into_iter().find(fits).unwrap_or(names[2]);
    for (rect, key, rows) in [(left, lkey, ls), (right, rkey, rs)] {
        let head = Line::styled(ctx.lang.t(key), ctx.theme.strong().underlined());
        lines(std::iter::once(head).chain(rows).collect(), rect, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{ctx, draw, view};
    use super::super::{PaneContext, PaneId};
    use super::{columns, layout, widths, wrap};

    #[test]
    fn side_by_side_per_partition() {
        let text = draw(PaneId::Consumers, &view(), &ctx(), 41, 6);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1], "│read_uncommitted    read_committed     │",
            "{text}"
        );
        assert_eq!(
            lines[2], "│out-0 (4)           out-0 (1)          │",
            "{text}"
        );
        assert_eq!(
            lines[3], "│a x b c             a                  │",
            "{text}"
        );
        let scrolled = draw(
            PaneId::Consumers,
            &view(),
            &PaneContext { scroll: 1, ..ctx() },
            41,
            6,
        );
        assert!(
            scrolled.lines().nth(2).unwrap().contains("a x b c"),
            "{scrolled}"
        );
    }

    #[test]
    fn counts_are_the_snapshot_s_and_a_cut_list_ends_in_an_ellipsis() {
        use crate::session::snapshot::ReaderCounts;
        let mut v = view();
        let counts = ReaderCounts {
            read_uncommitted: 100,
            read_committed: 1,
        };
        v.consumers.counts.insert("out-0".into(), counts);
        let text = draw(PaneId::Consumers, &v, &ctx(), 41, 6);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[2], "│out-0 (100)         out-0 (1)          │",
            "{text}"
        );
        assert_eq!(
            lines[3], "│a x b c …           a                  │",
            "{text}"
        );
    }

    #[test]
    fn narrow_columns_name_the_isolation_levels_in_short() {
        let text = draw(PaneId::Consumers, &view(), &ctx(), 28, 6);
        assert!(
            text.contains("uncommitted") && text.contains("committed"),
            "{text}"
        );
        assert!(!text.contains("read_unc"), "{text}");
        let text = draw(PaneId::Consumers, &view(), &ctx(), 18, 6);
        let head = text.lines().nth(1).unwrap();
        assert!(head.contains("RU") && head.contains("RC"), "{text}");
    }

    /// The rows a screen draws are those rows of the whole columns, and
    /// the rows counted without their text are as many as the whole
    /// columns have, at every width and every window.
    #[test]
    fn a_window_of_rows_is_that_window_of_all_rows() {
        let (view, ctx) = (view(), ctx());
        for width in [12, 20, 41, 80] {
            let (lw, rw) = widths(width);
            let placed = layout(&view, &ctx, lw, rw);
            let total = placed.last().map_or(0, |r| r.end);
            let (all_l, all_r) = columns(&view, &ctx, (lw, rw), &placed, 0..usize::MAX);
            assert_eq!((all_l.len(), all_r.len()), (total, total), "{width}");
            assert!(total > view.partitions.len(), "{width}: {total}");
            for start in 0..total {
                for len in [1, 3, total] {
                    let want = start..(start + len).min(total);
                    let (l, r) = columns(&view, &ctx, (lw, rw), &placed, want.clone());
                    assert_eq!(l, all_l[want.clone()], "{width} {want:?}");
                    assert_eq!(r, all_r[want.clone()], "{width} {want:?}");
                }
            }
        }
    }

    #[test]
    fn values_wrap_and_are_bounded() {
        let v: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        assert_eq!(wrap(&v, 5, 2), vec!["0 1 2", "3 4 5"]);
        assert_eq!(wrap(&v[..1], 0, 9), vec!["0"]);
        assert!(wrap(&v, 5, 0).is_empty());
    }

    /// The lines `wrap` packs are those packing by the whole line's
    /// measured width gives, wide and combining characters included.
    #[test]
    fn the_kept_line_width_is_the_measured_one() {
        fn measured(values: &[String], width: usize, max: usize) -> Vec<String> {
            let mut out: Vec<String> = Vec::new();
            let mut cur = String::new();
            for v in values {
                if out.len() >= max {
                    break;
                }
                let need = ratatui::text::Span::raw(&cur).width()
                    + ratatui::text::Span::raw(v).width()
                    + usize::from(!cur.is_empty());
                if !cur.is_empty() && need > width {
                    out.push(std::mem::take(&mut cur));
                }
                if !cur.is_empty() {
                    cur.push(' ');
                }
                cur.push_str(v);
            }
            if !cur.is_empty() {
                out.push(cur);
            }
            out.truncate(max);
            out
        }
        let v: Vec<String> = [
            "订单",
            "a",
            "🦀",
            "e\u{301}",
            "xyz",
            "中文字",
            "null",
            "❤\u{fe0f}",
            "b",
            "",
            "…",
            "",
            "",
            "c",
        ]
        .map(String::from)
        .to_vec();
        for width in 0..16 {
            for max in [1, 3, usize::MAX] {
                assert_eq!(
                    wrap(&v, width, max),
                    measured(&v, width, max),
                    "{width} {max}"
                );
            }
        }
    }
}
