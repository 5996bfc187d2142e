//! One frame: a title bar, the layout's panes, and a key bar (or the open
//! prompt); the help overlay on top; a message instead of a panic when the
//! terminal is too small for the layout. The live UI, `render` and `export`
//! all draw through [`draw`].

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout as Split, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use crate::session::snapshot::Snapshot;
use crate::ui::app::{App, StatusKind};
use crate::ui::keys::{COMMON_KEYS, LIVE_KEYS, REPLAY_KEYS, key_bar};
use crate::ui::panes::{self, PaneContext};
use crate::ui::theme::Theme;

/// The title bar, body and key bar of a frame of `area`.
fn split(area: Rect) -> [Rect; 3] {
    Split::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area)
}

fn pane_context(app: &App, pane: panes::PaneId) -> PaneContext {
    PaneContext {
        lang: app.lang,
        theme: app.theme,
        focused: app.focused() == Some(pane),
        scroll: app.scroll.get(&pane).copied().unwrap_or(0),
        selected: app.selected,
        isolation: app.isolation,
    }
}

/// The batches whose rows a frame of `area` draws (see
/// [`SnapshotSource::load_values`](crate::session::SnapshotSource::load_values)).
pub fn visible_batches(app: &App, view: &Snapshot, area: Rect) -> Vec<(usize, usize)> {
    let [_, body, _] = split(area);
    if !app.layout.fits(area) {
        return Vec::new();
    }
    let mut out: Vec<(usize, usize)> = app
        .layout
        .areas(body)
        .into_iter()
        .filter(|(pane, _)| *pane == panes::PaneId::Partitions)
        .flat_map(|(pane, rect)| {
            panes::partitions::visible_batches(view, &pane_context(app, pane), rect)
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Draws the whole frame for `view`.
pub fn draw(app: &App, view: &Snapshot, frame: &mut Frame) {
    let area = frame.area();
    let [title, body, bottom] = split(area);
    if !app.layout.fits(area) {
        too_small(app, frame, area);
        return;
    }
    frame.render_widget(Paragraph::new(title_line(app, view)), title);
    for (pane, rect) in app.layout.areas(body) {
        let ctx = pane_context(app, pane);
        panes::render(pane, view, &ctx, rect, frame.buffer_mut());
    }
    frame.render_widget(Paragraph::new(bottom_line(app)), bottom);
    if app.show_help {
        help(app, frame, body);
    }
}

fn title_line(app: &App, view: &Snapshot) -> Line<'static> {
    let t = |k| app.lang.t(k);
    let step = format!("{} {}", t("step"), view.step_label());
    let mode = match &app.mode {
        crate::ui::app::Mode::Replay { playing: true, .. } => "▶ replay",
        crate::ui::app::Mode::Replay { .. } => "replay",
        crate::ui::app::Mode::Live(_) => "live",
        crate::ui::app::Mode::Saved(_) => "saved state",
    };
    let isolation = app.isolation.name();
    // At a moment of death the banner takes the recording title's place
    // (the caption pane still names it): docs/dashboard.md.
    let head = if view.before_recovery {
        Span::styled(
            format!(" ✝ {} ", t("moment_of_death")),
            moment_banner(app.theme),
        )
    } else {
        Span::styled(format!(" mk-tui · {} ", view.title), app.theme.strong())
    };
    Line::from(vec![
        head,
        Span::raw(format!(
            "│ {mode} │ {step} │ {} {} ms │ {} {} │ {} {isolation} ",
            t("clock"),
            view.clock_ms,
            t("rules"),
            view.rules,
            t("isolation")
        )),
    ])
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

fn bottom_line(app: &App) -> Line<'static> {
    if let Some(prompt) = &app.prompt {
        let mut spans = vec![
            Span::styled(
                format!(" {} › ", prompt.label(app.lang)),
                app.theme.strong(),
            ),
            Span::raw(prompt.text.clone()),
        ];
        // A refused prompt stays open and says why, as an error.
        match &prompt.refusal {
            Some(reason) => spans.push(Span::styled(
                format!("▏ ✗ {reason} (Esc=cancel)"),
                status_style(app.theme, StatusKind::Error),
            )),
            None => spans.push(Span::styled("▏ Enter=apply Esc=cancel", app.theme.dim())),
        }
        return Line::from(spans);
    }
    let mut spans = Vec::new();
    // The status comes first: at 80 columns the key bar would hide it.
    if let Some(status) = &app.status {
        spans.push(Span::styled(
            format!(" {} │", status.text),
            status_style(app.theme, status.kind),
        ));
    }
    for (key, what) in key_bar(app.is_replay()) {
        spans.push(Span::styled(format!(" {key}"), app.theme.strong()));
        spans.push(Span::raw(format!(" {}", app.lang.t(what))));
    }
    Line::from(spans)
}

fn help(app: &App, frame: &mut Frame, body: Rect) {
    let keys = if app.is_replay() {
        REPLAY_KEYS
    } else {
        LIVE_KEYS
    };
    let mut lines = Vec::new();
    for k in COMMON_KEYS.iter().chain(keys) {
        lines.push(Line::from(vec![
            Span::styled(format!("{:>10}  ", k.keys), app.theme.strong()),
            Span::raw(k.text(app.lang)),
        ]));
    }
    let width = 60.min(body.width);
    let height = (lines.len() as u16 + 2).min(body.height);
    let area = Rect::new(
        body.x + (body.width - width) / 2,
        body.y + (body.height - height) / 2,
        width,
        height,
    );
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(format!(
            " {} (? {}) ",
            app.lang.t("help"),
            app.lang.t("keys")
        ))
        .border_style(app.theme.border(true));
    frame.render_widget(Paragraph::new(lines).block(block), area);
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
