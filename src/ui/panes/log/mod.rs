//! The log pane (SPEC §6: "each partition's record batches", "each replica's
//! log end offset, lag", "the HW against the LSO"): each partition's replicas
//! drawn as rows of cells, one cell per offset, aligned by offset across
//! replicas, the leader's row first.
//!
//! - A cell shows its fate's glyph and the first characters of its value;
//!   a COMMIT or ABORT marker is a cell of its own (`◆C`, `◆A`, or the word
//!   when it fits), which is why offsets jump by two after a transaction.
//!   With room, a row is three lines: the value, the fate's label, and the
//!   batch's leader epoch and transaction.
//! - A follower's cell takes the fate of the leader's batch at that offset:
//!   it holds the same batch. A batch the leader does not hold (an old
//!   leader's divergent tail, E6) is drawn `≠` in its own style, with its
//!   own value and epoch, until the replica's next fetch truncates it.
//! - A row ends at the replica's LEO, written after its last cell, so a
//!   follower's lag is a shorter row.
//! - Under the rows, a scale: each cell's first offset, the span up to the
//!   LSO (`=`, stable), from LSO to HW (`~`, unstable: only read_uncommitted
//!   reads there) and above the HW (`-`), with `[`, `L` and `H` on the cell
//!   boundaries; then the numbers (`[0 L=3 H=5`, or `start 0 LSO 3 HW 5`
//!   when there is room).
//! - When the offsets do not fit, one cell stands for a batch (the header
//!   says so), and the window follows the log's end, the interesting end:
//!   the newest batches, where LSO, HW and the LEOs are. Only the newest
//!   [`BATCH_WINDOW`](crate::session::snapshot::BATCH_WINDOW) batches of a
//!   replica are ever looked at, so drawing costs what is visible.
//!
//! Every colour has a glyph or a label, so `NO_COLOR` loses nothing.

pub mod cell;
pub mod scale;
pub mod window;

use crate::session::snapshot::field;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use self::cell::{Line, MAX_LINES, cut, drawn, fit, row_lines, width};
use self::window::{Cell, Window, cell, leader_batch, rows, same_batch, window};
use super::{PaneContext, frame, marks};
use crate::session::snapshot::build::Wanted;
use crate::session::snapshot::{
    Fate, PartitionSnapshot, RecordSnapshot, ReplicaSnapshot, Snapshot, Values,
};
use crate::ui::theme::Theme;

/// One partition as the pane draws it.
struct Block<'a> {
    /// Its index in the snapshot's partitions.
    index: usize,
    part: &'a PartitionSnapshot,
    rows: Vec<&'a ReplicaSnapshot>,
    win: Window,
    /// Lines per replica row the cells' width allows.
    max_lines: usize,
    /// Lines per replica row drawn at most (see [`row_lines`]).
    lines: usize,
    /// The line of its header.
    y: u16,
}

impl Block<'_> {
    /// Header, rows, scale and numbers.
    fn height(&self) -> usize {
        let rows: usize = (0..self.rows.len()).map(|i| self.lines_of(i).len()).sum();
        1 + rows + 2
    }

    /// The lines of row `ri`: one for a row that holds nothing in the
    /// window (it only says its LEO).
    fn lines_of(&self, ri: usize) -> &'static [Line] {
        let lines = row_lines(ri == 0, self.lines);
        let start = self.win.slots.first().map_or(i64::MAX, |s| s.from);
        if self.rows[ri].log_end_offset <= start {
            &lines[..1]
        } else {
            lines
        }
    }
}

/// Where everything goes in the pane's inner area.
struct Plan<'a> {
    /// Columns of the row labels ("2 ldr").
    label: usize,
    blocks: Vec<Block<'a>>,
    /// Partitions after the last block drawn.
    more: usize,
}

fn role(r: &ReplicaSnapshot, leader: bool) -> &'static str {
    if leader {
        "log_leader"
    } else if r.in_sync {
        "log_in_sync"
    } else {
        "log_out_of_sync"
    }
}

/// A row's label: the broker, `■` if stopped, and its role in short
/// (`ldr`, `isr`, `out`), chosen on purpose so 80 columns never cut it.
fn label(r: &ReplicaSnapshot, leader: bool, ctx: &PaneContext) -> String {
    let stopped = if r.stopped { "■" } else { "" };
    format!("{}{stopped} {}", r.broker, ctx.lang.t(role(r, leader)))
}

/// The LEO written after a row's last cell (`LEO ?` for an observed
/// cluster, whose leader's LEO is not on the wire: its row ends at the HW).
fn leo_label(view: &Snapshot, r: &ReplicaSnapshot) -> String {
    if view.lacks(field::REPLICA_LOG_END_OFFSET) {
        " LEO ?".to_string()
    } else {
        format!(" LEO {}", r.log_end_offset)
    }
}

/// What the pane draws of `view`: itself, or for a cluster observed over
/// the Kafka protocol (docs/observe.md), which shows no replica's log, the
/// leader's row alone, built from the partition's batches (the leader's,
/// fetched up to the HW), so its row ends at the HW. The followers' rows
/// are left out, not drawn empty: the header says they are not visible.
fn drawn_view(view: &Snapshot) -> std::borrow::Cow<'_, Snapshot> {
    if !view.lacks(field::REPLICA_LOG) {
        return std::borrow::Cow::Borrowed(view);
    }
    let mut leader_only = view.clone();
    for p in &mut leader_only.partitions {
        let (leader, hw) = (p.leader, p.high_watermark);
        p.replicas.retain(|r| r.is_leader || r.broker == leader);
        for r in &mut p.replicas {
            r.log_end_offset = hw;
        }
    }
    std::borrow::Cow::Owned(leader_only)
}

/// How many lines a row of cells `cell` wide can use: the fate's label
/// and the epoch need a cell as wide as the longest label.
fn lines_for(cell: usize, ctx: &PaneContext) -> usize {
    let longest = Fate::ALL
        .iter()
        .map(|f| width(ctx.lang.t(f.name())))
        .chain([width(ctx.lang.t("divergent"))])
        .max()
        .unwrap_or(0);
    if cell.saturating_sub(2) >= longest {
        MAX_LINES
    } else {
        1
    }
}

fn plan<'a>(view: &'a Snapshot, ctx: &PaneContext, inner: Rect) -> Plan<'a> {
    // Only the partitions that can show at one line per row (header, rows,
    // scale, numbers, a blank line), so the cost follows the pane.
    let mut room = usize::from(inner.height) + 1;
    let parts: Vec<(usize, &PartitionSnapshot)> = view
        .partitions
        .iter()
        .enumerate()
        .skip(ctx.scroll)
        .take_while(|(_, p)| {
            let fits = room > 0;
            room = room.saturating_sub(p.replicas.len() + 4);
            fits
        })
        .collect();
    let unseen = view
        .partitions
        .len()
        .saturating_sub(ctx.scroll + parts.len());
    let all_rows: Vec<Vec<&ReplicaSnapshot>> = parts.iter().map(|(_, p)| rows(p)).collect();
    let label_w = all_rows
        .iter()
        .flat_map(|rs| {
            rs.iter()
                .enumerate()
                .map(|(i, r)| width(&label(r, i == 0, ctx)))
        })
        .max()
        .unwrap_or(0);
    let right = all_rows
        .iter()
        .flatten()
        .map(|r| width(&leo_label(view, r)))
        .max()
        .unwrap_or(0);
    let cells_w = usize::from(inner.width).saturating_sub(label_w + 1 + right);
    let mut blocks: Vec<Block<'a>> = parts
        .iter()
        .zip(all_rows)
        .map(|(&(index, part), rows)| {
            let win = window(part, &rows, cells_w);
            let max_lines = lines_for(win.cell, ctx);
            Block {
                index,
                part,
                rows,
                win,
                max_lines,
                lines: max_lines,
                y: inner.y,
            }
        })
        .collect();
    // As many lines per row as the height allows for every partition, down
    // to one; then as many partitions as fit, with a line saying how many
    // more there are.
    let height = usize::from(inner.height);
    let total = |blocks: &[Block<'_>]| -> usize {
        blocks.iter().map(Block::height).sum::<usize>() + blocks.len().saturating_sub(1)
    };
    for cap in (1..=MAX_LINES).rev() {
        for b in &mut blocks {
            b.lines = b.max_lines.min(cap);
        }
        if total(&blocks) <= height {
            break;
        }
    }
    let mut more = unseen;
    while blocks.len() > 1 && total(&blocks) > height {
        blocks.pop();
        more += 1;
    }
    // One blank line between partitions.
    let mut y = inner.y;
    for b in &mut blocks {
        b.y = y;
        y = y.saturating_add(b.height() as u16 + 1);
    }
    Plan {
        label: label_w,
        blocks,
        more,
    }
}

/// The batches (partition, index into the partition's `batches`, records
/// drawn) whose cells a pane in `area` draws: the only ones whose records a
/// frame needs to read (see
/// [`SnapshotSource::values`](crate::session::SnapshotSource::values)).
/// With one cell per offset a batch's cells are its first records up to the
/// last one in the window (a window never starts inside a batch), so every
/// record cell drawn has its value; with one cell per batch, its first.
pub fn visible_batches(view: &Snapshot, ctx: &PaneContext, area: Rect) -> Vec<Wanted> {
    let view = &*drawn_view(view);
    let inner = ratatui::widgets::Block::bordered().inner(area);
    if inner.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<Wanted> = Vec::new();
    for b in plan(view, ctx, inner).blocks {
        let skipped = b.part.batches.len() - b.part.window().len();
        for slot in &b.win.slots {
            let Some((i, batch)) = leader_batch(b.part, slot.from) else {
                continue;
            };
            let drawn = if b.win.per_batch {
                1
            } else {
                usize::try_from(slot.to - batch.base_offset + 1).unwrap_or(1)
            };
            match out.last_mut() {
                Some(last) if (last.0, last.1) == (b.index, skipped + i) => {
                    last.2 = last.2.max(drawn);
                }
                _ => out.push((b.index, skipped + i, drawn)),
            }
        }
    }
    out
}

/// Where the pane puts one partition's cells: what tests hold the drawn
/// buffer to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// The partition's index in the snapshot.
    pub partition: usize,
    pub window: Window,
    /// The column of the boundary left of the first cell.
    pub x: u16,
    /// Each row's broker and the line of its values, leader first.
    pub rows: Vec<(u32, u16)>,
}

/// The partitions a pane in `area` draws, with the geometry of their cells
/// (rows cut by the pane's bottom are left out).
pub fn placement(view: &Snapshot, ctx: &PaneContext, area: Rect) -> Vec<Placed> {
    let view = &*drawn_view(view);
    let inner = ratatui::widgets::Block::bordered().inner(area);
    if inner.is_empty() {
        return Vec::new();
    }
    let plan = plan(view, ctx, inner);
    plan.blocks
        .iter()
        .map(|b| {
            let mut y = b.y + 1;
            let rows = b
                .rows
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let at = y;
                    y += b.lines_of(i).len() as u16;
                    (r.broker, at)
                })
                .filter(|(_, at)| *at < inner.bottom())
                .collect();
            Placed {
                partition: b.index,
                window: b.win.clone(),
                x: inner.x + plan.label as u16,
                rows,
            }
        })
        .collect()
}

/// The smallest scroll (in partitions) at which a pane in `area` draws
/// partition `p` whole, or `p` (its header and first rows at the top)
/// when it never does.
pub fn scroll_to(view: &Snapshot, ctx: &PaneContext, area: Rect, p: usize) -> usize {
    let view = &*drawn_view(view);
    let inner = ratatui::widgets::Block::bordered().inner(area);
    let bottom = usize::from(inner.bottom());
    (0..p.min(view.partitions.len()))
        .find(|&s| {
            let from = PaneContext { scroll: s, ..*ctx };
            plan(view, &from, inner)
                .blocks
                .iter()
                .any(|b| b.index == p && usize::from(b.y) + b.height() <= bottom)
        })
        .unwrap_or(p)
}

/// Writes `s` at (`x`, `y`) without passing `right`; returns the column
/// after it.
pub(super) fn put(
    buf: &mut Buffer,
    x: usize,
    y: u16,
    right: usize,
    s: &str,
    style: Style,
) -> usize {
    if x >= right {
        return x;
    }
    // Characters of one cell each that are each their own grapheme (see
    // [`super::one_cell`]) are written cell by cell as `set_stringn` would,
    // without its grapheme segmentation: a frame puts a few thousand short
    // texts (every cell's edges and value, the offset scale).
    if s.chars().all(super::one_cell) {
        let room = usize::from(buf.area.right()).saturating_sub(x);
        let mut at = x;
        for (i, c) in s.char_indices() {
            if at >= right || at - x >= room {
                break;
            }
            buf[(at as u16, y)]
                .set_symbol(&s[i..i + c.len_utf8()])
                .set_style(style);
            at += 1;
        }
        return at;
    }
    let (end, _) = buf.set_stringn(x as u16, y, s, right - x, style);
    usize::from(end)
}

/// The selected batch's index in partition `p`'s window, if the selection
/// (all partitions' windows counted together, as in the partitions pane)
/// falls in it.
fn selected_in(view: &Snapshot, ctx: &PaneContext, p: usize) -> Option<usize> {
    let before: usize = view.partitions[..p].iter().map(|q| q.window().len()).sum();
    let i = ctx.selected?.checked_sub(before)?;
    (i < view.partitions[p].window().len()).then_some(i)
}

/// Draws the pane, each batch's values those of `values`, else its own;
/// `ctx.scroll` skips whole partitions.
pub fn render(view: &Snapshot, values: &Values, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let inner = frame(ctx, super::PaneId::Log, area, buf);
    if super::no_topics(view, ctx, inner, buf) {
        return;
    }
    if inner.is_empty() {
        return;
    }
    let view = &*drawn_view(view);
    let plan = plan(view, ctx, inner);
    let mut canvas = Canvas {
        view,
        values,
        ctx,
        inner,
        bx: usize::from(inner.x) + plan.label,
        buf,
        present: Vec::new(),
    };
    let mut y = inner.y;
    for block in &plan.blocks {
        if block.y >= inner.bottom() {
            break;
        }
        y = canvas.block(block, block.y) + 1;
    }
    y = y.saturating_sub(1).max(inner.y).min(inner.bottom());
    // Partitions out of view are counted on the border, as every
    // scrolling pane does (docs/dashboard.md, "Scrolling").
    let above = ctx.scroll.min(view.partitions.len());
    marks(ctx, area, above, plan.more, canvas.buf);
    let readers = plan
        .blocks
        .iter()
        .any(|b| row_lines(true, b.lines).contains(&Line::Readers));
    let rest = Rect::new(inner.x, y, inner.width, inner.bottom() - y);
    scale::legend(ctx, &canvas.present, readers, rest, canvas.buf);
}

/// A cell's value line: its glyph, then its value [`cut`] to `room`
/// columns; a value of printable ASCII that fits (as a batch cell's is,
/// cut where it was read) is not copied twice.
fn glyph_and(glyph: &str, value: &str, room: usize) -> String {
    if value.len() <= room && super::printable_ascii(value) {
        let mut out = String::with_capacity(glyph.len() + value.len());
        out.push_str(glyph);
        out.push_str(value);
        return out;
    }
    format!("{glyph}{}", cut(value, room))
}

/// What drawing every partition shares.
struct Canvas<'a, 'b> {
    view: &'a Snapshot,
    /// The values read for the frame beside `view`.
    values: &'a Values,
    ctx: &'a PaneContext,
    inner: Rect,
    /// The column of the first cell boundary (after the row labels).
    bx: usize,
    buf: &'b mut Buffer,
    /// The fates (and "divergent") of the cells drawn, for the legend.
    present: Vec<&'static str>,
}

impl Canvas<'_, '_> {
    fn right(&self) -> usize {
        usize::from(self.inner.right())
    }

    fn put(&mut self, x: usize, y: u16, s: &str, style: Style) -> usize {
        let right = self.right();
        put(self.buf, x, y, right, s, style)
    }

    /// Draws one partition from line `y`; returns the line after it.
    fn block(&mut self, block: &Block<'_>, mut y: u16) -> u16 {
        let bottom = self.inner.bottom();
        self.header(block, y);
        y += 1;
        for ri in 0..block.rows.len() {
            if y >= bottom {
                return y;
            }
            y = self.row(block, ri, y);
        }
        let (p, win, bx, right) = (block.part, &block.win, self.bx, self.right());
        if y < bottom {
            scale::scale(p, win, self.ctx, bx, y, right, self.buf);
            y += 1;
        }
        if y < bottom {
            scale::numbers(p, win, self.ctx, bx, y, right, self.buf);
            y += 1;
        }
        y.min(bottom)
    }

    /// The partition's name, epoch and ISR, and how its window reads: one
    /// cell per batch, and how many offsets are left of it.
    fn header(&mut self, block: &Block<'_>, y: u16) {
        let (p, win, ctx) = (block.part, &block.win, self.ctx);
        let observed = self.view.lacks(field::REPLICA_LOG);
        let t = |k| ctx.lang.t(k);
        let isr: Vec<String> = p.isr.iter().map(u32::to_string).collect();
        let mut x = usize::from(self.inner.x);
        if ctx.touched == Some(block.index) {
            let mark = super::touched::mark(ctx);
            x = self.put(x, y, &mark.content, mark.style);
        }
        x = self.put(x, y, &p.name(), ctx.theme.strong());
        let epoch = format!(" e{} ISR [{}]", p.leader_epoch, isr.join(","));
        x = self.put(x, y, &epoch, Style::new());
        // Each note whole or in short, or not at all: never a cut word.
        let mut note = |x: usize, long: String, short: String| {
            let room = self.right().saturating_sub(x);
            match [long, short].into_iter().find(|n| width(n) <= room) {
                Some(n) => self.put(x, y, &n, ctx.theme.dim()),
                None => x,
            }
        };
        if observed {
            x = note(
                x,
                format!(" · {}", t("log_observed")),
                format!(" · {}", t("log_observed_short")),
            );
        }
        if win.per_batch {
            x = note(
                x,
                format!(" · {}", t("log_per_batch")),
                format!(" · {}", t("log_per_batch_short")),
            );
        }
        if let Some(first) = win.slots.first()
            && first.from > p.log_start_offset
        {
            let hidden = first.from - p.log_start_offset;
            // The snapshot carries every batch from the log start on, and
            // the first starts past it: those offsets were compacted away,
            // not scrolled off (E16).
            let all_carried = p.batches.len() < crate::session::snapshot::BATCH_WINDOW
                && p.window()
                    .first()
                    .is_some_and(|b| b.base_offset == first.from);
            if all_carried {
                note(
                    x,
                    format!(
                        " · {}{hidden} {}",
                        Theme::COMPACTED_GLYPH,
                        t("log_compacted_away")
                    ),
                    format!(" {}{hidden}", Theme::COMPACTED_GLYPH),
                );
            } else {
                note(
                    x,
                    format!(" · ◂ {hidden} {}", t("log_earlier")),
                    format!(" ◂{hidden}"),
                );
            }
        }
    }

    /// The records cell `c` of replica row `r` of `block` draws values
    /// from: those read for the frame, else its batch's own.
    fn records<'c>(
        &'c self,
        block: &'c Block<'_>,
        r: &'c ReplicaSnapshot,
        c: Cell<'c>,
    ) -> &'c [RecordSnapshot] {
        let p = block.part;
        match c {
            Cell::Batch(i, b) => {
                let skipped = p.batches.len() - p.window().len();
                self.values.of(block.index, skipped + i, b)
            }
            Cell::Divergent(b) => self
                .values
                .divergent(block.index, r.broker, b.base_offset)
                .unwrap_or(&b.records),
            _ => &[],
        }
    }

    /// Replica row `ri` of `block` from line `y` (its label, its cells, its
    /// LEO after the last cell); returns the line after it.
    fn row(&mut self, block: &Block<'_>, ri: usize, y: u16) -> u16 {
        let (p, win, ctx, r) = (block.part, &block.win, self.ctx, block.rows[ri]);
        let leader = ri == 0;
        let lines = block.lines_of(ri);
        let bottom = self.inner.bottom();
        let name_style = if leader {
            ctx.theme.strong()
        } else if r.in_sync && !r.stopped {
            ctx.theme.good()
        } else {
            ctx.theme.bad()
        };
        self.put(
            usize::from(self.inner.x),
            y,
            &label(r, leader, ctx),
            name_style,
        );
        self.present.push(role(r, leader));
        if r.stopped {
            self.present.push("stopped");
        }
        let selected = selected_in(self.view, ctx, block.index);
        let bx = self.bx;
        let col = |i: usize| bx + i * win.cell;
        let cells: Vec<Cell<'_>> = win
            .slots
            .iter()
            .map(|s| cell(p, r, leader, s.from))
            .collect();
        // What the last step changed: on the leader's row the batches it
        // appended or whose fate it changed; on a follower's the offsets
        // its fetch brought (from its old LEO on). Marked `▸` on the cell's
        // left edge, and bold (docs/dashboard.md "What changed").
        let changes = self.view.changes.partition(&p.name());
        let fetched_from = changes
            .and_then(|pc| pc.replica_leo.get(&r.broker))
            .map(|&(old, _)| old);
        let changed = |c: Cell<'_>, from: i64| match c {
            Cell::Batch(_, b) if leader => {
                changes.is_some_and(|pc| pc.touches_batch(b.base_offset))
            }
            Cell::Batch(..) | Cell::Divergent(_) => fetched_from.is_some_and(|old| from >= old),
            _ => false,
        };
        let mut last = None;
        let mut prev_new = false;
        for (i, (&c, slot)) in cells.iter().zip(&win.slots).enumerate() {
            let records = self.records(block, r, c);
            let Some(d) = drawn(c, records, *slot, win, ctx, lines) else {
                continue;
            };
            let new = changed(c, slot.from);
            self.present.push(match c {
                _ if d.glyph == Theme::COMPACTED_GLYPH => "compacted",
                Cell::Batch(..) if d.text(Line::Value).starts_with(Theme::TOMBSTONE_GLYPH) => {
                    "tombstone"
                }
                Cell::Batch(_, b) => b.fate.name(),
                Cell::Divergent(_) => "divergent",
                _ => "",
            });
            let style = match (c, selected) {
                (Cell::Batch(b, _), Some(s)) if leader && b == s => {
                    d.style.patch(ctx.theme.selected())
                }
                _ => d.style,
            };
            let style = if new {
                style.patch(ctx.theme.changed())
            } else {
                style
            };
            let plain_edge = if i > 0 && same_batch(cells[i - 1], c) {
                "┊"
            } else {
                "│"
            };
            for (n, &line) in lines.iter().enumerate() {
                let ly = y + n as u16;
                if ly >= bottom {
                    break;
                }
                let text = match line {
                    Line::Value => glyph_and(d.glyph, d.text(line), win.cell - 2),
                    _ => fit(d.text(line), win.cell - 1),
                };
                let style = match line {
                    Line::Value | Line::Fate => style,
                    _ => style.patch(ctx.theme.dim()),
                };
                // The mark takes the edge of the cell's first line only,
                // and only where a changed run starts at a batch boundary:
                // the `┊` between the records of one batch stay, so a
                // changed batch of five records still reads as one.
                if new && n == 0 && (plain_edge == "│" || !prev_new) {
                    self.put(col(i), ly, Theme::CHANGED_GLYPH, ctx.theme.changed_mark());
                } else {
                    self.put(col(i), ly, plain_edge, ctx.theme.dim());
                }
                let cell_right = col(i + 1).min(self.right());
                put(self.buf, col(i) + 1, ly, cell_right, &text, style);
                self.put(col(i + 1), ly, "│", ctx.theme.dim());
            }
            last = Some(i);
            prev_new = new;
        }
        // The LEO after the row's last cell: a lagging row ends earlier;
        // `◂` says it ends left of the window.
        let end_x = last.map_or(self.bx, |i| col(i + 1) + 1);
        let mut leo = leo_label(self.view, r);
        if last.is_none() && win.slots.first().is_some_and(|s| r.log_end_offset < s.from) {
            leo = format!(" ◂{}", leo.trim_start());
        }
        let leo_style = if r.lag > 0 {
            ctx.theme.waiting()
        } else {
            Style::new()
        };
        self.put(end_x, y, &leo, leo_style);
        y + lines.len() as u16
    }
}

#[cfg(test)]
mod put_tests {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::style::{Color, Style};

    use super::put;
    use crate::ui::panes::one_cell;

    /// What `put` writes is what `set_stringn` writes, for every character
    /// it writes without segmenting, alone and in a run, cut by `right`
    /// and by the buffer's edge.
    #[test]
    fn put_writes_what_set_stringn_writes() {
        let chars: Vec<char> = (' '..='\u{2fff}').filter(|&c| one_cell(c)).collect();
        assert!(chars.len() > 200, "{}", chars.len());
        let run: String = chars.iter().collect();
        let texts: Vec<String> = chars
            .iter()
            .map(|c| c.to_string())
            .chain([run, "a│b┊c✓…×12".into(), String::new()])
            .collect();
        let style = Style::new().fg(Color::Red);
        for text in &texts {
            for (x, right) in [(1, 9), (3, 40), (0, 2000), (30, 31)] {
                let area = Rect::new(0, 0, 36, 1);
                let mut ours = Buffer::empty(area);
                let mut theirs = Buffer::empty(area);
                let end = put(&mut ours, x, 0, right, text, style);
                let (their_end, _) = theirs.set_stringn(x as u16, 0, text, right - x, style);
                assert_eq!(ours, theirs, "{text:?} at {x}..{right}");
                assert_eq!(end, usize::from(their_end), "{text:?} at {x}..{right}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use ratatui::style::Modifier;

    use super::super::testkit::{batch, ctx, draw, replica, text, view};
    use super::super::{PaneContext, PaneId};
    use super::*;
    use crate::session::snapshot::{RecordSnapshot, ReplicaBatch};
    use crate::ui::i18n::Lang;
    use crate::ui::theme::Theme;

    fn buffer(view: &Snapshot, ctx: &PaneContext, w: u16, h: u16) -> Buffer {
        let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
        render(view, Values::none(), ctx, buf.area, &mut buf);
        buf
    }

    /// The cells of each row of the only partition: (broker, glyph of
    /// each cell drawn), read back from the buffer at the placed columns.
    fn row_glyphs(view: &Snapshot, ctx: &PaneContext, w: u16, h: u16) -> Vec<(u32, String)> {
        let buf = buffer(view, ctx, w, h);
        let placed = placement(view, ctx, buf.area).remove(0);
        let cell = placed.window.cell as u16;
        placed
            .rows
            .iter()
            .map(|&(broker, y)| {
                let glyphs = (0..placed.window.slots.len() as u16)
                    .map(|i| buf[(placed.x + i * cell + 1, y)].symbol().to_string())
                    .take_while(|g| g != " ")
                    .collect();
                (broker, glyphs)
            })
            .collect()
    }

    #[test]
    fn rows_aligned_by_offset_leader_first_and_lag_is_a_shorter_row() {
        let text = draw(PaneId::Log, &view(), &ctx(), 80, 20);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].starts_with("│out-0 e0 ISR [1,2]"), "{text}");
        assert!(lines[2].starts_with("│1 ldr │✓a"), "{text}");
        // One cell per offset, each replica up to its LEO, the number after.
        assert_eq!(
            row_glyphs(&view(), &ctx(), 80, 20),
            [
                (1, "✓✗◆……▵".to_string()),
                (2, "✓✗◆……".to_string()),
                (3, "✓✗".to_string()),
            ]
        );
        for (broker, leo) in [(1, 6), (2, 5), (3, 2)] {
            let row = lines
                .iter()
                .find(|l| l.starts_with(&format!("│{broker}")))
                .unwrap();
            assert!(row.contains(&format!("│ LEO {leo}")), "{text}");
        }
        assert!(
            text.contains("│3■ out│✓a"),
            "stopped and out of sync: {text}"
        );
    }

    #[test]
    fn a_marker_is_a_cell_of_its_own_and_the_scale_marks_lso_and_hw() {
        let text = draw(PaneId::Log, &view(), &ctx(), 80, 20);
        assert!(text.contains("│◆ABORT"), "{text}");
        // The ongoing transaction's two offsets are one batch: `┊` between.
        assert!(text.contains("│…b") && text.contains("┊…c"), "{text}");
        // The scale: offsets on their bands, the marks on the boundaries.
        let scale = text.lines().find(|l| l.contains("[0")).unwrap();
        assert!(scale.contains("[0"), "{text}");
        assert!(scale.contains("=L3~") && scale.contains("~H5-"), "{text}");
        assert!(
            text.contains("start 0") && text.contains("LSO 3") && text.contains("HW 5"),
            "{text}"
        );
        // Narrow: a marker's letter, the short numbers where the long ones
        // do not fit under their boundaries; never a cut word.
        let narrow = draw(PaneId::Log, &view(), &ctx(), 30, 20);
        assert!(narrow.contains("│◆A│"), "{narrow}");
        assert!(
            narrow.contains("[0") && narrow.contains("L=3") && narrow.contains("H=5"),
            "{narrow}"
        );
    }

    #[test]
    fn cells_carry_their_fate_s_colour_and_glyph() {
        let (v, c) = (view(), ctx());
        let buf = buffer(&v, &c, 80, 20);
        let placed = placement(&v, &c, buf.area).remove(0);
        let p = &v.partitions[0];
        for &(broker, y) in &placed.rows {
            let r = p.replicas.iter().find(|r| r.broker == broker).unwrap();
            for (i, slot) in placed.window.slots.iter().enumerate() {
                let x = placed.x + (i * placed.window.cell) as u16 + 1;
                if slot.from >= r.log_end_offset {
                    assert_eq!(buf[(x, y)].symbol(), " ", "b{broker} @{}", slot.from);
                    continue;
                }
                let b = p
                    .batches
                    .iter()
                    .find(|b| b.last_offset >= slot.from)
                    .unwrap();
                let cell = &buf[(x, y)];
                assert_eq!(cell.symbol(), Theme::fate_glyph(b.fate));
                assert_eq!(
                    Some(cell.fg),
                    c.theme.fate(b.fate).fg,
                    "b{broker} @{}",
                    slot.from
                );
            }
        }
    }

    /// Broker 3 was the leader of epoch 0 and kept offset 2 ("lost"),
    /// which the new leader (epoch 1) wrote differently.
    fn divergent_view() -> Snapshot {
        let mut v = view();
        let p = &mut v.partitions[0];
        p.leader_epoch = 1;
        let r = &mut p.replicas[2];
        r.log_end_offset = 3;
        r.log.push(ReplicaBatch {
            base_offset: 2,
            last_offset: 2,
            leader_epoch: 0,
            control: None,
            crc: 99,
            divergent: true,
            records: vec![RecordSnapshot::new(2, None, Some("lost".into()))],
        });
        v
    }

    #[test]
    fn a_divergent_tail_has_its_own_glyph_and_style() {
        let (v, c) = (divergent_view(), ctx());
        let buf = buffer(&v, &c, 80, 20);
        let placed = placement(&v, &c, buf.area).remove(0);
        let (_, y) = placed.rows[2];
        let x = placed.x + (2 * placed.window.cell) as u16 + 1;
        let cell = &buf[(x, y)];
        assert_eq!(cell.symbol(), Theme::DIVERGENT_GLYPH);
        assert_eq!(Some(cell.fg), c.theme.divergent().fg);
        assert!(cell.modifier.contains(Modifier::UNDERLINED));
        let text = text(&buf);
        assert!(text.contains("≠lost"), "{text}");
        assert!(text.contains("divergent"), "the legend says it: {text}");
        // The leader's cell at the same offset keeps its fate.
        let leader = &buf[(x, placed.rows[0].1)];
        assert_eq!(leader.symbol(), Theme::fate_glyph(Fate::Control));
        // Without colour the glyph and the underline still tell it.
        let plain = PaneContext {
            theme: Theme::plain(),
            ..c
        };
        let buf = buffer(&v, &plain, 80, 20);
        assert_eq!(buf[(x, y)].symbol(), "≠");
        assert!(buf[(x, y)].modifier.contains(Modifier::UNDERLINED));
    }

    #[test]
    fn one_cell_per_batch_when_the_offsets_do_not_fit() {
        // 30 columns: 15 for cells, room for 5 cells of 3, not 6 offsets.
        let text = draw(PaneId::Log, &view(), &ctx(), 30, 12);
        assert!(text.contains("· batches"), "said in short: {text}");
        // One batch of 40 offsets is one cell, said in full where it fits.
        let mut long = view();
        let p = &mut long.partitions[0];
        let values: Vec<String> = (0..40).map(|i| format!("v{i}")).collect();
        let values: Vec<&str> = values.iter().map(String::as_str).collect();
        p.batches = vec![batch(0, 39, None, None, Fate::Committed, &values, "")];
        (p.high_watermark, p.last_stable_offset, p.log_end_offset) = (40, 40, 40);
        p.replicas = vec![replica(1, 40, 0, true, false, &p.batches)];
        let text = draw(PaneId::Log, &long, &ctx(), 60, 12);
        assert!(text.contains("1 cell = 1 batch"), "{text}");
        assert!(text.contains("│✓v0"), "the batch's first value: {text}");
        let placed = placement(&view(), &ctx(), Rect::new(0, 0, 30, 12)).remove(0);
        let slots: Vec<(i64, i64)> = placed.window.slots.iter().map(|s| (s.from, s.to)).collect();
        assert_eq!(slots, [(0, 0), (1, 1), (2, 2), (3, 4), (5, 5)]);
        // Narrower still: the newest batches, the earlier ones counted.
        let text = draw(PaneId::Log, &view(), &ctx(), 24, 12);
        let placed = placement(&view(), &ctx(), Rect::new(0, 0, 24, 12)).remove(0);
        assert_eq!(placed.window.slots.last().map(|s| s.to), Some(5));
        assert!(placed.window.slots[0].from > 0, "{text}");
        assert!(text.contains("◂"), "{text}");
    }

    #[test]
    fn labels_in_chinese_and_the_selected_batch_reversed() {
        let zh = PaneContext {
            lang: Lang::Zh,
            ..ctx()
        };
        let text = draw(PaneId::Log, &view(), &zh, 80, 20);
        for word in [
            "分区日志",
            "1 主",
            "2 同步",
            "3■ 不同步",
            "已提交",
            "已中止",
        ] {
            assert!(text.contains(word), "{word}: {text}");
        }
        let c = PaneContext {
            selected: Some(1),
            ..ctx()
        };
        let buf = buffer(&view(), &c, 80, 20);
        let placed = placement(&view(), &c, buf.area).remove(0);
        let x = |i: usize| placed.x + (i * placed.window.cell) as u16 + 1;
        let y = placed.rows[0].1;
        assert!(buf[(x(1), y)].modifier.contains(Modifier::REVERSED));
        assert!(!buf[(x(0), y)].modifier.contains(Modifier::REVERSED));
    }

    #[test]
    fn visible_batches_are_the_leader_s_batches_in_the_window() {
        let area = Rect::new(0, 0, 80, 20);
        assert_eq!(
            visible_batches(&view(), &ctx(), area),
            [(0, 0, 1), (0, 1, 1), (0, 2, 1), (0, 3, 2), (0, 4, 1)],
            "one cell per offset: the batch 3-4 draws two records"
        );
        let placed = placement(&view(), &ctx(), Rect::new(0, 0, 24, 12)).remove(0);
        let first = placed.window.slots[0].from;
        let seen = visible_batches(&view(), &ctx(), Rect::new(0, 0, 24, 12));
        assert!(!seen.is_empty() && seen.len() < 5);
        assert!(
            seen.iter()
                .all(|&(_, b, n)| view().partitions[0].batches[b].last_offset >= first && n == 1)
        );
    }

    #[test]
    fn partitions_that_do_not_fit_are_counted() {
        let mut v = view();
        let mut second = v.partitions[0].clone();
        second.partition = 1;
        v.partitions.push(second);
        let text = draw(PaneId::Log, &v, &ctx(), 80, 12);
        assert!(text.contains("out-0") && !text.contains("out-1"), "{text}");
        assert!(text.contains("↓ 1 more"), "on the border: {text}");
        assert!(text.lines().last().unwrap().contains("↓ 1 more"), "{text}");
        let scrolled = draw(PaneId::Log, &v, &PaneContext { scroll: 1, ..ctx() }, 80, 12);
        assert!(
            scrolled.contains("out-1") && !scrolled.contains("out-0"),
            "{scrolled}"
        );
    }
}
