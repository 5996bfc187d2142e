//! One frame: a title bar, the body, and a key bar (or the open prompt);
//! the help overlay on top; a message instead of a panic when the terminal
//! is too small for the layout. The live UI, `render` and `export` all draw
//! through [`draw`], from a frozen [`FrameInput`] (the snapshot and the
//! view state as data), and get back the frame's [`FrameMap`]: where each
//! pane went, how many rows the wrapping ones have, which batches' values
//! were shown. The app keeps the map for clicks and scrolling
//! (docs/dashboard.md "The frame's map").
//!
//! The body is the layout's panes, or, zoomed (`f`), the focused pane alone,
//! or, presenting (`P`), the focused pane above a large caption. The
//! theme's ground is painted first, so a light or high-contrast frame
//! looks the same in any terminal.

use std::collections::BTreeMap;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout as Split, Position, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget, Wrap};

use crate::session::snapshot::build::Wanted;
use crate::session::snapshot::field;
use crate::session::snapshot::{Isolation, Snapshot, SnapshotSource, Values};
use crate::session::ui_step::Selection;
use crate::ui::i18n::Lang;
use crate::ui::keys::{BarState, key_bar};
use crate::ui::layout::Layout;
use crate::ui::panes::{self, Pane, PaneContext, PaneId};
use crate::ui::presentation;
use crate::ui::prompt::Prompt;
use crate::ui::status::{Status, StatusKind};
use crate::ui::theme::Theme;

/// What a frame shows besides the snapshot: the view state, as data. The
/// dashboard (`App`) makes one for each frame; nothing here reads the app.
#[derive(Clone, Copy)]
pub struct ViewState<'a> {
    pub layout: &'a Layout,
    pub lang: Lang,
    pub theme: Theme,
    /// The focused pane.
    pub focus: Option<PaneId>,
    pub scroll: &'a BTreeMap<PaneId, usize>,
    /// The selected batch of the partitions pane.
    pub selected: &'a Selection,
    pub isolation: Isolation,
    /// The partition the last step touched, which the panes that list
    /// partitions mark (see [`panes::touched`]).
    pub touched: Option<usize>,
    /// `f`: the focused pane fills the body.
    pub zoomed: bool,
    /// `P`: one or two panes above a large caption.
    pub presenting: bool,
    /// `v`: the pair of panes picked for presentation (an index into
    /// [`crate::ui::present_panes::PAIRS`]); None follows the lesson or
    /// the step.
    pub present_pick: Option<usize>,
    /// The help overlay, when open: its first entry shown.
    pub help: Option<usize>,
    /// The help shown is the recording's, not the viewer's: its title
    /// says so, and that the keys still work under it.
    pub help_recorded: bool,
    pub prompt: Option<&'a Prompt>,
    pub status: Option<&'a Status>,
    /// What drives the frame: the title bar's mode.
    pub shown: Shown,
    /// The play speed, when it is not the recorded pace ("×2").
    pub speed: Option<f64>,
    /// A live session at a crash's moment of death: `space` shows the
    /// recovery (the banner says so).
    pub live_at_moment: bool,
    /// What the key bar offers.
    pub bar: BarState,
}

/// The title bar's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    Live,
    Replay,
    /// A replay playing at the recorded pace.
    Playing,
    /// A saved state (`render --state`); one with unavailable fields is a
    /// snapshot of a real cluster, and says "observed".
    Saved,
    /// A real cluster observed live (`mk-tui observe`).
    Observing,
}

/// Everything a frame is drawn from, frozen: the snapshot and the view
/// state, and where the values of the rows drawn come from.
#[derive(Clone, Copy)]
pub struct FrameInput<'a> {
    pub view: &'a Snapshot,
    pub state: ViewState<'a>,
    /// The snapshot's source: a frame reads the record values of the batch
    /// rows it draws, and only those (see [`SnapshotSource::values`]).
    /// None: drawn without them (a frame drawn only for its map).
    pub values: Option<&'a dyn SnapshotSource>,
}

/// What a frame drew where: everything clicks, scrolling and keys need to
/// know about the screen, so that the dashboard never lays it out again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameMap {
    /// The frame's whole area.
    pub area: Rect,
    /// The body's panes, each with its rectangle (none when the terminal is
    /// too small for the layout).
    pub panes: Vec<(PaneId, Rect)>,
    /// Presenting: where the large caption is.
    pub caption: Option<Rect>,
    /// The rows of each pane drawn whose rows wrap at its width
    /// ([`Pane::rows`]): how far it scrolls.
    pub rows: BTreeMap<PaneId, usize>,
    /// The batches whose rows the frame draws, with how many of each
    /// batch's first records (one ask per batch, as far as the furthest
    /// pane's).
    pub batches: Vec<Wanted>,
    /// The help's last useful first entry at this size: scrolling further
    /// would show nothing new.
    pub help_last: usize,
}

impl FrameMap {
    /// The pane drawn at the terminal cell (`col`, `row`).
    pub fn pane_at(&self, col: u16, row: u16) -> Option<PaneId> {
        self.panes
            .iter()
            .find(|(_, r)| r.contains(Position { x: col, y: row }))
            .map(|&(pane, _)| pane)
    }
}

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
fn pane_context(state: &ViewState, view: &Snapshot, pane: PaneId) -> PaneContext {
    PaneContext {
        lang: state.lang,
        theme: state.theme,
        focused: state.focus == Some(pane),
        scroll: state.scroll.get(&pane).copied().unwrap_or(0),
        selected: panes::partitions::row_of(view, state.selected),
        isolation: state.isolation,
        touched: state.touched,
    }
}

/// The body's panes, each with its rectangle, and presenting, where the
/// caption goes: the layout's; zoomed, the focused pane over the whole
/// body; presenting, one or two panes side by side
/// ([`crate::ui::present_panes::chosen`]) above the large caption.
fn body(input: &FrameInput, body: Rect) -> (Vec<(PaneId, Rect)>, Option<Rect>) {
    let state = &input.state;
    if state.zoomed
        && let Some(pane) = state.focus
    {
        return (vec![(pane, body)], None);
    }
    if !state.presenting {
        return (state.layout.areas(body), None);
    }
    use crate::ui::present_panes::{STACKED_PANE_ROWS, chosen, stacks, with_strip};
    let shown = chosen(state.present_pick, input.view, body.width, body.height);
    if shown.is_empty() {
        return (Vec::new(), Some(body));
    }
    let mut want = presentation::caption_height(state, input.view, body.width, body.height);
    // Stacked, the caption gives up rows (its headline set smaller) so
    // both panes keep theirs.
    let stacked = shown.len() > 1 && stacks(body.width, body.height);
    if stacked {
        want = want.min(body.height - 2 * STACKED_PANE_ROWS);
    }
    let [top, bottom] =
        Split::vertical([Constraint::Fill(1), Constraint::Length(want)]).areas(body);
    let (pair, strip) = with_strip(&shown, top);
    let split = if stacked {
        Split::vertical
    } else {
        Split::horizontal
    };
    let columns = split(shown.iter().map(|_| Constraint::Fill(1))).split(pair);
    let mut panes: Vec<(PaneId, Rect)> = shown.into_iter().zip(columns.iter().copied()).collect();
    panes.extend(strip);
    (panes, Some(bottom))
}

/// The map of a frame of `area`: where [`draw`] puts each pane, how many
/// rows the wrapping ones have there, which batches' values it shows.
/// Drawing is this, then the panes.
pub fn map(input: &FrameInput, area: Rect) -> FrameMap {
    let [_, rect, _] = split(area);
    let help_last = crate::ui::help::last_first_in(&input.state, rect);
    if !input.state.layout.fits(area) {
        return FrameMap {
            area,
            panes: Vec::new(),
            caption: None,
            rows: BTreeMap::new(),
            batches: Vec::new(),
            help_last,
        };
    }
    let (shown, caption) = body(input, rect);
    let mut rows = BTreeMap::new();
    let mut batches = Vec::new();
    for &(id, rect) in &shown {
        let pane = Pane {
            id,
            view: input.view,
            values: Values::none(),
            ctx: pane_context(&input.state, input.view, id),
        };
        if let Some(n) = pane.rows(rect) {
            rows.insert(id, n);
        }
        batches.extend(pane.visible_batches(rect));
    }
    // One ask per batch, as far as the furthest pane's. Each pane's come
    // in order: the stable sort merges those runs.
    batches.sort();
    batches.reverse();
    batches.dedup_by_key(|&mut (p, b, _)| (p, b));
    batches.reverse();
    FrameMap {
        area,
        panes: shown,
        caption,
        rows,
        batches,
        help_last,
    }
}

/// The scrolls that bring partition `p` (the one the last step touched)
/// into view in every pane of the layout that lists partitions, in a frame
/// of `area`: each at the rectangle the frame draws it in, or, for a pane
/// the frame does not draw now (zoomed or presenting another), the one the
/// layout gives it (docs/dashboard.md "Following the step").
pub fn follow(input: &FrameInput, area: Rect, p: usize) -> Vec<(PaneId, usize)> {
    let state = &input.state;
    let mut rects = map(input, area).panes;
    if state.layout.fits(area) {
        let [_, body, _] = split(area);
        for (id, rect) in state.layout.areas(body) {
            if !rects.iter().any(|&(shown, _)| shown == id) {
                rects.push((id, rect));
            }
        }
    }
    rects
        .into_iter()
        .filter_map(|(id, rect)| {
            let pane = Pane {
                id,
                view: input.view,
                values: Values::none(),
                ctx: pane_context(state, input.view, id),
            };
            pane.scroll_to(rect, p).map(|s| (id, s))
        })
        .collect()
}

/// The pane a frame of `area` draws at the terminal cell (`col`, `row`)
/// (zoom and presentation included).
pub fn pane_at<'a>(
    state: impl Into<ViewState<'a>>,
    view: &'a Snapshot,
    area: Rect,
    col: u16,
    row: u16,
) -> Option<PaneId> {
    let input = FrameInput {
        view,
        state: state.into(),
        values: None,
    };
    map(&input, area).pane_at(col, row)
}

/// The batches whose rows a frame of `area` draws, with how many of each
/// batch's first records it draws ([`FrameMap::batches`]).
pub fn visible_batches<'a>(
    state: impl Into<ViewState<'a>>,
    view: &'a Snapshot,
    area: Rect,
) -> Vec<Wanted> {
    let input = FrameInput {
        view,
        state: state.into(),
        values: None,
    };
    map(&input, area).batches
}

/// The values of the batch rows `map` draws that `input`'s snapshot does
/// not carry, read from its source (none without one): the panes draw them
/// from beside the snapshot, which is shared and not copied
/// ([`Values`]).
pub fn values(input: &FrameInput, map: &FrameMap) -> Values {
    match input.values {
        Some(source) if !map.batches.is_empty() => source.values(input.view, &map.batches),
        _ => Values::default(),
    }
}

/// Draws the whole frame into `buf` (its area is the frame's) and returns
/// its map: the one drawing path of the live UI, `render` and `export`.
pub fn draw(input: &FrameInput, buf: &mut Buffer) -> FrameMap {
    let area = buf.area;
    let state = &input.state;
    let map = map(input, area);
    Block::new().style(state.theme.base()).render(area, buf);
    let [title, rect, bottom] = split(area);
    if !state.layout.fits(area) {
        too_small(state, buf, area);
        return map;
    }
    let values = values(input, &map);
    let view = input.view;
    Paragraph::new(title_line(state, view, title.width)).render(title, buf);
    for &(id, rect) in &map.panes {
        let ctx = pane_context(state, view, id);
        Pane {
            id,
            view,
            values: &values,
            ctx,
        }
        .render(rect, buf);
    }
    if let Some(at) = map.caption {
        presentation::draw_caption(state, view, at, buf);
    }
    let reason = refusal_band(state, bottom.width);
    if !reason.is_empty() {
        draw_refusal_band(state, reason, rect, buf);
    }
    Paragraph::new(bottom_line(state, bottom.width)).render(bottom, buf);
    if let Some(first) = state.help {
        crate::ui::help::draw(state, first, buf, rect);
    }
    map
}

/// The title bar for a frame `width` cells wide. The facts (mode, step,
/// clock, rules, isolation view) come in words when they fit, else in short
/// forms chosen on purpose (`3/6 · 0 ms · minikafka · RC`); the title then
/// gets what is left, cut at a word with `…`, or goes. Nothing is cut in
/// the middle of a word.
fn title_line(app: &ViewState, view: &Snapshot, width: u16) -> Line<'static> {
    let t = |k| app.lang.t(k);
    let width = usize::from(width);
    let mode = match app.shown {
        Shown::Playing => format!("▶ {}", t("mode_replay")),
        Shown::Replay => t("mode_replay").to_string(),
        Shown::Live => t("mode_live").to_string(),
        // A snapshot of a real cluster (`mk-tui observe`, docs/observe.md).
        Shown::Saved if !view.unavailable.is_empty() => t("mode_observed").to_string(),
        Shown::Saved => t("mode_saved").to_string(),
        Shown::Observing => t("mode_observed").to_string(),
    };
    // A failed refresh shows the last snapshot that answered (docs/observe.md "Live").
    let mode = if crate::session::observation::is_stale(view) {
        format!("{mode} {}", t("stale"))
    } else {
        mode
    };
    // The play speed, when it is not the recorded pace.
    let mode = match app.speed {
        Some(speed) if app.bar.replay => format!("{mode} ×{speed}"),
        _ => mode,
    };
    let isolation = app.isolation.name();
    // A cluster observed over the protocol has no engine clock to show.
    let ms = if view.lacks(field::CLOCK_MS) {
        "?".to_string()
    } else {
        format!("{} ms", view.clock_ms)
    };
    let rules = app.lang.rules_name(&view.rules);
    let long = format!(
        "│ {mode} │ {} {} │ {} {ms} │ {} {} │ {} {isolation} ",
        t("step"),
        view.step_label(),
        t("clock"),
        t("rules"),
        rules,
        t("isolation")
    );
    let short_isolation = t(match app.isolation {
        Isolation::ReadCommitted => "RC",
        Isolation::ReadUncommitted => "RU",
    });

    let medium = format!(
        "│ {mode} │ {} {} │ {ms} │ {} │ {short_isolation} ",
        t("step"),
        view.step_label(),
        rules
    );
    let short = format!(
        "│ {mode} │ {} │ {ms} │ {} │ {short_isolation} ",
        view.step_label(),
        rules
    );
    let w = |s: &str| Span::raw(s).width();
    // At a moment of death the banner takes the recording title's place
    // (the caption pane still names it): docs/dashboard.md.
    if view.before_recovery {
        let banner = if app.live_at_moment {
            format!(
                " ✝ {} · {}: {} ",
                t("moment_of_death"),
                t("space"),
                t("recovery")
            )
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
    // A title that starts with the program's name ("mk-tui demo
    // cluster") follows it with a space, not " · ", so the bar does not
    // read "mk-tui · mk-tui demo cluster".
    let (sep, title) = match view.title.strip_prefix("mk-tui") {
        Some(rest) if rest.is_empty() || rest.starts_with(' ') => (" ", rest.trim_start()),
        _ => (" · ", view.title.as_str()),
    };
    let head = |title: &str| {
        if title.is_empty() {
            " mk-tui ".to_string()
        } else {
            format!(" mk-tui{sep}{title} ")
        }
    };
    let full_head = head(title);
    for facts in [&long, &medium] {
        if w(&full_head) + w(facts) <= width {
            return Line::from(vec![
                Span::styled(full_head, app.theme.strong()),
                Span::raw(facts.clone()),
            ]);
        }
    }
    // A title of at least a few words, with the step still in words.
    let around = w(&format!(" mk-tui{sep} "));
    let room = width.saturating_sub(w(&medium) + around);
    let cut = cut_at_word(title, room);
    if w(&cut) >= 12 {
        return Line::from(vec![
            Span::styled(head(&cut), app.theme.strong()),
            Span::raw(medium),
        ]);
    }
    let room = width.saturating_sub(w(&short) + around);
    let cut = cut_at_word(title, room);
    Line::from(vec![
        Span::styled(head(&cut), app.theme.strong()),
        Span::raw(short),
    ])
}

/// `text` if it fits `room` cells, else its longest prefix ending at a word
/// that fits with `…` after it (nothing if not even one word does).
fn cut_at_word(text: &str, room: usize) -> String {
    let w = |s: &str| Span::raw(s).width();
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
fn bottom_line(app: &ViewState, width: u16) -> Line<'static> {
    if let Some(prompt) = app.prompt {
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
        // A refused prompt stays open and says why, as an error: after the
        // text when it fits, else in the band above ([`refusal_band`]),
        // and the line keeps only the way out.
        match &prompt.refusal {
            Some(_) if !refusal_band(app, width).is_empty() => {}
            Some(reason) => spans.push(Span::styled(
                format!("▏ ✗ {reason} ({})", app.lang.t("prompt_cancel")),
                status_style(app.theme, StatusKind::Error),
            )),
            None => {
                let used: usize = spans.iter().map(Span::width).sum();
                let room = usize::from(width).saturating_sub(used);
                if let Some(hint) = whole_words(app.lang.t("prompt_keys_hint"), room, 2) {
                    spans.push(Span::styled(format!("▏ {hint}"), app.theme.dim()));
                }
            }
        }
        return Line::from(spans);
    }
    status_and_keys(app, usize::from(width))
}

/// As many of `text`'s words as fit in `room` cells after `lead` more
/// (the `▏ ` before a hint); none when not even the first does. A key's
/// hint cut inside a word (`Enter=a` at 80x24, a new user's trial) told
/// nothing.
fn whole_words(text: &str, room: usize, lead: usize) -> Option<String> {
    let words: Vec<&str> = text.split(' ').collect();
    (1..=words.len())
        .rev()
        .map(|n| words[..n].join(" "))
        .find(|w| lead + crate::ui::wrap::width(w) <= room)
}

/// The open prompt's refusal as lines of its own, wrapped at words to a
/// frame `width` cells wide, when it does not fit on the prompt's line
/// after the text; none when it fits or there is none. At 80 columns a
/// reason naming the choices (`✗ unknown topic "nosuch": the topics are
/// …`) used to be cut after a few words (docs/dashboard.md "Refused
/// prompts").
fn refusal_band(app: &ViewState, width: u16) -> Vec<String> {
    let Some(prompt) = app.prompt else {
        return Vec::new();
    };
    let Some(reason) = &prompt.refusal else {
        return Vec::new();
    };
    let line = format!(
        " {} › {} ▏ ✗ {reason} ({})",
        prompt.label(app.lang),
        prompt.text,
        app.lang.t("prompt_cancel")
    );
    // The space before `▏` is the cursor's cell at the end of the text.
    if crate::ui::wrap::width(&line) <= usize::from(width) {
        return Vec::new();
    }
    // A column each side, and two more for the continuation lines' indent.
    crate::ui::wrap::wrap(
        &format!("✗ {reason} ({})", app.lang.t("prompt_cancel")),
        usize::from(width).saturating_sub(4),
    )
}

/// Draws the refusal's `lines` over the bottom rows of `body`, just above
/// the prompt: a rule, then the lines in the error colour. The panes are
/// not laid out again (their rows and scroll stay while the prompt is
/// open, and it is modal); at most the body's height is covered, the
/// last line kept cut with `…` when even that is too short.
fn draw_refusal_band(app: &ViewState, mut lines: Vec<String>, body: Rect, buf: &mut Buffer) {
    let room = usize::from(body.height.saturating_sub(1));
    if room == 0 {
        return;
    }
    if lines.len() > room {
        lines.truncate(room);
        if let Some(last) = lines.last_mut() {
            last.push('…');
        }
    }
    let h = lines.len() as u16 + 1;
    let area = Rect::new(body.x, body.bottom() - h, body.width, h);
    ratatui::widgets::Clear.render(area, buf);
    buf.set_style(area, app.theme.base());
    let error = status_style(app.theme, StatusKind::Error);
    let mut text = vec![Line::styled(
        "─".repeat(usize::from(body.width)),
        app.theme.dim(),
    )];
    text.extend(lines.into_iter().enumerate().map(|(i, l)| {
        // Continuation lines under the reason, not under the ✗.
        let l = if i == 0 { l } else { format!("  {l}") };
        Line::styled(format!(" {l}"), error)
    }));
    Paragraph::new(text).render(area, buf);
}

/// Keys the key bar always ends with: the way to help and out.
const PINNED_KEYS: [&str; 2] = ["?", "q"];

/// The status, then the key bar, in `width` cells, ending on a whole key
/// (docs/dashboard.md "The key bar"): `? help` and `q quit` always show,
/// at the end; the status comes first (at 80 columns the keys would hide
/// it) and gets what they leave, shortened at a word with `…`; the other
/// keys follow it in order, each whole or not at all.
fn status_and_keys(app: &ViewState, width: usize) -> Line<'static> {
    let entry = |key: &str, what: &'static str| {
        vec![
            Span::styled(format!(" {}", app.lang.key_name(key)), app.theme.strong()),
            Span::raw(format!(" {}", app.lang.t(what))),
        ]
    };
    let w = |spans: &[Span]| spans.iter().map(Span::width).sum::<usize>();
    let keys = key_bar(app.bar);
    // Observing live, `r` stays too: after a failed refresh the status
    // is long, and refreshing is what to do next (docs/observe.md "Live").
    let pinned = |k: &str| PINNED_KEYS.contains(&k) || (app.bar.observing && k == "r");
    let (pinned, others): (Vec<_>, Vec<_>) = keys.into_iter().partition(|(k, _)| pinned(k));
    let tail: Vec<Span<'static>> = pinned.iter().flat_map(|(k, l)| entry(k, l)).collect();
    let mut room = width.saturating_sub(w(&tail));
    let mut spans = Vec::new();
    if let Some(status) = app.status {
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

fn too_small(app: &ViewState, buf: &mut Buffer, area: Rect) {
    let (w, h, name) = (area.width, area.height, app.layout.name.as_str());
    let (cols, rows) = (app.layout.min_cols, app.layout.min_rows);
    let text = if app.lang.zh() {
        format!(
            "{}：{w}x{h}，“{name}”布局需要 {cols}x{rows}。请放大窗口，或按 q 退出。",
            app.lang.t("too_small")
        )
    } else {
        format!(
            "{}: {w}x{h} — the \"{name}\" layout needs {cols}x{rows}. Enlarge the window, or press q to quit.",
            app.lang.t("too_small")
        )
    };
    Paragraph::new(text)
        .wrap(Wrap { trim: true })
        .render(area, buf);
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
