//! Headless output (SPEC §5): `render` prints frames exactly as the live UI
//! draws them, as text or ANSI; `export` writes an asciicast v2 file from the
//! bytes the real crossterm backend emits, paced by `at_ms`, with an `"m"`
//! marker at each captioned step.

use std::io::Write;

use ratatui::backend::{CrosstermBackend, TestBackend};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};

use crate::session::Recording;
use crate::session::SessionError;
use crate::ui::app::{App, Msg};
use crate::ui::i18n::Lang;
use crate::ui::layout::Layout;
use crate::ui::theme::Theme;

/// How `render` prints a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The characters only, one line per row, trailing spaces trimmed.
    Text,
    /// The escape sequences the terminal backend writes for a full redraw.
    Ansi,
}

/// A buffer as plain text.
pub fn buffer_text(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let mut line = String::new();
        let mut skip = 0;
        for x in area.left()..area.right() {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let symbol = buf[(x, y)].symbol();
            skip = unicode_width(symbol).saturating_sub(1);
            line.push_str(symbol);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn unicode_width(s: &str) -> usize {
    ratatui::text::Span::raw(s).width()
}

/// The frame of `app` at its current step, drawn into a test backend (a
/// picture of the app: its map is not kept, see [`App::draw`]).
pub fn frame_buffer(app: &App, cols: u16, rows: u16) -> Buffer {
    let mut terminal =
        Terminal::new(TestBackend::new(cols, rows)).expect("a test backend always works");
    terminal
        .draw(|f| {
            crate::ui::frame::draw(&app.frame_input(), f.buffer_mut());
        })
        .expect("drawing into a test backend cannot fail");
    terminal.backend().buffer().clone()
}

/// A writer whose bytes can be taken out while the backend owns it.
#[derive(Clone, Default)]
struct Captured(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The real crossterm backend writing into memory: each draw yields the
/// bytes a terminal would receive (a diff against the previous frame, as
/// on a real screen).
struct AnsiTerminal {
    terminal: Terminal<CrosstermBackend<Captured>>,
    bytes: Captured,
}

impl AnsiTerminal {
    fn new(cols: u16, rows: u16) -> std::io::Result<Self> {
        let bytes = Captured::default();
        let backend = CrosstermBackend::new(bytes.clone());
        let terminal = Terminal::with_options(
            backend,
            TerminalOptions {
                viewport: Viewport::Fixed(Rect::new(0, 0, cols, rows)),
            },
        )?;
        Ok(Self { terminal, bytes })
    }

    fn draw(&mut self, app: &mut App) -> std::io::Result<Vec<u8>> {
        self.terminal.draw(|f| app.draw(f.buffer_mut()))?;
        Ok(std::mem::take(&mut *self.bytes.0.borrow_mut()))
    }
}

/// How a headless frame looks: the layout, the language and the theme
/// (`--layout`, `--lang`, `--theme`).
#[derive(Debug, Clone)]
pub struct Look {
    pub layout: Layout,
    pub lang: Lang,
    pub theme: Theme,
    /// Presentation mode (`render --present`).
    pub present: bool,
}

impl Look {
    /// `layout` and `lang` in the default (dark, coloured) theme.
    pub fn new(layout: Layout, lang: Lang) -> Self {
        Self {
            layout,
            lang,
            theme: Theme::colored(),
            present: false,
        }
    }
}

/// Frames of `recording` at `steps`, at `cols`x`rows`, in the default
/// theme ([`render_in`] picks one).
pub fn render(
    recording: Recording,
    steps: &[usize],
    cols: u16,
    rows: u16,
    format: Format,
    layout: Layout,
    lang: Lang,
) -> Result<Vec<String>, SessionError> {
    render_in(
        recording,
        steps,
        cols,
        rows,
        format,
        Look::new(layout, lang),
    )
}

/// Frames of `recording` at `steps`, at `cols`x`rows`, as `look` says.
pub fn render_in(
    recording: Recording,
    steps: &[usize],
    cols: u16,
    rows: u16,
    format: Format,
    look: Look,
) -> Result<Vec<String>, SessionError> {
    // Forward only: no checkpoints past step 0 (see `App::replay_every`).
    let mut app = App::replay_every(recording, usize::MAX, look.layout, look.lang, look.theme)?;
    app.presenting = look.present;
    frames_of(app, steps, cols, rows, format)
}

/// Frames of an observation recording at `steps` (docs/observe.md "Live"),
/// as `look` says: the replay's frames, drawn as `mk-tui replay` draws them.
pub fn render_observation_in(
    timeline: crate::session::observation::ObservationTimeline,
    steps: &[usize],
    cols: u16,
    rows: u16,
    format: Format,
    look: Look,
) -> Result<Vec<String>, SessionError> {
    let app = App::observation_replay(timeline, look.layout, look.lang, look.theme);
    frames_of(app, steps, cols, rows, format)
}

/// The frames of a replaying `app` at `steps`.
fn frames_of(
    mut app: App,
    steps: &[usize],
    cols: u16,
    rows: u16,
    format: Format,
) -> Result<Vec<String>, SessionError> {
    app.update(Msg::Resize(cols, rows))?;
    let mut frames = Vec::new();
    for &step in steps {
        app.goto_step(step)?;
        frames.push(match format {
            Format::Text => buffer_text(&frame_buffer(&app, cols, rows)),
            Format::Ansi => {
                let mut t = AnsiTerminal::new(cols, rows).map_err(SessionError::Write)?;
                String::from_utf8_lossy(&t.draw(&mut app).map_err(SessionError::Write)?)
                    .into_owned()
            }
        });
    }
    Ok(frames)
}

/// The frame of a saved state (`mk-tui render --state FILE.json`), drawn as
/// the dashboard draws the step it was saved at, in the default theme.
pub fn render_saved(
    snapshot: crate::session::Snapshot,
    cols: u16,
    rows: u16,
    format: Format,
    layout: Layout,
    lang: Lang,
) -> Result<String, SessionError> {
    render_saved_in(snapshot, cols, rows, format, Look::new(layout, lang))
}

/// [`render_saved`] as `look` says.
pub fn render_saved_in(
    snapshot: crate::session::Snapshot,
    cols: u16,
    rows: u16,
    format: Format,
    look: Look,
) -> Result<String, SessionError> {
    let mut app = App::saved(snapshot, look.layout, look.lang, look.theme);
    app.update(Msg::Resize(cols, rows))?;
    Ok(match format {
        Format::Text => buffer_text(&frame_buffer(&app, cols, rows)),
        Format::Ansi => {
            let mut t = AnsiTerminal::new(cols, rows).map_err(SessionError::Write)?;
            String::from_utf8_lossy(&t.draw(&mut app).map_err(SessionError::Write)?).into_owned()
        }
    })
}

/// How long a cast holds its first frame (the recording's title and the
/// state it starts from) before the first step plays.
pub const TITLE_HOLD_S: f64 = 2.0;

/// Writes the steps `from..=to` of `recording` as an asciicast v2 file to
/// `out`, in the default theme ([`export_cast_in`] picks one). The first
/// frame is the state at step `from` (step 0: the fresh cluster), held for
/// [`TITLE_HOLD_S`] under a marker with the recording's title; each later
/// step follows at its `at_ms` (relative to `from`'s), and a captioned step
/// adds a marker labelled "step N: caption".
pub fn export_cast(
    recording: Recording,
    cols: u16,
    rows: u16,
    layout: Layout,
    lang: Lang,
    (from, to): (usize, usize),
    out: &mut impl Write,
) -> Result<Vec<CastMarker>, SessionError> {
    export_cast_in(
        recording,
        cols,
        rows,
        Look::new(layout, lang),
        (from, to),
        out,
    )
}

/// [`export_cast`] as `look` says.
pub fn export_cast_in(
    recording: Recording,
    cols: u16,
    rows: u16,
    look: Look,
    (from, to): (usize, usize),
    out: &mut impl Write,
) -> Result<Vec<CastMarker>, SessionError> {
    let lang = look.lang;
    let steps: Vec<(u64, Option<String>)> = recording
        .steps
        .iter()
        .map(|s| {
            (
                s.at_ms,
                s.caption.as_ref().map(|c| c.text(lang.code()).to_string()),
            )
        })
        .collect();
    let title = recording.header.title_in(look.lang.code()).to_string();
    // Forward only: no checkpoints past step 0 (see `App::replay_every`).
    let app = App::replay_every(recording, usize::MAX, look.layout, look.lang, look.theme)?;
    write_cast(app, &title, &steps, (cols, rows), (from, to), out)
}

/// [`export_cast_in`] for an observation recording (docs/observe.md
/// "Live"): its refreshes at their `at_ms`, no captions.
pub fn export_observation_cast_in(
    timeline: crate::session::observation::ObservationTimeline,
    cols: u16,
    rows: u16,
    look: Look,
    (from, to): (usize, usize),
    out: &mut impl Write,
) -> Result<Vec<CastMarker>, SessionError> {
    let observation = timeline.observation();
    let steps: Vec<(u64, Option<String>)> = (1..=observation.len())
        .map(|n| (observation.at_ms(n), None))
        .collect();
    let title = observation.header.title.clone();
    let app = App::observation_replay(timeline, look.layout, look.lang, look.theme);
    write_cast(app, &title, &steps, (cols, rows), (from, to), out)
}

/// How long a cast shows the moment of death of its last step when that
/// step crashed the cluster (there is no next step to share a gap with).
pub const LAST_MOMENT_HOLD_S: f64 = 1.0;

/// A marker of a cast: its time, the step its frame shows, and its label.
#[derive(Debug, Clone, PartialEq)]
pub struct CastMarker {
    pub time: f64,
    pub step: usize,
    pub label: String,
}

/// Writes the cast of a replaying `app` from step `from` to `to`: `steps`
/// holds each step's `at_ms` and caption (step n at index n - 1). The key
/// bar names the player's keys, not the dashboard's. A step that crashed
/// the cluster plays as replay plays it (docs/dashboard.md "Crashes as
/// moments"): its moment of death at the step's time, with its marker,
/// then its recovery halfway to the next step. Returns the markers.
fn write_cast(
    mut app: App,
    title: &str,
    steps: &[(u64, Option<String>)],
    (cols, rows): (u16, u16),
    (from, to): (usize, usize),
    out: &mut impl Write,
) -> Result<Vec<CastMarker>, SessionError> {
    let last = steps.len();
    if from > to || to > last {
        return Err(SessionError::flag(
            format!("steps {from} to {to}"),
            format!("expected 0 <= from <= to <= {last}, the last step"),
        ));
    }
    app.player_keys = true;
    app.update(Msg::Resize(cols, rows))?;
    let mut terminal = AnsiTerminal::new(cols, rows).map_err(SessionError::Write)?;
    let io = SessionError::Write;
    let header = serde_json::json!({"version": 2, "width": cols, "height": rows, "title": title, "env": {"TERM": "xterm-256color"}});
    writeln!(out, "{header}").map_err(io)?;
    let mut markers = Vec::new();
    let mut emit = |t: f64, kind: &str, data: String| {
        writeln!(out, "{}", serde_json::json!([t, kind, data])).map_err(io)
    };
    // Clear the screen and draw the first frame; say what it is.
    app.goto_step(from)?;
    let first = terminal.draw(&mut app).map_err(io)?;
    emit(
        0.0,
        "o",
        format!("\u{1b}[2J{}", String::from_utf8_lossy(&first)),
    )?;
    // A cast that starts at step n > 0 opens on the caption the screen
    // shows there (the last one at or before it), as a later step's marker
    // names its caption; the title only where no caption came yet.
    let shown = steps[..from].iter().rev().find_map(|(_, c)| c.as_deref());
    let label = match (from, shown, title.is_empty()) {
        (0, _, false) => title.to_string(),
        (0, _, true) => "step 0".to_string(),
        (n, Some(caption), _) => format!("step {n}: {caption}"),
        (n, None, false) => format!("step {n}: {title}"),
        (n, None, true) => format!("step {n}"),
    };
    emit(0.0, "m", label.clone())?;
    markers.push(CastMarker {
        time: 0.0,
        step: from,
        label,
    });
    let start_ms = from.checked_sub(1).map_or(0, |i| steps[i].0);
    let time_of = |at_ms: u64| TITLE_HOLD_S + at_ms.saturating_sub(start_ms) as f64 / 1000.0;
    for (i, (at_ms, caption)) in steps.iter().enumerate().take(to).skip(from) {
        // Forward one step, as the replay's space does: onto the moment
        // of death first if the step crashed the cluster.
        app.update(Msg::Command(crate::ui::keys::KeyCommand::NextStep))?;
        let t = time_of(*at_ms);
        let bytes = terminal.draw(&mut app).map_err(io)?;
        emit(t, "o", String::from_utf8_lossy(&bytes).into_owned())?;
        if let Some(caption) = caption {
            let label = format!("step {}: {caption}", i + 1);
            emit(t, "m", label.clone())?;
            markers.push(CastMarker {
                time: t,
                step: i + 1,
                label,
            });
        }
        if app.at_moment() {
            let hold = steps
                .get(i + 1)
                .map_or(LAST_MOMENT_HOLD_S, |(next, _)| (time_of(*next) - t) / 2.0);
            app.update(Msg::Command(crate::ui::keys::KeyCommand::NextStep))?;
            let bytes = terminal.draw(&mut app).map_err(io)?;
            emit(t + hold, "o", String::from_utf8_lossy(&bytes).into_owned())?;
        }
    }
    Ok(markers)
}
