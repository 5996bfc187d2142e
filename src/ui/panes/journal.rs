//! The journal pane (SPEC §6 "journal tail"): a summary (frames, bytes),
//! what the last recovery did, in the order it did it (the journal's torn
//! tail cut, the logs' torn tails cut, leaders re-elected, then each
//! PREPARE_* transaction finished: its markers re-sent, its COMPLETE_*
//! frame; then the transactions it left open), then the newest frames at
//! the bottom: number, byte offset, CRC with a check glyph, transaction,
//! state. At a moment of death (docs/dashboard.md "Crashes as moments")
//! there is no recovery yet: a tear's torn bytes show instead, and the
//! frames it tore carry `✗`.

use crate::session::snapshot::field;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::ui::glossary;
use crate::ui::i18n::Lang;
use crate::ui::theme::Theme;

use super::{PaneContext, column, column_width, frame, lines, marks, tail_window};
use crate::session::snapshot::{
    JournalFrameSnapshot, MarkerSnapshot, RecoverySnapshot, Snapshot, TAIL, TxnState,
};

fn state<'a>(s: TxnState, ctx: &PaneContext) -> Span<'a> {
    let style = match s {
        TxnState::CompleteCommit => ctx.theme.good(),
        TxnState::CompleteAbort => ctx.theme.bad(),
        _ => ctx.theme.waiting(),
    };
    Span::styled(state_name(s, ctx.lang), style)
}

fn state_name(s: TxnState, lang: Lang) -> String {
    lang.state_name(s)
}

/// Width under which a frame line drops its byte offset and CRC, so the
/// transaction and its state always show.
const COMPACT_BELOW: u16 = 50;

/// A frame's line: the changed mark (`▸` for a frame the last step wrote),
/// number, byte offset, CRC, transaction, state and contents.
fn frame_line<'a>(
    f: &JournalFrameSnapshot,
    what: String,
    ctx: &PaneContext,
    width: u16,
    id_width: usize,
    new: bool,
    torn: bool,
) -> Line<'a> {
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
        if torn {
            Span::styled("✗ ", ctx.theme.bad())
        } else {
            Span::styled("✓ ", ctx.theme.good())
        },
        Span::raw(format!("{} ", column(&f.data.id, id_width))),
        state(f.data.state, ctx),
        Span::styled(what, ctx.theme.dim()),
    ])
}

/// What frame `i` of `frames` changed, so that two "tx-1 ongoing" lines are
/// told apart: against the previous frame of the same transaction instance
/// in the list, the partitions it added (`+out-0@0`) and the offsets it
/// staged (`staged workers in-0=7`); a frame that starts an instance says
/// `begin`; one whose previous frame is not in the list says all it holds.
fn frame_delta(frames: &[JournalFrameSnapshot], i: usize, lang: Lang) -> String {
    let staged = lang.t("staged");
    let f = &frames[i].data;
    let prev_frame = frames[..i]
        .iter()
        .rev()
        .find(|p| p.data.id == f.id)
        // A complete instance followed by an ONGOING frame: a new instance.
        .filter(|p| p.data.state.is_unstable() || !f.state.is_unstable());
    // The book journals a frame at every send, also to a partition the
    // transaction has: that frame repeats the last one byte for byte,
    // which the pane says instead of nothing (a new user's trial asked why
    // #3 was there at all).
    if let Some(p) = prev_frame.filter(|p| p.data == *f) {
        return format!(
            " {} #{}{}",
            lang.t("frame_same_as"),
            p.number,
            lang.t("frame_each_send")
        );
    }
    let prev = prev_frame.map(|p| &p.data);
    let mut out = String::new();
    // Kafka rules: the producer id and epoch where an instance starts, and
    // the epoch its end bumped to (transaction version 2).
    let producer = match (f.producer_id, f.producer_epoch) {
        (Some(id), Some(epoch)) if prev.is_none() => format!(" {} {id} e{epoch}", lang.t("pid")),
        _ => String::new(),
    };
    let bumped = match f.next_producer_epoch {
        Some(next) if prev.is_none_or(|p| p.next_producer_epoch != Some(next)) => {
            format!(" epoch→e{next}")
        }
        _ => String::new(),
    };
    if prev.is_none() && f.state == TxnState::Ongoing && f.partitions.is_empty() {
        return format!(" {}{producer}", lang.t("frame_begin"));
    }
    out.push_str(&producer);
    out.push_str(&bumped);
    for tp in &f.partitions {
        if prev.is_some_and(|p| p.partitions.contains(tp)) {
            continue;
        }
        match f.first_offsets.get(tp) {
            Some(o) => out.push_str(&format!(" +{tp}@{o}")),
            None => out.push_str(&format!(" +{tp}")),
        }
    }
    for (group, offsets) in &f.staged_offsets {
        for (tp, o) in offsets {
            let before = prev.and_then(|p| p.staged_offsets.get(group)?.get(tp));
            if before != Some(o) {
                out.push_str(&format!(" {staged} {group} {tp}={o}"));
            }
        }
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
        // The engine's reason is English (`frame 5 at byte 495 has no
        // newline`): in Chinese the pane says the bytes cut, as the events
        // pane's recovery sentence does.
        let why = (!ctx.lang.zh())
            .then_some(r.journal_reason.as_deref())
            .flatten()
            .map(|w| format!(" ({w})"));
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
    // An interrupted compaction swap (E16), in the step's language.
    let swaps = r.swaps_repaired.iter().map(move |w| {
        let told = if ctx.lang == crate::ui::i18n::Lang::Zh && !w.told_zh.is_empty() {
            &w.told_zh
        } else {
            &w.told
        };
        Line::styled(
            format!("✂ {}-{} b{}: {told}", w.topic, w.partition, w.broker),
            ctx.theme.recovered(),
        )
    });
    let resent_line = move |m: &MarkerSnapshot| {
        let text = format!(
            "{} {} {} @{}",
            glossary::marker_label(&m.control.name().to_uppercase()),
            m.txn,
            m.partition,
            m.offset
        );
        Line::raw(text)
    };
    // Recovery finishes one PREPARE_* transaction at a time: its missing
    // markers re-sent (kafka rules), then its COMPLETE_* frame.
    let completed = r.completions.iter().flat_map(move |c| {
        let resent = r
            .markers_resent
            .iter()
            .filter(move |m| m.txn == c.id)
            .map(resent_line);
        resent.chain(std::iter::once(Line::from(vec![
            Span::styled("✓ ", ctx.theme.good()),
            Span::raw(format!("{} {} → ", c.id, state_name(c.from, ctx.lang))),
            state(c.to, ctx),
        ])))
    });
    let resent = r
        .markers_resent
        .iter()
        .filter(move |m| !r.completions.iter().any(|c| c.id == m.txn))
        .map(resent_line);
    let open = r.left_open.iter().map(move |id| {
        let ongoing = state_name(TxnState::Ongoing, ctx.lang);
        Line::styled(format!("… {id} {ongoing}"), ctx.theme.waiting())
    });
    let heading = Line::styled(
        format!("{}{}", t("last_recovery"), t("colon").trim_end()),
        ctx.theme.strong(),
    );
    std::iter::once(heading)
        .chain(journal)
        .chain(logs)
        .chain(swaps)
        .chain(reelected)
        .chain(completed)
        .chain(resent)
        .chain(open)
        .take(max)
        .collect()
}

/// An observed cluster's transactions, where its journal is not visible
/// (docs/observe.md: ListTransactions, DescribeTransactions,
/// DescribeProducers): each id and state, and for an open one where it
/// starts on each partition (`out-0@1`), the offset its LSO stops at; at
/// most `max` lines.
fn observed<'a>(view: &'a Snapshot, ctx: &'a PaneContext, max: usize) -> Vec<Line<'a>> {
    view.transactions
        .iter()
        .take(max)
        .map(|t| {
            let starts: Vec<String> = t
                .first_offsets
                .iter()
                .map(|(tp, o)| format!("{tp}@{o}"))
                .collect();
            let mut spans = vec![Span::raw(format!("{} ", t.id)), state(t.state, ctx)];
            let unknown = view.lacks(&field::at(field::TXN_FIRST_OFFSETS, &t.id));
            if unknown && t.state.is_unstable() {
                // An open transaction whose first offsets the protocol
                // could not tell (two producer -1 entries on a partition).
                spans.push(Span::styled(" ?", ctx.theme.dim()));
            } else if !starts.is_empty() {
                spans.push(Span::styled(
                    format!(" {}", starts.join(" ")),
                    ctx.theme.dim(),
                ));
            }
            Line::from(spans)
        })
        .collect()
}

/// Draws the pane; `ctx.scroll` moves the frames up.
pub fn render(view: &Snapshot, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let inner = frame(ctx, super::PaneId::Journal, area, buf);
    let height = usize::from(inner.height);
    let summary = if view.lacks(field::JOURNAL) {
        // `__transaction_state` is not readable by a client; the admin
        // APIs still tell its transactions.
        let key = if view.lacks(field::TRANSACTIONS) {
            "not_visible"
        } else if view.transactions.is_empty() {
            "journal_no_txns"
        } else {
            "journal_txns"
        };
        Line::styled(ctx.lang.t(key), ctx.theme.dim())
    } else if view.journal.frames == 0 {
        Line::styled(ctx.lang.t("no_frames"), ctx.theme.dim())
    } else {
        Line::styled(
            format!("# {} · {} B", view.journal.frames, view.journal.bytes),
            ctx.theme.strong(),
        )
    };
    let mut out = vec![summary];
    if view.lacks(field::JOURNAL) && !view.lacks(field::TRANSACTIONS) {
        out.extend(observed(view, ctx, height.saturating_sub(1)));
    }
    if let Some(r) = &view.last_recovery {
        out.extend(recovery(r, ctx, height.saturating_sub(1) / 2));
    }
    let torn = view
        .moment_of_death
        .as_ref()
        .and_then(|m| m.torn.as_ref())
        .filter(|_| view.before_recovery);
    if let Some(t) = torn {
        out.push(Line::styled(
            format!("✗ {}: {}", ctx.lang.t("torn_now"), t.describe()),
            ctx.theme.bad(),
        ));
    }
    let room = height.saturating_sub(out.len());
    let frames = &view.journal.tail;
    let first = frames.len().saturating_sub(TAIL);
    let (start, end) = tail_window(frames.len() - first, room, ctx.scroll);
    // The transaction ids in one column, so the states line up: as wide
    // as the widest shown, at most 12 cells (8 in a compact pane).
    let id_max = if inner.width < COMPACT_BELOW { 8 } else { 12 };
    let ids = frames[first + start..first + end]
        .iter()
        .map(|f| f.data.id.as_str());
    let id_width = column_width(ids, 1, id_max);
    out.extend((first + start..first + end).map(|i| {
        let f = &frames[i];
        let new = view.changes.journal_frames.contains(&f.number);
        let torn = torn.is_some_and(|t| t.tears_frame(f));
        frame_line(
            f,
            frame_delta(frames, i, ctx.lang),
            ctx,
            inner.width,
            id_width,
            new,
            torn,
        )
    }));
    lines(out, inner, buf);
    // Frames older than the shown tail are out of view too.
    let shown = frames.len() - first;
    let older = view.journal.frames.saturating_sub(shown) + start;
    marks(ctx, area, older, shown - end, buf);
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{ctx, draw, view};
    use super::super::{PaneContext, PaneId};
    use crate::session::snapshot::Snapshot;
    use crate::ui::i18n::Lang;

    #[test]
    fn frame_states_line_up_under_long_transactional_ids() {
        let mut v = view();
        v.journal.tail[1].data.id = "payments-transactional-writer".into();
        let text = draw(PaneId::Journal, &v, &ctx(), 70, 8);
        assert!(text.contains("payments-tr… complete_abort"), "{text}");
        let state_at = |n: &str, state: &str| {
            let line = text.lines().find(|l| l.contains(n)).unwrap();
            line[..line.find(state).unwrap()].chars().count()
        };
        assert_eq!(
            state_at("#1 ", "ongoing"),
            state_at("#2 ", "complete_abort"),
            "{text}"
        );
        assert_eq!(
            state_at("#1 ", "ongoing"),
            state_at("#3 ", "ongoing"),
            "{text}"
        );
    }

    #[test]
    fn each_frame_says_what_it_changed() {
        use crate::session::snapshot::{JournalFrameSnapshot, TransactionSnapshot, TxnState};
        use std::collections::BTreeMap;
        let frame = |number, id: &str, state, parts: &[(&str, i64)], staged: &[(&str, i64)]| {
            JournalFrameSnapshot {
                number,
                offset: 0,
                len: 0,
                crc: 0,
                data: TransactionSnapshot {
                    id: id.into(),
                    state,
                    partitions: parts.iter().map(|(p, _)| p.to_string()).collect(),
                    first_offsets: parts.iter().map(|(p, o)| (p.to_string(), *o)).collect(),
                    staged_offsets: if staged.is_empty() {
                        BTreeMap::new()
                    } else {
                        BTreeMap::from([(
                            "g".to_string(),
                            staged.iter().map(|(p, o)| (p.to_string(), *o)).collect(),
                        )])
                    },
                    producer_id: None,
                    producer_epoch: None,
                    next_producer_epoch: None,
                },
            }
        };
        use TxnState::*;
        let frames = [
            frame(1, "tx", Ongoing, &[], &[]),
            frame(2, "tx", Ongoing, &[("out-0", 0)], &[]),
            frame(3, "tx", Ongoing, &[("out-0", 0), ("out-1", 4)], &[]),
            frame(
                4,
                "tx",
                Ongoing,
                &[("out-0", 0), ("out-1", 4)],
                &[("in-0", 7)],
            ),
            frame(
                5,
                "tx",
                CompleteCommit,
                &[("out-0", 0), ("out-1", 4)],
                &[("in-0", 7)],
            ),
            // The id reused: a new instance.
            frame(6, "tx", Ongoing, &[], &[]),
            frame(7, "tx", Ongoing, &[("out-0", 9)], &[]),
            // A second send to out-0: the book journals the same frame.
            frame(8, "tx", Ongoing, &[("out-0", 9)], &[]),
        ];
        let said: Vec<String> = (0..frames.len())
            .map(|i| super::frame_delta(&frames, i, Lang::En))
            .collect();
        assert_eq!(
            said,
            [
                " begin",
                " +out-0@0",
                " +out-1@4",
                " staged g in-0=7",
                "",
                " begin",
                " +out-0@9",
                " same as #7 (each send writes a frame)"
            ]
        );
        assert_eq!(
            super::frame_delta(&frames, 7, Lang::Zh),
            " 同 #7（每次发送都写一帧）"
        );
        // A frame whose previous one is not in the list says all it holds.
        assert_eq!(
            super::frame_delta(&frames[3..], 0, Lang::En),
            " +out-0@0 +out-1@4 staged g in-0=7"
        );
    }

    /// Kafka rules: each instance's producer id and epoch where it begins,
    /// and the epoch a version 2 end bumped it to, dim beside the state.
    #[test]
    fn producer_ids_epochs_and_the_version_2_bump_are_drawn_dim() {
        use ratatui::buffer::Buffer;
        use ratatui::layout::Rect;
        let mut v = view();
        v.last_recovery = None;
        let mut frames = v.journal.tail.clone();
        frames.truncate(2);
        for f in &mut frames {
            f.data.id = "tx-1".into();
            (f.data.producer_id, f.data.producer_epoch) = (Some(0), Some(0));
        }
        frames[0].data.state = crate::session::snapshot::TxnState::Ongoing;
        frames[0].data.partitions.clear();
        frames[0].data.first_offsets.clear();
        frames[1].data.state = crate::session::snapshot::TxnState::PrepareCommit;
        frames[1].data.next_producer_epoch = Some(1);
        v.journal.tail = frames;
        v.journal.frames = 2;
        let mut buf = Buffer::empty(Rect::new(0, 0, 72, 5));
        super::super::render(PaneId::Journal, &v, &ctx(), buf.area, &mut buf);
        let text = super::super::testkit::text(&buf);
        insta::assert_snapshot!(text);
        let at = |needle: &str| {
            let y = text.lines().position(|l| l.contains(needle)).unwrap();
            let line = text.lines().nth(y).unwrap();
            let x = line[..line.find(needle).unwrap()].chars().count();
            (x as u16, y as u16)
        };
        let dim = ctx().theme.dim();
        for needle in ["pid 0 e0", "epoch→e1"] {
            let (x, y) = at(needle);
            assert_eq!(buf[(x, y)].fg, dim.fg.unwrap(), "{needle}: {text}");
        }
    }

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
            swaps_repaired: vec![],
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
        assert!(zh.contains("事务日志为空"), "{zh}");
    }

    #[test]
    fn an_observed_cluster_lists_its_transactions_where_the_journal_is_not_visible() {
        use crate::session::snapshot::field;
        let mut v = view();
        v.journal.tail.clear();
        v.journal.frames = 0;
        v.unavailable = vec![field::JOURNAL.into()];
        let text = draw(PaneId::Journal, &v, &ctx(), 70, 6);
        assert!(
            text.contains("journal not visible over Kafka; transactions:"),
            "{text}"
        );
        for t in &v.transactions {
            assert!(text.contains(&format!("{} {}", t.id, t.state)), "{text}");
            for (tp, o) in &t.first_offsets {
                assert!(text.contains(&format!("{tp}@{o}")), "{text}");
            }
        }
        // An open transaction whose first offsets could not be told
        // shows `?` where they go.
        let open = v
            .transactions
            .iter()
            .find(|t| t.state.is_unstable())
            .expect("the test view has an open transaction")
            .id
            .clone();
        let mut unknown = v.clone();
        unknown
            .unavailable
            .push(field::at(field::TXN_FIRST_OFFSETS, &open));
        let text = draw(PaneId::Journal, &unknown, &ctx(), 70, 6);
        let line = text.lines().find(|l| l.contains(&open)).unwrap();
        assert!(line.contains(" ?") && !line.contains('@'), "{text}");
        // None: said, not a blank list.
        let mut none = v.clone();
        none.transactions.clear();
        let text = draw(PaneId::Journal, &none, &ctx(), 70, 6);
        assert!(
            text.contains("journal not visible over Kafka; no transactions"),
            "{text}"
        );
        v.unavailable.push(field::TRANSACTIONS.into());
        let text = draw(PaneId::Journal, &v, &ctx(), 70, 6);
        assert!(
            text.contains("not visible over the Kafka protocol") && !text.contains("transactions:"),
            "{text}"
        );
    }
}
