//! The listeners and connections of `mk-tui serve`: one listener per broker,
//! one task per connection, requests on a connection handled one at a time in
//! order (as a Kafka broker does: a connection's next request is read once the
//! previous one is answered).
//!
//! Each request is logged as one line on standard error: the broker, the
//! API and version, the client id and the outcome. A malformed frame, an
//! oversized request, an unknown API, a client that disconnects inside
//! a request, a request that does not arrive whole within its deadline or
//! finds no room under the cap of the requests being read
//! ([`codec::read_frame`]) closes that connection with one line; the
//! others go on.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::{Arc, mpsc};
use std::time::Duration;

use kafka_protocol::messages::{ApiKey, RequestKind, ResponseKind};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, oneshot, watch};
use tokio::task::JoinSet;

use crate::engine::config::{BrokerId, TransactionVersion};
use crate::kafka::broker::{Answer, Request};
use crate::kafka::by_version;
use crate::kafka::codec::{self, FrameError};
use crate::kafka::errors::code;
use crate::kafka::handlers::{self, api_versions, unsupported};
use crate::kafka::registry::{ConnectionId, Registry};
use crate::kafka::worker::Command;

/// SIGTERM, Ctrl-C (SIGINT), SIGHUP and SIGQUIT, listened for from the
/// moment this is made: made before `ready` is printed, so a signal sent
/// right after it is not the default kill. Each ends `serve` cleanly, which
/// then exits with 128 + its number, as every other command does (issue
/// 25: SIGTERM exited 0).
pub struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hup: tokio::signal::unix::Signal,
    #[cfg(unix)]
    quit: tokio::signal::unix::Signal,
}

impl Signals {
    /// Installs the handlers (inside the runtime).
    pub fn install() -> Result<Self, crate::session::SessionError> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let catch = |kind: SignalKind, name: &str| {
                signal(kind).map_err(|e| {
                    crate::session::SessionError::os(format!("cannot catch {name}"), e)
                })
            };
            Ok(Self {
                term: catch(SignalKind::terminate(), "SIGTERM")?,
                int: catch(SignalKind::interrupt(), "Ctrl-C")?,
                hup: catch(SignalKind::hangup(), "SIGHUP")?,
                quit: catch(SignalKind::quit(), "SIGQUIT")?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(Self {})
        }
    }

    /// Waits for one; returns its name and number.
    async fn next(&mut self) -> (&'static str, i32) {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.int.recv() => ("Ctrl-C", 2),
                _ = self.term.recv() => ("SIGTERM", 15),
                _ = self.hup.recv() => ("SIGHUP", 1),
                _ = self.quit.recv() => ("SIGQUIT", 3),
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            ("Ctrl-C", 2)
        }
    }
}

/// How a connection reaches the driver's side: the command channel, and a
/// notification for a side that waits on other things too (the dashboard's
/// loop waits on the terminal and on this).
#[derive(Debug, Clone)]
pub struct Commands {
    tx: mpsc::Sender<Command>,
    wake: Option<Arc<Notify>>,
}

impl Commands {
    /// Commands to a side that only waits on them (`mk-tui serve`).
    pub fn new(tx: mpsc::Sender<Command>) -> Self {
        Self { tx, wake: None }
    }

    /// Commands to a side that is also woken by `wake`.
    pub fn waking(tx: mpsc::Sender<Command>, wake: Arc<Notify>) -> Self {
        Self {
            tx,
            wake: Some(wake),
        }
    }

    /// Sends one command; false once the driver's side is gone.
    pub fn send(&self, command: Command) -> bool {
        let sent = self.tx.send(command).is_ok();
        if let Some(wake) = &self.wake {
            wake.notify_one();
        }
        sent
    }
}

/// What every listener and connection task shares: the way to the driver,
/// the connection registry and the gates (the brokers that are stopped,
/// whose listeners are closed).
#[derive(Debug, Clone)]
pub struct Net {
    pub commands: Commands,
    pub registry: Registry,
    pub gates: watch::Receiver<BTreeSet<BrokerId>>,
    /// Log each request on standard error (else into the registry).
    pub to_stderr: bool,
    /// Leave out the line of each request answered (`serve --quiet`): the
    /// server's own lines and a connection's errors stay.
    pub quiet: bool,
    /// The bytes of the requests being read at once, shared by every
    /// connection of every listener (`codec::MAX_READING_BYTES`).
    pub reading: codec::ReadBudget,
    /// The cluster's transaction version, finalized in ApiVersions (fixed
    /// for the cluster's life: its cluster.json keeps it).
    pub transaction_version: TransactionVersion,
}

/// Serves every listener until a signal of [`Signals`]; returns which one
/// came (its name and number).
pub async fn serve_until_signal(
    listeners: Vec<Listener>,
    net: Net,
    mut signals: Signals,
) -> (&'static str, i32) {
    let mut tasks = spawn(listeners, net);
    let signal = signals.next().await;
    tasks.abort_all();
    signal
}

/// A broker's address and its listener, `None` while the broker is
/// stopped.
pub type Listener = (BrokerId, std::net::SocketAddr, Option<TcpListener>);

/// The bound listeners, those of the `stopped` brokers closed now: before
/// a client is told the server is ready, since a connection queued on one
/// would be reset once its task closed it.
pub fn closing(
    listeners: Vec<(BrokerId, TcpListener)>,
    stopped: &BTreeSet<BrokerId>,
) -> std::io::Result<Vec<Listener>> {
    listeners
        .into_iter()
        .map(|(broker, listener)| {
            let addr = listener.local_addr()?;
            Ok((
                broker,
                addr,
                (!stopped.contains(&broker)).then_some(listener),
            ))
        })
        .collect()
}

/// One task per broker's listener (call inside the runtime).
pub fn spawn_listeners(listeners: Vec<(BrokerId, TcpListener)>, net: Net) -> JoinSet<()> {
    match closing(listeners, &BTreeSet::new()) {
        Ok(listeners) => spawn(listeners, net),
        Err(e) => {
            log(&net, 0, None, &format!("a listener has no address: {e}"));
            JoinSet::new()
        }
    }
}

fn spawn(listeners: Vec<Listener>, net: Net) -> JoinSet<()> {
    let mut tasks = JoinSet::new();
    for (broker, addr, first) in listeners {
        tasks.spawn(accept_loop(broker, addr, first, net.clone()));
    }
    tasks
}

/// How long a listener that cannot be reopened waits before trying again.
const REBIND_RETRY: Duration = Duration::from_millis(500);

/// A broker's listener: accepts while the broker runs; closed when the
/// engine stops the broker (its connections close too), reopened on the
/// same address when it starts again (issue 14 item 1).
async fn accept_loop(
    broker: BrokerId,
    addr: std::net::SocketAddr,
    first: Option<TcpListener>,
    net: Net,
) {
    // Stopped already when serving began (`first` is None): closed before
    // `ready`, and said so there.
    let mut listener = first;
    let mut gates = net.gates.clone();
    loop {
        let stopped = gates.borrow_and_update().contains(&broker);
        if stopped && listener.take().is_some() {
            log(
                &net,
                broker,
                None,
                &format!("stopped: listener on {addr} closed"),
            );
        }
        if !stopped && listener.is_none() {
            match TcpListener::bind(addr).await {
                Ok(l) => {
                    log(
                        &net,
                        broker,
                        None,
                        &format!("started: listening on {addr} again"),
                    );
                    listener = Some(l);
                }
                Err(e) => {
                    log(
                        &net,
                        broker,
                        None,
                        &format!("cannot listen on {addr} again: {e}"),
                    );
                    tokio::select! {
                        () = tokio::time::sleep(REBIND_RETRY) => {}
                        changed = gates.changed() => if changed.is_err() { return },
                    }
                    continue;
                }
            }
        }
        match &listener {
            Some(l) => tokio::select! {
                accepted = l.accept() => match accepted {
                    Ok((stream, peer)) => {
                        tokio::spawn(connection(broker, stream, peer, net.clone()));
                    }
                    Err(e) => {
                        log(&net, broker, None, &format!("accept failed: {e}"));
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                },
                changed = gates.changed() => if changed.is_err() { return },
            },
            None => {
                if gates.changed().await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Resolves once `broker` is stopped (never, once the gates are gone).
async fn stopped(broker: BrokerId, gates: &mut watch::Receiver<BTreeSet<BrokerId>>) {
    loop {
        if gates.borrow_and_update().contains(&broker) {
            return;
        }
        if gates.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// One log line: on standard error (`serve`), or kept in the registry for
/// the clients pane (the dashboard owns the terminal).
fn log(net: &Net, broker: BrokerId, peer: Option<SocketAddr>, line: &str) {
    // One line whatever a message carries (docs/kafka-protocol.md).
    let line = codec::one_line(line);
    let line = match peer {
        Some(peer) => format!("broker {broker} {peer}: {line}"),
        None => format!("broker {broker}: {line}"),
    };
    if net.to_stderr {
        crate::kafka::log_line(format_args!("mk-tui serve: {line}"));
    } else {
        net.registry.log(line);
    }
}

/// What one request comes to.
enum Step {
    /// Write this frame, then log the line.
    Reply(Vec<u8>, String),
    /// Nothing to write (acks=0); log the line.
    Quiet(String),
    /// Log the line and close the connection.
    Close(String),
}

/// Removes a connection from the registry however its task ends.
struct Registered(Registry, ConnectionId);

impl Drop for Registered {
    fn drop(&mut self) {
        self.0.close(self.1);
    }
}

async fn connection(broker: BrokerId, stream: TcpStream, peer: SocketAddr, net: Net) {
    let _ = stream.set_nodelay(true);
    let id = net.registry.open(broker, peer);
    let _registered = Registered(net.registry.clone(), id);
    let mut gates = net.gates.clone();
    let (mut reader, mut writer) = stream.into_split();
    let who = Who {
        broker,
        connection: id,
    };
    loop {
        let served = tokio::select! {
            served = async {
                // The frame's share of the budget is held until the
                // driver has handled the request.
                let frame = codec::read_frame(&mut reader, &net.reading).await?;
                Ok::<_, FrameError>(one_request(who, frame, &net).await)
            } => served,
            () = stopped(broker, &mut gates) => {
                log(&net, broker, Some(peer), "the broker stopped; connection closed");
                return;
            }
        };
        let step = match served {
            Ok(step) => {
                net.registry.end(id);
                step
            }
            Err(FrameError::Closed) => return,
            Err(e) => {
                log(&net, broker, Some(peer), &format!("{e}; connection closed"));
                return;
            }
        };
        match step {
            Step::Reply(bytes, line) => {
                if let Err(e) = codec::write_frame(&mut writer, &bytes).await {
                    log(
                        &net,
                        broker,
                        Some(peer),
                        &format!("{line}; the response could not be sent ({e}); connection closed"),
                    );
                    return;
                }
                if !net.quiet {
                    log(&net, broker, Some(peer), &line);
                }
            }
            Step::Quiet(line) if !net.quiet => log(&net, broker, Some(peer), &line),
            Step::Quiet(_) => {}
            Step::Close(line) => {
                log(
                    &net,
                    broker,
                    Some(peer),
                    &format!("{line}; connection closed"),
                );
                return;
            }
        }
    }
}

/// The broker and connection a request came on.
#[derive(Debug, Clone, Copy)]
struct Who {
    broker: BrokerId,
    connection: ConnectionId,
}

async fn one_request(who: Who, frame: codec::Frame, net: &Net) -> Step {
    let bytes = frame.bytes.clone();
    let commands = &net.commands;
    let prefix = match codec::peek_header(&bytes) {
        Ok(p) => p,
        Err(e) => return Step::Close(format!("malformed request: {e}")),
    };
    let client = prefix.client_id.clone().unwrap_or_default();
    let version = prefix.api_version;
    let correlation = prefix.correlation_id;
    let Ok(api) = ApiKey::try_from(prefix.api_key) else {
        return Step::Close(format!(
            "unknown API key {} v{version} from client {client:?}",
            prefix.api_key
        ));
    };
    let what = format!("{api:?} v{version} from client {client:?}");
    net.registry
        .begin(who.connection, &client, format!("{api:?} v{version}"));
    let reply = |v: i16, kind: ResponseKind, outcome: String| -> Step {
        match codec::response_frame(api, v, correlation, |buf| {
            buf.reserve(records_len(&kind));
            kind.encode(buf, v).map_err(codec::one_line)
        }) {
            Ok(bytes) => Step::Reply(bytes, outcome),
            Err(e) => Step::Close(format!("{what}: {e}")),
        }
    };
    let handled = handlers::supported(api).filter(|(min, max)| (*min..=*max).contains(&version));
    if handled.is_none() {
        if api == ApiKey::ApiVersions {
            // Kafka's rule: answer at version 0 with the list, so the client
            // can pick a version both sides know.
            // Kafka 4.4's Java client asks v5 first on every connection:
            // the line says this is the protocol's usual handshake, not a
            // fault (a new user's trial read 500 of them as errors).
            let listing = api_versions::listing(code::UNSUPPORTED_VERSION, net.transaction_version);
            let (lo, hi) = handlers::supported(api).unwrap_or((0, 0));
            return reply(
                0,
                ResponseKind::ApiVersions(listing),
                format!(
                    "{what}: newer than this server's v{lo}-{hi}: answered UNSUPPORTED_VERSION at v0 with the versions served, as Kafka does (the client asks again at one of them)"
                ),
            );
        }
        return match unsupported::error_response(api, version) {
            Some(kind) => reply(
                version,
                kind,
                format!("{what}: UNSUPPORTED_VERSION (this server does not handle it)"),
            ),
            None => Step::Close(format!("{what}: not handled by this server")),
        };
    }
    let (_, mut body) = match codec::split_header(api, version, &bytes) {
        Ok(split) => split,
        Err(e) => return Step::Close(format!("{what}: {e}")),
    };
    let kind = match RequestKind::decode(api, &mut body, version) {
        Ok(kind) => kind,
        Err(e) => {
            return Step::Close(format!(
                "{what}: malformed request body: {}",
                codec::one_line(e)
            ));
        }
    };
    let answer = match kind {
        RequestKind::ApiVersions(r) => api_versions::handle(&r, version, net.transaction_version),
        other => {
            // The producer InitProducerId gives, for the clients pane.
            let txn = match &other {
                RequestKind::InitProducerId(r) => {
                    r.transactional_id.as_ref().map(|t| t.0.to_string())
                }
                _ => None,
            };
            let room = frame.into_room();
            let Some(answer) = ask(commands, who, &client, version, other, room).await else {
                return Step::Close(format!("{what}: the server is stopping"));
            };
            if let Some(ResponseKind::InitProducerId(r)) = &answer.body
                && r.error_code == 0
            {
                net.registry
                    .producer(who.connection, r.producer_id.0, r.producer_epoch, txn);
            }
            answer
        }
    };
    let outcome = format!("{what}: {}", answer.outcome);
    match answer.body {
        // The dropped-response fault: nothing written, the connection closed.
        _ if answer.close => Step::Close(outcome),
        Some(mut kind) => {
            let changed = by_version::downgrade(&mut kind, version);
            reply(version, kind, outcome + &by_version::said(&changed))
        }
        None => Step::Quiet(outcome),
    }
}

/// Sends one request to the driver thread and waits for its answer
/// (`None` once the thread has stopped).
async fn ask(
    commands: &Commands,
    who: Who,
    client: &str,
    version: i16,
    body: RequestKind,
    room: codec::Room,
) -> Option<Answer> {
    let (tx, rx) = oneshot::channel();
    let request = Request {
        broker: who.broker,
        client_id: client.to_string(),
        version,
        body,
        connection: who.connection,
    };
    if !commands.send(Command::Request(Box::new(request), tx, room)) {
        return None;
    }
    rx.await.ok()
}

/// The record bytes a response carries (a fetch's, with room for each
/// partition's fields), reserved before it is encoded so that its records
/// are copied into the frame once, not again at each growth of the buffer.
fn records_len(kind: &ResponseKind) -> usize {
    match kind {
        ResponseKind::Fetch(f) => f
            .responses
            .iter()
            .flat_map(|t| &t.partitions)
            .map(|p| p.records.as_ref().map_or(0, |r| r.len()) + 64)
            .sum(),
        _ => 0,
    }
}
