//! Colours and glyphs (SPEC §6): colours carry meaning, and every meaning also
//! has a glyph or a label, so `NO_COLOR` loses nothing.

use ratatui::style::{Color, Modifier, Style};

use crate::ui::view::BatchStatus;

/// The styles of one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
}

impl Theme {
    /// Colours unless the `NO_COLOR` convention asks for none.
    pub fn from_env() -> Self {
        Self {
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    /// A theme with colours (tests and renders pick explicitly).
    pub fn colored() -> Self {
        Self { color: true }
    }

    fn fg(&self, color: Color) -> Style {
        if self.color {
            Style::new().fg(color)
        } else {
            Style::new()
        }
    }

    /// The style of a batch by status.
    pub fn batch(&self, status: BatchStatus) -> Style {
        match status {
            BatchStatus::Committed => self.fg(Color::Green),
            BatchStatus::Aborted => self.fg(Color::Red).add_modifier(Modifier::CROSSED_OUT),
            BatchStatus::Open => self.fg(Color::Yellow),
            BatchStatus::Control => self.fg(Color::Magenta),
            BatchStatus::AboveHighWatermark => self.fg(Color::DarkGray),
            BatchStatus::Visible => self.fg(Color::Cyan),
        }
    }

    /// The glyph that says the same as the colour.
    pub fn batch_glyph(status: BatchStatus) -> &'static str {
        match status {
            BatchStatus::Committed => "✓",
            BatchStatus::Aborted => "✗",
            BatchStatus::Open => "…",
            BatchStatus::Control => "◆",
            BatchStatus::AboveHighWatermark => "↑",
            BatchStatus::Visible => "●",
        }
    }

    /// Borders: the focused pane stands out.
    pub fn border(&self, focused: bool) -> Style {
        if focused {
            self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
        } else {
            self.fg(Color::Gray)
        }
    }

    /// Good news (in sync, ok).
    pub fn good(&self) -> Style {
        self.fg(Color::Green)
    }

    /// Bad news (out of sync, error).
    pub fn bad(&self) -> Style {
        self.fg(Color::Red)
    }

    /// Something waiting (pending, open).
    pub fn waiting(&self) -> Style {
        self.fg(Color::Yellow)
    }

    /// Less important text.
    pub fn dim(&self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new()
        }
    }

    /// Headings and key names.
    pub fn strong(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    /// The selected row.
    pub fn selected(&self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }
}
