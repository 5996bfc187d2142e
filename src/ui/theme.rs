//! Colours and glyphs (SPEC §6): colours carry meaning, and every meaning also
//! has a glyph or a label, so `NO_COLOR` loses nothing.

use ratatui::style::{Color, Modifier, Style};

use crate::session::snapshot::Fate;

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

    /// The colour of a batch's fate (the table in `docs/dashboard.md`).
    pub fn fate(&self, fate: Fate) -> Style {
        match fate {
            Fate::Committed => self.fg(Color::Green),
            Fate::Aborted => self.fg(Color::Red).add_modifier(Modifier::CROSSED_OUT),
            Fate::Ongoing => self.fg(Color::Yellow),
            Fate::Decided => self.fg(Color::LightYellow).add_modifier(Modifier::ITALIC),
            Fate::HeldBack => self.fg(Color::Cyan),
            Fate::AboveHighWatermark => self.fg(Color::DarkGray),
            Fate::Orphaned => self.fg(Color::LightRed).add_modifier(Modifier::DIM),
            Fate::Control => self.fg(Color::Magenta),
        }
    }

    /// The glyph that says the same as the colour.
    pub fn fate_glyph(fate: Fate) -> &'static str {
        match fate {
            Fate::Committed => "✓",
            Fate::Aborted => "✗",
            Fate::Ongoing => "…",
            Fate::Decided => "⧗",
            Fate::HeldBack => "‖",
            Fate::AboveHighWatermark => "↑",
            Fate::Orphaned => "?",
            Fate::Control => "◆",
        }
    }

    /// A replica's batch the leader does not hold (the log pane): a
    /// divergent tail that the replica's next fetch truncates (E6). Bold
    /// and underlined, so it is told from every fate without colour too.
    pub fn divergent(&self) -> Style {
        self.fg(Color::LightRed)
            .add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
    }

    /// The glyph of a divergent batch (see [`Theme::divergent`]).
    pub const DIVERGENT_GLYPH: &'static str = "≠";

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

    /// A crash or tear and what recovery did: news of its own kind.
    pub fn recovered(&self) -> Style {
        self.fg(Color::LightMagenta).add_modifier(Modifier::BOLD)
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
