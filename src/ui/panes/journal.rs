//! The journal pane (SPEC §6 "journal tail"): a summary (frames, bytes),
//! what the last recovery repaired (torn bytes cut, leaders re-elected,
//! transactions completed, markers re-sent, transactions left open), then the newest frames at the
//! bottom: number, byte offset, CRC with a check glyph, transaction, state.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{PaneContext, frame, lines, tail_window};
use crate::engine::core::recovery::RecoveryReport;
use crate::engine::transaction::{JournalFrame, TransactionState};
use crate::ui::view::View;

fn state<'a>(s: TransactionState, ctx: &PaneContext) -> Span<'a> {
    let style = match s {
        TransactionState::CompleteCommit => ctx.theme.good(),
        TransactionState::CompleteAbort => ctx.theme.bad(),
        _ => ctx.theme.waiting(),
    };
    Span::styled(s.name(), style)
}

/// Width under which a frame line drops its byte offset and CRC, so the
/// transaction and its state always show.
const COMPACT_BELOW: u16 = 50;

fn frame_line<'a>(f: &JournalFrame, ctx: &PaneContext, width: u16) -> Line<'a> {
    let head = if width < COMPACT_BELOW {
        format!("#{:<3} ", f.number)
    } else {
        format!("#{:<4} @{:<7} {:08x} ", f.number, f.offset, f.crc)
    };
    Line::from(vec![
        Span::raw(head),
        Span::styled("✓ ", ctx.theme.good()),
        Span::raw(format!("{} ", f.id)),
        state(f.state, ctx),
    ])
}

/// The recovery lines, at most `max`.
fn recovery<'a>(r: &'a RecoveryReport, ctx: &'a PaneContext, max: usize) -> Vec<Line<'a>> {
    if r.is_clean() && r.left_open.is_empty() {
        return Vec::new();
    }
    let (t, bad) = (|k| ctx.lang.t(k), ctx.theme.bad());
    let journal = (r.journal_truncated_bytes > 0).then(|| {
        let why = r.journal_reason.as_deref().map(|w| format!(" ({w})"));
        Line::styled(
            format!(
                "✗ {}: {}{}",
                t("torn"),
                r.journal_truncated_bytes,
                why.unwrap_or_default()
            ),
            bad,
        )
    });
    let logs = r.logs_truncated.iter().map(move |l| {
        let text = format!(
            "✗ {}: {} {} b{}",
            t("torn"),
            l.truncated_bytes,
            l.tp,
            l.broker
        );
        Line::styled(text, bad)
    });
    let reelected = r.leaders_reelected.iter().map(move |e| {
        Line::raw(format!(
            "⇄ {}: {} b{} → b{} e{}",
            t("reelected"),
            e.tp,
            e.old_leader,
            e.new_leader,
            e.leader_epoch
        ))
    });
    let completed = r.completed.iter().map(move |c| {
        Line::from(vec![
            Span::styled("✓ ", ctx.theme.good()),
            Span::raw(format!("{} {} → ", c.id, c.from)),
            state(c.to, ctx),
        ])
    });
    let resent = r.markers_resent.iter().map(move |m| {
        let text = format!(
            "◆ {} {} {} @{}",
            m.control.name().to_uppercase(),
            m.id,
            m.tp,
            m.offset
        );
        Line::raw(text)
    });
    let open = r.left_open.iter().map(move |id| {
        Line::styled(
            format!("… {id} {}", TransactionState::Ongoing),
            ctx.theme.waiting(),
        )
    });
    let heading = Line::styled(format!("{}:", t("last_recovery")), ctx.theme.strong());
    std::iter::once(heading)
        .chain(journal)
        .chain(logs)
        .chain(reelected)
        .chain(completed)
        .chain(resent)
        .chain(open)
        .take(max)
        .collect()
}

/// Draws the pane; `ctx.scroll` moves the frames up.
pub fn render(view: &View, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let inner = frame(ctx, "journal", area, buf);
    let height = usize::from(inner.height);
    let summary = if view.journal_frames == 0 {
        Line::styled(ctx.lang.t("no_frames"), ctx.theme.dim())
    } else {
        Line::styled(
            format!("# {} · {} B", view.journal_frames, view.journal_bytes),
            ctx.theme.strong(),
        )
    };
    let mut out = vec![summary];
    if let Some(r) = &view.last_recovery {
        out.extend(recovery(r, ctx, height.saturating_sub(1) / 2));
    }
    let room = height.saturating_sub(out.len());
    let (start, end) = tail_window(view.journal_tail.len(), room, ctx.scroll);
    out.extend(
        view.journal_tail[start..end]
            .iter()
            .map(|f| frame_line(f, ctx, inner.width)),
    );
    lines(out, inner, buf);
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{ctx, draw, view};
    use super::super::{PaneContext, PaneId};
    use crate::ui::i18n::Lang;
    use crate::ui::view::View;

    #[test]
    fn frames_summary_and_recovery() {
        let text = draw(PaneId::Journal, &view(), &ctx(), 60, 14);
        assert!(text.contains("# 3 · 180 B"), "{text}");
        assert!(text.contains("✗ torn bytes cut: 17"), "{text}");
        assert!(
            text.contains("✓ txn-b prepare_commit → complete_commit"),
            "{text}"
        );
        assert!(text.contains("◆ COMMIT txn-b out-0 @9"), "{text}");
        assert!(
            text.contains("#3    @120     0000ab12 ✓ txn-a ongoing"),
            "{text}"
        );
        let row = |s: &str| text.lines().position(|l| l.contains(s)).unwrap();
        assert!(row("#1 ") < row("#2 ") && row("#2 ") < row("#3 "), "{text}");
    }

    #[test]
    fn a_leader_reelection_is_shown_under_its_truncation() {
        use crate::engine::core::recovery::{LeaderReelection, LogTruncation, RecoveryReport};
        let tp = crate::engine::TopicPartition::new("out", 0);
        let report = RecoveryReport {
            logs_truncated: vec![LogTruncation {
                tp: tp.clone(),
                broker: 1,
                truncated_bytes: 40,
                reason: "frame incomplete".into(),
            }],
            leaders_reelected: vec![LeaderReelection {
                tp,
                old_leader: 1,
                new_leader: 2,
                leader_epoch: 1,
            }],
            ..RecoveryReport::default()
        };
        let v = View {
            last_recovery: Some(report),
            ..view()
        };
        let text = draw(PaneId::Journal, &v, &ctx(), 60, 14);
        let row = |s: &str| text.lines().position(|l| l.contains(s));
        let torn = row("✗ torn bytes cut: 40 out-0 b1").expect(&text);
        let elected = row("⇄ leader re-elected: out-0 b1 → b2 e1").expect(&text);
        assert_eq!(elected, torn + 1, "{text}");
    }

    #[test]
    fn small_pane_keeps_newest_frames_and_zh() {
        let text = draw(PaneId::Journal, &view(), &ctx(), 60, 6);
        assert!(text.contains("#3 ") && !text.contains("#1 "), "{text}");
        let empty = View {
            journal_tail: vec![],
            journal_frames: 0,
            last_recovery: None,
            ..view()
        };
        let zh = draw(
            PaneId::Journal,
            &empty,
            &PaneContext {
                lang: Lang::Zh,
                ..ctx()
            },
            40,
            5,
        );
        assert!(zh.contains("journal 为空"), "{zh}");
    }
}
