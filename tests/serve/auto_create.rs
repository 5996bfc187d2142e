//! `--auto-create-topics` (Kafka's `auto.create.topics.enable`): a
//! Metadata request that names a missing topic and allows its creation
//! creates it, as CreateTopics would with no count or factor given; without
//! the flag, or when the client does not allow it, nothing is created
//! (docs/kafka-protocol.md, "Metadata"; docs/kafka-differences.md).
//! Driven by kcat, whose producer allows creation and whose
//! `allow.auto.create.topics=false` does not.

use std::process::{Command, Output};

use crate::server::{Server, partition, topics};

fn kcat_installed() -> bool {
    let installed = Command::new("kcat").arg("-V").output().is_ok();
    if !installed {
        println!("skipped: kcat is not installed");
    }
    installed
}

/// `kcat ARGS` with `input` on its standard input, bounded in time.
fn kcat(args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new("timeout")
        .arg("30")
        .arg("kcat")
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Produces `lines` to `topic`, each a record; the producer gives up on a
/// record after 3 s.
fn produce(boot: &str, topic: &str, lines: &str) -> Output {
    kcat(
        &[
            "-b",
            boot,
            "-P",
            "-t",
            topic,
            "-X",
            "message.timeout.ms=3000",
        ],
        lines,
    )
}

#[test]
fn a_producer_creates_the_topic_it_names_when_the_server_allows_it() {
    if !kcat_installed() {
        return;
    }
    let mut server = Server::start(&["--auto-create-topics"]);
    let boot = server.bootstrap();
    let sent = produce(&boot, "fresh", "a\nb\nc\n");
    assert!(
        sent.status.success(),
        "kcat -P: {}",
        String::from_utf8_lossy(&sent.stderr)
    );
    let read = kcat(
        &[
            "-b",
            &boot,
            "-C",
            "-t",
            "fresh",
            "-o",
            "beginning",
            "-e",
            "-q",
        ],
        "",
    );
    assert_eq!(String::from_utf8_lossy(&read.stdout), "a\nb\nc\n");

    // A client that does not allow creation (librdkafka's consumer default)
    // is told the topic is unknown, and nothing is made.
    let listed = kcat(
        &[
            "-b",
            &boot,
            "-L",
            "-t",
            "not-asked",
            "-X",
            "allow.auto.create.topics=false",
        ],
        "",
    );
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains("Unknown topic"), "{listed}");

    // A name Kafka refuses is refused the same way, and nothing is made.
    let bad = produce(&boot, "bad/name", "x\n");
    let said = String::from_utf8_lossy(&bad.stderr);
    assert!(said.contains("Invalid topic"), "{said}");

    let log = server.stop();
    assert!(
        log.contains("created fresh (auto.create.topics.enable)"),
        "{log}"
    );
    assert!(
        log.contains("bad/name not created: invalid topic name"),
        "{log}"
    );
    let state = server.state();
    assert_eq!(topics(&state), ["fresh"], "only the allowed, valid name");
    let fresh = partition(&state, "fresh", 0);
    assert_eq!(fresh["log_end_offset"], 3);
    // CreateTopics' defaults: one partition, a replica on each of the
    // three brokers.
    assert_eq!(fresh["replicas"].as_array().unwrap().len(), 3);
    assert!(state["partitions"].as_array().unwrap().len() == 1);
}

#[test]
fn without_the_flag_a_missing_topic_stays_missing() {
    if !kcat_installed() {
        return;
    }
    let mut server = Server::start(&[]);
    let boot = server.bootstrap();
    let sent = produce(&boot, "fresh", "a\n");
    assert!(!sent.status.success(), "the record cannot be delivered");
    // librdkafka waits for the topic to appear until the record times out
    // (or says the topic is unknown, when its metadata wait ends first).
    let said = String::from_utf8_lossy(&sent.stderr);
    assert!(
        said.contains("Message timed out") || said.contains("Unknown topic or partition"),
        "{said}"
    );
    let log = server.stop();
    assert!(!log.contains("created fresh"), "{log}");
    // The retried Metadata says why the topic does not appear.
    assert!(
        log.contains(
            "unknown topic(s) fresh (create it first, or start the server with --auto-create-topics)"
        ),
        "{log}"
    );
    assert!(topics(&server.state()).is_empty());
}
