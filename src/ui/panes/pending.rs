//! The pending pane (SPEC §6 "pending operations"): each operation still
//! waiting, with the step that issued it, its kind and transaction, and what
//! it waits for (brokers, or an earlier step on the same transaction); then
//! each producer's batch filling in its accumulator (E17), not sent yet:
//! its records, its bytes against `batch_size` and when its linger runs out.

use crate::session::snapshot::field;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{PaneContext, frame, lines, marks};
use crate::session::snapshot::{AccumulatingBatch, AccumulatorSnapshot, PendingSnapshot, Snapshot};
use crate::ui::glossary::crash_armed_label;

/// Batches named on a row at most; the rest are counted (`+3`).
const BATCHES_NAMED: usize = 2;

/// One operation: `… step 33 produce t1-0@50-99 (50) waiting for [2]`: the
/// step, the kind and transaction, what waits (each batch's partition,
/// offsets and record count: a Kafka client's batch is one engine batch),
/// a commit's or abort's armed crash (`✝ crash at prepare`, in the bad
/// colour: it will crash the cluster once it runs), and what it waits for.
fn row<'a>(p: &PendingSnapshot, ctx: &PaneContext, width: usize) -> Vec<Line<'a>> {
    let t = |k| ctx.lang.t(k);
    let why = match p.queued_behind {
        Some(step) => format!("{} {step}", t("queued_behind")),
        None => {
            let brokers: Vec<String> = p.waiting_for.iter().map(u32::to_string).collect();
            format!("{} [{}]", t("waiting_for"), brokers.join(","))
        }
    };
    let mut what: Vec<String> = p
        .batches
        .iter()
        .take(BATCHES_NAMED)
        .map(|b| b.text())
        .collect();
    if p.batches.len() > BATCHES_NAMED {
        what.push(format!("+{}", p.batches.len() - BATCHES_NAMED));
    }
    let kind = if ctx.lang.zh() {
        crate::session::said::action_zh(&p.kind)
    } else {
        &p.kind
    };
    let mut text = format!("… {} {} {kind}", t("step"), p.action_step);
    for part in p.txn.iter().chain(&what) {
        text.push(' ');
        text.push_str(part);
    }
    if p.txn.is_none() && what.is_empty() {
        text.push_str(" -");
    }
    let crash = p
        .crash_after
        .as_deref()
        .map(|cut| Span::styled(crash_armed_label(cut, ctx.lang), ctx.theme.bad()));
    let waiting = |s: String| Span::styled(s, ctx.theme.waiting());
    // On one line when it fits, else what it waits for on a line of its
    // own (and the crash on one of its own when it does not fit beside
    // the operation), so neither the batches, the crash nor the brokers
    // are cut away.
    let one = |parts: Vec<Span<'a>>| {
        let mut spans = Vec::new();
        for (i, s) in parts.into_iter().enumerate() {
            if i > 0 {
                spans.push(Span::raw(" "));
            }
            spans.push(s);
        }
        Line::from(spans)
    };
    let all = one([waiting(text.clone())]
        .into_iter()
        .chain(crash.clone())
        .chain([waiting(why.clone())])
        .collect());
    if all.width() <= width {
        return vec![all];
    }
    let why = Line::from(waiting(format!("  {why}")));
    let head = one([waiting(text.clone())]
        .into_iter()
        .chain(crash.clone())
        .collect());
    match crash {
        Some(crash) if head.width() > width => vec![
            one(vec![waiting(text)]),
            Line::from(vec![Span::raw("  "), crash]),
            why,
        ],
        _ => vec![head, why],
    }
}

/// One batch filling: `▤ p events-0 2 rec 80/4096 B linger to 10 ms`, in
/// the accumulating colour; `due` in the waiting colour once its linger
/// has run out (the next `advance_clock` sends it). When it does not fit,
/// the linger goes on a line of its own.
fn filling<'a>(
    a: &AccumulatorSnapshot,
    b: &AccumulatingBatch,
    clock_ms: u64,
    ctx: &PaneContext,
    width: usize,
) -> Vec<Line<'a>> {
    let t = |k| ctx.lang.t(k);
    let head = format!(
        "▤ {} {} {} {} {}/{} B",
        a.producer,
        b.partition,
        b.records.len(),
        t("records_short"),
        b.bytes,
        a.batch_size
    );
    let (linger, style) = if b.linger_deadline_ms <= clock_ms {
        (t("linger_due").to_string(), ctx.theme.waiting())
    } else {
        (
            format!("{} {} ms", t("linger_until"), b.linger_deadline_ms),
            ctx.theme.accumulating(),
        )
    };
    let one = format!("{head} {linger}");
    if ratatui::text::Span::raw(&one).width() <= width {
        return vec![Line::styled(one, style)];
    }
    vec![
        Line::styled(head, style),
        Line::styled(format!("  {linger}"), style),
    ]
}

/// Draws the pane; `ctx.scroll` skips rows from the top.
pub fn render(view: &Snapshot, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let inner = frame(ctx, super::PaneId::Pending, area, buf);
    let filling_rows = view
        .accumulators
        .iter()
        .flat_map(|a| a.batches.iter().map(move |b| (a, b)));
    let filling_count = filling_rows.clone().count();
    let out = if view.pending.is_empty() && filling_count == 0 {
        // In words, or in one word where the words do not fit; an observed
        // cluster's requests in flight are not visible to a client.
        let (long, short) = if view.lacks(field::PENDING) {
            ("not_visible", "not_visible_short")
        } else {
            ("nothing_pending", "nothing_pending_short")
        };
        let words = ctx.lang.t(long);
        let fits = ratatui::text::Span::raw(words).width() <= usize::from(inner.width);
        let text = if fits { words } else { ctx.lang.t(short) };
        vec![Line::styled(text, ctx.theme.dim())]
    } else {
        let total = view.pending.len() + filling_count;
        let skip = ctx.scroll.min(total - 1);
        let (width, height) = (usize::from(inner.width), usize::from(inner.height));
        let items = view
            .pending
            .iter()
            .map(|p| row(p, ctx, width))
            .chain(filling_rows.map(|(a, b)| filling(a, b, view.clock_ms, ctx, width)));
        let mut out = Vec::new();
        let mut shown = 0;
        for item in items.skip(skip) {
            if out.len() >= height {
                break;
            }
            out.extend(item);
            shown += 1;
        }
        marks(ctx, area, skip, total - skip - shown, buf);
        out
    };
    lines(out, inner, buf);
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{ctx, draw, view};
    use super::super::{PaneContext, PaneId};
    use crate::session::snapshot::Snapshot;
    use crate::ui::i18n::Lang;
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;

    #[test]
    fn waiting_and_queued() {
        let text = draw(PaneId::Pending, &view(), &ctx(), 60, 4);
        assert!(
            text.contains("… step 7 commit txn-a out-0@3-4 (2) waiting for [2,3]"),
            "{text}"
        );
        assert!(
            text.contains("… step 8 abort txn-a queued behind step 7"),
            "{text}"
        );
    }

    /// `X` on a commit that waits (a new user's trial): the row says the
    /// crash is armed and where, in both languages, in the bad colour, and
    /// keeps it on the first line when what it waits for wraps.
    #[test]
    fn an_armed_crash_is_on_its_row() {
        let mut v = view();
        v.pending[1].crash_after = Some("prepare".into());
        let text = draw(PaneId::Pending, &v, &ctx(), 70, 4);
        assert!(
            text.contains("… step 8 abort txn-a ✝ crash at prepare queued behind step 7"),
            "{text}"
        );
        let zh_ctx = PaneContext {
            lang: Lang::Zh,
            ..ctx()
        };
        let zh = draw(PaneId::Pending, &v, &zh_ctx, 70, 4);
        assert!(zh.contains("✝ 崩溃于切点 prepare"), "{zh}");
        // Narrow: the wait goes below, the crash stays with its operation.
        let narrow = draw(PaneId::Pending, &v, &ctx(), 48, 6);
        assert!(
            narrow.contains("abort txn-a ✝ crash at prepare"),
            "{narrow}"
        );
        // The colour: the glyph is drawn bad, the operation waiting.
        let c = ctx();
        let mut buf = Buffer::empty(Rect::new(0, 0, 70, 4));
        super::super::render(PaneId::Pending, &v, &c, buf.area, &mut buf);
        let at = |sym: &str| {
            let area = buf.area;
            (area.top()..area.bottom())
                .flat_map(|y| (area.left()..area.right()).map(move |x| (x, y)))
                .find(|&p| buf[p].symbol() == sym)
                .unwrap()
        };
        let (x, y) = at("✝");
        assert_eq!(Some(buf[(x, y)].fg), c.theme.bad().fg);
        assert_ne!(c.theme.bad().fg, c.theme.waiting().fg);
        assert_eq!(Some(buf[(x - 2, y)].fg), c.theme.waiting().fg);
    }

    #[test]
    fn nothing_pending_in_both_languages() {
        let v = Snapshot {
            pending: vec![],
            ..view()
        };
        assert!(draw(PaneId::Pending, &v, &ctx(), 40, 3).contains("nothing pending"));
        let zh = draw(
            PaneId::Pending,
            &v,
            &PaneContext {
                lang: Lang::Zh,
                ..ctx()
            },
            40,
            3,
        );
        assert!(zh.contains("没有等待中的操作"), "{zh}");
    }
}
