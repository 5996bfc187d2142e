//! The listeners and connections of `mk-tui serve` (issue 14 item 1): one
//! listener per broker, one task per connection, requests on a connection
//! handled one at a time in order (as a Kafka broker does: a connection's
//! next request is read once the previous one is answered).
//!
//! Each request is logged as one line on standard error: the broker, the
//! API and version, the client id and the outcome. A malformed frame, an
//! oversized request, an unknown API or a client that disconnects inside
//! a request closes that connection with one line; the others go on.

use std::net::SocketAddr;
use std::sync::mpsc;
use std::time::Duration;

use bytes::Bytes;
use kafka_protocol::messages::{ApiKey, RequestKind, ResponseKind};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinSet;

use crate::engine::config::BrokerId;
use crate::kafka::clock::RealTime;
use crate::kafka::codec::{self, FrameError};
use crate::kafka::errors::code;
use crate::kafka::handlers::{self, api_versions, unsupported};
use crate::kafka::worker::{Answer, Command, Request};

/// The longest a fetch long-poll waits, whatever `max_wait_ms` asks.
const MAX_FETCH_WAIT: Duration = Duration::from_secs(30);
/// How often a waiting fetch asks again.
const FETCH_POLL: Duration = Duration::from_millis(20);

/// SIGTERM and Ctrl-C (SIGINT), listened for from the moment this is made:
/// made before `ready` is printed, so a signal sent right after it is not
/// the default kill.
pub struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
}

impl Signals {
    /// Installs the handlers (inside the runtime).
    pub fn install() -> Result<Self, String> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let term = signal(SignalKind::terminate())
                .map_err(|e| format!("cannot catch SIGTERM: {e}"))?;
            let int =
                signal(SignalKind::interrupt()).map_err(|e| format!("cannot catch Ctrl-C: {e}"))?;
            Ok(Self { term, int })
        }
        #[cfg(not(unix))]
        {
            Ok(Self {})
        }
    }

    /// Waits for one; returns its name.
    async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.int.recv() => "Ctrl-C",
                _ = self.term.recv() => "SIGTERM",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}

/// Serves every listener until SIGTERM or Ctrl-C; returns which one came.
pub async fn serve_until_signal(
    listeners: Vec<(BrokerId, TcpListener)>,
    commands: mpsc::Sender<Command>,
    mut signals: Signals,
) -> &'static str {
    let mut tasks = JoinSet::new();
    for (broker, listener) in listeners {
        tasks.spawn(accept_loop(broker, listener, commands.clone()));
    }
    let signal = signals.next().await;
    tasks.abort_all();
    signal
}

async fn accept_loop(broker: BrokerId, listener: TcpListener, commands: mpsc::Sender<Command>) {
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                tokio::spawn(connection(broker, stream, peer, commands.clone()));
            }
            Err(e) => {
                log(broker, None, &format!("accept failed: {e}"));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

fn log(broker: BrokerId, peer: Option<SocketAddr>, line: &str) {
    match peer {
        Some(peer) => eprintln!("mk-tui serve: broker {broker} {peer}: {line}"),
        None => eprintln!("mk-tui serve: broker {broker}: {line}"),
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

async fn connection(
    broker: BrokerId,
    stream: TcpStream,
    peer: SocketAddr,
    commands: mpsc::Sender<Command>,
) {
    let _ = stream.set_nodelay(true);
    let (mut reader, mut writer) = stream.into_split();
    loop {
        let frame = match codec::read_frame(&mut reader).await {
            Ok(frame) => frame,
            Err(FrameError::Closed) => return,
            Err(e) => {
                log(broker, Some(peer), &format!("{e}; connection closed"));
                return;
            }
        };
        match one_request(broker, &frame, &commands).await {
            Step::Reply(bytes, line) => {
                if let Err(e) = codec::write_frame(&mut writer, &bytes).await {
                    log(
                        broker,
                        Some(peer),
                        &format!("{line}; the response could not be sent ({e}); connection closed"),
                    );
                    return;
                }
                log(broker, Some(peer), &line);
            }
            Step::Quiet(line) => log(broker, Some(peer), &line),
            Step::Close(line) => {
                log(broker, Some(peer), &format!("{line}; connection closed"));
                return;
            }
        }
    }
}

async fn one_request(broker: BrokerId, frame: &Bytes, commands: &mpsc::Sender<Command>) -> Step {
    let prefix = match codec::peek_header(frame) {
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
    let reply = |v: i16, kind: ResponseKind, outcome: String| -> Step {
        match codec::response_frame(api, v, correlation, |buf| {
            kind.encode(buf, v).map_err(|e| e.to_string())
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
            let listing = api_versions::listing(code::UNSUPPORTED_VERSION);
            return reply(
                0,
                ResponseKind::ApiVersions(listing),
                format!("{what}: UNSUPPORTED_VERSION, answered at v0 with the supported versions"),
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
    let (_, mut body) = match codec::split_header(api, version, frame) {
        Ok(split) => split,
        Err(e) => return Step::Close(format!("{what}: {e}")),
    };
    let kind = match RequestKind::decode(api, &mut body, version) {
        Ok(kind) => kind,
        Err(e) => return Step::Close(format!("{what}: malformed request body: {e}")),
    };
    let answer = match kind {
        RequestKind::ApiVersions(r) => api_versions::handle(&r, version),
        RequestKind::Fetch(fetch) => {
            let wait = Duration::from_millis(fetch.max_wait_ms.max(0) as u64).min(MAX_FETCH_WAIT);
            let deadline = RealTime::now() + wait;
            loop {
                let request = RequestKind::Fetch(fetch.clone());
                let Some(answer) = ask(commands, broker, &client, version, request).await else {
                    return Step::Close(format!("{what}: the server is stopping"));
                };
                let now = RealTime::now();
                if !answer.empty_fetch || now >= deadline {
                    break answer;
                }
                tokio::time::sleep(FETCH_POLL.min(deadline - now)).await;
            }
        }
        other => match ask(commands, broker, &client, version, other).await {
            Some(answer) => answer,
            None => return Step::Close(format!("{what}: the server is stopping")),
        },
    };
    let outcome = format!("{what}: {}", answer.outcome);
    match answer.body {
        Some(kind) => reply(version, kind, outcome),
        None => Step::Quiet(outcome),
    }
}

/// Sends one request to the driver thread and waits for its answer
/// (`None` once the thread has stopped).
async fn ask(
    commands: &mpsc::Sender<Command>,
    broker: BrokerId,
    client: &str,
    version: i16,
    body: RequestKind,
) -> Option<Answer> {
    let (tx, rx) = oneshot::channel();
    let request = Request {
        broker,
        client_id: client.to_string(),
        version,
        body,
    };
    commands
        .send(Command::Request(Box::new(request), tx))
        .ok()?;
    rx.await.ok()
}
