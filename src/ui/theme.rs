//! Colours and glyphs (SPEC §6): colours carry meaning, and every meaning also
//! has a glyph or a label, so `NO_COLOR` loses nothing.
//!
//! Three palettes (`--theme`, docs/dashboard.md "Themes"):
//!
//! - `dark` (the default): the terminal's own colours, ANSI colours on top;
//!   what the dashboard always drew.
//! - `light`: black text on a white ground that the frame paints itself, so
//!   the frame looks the same in a light terminal, a dark one and a cast
//!   player; borders are black and every colour is a dark 256-colour shade
//!   (ANSI yellow, cyan and grey vanish on white).
//! - `high-contrast`: white on a black ground painted by the frame, bright
//!   colours, everything bold, and thick borders on the focused pane, for a
//!   washed-out projector.
//!
//! With `NO_COLOR` no palette paints anything (no ground, no colour); the
//! modifiers (bold, italic, struck through, reversed) and the glyphs stay.

use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::BorderType;

use crate::session::snapshot::Fate;

/// The palette `--theme` picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Palette {
    #[default]
    Dark,
    Light,
    HighContrast,
}

impl Palette {
    /// Every palette, in the order the docs list them.
    pub const ALL: [Palette; 3] = [Palette::Dark, Palette::Light, Palette::HighContrast];

    /// The name `--theme` takes.
    pub fn name(self) -> &'static str {
        match self {
            Palette::Dark => "dark",
            Palette::Light => "light",
            Palette::HighContrast => "high-contrast",
        }
    }
}

impl std::str::FromStr for Palette {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                format!("unknown theme {s:?}: expected \"dark\", \"light\" or \"high-contrast\"")
            })
    }
}

/// The styles of one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// False under `NO_COLOR`: modifiers only.
    pub color: bool,
    pub palette: Palette,
}

impl Default for Theme {
    /// The dark palette with colours.
    fn default() -> Self {
        Self::colored()
    }
}

/// Dark 256-colour shades that read on white (the `light` palette).
mod light {
    use ratatui::style::Color;
    pub const GREEN: Color = Color::Indexed(28);
    pub const RED: Color = Color::Indexed(160);
    pub const ORANGE: Color = Color::Indexed(130);
    pub const GOLD: Color = Color::Indexed(136);
    pub const TEAL: Color = Color::Indexed(30);
    pub const GREY: Color = Color::Indexed(243);
    pub const ROSE: Color = Color::Indexed(125);
    pub const PURPLE: Color = Color::Indexed(90);
    pub const VIOLET: Color = Color::Indexed(127);
    pub const BLUE: Color = Color::Indexed(25);
    /// The changed-mark: a loud orange, apart from the fates' shades.
    pub const FLAME: Color = Color::Indexed(166);
    /// The ground the frame paints: xterm's white (231), not ANSI 15,
    /// which some light terminal themes map to a grey.
    pub const GROUND: Color = Color::Indexed(231);
    pub const INK: Color = Color::Indexed(16);
}

impl Theme {
    /// The palette `palette`, with colours unless the `NO_COLOR`
    /// convention asks for none.
    pub fn from_env(palette: Palette) -> Self {
        Self {
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
            palette,
        }
    }

    /// The dark palette with colours (tests and renders pick explicitly).
    pub fn colored() -> Self {
        Self::of(Palette::Dark)
    }

    /// `palette` with colours.
    pub fn of(palette: Palette) -> Self {
        Self {
            color: true,
            palette,
        }
    }

    /// No colours at all (`NO_COLOR`), dark palette.
    pub fn plain() -> Self {
        Self {
            color: false,
            palette: Palette::Dark,
        }
    }

    fn high_contrast(&self) -> bool {
        self.palette == Palette::HighContrast
    }

    /// Bold in the high-contrast palette, nothing otherwise.
    fn weight(&self) -> Style {
        if self.high_contrast() {
            Style::new().add_modifier(Modifier::BOLD)
        } else {
            Style::new()
        }
    }

    /// The colour for the dark, light and high-contrast palettes.
    fn fg3(&self, dark: Color, light: Color, high: Color) -> Style {
        let style = self.weight();
        if !self.color {
            return style;
        }
        style.fg(match self.palette {
            Palette::Dark => dark,
            Palette::Light => light,
            Palette::HighContrast => high,
        })
    }

    /// The frame's ground: what every cell is painted with before anything
    /// is drawn. The dark palette keeps the terminal's own colours.
    pub fn base(&self) -> Style {
        match (self.color, self.palette) {
            (false, _) | (true, Palette::Dark) => Style::new(),
            (true, Palette::Light) => Style::new().fg(light::INK).bg(light::GROUND),
            (true, Palette::HighContrast) => Style::new().fg(Color::White).bg(Color::Black),
        }
    }

    /// The colour of a batch's fate (the table in `docs/dashboard.md`).
    pub fn fate(&self, fate: Fate) -> Style {
        match fate {
            Fate::Committed => self.fg3(Color::Green, light::GREEN, Color::LightGreen),
            Fate::Aborted => self
                .fg3(Color::Red, light::RED, Color::LightRed)
                .add_modifier(Modifier::CROSSED_OUT),
            Fate::Ongoing => self.fg3(Color::Yellow, light::ORANGE, Color::LightYellow),
            Fate::Decided => self
                .fg3(Color::LightYellow, light::GOLD, Color::Indexed(208))
                .add_modifier(Modifier::ITALIC),
            Fate::HeldBack => self.fg3(Color::Cyan, light::TEAL, Color::LightCyan),
            Fate::AboveHighWatermark => self.fg3(Color::DarkGray, light::GREY, Color::Gray),
            Fate::Orphaned => {
                let style = self.fg3(Color::LightRed, light::ROSE, Color::LightMagenta);
                // Dim fades to nothing on white and on a projector.
                if self.palette == Palette::Dark {
                    style.add_modifier(Modifier::DIM)
                } else {
                    style.add_modifier(Modifier::UNDERLINED)
                }
            }
            Fate::Control => self.fg3(Color::Magenta, light::PURPLE, Color::LightBlue),
        }
    }

    /// The glyph that says the same as the colour.
    pub fn fate_glyph(fate: Fate) -> &'static str {
        match fate {
            Fate::Committed => "✓",
            Fate::Aborted => "✗",
            Fate::Ongoing => "…",
            // Not ⧗ (U+29D7): DejaVu Sans Mono, the usual fallback
            // monospace font, has no glyph for it (docs/dashboard.md).
            Fate::Decided => "◐",
            Fate::HeldBack => "‖",
            Fate::AboveHighWatermark => "▵",
            Fate::Orphaned => "?",
            Fate::Control => "◆",
        }
    }

    /// A replica's batch the leader does not hold (the log pane): a
    /// divergent tail that the replica's next fetch truncates (E6). Bold
    /// and underlined in every palette, so it is told from every fate
    /// without colour too.
    pub fn divergent(&self) -> Style {
        self.fg3(Color::LightRed, Color::Indexed(161), Color::Indexed(203))
            .add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
    }

    /// The glyph of a divergent batch (see [`Theme::divergent`]).
    pub const DIVERGENT_GLYPH: &'static str = "≠";

    /// An offset whose record key compaction removed (the log pane, E16):
    /// dim and crossed out, so it reads as gone without colour too.
    pub fn compacted(&self) -> Style {
        self.dim().add_modifier(Modifier::CROSSED_OUT)
    }

    /// The glyph of a compacted-away offset.
    pub const COMPACTED_GLYPH: &'static str = "✂";

    /// A tombstone (a keyed record with a null value, E16): a colour of its
    /// own, and italic for `NO_COLOR`.
    pub fn tombstone(&self) -> Style {
        self.fg3(Color::LightBlue, light::BLUE, Color::LightCyan)
            .add_modifier(Modifier::ITALIC)
    }

    /// The glyph before a tombstone's label.
    pub const TOMBSTONE_GLYPH: &'static str = "†";

    /// Borders: the focused pane stands out. ANSI 7 (grey) is the dark
    /// palette's only: it vanishes on white.
    pub fn border(&self, focused: bool) -> Style {
        if focused {
            self.fg3(Color::Cyan, light::BLUE, Color::LightYellow)
                .add_modifier(Modifier::BOLD)
        } else {
            self.fg3(Color::Gray, light::INK, Color::White)
        }
    }

    /// A pane's title, on its top border.
    pub fn title(&self, focused: bool) -> Style {
        let style = self.border(focused).add_modifier(Modifier::BOLD);
        // The dark palette's unfocused title keeps the terminal's text
        // colour, as it always did.
        if !focused && self.palette == Palette::Dark {
            Style::new().add_modifier(Modifier::BOLD)
        } else {
            style
        }
    }

    /// The border lines: thick around the focused pane in high contrast,
    /// and under `NO_COLOR`, where the focused border's colour is gone and
    /// the focus would otherwise be invisible.
    pub fn border_type(&self, focused: bool) -> BorderType {
        if focused && (self.high_contrast() || !self.color) {
            BorderType::Thick
        } else {
            BorderType::Plain
        }
    }

    /// Good news (in sync, ok).
    pub fn good(&self) -> Style {
        self.fg3(Color::Green, light::GREEN, Color::LightGreen)
    }

    /// Bad news (out of sync, error).
    pub fn bad(&self) -> Style {
        self.fg3(Color::Red, light::RED, Color::LightRed)
    }

    /// The mark of what the last step changed (issue 13): a glyph in the
    /// gutter, so `NO_COLOR` keeps it, and this style on the changed row.
    pub const CHANGED_GLYPH: &'static str = "▸";

    /// The style added to what the last step changed.
    pub fn changed(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    /// The style of the changed-mark glyph itself.
    pub fn changed_mark(&self) -> Style {
        self.fg3(Color::LightYellow, light::FLAME, Color::LightYellow)
            .add_modifier(Modifier::BOLD)
    }

    /// A crash or tear and what recovery did: news of its own kind.
    pub fn recovered(&self) -> Style {
        self.fg3(Color::LightMagenta, light::VIOLET, Color::LightMagenta)
            .add_modifier(Modifier::BOLD)
    }

    /// Something waiting (pending, open).
    pub fn waiting(&self) -> Style {
        self.fg3(Color::Yellow, light::ORANGE, Color::LightYellow)
    }

    /// A producer's batch filling in its accumulator (E17): not sent yet,
    /// not waiting on a broker either.
    pub fn accumulating(&self) -> Style {
        self.fg3(Color::Cyan, light::TEAL, Color::LightCyan)
    }

    /// A warning that must not be missed (a fault armed): the waiting
    /// colour, bold and reversed, so it stands out under `NO_COLOR` too.
    pub fn warning(&self) -> Style {
        self.waiting()
            .add_modifier(Modifier::BOLD | Modifier::REVERSED)
    }

    /// Less important text: dark grey on the terminal's ground, a grey that
    /// reads on white, light grey (never dark) in high contrast.
    pub fn dim(&self) -> Style {
        if !self.color {
            return Style::new();
        }
        match self.palette {
            Palette::Dark => Style::new().fg(Color::DarkGray),
            Palette::Light => Style::new().fg(light::GREY),
            Palette::HighContrast => Style::new().fg(Color::Gray),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_colour_the_focused_pane_has_a_thick_border() {
        let plain = Theme::plain();
        assert_eq!(plain.border_type(true), BorderType::Thick);
        assert_eq!(plain.border_type(false), BorderType::Plain);
        // With colour the dark palette tells the focus by colour.
        assert_eq!(Theme::colored().border_type(true), BorderType::Plain);
        assert_ne!(
            Theme::colored().border(true),
            Theme::colored().border(false)
        );
    }

    /// The fates' glyphs are all drawn by DejaVu Sans Mono, the usual
    /// fallback monospace font: these are the ones `fc-query` found in
    /// `DejaVuSansMono.ttf` (docs/dashboard.md "Fates"); `⧗`, which it
    /// lacks, is not among them.
    #[test]
    fn every_fate_glyph_is_in_dejavu_sans_mono() {
        const IN_DEJAVU_SANS_MONO: &str = "✓✗…◐‖▵?◆";
        for fate in FATES {
            let glyph = Theme::fate_glyph(fate);
            assert!(
                glyph.chars().count() == 1 && IN_DEJAVU_SANS_MONO.contains(glyph),
                "{fate:?}: {glyph}"
            );
        }
        assert!(!IN_DEJAVU_SANS_MONO.contains('⧗'));
    }

    const FATES: [Fate; 8] = [
        Fate::Committed,
        Fate::Aborted,
        Fate::Ongoing,
        Fate::Decided,
        Fate::HeldBack,
        Fate::AboveHighWatermark,
        Fate::Orphaned,
        Fate::Control,
    ];

    #[test]
    fn themes_parse_by_name() {
        for p in Palette::ALL {
            assert_eq!(p.name().parse::<Palette>(), Ok(p));
        }
        let e = "solarized".parse::<Palette>().unwrap_err();
        assert!(
            e.contains("\"solarized\"") && e.contains("high-contrast"),
            "{e}"
        );
    }

    #[test]
    fn every_fate_has_its_own_colour_in_every_palette() {
        for p in Palette::ALL {
            let theme = Theme::of(p);
            let colours: std::collections::BTreeSet<String> = FATES
                .iter()
                .map(|f| format!("{:?}", theme.fate(*f).fg.expect("coloured")))
                .collect();
            assert_eq!(colours.len(), FATES.len(), "{p:?}: {colours:?}");
        }
    }

    #[test]
    fn light_avoids_colours_that_vanish_on_white() {
        let theme = Theme::of(Palette::Light);
        let faint = [
            Color::Gray,
            Color::White,
            Color::Yellow,
            Color::LightYellow,
            Color::Cyan,
            Color::LightCyan,
            Color::DarkGray,
        ];
        let mut styles: Vec<Style> = FATES.iter().map(|f| theme.fate(*f)).collect();
        styles.extend([
            theme.border(false),
            theme.border(true),
            theme.title(false),
            theme.good(),
            theme.bad(),
            theme.waiting(),
            theme.recovered(),
            theme.dim(),
            theme.changed_mark(),
        ]);
        for s in styles {
            let fg = s.fg.expect("every light style names its colour");
            assert!(!faint.contains(&fg), "{fg:?} on white");
        }
        assert_eq!(theme.base().bg, Some(light::GROUND));
    }

    #[test]
    fn high_contrast_is_bold_bright_and_thick() {
        let theme = Theme::of(Palette::HighContrast);
        for f in FATES {
            let s = theme.fate(f);
            assert!(s.add_modifier.contains(Modifier::BOLD), "{f:?}");
            assert_ne!(s.fg, Some(Color::DarkGray), "{f:?}");
        }
        assert_eq!(theme.border_type(true), BorderType::Thick);
        assert_eq!(theme.border_type(false), BorderType::Plain);
        assert_eq!(theme.base().bg, Some(Color::Black));
        assert_eq!(Theme::colored().border_type(true), BorderType::Plain);
    }

    #[test]
    fn no_color_keeps_modifiers_only() {
        for p in Palette::ALL {
            let theme = Theme {
                color: false,
                palette: p,
            };
            assert_eq!(theme.base(), Style::new());
            for f in FATES {
                assert_eq!(theme.fate(f).fg, None);
            }
            assert_eq!(theme.border(false).fg, None);
        }
        assert!(
            Theme::plain()
                .fate(Fate::Aborted)
                .add_modifier
                .contains(Modifier::CROSSED_OUT)
        );
    }
}
