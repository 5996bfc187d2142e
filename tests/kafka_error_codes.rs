//! Error codes Apache Kafka answers, and serve (issue 23). By API version: a producer fenced by a newer one
//! of its transactional id sends each transactional API at each version
//! both servers handle, to `mk-tui serve --rules kafka` and to Apache
//! Kafka 4.4 (tests/common/kafka_ref.rs), and both must answer the same
//! code: INVALID_PRODUCER_EPOCH below the version that knows
//! PRODUCER_FENCED (src/kafka/by_version.rs). serve's codes are also
//! checked on their own, so the test asserts something where Kafka cannot
//! be started (outside CI). kafka-python speaking Kafka 2.6's versions
//! (EndTxn v1) then meets the fencing on both. DeleteTopics: both delete,
//! with the same answers at every version. DescribeCluster: the same
//! answers at every version.

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

#[path = "kafka_error_codes/delayed_write.rs"]
mod delayed_write;
#[path = "kafka_error_codes/describe_cluster.rs"]
mod describe_cluster;

use std::time::{Duration, Instant};

use kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
use kafka_protocol::messages::txn_offset_commit_request::{
    TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
};
use kafka_protocol::messages::{
    AddOffsetsToTxnRequest, AddPartitionsToTxnRequest, ApiVersionsRequest, CreateTopicsRequest,
    DeleteTopicsRequest, EndTxnRequest, FindCoordinatorRequest, GroupId, InitProducerIdRequest,
    MetadataRequest, ProducerId, TopicName, TransactionalId, TxnOffsetCommitRequest,
};
use kafka_protocol::protocol::StrBytes;

use kafka_ref::KafkaRef;
use server::Server;
use wire::Conn;

/// How long a coordinator may answer "not yet" (loading, electing).
const SETTLE: Duration = Duration::from_secs(60);

const PRODUCER_FENCED: i16 = 90;
const INVALID_PRODUCER_EPOCH: i16 = 47;

/// The transactional APIs and the newest version of each this server
/// handles (src/kafka/handlers/mod.rs).
const APIS: [(&str, i16, i16); 5] = [
    ("InitProducerId", 22, 4),
    ("AddPartitionsToTxn", 24, 3),
    ("AddOffsetsToTxn", 25, 3),
    ("EndTxn", 26, 3),
    ("TxnOffsetCommit", 28, 3),
];

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

fn port_of(addr: &str) -> u16 {
    addr.rsplit(':').next().unwrap().parse().unwrap()
}

/// Each API's versions `port`'s broker handles, as (key, min, max).
fn versions(port: u16) -> Vec<(i16, i16, i16)> {
    let mut conn = Conn::connect(port, "versions");
    let r = conn
        .call(&ApiVersionsRequest::default(), 0)
        .expect("ApiVersions answered");
    r.api_keys
        .iter()
        .map(|k| (k.api_key, k.min_version, k.max_version))
        .collect()
}

/// The versions of `key` both listings handle, up to `cap`.
fn common(listings: &[&[(i16, i16, i16)]], key: i16, cap: i16) -> Vec<i16> {
    let (mut lo, mut hi) = (0, cap);
    for l in listings {
        let (_, min, max) = l
            .iter()
            .find(|(k, _, _)| *k == key)
            .unwrap_or_else(|| panic!("API {key} not listed"));
        lo = lo.max(*min);
        hi = hi.min(*max);
    }
    (lo..=hi).collect()
}

/// Calls `f` until it answers something other than a retriable
/// coordinator code (loading, not available, not coordinator, concurrent
/// transactions), for at most [`SETTLE`].
fn settled<T>(what: &str, mut f: impl FnMut() -> Result<T, i16>) -> T {
    let deadline = Instant::now() + SETTLE;
    loop {
        match f() {
            Ok(t) => return t,
            Err(c) if [14, 15, 16, 51, 3, 5].contains(&c) && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(c) => panic!("{what}: error {c}"),
        }
    }
}

/// The port of the coordinator of `key` (`key_type` 0 a group, 1 a
/// transactional id), asked of `port`'s broker.
fn coordinator(port: u16, key: &str, key_type: i8) -> u16 {
    let mut conn = Conn::connect(port, "find");
    settled(&format!("FindCoordinator {key}"), || {
        let request = FindCoordinatorRequest::default()
            .with_key(s(key))
            .with_key_type(key_type);
        let r = conn.call(&request, 2).expect("FindCoordinator answered");
        if r.error_code != 0 {
            return Err(r.error_code);
        }
        Ok(r.port as u16)
    })
}

/// Waits until `port`'s broker lists `topic` with a leader.
fn wait_for_topic(port: u16, topic: &str) {
    let mut conn = Conn::connect(port, "metadata");
    settled(&format!("metadata of {topic}"), || {
        let request = MetadataRequest::default().with_topics(None);
        let r = conn.call(&request, 9).expect("Metadata answered");
        let ready = r.topics.iter().any(|t| {
            t.name.as_ref().is_some_and(|n| n.0.as_str() == topic)
                && t.partitions.iter().all(|p| p.leader_id.0 >= 0)
                && !t.partitions.is_empty()
        });
        if ready { Ok(()) } else { Err(3) }
    });
}

fn init(conn: &mut Conn, txn: &str, expected: (i64, i16), version: i16) -> Result<(i64, i16), i16> {
    let request = InitProducerIdRequest::default()
        .with_transactional_id(Some(TransactionalId(s(txn))))
        .with_transaction_timeout_ms(60_000)
        .with_producer_id(ProducerId(expected.0))
        .with_producer_epoch(expected.1);
    let r = conn
        .call(&request, version)
        .expect("InitProducerId answered");
    if r.error_code != 0 {
        return Err(r.error_code);
    }
    Ok((r.producer_id.0, r.producer_epoch))
}

/// A zombie's requests: `txn` is initialised twice, and each API is sent
/// at each of `versions` with the first (fenced) epoch. Returns
/// `API vN: CODE` lines.
fn fenced_codes(bootstrap: u16, topic: &str, txn: &str, versions: &[Vec<i16>]) -> Vec<String> {
    let group = format!("{txn}-group");
    wait_for_topic(bootstrap, topic);
    let txn_port = coordinator(bootstrap, txn, 1);
    let group_port = coordinator(bootstrap, &group, 0);
    let mut conn = Conn::connect(txn_port, "zombie");
    let (pid, zombie) = settled("first InitProducerId", || init(&mut conn, txn, (-1, -1), 3));
    let (pid2, fresh) = settled("second InitProducerId", || {
        init(&mut conn, txn, (-1, -1), 3)
    });
    assert_eq!(
        (pid2, fresh),
        (pid, zombie + 1),
        "the second init bumps the epoch"
    );
    let mut lines = Vec::new();
    let mut note = |api: &str, v: i16, code: i16| lines.push(format!("{api} v{v}: {code}"));
    for &v in versions[0].iter().filter(|v| **v >= 3) {
        let code = init(&mut conn, txn, (pid, zombie), v).err().unwrap_or(0);
        note("InitProducerId", v, code);
    }
    for &v in &versions[1] {
        let request = AddPartitionsToTxnRequest::default()
            .with_v3_and_below_transactional_id(TransactionalId(s(txn)))
            .with_v3_and_below_producer_id(ProducerId(pid))
            .with_v3_and_below_producer_epoch(zombie)
            .with_v3_and_below_topics(vec![
                AddPartitionsToTxnTopic::default()
                    .with_name(TopicName(s(topic)))
                    .with_partitions(vec![0]),
            ]);
        let r = conn.call(&request, v).expect("AddPartitionsToTxn answered");
        let code = r.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code;
        note("AddPartitionsToTxn", v, code);
    }
    for &v in &versions[2] {
        let request = AddOffsetsToTxnRequest::default()
            .with_transactional_id(TransactionalId(s(txn)))
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(zombie)
            .with_group_id(GroupId(s(&group)));
        let r = conn.call(&request, v).expect("AddOffsetsToTxn answered");
        note("AddOffsetsToTxn", v, r.error_code);
    }
    for &v in &versions[3] {
        let request = EndTxnRequest::default()
            .with_transactional_id(TransactionalId(s(txn)))
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(zombie)
            .with_committed(true);
        let r = conn.call(&request, v).expect("EndTxn answered");
        note("EndTxn", v, r.error_code);
    }
    let mut groups = Conn::connect(group_port, "zombie-offsets");
    for &v in &versions[4] {
        let request = TxnOffsetCommitRequest::default()
            .with_transactional_id(TransactionalId(s(txn)))
            .with_group_id(GroupId(s(&group)))
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(zombie)
            .with_generation_id(-1)
            .with_topics(vec![
                TxnOffsetCommitRequestTopic::default()
                    .with_name(TopicName(s(topic)))
                    .with_partitions(vec![
                        TxnOffsetCommitRequestPartition::default()
                            .with_partition_index(0)
                            .with_committed_offset(1)
                            .with_committed_leader_epoch(-1),
                    ]),
            ]);
        let r = groups.call(&request, v).expect("TxnOffsetCommit answered");
        note("TxnOffsetCommit", v, r.topics[0].partitions[0].error_code);
    }
    lines
}

/// What serve answers, by Kafka's rules: PRODUCER_FENCED from the version
/// that knows it (InitProducerId v4, the others v2), INVALID_PRODUCER_EPOCH
/// below, and always on TxnOffsetCommit.
fn expected(api: &str, version: i16) -> i16 {
    let knows = match api {
        "InitProducerId" => 4,
        "TxnOffsetCommit" => i16::MAX,
        _ => 2,
    };
    if version >= knows {
        PRODUCER_FENCED
    } else {
        INVALID_PRODUCER_EPOCH
    }
}

/// One Apache Kafka cluster for every check of this file (each costs
/// about 1.5 GB and 25 s to start).
#[test]
fn serve_answers_these_error_codes_as_apache_kafka_or_as_documented() {
    let serve = Server::start(&["--rules", "kafka"]);
    let kafka = KafkaRef::start();
    a_fenced_producer_gets_the_code_its_api_version_knows(&serve, kafka.as_ref());
    delete_topics_answers_as_apache_kafka(&serve, kafka.as_ref());
    describe_cluster_answers_as_apache_kafka(&serve, kafka.as_ref());
    a_write_delayed_past_its_end_is_refused(kafka.as_ref());
}

/// DescribeCluster v0-2 (docs/kafka-protocol.md): the same lines from
/// serve's three brokers and Kafka's three nodes; before, serve did not
/// list it, and a client's raw request failed as to an old broker (a new
/// user's trial with franz-go).
fn describe_cluster_answers_as_apache_kafka(serve: &Server, kafka: Option<&KafkaRef>) {
    let served = describe_cluster::answers(serve.brokers[0].1);
    assert!(
        served[0].starts_with(
            "v0 plain: error 0 None, endpoint 1, cluster id given true, brokers [1, 2, 3]"
        ) && served[0].ends_with("controller among them true, operations -2147483648"),
        "{served:#?}"
    );
    let Some(kafka) = kafka else {
        return;
    };
    let theirs = describe_cluster::answers(port_of(&kafka.addr(1)));
    assert_eq!(served, theirs, "serve, then Apache Kafka 4.4");
}

/// A Produce delivered after its transaction's EndTxn (docs/kafka-
/// differences.md, *Transaction version 1: the epoch of each begin*): at
/// version 2 its epoch was retired by the end, INVALID_PRODUCER_EPOCH (47);
/// at version 1 (Produce v11) its partition is in no open transaction,
/// TRANSACTION_ABORTABLE (120; Kafka first answers NOT_ENOUGH_REPLICAS
/// while its coordinator completes the end, which the probe retries);
/// nothing lands either way. serve at
/// `--transaction-version 2` (the version 1 requests run there too, as a
/// version 1 client's on Kafka 4.4, which finalizes 2) and Apache Kafka
/// 4.4 answer the same.
fn a_write_delayed_past_its_end_is_refused(kafka: Option<&KafkaRef>) {
    let mut serve = Server::start(&["--rules", "kafka", "--transaction-version", "2"]);
    let port = serve.brokers[0].1;
    let brokers = serve.brokers.clone();
    let serve_port = move |id: i32| brokers.iter().find(|(b, _)| *b as i32 == id).unwrap().1;
    let mut conn = Conn::connect(port, "admin");
    let mut served = Vec::new();
    for version in [2, 1] {
        let topic = format!("late{version}");
        wire::create_topic(&mut conn, &topic, 1, 1);
        let txn = format!("late-app{version}");
        served.push(delayed_write::delayed_write(
            port,
            &serve_port,
            &topic,
            &txn,
            version,
        ));
    }
    serve.stop();
    let expected = [
        ["late 47", "end epoch step 1", "appended 0"],
        ["late 120", "end epoch step 0", "appended 0"],
    ];
    assert_eq!(served, expected, "serve");
    let Some(kafka) = kafka else {
        return;
    };
    let boot = port_of(&kafka.addr(1));
    let ports = kafka.ports.clone();
    let kafka_port = move |id: i32| ports[id as usize - 1];
    let mut conn = Conn::connect(boot, "admin");
    let mut theirs = Vec::new();
    for version in [2, 1] {
        let topic = format!("late{version}");
        wire::create_topic(&mut conn, &topic, 1, 3);
        let txn = format!("late-app{version}");
        theirs.push(delayed_write::delayed_write(
            boot,
            &kafka_port,
            &topic,
            &txn,
            version,
        ));
    }
    println!("Apache Kafka: {theirs:?}");
    assert_eq!(theirs, expected, "Apache Kafka 4.4");
}

fn a_fenced_producer_gets_the_code_its_api_version_knows(serve: &Server, kafka: Option<&KafkaRef>) {
    let serve_port = serve.brokers[0].1;
    let mut conn = Conn::connect(serve_port, "admin");
    wire::create_topic(&mut conn, "fenced", 1, 1);
    let serve_listing = versions(serve_port);
    let kafka_listing = kafka.map(|k| versions(port_of(&k.addr(1))));
    let mut listings: Vec<&[(i16, i16, i16)]> = vec![&serve_listing];
    if let Some(l) = &kafka_listing {
        listings.push(l);
    }
    let by_api: Vec<Vec<i16>> = APIS
        .iter()
        .map(|(_, key, cap)| common(&listings, *key, *cap))
        .collect();

    let served = fenced_codes(serve_port, "fenced", "zombie", &by_api);
    println!("serve:\n{}", served.join("\n"));
    // Every version both handle was asked, and EndTxn v1 among them.
    assert!(served.contains(&"EndTxn v1: 47".to_string()), "{served:?}");
    for line in &served {
        let (what, code) = line.split_once(": ").unwrap();
        let (api, v) = what.split_once(" v").unwrap();
        let v: i16 = v.parse().unwrap();
        assert_eq!(code.parse::<i16>().unwrap(), expected(api, v), "{line}");
    }
    let log = serve.log();
    assert!(
        log.contains("PRODUCER_FENCED answered as INVALID_PRODUCER_EPOCH at this version"),
        "{log}"
    );

    let Some(kafka) = kafka else {
        return;
    };
    let boot = port_of(&kafka.addr(1));
    let mut conn = Conn::connect(boot, "admin");
    wire::create_topic(&mut conn, "fenced", 1, 3);
    let from_kafka = fenced_codes(boot, "fenced", "zombie", &by_api);
    println!("Apache Kafka:\n{}", from_kafka.join("\n"));
    assert_eq!(served, from_kafka, "serve and Apache Kafka 4.4 differ");

    // A real client speaking Kafka 2.6's versions (EndTxn v1) is fenced
    // by both, and reads only the fresh producer's record.
    let Some(py) = python::with("kafka") else {
        return;
    };
    let expected = [
        "zombie commit: ProducerFencedError",
        "read_committed: [b'from-fresh']",
    ];
    for (name, bootstrap) in [
        ("serve", serve.bootstrap()),
        ("Kafka", kafka.bootstrap.clone()),
    ] {
        let out = python::run(
            &py,
            "kp_txn_fenced_old.py",
            &[&bootstrap, "old-out", "old-app"],
        );
        assert_eq!(out.lines().collect::<Vec<_>>(), expected, "{name}: {out}");
    }
    let log = serve.log();
    assert!(
        log.lines().any(|l| l.contains("EndTxn v1")
            && l.contains("PRODUCER_FENCED answered as INVALID_PRODUCER_EPOCH")),
        "kafka-python's EndTxn v1 got INVALID_PRODUCER_EPOCH:\n{log}"
    );
}

fn delete_request(names: &[&str], version: i16) -> DeleteTopicsRequest {
    let request = DeleteTopicsRequest::default().with_timeout_ms(15_000);
    if version >= 6 {
        request.with_topics(
            names
                .iter()
                .map(|n| DeleteTopicState::default().with_name(Some(TopicName(s(n)))))
                .collect(),
        )
    } else {
        request.with_topic_names(names.iter().map(|n| TopicName(s(n))).collect())
    }
}

/// Whether `port`'s broker lists `topic` in its Metadata.
fn listed(port: u16, topic: &str) -> bool {
    let mut conn = Conn::connect(port, "metadata");
    let r = conn
        .call(&MetadataRequest::default().with_topics(None), 9)
        .expect("Metadata answered");
    r.topics
        .iter()
        .any(|t| t.name.as_ref().is_some_and(|n| n.0.as_str() == topic))
}

/// DeleteTopics at each version (1-6), raw: a topic that exists, one that
/// does not, a name given twice; each answer's code and (v5+) message,
/// sorted by name, then the deleted topics gone from Metadata and a name
/// created again. serve's lines are checked on their own, then against
/// Apache Kafka 4.4's, which must be the same; confluent-kafka's and
/// kafka-python's AdminClients then delete on serve as on Kafka.
fn delete_topics_answers_as_apache_kafka(serve: &Server, kafka: Option<&KafkaRef>) {
    let served = deletions(serve.brokers[0].1);
    let expected: Vec<String> = (1..=6)
        .flat_map(|v| {
            let message = |m: &str| {
                if v >= 5 {
                    format!(" {m:?}")
                } else {
                    String::new()
                }
            };
            [
                format!("v{v} doomed{v} 0{}", if v >= 5 { " null" } else { "" }),
                format!("v{v} dup 42{}", message("Duplicate topic name.")),
                format!(
                    "v{v} nowhere 3{}",
                    message("This server does not host this topic-partition.")
                ),
            ]
        })
        .chain([
            "listed after: []".to_string(),
            "created again: 0".to_string(),
        ])
        .collect();
    assert_eq!(served, expected, "serve");
    if let Some(py) = python::with("confluent_kafka") {
        let boot = serve.bootstrap();
        let mut conn = Conn::connect(serve.brokers[0].1, "admin");
        wire::create_topic(&mut conn, "doomed", 2, 1);
        let out = python::run(&py, "ck_delete_topics.py", &[&boot, "doomed", "nowhere"]);
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            ["deleted doomed", "error nowhere UNKNOWN_TOPIC_OR_PART"],
            "{out}"
        );
        assert!(!listed(serve.brokers[0].1, "doomed"));
    }
    if let Some(py) = python::with("kafka") {
        let mut conn = Conn::connect(serve.brokers[0].1, "admin");
        wire::create_topic(&mut conn, "doomed", 2, 1);
        let out = python::run(
            &py,
            "kp_delete_topics.py",
            &[&serve.bootstrap(), "doomed", "nowhere"],
        );
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            ["doomed 0", "nowhere 3"],
            "{out}"
        );
    }
    let Some(kafka) = kafka else {
        return;
    };
    let reference = deletions(port_of(&kafka.addr(1)));
    assert_eq!(reference, served, "Apache Kafka 4.4 and serve");
    if let Some(py) = python::with("confluent_kafka") {
        let mut conn = Conn::connect(port_of(&kafka.addr(1)), "admin");
        wire::create_topic(&mut conn, "doomed", 2, 3);
        wait_for_topic(port_of(&kafka.addr(1)), "doomed");
        let out = python::run(
            &py,
            "ck_delete_topics.py",
            &[&kafka.bootstrap, "doomed", "nowhere"],
        );
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            ["deleted doomed", "error nowhere UNKNOWN_TOPIC_OR_PART"],
            "{out}"
        );
    }
}

/// The lines [`delete_topics_answers_as_apache_kafka`] compares, from
/// the server at `port`.
fn deletions(port: u16) -> Vec<String> {
    let mut conn = Conn::connect(port, "admin");
    let mut out = Vec::new();
    for v in 1..=6 {
        let topic = format!("doomed{v}");
        wire::create_topic(&mut conn, &topic, 2, 1);
        wait_for_topic(port, &topic);
        let r = conn
            .call(&delete_request(&[&topic, "nowhere", "dup", "dup"], v), v)
            .expect("DeleteTopics answered");
        let mut lines: Vec<String> = r
            .responses
            .iter()
            .map(|t| {
                let message = match (v >= 5, t.error_message.as_deref()) {
                    (false, _) => String::new(),
                    (true, None) => " null".to_string(),
                    (true, Some(m)) => format!(" {m:?}"),
                };
                let name = t.name.as_ref().map_or("", |n| n.0.as_str());
                format!("v{v} {name} {}{message}", t.error_code)
            })
            .collect();
        lines.sort();
        out.extend(lines);
    }
    let names: Vec<String> = (1..=6).map(|v| format!("doomed{v}")).collect();
    let still: Vec<&String> = settled("the deleted topics gone from Metadata", || {
        let still: Vec<&String> = names.iter().filter(|n| listed(port, n)).collect();
        if still.is_empty() { Ok(still) } else { Err(3) }
    });
    out.push(format!("listed after: {still:?}"));
    // The name is free again once the deletion completed.
    let created = settled("doomed1 created again", || {
        let request = CreateTopicsRequest::default()
            .with_timeout_ms(10_000)
            .with_topics(vec![
                CreatableTopic::default()
                    .with_name(TopicName(s("doomed1")))
                    .with_num_partitions(1)
                    .with_replication_factor(1),
            ]);
        let r = conn.call(&request, 4).expect("CreateTopics answered");
        match r.topics[0].error_code {
            36 => Err(51),
            c => Ok(c),
        }
    });
    out.push(format!("created again: {created}"));
    out
}
