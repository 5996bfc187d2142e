//! The partitions pane (SPEC §6 "partitions (batches)"): per partition a
//! header with leader, epoch and watermarks, then its batches, newest at the
//! bottom, each with its fate's glyph and label (one fate per batch, decided
//! in `session::snapshot::fate`) and a mark saying whether the consumer of
//! the isolation view (`i`) reads it; the selected batch's explanation fills
//! the last lines.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget, Wrap};

use super::{PaneContext, frame, lines, pad, tail_window};
use crate::session::snapshot::{BatchSnapshot, PartitionSnapshot, Snapshot, VALUES_SHOWN};
use crate::ui::theme::Theme;

/// How many batch rows can be selected (all partitions' windows together).
pub fn selectable(view: &Snapshot) -> usize {
    view.partitions.iter().map(|p| p.window().len()).sum()
}

/// The selected batch `index` as (partition, batch, display row).
fn locate(view: &Snapshot, mut index: usize) -> Option<(usize, usize, usize)> {
    let mut row = 0;
    for (p, part) in view.partitions.iter().enumerate() {
        let n = part.window().len();
        if index < n {
            return Some((p, index, row + 1 + index));
        }
        index -= n;
        row += 1 + n;
    }
    None
}

/// Batch `b` of partition `p`'s window.
fn batch(view: &Snapshot, p: usize, b: usize) -> &BatchSnapshot {
    &view.partitions[p].window()[b]
}

/// Rows narrower than this drop the fate's label (the glyph says it).
const LABEL_BELOW: usize = 44;

/// A partition's header in `width` columns: in words, or in the short
/// words chosen for 80x24 (`ldr`, `H=4 L=4`), so its numbers always show.
fn header<'a>(p: &PartitionSnapshot, ctx: &PaneContext, width: usize) -> Line<'a> {
    let (h, l, e) = (p.high_watermark, p.last_stable_offset, p.log_end_offset);
    let long = format!(
        " {} {} e{} HW {h} LSO {l} LEO {e}",
        ctx.lang.t("leader"),
        p.leader,
        p.leader_epoch,
    );
    let short = format!(
        " {} {} e{} H={h} L={l} LEO {e}",
        ctx.lang.t("log_leader"),
        p.leader,
        p.leader_epoch
    );
    let shortest = format!(" {} {} H={h} L={l}", ctx.lang.t("log_leader"), p.leader);
    let name = p.name();
    let fits = |s: &String| Span::raw(&name).width() + Span::raw(s).width() <= width;
    let text = [long, short].into_iter().find(fits).unwrap_or(shortest);
    let mut spans = vec![Span::styled(name, ctx.theme.strong()), Span::raw(text)];
    if p.batch_count > p.window().len() {
        let shown = format!(" ({}/{})", p.window().len(), p.batch_count);
        spans.push(Span::styled(shown, ctx.theme.dim()));
    }
    Line::from(spans)
}

fn row<'a>(b: &BatchSnapshot, ctx: &PaneContext, selected: bool, width: usize) -> Line<'a> {
    let range = if b.base_offset == b.last_offset {
        b.base_offset.to_string()
    } else {
        format!("{}-{}", b.base_offset, b.last_offset)
    };
    let content = match b.control {
        Some(c) => c.name().to_uppercase(),
        None => {
            let values: Vec<&str> = b
                .records
                .iter()
                .take(VALUES_SHOWN)
                .map(|r| r.value.as_deref().unwrap_or("null"))
                .collect();
            let more = b.len() > values.len() as i64;
            format!("[{}{}]", values.join(", "), if more { ", …" } else { "" })
        }
    };
    let seen = if ctx.isolation.sees(b.fate) {
        "●"
    } else {
        "·"
    };
    let label = if width < LABEL_BELOW {
        String::new()
    } else {
        format!("{} ", pad(ctx.lang.t(b.fate.name()), 10))
    };
    let text = format!(
        "{} {} {label}{seen} {} {content}",
        Theme::fate_glyph(b.fate),
        pad(&range, 5),
        pad(b.transactional_id.as_deref().unwrap_or("-"), 6),
    );
    let style = ctx.theme.fate(b.fate);
    Line::styled(
        text,
        if selected {
            style.patch(ctx.theme.selected())
        } else {
            style
        },
    )
}

/// One row of the pane's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListRow {
    /// Partition `p`'s header.
    Header(usize),
    /// Batch `b` of partition `p`.
    Batch(usize, usize),
}

/// Where everything goes in the pane's inner area: the rows shown and the
/// selected batch's explanation.
struct Plan {
    rows_area: Rect,
    explanation: Option<(Rect, usize, usize)>,
    rows: Vec<ListRow>,
}

fn explanation_line<'a>(batch: &BatchSnapshot, ctx: &PaneContext) -> Line<'a> {
    let seen = if ctx.isolation.sees(batch.fate) {
        ctx.lang.t("seen")
    } else {
        ctx.lang.t("unseen")
    };
    Line::styled(
        format!(
            "{} {} · {}: {seen}",
            Theme::fate_glyph(batch.fate),
            batch.explanation,
            ctx.isolation.name()
        ),
        ctx.theme
            .fate(batch.fate)
            .remove_modifier(ratatui::style::Modifier::CROSSED_OUT),
    )
}

/// Lays out the pane's inner area: which rows show, and where the selected
/// batch's explanation goes (at most half the pane).
fn plan(view: &Snapshot, ctx: &PaneContext, inner: Rect) -> Plan {
    let selected = ctx.selected.and_then(|i| locate(view, i));
    let mut rows_area = inner;
    let mut explanation = None;
    if let Some((p, b, _)) = selected {
        let line = explanation_line(batch(view, p, b), ctx);
        let need = line.width().div_ceil(usize::from(inner.width)).max(1);
        let h = u16::try_from(need)
            .unwrap_or(u16::MAX)
            .min(inner.height / 2);
        rows_area.height -= h;
        explanation = Some((Rect::new(inner.x, rows_area.bottom(), inner.width, h), p, b));
    }
    let height = usize::from(rows_area.height);
    let total: usize = view.partitions.iter().map(|p| 1 + p.window().len()).sum();
    let (mut start, mut end) = tail_window(total, height, ctx.scroll);
    // Keep the selected row visible.
    if let Some((_, _, r)) = selected {
        if r < start {
            (start, end) = (r, r + height);
        } else if r >= end {
            (start, end) = ((r + 1).saturating_sub(height), r + 1);
        }
    }
    let mut rows = Vec::with_capacity(height);
    let mut first = 0;
    for (p, part) in view.partitions.iter().enumerate() {
        let next = first + 1 + part.window().len();
        if first >= end {
            break;
        }
        if next > start {
            if first >= start {
                rows.push(ListRow::Header(p));
            }
            let from = start.max(first + 1) - (first + 1);
            let to = end.min(next) - (first + 1);
            rows.extend((from..to).map(|b| ListRow::Batch(p, b)));
        }
        first = next;
    }
    Plan {
        rows_area,
        explanation,
        rows,
    }
}

/// The batches (partition, index into the partition's `batches`) a pane in
/// `area` shows: the only ones whose records a frame needs to read (see
/// [`SnapshotSource::load_values`](crate::session::SnapshotSource::load_values)).
pub fn visible_batches(view: &Snapshot, ctx: &PaneContext, area: Rect) -> Vec<(usize, usize)> {
    let inner = Block::bordered().inner(area);
    if inner.is_empty() {
        return Vec::new();
    }
    plan(view, ctx, inner)
        .rows
        .into_iter()
        .filter_map(|r| match r {
            ListRow::Batch(p, b) => {
                let part = &view.partitions[p];
                Some((p, part.batches.len() - part.window().len() + b))
            }
            ListRow::Header(_) => None,
        })
        .collect()
}

/// Draws the pane.
pub fn render(view: &Snapshot, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let inner = frame(ctx, "partitions", area, buf);
    if inner.is_empty() {
        return;
    }
    let plan = plan(view, ctx, inner);
    if let Some((at, p, b)) = plan.explanation {
        Paragraph::new(explanation_line(batch(view, p, b), ctx))
            .wrap(Wrap { trim: true })
            .render(at, buf);
    }
    let selected = plan.explanation.map(|(_, p, b)| (p, b));
    let width = usize::from(inner.width);
    let out = plan
        .rows
        .iter()
        .map(|r| match *r {
            ListRow::Header(p) => header(&view.partitions[p], ctx, width),
            ListRow::Batch(p, b) => row(batch(view, p, b), ctx, selected == Some((p, b)), width),
        })
        .collect();
    lines(out, plan.rows_area, buf);
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{ctx, draw, view};
    use super::super::{PaneContext, PaneId};
    use super::*;
    use crate::ui::i18n::Lang;

    #[test]
    fn header_and_batches_with_glyphs_and_labels() {
        let text = draw(PaneId::Partitions, &view(), &ctx(), 70, 10);
        assert!(
            text.contains("out-0 leader 1 e0 HW 5 LSO 3 LEO 6"),
            "{text}"
        );
        assert!(text.contains("✓ 0     committed  ● -      [a]"), "{text}");
        assert!(text.contains("✗ 1     aborted    · txn-c  [x]"), "{text}");
        assert!(text.contains("◆ 2     control    · txn-c  ABORT"), "{text}");
        assert!(
            text.contains("… 3-4   ongoing    · txn-a  [b, c]"),
            "{text}"
        );
        assert!(text.contains("↑ 5     above HW   ·"), "{text}");
    }

    #[test]
    fn a_narrow_pane_says_less_on_purpose() {
        // 32 columns: the header in short words, rows without the fate's
        // label (the glyph says it), a long value ended with `…`.
        let text = draw(PaneId::Partitions, &view(), &ctx(), 32, 10);
        assert!(text.contains("out-0 ldr 1 e0 H=5 L=3 LEO 6"), "{text}");
        assert!(text.contains("✗ 1     · txn-c  [x]"), "{text}");
        assert!(!text.contains("aborted"), "{text}");
        let text = draw(PaneId::Partitions, &view(), &ctx(), 22, 10);
        assert!(text.contains("out-0 ldr 1 H=5 L=3"), "{text}");
        assert!(text.contains("… 3-4   · txn-a…"), "{text}");
    }

    #[test]
    fn the_isolation_view_marks_what_its_consumer_reads() {
        let c = PaneContext {
            isolation: crate::session::snapshot::Isolation::ReadUncommitted,
            ..ctx()
        };
        let text = draw(PaneId::Partitions, &view(), &c, 70, 10);
        // read_uncommitted reads the aborted and the ongoing data too, but
        // never a marker or what is above the HW; the fate labels stay.
        assert!(text.contains("✗ 1     aborted    ● txn-c"), "{text}");
        assert!(text.contains("… 3-4   ongoing    ● txn-a"), "{text}");
        assert!(text.contains("◆ 2     control    · txn-c"), "{text}");
        assert!(text.contains("↑ 5     above HW   ·"), "{text}");
    }

    #[test]
    fn selected_batch_is_highlighted_and_explained() {
        let c = PaneContext {
            selected: Some(1),
            ..ctx()
        };
        let mut buf = Buffer::empty(Rect::new(0, 0, 70, 10));
        render(&view(), &c, buf.area, &mut buf);
        let text = super::super::testkit::text(&buf);
        let last = text.lines().nth(8).unwrap();
        assert!(
            last.contains("✗ aborted by the marker at offset 2"),
            "{text}"
        );
        let y = text.lines().position(|l| l.contains("txn-c  [x]")).unwrap();
        assert!(
            buf[(3, y as u16)]
                .modifier
                .contains(ratatui::style::Modifier::REVERSED)
        );
        assert_eq!(selectable(&view()), 5);
        // Out of range: nothing selected, nothing explained.
        let text = draw(
            PaneId::Partitions,
            &view(),
            &PaneContext {
                selected: Some(9),
                ..ctx()
            },
            70,
            10,
        );
        assert!(!text.contains("marker at offset"), "{text}");
    }

    #[test]
    fn newest_at_bottom_scroll_up_and_zh() {
        // 3 rows fit: the newest three batches.
        let text = draw(PaneId::Partitions, &view(), &ctx(), 60, 5);
        assert!(
            text.contains("ABORT") && text.contains("↑ 5") && !text.contains("HW 5 LSO"),
            "{text}"
        );
        let text = draw(
            PaneId::Partitions,
            &view(),
            &PaneContext { scroll: 3, ..ctx() },
            60,
            5,
        );
        assert!(
            text.contains("HW 5 LSO") && text.contains("[a]") && !text.contains("↑ 5"),
            "{text}"
        );
        let zh = PaneContext {
            lang: Lang::Zh,
            ..ctx()
        };
        let text = draw(PaneId::Partitions, &view(), &zh, 60, 10);
        assert!(
            text.contains("已提交") && text.contains("高于 HW"),
            "{text}"
        );
    }
}
