//! Bad input against a running `mk-tui serve` (issue 14 item 6,
//! docs/kafka-protocol.md "Caps and bad input"): each bad frame closes its
//! own connection with exactly one log line naming the client's address;
//! the server does not panic or abort, a connection opened before goes on,
//! and the data directory is unchanged, byte for byte.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::Shutdown;
use std::path::{Path, PathBuf};

use crate::raw;
use crate::server::{Server, partition};
use crate::wire::{self, Conn};

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// A header-v1 request payload (no size prefix): key, version,
/// correlation id 7, client id "bad", then `body`.
fn payload(api: i16, version: i16, body: &[u8]) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&api.to_be_bytes());
    p.extend_from_slice(&version.to_be_bytes());
    p.extend_from_slice(&7i32.to_be_bytes());
    p.extend_from_slice(&3i16.to_be_bytes());
    p.extend_from_slice(b"bad");
    p.extend_from_slice(body);
    p
}

/// What each bad client sends, and what its one log line says.
fn bad_inputs() -> Vec<(&'static str, Vec<u8>, bool, &'static str)> {
    let cap = 8 * 1024 * 1024i32;
    let mut cut = 100i32.to_be_bytes().to_vec();
    cut.extend_from_slice(&[0, 3, 0, 1, 0, 0, 0, 1, 0, 0]);
    // Metadata v1 whose topics array claims 2^31 - 1 elements (15 bytes):
    // the vendored decoder's bound (vendor/README.md); it aborted serve.
    let mut huge_array = payload(3, 1, &[]);
    huge_array.extend_from_slice(&i32::MAX.to_be_bytes());
    // Produce v3 (header v1): no transactional id, acks 1, timeout, one
    // topic "t", one partition 0, records claiming 2^31 - 1 bytes.
    let mut huge_bytes = payload(0, 3, &[]);
    huge_bytes.extend_from_slice(&(-1i16).to_be_bytes());
    huge_bytes.extend_from_slice(&1i16.to_be_bytes());
    huge_bytes.extend_from_slice(&1000i32.to_be_bytes());
    huge_bytes.extend_from_slice(&1i32.to_be_bytes());
    huge_bytes.extend_from_slice(&1i16.to_be_bytes());
    huge_bytes.push(b't');
    huge_bytes.extend_from_slice(&1i32.to_be_bytes());
    huge_bytes.extend_from_slice(&0i32.to_be_bytes());
    huge_bytes.extend_from_slice(&i32::MAX.to_be_bytes());
    // A client id claiming 300 bytes of a 12-byte request.
    let mut past = payload(18, 0, &[]);
    past[8..10].copy_from_slice(&300i16.to_be_bytes());
    vec![
        (
            "a client that disconnects inside a request",
            cut,
            true,
            "closed by the client inside a request; connection closed",
        ),
        (
            "a client that disconnects inside the size prefix",
            vec![0, 0],
            true,
            "closed by the client inside a request; connection closed",
        ),
        (
            "a negative size",
            (-1i32).to_be_bytes().to_vec(),
            false,
            "request size -1 is not between 1 and the cap of 8388608 bytes; connection closed",
        ),
        (
            "one byte past the cap",
            (cap + 1).to_be_bytes().to_vec(),
            false,
            "request size 8388609 is not between 1 and the cap",
        ),
        (
            "an unknown API",
            raw::frame(&payload(999, 0, &[])),
            false,
            "unknown API key 999 v0 from client \"bad\"; connection closed",
        ),
        (
            "a served API at a version past the served ones",
            raw::frame(&payload(0, 99, &[])),
            false,
            "Produce v99 from client \"bad\": not handled by this server; connection closed",
        ),
        (
            "an array claiming 2^31 - 1 elements",
            raw::frame(&huge_array),
            false,
            "Metadata v1 from client \"bad\": malformed request body",
        ),
        (
            "records claiming 2 GiB",
            raw::frame(&huge_bytes),
            false,
            "Produce v3 from client \"bad\": malformed request body",
        ),
        (
            "a client id past the end",
            raw::frame(&past),
            false,
            "malformed request: the client id runs past the end of the request; connection closed",
        ),
    ]
}

#[test]
fn each_bad_frame_closes_its_connection_with_one_line_and_changes_nothing() {
    let mut server = Server::start(&["--auto-replicate", "0"]);
    let port = server.port(1);
    let mut good = Conn::connect(port, "good");
    wire::create_topic(&mut good, "t", 1, 1);
    let values: Vec<String> = (0..3).map(|i| format!("v{i}")).collect();
    let ok = good
        .call(&wire::produce("t", 0, 1, wire::batch(&values)), 9)
        .unwrap();
    assert_eq!(wire::produced(&ok), (0, 0));

    // A batch with a flipped byte: refused with CORRUPT_MESSAGE (the
    // CRC-32C), nothing appended, the connection stays open.
    let mut corrupt = wire::batch(&["x".to_string()]).to_vec();
    let last = corrupt.len() - 1;
    corrupt[last] ^= 0xff;
    let refused = good
        .call(&wire::produce("t", 0, 1, corrupt.into()), 9)
        .expect("a corrupt batch is answered");
    assert_eq!(wire::produced(&refused).0, 2, "CORRUPT_MESSAGE");

    let mut peers = Vec::new();
    for (what, bytes, hang_up, line) in bad_inputs() {
        let mut bad = raw::connect(port);
        let local = bad.local_addr().unwrap();
        bad.write_all(&bytes).unwrap();
        if hang_up {
            bad.shutdown(Shutdown::Write).unwrap();
        }
        assert!(raw::closed(&mut bad), "{what}: the server closes it");
        peers.push((what, local, line));
    }
    // The connection opened first goes on, and a new one is served.
    assert_eq!(raw::api_versions(&mut good.stream, 0).error_code, 0);
    let again = good
        .call(&wire::produce("t", 0, 1, wire::batch(&values)), 9)
        .unwrap();
    assert_eq!(
        wire::produced(&again),
        (0, 3),
        "appended after the bad ones"
    );
    assert_eq!(raw::api_versions(&mut raw::connect(port), 3).error_code, 0);

    let log = server.stop();
    assert!(!log.contains("panicked"), "{log}");
    for (what, local, line) in peers {
        let lines: Vec<&str> = log
            .lines()
            .filter(|l| l.contains(&format!(" {local}: ")))
            .collect();
        assert_eq!(lines.len(), 1, "{what}: one log line for {local}:\n{log}");
        assert!(lines[0].contains(line), "{what}: {:?}", lines[0]);
    }
    let state = server.state();
    let p = partition(&state, "t", 0);
    assert_eq!(p["log_end_offset"], 6, "only the good produces: {p}");
    let kept: Vec<&str> = p["batches"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b["records"].as_array().unwrap())
        .map(|r| r["value"].as_str().unwrap())
        .collect();
    assert_eq!(kept, ["v0", "v1", "v2", "v0", "v1", "v2"]);
}

#[test]
fn bad_frames_leave_the_data_directory_byte_for_byte() {
    let mut server = Server::start(&["--auto-replicate", "0"]);
    let port = server.port(1);
    let mut good = Conn::connect(port, "good");
    wire::create_topic(&mut good, "t", 1, 1);
    let values: Vec<String> = (0..3).map(|i| format!("v{i}")).collect();
    good.call(&wire::produce("t", 0, 1, wire::batch(&values)), 9)
        .unwrap();
    let before = snapshot(&server.data_dir);
    assert!(!before.is_empty(), "the data directory holds the log");
    for (what, bytes, hang_up, _) in bad_inputs() {
        let mut bad = raw::connect(port);
        bad.write_all(&bytes).unwrap();
        if hang_up {
            bad.shutdown(Shutdown::Write).unwrap();
        }
        assert!(raw::closed(&mut bad), "{what}");
    }
    // Reads in between change nothing either.
    assert_eq!(wire::leaders(&mut good, "t"), [1]);
    assert_eq!(
        snapshot(&server.data_dir),
        before,
        "the bad frames wrote nothing"
    );
    server.stop();
}

/// A client that hangs up while its request is being handled (an acks=all
/// produce waiting for followers that never fetch): the request still
/// gets its one log line when it ends (here at its 1 s timeout), nothing
/// else is logged for that connection, the server goes on, and the
/// append stays in the leader's log as a broker's would.
#[test]
fn a_client_that_hangs_up_while_its_request_waits_gets_one_line() {
    let mut server = Server::start(&["--auto-replicate", "0"]);
    let port = server.port(1);
    let mut good = Conn::connect(port, "good");
    wire::create_topic(&mut good, "t", 1, 3);
    let mut gone = Conn::connect(port, "gone");
    let local = gone.stream.local_addr().unwrap();
    let mut produce = wire::produce("t", 0, -1, wire::batch(&["w".to_string()]));
    produce.timeout_ms = 1000;
    let frame = gone.frame(&produce, 9);
    gone.stream.write_all(&frame).unwrap();
    // Hang up once the server has the request (it logs nothing until the
    // request ends).
    std::thread::sleep(std::time::Duration::from_millis(300));
    drop(gone);
    // Past the timeout, the server is still serving.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert_eq!(wire::leaders(&mut good, "t"), [1]);
    let log = server.stop();
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(&format!(" {local}: ")))
        .collect();
    assert_eq!(lines.len(), 1, "one line for {local}:\n{log}");
    assert!(
        lines[0].contains("Produce v9 from client \"gone\": acks=all t-0 offset 0"),
        "{:?}",
        lines[0]
    );
    assert!(lines[0].contains("REQUEST_TIMED_OUT"), "{:?}", lines[0]);
    let state = server.state();
    let p = partition(&state, "t", 0);
    assert_eq!(p["log_end_offset"], 1, "the append stays: {p}");
    assert_eq!(p["high_watermark"], 0, "never replicated: {p}");
}

/// Two neighbouring loopback ports: the first free (closed again), the
/// second held by the returned listener.
fn port_then_a_held_one() -> (u16, std::net::TcpListener) {
    for _ in 0..50 {
        let first = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = first.local_addr().unwrap().port();
        if port == u16::MAX {
            continue;
        }
        if let Ok(held) = std::net::TcpListener::bind(("127.0.0.1", port + 1)) {
            return (port, held);
        }
    }
    panic!("no two neighbouring free ports");
}

/// `serve` on ports in use (issue 25): broker 1's port is free, broker 2's
/// is taken. One line, exit 2, and nothing created or changed: a new
/// --data-dir is not made, the --record file not written, a data
/// directory holding data left byte for byte. Every listener is bound
/// before anything is written; before, the new directory got a journal,
/// a lock file and broker directories.
#[test]
fn serve_on_ports_in_use_creates_and_changes_nothing() {
    let bin = env!("CARGO_BIN_EXE_mk-tui");
    let tmp = tempfile::tempdir().unwrap();
    let (port, _held) = port_then_a_held_one();
    let listen = format!("127.0.0.1:{port}");
    let refused = |args: &[&str]| -> String {
        let out = std::process::Command::new(bin)
            .arg("serve")
            .args(args)
            .args(["--listen", &listen])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("mk-tui: broker 2: cannot listen on ")
                && err.contains(&format!("127.0.0.1:{}", port + 1)),
            "{err}"
        );
        err
    };
    // A new data directory and a recording: neither created.
    let data = tmp.path().join("new-data");
    let record = tmp.path().join("session.jsonl");
    refused(&[
        "--data-dir",
        data.to_str().unwrap(),
        "--record",
        record.to_str().unwrap(),
    ]);
    assert!(!data.exists(), "the new data directory was created");
    assert!(!record.exists(), "the recording was created");
    // From a recording, into a new directory.
    let recording =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings/ch06-leader-failure.jsonl");
    refused(&[
        recording.to_str().unwrap(),
        "--data-dir",
        data.to_str().unwrap(),
    ]);
    assert!(!data.exists(), "the new data directory was created");
    // A directory that holds data: reopened only once listening.
    let held = tmp.path().join("held");
    let made = std::process::Command::new(bin)
        .arg("state")
        .arg(&recording)
        .arg("--data-dir")
        .arg(&held)
        .output()
        .unwrap();
    assert!(made.status.success());
    let before = snapshot(&held);
    refused(&["--data-dir", held.to_str().unwrap()]);
    assert_eq!(snapshot(&held), before, "the data directory changed");
    // An empty directory stays empty.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    refused(&["--data-dir", empty.to_str().unwrap()]);
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0);
}
