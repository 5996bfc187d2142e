//! The journal pane (SPEC §6 "journal tail"): a summary (frames, bytes),
//! what the last recovery repaired (torn bytes cut, leaders re-elected,
//! transactions completed, markers re-sent, transactions left open), then the newest frames at the
//! bottom: number, byte offset, CRC with a check glyph, transaction, state.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::ui::theme::Theme;

use super::{PaneContext, frame, lines, marks, tail_window};
use crate::session::snapshot::{JournalFrameSnapshot, RecoverySnapshot, Snapshot, TAIL, TxnState};

fn state<'a>(s: TxnState, ctx: &PaneContext) -> Span<'a> {
    let style = match s {
        TxnState::CompleteCommit => ctx.theme.good(),
        TxnState::CompleteAbort => ctx.theme.bad(),
        _ => ctx.theme.waiting(),
    };
    Span::styled(s.name(), style)
}

/// Width under which a frame line drops its byte offset and CRC, so the
/// transaction and its state always show.
const COMPACT_BELOW: u16 = 50;

/// A frame's line: the changed mark (`▸` for a frame the last step wrote),
/// number, byte offset, CRC, transaction, state and contents.
fn frame_line<'a>(f: &JournalFrameSnapshot, ctx: &PaneContext, width: u16, new: bool) -> Line<'a> {
    let head = if width < COMPACT_BELOW {
        format!("#{:<3} ", f.number)
    } else {
        format!("#{:<4} @{:<7} {:08x} ", f.number, f.offset, f.crc)
    };
    let (mark, head_style) = if new {
        (
            Span::styled(Theme::CHANGED_GLYPH, ctx.theme.changed_mark()),
            ctx.theme.changed(),
        )
    } else {
        (Span::raw(" "), Style::new())
    };
    Line::from(vec![
        mark,
        Span::styled(head, head_style),
        Span::styled("✓ ", ctx.theme.good()),
        Span::raw(format!("{} ", f.data.id)),
        state(f.data.state, ctx),
        Span::styled(frame_contents(f), ctx.theme.dim()),
    ])
}

/// What the frame holds besides its state: each partition with its first
/// offset, and the staged offsets (` out-0@1 +workers`).
fn frame_contents(f: &JournalFrameSnapshot) -> String {
    let mut out = String::new();
    for tp in &f.data.partitions {
        match f.data.first_offsets.get(tp) {
            Some(o) => out.push_str(&format!(" {tp}@{o}")),
            None => out.push_str(&format!(" {tp}")),
        }
    }
    for group in f.data.staged_offsets.keys() {
        out.push_str(&format!(" +{group}"));
    }
    out
}

/// The recovery lines, at most `max`.
fn recovery<'a>(r: &'a RecoverySnapshot, ctx: &'a PaneContext, max: usize) -> Vec<Line<'a>> {
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
            "✗ {}: {} {}-{} b{}",
            t("torn"),
            l.truncated_bytes,
            l.topic,
            l.partition,
            l.broker
        );
        Line::styled(text, bad)
    });
    let reelected = r.leaders_reelected.iter().map(move |e| {
        Line::raw(format!(
            "⇄ {}: {}-{} b{} → b{} e{}",
            t("reelected"),
            e.topic,
            e.partition,
            e.old_leader,
            e.new_leader,
            e.leader_epoch
        ))
    });
    let completed = r.completions.iter().map(move |c| {
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
            m.txn,
            m.partition,
            m.offset
        );
        Line::raw(text)
    });
    let open = r
        .left_open
        .iter()
        .map(move |id| Line::styled(format!("… {id} {}", TxnState::Ongoing), ctx.theme.waiting()));
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
pub fn render(view: &Snapshot, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let inner = frame(ctx, "journal", area, buf);
    let height = usize::from(inner.height);
    let summary = if view.journal.frames == 0 {
        Line::styled(ctx.lang.t("no_frames"), ctx.theme.dim())
    } else {
        Line::styled(
            format!("# {} · {} B", view.journal.frames, view.journal.bytes),
            ctx.theme.strong(),
        )
    };
    let mut out = vec![summary];
    if let Some(r) = &view.last_recovery {
        out.extend(recovery(r, ctx, height.saturating_sub(1) / 2));
    }
    let room = height.saturating_sub(out.len());
    let tail = &view.journal.tail[view.journal.tail.len().saturating_sub(TAIL)..];
    let (start, end) = tail_window(tail.len(), room, ctx.scroll);
    out.extend(tail[start..end].iter().map(|f| {
        let new = view.changes.journal_frames.contains(&f.number);
        frame_line(f, ctx, inner.width, new)
    }));
    lines(out, inner, buf);
    // Frames older than the snapshot's tail are out of view too.
    let older = view.journal.frames.saturating_sub(tail.len()) + start;
    marks(ctx, area, older, tail.len() - end, buf);
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{ctx, draw, view};
    use super::super::{PaneContext, PaneId};
    use crate::session::snapshot::Snapshot;
    use crate::ui::i18n::Lang;

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
        use crate::session::snapshot::{
            LogTruncationSnapshot, RecoverySnapshot, ReelectionSnapshot,
        };
        let report = RecoverySnapshot {
            journal_truncated_bytes: 0,
            journal_reason: None,
            logs_truncated: vec![LogTruncationSnapshot {
                topic: "out".into(),
                partition: 0,
                broker: 1,
                truncated_bytes: 40,
                reason: "frame incomplete".into(),
            }],
            leaders_reelected: vec![ReelectionSnapshot {
                topic: "out".into(),
                partition: 0,
                old_leader: 1,
                new_leader: 2,
                leader_epoch: 1,
            }],
            completed: vec![],
            completions: vec![],
            markers_resent: vec![],
            left_open: vec![],
        };
        let v = Snapshot {
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
        let empty = Snapshot {
            journal: crate::session::snapshot::JournalSnapshot {
                frames: 0,
                bytes: 0,
                tail: vec![],
            },
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
