//! The panes (SPEC §6). Each is one small file with a `render` function that
//! draws from the [`Snapshot`] into a rectangle, touching only what is
//! visible. No pane names an engine type: the snapshot is all they know.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget};

use crate::session::snapshot::{Isolation, Snapshot, TAIL, Values};
use crate::ui::i18n::Lang;
use crate::ui::theme::Theme;

pub mod caption;
pub mod client_log;
pub mod clients;
pub mod consumers;
pub mod events;
pub mod groups;
pub mod journal;
pub mod log;
pub mod offsets;
pub mod partitions;
pub mod pending;
pub mod replicas;
pub mod touched;
pub mod watermarks;

/// Every pane a layout can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PaneId {
    Partitions,
    Replicas,
    Watermarks,
    Journal,
    Log,
    Offsets,
    Consumers,
    Groups,
    Pending,
    Events,
    Caption,
    Clients,
}

impl PaneId {
    /// Every pane, in focus order.
    pub const ALL: [PaneId; 12] = [
        PaneId::Partitions,
        PaneId::Replicas,
        PaneId::Watermarks,
        PaneId::Journal,
        PaneId::Log,
        PaneId::Offsets,
        PaneId::Consumers,
        PaneId::Groups,
        PaneId::Pending,
        PaneId::Events,
        PaneId::Caption,
        PaneId::Clients,
    ];

    /// The name in layout files.
    pub fn name(self) -> &'static str {
        match self {
            PaneId::Partitions => "partitions",
            PaneId::Replicas => "replicas",
            PaneId::Watermarks => "watermarks",
            PaneId::Log => "log",
            PaneId::Journal => "journal",
            PaneId::Offsets => "offsets",
            PaneId::Consumers => "consumers",
            PaneId::Groups => "groups",
            PaneId::Pending => "pending",
            PaneId::Events => "events",
            PaneId::Caption => "caption",
            PaneId::Clients => "clients",
        }
    }

    /// The pane named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// What a pane needs besides the snapshot: language, theme, whether it has
/// the focus, its scroll position, the selected row and whose eyes the
/// batches are seen through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaneContext {
    pub lang: Lang,
    pub theme: Theme,
    pub focused: bool,
    /// Rows scrolled from the natural position (the top, or for lists that
    /// follow new data, the bottom).
    pub scroll: usize,
    /// The selected row, if the pane has a selection.
    pub selected: Option<usize>,
    /// The consumer the partitions pane marks batches for (the `i` key).
    pub isolation: Isolation,
    /// The partition the last step touched (an index into the snapshot's
    /// partitions): the panes that list partitions mark it ([`touched`]).
    pub touched: Option<usize>,
}

/// A pane over a snapshot, as a ratatui [`Widget`]: what a frame draws in
/// each of its rectangles, and what the frame's map asks of it (how many
/// rows it has at a size, which batches' values it shows).
#[derive(Debug, Clone, Copy)]
pub struct Pane<'a> {
    pub id: PaneId,
    pub view: &'a Snapshot,
    /// The values of the batches drawn that `view` does not carry (read
    /// for the frame beside it, [`Values`]).
    pub values: &'a Values,
    pub ctx: PaneContext,
}

impl Pane<'_> {
    /// How many rows the pane has in `area` (the whole pane) when they wrap
    /// at its width: what its scrolling can reach. None for the panes that
    /// count their scrolling in their own unit (partitions, frames, rows).
    pub fn rows(&self, area: Rect) -> Option<usize> {
        let count = match self.id {
            PaneId::Caption => caption::row_count,
            PaneId::Consumers => consumers::row_count,
            PaneId::Clients => clients::row_count,
            _ => return None,
        };
        Some(count(self.view, &self.ctx, area))
    }

    /// The scroll, in the pane's own unit, at which the pane in `area`
    /// (the whole pane) shows partition `p` whole where it can: the
    /// smallest, so the partitions before it stay in view while they fit
    /// (docs/dashboard.md "Following the step"). None for the panes that
    /// do not list partitions; the partitions pane's scroll is its anchor,
    /// `p` itself.
    pub fn scroll_to(&self, area: Rect, p: usize) -> Option<usize> {
        let (view, ctx) = (self.view, &self.ctx);
        match self.id {
            PaneId::Partitions => Some(p),
            PaneId::Log => Some(log::scroll_to(view, ctx, area, p)),
            PaneId::Consumers => Some(consumers::scroll_to(view, ctx, area, p)),
            PaneId::Replicas => Some(replicas::scroll_to(view, area, p)),
            PaneId::Watermarks => Some(watermarks::scroll_to(view, area, p)),
            _ => None,
        }
    }

    /// The batches whose values the pane in `area` shows (see
    /// [`partitions::visible_batches`]).
    pub fn visible_batches(&self, area: Rect) -> Vec<crate::session::snapshot::build::Wanted> {
        match self.id {
            PaneId::Partitions => partitions::visible_batches(self.view, &self.ctx, area),
            PaneId::Log => log::visible_batches(self.view, &self.ctx, area),
            _ => Vec::new(),
        }
    }
}

impl Widget for Pane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        render_with(self.id, self.view, self.values, &self.ctx, area, buf);
    }
}

/// How far a pane whose content has no cheap count scrolls at most (panes
/// clip what they draw anyway).
const MAX_SCROLL: usize = 10_000;

/// How far pane `pane` scrolls in its own unit (partitions, frames, rows),
/// from what `view` holds: past it the pane would show nothing new.
pub fn scroll_limit(pane: PaneId, view: &Snapshot) -> usize {
    let last = |n: usize| n.saturating_sub(1);
    match pane {
        PaneId::Partitions | PaneId::Replicas | PaneId::Watermarks | PaneId::Log => {
            last(view.partitions.len())
        }
        PaneId::Journal => last(view.journal.tail.len().min(TAIL)),
        PaneId::Events => {
            last(view.events.len() + view.errors.len() + view.changes.sentences.len())
        }
        PaneId::Pending => last(view.pending.len()),
        PaneId::Groups => last(groups::row_count(view)),
        PaneId::Offsets => {
            let staged: usize = view
                .transactions
                .iter()
                .filter(|t| t.state.is_unstable() && !t.staged_offsets.is_empty())
                .map(|t| 1 + t.staged_offsets.values().map(|m| m.len()).sum::<usize>())
                .sum();
            let committed: usize = view.committed_offsets.values().map(|m| m.len()).sum();
            last(staged.max(1) + 1 + committed)
        }
        // Wrapped rows: at most one row per value or character.
        PaneId::Consumers => last(
            view.consumers
                .read_uncommitted
                .values()
                .map(|v| 1 + v.len())
                .sum(),
        ),
        PaneId::Caption => view.caption.as_ref().map_or(0, |c| {
            c.text("en")
                .chars()
                .count()
                .max(c.text("zh").chars().count())
        }),
        // A pane added to `PaneId` scrolls freely until it says its limit
        // here (panes clip what they draw).
        #[allow(unreachable_patterns)]
        _ => MAX_SCROLL,
    }
}

/// Draws pane `id`, the batches' values those `view` carries.
pub fn render(id: PaneId, view: &Snapshot, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    render_with(id, view, Values::none(), ctx, area, buf);
}

/// Draws pane `id`, the batches' values those of `values`, else those
/// `view` carries.
pub fn render_with(
    id: PaneId,
    view: &Snapshot,
    values: &Values,
    ctx: &PaneContext,
    area: Rect,
    buf: &mut Buffer,
) {
    let area = area.intersection(buf.area);
    match id {
        PaneId::Log => log::render(view, values, ctx, area, buf),
        PaneId::Partitions => partitions::render(view, values, ctx, area, buf),
        PaneId::Replicas => replicas::render(view, ctx, area, buf),
        PaneId::Watermarks => watermarks::render(view, ctx, area, buf),
        PaneId::Journal => journal::render(view, ctx, area, buf),
        PaneId::Offsets => offsets::render(view, ctx, area, buf),
        PaneId::Consumers => consumers::render(view, ctx, area, buf),
        PaneId::Groups => groups::render(view, ctx, area, buf),
        PaneId::Pending => pending::render(view, ctx, area, buf),
        PaneId::Events => events::render(view, ctx, area, buf),
        PaneId::Caption => caption::render(view, ctx, area, buf),
        PaneId::Clients => clients::render(view, ctx, area, buf),
    }
}

/// Draws the pane's bordered block titled with its translated name and
/// returns the area inside it.
fn frame(ctx: &PaneContext, pane: PaneId, area: Rect, buf: &mut Buffer) -> Rect {
    frame_with(ctx, pane, None, area, buf)
}

/// For a cluster with no topic yet (`mk-tui serve` or `--listen` before a
/// client creates one, or an observed cluster without any): says so in the
/// pane, dim, instead of leaving it blank or drawing a legend of nothing.
/// True when it did, and the pane draws nothing else.
fn no_topics(view: &Snapshot, ctx: &PaneContext, inner: Rect, buf: &mut Buffer) -> bool {
    if !view.partitions.is_empty() || inner.is_empty() {
        return false;
    }
    // An observation before its first answer knows no partitions yet:
    // "no topics" would be a claim about the cluster.
    let key = if view.lacks(crate::session::snapshot::field::PARTITIONS) {
        "nothing_observed"
    } else {
        "no_topics"
    };
    let line = Line::styled(ctx.lang.t(key), ctx.theme.dim());
    shorten(line, usize::from(inner.width)).render(Rect { height: 1, ..inner }, buf);
    true
}

/// [`frame`] with `mark` after the title, in its own style (the clients
/// pane's armed fault).
fn frame_with(
    ctx: &PaneContext,
    pane: PaneId,
    mark: Option<Span<'static>>,
    area: Rect,
    buf: &mut Buffer,
) -> Rect {
    let mut title = vec![Span::styled(
        crate::ui::glossary::pane_title(pane, ctx.lang),
        ctx.theme.title(ctx.focused),
    )];
    title.extend(mark);
    let block = Block::bordered()
        .title(Line::from(title))
        .border_type(ctx.theme.border_type(ctx.focused))
        .border_style(ctx.theme.border(ctx.focused));
    let inner = block.inner(area);
    block.render(area, buf);
    inner
}

/// Says that a list has content out of view: "↑ N more" on the top border
/// of `area` (the pane's whole rectangle, borders included) and "↓ N more"
/// on its bottom border, right-aligned, so no content row is spent on it.
/// It is drawn over border line only, never over the title: where the words
/// do not fit it shortens to "↑N", and where that does not fit either it is
/// left out. Zero draws nothing.
pub fn scroll_marks(
    lang: Lang,
    theme: Theme,
    area: Rect,
    above: usize,
    below: usize,
    buf: &mut Buffer,
) {
    let area = area.intersection(buf.area);
    if area.height < 2 || area.width < 4 {
        return;
    }
    for (n, arrow, y) in [(above, "↑", area.top()), (below, "↓", area.bottom() - 1)] {
        if n == 0 {
            continue;
        }
        let long = format!(" {arrow} {}{n}{} ", lang.t("more_pre"), lang.t("more_post"));
        let short = format!("{arrow}{n}");
        mark_border(theme, area, y, [long, short], buf);
    }
}

/// Both of [`scroll_marks`]' marks on the top border of `area`, `↑ 1
/// more ↓ 2 more` (`↑1 ↓2` where that does not fit): for a pane whose
/// bottom border is something else (the caption's timeline).
pub fn top_scroll_marks(
    lang: Lang,
    theme: Theme,
    area: Rect,
    above: usize,
    below: usize,
    buf: &mut Buffer,
) {
    let area = area.intersection(buf.area);
    if area.height < 2 || area.width < 4 || above + below == 0 {
        return;
    }
    let parts = |long: bool| {
        [(above, "↑"), (below, "↓")]
            .into_iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, arrow)| {
                if long {
                    format!("{arrow} {}{n}{}", lang.t("more_pre"), lang.t("more_post"))
                } else {
                    format!("{arrow}{n}")
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let texts = [format!(" {} ", parts(true)), parts(false)];
    mark_border(theme, area, area.top(), texts, buf);
}

/// The first of `texts` that fits in the run of plain border line left of
/// the corner on row `y` of `area`, drawn right-aligned there; none if
/// none fits.
fn mark_border(theme: Theme, area: Rect, y: u16, texts: [String; 2], buf: &mut Buffer) {
    let style = theme.title(false);
    let free = (area.left() + 1..area.right() - 1)
        .rev()
        .take_while(|&x| matches!(buf[(x, y)].symbol(), "─" | "━" | "═"))
        .count();
    let Some((text, w)) = texts
        .into_iter()
        .map(|t| {
            let w = Span::raw(t.as_str()).width();
            (t, w)
        })
        .find(|(_, w)| *w < free)
    else {
        return;
    };
    let x = area.right() - 1 - u16::try_from(w).unwrap_or(u16::MAX);
    buf.set_stringn(x, y, &text, w, style);
}

/// [`scroll_marks`] for a pane.
fn marks(ctx: &PaneContext, area: Rect, above: usize, below: usize, buf: &mut Buffer) {
    scroll_marks(ctx.lang, ctx.theme, area, above, below, buf);
}

/// The rows `start..end` of a list of `total` rows that follows new data:
/// the last `height` rows, moved up by `scroll` (clamped at the top).
fn tail_window(total: usize, height: usize, scroll: usize) -> (usize, usize) {
    let end = total.saturating_sub(scroll).max(height.min(total));
    (end.saturating_sub(height), end)
}

/// `text` in at most `max` cells: its start and `…` when it is longer
/// (wide characters count twice).
pub fn clip(text: &str, max: usize) -> String {
    if Span::raw(text).width() <= max {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = char_width(c);
        if used + w + 1 > max {
            break;
        }
        used += w;
        out.push(c);
    }
    if max > 0 {
        out.push('…');
    }
    out
}

/// The width of a column of transactional ids (or any names of any
/// length): the widest of `values`, at least `min` and at most `max`
/// cells; a longer value is [`clip`]ped to it, so the columns after it
/// stay aligned (docs/dashboard.md "Long names").
fn column_width<'v>(values: impl Iterator<Item = &'v str>, min: usize, max: usize) -> usize {
    values
        .map(|v| Span::raw(v).width())
        .fold(min, usize::max)
        .min(max)
}

/// `text` as a cell of a column `width` wide: [`clip`]ped and padded.
fn column(text: &str, width: usize) -> String {
    pad(&clip(text, width), width)
}

/// `s` padded with spaces to `width` terminal cells (wide characters count
/// twice).
fn pad(s: &str, width: usize) -> String {
    let w = Span::raw(s).width();
    format!("{s}{}", " ".repeat(width.saturating_sub(w)))
}

/// Renders `lines` top down into `area`, one row each; a line too wide is
/// [`shorten`]ed, never cut in the middle of a word.
/// Control characters (a value's newline or tab, an escape) are shown as
/// their escapes, `\n`, `\t`, `\u{1b}`, since a terminal cell cannot
/// hold them (ratatui drops them, so `a\nb` would read `ab`).
fn lines(lines: Vec<Line<'_>>, area: Rect, buf: &mut Buffer) {
    let width = usize::from(area.width);
    let lines: Vec<Line<'_>> = lines
        .into_iter()
        .map(|mut l| {
            for span in &mut l.spans {
                if let std::borrow::Cow::Owned(v) = visible(&span.content) {
                    span.content = v.into();
                }
            }
            shorten(l, width)
        })
        .collect();
    Paragraph::new(lines).render(area, buf);
}

/// `text` as a pane shows it: its control characters (a record value's
/// newline, tab or escape) written as escapes (`\n`, `\r`, `\t`,
/// `\u{1b}`), as the snapshot writes bytes that are not UTF-8 as `\xNN`.
/// A terminal cell cannot hold a control character (ratatui drops it), so
/// without this `a\nb` would read `ab`. Borrowed when there is none.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Whether `s` is printable ASCII alone (space to `~`): one terminal column
/// a byte, in every Unicode width table, and nothing [`visible`] escapes;
/// most values are, and the panes measure and cut them by their length.
pub fn printable_ascii(s: &str) -> bool {
    s.bytes().all(|b| (b' '..=b'~').contains(&b))
}

/// Whether `c` takes one terminal cell and is a grapheme of its own
/// whatever surrounds it: printable ASCII, box drawing and block elements,
/// and the glyphs the log pane draws (fates, edges, marks): a text of them
/// alone measures its number of characters. Unit tests hold each to what
/// `set_stringn` writes for it (`log::put_tests`) and to a span's width.
pub fn one_cell(c: char) -> bool {
    c == ' '
        || c.is_ascii_graphic()
        || ('\u{2500}'..='\u{259f}').contains(&c)
        || matches!(
            c,
            '✓' | '✗'
                | '…'
                | '◐'
                | '‖'
                | '↑'
                | '▵'
                | '◆'
                | '≠'
                | '✂'
                | '†'
                | '▸'
                | '◂'
                | '·'
                | '●'
                | '×'
        )
}

/// The terminal columns of `c`: what a span of `c` alone measures, without
/// making a string for it (measuring a value character by character made
/// one per character). A printable ASCII character is one column in every
/// Unicode width table, and most values are ASCII.
pub fn char_width(c: char) -> usize {
    if c == ' ' || c.is_ascii_graphic() {
        return 1;
    }
    Span::raw(&*c.encode_utf8(&mut [0; 4])).width()
}

/// `line` in `width` columns, shortened on purpose: it ends at the last
/// word that fits, followed by `…`, so a narrow pane (80x24) never shows
/// half a word without saying so. A first word longer than the line is
/// cut with `…` too (a long value). Styles are kept.
pub fn shorten<'a>(line: Line<'a>, width: usize) -> Line<'a> {
    if line.width() <= width {
        return line;
    }
    if width == 0 {
        return Line::default();
    }
    let chars: Vec<(char, ratatui::style::Style)> = line
        .spans
        .iter()
        .flat_map(|s| s.content.chars().map(move |c| (c, s.style)))
        .collect();
    // The characters that fit before the `…`.
    let (mut keep, mut used) = (0, 0);
    for (c, _) in &chars {
        let w = char_width(*c);
        if used + w > width - 1 {
            break;
        }
        used += w;
        keep += 1;
    }
    // Back to the end of the last whole word, if the cut falls in one.
    if chars.get(keep).is_some_and(|(c, _)| *c != ' ')
        && let Some(space) = chars[..keep].iter().rposition(|(c, _)| *c == ' ')
        && chars[..space].iter().any(|(c, _)| *c != ' ')
    {
        keep = space;
    }
    while keep > 0 && chars[keep - 1].0 == ' ' {
        keep -= 1;
    }
    let mut spans: Vec<Span<'static>> = Vec::new();
    for &(c, style) in &chars[..keep] {
        match spans.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push(c),
            _ => spans.push(Span::styled(c.to_string(), style)),
        }
    }
    let style = chars
        .get(keep.saturating_sub(1))
        .map_or_else(Default::default, |c| c.1);
    // A value cut to its column already ends in `…`: one says it.
    if keep == 0 || chars[keep - 1].0 != '…' {
        spans.push(Span::styled("…", style));
    }
    let mut out = Line::from(spans).style(line.style);
    out.alignment = line.alignment;
    out
}

/// A small hand-built snapshot and helpers the pane tests share.
#[cfg(test)]
pub(crate) mod testkit {
    use std::collections::BTreeMap;

    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;

    use super::{PaneContext, PaneId};
    use crate::session::recording::Caption;
    use crate::session::snapshot::{
        BatchKind, BatchSnapshot, BrokerSnapshot, CompletionSnapshot, Consumers, ControlKind,
        ErrorSnapshot, EventSnapshot, Fate, Isolation, JournalFrameSnapshot, JournalSnapshot,
        MarkerSnapshot, PartitionSnapshot, PendingSnapshot, RecordSnapshot, RecoverySnapshot,
        ReplicaBatch, ReplicaSnapshot, Snapshot, TransactionSnapshot, TxnState,
    };
    use crate::ui::i18n::Lang;
    use crate::ui::theme::Theme;

    pub fn batch(
        base: i64,
        last: i64,
        txn: Option<&str>,
        control: Option<ControlKind>,
        fate: Fate,
        values: &[&str],
        why: &str,
    ) -> BatchSnapshot {
        BatchSnapshot {
            base_offset: base,
            last_offset: last,
            kind: if control.is_some() {
                BatchKind::Control
            } else {
                BatchKind::Data
            },
            control,
            transactional_id: txn.map(str::to_string),
            producer_id: if txn.is_some() { 7 } else { -1 },
            producer_epoch: 0,
            base_sequence: 0,
            leader_epoch: 0,
            fate,
            explanation: why.to_string(),
            explanation_zh: String::new(),
            records: values
                .iter()
                .zip(base..)
                .map(|(v, offset)| RecordSnapshot::new(offset, None, Some(v.to_string())))
                .collect(),
            compacted: 0,
        }
    }

    /// A replica holding the leader's `batches` below its LEO.
    pub fn replica(
        broker: u32,
        leo: i64,
        lag: i64,
        in_sync: bool,
        stopped: bool,
        batches: &[BatchSnapshot],
    ) -> ReplicaSnapshot {
        ReplicaSnapshot {
            broker,
            is_leader: broker == 1,
            log_end_offset: leo,
            lag,
            ms_since_fetch: 40 * u64::from(broker),
            in_sync,
            stopped,
            log: batches
                .iter()
                .filter(|b| b.last_offset < leo)
                .map(|b| ReplicaBatch {
                    base_offset: b.base_offset,
                    last_offset: b.last_offset,
                    leader_epoch: b.leader_epoch,
                    control: b.control,
                    crc: b.base_offset as u32,
                    divergent: false,
                    records: Vec::new(),
                })
                .collect(),
            offset_lag: None,
            log_size_bytes: None,
        }
    }

    /// One partition `out-0`: a committed batch (0), an aborted one (1), its
    /// ABORT marker (2), an ongoing transaction (3-4) and one above HW (5).
    pub fn view() -> Snapshot {
        let batches = vec![
            batch(
                0,
                0,
                None,
                None,
                Fate::Committed,
                &["a"],
                "offset 0 < LSO 3: plain data",
            ),
            batch(
                1,
                1,
                Some("txn-c"),
                None,
                Fate::Aborted,
                &["x"],
                "aborted by the marker at offset 2",
            ),
            batch(
                2,
                2,
                Some("txn-c"),
                Some(ControlKind::Abort),
                Fate::Control,
                &[],
                "ABORT marker of txn-c",
            ),
            batch(
                3,
                4,
                Some("txn-a"),
                None,
                Fate::Ongoing,
                &["b", "c"],
                "offset 3 >= LSO 3: txn-a is ONGOING",
            ),
            batch(
                5,
                5,
                None,
                None,
                Fate::AboveHighWatermark,
                &["d"],
                "offset 5 >= HW 5",
            ),
        ];
        let staged = BTreeMap::from([("g1".to_string(), BTreeMap::from([("out-0".into(), 4)]))]);
        let frame = |number: usize, id: &str, state| JournalFrameSnapshot {
            number,
            offset: 60 * (number as u64 - 1),
            len: 60,
            crc: 0xab12,
            data: TransactionSnapshot {
                id: id.to_string(),
                state,
                partitions: vec!["out-0".into()],
                first_offsets: BTreeMap::from([("out-0".into(), 1)]),
                staged_offsets: BTreeMap::new(),
                producer_id: None,
                producer_epoch: None,
                next_producer_epoch: None,
            },
        };
        Snapshot {
            step: 8,
            total_steps: Some(12),
            clock_ms: 1500,
            rules: "kafka".into(),
            title: "demo".into(),
            brokers: (1..=3)
                .map(|id| BrokerSnapshot {
                    id,
                    stopped: id == 3,
                })
                .collect(),
            partitions: vec![PartitionSnapshot {
                topic: "out".into(),
                config: Default::default(),
                partition: 0,
                leader: 1,
                leader_epoch: 0,
                isr: vec![1, 2],
                log_start_offset: 0,
                high_watermark: 5,
                last_stable_offset: 3,
                log_end_offset: 6,
                replicas: vec![
                    replica(1, 6, 0, true, false, &batches),
                    replica(2, 5, 1, true, false, &batches),
                    replica(3, 2, 4, false, true, &batches),
                ],
                batch_count: 5,
                batches,
            }],
            transactions: vec![TransactionSnapshot {
                id: "txn-a".into(),
                state: TxnState::Ongoing,
                partitions: vec!["out-0".into()],
                first_offsets: BTreeMap::from([("out-0".into(), 3)]),
                staged_offsets: staged,
                producer_id: None,
                producer_epoch: None,
                next_producer_epoch: None,
            }],
            committed_offsets: BTreeMap::from([(
                "g1".to_string(),
                BTreeMap::from([("out-0".into(), 1)]),
            )]),
            groups: Vec::new(),
            journal: JournalSnapshot {
                frames: 3,
                bytes: 180,
                tail: vec![
                    frame(1, "txn-c", TxnState::Ongoing),
                    frame(2, "txn-c", TxnState::CompleteAbort),
                    frame(3, "txn-a", TxnState::Ongoing),
                ],
            },
            last_recovery: Some(RecoverySnapshot {
                journal_truncated_bytes: 17,
                journal_reason: None,
                logs_truncated: vec![],
                leaders_reelected: vec![],
                completed: vec!["txn-b".into()],
                completions: vec![CompletionSnapshot {
                    id: "txn-b".into(),
                    from: TxnState::PrepareCommit,
                    to: TxnState::CompleteCommit,
                }],
                markers_resent: vec![MarkerSnapshot {
                    txn: "txn-b".into(),
                    partition: "out-0".into(),
                    control: ControlKind::Commit,
                    offset: 9,
                }],
                left_open: vec![],
                swaps_repaired: vec![],
            }),
            consumers: Consumers {
                read_uncommitted: BTreeMap::from([(
                    "out-0".into(),
                    vec![
                        Some("a".into()),
                        Some("x".into()),
                        Some("b".into()),
                        Some("c".into()),
                    ],
                )]),
                read_committed: BTreeMap::from([("out-0".into(), vec![Some("a".into())])]),
                counts: BTreeMap::new(),
            },
            pending: vec![
                PendingSnapshot {
                    action_step: 7,
                    kind: "commit".into(),
                    txn: Some("txn-a".into()),
                    waiting_for: vec![2, 3],
                    queued_behind: None,
                    crash_after: None,
                    batches: vec![crate::session::snapshot::PendingBatch {
                        partition: "out-0".into(),
                        base_offset: 3,
                        last_offset: 4,
                        control: None,
                    }],
                },
                PendingSnapshot {
                    action_step: 8,
                    kind: "abort".into(),
                    txn: Some("txn-a".into()),
                    waiting_for: vec![],
                    queued_behind: Some(7),
                    crash_after: None,
                    batches: Vec::new(),
                },
            ],
            events: vec![
                EventSnapshot {
                    step: 5,
                    text: "produced b, c".into(),
                    zh: String::new(),
                },
                EventSnapshot {
                    step: 7,
                    text: "commit txn-a pending".into(),
                    zh: String::new(),
                },
            ],
            errors: vec![ErrorSnapshot {
                step: 6,
                message: "broker 3 is stopped".into(),
                code: "BrokerNotAvailable".into(),
                zh: String::new(),
            }],
            caption: Some(Caption::Bilingual {
                en: "The LSO stops at the open transaction.".into(),
                zh: "LSO 停在未决事务处。".into(),
            }),
            captioned_steps: vec![2, 5, 8],
            present: Vec::new(),
            changes: Default::default(),
            moment_of_death: None,
            before_recovery: false,
            listeners: Vec::new(),
            clients: Vec::new(),
            client_log: Vec::new(),
            fault_armed: None,
            accumulators: Vec::new(),
            unavailable: Vec::new(),
        }
    }

    pub fn ctx() -> PaneContext {
        PaneContext {
            lang: Lang::En,
            theme: Theme::colored(),
            focused: true,
            scroll: 0,
            selected: None,
            isolation: Isolation::ReadCommitted,
            touched: None,
        }
    }

    /// The buffer's rows as text (the cell a wide character hides is
    /// skipped).
    pub fn text(buf: &Buffer) -> String {
        let a = buf.area;
        let row = |y| {
            let (mut s, mut x) = (String::new(), a.left());
            while x < a.right() {
                let sym = buf[(x, y)].symbol();
                s.push_str(sym);
                x += (ratatui::text::Span::raw(sym).width() as u16).max(1);
            }
            s
        };
        (a.top()..a.bottom())
            .map(row)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Pane `id` drawn into a `w` x `h` buffer, as text.
    pub fn draw(id: PaneId, view: &Snapshot, ctx: &PaneContext, w: u16, h: u16) -> String {
        let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
        super::render(id, view, ctx, buf.area, &mut buf);
        text(&buf)
    }
}

#[cfg(test)]
mod tests {
    /// The width of one character is what a span of it alone measures,
    /// printable ASCII (the fast path), wide, combining and control
    /// characters alike.
    #[test]
    fn a_characters_width_is_its_spans() {
        for c in (' '..='~').chain(['é', '中', '…', '●', '\u{301}', '\u{7}', '\t', '🙂']) {
            assert_eq!(
                super::char_width(c),
                ratatui::text::Span::raw(c.to_string()).width(),
                "{c:?}"
            );
        }
    }

    /// A one-cell character measures one column alone, and a text of
    /// them (each its own grapheme) its number of characters, as a span
    /// measures them: what the log cell's `width` and `fit` count by.
    #[test]
    fn one_cell_characters_measure_one_column_each() {
        let chars: Vec<char> = (' '..='\u{2fff}').filter(|&c| super::one_cell(c)).collect();
        for &c in &chars {
            assert_eq!(super::char_width(c), 1, "{c:?}");
        }
        let run: String = chars.iter().collect();
        assert_eq!(ratatui::text::Span::raw(&run).width(), chars.len());
        for pair in chars.windows(2) {
            let two: String = pair.iter().collect();
            assert_eq!(ratatui::text::Span::raw(&two).width(), 2, "{two:?}");
        }
    }

    use super::testkit::{ctx, draw, view};
    use super::*;
    use crate::session::snapshot::Fate;

    /// A cluster with no topic (a fresh `mk-tui serve`, an observed empty
    /// cluster) says so, dim, in each pane that lists partitions, instead
    /// of a blank pane or the Log pane's legend of nothing.
    #[test]
    fn no_topics_yet_in_every_pane_that_lists_partitions() {
        let empty = Snapshot {
            partitions: vec![],
            ..view()
        };
        for id in [
            PaneId::Partitions,
            PaneId::Replicas,
            PaneId::Log,
            PaneId::Consumers,
        ] {
            let mut buf = Buffer::empty(Rect::new(0, 0, 40, 6));
            super::render(id, &empty, &ctx(), buf.area, &mut buf);
            let text = testkit::text(&buf);
            let line = text.lines().nth(1).unwrap();
            assert!(line.starts_with("│no topics yet"), "{id:?}:\n{text}");
            assert!(!text.contains("stable"), "{id:?}: no legend\n{text}");
            let dim = ctx().theme.dim().fg;
            assert!(dim.is_some(), "the test's theme has colour");
            assert_eq!(buf[(1, 1)].style().fg, dim, "{id:?}");
            let mut unseen = empty.clone();
            unseen
                .unavailable
                .push(crate::session::snapshot::field::PARTITIONS.into());
            let text = draw(id, &unseen, &ctx(), 40, 6);
            let line = text.lines().nth(1).unwrap();
            assert!(line.starts_with("│nothing observed yet"), "{id:?}:\n{text}");
            let full = draw(id, &view(), &ctx(), 40, 6);
            assert!(!full.contains("no topics yet"), "{id:?}:\n{full}");
        }
    }

    #[test]
    fn tiny_areas_never_panic() {
        let (v, empty) = (
            view(),
            Snapshot {
                partitions: vec![],
                pending: vec![],
                events: vec![],
                errors: vec![],
                caption: None,
                last_recovery: None,
                ..view()
            },
        );
        let mut c = ctx();
        c.scroll = 1000;
        c.selected = Some(3);
        for id in PaneId::ALL {
            for (w, h) in [
                (0, 0),
                (10, 0),
                (0, 10),
                (1, 1),
                (3, 3),
                (4, 2),
                (5, 5),
                (12, 4),
                (200, 1),
            ] {
                draw(id, &v, &ctx(), w, h);
                draw(id, &v, &c, w, h);
                draw(id, &empty, &c, w, h);
            }
        }
        // An area outside the buffer is clipped.
        let mut buf = Buffer::empty(Rect::new(0, 0, 10, 10));
        render(
            PaneId::Partitions,
            &v,
            &c,
            Rect::new(5, 5, 40, 40),
            &mut buf,
        );
    }

    #[test]
    fn every_pane_is_titled_in_both_languages() {
        let v = view();
        for id in PaneId::ALL {
            let en = draw(id, &v, &ctx(), 80, 12);
            assert!(en.contains(Lang::En.t(id.name())), "{id:?}:\n{en}");
            let zh = draw(
                id,
                &v,
                &PaneContext {
                    lang: Lang::Zh,
                    ..ctx()
                },
                80,
                12,
            );
            assert!(zh.contains(Lang::Zh.t(id.name())), "{id:?}:\n{zh}");
        }
    }

    #[test]
    fn no_color_keeps_every_glyph() {
        let v = view();
        let plain = PaneContext {
            theme: Theme::plain(),
            ..ctx()
        };
        let text = draw(PaneId::Partitions, &v, &plain, 80, 12);
        for s in [
            Fate::Committed,
            Fate::Aborted,
            Fate::Ongoing,
            Fate::Control,
            Fate::AboveHighWatermark,
        ] {
            assert!(text.contains(Theme::fate_glyph(s)), "{s:?}:\n{text}");
        }
        let mut buf = Buffer::empty(Rect::new(0, 0, 80, 12));
        for id in PaneId::ALL {
            render(id, &v, &plain, buf.area, &mut buf);
            assert!(
                buf.content
                    .iter()
                    .all(|c| c.fg == ratatui::style::Color::Reset),
                "{id:?} coloured"
            );
        }
    }

    #[test]
    fn scroll_marks_sit_on_the_border_and_never_cover_the_title() {
        let mark = |w: u16, above, below| {
            let mut buf = Buffer::empty(Rect::new(0, 0, w, 4));
            let inner = frame(&ctx(), PaneId::Journal, buf.area, &mut buf);
            assert_eq!(inner.height, 2);
            scroll_marks(Lang::En, Theme::colored(), buf.area, above, below, &mut buf);
            super::testkit::text(&buf)
        };
        let wide = mark(40, 3, 12);
        assert!(
            wide.lines().next().unwrap().ends_with("─ ↑ 3 more ┐"),
            "{wide}"
        );
        assert!(
            wide.lines().last().unwrap().ends_with("─ ↓ 12 more ┘"),
            "{wide}"
        );
        // "Transaction journal" is 19 columns: 7 left in 28 is room for "↑3".
        let narrow = mark(28, 3, 0);
        let top = narrow.lines().next().unwrap();
        assert!(
            top.contains("Transaction journal") && top.ends_with("↑3┐"),
            "{narrow}"
        );
        assert!(
            !narrow.lines().last().unwrap().contains('↓'),
            "zero draws nothing"
        );
        let tiny = mark(21, 3, 0);
        assert!(
            tiny.contains("Transaction journal") && !tiny.contains('↑'),
            "{tiny}"
        );
    }

    #[test]
    fn a_value_already_clipped_gets_no_second_ellipsis() {
        let line = Line::raw(format!("#9 ✓ {} complete_abort", column("tx-cancel", 8)));
        let short: String = shorten(line, 18)
            .spans
            .iter()
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(short, "#9 ✓ tx-canc…");
        assert_eq!(clip("tx-cancel", 9), "tx-cancel");
        assert_eq!(clip("消息消息", 5), "消息…");
        assert_eq!(column("ab", 4), "ab  ");
    }

    #[test]
    fn top_scroll_marks_put_both_on_the_top_border() {
        let mark = |w: u16| {
            let mut buf = Buffer::empty(Rect::new(0, 0, w, 4));
            frame(&ctx(), PaneId::Caption, buf.area, &mut buf);
            top_scroll_marks(Lang::En, Theme::colored(), buf.area, 2, 1, &mut buf);
            super::testkit::text(&buf)
        };
        let wide = mark(40);
        assert!(
            wide.lines()
                .next()
                .unwrap()
                .ends_with("─ ↑ 2 more ↓ 1 more ┐"),
            "{wide}"
        );
        assert!(!wide.lines().last().unwrap().contains('↓'), "{wide}");
        let narrow = mark(20);
        assert!(
            narrow.lines().next().unwrap().ends_with("↑2 ↓1┐"),
            "{narrow}"
        );
    }

    #[test]
    fn tail_window_follows_the_bottom() {
        assert_eq!(tail_window(10, 4, 0), (6, 10));
        assert_eq!(tail_window(10, 4, 3), (3, 7));
        assert_eq!(tail_window(10, 4, 99), (0, 4));
        assert_eq!(tail_window(2, 4, 1), (0, 2));
        assert_eq!(tail_window(0, 0, 0), (0, 0));
    }
}
