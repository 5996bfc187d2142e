//! Hand-built Kafka frames, for what no client library sends: an unknown
//! API, a version past the server's, malformed and oversized frames.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

pub fn connect(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// A size-prefixed frame.
pub fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = (payload.len() as i32).to_be_bytes().to_vec();
    out.extend_from_slice(payload);
    out
}

/// A request with header v1 (key, version, correlation id, client "raw").
pub fn request(api: i16, version: i16, correlation: i32, body: &[u8]) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&api.to_be_bytes());
    p.extend_from_slice(&version.to_be_bytes());
    p.extend_from_slice(&correlation.to_be_bytes());
    p.extend_from_slice(&3i16.to_be_bytes());
    p.extend_from_slice(b"raw");
    p.extend_from_slice(body);
    frame(&p)
}

pub fn send(s: &mut TcpStream, bytes: &[u8]) {
    s.write_all(bytes).unwrap();
}

/// Reads one response frame's payload.
pub fn read(s: &mut TcpStream) -> Vec<u8> {
    let mut size = [0u8; 4];
    s.read_exact(&mut size).unwrap();
    let mut payload = vec![0u8; i32::from_be_bytes(size) as usize];
    s.read_exact(&mut payload).unwrap();
    payload
}

/// True when the server closed the connection (EOF before the timeout).
pub fn closed(s: &mut TcpStream) -> bool {
    let mut buf = [0u8; 16];
    matches!(s.read(&mut buf), Ok(0))
        || matches!(s.read(&mut buf), Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset)
}

pub struct Versions {
    pub error_code: i16,
    pub apis: Vec<(i16, i16, i16)>,
}

/// ApiVersions at `version` (0 or 3 are built here; past 4 the server
/// answers at version 0). The response is read as version 0 for a v0 or
/// refused request, else as version 3.
pub fn api_versions(s: &mut TcpStream, version: i16) -> Versions {
    let body: &[u8] = if version >= 3 {
        // client_software_name "raw", version "1", no tagged fields.
        &[4, b'r', b'a', b'w', 2, b'1', 0]
    } else {
        &[]
    };
    let header_tags: &[u8] = if (3..=4).contains(&version) {
        &[0]
    } else {
        &[]
    };
    let mut b = header_tags.to_vec();
    b.extend_from_slice(body);
    send(s, &request(18, version, 1, &b));
    let p = read(s);
    assert_eq!(
        i32::from_be_bytes(p[0..4].try_into().unwrap()),
        1,
        "correlation id"
    );
    let i16_at = |i: usize| i16::from_be_bytes([p[i], p[i + 1]]);
    let error_code = i16_at(4);
    let mut apis = Vec::new();
    if (3..=4).contains(&version) {
        let n = p[6] as usize - 1; // compact array length + 1
        let mut at = 7;
        for _ in 0..n {
            apis.push((i16_at(at), i16_at(at + 2), i16_at(at + 4)));
            at += 7; // three int16 and an empty tag buffer
        }
    } else {
        let n = i32::from_be_bytes(p[6..10].try_into().unwrap()) as usize;
        for k in 0..n {
            let at = 10 + 6 * k;
            apis.push((i16_at(at), i16_at(at + 2), i16_at(at + 4)));
        }
    }
    Versions { error_code, apis }
}

/// ListGroups v0 (no body): its error code.
pub fn list_groups(s: &mut TcpStream) -> i16 {
    send(s, &request(16, 0, 6, &[]));
    let p = read(s);
    assert_eq!(i32::from_be_bytes(p[0..4].try_into().unwrap()), 6);
    i16::from_be_bytes([p[4], p[5]])
}

/// SaslHandshake v0 (mechanism PLAIN): its error code.
pub fn sasl_handshake(s: &mut TcpStream) -> i16 {
    let mut body = 5i16.to_be_bytes().to_vec();
    body.extend_from_slice(b"PLAIN");
    send(s, &request(17, 0, 9, &body));
    let p = read(s);
    assert_eq!(i32::from_be_bytes(p[0..4].try_into().unwrap()), 9);
    i16::from_be_bytes([p[4], p[5]])
}

/// Heartbeat v0 (group "g", generation 1, member "m"): its error code.
pub fn heartbeat(s: &mut TcpStream) -> i16 {
    let mut body = Vec::new();
    body.extend_from_slice(&1i16.to_be_bytes());
    body.push(b'g');
    body.extend_from_slice(&1i32.to_be_bytes());
    body.extend_from_slice(&1i16.to_be_bytes());
    body.push(b'm');
    send(s, &request(12, 0, 5, &body));
    let p = read(s);
    assert_eq!(i32::from_be_bytes(p[0..4].try_into().unwrap()), 5);
    i16::from_be_bytes([p[4], p[5]])
}
