//! The events pane (SPEC §6 "events"): the last events and errors merged by
//! step, newest at the bottom; errors are marked `✗` and styled bad.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{PaneContext, frame, lines, marks};
use crate::session::snapshot::Snapshot;
use crate::ui::theme::Theme;

/// Panes narrower than this write `#5` for "step 5:".
const NARROW: u16 = 30;

/// Draws the pane; `ctx.scroll` moves up into older events.
pub fn render(view: &Snapshot, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let inner = frame(ctx, super::PaneId::Events, area, buf);
    // "  step 5: …", or "#5 …" where every column counts (80x24).
    let narrow = inner.width < NARROW;
    let step = ctx.lang.t("step");
    let at = |n: usize| {
        if narrow {
            format!("#{n}")
        } else {
            format!("{step} {n}:")
        }
    };
    let want = usize::from(inner.height) + ctx.scroll;
    // Walk both lists from the end, newest first; at equal steps the error
    // comes after the event.
    let (mut events, mut errors) = (
        view.events.iter().rev().peekable(),
        view.errors.iter().rev().peekable(),
    );
    // What the last step changed, in words, comes last (newest), marked.
    let mut out: Vec<Line> = view
        .changes
        .sentences
        .iter()
        .enumerate()
        .rev()
        .map(|(i, s)| {
            let s = match view.changes.sentences_zh.get(i) {
                Some(zh) if ctx.lang.zh() => zh,
                _ => s,
            };
            Line::from(vec![
                Span::styled(
                    format!("{} ", Theme::CHANGED_GLYPH),
                    ctx.theme.changed_mark(),
                ),
                Span::styled(s.clone(), ctx.theme.changed()),
            ])
        })
        .collect();
    while out.len() < want {
        let line = match (events.peek(), errors.peek()) {
            (Some(e), Some(x)) if e.step > x.step => None,
            (_, Some(_)) => errors.next().map(|x| {
                let message = ctx.lang.error(&x.code, &x.message, &x.zh);
                Line::styled(format!("✗ {} {message}", at(x.step)), ctx.theme.bad())
            }),
            (Some(_), None) => None,
            (None, None) => break,
        };
        out.push(line.unwrap_or_else(|| {
            let e = events.next().expect("peeked");
            let pad = if narrow { "" } else { "  " };
            Line::raw(format!("{pad}{} {}", at(e.step), e.text_in(ctx.lang.zh())))
        }));
    }
    let skip = ctx
        .scroll
        .min(out.len().saturating_sub(usize::from(inner.height)));
    let total = view.events.len() + view.errors.len() + view.changes.sentences.len();
    let shown = out
        .len()
        .saturating_sub(skip)
        .min(usize::from(inner.height));
    marks(ctx, area, total.saturating_sub(skip + shown), skip, buf);
    let out = out
        .into_iter()
        .skip(skip)
        .take(usize::from(inner.height))
        .rev()
        .collect();
    lines(out, inner, buf);
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{ctx, draw, view};
    use super::super::{PaneContext, PaneId};
    use crate::ui::i18n::Lang;

    #[test]
    fn a_narrow_pane_numbers_steps_in_short() {
        let text = draw(PaneId::Events, &view(), &ctx(), 24, 5);
        assert!(text.contains("│#5 produced b, c"), "{text}");
        assert!(text.contains("│✗ #6 broker 3 is…"), "{text}");
    }

    #[test]
    fn merged_by_step_newest_at_bottom() {
        let text = draw(PaneId::Events, &view(), &ctx(), 40, 5);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].contains("  step 5: produced b, c"), "{text}");
        assert!(lines[2].contains("✗ step 6: broker 3 is stopped"), "{text}");
        assert!(
            lines[3].contains("  step 7: commit txn-a pending"),
            "{text}"
        );
        let short = draw(PaneId::Events, &view(), &ctx(), 40, 3);
        assert!(
            short.contains("step 7") && !short.contains("step 6"),
            "{short}"
        );
        let up = draw(
            PaneId::Events,
            &view(),
            &PaneContext { scroll: 1, ..ctx() },
            40,
            3,
        );
        assert!(up.contains("step 6") && !up.contains("step 7"), "{up}");
        let zh = draw(
            PaneId::Events,
            &view(),
            &PaneContext {
                lang: Lang::Zh,
                ..ctx()
            },
            40,
            5,
        );
        assert!(zh.contains("步骤 7"), "{zh}");
    }
}
