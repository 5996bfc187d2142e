//! The help overlay (SPEC §6 `?`). It is modal: while it
//! is open `App::update` drops every command but closing it (`?`, `Esc`,
//! `q`), scrolling it (`j`/`k`) and Ctrl-C, so no key reaches the engine or
//! the screen behind it. Its lines wrap under their key instead of being
//! cut, and it scrolls by entry, with "↑ N more" / "↓ N more" on its border
//! when entries are out of view.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use crate::ui::frame::ViewState;
use crate::ui::keys::{
    COMMON_KEYS, HELP_KEYS, KeyHelp, LIVE_KEYS, OBSERVE_KEYS, PROMPT_KEYS, REPLAY_KEYS,
};
use crate::ui::panes;
use crate::ui::wrap::{width, wrap};

/// The gap after the key column.
const GAP: usize = 2;

/// The key column's width: its longest key as the help names it in the
/// frame's language (`Ctrl-U/Ctrl-W` overflowed a fixed 10 columns and
/// pushed its row's text out of line, found in a new user's trial).
fn key_column(app: &ViewState, entries: &[Entry]) -> usize {
    entries
        .iter()
        .filter_map(|e| match e {
            Entry::Key(k) => Some(width(&app.lang.key_name(k.keys))),
            Entry::Heading(_) => None,
        })
        .max()
        .unwrap_or(0)
}

/// The text column is at most this wide, so its lines stay readable; the
/// overlay is as wide as the key column, the gap and this, with its border
/// (76 columns with the 10-column key column it had).
const MAX_TEXT: usize = 62;

/// One entry of the help: a section heading or a key.
enum Entry {
    Heading(&'static str),
    Key(&'static KeyHelp),
}

fn entries_of(app: &ViewState) -> Vec<Entry> {
    let mode = if app.bar.replay {
        REPLAY_KEYS
    } else if app.bar.observing {
        OBSERVE_KEYS
    } else {
        LIVE_KEYS
    };
    let mut out: Vec<Entry> = COMMON_KEYS.iter().chain(mode).map(Entry::Key).collect();
    // Prompts exist in a live session only.
    if !app.bar.replay && !app.bar.observing {
        out.push(Entry::Heading("prompt_keys"));
        out.extend(PROMPT_KEYS.iter().map(Entry::Key));
    }
    out.push(Entry::Heading("help_keys"));
    out.extend(HELP_KEYS.iter().map(Entry::Key));
    out.push(Entry::Heading("help_marks"));
    out.extend(MARKS.iter().map(Entry::Key));
    out
}

/// What the marks on screen mean (found trying the dashboard as a new
/// user: ▸ was explained only in docs/dashboard.md).
const MARKS: &[KeyHelp] = &[
    KeyHelp {
        keys: "▸",
        en: "changed by the last step; groups: moved by the last rebalance",
        zh: "上一步改变的内容；消费组面板中：上次重平衡移动的分区",
    },
    KeyHelp {
        keys: "● ▲",
        en: "on the caption's border: a captioned step, the current step",
        zh: "说明框底边：有说明的步骤、当前步骤",
    },
    KeyHelp {
        keys: "N✝ N+",
        en: "a crash's moment of death (before recovery), then after recovery",
        zh: "崩溃瞬间（恢复之前），然后是恢复之后",
    },
    KeyHelp {
        keys: "RU RC",
        en: "read_uncommitted, read_committed (the view, `i`)",
        zh: "read_uncommitted、read_committed（视角，`i`）",
    },
];

/// How many entries the help has (what `help_scroll` counts).
pub fn entries<'a>(state: impl Into<ViewState<'a>>) -> usize {
    entries_of(&state.into()).len()
}

/// The rows of one entry in a text column `text_w` wide.
fn rows(app: &ViewState, entry: &Entry, key_w: usize, text_w: usize) -> Vec<Line<'static>> {
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
                let key = if i == 0 {
                    app.lang.key_name(k.keys)
                } else {
                    String::new()
                };
                let pad = key_w.saturating_sub(width(&key));
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

/// The overlay's rectangle in `body` and its entries' rows.
fn geometry(app: &ViewState, body: Rect) -> (Rect, Vec<Vec<Line<'static>>>) {
    let entries = entries_of(app);
    let key_w = key_column(app, &entries);
    let w = u16::try_from(key_w + GAP + MAX_TEXT + 2)
        .unwrap_or(u16::MAX)
        .min(body.width);
    let text_w = usize::from(w.saturating_sub(2)).saturating_sub(key_w + GAP);
    let per_entry: Vec<Vec<Line>> = entries
        .iter()
        .map(|e| rows(app, e, key_w, text_w))
        .collect();
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
    (area, per_entry)
}

/// The first entry of the last page: from it on, every entry fits in
/// `height` rows (the last entry is shown however tall it is).
fn last_page(per_entry: &[Vec<Line>], height: usize) -> usize {
    let mut used = 0;
    let mut first = per_entry.len();
    while first > 0 && used + per_entry[first - 1].len() <= height {
        first -= 1;
        used += per_entry[first].len();
    }
    first.min(per_entry.len().saturating_sub(1))
}

/// The help's last useful scroll position in a `cols` x `rows` terminal:
/// scrolling further would show nothing new.
pub fn last_first<'a>(state: impl Into<ViewState<'a>>, cols: u16, rows: u16) -> usize {
    let [_, body, _] = crate::ui::frame::split(Rect::new(0, 0, cols, rows));
    last_first_in(&state.into(), body)
}

/// [`last_first`] for a frame whose body is `body`.
pub fn last_first_in(state: &ViewState, body: Rect) -> usize {
    let (area, per_entry) = geometry(state, body);
    last_page(&per_entry, usize::from(area.height.saturating_sub(2)))
}

/// Draws the overlay in the middle of `body`, from entry `scroll` on.
pub fn draw(app: &ViewState, scroll: usize, buf: &mut Buffer, body: Rect) {
    let (area, per_entry) = geometry(app, body);
    // One column more on each side is cleared: a wide character there
    // would otherwise cover the overlay's border on a real terminal.
    let margin = Rect {
        x: area.x.saturating_sub(1).max(body.x),
        width: (area.width + 2).min(body.right() - area.x.saturating_sub(1).max(body.x)),
        ..area
    };
    Clear.render(margin, buf);
    buf.set_style(margin, app.theme.base());
    let block = Block::default()
        .borders(Borders::ALL)
        .title(format!(
            " {} ({}) ",
            app.lang.t("help"),
            app.lang.t(if app.help_recorded {
                "help_recorded"
            } else {
                "help_close"
            })
        ))
        .title_style(app.theme.title(true))
        .border_type(app.theme.border_type(true))
        .border_style(app.theme.border(true));
    let inner = block.inner(area);
    block.render(area, buf);
    // Whole entries from the first one scrolled to, as many as fit; the
    // last page is always full.
    let height = usize::from(inner.height);
    let first = scroll.min(last_page(&per_entry, height));
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
