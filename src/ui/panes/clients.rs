//! The clients pane (`mk-tui --listen`): the Kafka listeners and every client
//! connection on them: its broker, peer address, client id, requests answered,
//! the request in flight ("Produce v9 acks=all waiting" while an append waits
//! for `r`), the producer id, epoch and transactional id InitProducerId
//! gave it, and a consumer group member's group, generation and assigned
//! partitions (good while the group is stable, waiting while it
//! rebalances; the column only while some connection is a member); under
//! them, the last lines of the request log, a connection's
//! empty fetches folded into one line ([`client_log`](super::client_log)).
//! While the dropped-response fault (`D`) is armed, the title says so in the
//! warning style. Pure over the snapshot's `listeners`, `clients`,
//! `client_log` and `fault_armed` (filled by the session from the server's
//! registry, never from the engine); a replay or a saved state has none, and
//! says how to get them.
//!
//! The table's columns are as wide as what they hold. When the pane is
//! too narrow for all of them, the headers take their short forms first,
//! then whole columns go, least telling first: peer, broker, requests,
//! client id, producer, group. The connection number and the request in flight
//! always stay (docs/dashboard.md "The clients pane").

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Block;

use super::client_log::{self, Entry};
use super::{PaneContext, clip, lines, marks, pad};
use crate::session::snapshot::{ClientSnapshot, Snapshot};

/// The table's columns, in the order they are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    Connection,
    Broker,
    Peer,
    ClientId,
    Requests,
    InFlight,
    Producer,
    Group,
}

const COLUMNS: [Column; 8] = [
    Column::Connection,
    Column::Broker,
    Column::Peer,
    Column::ClientId,
    Column::Requests,
    Column::InFlight,
    Column::Producer,
    Column::Group,
];

/// The columns that go when the pane is narrow, first to go first.
const DROP_ORDER: [Column; 6] = [
    Column::Peer,
    Column::Broker,
    Column::Requests,
    Column::ClientId,
    Column::Producer,
    Column::Group,
];

/// The widest a value is drawn before it is cut with `…` (a client id or
/// transactional id can be any length; the columns after it stay put).
const CLIENT_ID_MAX: usize = 16;
const TXN_ID_MAX: usize = 16;
const GROUP_MAX: usize = 32;

impl Column {
    fn header(self, ctx: &PaneContext, short: bool) -> String {
        let t = |k| ctx.lang.t(k).to_string();
        match self {
            Column::Connection => "#".into(),
            Column::Broker => t("broker"),
            Column::Peer => t("peer"),
            Column::ClientId => t("client_id"),
            Column::Requests => t("requests"),
            Column::InFlight => t("in_flight"),
            Column::Producer if short => t("producer_short"),
            Column::Producer => format!("{} / {} / {}", t("producer_id"), t("epoch"), t("txn_id")),
            Column::Group if short => t("group_short"),
            Column::Group => t("group_long"),
        }
    }

    fn value(self, c: &ClientSnapshot) -> String {
        let dash = || "-".to_string();
        match self {
            Column::Connection => c.connection.to_string(),
            Column::Broker => c.broker.to_string(),
            Column::Peer => c.peer.clone(),
            Column::ClientId if c.client_id.is_empty() => dash(),
            Column::ClientId => clip(&c.client_id, CLIENT_ID_MAX),
            Column::Requests => c.requests.to_string(),
            Column::InFlight => c.in_flight.clone().unwrap_or_else(dash),
            Column::Producer => {
                let producer = match (c.producer_id, c.producer_epoch) {
                    (Some(id), Some(epoch)) => format!("{id} / {epoch}"),
                    (Some(id), None) => format!("{id} / -"),
                    _ => "- / -".to_string(),
                };
                let txn = c
                    .transactional_id
                    .as_deref()
                    .map_or_else(dash, |t| clip(t, TXN_ID_MAX));
                format!("{producer} / {txn}")
            }
            // `g / 3 / t-0,t-3`: the group, its generation, what the leader
            // assigned this member.
            Column::Group => match &c.group {
                None => dash(),
                Some(g) => {
                    let assigned = if g.assignment.is_empty() {
                        dash()
                    } else {
                        g.assignment.join(",")
                    };
                    clip(
                        &format!("{} / {} / {assigned}", g.group, g.generation),
                        GROUP_MAX,
                    )
                }
            },
        }
    }
}

/// The columns drawn in `width` cells and each one's width: every column
/// if they fit with long headers, else with short headers, else without
/// the columns of [`DROP_ORDER`], one more at a time. The request in
/// flight, last resort, is cut to what is left.
fn columns(view: &Snapshot, ctx: &PaneContext, width: usize) -> (Vec<(Column, usize)>, bool) {
    let sized = |shown: &[Column], short: bool| -> Vec<(Column, usize)> {
        shown
            .iter()
            .map(|&col| {
                let values = view.clients.iter().map(|c| Span::raw(col.value(c)).width());
                let header = Span::raw(col.header(ctx, short)).width();
                (col, values.fold(header, usize::max))
            })
            .collect()
    };
    // One space between columns.
    let need = |cols: &[(Column, usize)]| {
        cols.iter().map(|(_, w)| w).sum::<usize>() + cols.len().saturating_sub(1)
    };
    let mut shown = COLUMNS.to_vec();
    // The group column only while a connection is a group member (serve's
    // consumers): every other session keeps its columns.
    if view.clients.iter().all(|c| c.group.is_none()) {
        shown.retain(|&c| c != Column::Group);
    }
    for short in [false, true] {
        let cols = sized(&shown, short);
        if need(&cols) <= width {
            return (cols, short);
        }
    }
    for gone in DROP_ORDER {
        shown.retain(|&c| c != gone);
        let cols = sized(&shown, true);
        if need(&cols) <= width {
            return (cols, true);
        }
    }
    // Only the connection and the request in flight: the request gets
    // what is left.
    let mut cols = sized(&shown, true);
    let first = cols[0].1 + 1;
    if let Some(last) = cols.last_mut() {
        last.1 = width.saturating_sub(first).max(1);
    }
    (cols, true)
}

/// One cell: `text` cut to `width` with `…`, padded to it, and the space
/// after it unless it is the last.
fn cell(text: &str, width: usize, last: bool) -> String {
    let text = pad(&clip(text, width), width);
    if last { text } else { format!("{text} ") }
}

fn header<'a>(cols: &[(Column, usize)], short: bool, ctx: &PaneContext) -> Line<'a> {
    let text: String = cols
        .iter()
        .enumerate()
        .map(|(i, &(col, w))| cell(&col.header(ctx, short), w, i + 1 == cols.len()))
        .collect();
    Line::styled(text, ctx.theme.strong())
}

fn row<'a>(c: &ClientSnapshot, cols: &[(Column, usize)], ctx: &PaneContext) -> Line<'a> {
    let spans: Vec<Span<'a>> = cols
        .iter()
        .enumerate()
        .map(|(i, &(col, w))| {
            let text = cell(&col.value(c), w, i + 1 == cols.len());
            match (col, &c.in_flight) {
                // A request that waits is the lesson: in the waiting colour.
                (Column::InFlight, Some(what)) if what.contains("waiting") => {
                    Span::styled(text, ctx.theme.waiting())
                }
                // A member whose group rebalances waits for its assignment;
                // a stable one has it.
                (Column::Group, _) => match &c.group {
                    Some(g) if g.state == "Stable" => Span::styled(text, ctx.theme.good()),
                    Some(_) => Span::styled(text, ctx.theme.waiting()),
                    None => Span::raw(text),
                },
                _ => Span::raw(text),
            }
        })
        .collect();
    Line::from(spans)
}

/// The listeners on one line: `listening: 1 127.0.0.1:9092 · 2 … closed`.
fn listeners<'a>(view: &Snapshot, ctx: &PaneContext) -> Line<'a> {
    let mut spans = vec![Span::styled(
        format!("{}: ", ctx.lang.t("listening")),
        ctx.theme.dim(),
    )];
    for (i, l) in view.listeners.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", ctx.theme.dim()));
        }
        if l.open {
            spans.push(Span::styled(
                format!("{} {}", l.broker, l.address),
                ctx.theme.good(),
            ));
        } else {
            spans.push(Span::styled(
                format!("{} {} {}", l.broker, l.address, ctx.lang.t("closed")),
                ctx.theme.bad(),
            ));
        }
    }
    Line::from(spans)
}

/// One line of the folded request log: the server's lines as they are,
/// a run of empty fetches dimmed (`Fetch v11 ×37, empty (read_committed)`)
/// so the produces and transactions between them stand out.
fn log_line<'a>(entry: &Entry, ctx: &PaneContext) -> Line<'a> {
    match entry {
        Entry::Line(l) => Line::from(vec![
            Span::styled("› ", ctx.theme.dim()),
            Span::raw(l.clone()),
        ]),
        Entry::EmptyFetches {
            first, count: 1, ..
        } => Line::styled(format!("› {first}"), ctx.theme.dim()),
        Entry::EmptyFetches {
            connection,
            request,
            isolation,
            count,
            ..
        } => Line::styled(
            format!(
                "› {connection}: {request} ×{count}, {} ({isolation})",
                ctx.lang.t("empty_fetches")
            ),
            ctx.theme.dim(),
        ),
    }
}

/// The log lines shown in `room` rows, oldest first: the newest that fit,
/// but when not all do, the folded empty fetches give way first (oldest
/// first), so a Produce or an EndTxn stays in view under a consumer that
/// polls.
fn log_window(entries: &[Entry], room: usize) -> Vec<&Entry> {
    let mut keep: Vec<bool> = vec![true; entries.len()];
    let mut extra = entries.len().saturating_sub(room);
    for (i, e) in entries.iter().enumerate() {
        if extra == 0 {
            break;
        }
        if matches!(e, Entry::EmptyFetches { .. }) {
            keep[i] = false;
            extra -= 1;
        }
    }
    let kept: Vec<&Entry> = entries
        .iter()
        .zip(keep)
        .filter_map(|(e, k)| k.then_some(e))
        .collect();
    let from = kept.len().saturating_sub(room);
    kept[from..].to_vec()
}

/// The rows of the table in `width` columns: listeners, header and one
/// per connection (or the line that says there are none).
fn table_rows<'a>(view: &Snapshot, ctx: &PaneContext, width: usize) -> Vec<Line<'a>> {
    if view.listeners.is_empty() {
        return vec![Line::styled(ctx.lang.t("no_listeners"), ctx.theme.dim())];
    }
    let mut out = vec![listeners(view, ctx)];
    if view.clients.is_empty() {
        out.push(Line::styled(ctx.lang.t("no_clients"), ctx.theme.dim()));
    } else {
        let (cols, short) = columns(view, ctx, width);
        out.push(header(&cols, short, ctx));
        out.extend(view.clients.iter().map(|c| row(c, &cols, ctx)));
    }
    out
}

/// The folded log (none without listeners).
fn log_entries(view: &Snapshot) -> Vec<Entry> {
    if view.listeners.is_empty() {
        return Vec::new();
    }
    client_log::fold(&view.client_log)
}

/// How many rows the pane has (for scrolling).
pub fn row_count(view: &Snapshot, ctx: &PaneContext, area: Rect) -> usize {
    let width = Block::bordered().inner(area).width;
    table_rows(view, ctx, usize::from(width)).len() + log_entries(view).len()
}

/// The title's mark while the dropped-response fault is armed, in the
/// warning style: in words where they fit beside the title, else short.
fn fault_mark<'a>(view: &Snapshot, ctx: &PaneContext, area: Rect) -> Option<Span<'a>> {
    view.fault_armed.as_ref()?;
    let room = usize::from(area.width).saturating_sub(4 + Span::raw(ctx.lang.t("clients")).width());
    let long = format!(" {} ", ctx.lang.t("fault_armed_long"));
    let short = format!(" {} ", ctx.lang.t("fault_armed_short"));
    let text = [long, short]
        .into_iter()
        .find(|t| Span::raw(t.as_str()).width() <= room)?;
    Some(Span::styled(text, ctx.theme.warning()))
}

/// Draws the pane. The listeners and the connections come first; the log
/// under them shows its last lines that fit; `ctx.scroll` skips rows from
/// the top.
pub fn render(view: &Snapshot, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let mark = fault_mark(view, ctx, area);
    let inner = super::frame_with(ctx, super::PaneId::Clients, mark, area, buf);
    let table = table_rows(view, ctx, usize::from(inner.width));
    let entries = log_entries(view);
    let height = usize::from(inner.height);
    // The table first (`ctx.scroll` skips its rows); the log in what is
    // left.
    let skip = ctx.scroll.min(table.len().saturating_sub(1));
    let mut shown: Vec<Line<'_>> = table[skip..].to_vec();
    let room = height.saturating_sub(shown.len());
    let log = log_window(&entries, room);
    let below = shown.len().saturating_sub(height);
    shown.extend(log.into_iter().map(|e| log_line(e, ctx)));
    marks(ctx, area, skip, below, buf);
    shown.truncate(height);
    lines(shown, inner, buf);
}

#[cfg(test)]
mod tests {
    use super::super::PaneId;
    use super::super::testkit::{ctx, draw, view};
    use crate::session::snapshot::{ClientSnapshot, ListenerSnapshot, Snapshot};

    pub fn with_clients() -> Snapshot {
        Snapshot {
            listeners: vec![
                ListenerSnapshot {
                    broker: 1,
                    address: "127.0.0.1:9092".into(),
                    open: true,
                },
                ListenerSnapshot {
                    broker: 2,
                    address: "127.0.0.1:9093".into(),
                    open: false,
                },
            ],
            clients: vec![
                ClientSnapshot {
                    connection: 1,
                    broker: 1,
                    peer: "127.0.0.1:50686".into(),
                    client_id: "rdkafka".into(),
                    requests: 12,
                    in_flight: Some("Produce v9 acks=all waiting".into()),
                    producer_id: None,
                    producer_epoch: None,
                    transactional_id: None,
                    group: None,
                },
                ClientSnapshot {
                    connection: 2,
                    broker: 1,
                    peer: "127.0.0.1:50690".into(),
                    client_id: "tx-app".into(),
                    requests: 4,
                    in_flight: None,
                    producer_id: Some(7),
                    producer_epoch: Some(1),
                    transactional_id: Some("tx-1".into()),
                    group: None,
                },
            ],
            client_log: vec![
                "broker 1 127.0.0.1:50686: Metadata v12 from client \"rdkafka\": 1 topic(s)".into(),
            ],
            ..view()
        }
    }

    #[test]
    fn each_connection_with_its_request_in_flight_and_its_producer() {
        let text = draw(PaneId::Clients, &with_clients(), &ctx(), 130, 8);
        assert!(
            text.contains("listening: 1 127.0.0.1:9092 · 2 127.0.0.1:9093 closed"),
            "{text}"
        );
        assert!(text.contains("Produce v9 acks=all waiting"), "{text}");
        assert!(text.contains("7 / 1 / tx-1"), "{text}");
        assert!(text.contains("- / - / -"), "{text}");
        assert!(
            text.contains("› broker 1 127.0.0.1:50686: Metadata v12"),
            "{text}"
        );
    }

    /// The row of connection 1 (the one whose produce waits).
    fn waiting_row(text: &str) -> &str {
        text.lines()
            .find(|l| l.starts_with("│1 "))
            .unwrap_or_else(|| panic!("no row of connection 1:\n{text}"))
    }

    #[test]
    fn a_narrow_pane_drops_whole_columns_and_keeps_the_request_in_flight() {
        let v = with_clients();
        // Wide: every column, long headers.
        let wide = draw(PaneId::Clients, &v, &ctx(), 130, 8);
        assert!(wide.contains("producer id / epoch / txn id"), "{wide}");
        assert!(wide.contains("127.0.0.1:50686"), "{wide}");
        // 80 columns: short headers, the peer gone, the rest whole.
        let at_80 = draw(PaneId::Clients, &v, &ctx(), 80, 8);
        let row = waiting_row(&at_80);
        assert!(row.contains("Produce v9 acks=all waiting"), "{at_80}");
        assert!(
            !at_80.contains("127.0.0.1:50686 "),
            "peer dropped:\n{at_80}"
        );
        assert!(at_80.contains("pid / epoch / txn"), "{at_80}");
        assert!(at_80.contains("7 / 1 / tx-1"), "{at_80}");
        assert!(!row.contains('…'), "nothing cut: {row}");
        // 40 columns: only the connection and its request in flight.
        let at_40 = draw(PaneId::Clients, &v, &ctx(), 40, 8);
        assert!(
            waiting_row(&at_40).contains("1 Produce v9 acks=all waiting"),
            "{at_40}"
        );
        // Narrower than the request: cut with `…`, never dropped.
        let at_20 = draw(PaneId::Clients, &v, &ctx(), 20, 8);
        assert!(
            waiting_row(&at_20).contains("1 Produce v9 acks…"),
            "{at_20}"
        );
    }

    #[test]
    fn columns_stay_aligned_with_a_long_transactional_id() {
        let mut v = with_clients();
        v.clients[1].transactional_id = Some("order-service-transactions-eu-west-1".into());
        v.clients[1].client_id = "a-very-long-client-id-from-spring".into();
        let text = draw(PaneId::Clients, &v, &ctx(), 130, 8);
        let col = |l: &str, what: &str| l.find(what).map(|i| l[..i].chars().count());
        let header = text.lines().find(|l| l.contains("in flight")).unwrap();
        let second = text.lines().find(|l| l.starts_with("│2 ")).unwrap();
        assert!(second.contains("a-very-long-cli…"), "{text}");
        assert!(second.contains("7 / 1 / order-service-t…"), "{text}");
        // The requests column starts where its header does in every row.
        let reqs = col(header, "reqs").unwrap();
        assert_eq!(second.chars().nth(reqs), Some('4'), "{text}");
    }

    #[test]
    fn the_title_says_while_the_fault_is_armed_in_the_warning_style() {
        use ratatui::buffer::Buffer;
        use ratatui::layout::Rect;
        let armed = Snapshot {
            fault_armed: Some("drop-produce-response".into()),
            ..with_clients()
        };
        let text = draw(PaneId::Clients, &armed, &ctx(), 80, 8);
        let top = text.lines().next().unwrap();
        assert!(
            top.contains("Clients ⚠ fault armed: the next Produce's response will be dropped"),
            "{text}"
        );
        let narrow = draw(PaneId::Clients, &armed, &ctx(), 30, 8);
        assert!(
            narrow.lines().next().unwrap().contains("⚠ fault armed"),
            "{narrow}"
        );
        assert!(!draw(PaneId::Clients, &with_clients(), &ctx(), 80, 8).contains('⚠'));
        // The mark's cells are in the warning style.
        let mut buf = Buffer::empty(Rect::new(0, 0, 80, 8));
        super::render(&armed, &ctx(), buf.area, &mut buf);
        let x = top.chars().position(|c| c == '⚠').unwrap() as u16;
        let cell = &buf[(x, 0)];
        let warning = ctx().theme.warning();
        assert_eq!(Some(cell.fg), warning.fg, "{cell:?}");
        assert!(
            cell.modifier.contains(ratatui::style::Modifier::REVERSED),
            "{cell:?}"
        );
        let title = &buf[(1, 0)];
        assert!(
            !title.modifier.contains(ratatui::style::Modifier::REVERSED),
            "{title:?}"
        );
    }

    #[test]
    fn without_listeners_it_says_how_to_open_them() {
        let text = draw(PaneId::Clients, &view(), &ctx(), 60, 4);
        assert!(text.contains("no Kafka listeners"), "{text}");
        let none = Snapshot {
            clients: vec![],
            ..with_clients()
        };
        let text = draw(PaneId::Clients, &none, &ctx(), 80, 4);
        assert!(text.contains("no client connected"), "{text}");
    }
}
