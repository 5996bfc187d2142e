//! Kafka frames on a socket (docs/kafka-protocol.md): a 4-byte big-endian
//! size, then the request header and body. A frame larger than
//! [`MAX_REQUEST_BYTES`] or shorter than a header closes the connection.
//!
//! Only the frame and the header are read here; bodies are decoded by the
//! `kafka-protocol` crate at the header's version.

use bytes::{Buf, Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestHeader, ResponseHeader};
use kafka_protocol::protocol::{Decodable, Encodable};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::timeout_at;

use crate::session::SessionError;

/// The largest request accepted: 8 MiB. Kafka's own default
/// (`socket.request.max.bytes`) is 100 MiB; a teaching cluster needs far
/// less (a client's batch is at most about 1 MiB, `message.max.bytes`, and
/// librdkafka's requests carry a few), and a smaller cap bounds what one
/// bad client can make the server allocate.
pub const MAX_REQUEST_BYTES: usize = 8 * 1024 * 1024;

/// How long a request may take to arrive whole, from the first byte of
/// its size prefix: a request stalled half-sent is dropped then, its
/// connection closed. Ours: Kafka has no deadline per request (its
/// `connections.max.idle.ms`, 10 minutes, closes idle connections).
/// Between requests a connection may stay idle as long as it likes.
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(10);

/// The bytes of all requests being read (and handled) at once, as their
/// size prefixes give them: Kafka's `queued.max.request.bytes` (unbounded
/// by default). A request past it waits for room, up to its
/// [`REQUEST_DEADLINE`], then its connection is refused.
pub const MAX_READING_BYTES: usize = 64 * 1024 * 1024;

/// The room [`MAX_READING_BYTES`] leaves, shared by every connection.
#[derive(Debug, Clone)]
pub struct ReadBudget {
    room: Arc<Semaphore>,
    cap: usize,
}

impl Default for ReadBudget {
    fn default() -> Self {
        Self::new(MAX_READING_BYTES)
    }
}

impl ReadBudget {
    /// A budget of `cap` bytes (at least [`MAX_REQUEST_BYTES`]).
    pub fn new(cap: usize) -> Self {
        let cap = cap.max(MAX_REQUEST_BYTES);
        Self {
            room: Arc::new(Semaphore::new(cap)),
            cap,
        }
    }

    /// The bytes held by the requests being read now.
    fn held(&self) -> usize {
        self.cap - self.room.available_permits()
    }
}

/// A request's bytes, holding their share of the [`ReadBudget`].
#[derive(Debug)]
pub struct Frame {
    pub bytes: Bytes,
    room: OwnedSemaphorePermit,
}

impl Frame {
    /// The request's share of the [`ReadBudget`], given back when dropped:
    /// sent to the driver with the decoded request, and dropped once the
    /// driver has handled it (its bytes are then gone, even if its answer
    /// waits), as Kafka gives a request's memory back once it is parsed
    /// and handed on.
    pub fn into_room(self) -> Room {
        Room(self.room)
    }
}

/// A share of the [`ReadBudget`], given back when dropped.
#[derive(Debug)]
pub struct Room(#[allow(dead_code)] OwnedSemaphorePermit);

/// Why a connection is closed while reading a frame.
#[derive(Debug)]
pub enum FrameError {
    /// The peer closed the connection between frames (not an error).
    Closed,
    /// The peer closed the connection inside a frame.
    Truncated,
    /// The size prefix is negative or past [`MAX_REQUEST_BYTES`].
    Oversized(i64),
    /// The request did not arrive whole within [`REQUEST_DEADLINE`]
    /// (its size, if its prefix came, and the bytes of it that came).
    Stalled { size: Option<usize>, got: usize },
    /// No room in the [`ReadBudget`] within [`REQUEST_DEADLINE`]: the
    /// request's size, the bytes the others held, the cap.
    Refused {
        size: usize,
        held: usize,
        cap: usize,
    },
    /// A socket error.
    Io(std::io::Error),
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = REQUEST_DEADLINE.as_secs();
        match self {
            FrameError::Closed => write!(f, "closed by the client"),
            FrameError::Truncated => write!(f, "closed by the client inside a request"),
            FrameError::Oversized(n) => write!(
                f,
                "request size {n} is not between 1 and the cap of {MAX_REQUEST_BYTES} bytes"
            ),
            FrameError::Stalled {
                size: Some(size),
                got,
            } => write!(
                f,
                "a request of {size} bytes did not arrive whole within {secs} s of its first \
                 byte ({got} bytes of it came)"
            ),
            FrameError::Stalled { size: None, got } => write!(
                f,
                "a request did not arrive whole within {secs} s of its first byte ({got} of \
                 its 4 size bytes came)"
            ),
            FrameError::Refused { size, held, cap } => write!(
                f,
                "a request of {size} bytes refused: the requests being read at once held \
                 {held} bytes of their cap of {cap} for {secs} s"
            ),
            FrameError::Io(e) => write!(f, "socket error: {e}"),
        }
    }
}

/// Reads one frame's payload (without its size prefix): waits as long as
/// it takes for its first byte, then gives it [`REQUEST_DEADLINE`] to
/// arrive whole, room in `budget` included. The payload's memory is
/// filled as the bytes arrive, so a stalled request holds only what came.
pub async fn read_frame<R: AsyncRead + Unpin>(
    reader: &mut R,
    budget: &ReadBudget,
) -> Result<Frame, FrameError> {
    let mut size = [0u8; 4];
    let first = match reader.read(&mut size).await {
        Ok(0) => return Err(FrameError::Closed),
        Ok(n) => n,
        Err(e) => return Err(FrameError::Io(e)),
    };
    let deadline = tokio::time::Instant::now() + REQUEST_DEADLINE;
    let mut got = first;
    while got < 4 {
        match timeout_at(deadline, reader.read(&mut size[got..])).await {
            Err(_) => return Err(FrameError::Stalled { size: None, got }),
            Ok(Ok(0)) => return Err(FrameError::Truncated),
            Ok(Ok(n)) => got += n,
            Ok(Err(e)) => return Err(FrameError::Io(e)),
        }
    }
    let size = i32::from_be_bytes(size);
    if size <= 0 || size as usize > MAX_REQUEST_BYTES {
        return Err(FrameError::Oversized(i64::from(size)));
    }
    let size = size as usize;
    let room = budget.room.clone().acquire_many_owned(size as u32);
    let room = match timeout_at(deadline, room).await {
        Ok(Ok(room)) => room,
        Ok(Err(_)) => unreachable!("the budget's semaphore is never closed"),
        Err(_) => {
            return Err(FrameError::Refused {
                size,
                held: budget.held(),
                cap: budget.cap,
            });
        }
    };
    let mut payload = BytesMut::with_capacity(size);
    while payload.len() < size {
        let left = (size - payload.len()) as u64;
        let mut part = (&mut *reader).take(left);
        match timeout_at(deadline, part.read_buf(&mut payload)).await {
            Err(_) => {
                return Err(FrameError::Stalled {
                    size: Some(size),
                    got: payload.len(),
                });
            }
            Ok(Ok(0)) => return Err(FrameError::Truncated),
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(FrameError::Io(e)),
        }
    }
    Ok(Frame {
        bytes: payload.freeze(),
        room,
    })
}

/// Writes one response frame: size, header (at the version the API and
/// version call for), body.
pub async fn write_frame<W: AsyncWrite + Unpin>(
    writer: &mut W,
    frame: &[u8],
) -> std::io::Result<()> {
    writer.write_all(frame).await?;
    writer.flush().await
}

/// The start every request header shares (versions 1 and 2): API key,
/// version, correlation id and client id. Read without knowing the API, so
/// an unknown one can still be named in the log and answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderPrefix {
    pub api_key: i16,
    pub api_version: i16,
    pub correlation_id: i32,
    pub client_id: Option<String>,
}

/// Reads the [`HeaderPrefix`] of a frame, or says why it is not one.
pub fn peek_header(frame: &Bytes) -> Result<HeaderPrefix, SessionError> {
    let mut b = frame.clone();
    if b.remaining() < 10 {
        return Err(SessionError::Frame(format!(
            "a request of {} bytes is shorter than a request header",
            frame.len()
        )));
    }
    let api_key = b.get_i16();
    let api_version = b.get_i16();
    let correlation_id = b.get_i32();
    let len = b.get_i16();
    let client_id = if len < 0 {
        None
    } else if b.remaining() < len as usize {
        return Err(SessionError::Frame(
            "the client id runs past the end of the request".into(),
        ));
    } else {
        Some(String::from_utf8_lossy(&b[..len as usize]).into_owned())
    };
    Ok(HeaderPrefix {
        api_key,
        api_version,
        correlation_id,
        client_id,
    })
}

/// Decodes the full header of a known API and returns the body after it.
pub fn split_header(
    api_key: ApiKey,
    version: i16,
    frame: &Bytes,
) -> Result<(RequestHeader, Bytes), SessionError> {
    let mut b = frame.clone();
    let header_version = api_key.request_header_version(version);
    let header = RequestHeader::decode(&mut b, header_version)
        .map_err(|e| SessionError::Frame(format!("bad request header: {}", one_line(e))))?;
    Ok((header, b))
}

/// A message as one line: the protocol crate's errors may end in a
/// newline ("Not enough bytes remaining in buffer!\n", found by the
/// `kafka_request` fuzz target), and every log line must be one line.
pub fn one_line(message: impl std::fmt::Display) -> String {
    message
        .to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A whole response frame: size prefix, response header, `body`.
pub fn response_frame<E: std::fmt::Display>(
    api_key: ApiKey,
    version: i16,
    correlation_id: i32,
    body: impl FnOnce(&mut BytesMut) -> Result<(), E>,
) -> Result<Vec<u8>, SessionError> {
    let mut buf = BytesMut::new();
    buf.extend_from_slice(&[0; 4]);
    let header = ResponseHeader::default().with_correlation_id(correlation_id);
    // ApiVersions answers with header version 0 whatever its version, so a
    // client that sent a version this server does not know can read it.
    let header_version = if api_key == ApiKey::ApiVersions {
        0
    } else {
        api_key.response_header_version(version)
    };
    header.encode(&mut buf, header_version).map_err(|e| {
        SessionError::Frame(format!(
            "cannot encode the response header: {}",
            one_line(e)
        ))
    })?;
    body(&mut buf)
        .map_err(|e| SessionError::Frame(format!("cannot encode the response: {}", one_line(e))))?;
    let size = (buf.len() - 4) as i32;
    buf[..4].copy_from_slice(&size.to_be_bytes());
    // The buffer's own allocation, not a copy of it.
    Ok(Vec::from(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_frame<R: AsyncRead + Unpin>(reader: &mut R) -> Result<Bytes, FrameError> {
        super::read_frame(reader, &ReadBudget::default())
            .await
            .map(|f| f.bytes)
    }

    #[tokio::test]
    async fn frames_past_the_cap_or_cut_short_are_refused() {
        let mut oversized: &[u8] = &((MAX_REQUEST_BYTES as i32) + 1).to_be_bytes();
        assert!(matches!(
            read_frame(&mut oversized).await,
            Err(FrameError::Oversized(_))
        ));
        let mut negative: &[u8] = &(-5i32).to_be_bytes();
        assert!(matches!(
            read_frame(&mut negative).await,
            Err(FrameError::Oversized(-5))
        ));
        let mut cut: &[u8] = &[0, 0, 0, 10, 1, 2];
        assert!(matches!(
            read_frame(&mut cut).await,
            Err(FrameError::Truncated)
        ));
        let mut empty: &[u8] = &[];
        assert!(matches!(
            read_frame(&mut empty).await,
            Err(FrameError::Closed)
        ));
        let mut ok: &[u8] = &[0, 0, 0, 2, 7, 8];
        assert_eq!(&read_frame(&mut ok).await.unwrap()[..], &[7, 8]);
    }

    #[test]
    fn protocol_errors_become_one_line() {
        assert_eq!(
            one_line("Not enough bytes remaining in buffer!\n"),
            "Not enough bytes remaining in buffer!"
        );
        // Produce v9 (header v2) cut inside its header.
        let cut = Bytes::from_static(&[0, 0, 0, 9, 0, 0, 0, 1, 0, 1]);
        let e = split_header(ApiKey::Produce, 9, &cut)
            .unwrap_err()
            .to_string();
        assert!(!e.contains('\n'), "{e:?}");
    }

    #[test]
    fn the_header_prefix_is_read_without_knowing_the_api() {
        let mut frame = vec![0x03, 0xe7, 0, 1, 0, 0, 0, 42, 0, 3];
        frame.extend_from_slice(b"abc");
        let h = peek_header(&Bytes::from(frame)).unwrap();
        assert_eq!((h.api_key, h.api_version, h.correlation_id), (999, 1, 42));
        assert_eq!(h.client_id.as_deref(), Some("abc"));
        assert!(peek_header(&Bytes::from_static(&[0, 1, 2])).is_err());
        let past = Bytes::from_static(&[0, 18, 0, 3, 0, 0, 0, 1, 0, 9, b'x']);
        assert!(peek_header(&past).is_err());
    }
}
