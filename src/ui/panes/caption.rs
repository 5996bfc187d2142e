//! The caption pane (SPEC §6 "caption"): the current step's caption in the
//! interface language, wrapped, first (the pane is often a few rows high);
//! then a line with the recording's title, `step X/Y`, the clock and the
//! rules.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::{PaneContext, frame};
use crate::session::snapshot::Snapshot;

/// Draws the pane; `ctx.scroll` scrolls the caption.
pub fn render(view: &Snapshot, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let inner = frame(ctx, "caption", area, buf);
    let t = |k| ctx.lang.t(k);
    let step = format!("{} {}", t("step"), view.step_label());
    let mut title = Vec::new();
    if !view.title.is_empty() {
        title.push(Span::styled(
            format!("{} · ", view.title),
            ctx.theme.strong(),
        ));
    }
    title.push(Span::styled(step, ctx.theme.strong()));
    title.push(Span::raw(format!(
        " · {} {} ms · {} {}",
        t("clock"),
        view.clock_ms,
        t("rules"),
        view.rules
    )));
    let mut text = Text::default();
    if let Some(c) = &view.caption {
        text.extend(c.text(ctx.lang.code()).lines().map(Line::raw));
    }
    text.push_line(Line::from(title).style(ctx.theme.dim()));
    let scroll = u16::try_from(ctx.scroll).unwrap_or(u16::MAX);
    Paragraph::new(text)
        .wrap(Wrap { trim: false })
        .scroll((scroll, 0))
        .render(inner, buf);
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{ctx, draw, view};
    use super::super::{PaneContext, PaneId};
    use crate::session::snapshot::Snapshot;
    use crate::ui::i18n::Lang;

    #[test]
    fn title_line_and_wrapped_caption() {
        let text = draw(PaneId::Caption, &view(), &ctx(), 60, 5);
        assert!(
            text.contains("demo · step 8/12 · clock 1500 ms · rules kafka"),
            "{text}"
        );
        assert!(
            text.contains("The LSO stops at the open transaction."),
            "{text}"
        );
        let narrow = draw(PaneId::Caption, &view(), &ctx(), 20, 12);
        assert!(narrow.contains("transaction."), "wrapped:\n{narrow}");
        let live = Snapshot {
            total_steps: None,
            caption: None,
            title: String::new(),
            ..view()
        };
        assert!(draw(PaneId::Caption, &live, &ctx(), 60, 4).contains("│step 8 · clock"));
    }

    #[test]
    fn caption_in_chinese() {
        let zh = draw(
            PaneId::Caption,
            &view(),
            &PaneContext {
                lang: Lang::Zh,
                ..ctx()
            },
            60,
            5,
        );
        assert!(
            zh.contains("LSO 停在未决事务处。") && zh.contains("步骤 8/12"),
            "{zh}"
        );
    }
}
