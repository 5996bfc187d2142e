//! The clients pane (issue 14, `mk-tui --listen`): the Kafka listeners and
//! every client connection on them: its broker, peer address, client id,
//! requests answered, the request in flight ("Produce v9 acks=all
//! waiting" while an append waits for `r`), and the producer id, epoch and
//! transactional id InitProducerId gave it; under them, the last lines of
//! the request log. Pure over the snapshot's `listeners`, `clients` and
//! `client_log` (filled by the session from the server's registry, never
//! from the engine); a replay or a saved state has none, and says how to
//! get them.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::{PaneContext, frame, lines, marks, pad};
use crate::session::snapshot::{ClientSnapshot, Snapshot};

/// Column widths (cells) of the connection table, in order: connection,
/// broker, peer, client id, requests, in flight; the producer columns take
/// what is left.
const WIDTHS: [usize; 6] = [4, 7, 22, 14, 6, 30];

fn cell(text: String, width: usize) -> String {
    // One space between columns; a value too long keeps its start and `…`.
    let text = if Span::raw(text.as_str()).width() > width.saturating_sub(1) {
        let mut t: String = text.chars().take(width.saturating_sub(2)).collect();
        t.push('…');
        t
    } else {
        text
    };
    pad(&text, width)
}

fn header<'a>(ctx: &PaneContext) -> Line<'a> {
    let t = |k| ctx.lang.t(k).to_string();
    let names = [
        "#".to_string(),
        t("broker"),
        t("peer"),
        t("client_id"),
        t("requests"),
        t("in_flight"),
    ];
    let mut text: String = names
        .into_iter()
        .zip(WIDTHS)
        .map(|(n, w)| cell(n, w))
        .collect();
    text.push_str(&format!(
        "{} / {} / {}",
        t("producer_id"),
        t("epoch"),
        t("txn_id")
    ));
    Line::styled(text, ctx.theme.strong())
}

fn row<'a>(c: &ClientSnapshot, ctx: &PaneContext) -> Line<'a> {
    let dash = || "-".to_string();
    let values = [
        c.connection.to_string(),
        c.broker.to_string(),
        c.peer.clone(),
        if c.client_id.is_empty() {
            dash()
        } else {
            c.client_id.clone()
        },
        c.requests.to_string(),
        c.in_flight.clone().unwrap_or_else(dash),
    ];
    let mut spans: Vec<Span<'a>> = values
        .into_iter()
        .zip(WIDTHS)
        .enumerate()
        .map(|(i, (v, w))| {
            let text = cell(v, w);
            match (i, &c.in_flight) {
                // A request that waits is the lesson: in the waiting colour.
                (5, Some(what)) if what.contains("waiting") => {
                    Span::styled(text, ctx.theme.waiting())
                }
                _ => Span::raw(text),
            }
        })
        .collect();
    let producer = match (c.producer_id, c.producer_epoch) {
        (Some(id), Some(epoch)) => format!("{id} / {epoch}"),
        (Some(id), None) => format!("{id} / -"),
        _ => "- / -".to_string(),
    };
    spans.push(Span::raw(format!(
        "{producer} / {}",
        c.transactional_id.as_deref().unwrap_or("-")
    )));
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

/// The rows the pane has: listeners, header and one per connection (or
/// the line that says there are none), then the log.
fn all_rows<'a>(view: &Snapshot, ctx: &PaneContext) -> Vec<Line<'a>> {
    if view.listeners.is_empty() {
        return vec![Line::styled(ctx.lang.t("no_listeners"), ctx.theme.dim())];
    }
    let mut out = vec![listeners(view, ctx)];
    if view.clients.is_empty() {
        out.push(Line::styled(ctx.lang.t("no_clients"), ctx.theme.dim()));
    } else {
        out.push(header(ctx));
        out.extend(view.clients.iter().map(|c| row(c, ctx)));
    }
    out.extend(
        view.client_log
            .iter()
            .map(|l| Line::styled(format!("› {l}"), ctx.theme.dim())),
    );
    out
}

/// How many rows the pane has (for scrolling).
pub fn row_count(view: &Snapshot, ctx: &PaneContext, _area: Rect) -> usize {
    all_rows(view, ctx).len()
}

/// Draws the pane. The listeners and the connections come first; the log
/// under them shows its last lines that fit; `ctx.scroll` skips rows from
/// the top.
pub fn render(view: &Snapshot, ctx: &PaneContext, area: Rect, buf: &mut Buffer) {
    let inner = frame(ctx, "clients", area, buf);
    let rows = all_rows(view, ctx);
    let height = usize::from(inner.height);
    let log = view.client_log.len().min(rows.len().saturating_sub(1));
    let fixed = rows.len() - log;
    // The table first; the log's newest lines in what is left.
    let skip = ctx.scroll.min(rows.len().saturating_sub(1));
    let mut shown: Vec<Line<'_>> = rows[skip.min(fixed)..fixed].to_vec();
    let room = height.saturating_sub(shown.len());
    let log_lines = &rows[fixed..];
    let from = log_lines.len().saturating_sub(room);
    shown.extend(log_lines[from..].iter().cloned());
    let below = shown.len().saturating_sub(height);
    marks(ctx, area, skip.min(fixed), below, buf);
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
