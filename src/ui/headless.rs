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
use crate::ui::app::{App, Msg};
use crate::ui::frame::draw;
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

/// The frame of `app` at its current step, drawn into a test backend.
pub fn frame_buffer(app: &App, cols: u16, rows: u16) -> Buffer {
    let mut terminal =
        Terminal::new(TestBackend::new(cols, rows)).expect("a test backend always works");
    let view = app.snapshot_for(Rect::new(0, 0, cols, rows));
    terminal
        .draw(|f| draw(app, &view, f))
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

    fn draw(&mut self, app: &App) -> std::io::Result<Vec<u8>> {
        let view = app.snapshot_for(self.terminal.get_frame().area());
        self.terminal.draw(|f| draw(app, &view, f))?;
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
}

impl Look {
    /// `layout` and `lang` in the default (dark, coloured) theme.
    pub fn new(layout: Layout, lang: Lang) -> Self {
        Self {
            layout,
            lang,
            theme: Theme::colored(),
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
) -> Result<Vec<String>, String> {
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
) -> Result<Vec<String>, String> {
    let mut app = App::replay(recording, look.layout, look.lang, look.theme)?;
    app.update(Msg::Resize(cols, rows))?;
    let mut frames = Vec::new();
    for &step in steps {
        app.goto_step(step)?;
        frames.push(match format {
            Format::Text => buffer_text(&frame_buffer(&app, cols, rows)),
            Format::Ansi => {
                let mut t = AnsiTerminal::new(cols, rows).map_err(|e| e.to_string())?;
                String::from_utf8_lossy(&t.draw(&app).map_err(|e| e.to_string())?).into_owned()
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
) -> Result<String, String> {
    render_saved_in(snapshot, cols, rows, format, Look::new(layout, lang))
}

/// [`render_saved`] as `look` says.
pub fn render_saved_in(
    snapshot: crate::session::Snapshot,
    cols: u16,
    rows: u16,
    format: Format,
    look: Look,
) -> Result<String, String> {
    let mut app = App::saved(snapshot, look.layout, look.lang, look.theme);
    app.update(Msg::Resize(cols, rows))?;
    Ok(match format {
        Format::Text => buffer_text(&frame_buffer(&app, cols, rows)),
        Format::Ansi => {
            let mut t = AnsiTerminal::new(cols, rows).map_err(|e| e.to_string())?;
            String::from_utf8_lossy(&t.draw(&app).map_err(|e| e.to_string())?).into_owned()
        }
    })
}

/// Writes `recording` as an asciicast v2 file to `out`, in the default
/// theme.
pub fn export_cast(
    recording: Recording,
    cols: u16,
    rows: u16,
    layout: Layout,
    lang: Lang,
    out: &mut impl Write,
) -> Result<(), String> {
    export_cast_in(recording, cols, rows, Look::new(layout, lang), out)
}

/// [`export_cast`] as `look` says.
pub fn export_cast_in(
    recording: Recording,
    cols: u16,
    rows: u16,
    look: Look,
    out: &mut impl Write,
) -> Result<(), String> {
    let lang = look.lang;
    let steps = recording.steps.clone();
    let title = recording.header.title.clone();
    let mut app = App::replay(recording, look.layout, look.lang, look.theme)?;
    app.update(Msg::Resize(cols, rows))?;
    let mut terminal = AnsiTerminal::new(cols, rows).map_err(|e| e.to_string())?;
    let io = |e: std::io::Error| e.to_string();
    let header = serde_json::json!({"version": 2, "width": cols, "height": rows, "title": title, "env": {"TERM": "xterm-256color"}});
    writeln!(out, "{header}").map_err(io)?;
    let mut emit = |t: f64, kind: &str, data: String| {
        writeln!(out, "{}", serde_json::json!([t, kind, data])).map_err(io)
    };
    // Clear the screen and draw step 0.
    let first = terminal.draw(&app).map_err(io)?;
    emit(
        0.0,
        "o",
        format!("\u{1b}[2J{}", String::from_utf8_lossy(&first)),
    )?;
    for (i, step) in steps.iter().enumerate() {
        app.goto_step(i + 1)?;
        let t = step.at_ms as f64 / 1000.0;
        let bytes = terminal.draw(&app).map_err(io)?;
        emit(t, "o", String::from_utf8_lossy(&bytes).into_owned())?;
        if let Some(caption) = &step.caption {
            emit(t, "m", caption.text(lang.code()).to_string())?;
        }
    }
    Ok(())
}
