//! The help overlay (SPEC §6 `?`; issue 13 item 6). It is modal: while it
//! is open `App::update` drops every command but closing it (`?`, `Esc`,
//! `q`), scrolling it (`j`/`k`) and Ctrl-C, so no key reaches the engine or
//! the screen behind it. Its lines wrap under their key instead of being
//! cut, and it scrolls by entry, with "↑ N more" / "↓ N more" on its border
//! when entries are out of view.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use crate::ui::app::App;
use crate::ui::keys::{COMMON_KEYS, HELP_KEYS, KeyHelp, LIVE_KEYS, PROMPT_KEYS, REPLAY_KEYS};
use crate::ui::panes;
use crate::ui::wrap::{width, wrap};

/// The key column's width, and the gap after it.
const KEY_COLUMN: usize = 10;
const GAP: usize = 2;

/// The overlay is at most this wide, so its lines stay readable.
const MAX_WIDTH: u16 = 76;

/// One entry of the help: a section heading or a key.
enum Entry {
    Heading(&'static str),
    Key(&'static KeyHelp),
}

fn entries_of(app: &App) -> Vec<Entry> {
    let mode = if app.is_replay() {
        REPLAY_KEYS
    } else {
        LIVE_KEYS
    };
    let mut out: Vec<Entry> = COMMON_KEYS.iter().chain(mode).map(Entry::Key).collect();
    // Prompts exist in a live session only.
    if !app.is_replay() {
        out.push(Entry::Heading("prompt_keys"));
        out.extend(PROMPT_KEYS.iter().map(Entry::Key));
    }
    out.push(Entry::Heading("help_keys"));
    out.extend(HELP_KEYS.iter().map(Entry::Key));
    out
}

/// How many entries the help has (what `help_scroll` counts).
pub fn entries(app: &App) -> usize {
    entries_of(app).len()
}

/// The rows of one entry in a text column `text_w` wide.
fn rows(app: &App, entry: &Entry, text_w: usize) -> Vec<Line<'static>> {
    let strong = app.theme.strong();
    match entry {
        Entry::Heading(key) => vec![Line::styled(
            app.lang.t(key).to_string(),
            strong.underlined(),
        )],
        Entry::Key(k) => wrap(k.text(app.lang), text_w)
            .into_iter()
            .enumerate()
            .map(|(i, text)| {
                let key = if i == 0 { k.keys } else { "" };
                let pad = KEY_COLUMN.saturating_sub(width(key));
                Line::from(vec![
                    Span::styled(
                        format!("{}{key}{}", " ".repeat(pad), " ".repeat(GAP)),
                        strong,
                    ),
                    Span::raw(text),
                ])
            })
            .collect(),
    }
}

/// Draws the overlay in the middle of `body`.
pub fn draw(app: &App, frame: &mut Frame, body: Rect) {
    let entries = entries_of(app);
    let w = MAX_WIDTH.min(body.width);
    let text_w = usize::from(w.saturating_sub(2)).saturating_sub(KEY_COLUMN + GAP);
    let per_entry: Vec<Vec<Line>> = entries.iter().map(|e| rows(app, e, text_w)).collect();
    let total: usize = per_entry.iter().map(Vec::len).sum();
    let h = u16::try_from(total + 2)
        .unwrap_or(u16::MAX)
        .min(body.height);
    let area = Rect::new(
        body.x + (body.width - w) / 2,
        body.y + (body.height - h) / 2,
        w,
        h,
    );
    frame.render_widget(Clear, area);
    let buf = frame.buffer_mut();
    buf.set_style(area, app.theme.base());
    let block = Block::default()
        .borders(Borders::ALL)
        .title(format!(
            " {} ({}) ",
            app.lang.t("help"),
            app.lang.t("help_close")
        ))
        .title_style(app.theme.title(true))
        .border_type(app.theme.border_type(true))
        .border_style(app.theme.border(true));
    let inner = block.inner(area);
    block.render(area, buf);
    // Whole entries from the first one scrolled to, as many as fit.
    let first = app.help_scroll.min(entries.len().saturating_sub(1));
    let height = usize::from(inner.height);
    let mut lines = Vec::new();
    let mut shown = first;
    for entry in &per_entry[first..] {
        if lines.len() + entry.len() > height {
            break;
        }
        lines.extend(entry.iter().cloned());
        shown += 1;
    }
    // An entry taller than the whole overlay still shows its first rows.
    if shown == first && first < per_entry.len() {
        lines.extend(per_entry[first].iter().take(height).cloned());
        shown += 1;
    }
    render_lines(lines, inner, buf);
    panes::scroll_marks(
        app.lang,
        app.theme,
        area,
        first,
        per_entry.len() - shown,
        buf,
    );
}

fn render_lines(lines: Vec<Line<'static>>, area: Rect, buf: &mut Buffer) {
    Paragraph::new(lines).render(area, buf);
}
