//! A block font for presentation mode's headline: each character is a 3x6
//! bitmap (capitals and digits 5 high, lower case 4 high with ascenders
//! and descenders) drawn with half blocks, so one pixel is half a cell
//! high and a cell wide, square on a terminal, and a letter stands three
//! rows tall. At scale 2 a pixel is two cells wide and a whole cell high,
//! and a letter six rows. Hand drawn here because the crates that draw big
//! text bring a font of 8x8 pixels, too wide for a headline of a sentence
//! at 160 columns.
//!
//! Only printable ASCII (and a few look-alikes, e.g. `→` as `->`) has a
//! glyph; text with any other character (Chinese, `≠`) has none, and the
//! caller sets it in bold text instead.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

/// A glyph's rows, top first; bit 4 is the left pixel, bit 1 the right.
type Glyph = [u8; 6];

/// Columns and pixel rows of a glyph, and the columns between two.
const WIDTH: u16 = 3;
const HEIGHT: u16 = 6;
const GAP: u16 = 1;

fn glyph(c: char) -> Option<Glyph> {
    Some(match c {
        ' ' => [0, 0, 0, 0, 0, 0],
        'A' => [2, 5, 7, 5, 5, 0],
        'B' => [6, 5, 6, 5, 6, 0],
        'C' => [3, 4, 4, 4, 3, 0],
        'D' => [6, 5, 5, 5, 6, 0],
        'E' => [7, 4, 6, 4, 7, 0],
        'F' => [7, 4, 6, 4, 4, 0],
        'G' => [3, 4, 5, 5, 3, 0],
        'H' => [5, 5, 7, 5, 5, 0],
        'I' => [7, 2, 2, 2, 7, 0],
        'J' => [1, 1, 1, 5, 2, 0],
        'K' => [5, 5, 6, 5, 5, 0],
        'L' => [4, 4, 4, 4, 7, 0],
        'M' => [5, 7, 7, 5, 5, 0],
        'N' => [6, 5, 5, 5, 5, 0],
        'O' => [2, 5, 5, 5, 2, 0],
        'P' => [6, 5, 6, 4, 4, 0],
        'Q' => [2, 5, 5, 7, 3, 0],
        'R' => [6, 5, 6, 5, 5, 0],
        'S' => [3, 4, 2, 1, 6, 0],
        'T' => [7, 2, 2, 2, 2, 0],
        'U' => [5, 5, 5, 5, 7, 0],
        'V' => [5, 5, 5, 2, 2, 0],
        'W' => [5, 5, 7, 7, 5, 0],
        'X' => [5, 5, 2, 5, 5, 0],
        'Y' => [5, 5, 2, 2, 2, 0],
        'Z' => [7, 1, 2, 4, 7, 0],
        'a' => [0, 6, 3, 5, 3, 0],
        'b' => [4, 4, 6, 5, 6, 0],
        'c' => [0, 3, 4, 4, 3, 0],
        'd' => [1, 1, 3, 5, 3, 0],
        'e' => [0, 2, 5, 6, 3, 0],
        'f' => [1, 2, 7, 2, 2, 0],
        'g' => [0, 3, 5, 3, 1, 6],
        'h' => [4, 4, 6, 5, 5, 0],
        'i' => [2, 0, 2, 2, 2, 0],
        'j' => [1, 0, 1, 1, 5, 2],
        'k' => [4, 5, 6, 6, 5, 0],
        'l' => [6, 2, 2, 2, 7, 0],
        'm' => [0, 5, 7, 7, 5, 0],
        'n' => [0, 6, 5, 5, 5, 0],
        'o' => [0, 2, 5, 5, 2, 0],
        'p' => [0, 6, 5, 5, 6, 4],
        'q' => [0, 3, 5, 5, 3, 1],
        'r' => [0, 5, 6, 4, 4, 0],
        's' => [0, 3, 6, 1, 6, 0],
        't' => [2, 7, 2, 2, 1, 0],
        'u' => [0, 5, 5, 5, 3, 0],
        'v' => [0, 5, 5, 5, 2, 0],
        'w' => [0, 5, 5, 7, 5, 0],
        'x' => [0, 5, 2, 2, 5, 0],
        'y' => [0, 5, 5, 3, 1, 6],
        'z' => [0, 7, 1, 2, 7, 0],
        '0' => [3, 5, 5, 5, 6, 0],
        '1' => [2, 6, 2, 2, 7, 0],
        '2' => [6, 1, 2, 4, 7, 0],
        '3' => [6, 1, 2, 1, 6, 0],
        '4' => [5, 5, 7, 1, 1, 0],
        '5' => [7, 4, 6, 1, 6, 0],
        '6' => [3, 4, 7, 5, 7, 0],
        '7' => [7, 1, 2, 4, 4, 0],
        '8' => [7, 5, 7, 5, 7, 0],
        '9' => [7, 5, 7, 1, 6, 0],
        '.' => [0, 0, 0, 0, 2, 0],
        ',' => [0, 0, 0, 0, 2, 4],
        ':' => [0, 2, 0, 0, 2, 0],
        ';' => [0, 2, 0, 0, 2, 4],
        '!' => [2, 2, 2, 0, 2, 0],
        '?' => [6, 1, 2, 0, 2, 0],
        '\'' => [2, 2, 0, 0, 0, 0],
        '"' => [5, 5, 0, 0, 0, 0],
        '`' => [4, 2, 0, 0, 0, 0],
        '-' => [0, 0, 7, 0, 0, 0],
        '_' => [0, 0, 0, 0, 7, 0],
        '=' => [0, 7, 0, 7, 0, 0],
        '+' => [0, 2, 7, 2, 0, 0],
        '/' => [1, 1, 2, 4, 4, 0],
        '\\' => [4, 4, 2, 1, 1, 0],
        '|' => [2, 2, 2, 2, 2, 0],
        '(' => [1, 2, 2, 2, 1, 0],
        ')' => [4, 2, 2, 2, 4, 0],
        '[' => [6, 4, 4, 4, 6, 0],
        ']' => [3, 1, 1, 1, 3, 0],
        '{' => [3, 2, 6, 2, 3, 0],
        '}' => [6, 2, 3, 2, 6, 0],
        '<' => [1, 2, 4, 2, 1, 0],
        '>' => [4, 2, 1, 2, 4, 0],
        '#' => [5, 7, 5, 7, 5, 0],
        '%' => [5, 1, 2, 4, 5, 0],
        '&' => [2, 5, 2, 5, 3, 0],
        '*' => [0, 5, 2, 5, 0, 0],
        '@' => [2, 5, 7, 4, 3, 0],
        '$' => [3, 6, 2, 3, 6, 0],
        '^' => [2, 5, 0, 0, 0, 0],
        '~' => [0, 3, 6, 0, 0, 0],
        _ => return None,
    })
}

/// `text` with the look-alikes the font draws as ASCII replaced, if every
/// character then has a glyph.
pub fn drawable(text: &str) -> Option<String> {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '→' => out.push_str("->"),
            '←' => out.push_str("<-"),
            '…' => out.push_str("..."),
            '—' | '–' => out.push('-'),
            '×' => out.push('x'),
            '“' | '”' => out.push('"'),
            '‘' | '’' => out.push('\''),
            c if glyph(c).is_some() => out.push(c),
            _ => return None,
        }
    }
    Some(out)
}

/// The columns `chars` characters take at `scale`.
pub fn columns(chars: usize, scale: u16) -> u16 {
    let n = u16::try_from(chars).unwrap_or(u16::MAX);
    (n * (WIDTH + GAP) * scale).saturating_sub(GAP * scale)
}

/// The rows a line takes at `scale`.
pub fn rows(scale: u16) -> u16 {
    HEIGHT / 2 * scale
}

/// The most characters a line of `width` columns holds at `scale`.
pub fn per_line(width: u16, scale: u16) -> usize {
    usize::from((width + GAP * scale) / ((WIDTH + GAP) * scale))
}

/// Draws `text` (drawable: see [`drawable`]) at `scale` (1 or 2) from the
/// top left of `area`, clipped to it.
pub fn draw(text: &str, scale: u16, style: Style, area: Rect, buf: &mut Buffer) {
    let area = area.intersection(buf.area);
    let mut x = area.x;
    for c in text.chars() {
        let g = glyph(c).unwrap_or([0; 6]);
        for col in 0..WIDTH {
            let bit = 4 >> col;
            for row in 0..HEIGHT / 2 {
                let top = g[usize::from(2 * row)] & bit != 0;
                let bottom = g[usize::from(2 * row + 1)] & bit != 0;
                for dx in 0..scale {
                    let cx = x + col * scale + dx;
                    if scale == 1 {
                        let symbol = match (top, bottom) {
                            (true, true) => "█",
                            (true, false) => "▀",
                            (false, true) => "▄",
                            (false, false) => continue,
                        };
                        put(buf, area, cx, area.y + row, symbol, style);
                    } else {
                        // A pixel per row: two rows per glyph row.
                        for (dy, on) in [(0, top), (1, bottom)] {
                            if on {
                                put(buf, area, cx, area.y + 2 * row + dy, "█", style);
                            }
                        }
                    }
                }
            }
        }
        x += (WIDTH + GAP) * scale;
    }
}

fn put(buf: &mut Buffer, area: Rect, x: u16, y: u16, symbol: &str, style: Style) {
    if x < area.right() && y < area.bottom() {
        buf[(x, y)].set_symbol(symbol).set_style(style);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::headless::buffer_text;

    #[test]
    fn every_glyph_fits_its_three_columns() {
        for c in (' '..='~').filter(|c| glyph(*c).is_some()) {
            assert!(glyph(c).unwrap().iter().all(|r| *r < 8), "{c}");
        }
        assert_eq!((' '..='~').filter(|c| glyph(*c).is_none()).count(), 0);
    }

    #[test]
    fn draws_half_blocks_at_scale_one_and_whole_ones_at_two() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 8, 3));
        draw("Hi", 1, Style::new(), buf.area, &mut buf);
        assert_eq!(buffer_text(&buf), "█ █  ▀\n█▀█  █\n▀ ▀  ▀\n");
        let mut buf = Buffer::empty(Rect::new(0, 0, 6, 6));
        draw("T", 2, Style::new(), buf.area, &mut buf);
        assert_eq!(buffer_text(&buf).lines().next(), Some("██████"));
        assert_eq!(buffer_text(&buf).lines().nth(4), Some("  ██"));
        assert_eq!(columns(2, 1), 7);
        assert_eq!(columns(2, 2), 14);
        assert_eq!(per_line(7, 1), 2);
        assert_eq!(per_line(14, 2), 2);
    }

    #[test]
    fn chinese_and_unknown_signs_are_not_drawable() {
        assert_eq!(drawable("tx-1 → 5…").as_deref(), Some("tx-1 -> 5..."));
        assert_eq!(drawable("提交"), None);
        assert_eq!(drawable("a ≠ b"), None);
    }
}
