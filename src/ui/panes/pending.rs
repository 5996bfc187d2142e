//! The pending pane (SPEC §6 "pending operations"): each operation still
//! waiting, with the step that issued it, its kind and transaction, and what
//! it waits for (brokers, or an earlier step on the same transaction).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::{PaneContext, frame, lines, marks};
use crate::session::snapshot::{PendingSnapshot, Snapshot};

fn row<'a>(p: &PendingSnapshot, ctx: &PaneContext) -> Line<'a> {
    let t = |k| ctx.lang.t(k);
    let why = match p.queued_behind {
        Some(step) => format!("{} {step}", t("queued_behind")),
        None => {
            let brokers: Vec<String> = p.waiting_for.iter().map(u32::to_string).collect();
            format!("{} [{}]", t("waiting_for"), brokers.join(","))
        }
    };
    Line::styled(
        format!(
            "… {} {} {} {} {why}",
            t("step"),
            p.action_step,
            if ctx.lang.zh() {
                crate::session::said::action_zh(&p.kind)
            } else {
                &p.kind
            },
            p.txn.as_deref().unwrap_or("-")
        ),
        ctx.theme.waiting(),
    )
}

/// Draws the pane; `ctx.scroll` skips rows from the top.
pub fn render(view: &Snapshot, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let inner = frame(ctx, "pending", area, buf);
    let out = if view.pending.is_empty() {
        // In words, or in one word where the words do not fit; an observed
        // cluster's requests in flight are not visible to a client.
        let (long, short) = if view.lacks("pending") {
            ("not_visible", "not_visible_short")
        } else {
            ("nothing_pending", "nothing_pending_short")
        };
        let words = ctx.lang.t(long);
        let fits = ratatui::text::Span::raw(words).width() <= usize::from(inner.width);
        let text = if fits { words } else { ctx.lang.t(short) };
        vec![Line::styled(text, ctx.theme.dim())]
    } else {
        let skip = ctx.scroll.min(view.pending.len() - 1);
        let shown = (view.pending.len() - skip).min(usize::from(inner.height));
        marks(ctx, area, skip, view.pending.len() - skip - shown, buf);
        view.pending[skip..]
            .iter()
            .take(usize::from(inner.height))
            .map(|p| row(p, ctx))
            .collect()
    };
    lines(out, inner, buf);
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{ctx, draw, view};
    use super::super::{PaneContext, PaneId};
    use crate::session::snapshot::Snapshot;
    use crate::ui::i18n::Lang;

    #[test]
    fn waiting_and_queued() {
        let text = draw(PaneId::Pending, &view(), &ctx(), 60, 4);
        assert!(
            text.contains("… step 7 commit txn-a waiting for [2,3]"),
            "{text}"
        );
        assert!(
            text.contains("… step 8 abort txn-a queued behind step 7"),
            "{text}"
        );
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
