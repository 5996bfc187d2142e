//! How much of a frame is drawn on: its "ink" (docs/dashboard.md "Ink").
//!
//! A cell is inked when its symbol is not blank (a space or nothing), when
//! it is covered by the wide character of the cell before it (the second
//! column of a CJK character), or when its background differs from the
//! theme's ground (a reversed or highlighted blank is drawn on too). A
//! frame's ink is its inked cells over all its cells. Presentation mode is
//! measured by it, so a projector shows a screen that is used, not a box
//! of blank rows.

use ratatui::buffer::Buffer;
use ratatui::style::Color;

use crate::ui::theme::Theme;

/// A frame's inked cells out of its cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ink {
    pub inked: usize,
    pub cells: usize,
}

impl Ink {
    /// The inked share, from 0 to 1 (0 for an empty buffer).
    pub fn share(self) -> f64 {
        if self.cells == 0 {
            0.0
        } else {
            self.inked as f64 / self.cells as f64
        }
    }
}

/// The ink of `buf`, drawn with `theme` (whose ground is the background
/// that does not count).
pub fn ink(buf: &Buffer, theme: Theme) -> Ink {
    let ground = theme.base().bg.unwrap_or(Color::Reset);
    let area = buf.area;
    let mut inked = 0;
    for y in area.top()..area.bottom() {
        let mut covered = 0usize;
        for x in area.left()..area.right() {
            let cell = &buf[(x, y)];
            let symbol = cell.symbol();
            let drawn = !symbol.trim().is_empty() || covered > 0 || cell.bg != ground;
            covered = covered.saturating_sub(1);
            if !symbol.trim().is_empty() {
                covered = ratatui::text::Span::raw(symbol).width().saturating_sub(1);
            }
            if drawn {
                inked += 1;
            }
        }
    }
    Ink {
        inked,
        cells: usize::from(area.width) * usize::from(area.height),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use ratatui::style::Style;

    #[test]
    fn symbols_wide_characters_and_backgrounds_count() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 10, 2));
        let theme = Theme::colored();
        assert_eq!(ink(&buf, theme).inked, 0);
        buf.set_string(0, 0, "ab c", Style::new());
        assert_eq!(ink(&buf, theme).inked, 3, "the space between is blank");
        buf.set_string(0, 1, "分", Style::new());
        assert_eq!(ink(&buf, theme).inked, 5, "a wide character covers two");
        buf[(9, 1)].set_bg(Color::Blue);
        assert_eq!(ink(&buf, theme).inked, 6, "a coloured blank is drawn on");
        assert_eq!(ink(&buf, theme).cells, 20);
        assert!((ink(&buf, theme).share() - 0.3).abs() < 1e-9);
    }

    #[test]
    fn the_ground_of_a_light_theme_is_not_ink() {
        let theme = Theme::of(crate::ui::theme::Palette::Light);
        let mut buf = Buffer::empty(Rect::new(0, 0, 4, 1));
        buf.set_style(buf.area, theme.base());
        assert_eq!(ink(&buf, theme).inked, 0);
        buf[(0, 0)].set_bg(Color::Black);
        assert_eq!(ink(&buf, theme).inked, 1);
    }
}
