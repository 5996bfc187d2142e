//! The `create_partitions` action (Kafka's CreatePartitions) through the
//! session driver: the new partitions are placed as `create_topic` places
//! partitions of those numbers, `metadata.json` holds them, a crash keeps
//! them and their records, a replay (forward and back across the step)
//! shows the count of its moment, and keys hash onto the new count.

use minikafka::engine::core::metadata::{METADATA_FILE, TopicPartition};
use minikafka::engine::core::partitioner::partition_for_key;
use minikafka::session::recording::{Header, Recording};
use minikafka::session::{Action, Driver, Outcome, Session, Snapshot};
use serde_json::json;

fn header(partitions: u32) -> Header {
    serde_json::from_value(json!({
        "mk_recording": 1, "rules": "minikafka",
        "cluster": {"brokers": [1, 2, 3],
                    "topics": [{"name": "t", "partitions": partitions, "replication_factor": 2}]},
    }))
    .unwrap()
}

fn act(d: &mut Driver, action: serde_json::Value) -> Outcome {
    d.apply(&serde_json::from_value::<Action>(action).unwrap())
}

/// Each partition of `topic`: its number, leader and replicas.
fn placement(d: &Driver, topic: &str) -> Vec<(u32, u32, Vec<u32>)> {
    let n = d.cluster().partition_count(topic).unwrap();
    (0..n)
        .map(|p| {
            let m = d
                .cluster()
                .partition_metadata(&TopicPartition::new(topic, p))
                .unwrap();
            (p, m.leader_id, m.replicas)
        })
        .collect()
}

#[test]
fn the_new_partitions_are_placed_as_create_topic_places_them_and_metadata_json_holds_them() {
    let mut d = Driver::new(&header(2), None).unwrap();
    assert_eq!(
        act(
            &mut d,
            json!({"create_partitions": {"topic": "t", "count": 5}})
        ),
        Outcome::Ok
    );
    assert_eq!(
        d.events().newest(1)[0].text,
        "create_partitions: ok; topic t grows from 2 to 5 partitions: a key now hashes mod 5, so it may land on another partition than before, and a group rebalances onto the new ones when its members see them"
    );
    let made = Driver::new(&header(5), None).unwrap();
    assert_eq!(placement(&d, "t"), placement(&made, "t"));
    assert_eq!(
        placement(&d, "t")[2..],
        [(2, 3, vec![3, 1]), (3, 1, vec![1, 2]), (4, 2, vec![2, 3])]
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.data_dir().join(METADATA_FILE)).unwrap())
            .unwrap();
    let made_file: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(made.data_dir().join(METADATA_FILE)).unwrap(),
    )
    .unwrap();
    assert_eq!(
        file, made_file,
        "the book's metadata.json of a 5-partition t"
    );
    let s = Snapshot::of(&d);
    let isr: Vec<(u32, Vec<u32>)> = s
        .partitions
        .iter()
        .filter(|p| p.topic == "t")
        .map(|p| (p.partition, p.isr.clone()))
        .collect();
    assert_eq!(isr.len(), 5);
    assert_eq!(isr[4], (4, vec![2, 3]), "every replica in sync at once");
}

#[test]
fn refusals_are_typed_and_change_nothing() {
    let mut d = Driver::new(&header(3), None).unwrap();
    let code = |out: Outcome| match out {
        Outcome::Error(e) => e.code().to_string(),
        other => panic!("{other:?}"),
    };
    for (count, expected) in [(3, "InvalidPartitions"), (2, "InvalidPartitions")] {
        let out = act(
            &mut d,
            json!({"create_partitions": {"topic": "t", "count": count}}),
        );
        assert_eq!(code(out), expected, "count {count}");
    }
    let out = act(
        &mut d,
        json!({"create_partitions": {"topic": "none", "count": 4}}),
    );
    assert_eq!(code(out), "UnknownTopicOrPartition");
    assert!(
        d.events().newest(3)[0].text.contains(
            "topic \"t\" has 3 partition(s): its partitions only grow, and 3 is not more"
        ),
        "{}",
        d.events().newest(3)[0].text
    );
    assert_eq!(d.cluster().partition_count("t").unwrap(), 3);
}

#[test]
fn a_crash_keeps_the_new_partitions_and_their_records_and_keys_hash_onto_the_new_count() {
    let mut d = Driver::new(&header(2), None).unwrap();
    assert_eq!(
        act(
            &mut d,
            json!({"create_partitions": {"topic": "t", "count": 4}})
        ),
        Outcome::Ok
    );
    // A key whose partition moves with the count.
    let key = (0..100)
        .map(|i| format!("k{i}"))
        .find(|k| {
            partition_for_key(k.as_bytes(), 4) >= 2
                && partition_for_key(k.as_bytes(), 2) != partition_for_key(k.as_bytes(), 4)
        })
        .unwrap();
    let p = partition_for_key(key.as_bytes(), 4);
    assert_eq!(
        act(
            &mut d,
            json!({"produce": {"topic": "t", "key": key, "value": "v"}})
        ),
        Outcome::Ok
    );
    let leo = |d: &Driver, p: u32| {
        Snapshot::of(d)
            .partitions
            .iter()
            .find(|s| s.topic == "t" && s.partition == p)
            .map(|s| s.log_end_offset)
    };
    assert_eq!(leo(&d, p), Some(1), "the key went to new partition {p}");
    assert!(matches!(
        act(&mut d, json!({"crash": {}})),
        Outcome::Recovered(_)
    ));
    assert_eq!(d.cluster().partition_count("t").unwrap(), 4);
    assert_eq!(leo(&d, p), Some(1), "its record survived the crash");
}

#[test]
fn a_replay_shows_the_count_of_its_moment_forward_and_back() {
    let text = [
        serde_json::to_string(&header(2)).unwrap(),
        json!({"action": {"produce": {"topic": "t", "partition": 1, "value": "a"}}}).to_string(),
        json!({"action": {"create_partitions": {"topic": "t", "count": 3}}}).to_string(),
        json!({"action": {"produce": {"topic": "t", "partition": 2, "value": "b"}}}).to_string(),
    ]
    .join("\n");
    let recording = Recording::parse("grow.jsonl", &text).unwrap();
    let mut s = Session::replay(recording, 1).unwrap();
    let count = |s: &Session| {
        s.snapshot()
            .partitions
            .iter()
            .filter(|p| p.topic == "t")
            .count()
    };
    s.goto(3);
    assert_eq!(count(&s), 3);
    s.goto(1);
    assert_eq!(count(&s), 2, "back before the growth");
    s.goto(3);
    assert_eq!(count(&s), 3);
    let last = s.snapshot();
    let p2 = last.partitions.iter().find(|p| p.partition == 2).unwrap();
    assert_eq!(
        p2.log_end_offset, 1,
        "the record produced to the new partition"
    );
}

#[test]
fn a_recorded_group_takes_the_new_partitions_at_its_next_rebalance() {
    let mut d = Driver::new(&header(2), None).unwrap();
    let assigned = |d: &Driver| {
        let mut all: Vec<String> = Snapshot::of(d).groups[0]
            .members
            .iter()
            .flat_map(|m| m.assignment.clone())
            .collect();
        all.sort();
        all
    };
    let join =
        |member: &str| json!({"join_group": {"group": "g", "member": member, "topics": ["t"]}});
    assert_eq!(act(&mut d, join("m1")), Outcome::Ok);
    assert_eq!(assigned(&d), ["t-0", "t-1"]);
    assert_eq!(
        act(
            &mut d,
            json!({"create_partitions": {"topic": "t", "count": 3}})
        ),
        Outcome::Ok
    );
    assert_eq!(assigned(&d), ["t-0", "t-1"], "no rebalance yet");
    assert_eq!(act(&mut d, join("m2")), Outcome::Ok);
    assert_eq!(assigned(&d), ["t-0", "t-1", "t-2"]);
}

#[test]
fn a_new_partition_on_a_stopped_broker_is_led_by_its_running_replica() {
    let mut d = Driver::new(&header(1), None).unwrap();
    assert_eq!(
        act(&mut d, json!({"stop_broker": {"broker": 1}})),
        Outcome::Ok
    );
    assert_eq!(
        act(
            &mut d,
            json!({"create_partitions": {"topic": "t", "count": 4}})
        ),
        Outcome::Ok
    );
    // Partition 3's replicas are [1, 2]: broker 1 is stopped, 2 leads.
    let p3 = |d: &Driver| {
        Snapshot::of(d)
            .partitions
            .into_iter()
            .find(|p| p.topic == "t" && p.partition == 3)
            .unwrap()
    };
    let s = p3(&d);
    assert_eq!((s.leader, s.isr.clone()), (2, vec![2]));
    assert!(s.replicas.iter().any(|r| r.broker == 1 && r.stopped));
    assert_eq!(
        act(&mut d, json!({"start_broker": {"broker": 1}})),
        Outcome::Ok
    );
    assert_eq!(act(&mut d, json!({"replicate": {}})), Outcome::Ok);
    assert_eq!(p3(&d).isr, vec![1, 2], "the started replica caught up");
}
