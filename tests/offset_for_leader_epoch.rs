//! OffsetForLeaderEpoch against Apache Kafka 4.4 (tests/common/kafka_ref.rs):
//! one partition of two replicas written under its first leader, that
//! leader gone, written again under the next, then asked where each epoch
//! ends, with stale and future current epochs, of a broker that does not
//! lead it, and of a partition that does not exist. serve and Kafka must
//! give the same answers relative to each one's current epoch (Kafka's
//! controller may bump it more than once; serve's promotion bumps it
//! once). serve's answers are also checked on their own, so the test
//! asserts something where Kafka cannot be started (outside CI).

#[allow(dead_code)]
#[path = "common/kafka_ref.rs"]
mod kafka_ref;
#[allow(dead_code)]
#[path = "serve/python.rs"]
mod python;
#[allow(dead_code)]
#[path = "serve/server.rs"]
mod server;
#[allow(dead_code)]
#[path = "serve/wire.rs"]
mod wire;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use kafka_protocol::messages::offset_for_leader_epoch_request::{
    OffsetForLeaderPartition, OffsetForLeaderTopic,
};
use kafka_protocol::messages::{
    BrokerId, MetadataRequest, MetadataResponse, OffsetForLeaderEpochRequest, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use serde_json::json;

use kafka_ref::KafkaRef;
use server::Server;
use wire::Conn;

const TOPIC: &str = "epochs";

/// The partition's (leader, leader epoch, replicas), asked of `port`.
fn partition(port: u16) -> Option<(i32, i32, Vec<i32>)> {
    let mut conn = Conn::connect(port, "metadata");
    let r: MetadataResponse = conn
        .call(&MetadataRequest::default().with_topics(None), 12)
        .expect("Metadata answered");
    let t = r
        .topics
        .iter()
        .find(|t| t.name.as_ref().is_some_and(|n| n.0.as_str() == TOPIC))?;
    let p = t.partitions.first()?;
    Some((
        p.leader_id.0,
        p.leader_epoch,
        p.replica_nodes.iter().map(|b| b.0).collect(),
    ))
}

/// Asks `port` for (topic, partition, current epoch, epoch) each, at
/// `version`: (error, epoch, end offset) each.
fn ask(port: u16, version: i16, asked: &[(&str, i32, i32, i32)]) -> Vec<(i16, i32, i64)> {
    let topics = asked
        .iter()
        .map(|&(topic, p, current, epoch)| {
            OffsetForLeaderTopic::default()
                .with_topic(TopicName(StrBytes::from_string(topic.into())))
                .with_partitions(vec![
                    OffsetForLeaderPartition::default()
                        .with_partition(p)
                        .with_current_leader_epoch(current)
                        .with_leader_epoch(epoch),
                ])
        })
        .collect();
    let request = OffsetForLeaderEpochRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_topics(topics);
    let r = Conn::connect(port, "consumer")
        .call(&request, version)
        .expect("OffsetForLeaderEpoch answered");
    r.topics
        .iter()
        .flat_map(|t| t.partitions.iter())
        .map(|p| (p.error_code, p.leader_epoch, p.end_offset))
        .collect()
}

/// Produces `count` records `prefix0..` as one batch at `acks` to
/// `port`'s broker, with confluent-kafka (Apache Kafka refuses the raw
/// batches `wire::batch` builds: INVALID_RECORD).
fn produce(py: &PathBuf, port: u16, count: usize, prefix: &str, acks: &str) {
    let out = python::run(
        py,
        "ck_produce.py",
        &[
            &format!("127.0.0.1:{port}"),
            TOPIC,
            "0",
            acks,
            &count.to_string(),
            prefix,
        ],
    );
    assert_eq!(out.matches("delivered").count(), count, "{out}");
}

/// Everything asked of a server whose partition holds 3 records of its
/// first leader's epoch (0) and 2 of the current leader's (`current`),
/// led by `leader`; `other` holds no replica. By version (2-4), the same.
fn answers(port_of: &dyn Fn(i32) -> u16, leader: i32, current: i32, other: i32) -> Vec<String> {
    let mut out = Vec::new();
    for version in 2..=4 {
        let at_leader = ask(
            port_of(leader),
            version,
            &[
                (TOPIC, 0, -1, 0),
                (TOPIC, 0, current, current - 1),
                (TOPIC, 0, current, current),
                (TOPIC, 0, -1, current + 1),
                (TOPIC, 0, -1, -1),
                (TOPIC, 0, current - 1, 0),
                (TOPIC, 0, current + 1, 0),
                (TOPIC, 3, -1, 0),
                ("nowhere", 0, -1, 0),
            ],
        );
        let elsewhere = ask(port_of(other), version, &[(TOPIC, 0, -1, 0)]);
        out.push(format!(
            "v{version}: {}",
            at_leader
                .iter()
                .chain(&elsewhere)
                .map(|&(e, epoch, end)| {
                    // Epochs relative to the current one: Kafka's may have
                    // been bumped more than once.
                    let epoch = match epoch {
                        -1 => "-".to_string(),
                        e if e == current => "cur".to_string(),
                        e => e.to_string(),
                    };
                    format!("({e} {epoch} {end})")
                })
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    out
}

/// What both must answer: epoch 0 ends where the current leader's first
/// batch starts (3); the epoch before the current one with no batch of
/// its own ends there too, answered as epoch 0; the current epoch ends at
/// the log end (5); a future or undefined epoch is undefined; a stale
/// current epoch FENCED_LEADER_EPOCH (74), a future one
/// UNKNOWN_LEADER_EPOCH (75); an unknown partition
/// UNKNOWN_TOPIC_OR_PARTITION (3); a broker without the partition
/// NOT_LEADER_OR_FOLLOWER (6).
fn expected() -> Vec<String> {
    (2..=4)
        .map(|v| {
            format!(
                "v{v}: (0 0 3) (0 0 3) (0 cur 5) (0 - -1) (0 - -1) (74 - -1) (75 - -1) (3 - -1) (3 - -1) (6 - -1)"
            )
        })
        .collect()
}

fn serve_answers(py: &PathBuf) -> Vec<String> {
    let temp = tempfile::tempdir().unwrap();
    let recording = temp.path().join("epochs.jsonl");
    let lines = [
        json!({"mk_recording": 1, "title": "epochs", "rules": "kafka",
            "cluster": {"brokers": [1, 2, 3],
                "topics": [{"name": TOPIC, "partitions": 1, "replication_factor": 2}]}}),
        json!({"at_ms": 0, "action": {"produce": {"topic": TOPIC, "partition": 0, "acks": "all",
            "records": [{"value": "a0"}, {"value": "a1"}, {"value": "a2"}]}}}),
        json!({"at_ms": 0, "action": {"replicate": {}}}),
        json!({"at_ms": 0, "action": {"stop_broker": {"broker": 1}}}),
        json!({"at_ms": 0, "action": {"promote": {"topic": TOPIC, "partition": 0, "broker": 2}}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&recording, text).unwrap();
    let serve = Server::start(&[recording.to_str().unwrap()]);
    let port_of = |b: i32| serve.brokers[(b - 1) as usize].1;
    let (leader, current, replicas) = partition(port_of(2)).expect("the topic is listed");
    assert_eq!((leader, current, replicas), (2, 1, vec![1, 2]));
    produce(py, port_of(2), 2, "b", "1");
    answers(&port_of, 2, current, 3)
}

fn kafka_answers(py: &PathBuf, kafka: &KafkaRef) -> Vec<String> {
    let port_of = |b: i32| kafka.ports[(b - 1) as usize];
    let mut conn = Conn::connect(port_of(1), "admin");
    wire::create_topic(&mut conn, TOPIC, 1, 2);
    let deadline = Instant::now() + Duration::from_secs(60);
    let (first, _, replicas) = loop {
        match partition(port_of(1)) {
            Some(p) if p.0 >= 0 => break p,
            _ => {
                assert!(Instant::now() < deadline, "no leader for {TOPIC}");
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    };
    produce(py, port_of(first), 3, "a", "all");
    kafka.kill_and_fence(first as u32);
    let next = *replicas.iter().find(|&&b| b != first).unwrap();
    let other = (1..=3).find(|b| !replicas.contains(b)).unwrap();
    let (leader, current) = loop {
        match partition(port_of(next)) {
            Some((l, e, _)) if l == next => break (l, e),
            _ => {
                assert!(Instant::now() < deadline, "{next} never led {TOPIC}");
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    };
    // One replica is left: the reference cluster's min.insync.replicas
    // refuses acks=all.
    produce(py, port_of(leader), 2, "b", "1");
    answers(&port_of, leader, current, other)
}

#[test]
fn serve_answers_where_each_leader_epoch_ends_as_apache_kafka_does() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let served = serve_answers(&py);
    assert_eq!(served, expected(), "serve");
    let Some(kafka) = KafkaRef::start() else {
        return;
    };
    let reference = kafka_answers(&py, &kafka);
    assert_eq!(reference, served, "Apache Kafka 4.4 and serve");
}
