//! What a cell of the log pane says: its glyph, style, and the text of
//! each line of a replica row (value, fate, readers, epoch), in the room a
//! cell has, with short words chosen on purpose (`C`/`A` for markers,
//! `RU`/`RC` for the consumers) rather than words cut in the middle.

use ratatui::style::Style;
use ratatui::text::Span;

use super::window::{Cell, Slot, Window};
use crate::session::snapshot::{BatchSnapshot, ControlKind, RecordSnapshot};
use crate::ui::panes::{PaneContext, one_cell, printable_ascii};
use crate::ui::theme::Theme;

/// Lines per replica row at most (see [`Line`]).
pub const MAX_LINES: usize = 4;

/// What a line of a replica row shows in each cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// The fate's glyph and the value (or marker).
    Value,
    /// The fate's label.
    Fate,
    /// Whether a read_uncommitted (`RU`) and a read_committed (`RC`)
    /// consumer read it (`●`) or not (`·`): the leader's row only, since
    /// consumers fetch from the leader.
    Readers,
    /// The batch's leader epoch and transaction.
    Epoch,
}

/// The lines of a row, most telling first, at most `cap` of them.
pub fn row_lines(leader: bool, cap: usize) -> &'static [Line] {
    const LEADER: [Line; 4] = [Line::Value, Line::Fate, Line::Readers, Line::Epoch];
    const FOLLOWER: [Line; 3] = [Line::Value, Line::Fate, Line::Epoch];
    if leader {
        &LEADER[..cap.min(LEADER.len())]
    } else {
        &FOLLOWER[..cap.min(FOLLOWER.len())]
    }
}

/// `s` cut to `width` terminal columns (wide characters count twice).
pub fn fit(s: &str, width: usize) -> String {
    if s.chars().all(one_cell) {
        return s
            .char_indices()
            .nth(width)
            .map_or(s, |(i, _)| &s[..i])
            .to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = crate::ui::panes::char_width(c);
        if used + w > width {
            break;
        }
        used += w;
        out.push(c);
    }
    out
}

/// A value in `room` columns: whole, or its first characters and `…` so
/// that a cut value (`v1…`) is never mistaken for another (`v1`).
pub fn cut(s: &str, room: usize) -> String {
    if width(s) <= room || room < 2 {
        return fit(s, room);
    }
    format!("{}…", fit(s, room - 1))
}

pub fn width(s: &str) -> usize {
    if printable_ascii(s) {
        return s.len();
    }
    if s.chars().all(one_cell) {
        return s.chars().count();
    }
    Span::raw(s).width()
}

/// A marker's text in `room` columns: the word when it fits, else its
/// letter (`C`, `A`), chosen on purpose rather than cut.
pub fn marker(c: ControlKind, room: usize) -> &'static str {
    match c {
        ControlKind::Commit if room >= 6 => "COMMIT",
        ControlKind::Abort if room >= 5 => "ABORT",
        ControlKind::Commit => "C",
        ControlKind::Abort => "A",
    }
}

/// The value shown for `slot` from `records`: the record at the slot's
/// first offset (one cell per offset), or the batch's first (one per
/// batch); "" when the frame did not read it. A value of printable ASCII
/// without headers comes already [`cut`] to `room` columns, as the cell
/// draws it (cutting it again changes nothing, and [`counted`] fits a
/// shorter start of it): it is not copied whole, a value of 100 B into a
/// cell of a dozen columns.
pub fn value(records: &[RecordSnapshot], slot: Slot, per_batch: bool, room: usize) -> String {
    let r = if per_batch {
        records.first()
    } else {
        records.iter().find(|r| r.offset == slot.from)
    };
    r.map_or(String::new(), |r| {
        if r.headers.is_empty() {
            let v = r.value.as_deref().unwrap_or("null");
            if printable_ascii(v) {
                return cut_ascii(v, room);
            }
        }
        let text = r.value_text();
        match super::super::visible(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(shown) => shown,
        }
    })
}

/// [`cut`] of a text of printable ASCII, one column a byte.
fn cut_ascii(v: &str, room: usize) -> String {
    match v.len() <= room || room < 2 {
        true => v[..v.len().min(room)].to_string(),
        false => {
            let mut out = String::with_capacity(room + 2);
            out.push_str(&v[..room - 1]);
            out.push('…');
            out
        }
    }
}

/// A cell standing for a whole batch of `len` records (one cell per
/// batch): its first value, and for several records `…` and their number
/// (`a0…×50`), in `room` columns. The count goes first when room is short
/// (`a…×50`, then `×50`): it is what tells a cell of fifty records from a
/// cell of one.
pub fn counted(first: &str, len: i64, room: usize) -> String {
    if len <= 1 {
        return first.to_string();
    }
    let count = format!("×{len}");
    let cw = width(&count);
    if room >= cw + 2 {
        format!("{}…{count}", fit(first, room - cw - 1))
    } else if room >= cw {
        count
    } else {
        // No room for the whole number: a cut one would say another.
        cut(first, room)
    }
}

/// [`counted`] of the batch's first value ([`value`], one cell per
/// batch), made without the copies `counted` makes of a first value of
/// printable ASCII without headers (the value cut, the count, the value
/// fitted again, the whole): a 200x60 frame draws a few hundred such
/// cells. The same text either way (a unit test holds it to [`counted`]).
pub fn counted_first(records: &[RecordSnapshot], slot: Slot, len: i64, room: usize) -> String {
    if len <= 1 {
        return value(records, slot, true, room);
    }
    // `×` and the count's digits, one column each.
    let count_w = 1 + len.checked_ilog10().map_or(1, |d| d as usize + 1);
    if (count_w..count_w + 2).contains(&room) {
        return format!("×{len}");
    }
    let ascii = records
        .first()
        .filter(|r| r.headers.is_empty())
        .map(|r| r.value.as_deref().unwrap_or("null"))
        .filter(|v| printable_ascii(v));
    match ascii {
        // `counted` fits the first value, cut to `room`, to fewer columns
        // than `room - 1`: the value's own first columns.
        Some(v) if room >= count_w + 2 => {
            let k = (room - count_w - 1).min(v.len());
            let mut out = String::with_capacity(k + count_w + 4);
            out.push_str(&v[..k]);
            out.push('…');
            out.push('×');
            let _ = std::fmt::Write::write_fmt(&mut out, format_args!("{len}"));
            out
        }
        // No room for the count: `counted` cuts the value to `room`.
        Some(v) => cut_ascii(v, room),
        None => counted(&value(records, slot, true, room), len, room),
    }
}

/// A cell's glyph, style and the text of each [`Line`].
pub struct Drawn {
    pub glyph: &'static str,
    pub style: Style,
    value: String,
    fate: String,
    readers: String,
    epoch: String,
}

impl Drawn {
    pub fn text(&self, line: Line) -> &str {
        match line {
            Line::Value => &self.value,
            Line::Fate => &self.fate,
            Line::Readers => &self.readers,
            Line::Epoch => &self.epoch,
        }
    }
}

/// The readers line: `RU● RC·` (in Chinese 未 and 已, as wide).
fn readers(ctx: &PaneContext, ru: bool, rc: bool) -> String {
    let t = |k| ctx.lang.t(k);
    format!(
        "{}{} {}{}",
        t("ru_cell"),
        reads(ru),
        t("rc_cell"),
        reads(rc)
    )
}

/// A compacted-away offset's cell: its glyph and label, nothing to read.
fn compacted(ctx: &PaneContext, lines: &[Line]) -> Drawn {
    Drawn {
        glyph: Theme::COMPACTED_GLYPH,
        style: ctx.theme.compacted(),
        value: String::new(),
        fate: ctx.lang.t("compacted").to_string(),
        readers: match lines.contains(&Line::Readers) {
            true => readers(ctx, false, false),
            false => String::new(),
        },
        epoch: String::new(),
    }
}

/// Whether the record at `slot` is a tombstone (a key, a null value).
pub fn tombstone_at(records: &[RecordSnapshot], slot: Slot) -> bool {
    records
        .iter()
        .any(|r| r.offset == slot.from && r.key.is_some() && r.value.is_none())
}

/// `●` if a consumer reads it, else `·` (the partitions pane's marks).
pub fn reads(yes: bool) -> &'static str {
    if yes { "●" } else { "·" }
}

/// What cell `c` at `slot` shows on the row's `lines`, its values from
/// `records` (its batch's first records as the frame read them; see
/// [`crate::session::snapshot::Values`]). (The value line is
/// always made; a line the row does not draw is left empty rather than
/// made for nothing: a frame draws a few hundred cells).
pub fn drawn(
    c: Cell<'_>,
    records: &[RecordSnapshot],
    slot: Slot,
    win: &Window,
    ctx: &PaneContext,
    lines: &[Line],
) -> Option<Drawn> {
    // The text of `line`, made only when the row draws it.
    let on = |line: Line, text: &dyn Fn() -> String| {
        if lines.contains(&line) {
            text()
        } else {
            String::new()
        }
    };
    // A leader's batch says its fate and who reads it the same way whether
    // the cell is one of its records or the whole batch.
    let fate_line = |b: &BatchSnapshot| on(Line::Fate, &|| ctx.lang.t(b.fate.name()).to_string());
    let readers_line = |b: &BatchSnapshot| {
        on(Line::Readers, &|| {
            readers(
                ctx,
                b.fate.read_uncommitted_sees(),
                b.fate.read_committed_sees(),
            )
        })
    };
    let room = win.cell.saturating_sub(2);
    match c {
        Cell::Empty => None,
        Cell::Unknown => Some(Drawn {
            glyph: "·",
            style: ctx.theme.dim(),
            value: String::new(),
            fate: String::new(),
            readers: String::new(),
            epoch: String::new(),
        }),
        Cell::Compacted => Some(compacted(ctx, lines)),
        // An offset of a batch whose record compaction removed (all its
        // records read, so the gap is known and not just unread).
        Cell::Batch(_, b)
            if !win.per_batch
                && b.control.is_none()
                && b.compacted > 0
                && records.len() as i64 + b.compacted == b.len()
                && !records.iter().any(|r| r.offset == slot.from) =>
        {
            Some(compacted(ctx, lines))
        }
        Cell::Batch(_, b) if !win.per_batch && tombstone_at(records, slot) => Some(Drawn {
            glyph: Theme::fate_glyph(b.fate),
            style: ctx.theme.tombstone(),
            value: if room > width(ctx.lang.t("tombstone")) {
                format!("{}{}", Theme::TOMBSTONE_GLYPH, ctx.lang.t("tombstone"))
            } else {
                Theme::TOMBSTONE_GLYPH.to_string()
            },
            fate: fate_line(b),
            readers: readers_line(b),
            epoch: on(Line::Epoch, &|| format!("e{}", b.leader_epoch)),
        }),
        Cell::Batch(_, b) => Some(Drawn {
            glyph: Theme::fate_glyph(b.fate),
            style: ctx.theme.fate(b.fate),
            value: match b.control {
                Some(k) => marker(k, room).to_string(),
                None if win.per_batch && b.base_offset < slot.from => "…".into(),
                None if win.per_batch => counted_first(records, slot, b.len(), room),
                None => value(records, slot, win.per_batch, room),
            },
            fate: fate_line(b),
            readers: readers_line(b),
            epoch: on(Line::Epoch, &|| match &b.transactional_id {
                Some(t) => format!("e{} {t}", b.leader_epoch),
                None => format!("e{}", b.leader_epoch),
            }),
        }),
        Cell::Divergent(b) => Some(Drawn {
            glyph: Theme::DIVERGENT_GLYPH,
            style: ctx.theme.divergent(),
            value: match b.control {
                Some(k) => marker(k, room).to_string(),
                None => value(records, slot, win.per_batch, room),
            },
            fate: on(Line::Fate, &|| ctx.lang.t("divergent").to_string()),
            readers: on(Line::Readers, &|| readers(ctx, false, false)),
            epoch: on(Line::Epoch, &|| format!("e{}", b.leader_epoch)),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::{Slot, counted, counted_first, value};
    use crate::session::snapshot::RecordSnapshot;

    /// The one-string path says what `counted` of the first value says,
    /// for every room, count and kind of first value.
    #[test]
    fn a_batch_cell_made_in_one_string_is_the_counted_first_value() {
        let mut with_headers = RecordSnapshot::new(0, None, Some("h".into()));
        with_headers.headers = vec![("k".into(), None)];
        let firsts = [
            vec![RecordSnapshot::new(0, None, Some("a0".into()))],
            vec![RecordSnapshot::new(0, None, Some("x".repeat(100)))],
            vec![RecordSnapshot::new(0, None, Some("order-123456".into()))],
            vec![RecordSnapshot::new(0, Some("k".into()), None)],
            vec![RecordSnapshot::new(0, None, Some("分区值".into()))],
            vec![RecordSnapshot::new(0, None, Some("tab\there".into()))],
            vec![with_headers],
            Vec::new(),
        ];
        let slot = Slot { from: 0, to: 0 };
        for records in &firsts {
            for len in [1, 2, 9, 10, 99, 100, 12_345, 1_000_000] {
                for room in 0..30 {
                    assert_eq!(
                        counted_first(records, slot, len, room),
                        counted(&value(records, slot, true, room), len, room),
                        "{records:?} len {len} room {room}"
                    );
                }
            }
        }
    }

    /// A record's headers show after its value, in braces; a record
    /// without any shows its value alone, as before headers were kept.
    #[test]
    fn a_cell_shows_a_records_headers_after_its_value() {
        let mut with = RecordSnapshot::new(3, None, Some("v3".into()));
        with.headers = vec![("trace".into(), Some("t1".into())), ("flag".into(), None)];
        let records = [RecordSnapshot::new(2, None, Some("v2".into())), with];
        let at = |from| Slot { from, to: from };
        assert_eq!(value(&records, at(2), false, 20), "v2");
        assert_eq!(value(&records, at(3), false, 20), "v3{trace=t1,flag}");
        assert_eq!(
            value(&records, at(3), true, 20),
            "v2",
            "per batch: the first"
        );
    }

    #[test]
    fn a_batch_cell_keeps_its_count_over_its_value_and_never_cuts_it() {
        assert_eq!(counted("a0", 50, 14), "a0…×50");
        assert_eq!(counted("order-123456", 50, 8), "orde…×50");
        assert_eq!(counted("a0", 50, 5), "a…×50");
        assert_eq!(counted("a0", 50, 4), "×50");
        assert_eq!(counted("a0", 50, 3), "×50");
        assert_eq!(counted("a0", 50, 2), "a0", "no room for ×50: the value");
        assert_eq!(counted("solo", 1, 14), "solo", "one record: no count");
    }
}
