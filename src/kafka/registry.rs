//! The server's connection registry (the `clients` pane): every open
//! connection with its broker, peer, client id, the requests it was answered
//! and the one in flight (a connection's requests are handled one at a time),
//! and the producer id, epoch and transactional id it was given by
//! InitProducerId.
//!
//! Shared by the network tasks (they open, count and close) and the driver
//! side (it marks an `acks=all` produce as waiting). It is the room's view:
//! nothing here reaches the engine or a recording. Keyed by connection
//! number (accept order), so the pane lists connections in a fixed order.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use crate::engine::config::BrokerId;
use crate::session::snapshot::ClientSnapshot;

/// A connection's number, in accept order from 1.
pub type ConnectionId = u64;

/// The registry, cheap to clone (one shared table).
#[derive(Debug, Clone, Default)]
pub struct Registry {
    inner: Arc<Mutex<Table>>,
}

#[derive(Debug, Default)]
struct Table {
    next: ConnectionId,
    open: BTreeMap<ConnectionId, ClientSnapshot>,
    /// The last request log lines, oldest first (the dashboard's, whose
    /// terminal standard error would draw over).
    lines: std::collections::VecDeque<String>,
}

/// How many log lines the registry keeps.
const KEPT_LINES: usize = 200;

impl Registry {
    fn with<T>(&self, f: impl FnOnce(&mut Table) -> T) -> T {
        f(&mut self.inner.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn entry(&self, id: ConnectionId, f: impl FnOnce(&mut ClientSnapshot)) {
        self.with(|t| {
            if let Some(c) = t.open.get_mut(&id) {
                f(c);
            }
        });
    }

    /// A connection accepted by `broker`'s listener; returns its number.
    pub fn open(&self, broker: BrokerId, peer: SocketAddr) -> ConnectionId {
        self.with(|t| {
            t.next += 1;
            let id = t.next;
            t.open.insert(
                id,
                ClientSnapshot {
                    connection: id,
                    broker,
                    peer: peer.to_string(),
                    client_id: String::new(),
                    requests: 0,
                    in_flight: None,
                    producer_id: None,
                    producer_epoch: None,
                    transactional_id: None,
                    group: None,
                },
            );
            id
        })
    }

    /// A request came in on `id`: it is in flight as `what` (`Produce v9`).
    pub fn begin(&self, id: ConnectionId, client_id: &str, what: String) {
        self.entry(id, |c| {
            if c.client_id != client_id {
                c.client_id = client_id.to_string();
            }
            c.in_flight = Some(what);
        });
    }

    /// The request in flight on `id` waits for something (`acks=all
    /// waiting`): the pane says so after its name.
    pub fn waiting(&self, id: ConnectionId, why: &str) {
        self.entry(id, |c| {
            if let Some(what) = &mut c.in_flight
                && !what.ends_with(why)
            {
                what.push(' ');
                what.push_str(why);
            }
        });
    }

    /// The request in flight on `id` was answered (or needed no answer).
    pub fn end(&self, id: ConnectionId) {
        self.entry(id, |c| {
            c.in_flight = None;
            c.requests += 1;
        });
    }

    /// InitProducerId gave `id` this producer (the transactional id when
    /// the request named one). The handlers of the transactional APIs may
    /// call it too, or [`Self::transactional_id`] alone.
    pub fn producer(
        &self,
        id: ConnectionId,
        producer_id: i64,
        epoch: i16,
        transactional_id: Option<String>,
    ) {
        self.entry(id, |c| {
            c.producer_id = Some(producer_id);
            c.producer_epoch = Some(epoch);
            if transactional_id.is_some() {
                c.transactional_id = transactional_id;
            }
        });
    }

    /// The connection uses this transactional id.
    pub fn transactional_id(&self, id: ConnectionId, txn: &str) {
        self.entry(id, |c| c.transactional_id = Some(txn.to_string()));
    }

    /// Where connection `id` comes from (its peer's address), while open.
    pub fn peer(&self, id: ConnectionId) -> Option<String> {
        self.with(|t| t.open.get(&id).map(|c| c.peer.clone()))
    }

    /// The connection closed.
    pub fn close(&self, id: ConnectionId) {
        self.with(|t| t.open.remove(&id));
    }

    /// Keeps one request log line (the oldest goes past [`KEPT_LINES`]).
    pub fn log(&self, line: String) {
        self.with(|t| {
            if t.lines.len() == KEPT_LINES {
                t.lines.pop_front();
            }
            t.lines.push_back(line);
        });
    }

    /// The last `n` log lines, oldest first.
    pub fn recent(&self, n: usize) -> Vec<String> {
        self.with(|t| {
            t.lines
                .iter()
                .skip(t.lines.len().saturating_sub(n))
                .cloned()
                .collect()
        })
    }

    /// Every open connection, in accept order.
    pub fn clients(&self) -> Vec<ClientSnapshot> {
        self.with(|t| t.open.values().cloned().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_counts_its_requests_and_shows_the_one_in_flight() {
        let r = Registry::default();
        let peer: SocketAddr = "127.0.0.1:50000".parse().unwrap();
        let a = r.open(1, peer);
        let b = r.open(2, peer);
        assert_eq!((a, b), (1, 2));
        r.begin(a, "rdkafka", "Produce v9".into());
        r.waiting(a, "acks=all waiting");
        r.waiting(a, "acks=all waiting");
        let c = &r.clients()[0];
        assert_eq!(c.client_id, "rdkafka");
        assert_eq!(c.in_flight.as_deref(), Some("Produce v9 acks=all waiting"));
        r.end(a);
        r.producer(a, 7, 2, Some("tx-1".into()));
        let c = &r.clients()[0];
        assert_eq!((c.requests, c.in_flight.as_deref()), (1, None));
        assert_eq!(
            (
                c.producer_id,
                c.producer_epoch,
                c.transactional_id.as_deref()
            ),
            (Some(7), Some(2), Some("tx-1"))
        );
        r.close(a);
        let left: Vec<u64> = r.clients().iter().map(|c| c.connection).collect();
        assert_eq!(left, [2]);
    }
}
