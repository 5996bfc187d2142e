//! One frame: a title bar, the body, and a key bar (or the open prompt);
//! the help overlay on top; a message instead of a panic when the terminal
//! is too small for the layout. The live UI, `render` and `export` all draw
//! through [`draw`].
//!
//! The body is the layout's panes, or, zoomed (`f`), the focused pane alone,
//! or, presenting (`P`), the focused pane above a large caption
//! ([`body`]). The theme's ground is painted first, so a light or
//! high-contrast frame looks the same in any terminal.

use crate::session::snapshot::field;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout as Split, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

use crate::session::snapshot::Snapshot;
use crate::session::snapshot::build::Wanted;
use crate::ui::app::{App, StatusKind};
use crate::ui::keys::key_bar;
use crate::ui::panes::{self, PaneContext, PaneId};
use crate::ui::presentation;
use crate::ui::theme::Theme;

/// The title bar, body and key bar of a frame of `area`.
pub fn split(area: Rect) -> [Rect; 3] {
    Split::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area)
}

/// What pane `pane` is drawn with, over `view` (where the selected batch's
/// row is looked up).
pub fn pane_context(app: &App, view: &Snapshot, pane: panes::PaneId) -> PaneContext {
    PaneContext {
        lang: app.lang,
        theme: app.theme,
        focused: app.focused() == Some(pane),
        scroll: app.scroll.get(&pane).copied().unwrap_or(0),
        selected: app.selected_row_in(view),
        isolation: app.isolation,
    }
}

/// What the body of a frame shows.
pub struct Body {
    /// The panes drawn, each with its rectangle.
    pub panes: Vec<(PaneId, Rect)>,
    /// Presenting: where the large caption goes.
    pub caption: Option<Rect>,
}

/// The pane drawn at the terminal cell (`col`, `row`) of a frame of `area`
/// (the same layout `draw` uses, zoom and presentation included).
pub fn pane_at(app: &App, view: &Snapshot, area: Rect, col: u16, row: u16) -> Option<PaneId> {
    if !app.layout.fits(area) {
        return None;
    }
    let [_, rect, _] = split(area);
    body(app, view, rect)
        .panes
        .into_iter()
        .find(|(_, r)| r.contains(ratatui::layout::Position { x: col, y: row }))
        .map(|(pane, _)| pane)
}

/// The body's panes: the layout's; zoomed, the focused pane over the whole
/// body; presenting, the focused pane (or, when the caption pane has the
/// focus, the layout's first other pane) above the large caption.
pub fn body(app: &App, view: &Snapshot, body: Rect) -> Body {
    let focused = app.focused();
    if app.zoomed
        && let Some(pane) = focused
    {
        return Body {
            panes: vec![(pane, body)],
            caption: None,
        };
    }
    if app.presenting {
        let shown = focused.filter(|p| *p != PaneId::Caption).or_else(|| {
            app.layout
                .panes()
                .into_iter()
                .find(|p| *p != PaneId::Caption)
        });
        let want = presentation::clamp_height(
            presentation::caption_height(app, view, body.width),
            body.height,
        );
        let Some(pane) = shown else {
            return Body {
                panes: Vec::new(),
                caption: Some(body),
            };
        };
        let [top, bottom] =
            Split::vertical([Constraint::Fill(1), Constraint::Length(want)]).areas(body);
        return Body {
            panes: vec![(pane, top)],
            caption: Some(bottom),
        };
    }
    Body {
        panes: app.layout.areas(body),
        caption: None,
    }
}

/// The batches whose rows a frame of `area` draws, with how many of each
/// batch's first records it draws (see
/// [`SnapshotSource::load_values`](crate::session::SnapshotSource::load_values)).
pub fn visible_batches(app: &App, view: &Snapshot, area: Rect) -> Vec<Wanted> {
    let [_, rect, _] = split(area);
    if !app.layout.fits(area) {
        return Vec::new();
    }
    let mut out: Vec<Wanted> = body(app, view, rect)
        .panes
        .into_iter()
        .flat_map(|(pane, rect)| {
            let ctx = pane_context(app, view, pane);
            match pane {
                panes::PaneId::Partitions => panes::partitions::visible_batches(view, &ctx, rect),
                panes::PaneId::Log => panes::log::visible_batches(view, &ctx, rect),
                _ => Vec::new(),
            }
        })
        .collect();
    // One ask per batch, as far as the furthest pane's.
    out.sort_unstable();
    out.reverse();
    out.dedup_by_key(|&mut (p, b, _)| (p, b));
    out.reverse();
    out
}

/// Draws the whole frame for `view`.
pub fn draw(app: &App, view: &Snapshot, frame: &mut Frame) {
    let area = frame.area();
    frame.render_widget(Block::new().style(app.theme.base()), area);
    let [title, rect, bottom] = split(area);
    if !app.layout.fits(area) {
        too_small(app, frame, area);
        return;
    }
    frame.render_widget(Paragraph::new(title_line(app, view, title.width)), title);
    let shown = body(app, view, rect);
    for (pane, rect) in shown.panes {
        let ctx = pane_context(app, view, pane);
        panes::render(pane, view, &ctx, rect, frame.buffer_mut());
    }
    if let Some(at) = shown.caption {
        presentation::draw_caption(app, view, at, frame.buffer_mut());
    }
    frame.render_widget(Paragraph::new(bottom_line(app, bottom.width)), bottom);
    if app.show_help {
        crate::ui::help::draw(app, frame, rect);
    }
}

/// The title bar for a frame `width` cells wide. The facts (mode, step,
/// clock, rules, isolation view) come in words when they fit, else in short
/// forms chosen on purpose (`3/6 · 0 ms · minikafka · RC`); the title then
/// gets what is left, cut at a word with `…`, or goes. Nothing is cut in
/// the middle of a word.
fn title_line(app: &App, view: &Snapshot, width: u16) -> Line<'static> {
    let t = |k| app.lang.t(k);
    let width = usize::from(width);
    let mode = match &app.mode {
        crate::ui::app::Mode::Replay { playing: true, .. } => format!("▶ {}", t("mode_replay")),
        crate::ui::app::Mode::Replay { .. } => t("mode_replay").to_string(),
        crate::ui::app::Mode::Live(_) => t("mode_live").to_string(),
        // A snapshot of a real cluster (`mk-tui observe`, docs/observe.md).
        crate::ui::app::Mode::Saved(_) if !view.unavailable.is_empty() => {
            t("mode_observed").to_string()
        }
        crate::ui::app::Mode::Saved(_) => t("mode_saved").to_string(),
        crate::ui::app::Mode::Observed(_) if app.is_playing() => format!("▶ {}", t("mode_replay")),
        crate::ui::app::Mode::Observed(_) if app.is_replay() => t("mode_replay").to_string(),
        crate::ui::app::Mode::Observed(_) => t("mode_observed").to_string(),
    };
    // A failed refresh shows the last snapshot that answered (docs/observe.md "Live").
    let mode = if crate::session::observation::is_stale(view) {
        format!("{mode} {}", t("stale"))
    } else {
        mode
    };
    // The play speed, when it is not the recorded pace.
    let mode = match app.speed_label() {
        Some(speed) if app.is_replay() => format!("{mode} {speed}"),
        _ => mode,
    };
    let isolation = app.isolation.name();
    // A cluster observed over the protocol has no engine clock to show.
    let ms = if view.lacks(field::CLOCK_MS) {
        "?".to_string()
    } else {
        format!("{} ms", view.clock_ms)
    };
    let long = format!(
        "│ {mode} │ {} {} │ {} {ms} │ {} {} │ {} {isolation} ",
        t("step"),
        view.step_label(),
        t("clock"),
        t("rules"),
        view.rules,
        t("isolation")
    );
    let short_isolation = match app.isolation {
        crate::session::snapshot::Isolation::ReadCommitted => "RC",
        crate::session::snapshot::Isolation::ReadUncommitted => "RU",
    };
    let medium = format!(
        "│ {mode} │ {} {} │ {ms} │ {} │ {short_isolation} ",
        t("step"),
        view.step_label(),
        view.rules
    );
    let short = format!(
        "│ {mode} │ {} │ {ms} │ {} │ {short_isolation} ",
        view.step_label(),
        view.rules
    );
    let w = |s: &str| Span::raw(s.to_string()).width();
    // At a moment of death the banner takes the recording title's place
    // (the caption pane still names it): docs/dashboard.md.
    if view.before_recovery {
        let banner = if app.live_at_moment() {
            format!(" ✝ {} · space: {} ", t("moment_of_death"), t("recovery"))
        } else {
            format!(" ✝ {} ", t("moment_of_death"))
        };
        let facts = [long, medium, short]
            .into_iter()
            .find(|f| w(&banner) + w(f) <= width)
            .unwrap_or_default();
        return Line::from(vec![
            Span::styled(banner, moment_banner(app.theme)),
            Span::raw(facts),
        ]);
    }
    let full_head = format!(" mk-tui · {} ", view.title);
    for facts in [&long, &medium] {
        if w(&full_head) + w(facts) <= width {
            return Line::from(vec![
                Span::styled(full_head, app.theme.strong()),
                Span::raw(facts.clone()),
            ]);
        }
    }
    // A title of at least a few words, with the step still in words.
    let room = width.saturating_sub(w(&medium) + w(" mk-tui ·  "));
    let title = cut_at_word(&view.title, room);
    if w(&title) >= 12 {
        return Line::from(vec![
            Span::styled(format!(" mk-tui · {title} "), app.theme.strong()),
            Span::raw(medium),
        ]);
    }
    let room = width.saturating_sub(w(&short) + w(" mk-tui ·  "));
    let title = cut_at_word(&view.title, room);
    let head = if title.is_empty() {
        " mk-tui ".to_string()
    } else {
        format!(" mk-tui · {title} ")
    };
    Line::from(vec![
        Span::styled(head, app.theme.strong()),
        Span::raw(short),
    ])
}

/// `text` if it fits `room` cells, else its longest prefix ending at a word
/// that fits with `…` after it (nothing if not even one word does).
fn cut_at_word(text: &str, room: usize) -> String {
    let w = |s: &str| Span::raw(s.to_string()).width();
    if w(text) <= room {
        return text.to_string();
    }
    let mut out = String::new();
    for word in text.split_inclusive(' ') {
        let next = format!("{out}{word}");
        if w(next.trim_end()) + 1 > room {
            break;
        }
        out = next;
    }
    let out = out.trim_end().trim_end_matches([':', ',', ';']);
    if out.is_empty() {
        String::new()
    } else {
        format!("{out}…")
    }
}

/// The moment-of-death banner: reversed as well as coloured, so it stands
/// out under `NO_COLOR` and on a light background.
pub fn moment_banner(theme: Theme) -> Style {
    theme
        .recovered()
        .add_modifier(ratatui::style::Modifier::REVERSED)
}

/// The style of a status of `kind`: its colour comes from the kind, never
/// from the words in it.
pub fn status_style(theme: Theme, kind: StatusKind) -> Style {
    match kind {
        StatusKind::Ok => theme.dim(),
        StatusKind::Pending => theme.waiting(),
        StatusKind::Recovered => theme.recovered(),
        StatusKind::Error => theme.bad(),
    }
}

/// The bottom line `width` cells wide: the open prompt, or the status and
/// the key bar.
fn bottom_line(app: &App, width: u16) -> Line<'static> {
    if let Some(prompt) = &app.prompt {
        // The cursor is the reversed cell under it (a space at the end), so
        // it shows in every render and cast without the terminal's cursor.
        let (before, under, after) = prompt.at_cursor();
        let label = Span::styled(
            format!(" {} › ", prompt.label(app.lang)),
            app.theme.strong(),
        );
        let mut spans = if prompt.selected {
            // The selected text underlined as well as reversed, then the
            // cursor after it: typing replaces it.
            vec![
                label,
                Span::styled(
                    prompt.text.clone(),
                    app.theme
                        .selected()
                        .add_modifier(ratatui::style::Modifier::UNDERLINED),
                ),
                Span::styled(" ", app.theme.selected()),
            ]
        } else {
            vec![
                label,
                Span::raw(before.to_string()),
                Span::styled(under.unwrap_or(' ').to_string(), app.theme.selected()),
                Span::raw(after.to_string()),
            ]
        };
        // A refused prompt stays open and says why, as an error.
        match &prompt.refusal {
            Some(reason) => spans.push(Span::styled(
                format!("▏ ✗ {reason} ({})", app.lang.t("prompt_cancel")),
                status_style(app.theme, StatusKind::Error),
            )),
            None => spans.push(Span::styled(
                format!("▏ {}", app.lang.t("prompt_keys_hint")),
                app.theme.dim(),
            )),
        }
        return Line::from(spans);
    }
    status_and_keys(app, usize::from(width))
}

/// Keys the key bar always ends with: the way to help and out.
const PINNED_KEYS: [&str; 2] = ["?", "q"];

/// The status, then the key bar, in `width` cells, ending on a whole key
/// (docs/dashboard.md "The key bar"): `? help` and `q quit` always show,
/// at the end; the status comes first (at 80 columns the keys would hide
/// it) and gets what they leave, shortened at a word with `…`; the other
/// keys follow it in order, each whole or not at all.
fn status_and_keys(app: &App, width: usize) -> Line<'static> {
    let entry = |key: &str, what: &'static str| {
        vec![
            Span::styled(format!(" {key}"), app.theme.strong()),
            Span::raw(format!(" {}", app.lang.t(what))),
        ]
    };
    let w = |spans: &[Span]| spans.iter().map(Span::width).sum::<usize>();
    let keys = key_bar(app.bar_state());
    // Observing live, `r` stays too: after a failed refresh the status
    // is long, and refreshing is what to do next (docs/observe.md "Live").
    let pinned = |k: &str| PINNED_KEYS.contains(&k) || (app.is_observing() && k == "r");
    let (pinned, others): (Vec<_>, Vec<_>) = keys.into_iter().partition(|(k, _)| pinned(k));
    let tail: Vec<Span<'static>> = pinned.iter().flat_map(|(k, l)| entry(k, l)).collect();
    let mut room = width.saturating_sub(w(&tail));
    let mut spans = Vec::new();
    if let Some(status) = &app.status {
        let line = Line::from(Span::styled(
            format!(" {} │", status.text),
            status_style(app.theme, status.kind),
        ));
        let line = if line.width() <= room {
            line
        } else {
            // Shortened, the bar's separator after it.
            let mut short = crate::ui::panes::shorten(
                Line::from(line.spans[0].clone()),
                room.saturating_sub(2),
            );
            short
                .spans
                .push(Span::styled(" │", status_style(app.theme, status.kind)));
            short
        };
        room = room.saturating_sub(line.width());
        spans.extend(line.spans);
    }
    for (key, what) in others {
        let e = entry(key, what);
        if w(&e) > room {
            break;
        }
        room -= w(&e);
        spans.extend(e);
    }
    spans.extend(tail);
    Line::from(spans)
}

fn too_small(app: &App, frame: &mut Frame, area: Rect) {
    let text = format!(
        "{}: {}x{} — the \"{}\" layout needs {}x{}. Enlarge the window, or press q to quit.",
        app.lang.t("too_small"),
        area.width,
        area.height,
        app.layout.name,
        app.layout.min_cols,
        app.layout.min_rows
    );
    frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), area);
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_title_is_cut_at_a_word_never_inside_one() {
        use super::cut_at_word;
        let t = "Chapter 8: the visibility boundary";
        assert_eq!(cut_at_word(t, 80), t);
        assert_eq!(cut_at_word(t, 25), "Chapter 8: the…");
        assert_eq!(cut_at_word(t, 12), "Chapter 8…");
        assert_eq!(cut_at_word(t, 5), "");
        assert_eq!(cut_at_word("分区 日志", 5), "分区…");
    }
}
