//! One client connection to one broker (docs/observe.md "Connections"):
//! a tokio `TcpStream` speaking Kafka frames as `src/kafka/codec.rs` reads
//! them on the server side (4-byte big-endian size, header, body), one
//! request at a time. Every connect and every response is bounded in time
//! ([`TIMEOUT`], and the observation's one [`Deadline`]) and in size
//! ([`MAX_RESPONSE_BYTES`]), so a silent or misbehaving broker costs at most
//! that, never a hang or an allocation a length prefix asked for.

use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{RequestHeader, ResponseHeader};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Request, StrBytes};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

// The protocol crate's errors may end in a newline; every error here is
// one line (issue 25).
use crate::kafka::codec::one_line;
use crate::session::SessionError;

/// What an error says of a response that was read whole but does not
/// decode as the request's response: the connection is still in step, so
/// a caller may ask again differently (OffsetFetch, [`super::groups`]).
pub const UNDECODABLE: &str = "the response does not decode";

/// How long a connect, or a request's response, may take (less when the
/// observation's [`Deadline`] is nearer).
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The one deadline of an observation (`--timeout`, issue 25): every
/// connect and response waits at most [`TIMEOUT`] and at most until this,
/// and once it has passed nothing more is sent.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    at: Instant,
    timeout: Duration,
}

impl Deadline {
    /// `timeout` from now.
    pub fn after(timeout: Duration) -> Self {
        Self {
            at: Instant::now() + timeout,
            timeout,
        }
    }

    /// The time left (zero once passed).
    pub fn left(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }

    /// Whether it has passed.
    pub fn passed(&self) -> bool {
        self.left().is_zero()
    }

    /// What an error says when it passed: `the observation's --timeout of
    /// 30 s ran out`.
    pub fn ran_out(&self) -> String {
        let ms = self.timeout.as_millis();
        let span = if ms.is_multiple_of(1000) {
            format!("{} s", ms / 1000)
        } else {
            format!("{ms} ms")
        };
        format!("the observation's --timeout of {span} ran out")
    }

    /// How long the next wait may be: [`TIMEOUT`], or less when the
    /// deadline is nearer (then true).
    fn wait(&self) -> (Duration, bool) {
        let left = self.left();
        if left < TIMEOUT {
            (left, true)
        } else {
            (TIMEOUT, false)
        }
    }
}

/// The largest response read: 16 MiB. The biggest response asked for is a
/// Fetch bounded by [`super::fetch::PARTITION_MAX_BYTES`] per partition;
/// a broker may exceed that by one batch (KIP-74), not by this much.
pub const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

/// The client id every request carries (brokers log it).
pub const CLIENT_ID: &str = "mk-tui-observe";

/// A connection to the broker at `address`.
pub struct Conn {
    stream: TcpStream,
    /// `HOST:PORT`, for the error lines.
    pub address: String,
    correlation: i32,
    /// The observation's deadline.
    pub deadline: Deadline,
}

impl Conn {
    /// Connects to `address` (`HOST:PORT`) within [`TIMEOUT`] and before
    /// `deadline`.
    pub async fn connect(address: &str, deadline: Deadline) -> Result<Self, SessionError> {
        let (wait, near) = deadline.wait();
        if wait.is_zero() {
            return Err(SessionError::protocol(
                address,
                format!("not asked: {}", deadline.ran_out()),
            ));
        }
        let stream = match tokio::time::timeout(wait, TcpStream::connect(address)).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                return Err(SessionError::protocol(
                    address,
                    format!("cannot connect: {e}"),
                ));
            }
            Err(_) if near => {
                return Err(SessionError::protocol(
                    address,
                    format!("cannot connect: no answer before {}", deadline.ran_out()),
                ));
            }
            Err(_) => {
                return Err(SessionError::protocol(
                    address,
                    format!("cannot connect: no answer within {} s", TIMEOUT.as_secs()),
                ));
            }
        };
        let _ = stream.set_nodelay(true);
        Ok(Self {
            stream,
            address: address.to_string(),
            correlation: 0,
            deadline,
        })
    }

    /// Sends `request` at `version` and decodes its response. The error
    /// names the broker and the API: a closed connection, a timeout, a
    /// response that does not decode or answers another request.
    pub async fn call<R: Request>(
        &mut self,
        name: &str,
        request: &R,
        version: i16,
    ) -> Result<R::Response, SessionError> {
        let what = format!("{}: {name} v{version}", self.address);
        let (wait, near) = self.deadline.wait();
        if wait.is_zero() {
            return Err(SessionError::protocol(
                &what,
                format!("not asked: {}", self.deadline.ran_out()),
            ));
        }
        self.correlation += 1;
        let header = RequestHeader::default()
            .with_request_api_key(R::KEY)
            .with_request_api_version(version)
            .with_correlation_id(self.correlation)
            .with_client_id(Some(StrBytes::from_static_str(CLIENT_ID)));
        let mut buf = BytesMut::new();
        buf.extend_from_slice(&[0; 4]);
        header
            .encode(&mut buf, R::header_version(version))
            .map_err(|e| {
                SessionError::protocol(
                    &what,
                    format!("cannot encode the request header: {}", one_line(e)),
                )
            })?;
        request.encode(&mut buf, version).map_err(|e| {
            SessionError::protocol(&what, format!("cannot encode the request: {}", one_line(e)))
        })?;
        let size = (buf.len() - 4) as i32;
        buf[..4].copy_from_slice(&size.to_be_bytes());
        let exchange = async {
            self.stream
                .write_all(&buf)
                .await
                .map_err(|e| SessionError::protocol(&what, format!("cannot send: {e}")))?;
            read_frame(&mut self.stream, &what).await
        };
        let mut payload = match tokio::time::timeout(wait, exchange).await {
            Ok(r) => r?,
            // The connection is out of step now, but nothing more is sent
            // on it: the deadline has passed.
            Err(_) if near => {
                return Err(SessionError::protocol(
                    &what,
                    format!("no response before {}", self.deadline.ran_out()),
                ));
            }
            Err(_) => {
                return Err(SessionError::protocol(
                    &what,
                    format!("no response within {} s", TIMEOUT.as_secs()),
                ));
            }
        };
        let header = ResponseHeader::decode(&mut payload, R::Response::header_version(version))
            .map_err(|e| {
                SessionError::protocol(
                    &what,
                    format!("the response header does not decode: {}", one_line(e)),
                )
            })?;
        if header.correlation_id != self.correlation {
            return Err(SessionError::protocol(
                &what,
                format!(
                    "the response answers request {}, not {}",
                    header.correlation_id, self.correlation
                ),
            ));
        }
        R::Response::decode(&mut payload, version)
            .map_err(|e| SessionError::protocol(&what, format!("{UNDECODABLE}: {}", one_line(e))))
    }
}

/// One response frame's payload (without its size prefix).
async fn read_frame(stream: &mut TcpStream, what: &str) -> Result<Bytes, SessionError> {
    let mut size = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match stream.read(&mut size[got..]).await {
            Ok(0) => {
                return Err(SessionError::protocol(
                    what,
                    "the broker closed the connection before answering",
                ));
            }
            Ok(n) => got += n,
            Err(e) => {
                return Err(SessionError::protocol(
                    what,
                    format!("cannot read the response: {e}"),
                ));
            }
        }
    }
    let size = i32::from_be_bytes(size);
    if size <= 0 || size as usize > MAX_RESPONSE_BYTES {
        return Err(SessionError::protocol(
            what,
            format!(
                "response size {size} is not between 1 and the cap of {MAX_RESPONSE_BYTES} bytes"
            ),
        ));
    }
    let mut payload = BytesMut::zeroed(size as usize);
    match stream.read_exact(&mut payload).await {
        Ok(_) => Ok(payload.freeze()),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(SessionError::protocol(
            what,
            "the broker closed the connection inside its response",
        )),
        Err(e) => Err(SessionError::protocol(
            what,
            format!("cannot read the response: {e}"),
        )),
    }
}
