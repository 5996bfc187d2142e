//! OffsetDelete (API 47) through real clients: kafka-python's
//! `KafkaAdminClient.delete_group_offsets` (NONE, GROUP_SUBSCRIBED_TO_TOPIC,
//! GROUP_ID_NOT_FOUND; OffsetFetch after it), Kafka's own
//! `kafka-consumer-groups --delete-offsets` with and without a subscribed
//! member, a deletion that holds across kill -9, and a served session's
//! recording that replays to the same committed offsets.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::kafka_ref::KafkaRef;
use crate::python;
use crate::record::state_of_recording;
use crate::server::Server;

const GROUP_COMMAND: &str = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand";

/// Topic t of two partitions and u of one, six records in each partition.
fn topics_with_records(py: &PathBuf, boot: &str) {
    for (topic, partitions) in [("t", 2), ("u", 1)] {
        python::run(
            py,
            "ck_create_topic.py",
            &[boot, topic, &partitions.to_string(), "1"],
        );
        for p in 0..partitions {
            let p = p.to_string();
            let out = python::run(py, "ck_produce.py", &[boot, topic, &p, "1", "6", "v"]);
            assert_eq!(out.matches("delivered").count(), 6, "{out}");
        }
    }
}

/// The Python with both clients the scenario uses, or None (skipped).
fn clients() -> Option<PathBuf> {
    python::with("confluent_kafka")?;
    python::with("kafka")
}

/// A member of `group` subscribed to `topic`, kept in a child process
/// until [`Holder::release`] (or its own 60 s bound).
struct Holder {
    child: Child,
    stop: PathBuf,
    out: PathBuf,
    _dir: tempfile::TempDir,
}

impl Holder {
    fn start(py: &Path, boot: &str, group: &str, topic: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (stop, out) = (dir.path().join("stop"), dir.path().join("out"));
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clients/kp_delete_offsets.py");
        let child = Command::new(py)
            .arg(script)
            .args([boot, "hold", group, topic, stop.to_str().unwrap()])
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let holder = Self {
            child,
            stop,
            out,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(40);
        loop {
            let said = std::fs::read_to_string(&holder.out).unwrap_or_default();
            if said.contains("assigned") {
                assert!(!said.contains("assigned 0"), "{said}");
                return holder;
            }
            assert!(Instant::now() < deadline, "no assignment: {said}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The member leaves; waits for the process (bounded).
    fn release(mut self) {
        std::fs::write(&self.stop, "").unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("the holding member did not close");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn delete_group_offsets_keeps_a_subscribed_topic_deletes_the_rest_and_replays() {
    let Some(py) = clients() else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("served.jsonl");
    let mut server = Server::start(&["--rules", "kafka", "--record", file.to_str().unwrap()]);
    let boot = server.bootstrap();
    topics_with_records(&py, &boot);
    let said = python::run(&py, "kp_delete_offsets.py", &[&boot, "scenario"]);
    let lines: Vec<&str> = said.lines().collect();
    assert_eq!(
        lines,
        [
            "g t-0 NoError",
            "g t-1 NoError",
            "live t-0 GroupSubscribedToTopicError",
            "live u-0 NoError",
            "nope GroupIdNotFoundError",
            "g nope-0 UnknownTopicOrPartitionError",
            "g u-5 UnknownTopicOrPartitionError",
            "offsets g: u-0=6",
            "offsets live: t-0=1",
        ],
        "{said}\n{}",
        server.log()
    );
    // Kafka's own tool: refused while a member subscribes, done once it left.
    let java = KafkaRef::java_client();
    if let Some(java) = &java {
        let run = |class: &str, args: &[&str]| java.run_main(class, args);
        assert_eq!(tool_lines(&py, &boot, &run), KAFKA_TOOL_SAYS);
    }
    let log = server.stop();
    assert!(
        log.contains("GROUP_SUBSCRIBED_TO_TOPIC"),
        "the request log says why: {log}"
    );
    let left = server.state();
    let text = std::fs::read_to_string(&file).unwrap();
    let deleted: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter_map(|l| l["action"].get("delete_offsets").cloned())
        .collect();
    let mut expected = vec![json!({"group": "g", "partitions": [
        {"topic": "t", "partition": 0}, {"topic": "t", "partition": 1}]})];
    if java.is_some() {
        expected.push(json!({"group": "live", "partitions": [{"topic": "t", "partition": 0}]}));
    }
    assert_eq!(
        deleted, expected,
        "each deletion of committed offsets is a step, a refusal or nothing to delete none: {text}"
    );
    assert_eq!(
        state_of_recording(&file)["committed_offsets"],
        left["committed_offsets"],
        "the replay deletes what the server deleted"
    );
    assert_eq!(left["committed_offsets"]["g"], json!({"u-0": 6}));
}

/// What `kafka-consumer-groups --delete-offsets --group live --topic t`
/// prints with a member of `live` subscribed to t, then once it left
/// (spaces squeezed).
const KAFKA_TOOL_SAYS: [&str; 2] = [
    "Error: Encountered some partition-level error, see the follow-up details.\n\
     TOPIC PARTITION STATUS\n\
     t 0 Error: org.apache.kafka.common.errors.GroupSubscribedToTopicException: Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.\n\
     t 1 Error: org.apache.kafka.common.errors.GroupSubscribedToTopicException: Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.",
    "Request succeeded for deleting offsets from group live.\n\
     TOPIC PARTITION STATUS\n\
     t 0 Successful\n\
     t 1 Successful",
];

/// Kafka's `ConsumerGroupCommand --delete-offsets` for `live` and t, run
/// by `run` against `boot`: with a subscribed member, then after it left.
fn tool_lines(py: &Path, boot: &str, run: &dyn Fn(&str, &[&str]) -> String) -> [String; 2] {
    let args = [
        "--bootstrap-server",
        boot,
        "--delete-offsets",
        "--group",
        "live",
        "--topic",
        "t",
    ];
    let holder = Holder::start(py, boot, "live", "t");
    let refused = run(GROUP_COMMAND, &args);
    holder.release();
    let done = run(GROUP_COMMAND, &args);
    [squeeze(&refused), squeeze(&done)]
}

/// Kafka's tool output with each run of spaces made one (its columns are
/// padded to the widest value) and blank lines dropped.
fn squeeze(out: &str) -> String {
    out.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_deletion_holds_across_kill_9_and_a_new_member_starts_from_the_reset() {
    let Some(py) = clients() else {
        return;
    };
    let mut server = Server::start_restartable(&[]);
    let boot = server.bootstrap();
    topics_with_records(&py, &boot);
    let first = python::run(&py, "kp_delete_offsets.py", &[&boot, "scenario"]);
    assert!(first.contains("offsets g: u-0=6"), "{first}");
    server.kill();
    server.restart();
    let read = python::run(&py, "kp_delete_offsets.py", &[&boot, "read", "g", "t"]);
    assert_eq!(
        read.trim(),
        "read 12 from 0:0,1:0",
        "g's offsets of t stay deleted: earliest on both partitions"
    );
    let read = python::run(&py, "kp_delete_offsets.py", &[&boot, "read", "g", "u"]);
    assert_eq!(read.trim(), "read 0 from -", "g's offset of u stays");
    server.stop();
    let committed = &server.state()["committed_offsets"];
    assert_eq!(committed["g"], json!({"u-0": 6}), "{committed}");
    assert_eq!(committed["live"], json!({"t-0": 1}), "{committed}");
}

/// Apache Kafka 4.4 given the same clients' requests answers as serve
/// does: kafka-python's lines and Kafka's tool's alike.
#[test]
fn apache_kafka_deletes_and_refuses_the_same_offsets() {
    let (Some(py), Some(_)) = (clients(), KafkaRef::java_client()) else {
        return;
    };
    let Some(kafka) = KafkaRef::start() else {
        return;
    };
    topics_with_records(&py, &kafka.bootstrap);
    let theirs = python::run(&py, "kp_delete_offsets.py", &[&kafka.bootstrap, "scenario"]);
    let run = |class: &str, args: &[&str]| kafka.run_main(class, args);
    let theirs_tool = tool_lines(&py, &kafka.bootstrap, &run);
    let mut server = Server::start(&["--rules", "kafka"]);
    let boot = server.bootstrap();
    topics_with_records(&py, &boot);
    let ours = python::run(&py, "kp_delete_offsets.py", &[&boot, "scenario"]);
    assert_eq!(ours, theirs, "serve:\n{ours}\nKafka:\n{theirs}");
    assert_eq!(theirs_tool, KAFKA_TOOL_SAYS);
    server.stop();
}
