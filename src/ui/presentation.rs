//! Presentation mode (`P`): for a lecture on a projector, the body shows
//! one or two panes side by side (chosen by [`crate::ui::present_panes`])
//! and, under them, the step's caption set like a slide: the recording's
//! title and step, then the caption's first sentence (up to its first
//! `:`, `.` or `;`) as a headline in a block font three or six rows tall
//! ([`crate::ui::block_font`]), then the rest in the block font three
//! rows tall across the box (up to [`BODY_BLOCK_LINES`] lines) where that
//! fits, else bold on a short measure (at most [`MEASURE`] columns),
//! centred, with a line of space between lines when they fit. The box is as tall as its text wants, within
//! [`MIN_ROWS`] and [`MAX_SHARE`] of the body; the largest headline that
//! fits is chosen, and text that has no glyphs (Chinese) or does not fit
//! in a few headline lines is set bold instead, its first sentence on
//! lines of its own. Text that still does not fit is marked "↓ N more".

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Widget};

use crate::session::snapshot::Snapshot;
use crate::ui::block_font;
use crate::ui::frame::ViewState;
use crate::ui::panes;
use crate::ui::wrap::{width, wrap};

/// The longest line of the caption's text, in columns: longer lines are
/// hard to follow on a wall.
pub const MEASURE: usize = 64;
/// The caption's box is never lower than this (borders included)...
pub const MIN_ROWS: u16 = 6;
/// ...nor higher than this share of the body, in percent (unless the
/// minimum rows need more).
pub const MAX_SHARE: u16 = 50;

/// Columns left free on each side of the text.
const MARGIN: u16 = 3;
/// Headline sizes tried, largest first: (scale, most lines).
const HEADLINES: [(u16, usize); 2] = [(2, 2), (1, 3)];
/// The most lines of the rest of the caption set in the block font.
const BODY_BLOCK_LINES: usize = 4;

/// The step heading: the recording's title and the step.
fn heading(app: &ViewState, view: &Snapshot) -> String {
    // `34✝/34` at a moment of death, as the title bar says it.
    let step = format!("{} {}", app.lang.t("step"), view.step_label());
    if view.title.is_empty() {
        step
    } else {
        format!("{} · {step}", view.title)
    }
}

/// What the slide says: the step's caption, else what the step did (its
/// newest event, the Events pane's line): a step recorded live has no
/// caption, and a slide with only its title said nothing (a new user's
/// trial).
fn slide_text<'a>(app: &ViewState, view: &'a Snapshot) -> Option<&'a str> {
    if let Some(caption) = &view.caption {
        return Some(caption.text(app.lang.code()));
    }
    let zh = app.lang.code() == "zh";
    view.events
        .iter()
        .rev()
        .find(|e| e.step == view.step && view.step > 0)
        .map(|e| e.text_in(zh))
}

/// `text`'s first sentence or clause and the rest: split after the first
/// `: `, `. `, `; ` (or the Chinese `：`, `。`, `；`), the separator
/// dropped (a `?` or `!` kept). A text with none is all headline, less a
/// final full stop.
pub fn split_headline(text: &str) -> (&str, &str) {
    let text = text.trim();
    let mut best: Option<(usize, usize, usize)> = None;
    for (sep, keep) in [
        (": ", 0),
        (". ", 0),
        ("; ", 0),
        ("? ", 1),
        ("! ", 1),
        ("：", 0),
        ("。", 0),
        ("；", 0),
    ] {
        if let Some(at) = text.find(sep)
            && best.is_none_or(|(b, _, _)| at < b)
        {
            best = Some((at, keep, sep.len()));
        }
    }
    match best {
        Some((at, keep, len)) if at + len < text.len() => {
            (&text[..at + keep], text[at + len..].trim_start())
        }
        _ => (text.trim_end_matches(['.', '。']), ""),
    }
}

/// How a part of the caption (its headline, or the rest) is set.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Set {
    /// In the block font at this scale, one string per line.
    Block(Vec<String>, u16),
    /// In bold text, one string per line; the body double-spaced when
    /// the flag says so.
    Text(Vec<String>, bool),
}

impl Set {
    fn rows(&self) -> usize {
        match self {
            Set::Block(lines, _) if lines.is_empty() => 0,
            Set::Block(lines, scale) => {
                lines.len() * usize::from(block_font::rows(*scale)) + lines.len() - 1
            }
            Set::Text(lines, _) if lines.is_empty() => 0,
            Set::Text(lines, true) => 2 * lines.len() - 1,
            Set::Text(lines, false) => lines.len(),
        }
    }

    /// `text` in the block font at `scale` in `width` columns, in at most
    /// `most` lines, if it has glyphs and fits.
    fn block(text: &str, scale: u16, width: u16, most: usize) -> Option<Set> {
        let drawable = block_font::drawable(text)?;
        let lines = wrap(&drawable, block_font::per_line(width, scale));
        let whole = lines
            .iter()
            .all(|l| block_font::columns(l.chars().count(), scale) <= width);
        (lines.len() <= most && whole).then_some(Set::Block(lines, scale))
    }
}

/// A caption laid out for a box of some width and height.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Plan {
    headline: Set,
    body: Set,
}

impl Plan {
    /// The text's rows: the heading and a blank row, the headline, a
    /// blank row, the body.
    fn rows(&self) -> usize {
        let head = self.headline.rows();
        let body = self.body.rows();
        2 + head + usize::from(head > 0 && body > 0) + body
    }
}

/// The caption of `view` laid out in a box `outer_w` wide whose text has
/// at most `rows` rows: the largest that fits, first of the headline in
/// the block font at scale 2, then at scale 1, each with the rest in the
/// block font at scale 1, then in bold text double-spaced, then single;
/// text without glyphs (Chinese) in bold text.
fn plan(app: &ViewState, view: &Snapshot, outer_w: u16, rows: usize) -> Plan {
    let text_w = outer_w.saturating_sub(2 + 2 * MARGIN);
    let measure = usize::from(text_w).min(MEASURE);
    let Some(said) = slide_text(app, view) else {
        return Plan {
            headline: Set::Text(Vec::new(), false),
            body: Set::Text(Vec::new(), false),
        };
    };
    let (head, rest) = split_headline(said);
    let text = |s: &str, spaced| {
        let lines = if s.is_empty() {
            Vec::new()
        } else {
            wrap(s, measure)
        };
        Set::Text(lines, spaced)
    };
    let mut heads: Vec<Set> = HEADLINES
        .iter()
        .filter_map(|&(scale, most)| Set::block(head, scale, text_w, most))
        .collect();
    heads.push(text(head, false));
    let mut bodies = Vec::new();
    if !rest.is_empty()
        && let Some(b) = Set::block(rest, 1, text_w, BODY_BLOCK_LINES)
    {
        bodies.push(b);
    }
    bodies.extend([text(rest, true), text(rest, false)]);
    let mut last = None;
    for headline in &heads {
        for body in &bodies {
            // The rest is never set larger than its headline.
            if matches!((headline, body), (Set::Text(..), Set::Block(..))) {
                continue;
            }
            let p = Plan {
                headline: headline.clone(),
                body: body.clone(),
            };
            if p.rows() <= rows {
                return p;
            }
            last = Some(p);
        }
    }
    last.expect("there is always a text plan")
}

/// The rows the caption's box takes in a body `width` by `height`: what
/// its text wants, borders included, within [`MIN_ROWS`] and
/// [`MAX_SHARE`] of the body.
pub fn caption_height(app: &ViewState, view: &Snapshot, width: u16, height: u16) -> u16 {
    let max = (height * MAX_SHARE / 100).max(MIN_ROWS.min(height));
    let p = plan(app, view, width, usize::from(max.saturating_sub(2)));
    let want = u16::try_from(p.rows() + 2).unwrap_or(u16::MAX);
    want.clamp(MIN_ROWS.min(height), max)
}

/// Draws the large caption into `area`.
pub fn draw_caption(app: &ViewState, view: &Snapshot, area: Rect, buf: &mut Buffer) {
    let area = area.intersection(buf.area);
    let theme = app.theme;
    let block = Block::bordered()
        .title(app.lang.t("caption"))
        .title_style(theme.title(true))
        .border_type(theme.border_type(true))
        .border_style(theme.border(true));
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.is_empty() {
        return;
    }
    let margin = MARGIN.min(inner.width / 4);
    let text = Rect {
        x: inner.x + margin,
        width: inner.width - 2 * margin,
        ..inner
    };
    let p = plan(app, view, area.width, usize::from(text.height));
    // The block sits in the middle of the box, as on a slide.
    let used = u16::try_from(p.rows()).unwrap_or(u16::MAX).min(text.height);
    let mut y = text.y + (text.height - used) / 2;
    let bottom = text.bottom();
    let centred = |w: usize| {
        text.x + u16::try_from(usize::from(text.width).saturating_sub(w) / 2).unwrap_or(0)
    };
    let line = |s: &str, style, y: &mut u16, buf: &mut Buffer| {
        if *y < bottom {
            let x = centred(width(s));
            Paragraph::new(Line::styled(s.to_string(), style))
                .render(Rect::new(x, *y, text.right() - x, 1), buf);
        }
        *y += 1;
    };
    line(
        &heading(app, view),
        theme.dim().patch(theme.strong()),
        &mut y,
        buf,
    );
    y += 1;
    let mut shown = 0;
    let parts = [&p.headline, &p.body];
    for (n, part) in parts.into_iter().enumerate() {
        if n == 1 && p.headline.rows() > 0 && p.body.rows() > 0 {
            y += 1;
        }
        match part {
            Set::Block(lines, scale) => {
                for (i, l) in lines.iter().enumerate() {
                    if i > 0 {
                        y += 1;
                    }
                    let rows = block_font::rows(*scale);
                    if y + rows > bottom {
                        break;
                    }
                    let w = block_font::columns(l.chars().count(), *scale);
                    let at = Rect::new(centred(usize::from(w)), y, w, rows);
                    block_font::draw(l, *scale, theme.strong(), at, buf);
                    y += rows;
                    shown += 1;
                }
            }
            Set::Text(lines, spaced) => {
                for (i, l) in lines.iter().enumerate() {
                    if *spaced && i > 0 {
                        y += 1;
                    }
                    if y >= bottom {
                        break;
                    }
                    line(l, theme.strong(), &mut y, buf);
                    shown += 1;
                }
            }
        }
    }
    let lines = |s: &Set| match s {
        Set::Block(l, _) | Set::Text(l, _) => l.len(),
    };
    let hidden = lines(&p.headline) + lines(&p.body) - shown;
    panes::scroll_marks(app.lang, theme, area, 0, hidden, buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_headline_is_the_first_clause() {
        assert_eq!(
            split_headline("Commit: PREPARE_COMMIT, the marker. read_committed sees it."),
            (
                "Commit",
                "PREPARE_COMMIT, the marker. read_committed sees it."
            )
        );
        assert_eq!(
            split_headline("A second transaction, tx-2."),
            ("A second transaction, tx-2", "")
        );
        assert_eq!(split_headline("Why? Because."), ("Why?", "Because."));
        assert_eq!(
            split_headline("提交：PREPARE_COMMIT。然后"),
            ("提交", "PREPARE_COMMIT。然后")
        );
        assert_eq!(split_headline("offset 1.5 stays"), ("offset 1.5 stays", ""));
    }

    #[test]
    fn plans_rows() {
        let p = Plan {
            headline: Set::Block(vec!["ab".into(), "cd".into()], 2),
            body: Set::Text(vec!["x".into(), "y".into()], true),
        };
        assert_eq!(p.rows(), 2 + 13 + 1 + 3);
        let p = Plan {
            headline: Set::Block(vec!["ab".into()], 1),
            body: Set::Block(vec!["x".into(), "y".into()], 1),
        };
        assert_eq!(p.rows(), 2 + 3 + 1 + 7);
        let p = Plan {
            headline: Set::Text(vec![], false),
            body: Set::Text(vec![], false),
        };
        assert_eq!(p.rows(), 2);
        assert_eq!(Set::block("提交", 1, 100, 3), None, "no glyphs");
        assert_eq!(Set::block("abc def", 1, 12, 1), None, "two lines");
        assert_eq!(
            Set::block("abc def", 1, 12, 2),
            Some(Set::Block(vec!["abc".into(), "def".into()], 1))
        );
    }
}
