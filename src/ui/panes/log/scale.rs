//! Under a partition's rows: the offset scale (each cell's first offset on
//! the band it is in: `=` stable below the LSO, `~` unstable from LSO to
//! HW, `-` above the HW; `[`, `L`, `H` on the cell boundaries) and the
//! numbers (`[0 L=3 H=5`, or `start 0 LSO 3 HW 5` where they fit); and the
//! legend in the lines left over.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use super::cell::width;
use super::put;
use super::window::{Slot, Window};
use crate::session::snapshot::{Fate, PartitionSnapshot};
use crate::ui::glossary;
use crate::ui::panes::PaneContext;
use crate::ui::theme::Theme;

/// The band a slot is in: stable (below the LSO), unstable (LSO to HW),
/// above the HW, or past the leader's LEO (a divergent tail only).
fn band(p: &PartitionSnapshot, s: Slot, ctx: &PaneContext) -> (char, Style) {
    if s.from >= p.log_end_offset {
        (' ', Style::new())
    } else if s.from >= p.high_watermark {
        ('-', ctx.theme.dim())
    } else if s.from >= p.last_stable_offset {
        ('~', ctx.theme.waiting())
    } else {
        ('=', ctx.theme.good())
    }
}

/// The watermarks of `p` in order: (letter, short label, long label, offset).
fn marks(p: &PartitionSnapshot, ctx: &PaneContext) -> [(&'static str, String, String, i64); 3] {
    let (s, l, h) = (p.log_start_offset, p.last_stable_offset, p.high_watermark);
    [
        (
            "[",
            format!("[{s}"),
            format!("{} {s}", ctx.lang.t("log_start_short")),
            s,
        ),
        ("L", format!("L={l}"), format!("LSO {l}"), l),
        ("H", format!("H={h}"), format!("HW {h}"), h),
    ]
}

/// The offset scale: each cell's first offset on its band, the marks'
/// letters on the cell boundaries.
pub fn scale(
    p: &PartitionSnapshot,
    win: &Window,
    ctx: &PaneContext,
    bx: usize,
    y: u16,
    right: usize,
    buf: &mut Buffer,
) {
    let mut free = bx + 1; // the first column a number may start at
    // A cell's fill depends on its band alone, and bands run in order
    // (stable, unstable, above the HW): a fill is made once per band, and
    // the numbers share one string, not one each per cell.
    let mut fill = String::new();
    let mut number = String::new();
    for (i, s) in win.slots.iter().enumerate() {
        let x = bx + i * win.cell + 1;
        let (c, style) = band(p, *s, ctx);
        if !fill.starts_with(c) {
            fill = std::iter::repeat_n(c, win.cell - 1).collect();
        }
        put(buf, x, y, right, &fill, style);
        number.clear();
        let _ = std::fmt::Write::write_fmt(&mut number, format_args!("{}", s.from));
        if x >= free && number.len() < win.cell {
            put(buf, x, y, right, &number, ctx.theme.dim());
            free = x + number.len() + 1;
        }
    }
    for (letter, _, _, offset) in marks(p, ctx) {
        if let Some(k) = win.boundary(offset) {
            put(buf, bx + k * win.cell, y, right, letter, ctx.theme.strong());
        }
    }
}

/// The marks' numbers under their boundaries (`◂` for one left of the
/// window), pushed right when they would overlap; the long labels when
/// they all fit where they belong.
pub fn numbers(
    p: &PartitionSnapshot,
    win: &Window,
    ctx: &PaneContext,
    bx: usize,
    y: u16,
    right: usize,
    buf: &mut Buffer,
) {
    let place = |long: bool| -> Vec<(usize, String)> {
        let mut at = bx;
        marks(p, ctx)
            .into_iter()
            .map(|(_, short, full, offset)| {
                let text = if long { full } else { short };
                let (x, text) = match win.boundary(offset) {
                    Some(k) => (bx + k * win.cell, text),
                    None if win.slots.first().is_some_and(|s| offset < s.from) => {
                        (bx, format!("◂{text}"))
                    }
                    None => (bx, text),
                };
                let x = x.max(at);
                at = x + width(&text) + 1;
                (x, text)
            })
            .collect()
    };
    let long = place(true);
    let fits = long.iter().all(|(x, t)| x + width(t) <= right)
        && marks(p, ctx)
            .iter()
            .zip(&long)
            .all(|((_, _, _, o), (x, _))| win.boundary(*o).is_none_or(|k| *x == bx + k * win.cell));
    let mut placed = if fits { long } else { place(false) };
    pull_inside(&mut placed, bx, right);
    for (x, text) in placed {
        put(buf, x, y, right, &text, ctx.theme.strong());
    }
}

/// Labels pushed right past the pane's edge (the marks at the window's
/// last boundary, `L=675 H=675`) move left, the last first, each ending
/// before the next, so none is cut while they fit at all; a label already
/// inside stays under its boundary.
fn pull_inside(placed: &mut [(usize, String)], bx: usize, right: usize) {
    let mut limit = right;
    for (x, text) in placed.iter_mut().rev() {
        let w = width(text);
        if *x + w > limit {
            *x = limit.saturating_sub(w).max(bx);
        }
        limit = x.saturating_sub(1);
    }
}

/// The glyphs of what was drawn and the scale's signs, in the lines left,
/// never cutting an item.
pub fn legend(
    ctx: &PaneContext,
    present: &[&'static str],
    readers: bool,
    area: Rect,
    buf: &mut Buffer,
) {
    if area.height == 0 {
        return;
    }
    let t = |k| ctx.lang.t(k);
    let mut items: Vec<(String, Style)> = Vec::new();
    // A batch drawn `▵` (above the HW) is over the scale's `-` band: the
    // same offsets, not on every ISR replica yet, which no consumer reads.
    // One item says both glyphs, so two glyphs never share a label (a new
    // user's trial saw `↑ above HW` and `- above HW` side by side).
    let above_hw = present.contains(&Fate::AboveHighWatermark.name());
    for f in Fate::ALL {
        if present.contains(&f.name()) {
            let mut label = glossary::fate_label(f, ctx.lang);
            if f == Fate::AboveHighWatermark {
                label.push_str(t("above_hw_on_scale"));
            }
            items.push((label, ctx.theme.fate(f)));
        }
    }
    if present.contains(&"divergent") {
        items.push((
            format!("{} {}", Theme::DIVERGENT_GLYPH, t("divergent")),
            ctx.theme.divergent(),
        ));
    }
    // The rows' short labels, in words (where the words differ).
    for (short, long) in [
        ("log_leader", "leader"),
        ("log_in_sync", "in_sync"),
        ("log_out_of_sync", "out_of_sync"),
    ] {
        if present.contains(&short) && t(short) != t(long) {
            items.push((format!("{} {}", t(short), t(long)), Style::new()));
        }
    }
    if present.contains(&"tombstone") {
        items.push((
            format!("{} {}", Theme::TOMBSTONE_GLYPH, t("tombstone")),
            ctx.theme.tombstone(),
        ));
    }
    if present.contains(&"compacted") {
        items.push((
            format!("{} {}", Theme::COMPACTED_GLYPH, t("compacted")),
            ctx.theme.compacted(),
        ));
    }
    if present.contains(&"stopped") {
        items.push((format!("■ {}", t("stopped")), ctx.theme.bad()));
    }
    if readers {
        items.push((
            format!(
                "{} {}  {} {}  ● {}  · {}",
                t("ru_cell"),
                t("read_uncommitted"),
                t("rc_cell"),
                t("read_committed"),
                t("seen"),
                t("unseen")
            ),
            Style::new(),
        ));
    }
    items.extend([
        (format!("= {}", t("below_lso")), ctx.theme.good()),
        (format!("~ {}", t("lso_to_hw")), ctx.theme.waiting()),
    ]);
    if !above_hw {
        items.push((format!("- {}", t("above_hw")), ctx.theme.dim()));
    }
    items.extend([
        (format!("[ {}", t("log_start")), ctx.theme.strong()),
        ("L LSO".to_string(), ctx.theme.strong()),
        ("H HW".to_string(), ctx.theme.strong()),
    ]);
    let right = usize::from(area.right());
    let (mut x, mut y) = (usize::from(area.x), area.y);
    for (text, style) in items {
        let w = width(&text);
        if x > usize::from(area.x) && x + w > right {
            y += 1;
            x = usize::from(area.x);
        }
        if y >= area.bottom() || x + w > right {
            break;
        }
        x = put(buf, x, y, right, &text, style) + 2;
    }
}

#[cfg(test)]
mod tests {
    use super::pull_inside;

    fn pulled(placed: &[(usize, &str)], right: usize) -> Vec<(usize, String)> {
        let mut v: Vec<(usize, String)> = placed.iter().map(|(x, t)| (*x, t.to_string())).collect();
        pull_inside(&mut v, 5, right);
        v
    }

    #[test]
    fn labels_past_the_edge_move_left_whole_and_in_order() {
        // At 160 columns: `L=675 H=675` under the last boundary, column 149.
        let v = pulled(&[(5, "◂[0"), (149, "L=675"), (155, "H=675")], 158);
        assert_eq!(v[2], (153, "H=675".to_string()));
        assert_eq!(v[1], (147, "L=675".to_string()));
        assert_eq!(v[0], (5, "◂[0".to_string()));
    }

    #[test]
    fn labels_inside_stay_under_their_boundaries() {
        let placed = [(5, "[0"), (20, "L=3"), (40, "H=5")];
        let v = pulled(&placed, 80);
        assert_eq!(v, placed.map(|(x, t)| (x, t.to_string())));
    }

    #[test]
    fn labels_that_cannot_all_fit_start_at_the_left_edge() {
        let v = pulled(&[(5, "[0"), (6, "L=3"), (10, "H=5")], 9);
        assert_eq!(v[0].0, 5);
    }
}
