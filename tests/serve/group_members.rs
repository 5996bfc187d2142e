//! Consumer groups of several members through real clients: each member
//! its own process (tests/clients/group_split.py drives them), splitting
//! a 6-partition topic with no partition owned twice, handing partitions
//! over when one closes (LeaveGroup) or is killed (its session runs out),
//! and resuming from the committed offsets after a restart of the group,
//! also across a kill -9 and restart of the server.

use std::time::Duration;

use crate::python;
use crate::script::Script;
use crate::server::Server;

/// The lines of a `group_split.py` run against a fresh server, with its
/// log.
fn split(module: &str, member: &str, strategy: &str, mode: &str) -> Option<(String, String)> {
    let py = python::with(module)?;
    python::with("confluent_kafka")?;
    let mut server = Server::start(&[]);
    let boot = server.bootstrap();
    python::run(&py, "ck_create_topic.py", &[&boot, "t", "6", "1"]);
    let out = python::run(
        &py,
        "group_split.py",
        &[&boot, "t", "g", strategy, member, mode],
    );
    println!("{out}");
    Some((out, server.stop()))
}

fn confluent_group(strategy: &str) {
    let Some((out, log)) = split("confluent_kafka", "ck_group_member.py", strategy, "full") else {
        return;
    };
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with("expired_after_ms") && !l.starts_with("uncommitted"))
        .collect();
    let describe = format!("describe STABLE {strategy} 3 6 /127.0.0.1");
    assert_eq!(
        lines,
        [
            "split 2,2,2",
            &describe,
            "read 60",
            "split 3,3",
            "read 120",
            "split 6",
            "read 180",
            "split 2,2,2",
            "read 240",
            "read twice 0",
        ],
        "{out}"
    );
    let expired: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("expired_after_ms "))
        .and_then(|n| n.parse().ok())
        .expect("a takeover after the kill");
    assert!(
        expired >= 5_000,
        "the killed member's partitions moved only once its 6 s session ran out ({expired} ms)"
    );
    assert!(log.contains(" left"), "a LeaveGroup in the log:\n{log}");
    assert!(
        log.contains("REBALANCE_IN_PROGRESS"),
        "members told to rejoin:\n{log}"
    );
}

#[test]
fn three_confluent_kafka_members_split_hand_over_and_resume_with_range() {
    confluent_group("range");
}

#[test]
fn three_confluent_kafka_members_split_hand_over_and_resume_with_roundrobin() {
    confluent_group("roundrobin");
}

#[test]
fn three_confluent_kafka_members_split_hand_over_and_resume_with_cooperative_sticky() {
    confluent_group("cooperative-sticky");
}

#[test]
fn three_kafka_python_members_split_and_two_take_over_from_one_that_leaves() {
    for strategy in ["range", "roundrobin"] {
        let Some((out, _)) = split("kafka", "kp_group_member.py", strategy, "short") else {
            return;
        };
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            [
                "split 2,2,2",
                "read 60",
                "split 3,3",
                "read 120",
                "read twice 0",
                "uncommitted 0",
            ],
            "{strategy}: {out}"
        );
    }
}

#[test]
fn a_consume_transform_produce_group_of_two_copies_each_record_once_across_a_rebalance() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut server = Server::start(&["--rules", "kafka"]);
    let boot = server.bootstrap();
    let out = python::run(&py, "ck_group_ctp.py", &[&boot]);
    println!("{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[..3],
        [
            "b joined with 2 partitions",
            "both copied yes",
            "out 200 distinct 200"
        ],
        "{out}"
    );
    server.stop();
    let committed = &server.state()["committed_offsets"]["ctp"];
    let total: u64 = (0..4)
        .map(|p| committed[format!("in-{p}")].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(total, 200, "every input offset committed: {committed}");
}

#[test]
fn a_kip_848_consumer_is_refused_with_unsupported_version_not_left_waiting() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut server = Server::start(&[]);
    let boot = server.bootstrap();
    python::run(&py, "ck_create_topic.py", &[&boot, "t", "1", "1"]);
    let out = python::run(&py, "ck_group_protocol_consumer.py", &[&boot, "t", "g"]);
    assert_eq!(out.trim(), "refused _FATAL ConsumerGroupHeartbeat", "{out}");
    let log = server.stop();
    assert!(
        log.contains("ConsumerGroupHeartbeat (KIP-848): UNSUPPORTED_VERSION"),
        "{log}"
    );
}

#[test]
fn three_java_consumers_split_a_topic_and_two_take_over_from_one_that_leaves() {
    let Some(java) = crate::kafka_ref::KafkaRef::java_client() else {
        return;
    };
    let mut server = Server::start(&[]);
    let boot = server.bootstrap();
    for assignor in [
        "org.apache.kafka.clients.consumer.RangeAssignor",
        "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
    ] {
        let topic = if assignor.contains("Range") {
            "jr"
        } else {
            "jc"
        };
        let out = java.run("GroupSplit.java", &[&boot, topic, topic, assignor]);
        println!("{out}");
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            [
                "split 2,2,2",
                "read 60",
                "split 3,3",
                "read 120",
                "read twice 0"
            ],
            "{assignor}: {out}"
        );
    }
    server.stop();
}

/// `group_split.py` in `mode` (`restart` or `live`) on a new topic `t` of
/// six partitions: its lines up to `stopped`, then (the server killed
/// with SIGKILL and restarted meanwhile if `kill`) all its lines once it
/// ends.
fn split_around_a_restart(
    py: &std::path::Path,
    server: &mut Server,
    mode: &str,
    kill: bool,
) -> (Vec<String>, Vec<String>) {
    let boot = server.bootstrap();
    python::run(
        &py.to_path_buf(),
        "ck_create_topic.py",
        &[&boot, "t", "6", "1"],
    );
    let mut group = Script::start(
        py,
        "group_split.py",
        &[&boot, "t", "g", "range", "ck_group_member.py", mode],
    );
    let before = group.until(|l| l == "stopped", Duration::from_secs(120));
    if kill {
        server.kill();
        server.restart();
    }
    group.send("go");
    (before, group.finish(Duration::from_secs(120)))
}

/// All three members of a group close, and three new ones resume from the
/// committed offsets: nothing is read twice (each record is committed once
/// read, so no batch is left uncommitted). With `kill`, the server is
/// killed with SIGKILL between the two and restarted on the same data
/// directory: committed offsets are promised across a restart
/// (docs/reliability.md), group membership is not (the new members join a
/// group the restarted server has no member record of).
fn group_restarts(kill: bool) {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut server = Server::start_restartable(&[]);
    let (before, after) = split_around_a_restart(&py, &mut server, "restart", kill);
    let lines: Vec<&str> = after
        .iter()
        .map(String::as_str)
        .filter(|l| !l.starts_with("describe "))
        .collect();
    assert_eq!(
        lines,
        [
            "ready",
            "split 2,2,2",
            "read 60",
            "stopped",
            "split 2,2,2",
            "read 120",
            "read twice 0",
            "uncommitted 0",
        ],
        "before the restart: {before:?}"
    );
    server.stop();
    let committed = &server.state()["committed_offsets"]["g"];
    let total: u64 = (0..6)
        .map(|p| committed[format!("t-{p}")].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(total, 120, "every record's offset committed: {committed}");
}

#[test]
fn a_whole_group_stops_and_three_new_members_resume_from_the_committed_offsets() {
    group_restarts(false);
}

#[test]
fn a_whole_group_resumes_from_the_committed_offsets_across_a_kill_9_of_the_server() {
    group_restarts(true);
}

/// Two members live through a kill -9 and restart of the server, and a
/// third joins after it: no id of the last life is given again (the
/// group's membership is not kept, so a new member named as an old one
/// was would share its heartbeats, its commits and its partitions: a
/// new user's trial found two consumers each reading all four partitions
/// after a restart), the old members rejoin, the three split the topic
/// and nothing is read twice.
#[test]
fn members_alive_across_a_kill_9_rejoin_and_no_member_id_is_given_twice() {
    let Some(py) = python::with("confluent_kafka") else {
        return;
    };
    let mut server = Server::start_restartable(&[]);
    let (before, after) = split_around_a_restart(&py, &mut server, "live", true);
    let ids = |lines: &[String]| -> Vec<Vec<String>> {
        lines
            .iter()
            .filter_map(|l| l.strip_prefix("members "))
            .map(|ids| ids.split(',').map(str::to_string).collect())
            .collect()
    };
    let all = ids(&after);
    let [first, second] = &all[..] else {
        panic!("two member lists: {after:?}");
    };
    assert_eq!((first.len(), second.len()), (2, 3), "{after:?}");
    assert!(
        second.iter().all(|id| !first.contains(id)),
        "an id of the last life given again: {first:?} then {second:?}\n{}",
        server.log()
    );
    let lines: Vec<&str> = after
        .iter()
        .map(String::as_str)
        .filter(|l| !l.starts_with("members "))
        .collect();
    assert_eq!(
        lines,
        [
            "ready",
            "split 3,3",
            "read 60",
            "stopped",
            "split 2,2,2",
            "read 120",
            "read twice 0",
            "uncommitted 0",
        ],
        "before the restart: {before:?}"
    );
    // The group's generations after the restart are above every one of
    // the last life, so an old member's claim of its partitions at its
    // old generation never outranks a new member's (a new user's trial:
    // franz-go's stale member took back partitions and read 18,544
    // records again when the generation started again at 1).
    let log = server.stop();
    let (mut last_life, mut this_life) = (Vec::new(), Vec::new());
    let mut restarted = false;
    for line in log.lines() {
        restarted |= line.contains(": reopened ");
        if let Some(g) = line
            .split_once("joined, generation ")
            .and_then(|(_, rest)| rest.split(',').next())
            .and_then(|g| g.parse::<i32>().ok())
        {
            if restarted {
                &mut this_life
            } else {
                &mut last_life
            }
            .push(g);
        }
    }
    let (Some(old), Some(new)) = (last_life.iter().max(), this_life.iter().min()) else {
        panic!("generations before and after the restart:\n{log}");
    };
    assert!(
        new > old,
        "generation {new} after the restart, {old} before:\n{log}"
    );
}
