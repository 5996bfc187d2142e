//! The offsets pane (SPEC §6 "offsets (staged vs committed)"): the offsets
//! each transaction has staged (with its state), then each group's committed
//! offsets.

use crate::session::snapshot::field;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{PaneContext, frame, lines, marks};
use crate::session::snapshot::{GroupOffsets, Snapshot};
use crate::ui::glossary;
use crate::ui::theme::Theme;

/// Draws the pane; `ctx.scroll` skips rows from the top.
pub fn render(view: &Snapshot, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let inner = frame(ctx, super::PaneId::Offsets, area, buf);
    let (t, theme) = (|k| ctx.lang.t(k), &ctx.theme);
    let mut staging = view
        .transactions
        .iter()
        // Staged offsets matter while the outcome is open; a completed
        // transaction's offsets are published (commit) or gone (abort).
        .filter(|x| x.state.is_unstable() && !x.staged_offsets.is_empty())
        .peekable();
    // An observed cluster's staged offsets are not visible to a client
    // (docs/observe.md: `transactions[].staged_offsets` unavailable).
    let nothing = if view.lacks(field::TRANSACTIONS) || view.lacks(field::TXN_STAGED_OFFSETS) {
        "staged_not_visible"
    } else {
        "nothing_staged"
    };
    // In words, or in short where the words do not fit.
    let nothing = match nothing {
        "staged_not_visible"
            if ratatui::text::Span::raw(t(nothing)).width() > usize::from(inner.width) =>
        {
            "staged_not_visible_short"
        }
        other => other,
    };
    let none = staging
        .peek()
        .is_none()
        .then(|| Line::styled(t(nothing), theme.dim()));
    let width = usize::from(inner.width);
    let staged = staging.flat_map(|x| {
        let head = Line::from(vec![
            Span::styled(
                format!("{} ", glossary::staged_label(ctx.lang)),
                theme.waiting(),
            ),
            Span::styled(x.id.clone(), theme.strong()),
            Span::raw(format!(" ({})", ctx.lang.state_name(x.state))),
        ]);
        let rows = rows(&x.staged_offsets, "→", width, |_, _| false)
            .into_iter()
            .map(|(text, _)| Line::styled(text, theme.waiting()));
        std::iter::once(head).chain(rows)
    });
    // An observed group's offset that a transaction has pending
    // (OffsetFetch's UNSTABLE_OFFSET_COMMIT): where, not what.
    let pending = field::pending_commits(&view.unavailable)
        .into_iter()
        .map(|(g, tp)| {
            Line::styled(
                format!("… {g} {tp} {}", t("pending_commit")),
                theme.waiting(),
            )
        });
    // A heading with nothing under it read as a pane cut short (a new
    // user's trial, `mk-tui lab ch08` at start): with no committed offset
    // it says so, or that an observed cluster's could not be read.
    let mut head = Line::styled(glossary::committed_offsets_label(ctx.lang), theme.good());
    if view.committed_offsets.values().all(|m| m.is_empty()) {
        // In short where the words do not fit (`none`), as the pane's
        // other "nothing" lines.
        let words = Span::raw(format!("{}{}", t("colon"), t("none_yet"))).width();
        let why = if view.lacks(field::COMMITTED_OFFSETS) {
            "not_visible_short"
        } else if head.width() + words > usize::from(inner.width) {
            "nothing_pending_short"
        } else {
            "none_yet"
        };
        head.spans.push(Span::styled(
            format!("{}{}", t("colon"), t(why)),
            theme.dim(),
        ));
    }
    // An offset the last step published is marked `▸`.
    let published = &view.changes.published;
    let is_published =
        |g: &str, tp: &str| published.iter().any(|(pg, ptp, _)| pg == g && ptp == tp);
    let committed = rows(&view.committed_offsets, "=", width, is_published)
        .into_iter()
        .map(|(text, marked)| match text.strip_prefix("  ") {
            Some(rest) if marked => Line::from(vec![
                Span::styled(format!("{} ", Theme::CHANGED_GLYPH), theme.changed_mark()),
                Span::styled(rest.to_string(), theme.changed()),
            ]),
            _ => Line::raw(text),
        });
    let all: Vec<Line> = none
        .into_iter()
        .chain(pending)
        .chain(staged)
        .chain(std::iter::once(head))
        .chain(committed)
        .collect();
    let skip = ctx.scroll.min(all.len());
    let shown = (all.len() - skip).min(usize::from(inner.height));
    marks(ctx, area, skip, all.len() - skip - shown, buf);
    let out = all.into_iter().skip(skip).take(shown).collect();
    lines(out, inner, buf);
}

/// Each group's offsets as rows of `width` columns: `  GROUP TP ARROW O`
/// each, or, where one such row would not fit, the group's name once
/// above its own rows (`  GROUP`, then `    TP ARROW O`), so the offset,
/// the number the row is for, is never what the pane's edge cuts (a new
/// user's trial at 100x30: `shipping payments-0…`). Each row says whether
/// `marked` holds for it (the group's name row never).
fn rows(
    offsets: &GroupOffsets,
    arrow: &str,
    width: usize,
    marked: impl Fn(&str, &str) -> bool,
) -> Vec<(String, bool)> {
    let flat = |g: &str, tp: &str, o: i64| format!("  {g} {tp} {arrow} {o}");
    let fits = offsets.iter().all(|(g, m)| {
        m.iter()
            .all(|(tp, o)| Span::raw(flat(g, tp, *o)).width() <= width)
    });
    let mut out = Vec::new();
    for (g, m) in offsets {
        if !fits && !m.is_empty() {
            out.push((format!("  {g}"), false));
        }
        for (tp, o) in m {
            let text = if fits {
                flat(g, tp, *o)
            } else {
                format!("    {tp} {arrow} {o}")
            };
            out.push((text, marked(g, tp)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{ctx, draw, view};
    use super::super::{PaneContext, PaneId};
    use crate::session::snapshot::Snapshot;
    use crate::ui::i18n::Lang;

    #[test]
    fn staged_then_committed() {
        let text = draw(PaneId::Offsets, &view(), &ctx(), 40, 7);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].contains("… staged txn-a (ongoing)"), "{text}");
        assert!(lines[2].contains("  g1 out-0 → 4"), "{text}");
        assert!(lines[3].contains("✓ committed"), "{text}");
        assert!(lines[4].contains("  g1 out-0 = 1"), "{text}");
        let scrolled = draw(
            PaneId::Offsets,
            &view(),
            &PaneContext { scroll: 2, ..ctx() },
            40,
            7,
        );
        assert!(
            scrolled.lines().nth(1).unwrap().contains("✓ committed"),
            "{scrolled}"
        );
    }

    #[test]
    fn an_observed_pending_commit_says_where_not_what() {
        use crate::session::snapshot::field;
        let v = Snapshot {
            transactions: vec![],
            unavailable: vec![
                field::TXN_STAGED_OFFSETS.into(),
                field::pending_commit("workers", "in-0"),
            ],
            ..view()
        };
        let text = draw(PaneId::Offsets, &v, &ctx(), 60, 7);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[1].contains("staged offsets: not visible over Kafka"),
            "{text}"
        );
        assert!(
            lines[2].contains("… workers in-0 pending in a transaction"),
            "{text}"
        );
        assert!(lines[3].contains("✓ committed"), "{text}");
        assert_eq!(
            field::pending_commits(&v.unavailable),
            [("workers", "in-0")],
            "one spelling, read back"
        );
    }

    #[test]
    fn a_row_that_would_not_fit_puts_its_group_above_so_the_offset_shows() {
        let mut v = view();
        v.committed_offsets = [(
            "shipping".to_string(),
            [
                ("payments-0".to_string(), 2),
                ("payments-1".to_string(), 17),
            ]
            .into(),
        )]
        .into();
        // "  shipping payments-1 = 17" is 26 columns: at 28 (26 inside)
        // every row fits, at 24 not.
        let wide = draw(PaneId::Offsets, &v, &ctx(), 28, 8);
        assert!(wide.contains("  shipping payments-1 = 17"), "{wide}");
        let narrow = draw(PaneId::Offsets, &v, &ctx(), 24, 8);
        let lines: Vec<&str> = narrow.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains("  shipping "))
            .unwrap();
        assert_eq!(
            lines[at].trim_matches('│').trim_end(),
            "  shipping",
            "{narrow}"
        );
        assert!(lines[at + 1].contains("    payments-0 = 2 "), "{narrow}");
        assert!(lines[at + 2].contains("    payments-1 = 17"), "{narrow}");
        assert!(
            lines[at..at + 3].iter().all(|l| !l.contains('…')),
            "no offset cut: {narrow}"
        );
    }

    #[test]
    fn nothing_staged_in_zh() {
        let v = Snapshot {
            transactions: vec![],
            ..view()
        };
        let zh = draw(
            PaneId::Offsets,
            &v,
            &PaneContext {
                lang: Lang::Zh,
                ..ctx()
            },
            40,
            7,
        );
        assert!(
            zh.contains("没有暂存的 offset") && zh.contains("已提交"),
            "{zh}"
        );
    }
}
