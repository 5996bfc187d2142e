//! The `delete_topic` action (Kafka's DeleteTopics) through the session
//! driver: the topic goes with its replicas' directories on every broker
//! and its groups' committed offsets; the name can be created again,
//! empty; an unknown topic is refused with nothing changed; a deletion a
//! crash cut short is finished by the next open; a transaction open on
//! the topic ends without markers there and holds the name until it
//! ends; a name created again is read without the deleted topic's
//! transactions; a replay shows the topic at its moment, forward and back.

use std::fs;
use std::path::Path;

use minikafka::engine::config::Rules;
use minikafka::engine::core::metadata::METADATA_FILE;
use minikafka::session::recording::{Header, Recording};
use minikafka::session::{Action, Driver, Outcome, Session, Snapshot};
use serde_json::json;

fn header(rules: &str) -> Header {
    serde_json::from_value(json!({
        "mk_recording": 1, "rules": rules,
        "cluster": {"brokers": [1, 2, 3],
                    "topics": [{"name": "t", "partitions": 2, "replication_factor": 2},
                               {"name": "keep", "partitions": 1, "replication_factor": 1}]},
    }))
    .unwrap()
}

fn act(d: &mut Driver, action: serde_json::Value) -> Outcome {
    d.apply(&serde_json::from_value::<Action>(action).unwrap())
}

fn ok(d: &mut Driver, action: serde_json::Value) {
    let what = action.to_string();
    assert_eq!(
        act(d, action),
        Outcome::Ok,
        "{what}: {:?}",
        d.events().newest(1)
    );
}

/// The newest event's text.
fn said(d: &Driver) -> String {
    d.events().newest(1)[0].text.clone()
}

/// Every path under `dir` (files and directories), relative, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The replica directories of topic `t` (`broker-N/t-P...`).
fn t_dirs(dir: &Path) -> Vec<String> {
    tree(dir)
        .into_iter()
        .filter(|p| {
            let mut parts = p.split('/');
            parts.next().is_some_and(|b| b.starts_with("broker-"))
                && parts.next().is_some_and(|r| r.starts_with("t-"))
                && parts.next().is_none()
        })
        .collect()
}

fn topics(d: &Driver) -> Vec<String> {
    d.cluster().topics().into_iter().map(|(n, _)| n).collect()
}

fn committed(d: &Driver) -> Vec<String> {
    let offsets: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(d.data_dir().join("offsets.json")).unwrap())
            .unwrap();
    let mut out = Vec::new();
    for (group, entries) in offsets["groups"].as_object().unwrap() {
        for e in entries.as_array().unwrap() {
            out.push(format!(
                "{group} {}-{} {}",
                e["topic"].as_str().unwrap(),
                e["partition"],
                e["offset"]
            ));
        }
    }
    out
}

fn with_records_and_offsets(rules: &str) -> Driver {
    let mut d = Driver::new(&header(rules), None).unwrap();
    for p in [0, 1] {
        ok(
            &mut d,
            json!({"produce": {"topic": "t", "partition": p, "value": format!("v{p}")}}),
        );
    }
    ok(
        &mut d,
        json!({"produce": {"topic": "keep", "partition": 0, "value": "k"}}),
    );
    ok(&mut d, json!({"replicate": {}}));
    ok(
        &mut d,
        json!({"commit_offsets": {"group": "g", "offsets": [
            {"topic": "t", "partition": 0, "offset": 1},
            {"topic": "keep", "partition": 0, "offset": 1}]}}),
    );
    d
}

#[test]
fn a_deleted_topic_goes_with_its_logs_and_offsets_and_its_name_is_free_again() {
    for rules in ["minikafka", "kafka"] {
        let mut d = with_records_and_offsets(rules);
        assert_eq!(
            t_dirs(d.data_dir()).len(),
            4,
            "{rules}: 2 partitions x 2 replicas"
        );
        ok(&mut d, json!({"delete_topic": {"name": "t"}}));
        assert_eq!(
            said(&d),
            "delete_topic: ok; topic t deleted: its 2 partition(s), 4 replica log(s) on the brokers and 1 committed offset(s); a consumer drops its partitions, and the name is free again"
        );
        assert_eq!(topics(&d), ["keep"], "{rules}");
        assert!(
            t_dirs(d.data_dir()).is_empty(),
            "{rules}: {:?}",
            tree(d.data_dir())
        );
        assert_eq!(committed(&d), ["g keep-0 1"], "{rules}");
        let metadata = fs::read_to_string(d.data_dir().join(METADATA_FILE)).unwrap();
        assert!(!metadata.contains("\"t\""), "{metadata}");
        let s = Snapshot::of(&d);
        assert!(s.partitions.iter().all(|p| p.topic == "keep"), "{rules}");
        // The name again: an empty topic, its records from offset 0.
        ok(
            &mut d,
            json!({"create_topic": {"name": "t", "partitions": 1, "replication_factor": 3}}),
        );
        ok(
            &mut d,
            json!({"produce": {"topic": "t", "partition": 0, "value": "again"}}),
        );
        let s = Snapshot::of(&d);
        let t0 = s.partitions.iter().find(|p| p.topic == "t").unwrap();
        assert_eq!(t0.log_end_offset, 1, "{rules}: only the new record");
        assert_eq!(t0.batches[0].base_offset, 0);
        // The crash reopens what is there: the new t, not the old one.
        assert!(matches!(
            act(&mut d, json!({"crash": {}})),
            Outcome::Recovered(_)
        ));
        assert_eq!(topics(&d), ["keep", "t"]);
        let s = Snapshot::of(&d);
        let t0 = s.partitions.iter().find(|p| p.topic == "t").unwrap();
        assert_eq!((t0.log_end_offset, s.partitions.len()), (1, 2), "{rules}");
    }
}

#[test]
fn an_unknown_topic_is_refused_with_nothing_changed() {
    let mut d = with_records_and_offsets("kafka");
    let before = tree(d.data_dir());
    let out = act(&mut d, json!({"delete_topic": {"name": "nowhere"}}));
    let Outcome::Error(e) = out else {
        panic!("refused: {out:?}")
    };
    assert_eq!(e.code(), "UnknownTopicOrPartition", "{e}");
    assert_eq!(tree(d.data_dir()), before);
    assert_eq!(topics(&d), ["keep", "t"]);
}

/// A crash after the first directory was renamed (the deletion decided),
/// before metadata.json was written: the open finishes it, metadata,
/// offsets and every directory; a directory left by a deletion whose
/// topic is already gone is removed too.
#[test]
fn an_open_finishes_a_deletion_a_crash_cut_short() {
    let mut d = with_records_and_offsets("kafka");
    let dir = d.data_dir().to_path_buf();
    fs::rename(dir.join("broker-1/t-0"), dir.join("broker-1/t-0.deleting")).unwrap();
    fs::create_dir_all(dir.join("broker-3/gone-4.deleting")).unwrap();
    fs::write(
        dir.join("broker-3/gone-4.deleting/00000000000000000000.log"),
        b"x",
    )
    .unwrap();
    let Outcome::Recovered(said) = act(&mut d, json!({"crash": {}})) else {
        panic!("the crash recovers")
    };
    assert_eq!(
        said,
        "crash: recovery finished deleting topic gone, t (cut short by the crash)"
    );
    assert_eq!(topics(&d), ["keep"]);
    assert!(t_dirs(&dir).is_empty(), "{:?}", tree(&dir));
    assert!(!dir.join("broker-3/gone-4.deleting").exists());
    assert_eq!(committed(&d), ["g keep-0 1"]);
    let metadata = fs::read_to_string(dir.join(METADATA_FILE)).unwrap();
    assert!(!metadata.contains("\"t\""), "written: {metadata}");
    // A second open finds nothing more to do.
    let before = tree(&dir);
    assert!(matches!(
        act(&mut d, json!({"crash": {}})),
        Outcome::Recovered(_)
    ));
    assert_eq!(tree(&dir), before);
}

/// Without the deletion's own directories, `t`'s logs left under their
/// names (an earlier incarnation, as the book's `create_topic` finds
/// them) are picked up by a create as before.
#[test]
fn a_create_over_a_deletions_leftover_starts_empty() {
    let mut d = with_records_and_offsets("kafka");
    ok(&mut d, json!({"delete_topic": {"name": "t"}}));
    let dir = d.data_dir().to_path_buf();
    // A removal that failed: the renamed directory stays.
    fs::create_dir_all(dir.join("broker-1/t-0.deleting")).unwrap();
    fs::write(
        dir.join("broker-1/t-0.deleting/00000000000000000000.log"),
        b"old",
    )
    .unwrap();
    ok(
        &mut d,
        json!({"create_topic": {"name": "t", "partitions": 1, "replication_factor": 1}}),
    );
    assert!(!dir.join("broker-1/t-0.deleting").exists());
    assert_eq!(
        Snapshot::of(&d)
            .partitions
            .iter()
            .find(|p| p.topic == "t")
            .unwrap()
            .log_end_offset,
        0
    );
}

#[test]
fn an_open_transaction_ends_without_markers_on_a_deleted_topic_and_holds_its_name_until_then() {
    for rules in ["minikafka", "kafka"] {
        let mut d = Driver::new(&header(rules), None).unwrap();
        ok(&mut d, json!({"begin": {"txn": "tx"}}));
        for topic in ["t", "keep"] {
            let send = json!({"send": {"txn": "tx", "topic": topic, "partition": 0, "value": "a"}});
            let out = act(&mut d, send);
            assert!(
                matches!(out, Outcome::Ok | Outcome::Pending),
                "{rules}: {out:?}"
            );
        }
        ok(&mut d, json!({"replicate": {}}));
        ok(&mut d, json!({"delete_topic": {"name": "t"}}));
        let create =
            json!({"create_topic": {"name": "t", "partitions": 1, "replication_factor": 1}});
        let Outcome::Error(e) = act(&mut d, create.clone()) else {
            panic!("{rules}: refused while tx is open")
        };
        assert_eq!(e.code(), "TopicInOpenTransaction", "{e}");
        let out = act(&mut d, json!({"commit": {"txn": "tx"}}));
        assert!(
            matches!(out, Outcome::Ok | Outcome::Pending),
            "{rules}: {out:?}"
        );
        ok(&mut d, json!({"replicate": {}}));
        let s = Snapshot::of(&d);
        let keep = s.partitions.iter().find(|p| p.topic == "keep").unwrap();
        assert_eq!(
            (keep.log_end_offset, keep.last_stable_offset),
            (2, 2),
            "{rules}: the record and its marker on keep, committed"
        );
        ok(&mut d, create);
    }
}

/// Transactions' writes to a deleted topic are not read into a new topic
/// of its name. Under the book's rules (no producer ids to tell them
/// apart) the old instance of tx wrote t-0 at offset 3 and committed; the
/// new t gets tx's new instance at offset 0 and, after plain records, at
/// offset 4: that batch is the new, ongoing instance's, not the old
/// committed one's, before a crash and after the journal's replay.
#[test]
fn a_name_created_again_is_read_without_the_deleted_topics_transactions() {
    let temp = tempfile::tempdir().unwrap();
    let data = temp.path().join("data");
    let mut d = Driver::new(&header("minikafka"), Some(&data)).unwrap();
    let plain = |d: &mut Driver, n: usize| {
        for i in 0..n {
            ok(
                d,
                json!({"produce": {"topic": "t", "partition": 0, "value": format!("p{i}")}}),
            );
        }
    };
    let send = |d: &mut Driver, value: &str| {
        let out = act(
            d,
            json!({"send": {"txn": "tx", "topic": "t", "partition": 0, "value": value}}),
        );
        assert!(matches!(out, Outcome::Ok | Outcome::Pending), "{out:?}");
    };
    plain(&mut d, 3);
    ok(&mut d, json!({"begin": {"txn": "tx"}}));
    send(&mut d, "old");
    ok(&mut d, json!({"replicate": {}}));
    let out = act(&mut d, json!({"commit": {"txn": "tx"}}));
    assert!(matches!(out, Outcome::Ok | Outcome::Pending), "{out:?}");
    ok(&mut d, json!({"replicate": {}}));
    ok(&mut d, json!({"delete_topic": {"name": "t"}}));
    ok(
        &mut d,
        json!({"create_topic": {"name": "t", "partitions": 1, "replication_factor": 2}}),
    );
    let metadata = fs::read_to_string(d.data_dir().join(METADATA_FILE)).unwrap();
    assert!(metadata.contains(r#""txn_from":1"#), "{metadata}");
    ok(&mut d, json!({"begin": {"txn": "tx"}}));
    send(&mut d, "new0");
    plain(&mut d, 3);
    send(&mut d, "new4");
    // Twice: the follower's second fetch tells the leader its HW.
    ok(&mut d, json!({"replicate": {}}));
    ok(&mut d, json!({"replicate": {}}));
    let fates = |d: &Driver| -> Vec<(i64, String)> {
        let s = Snapshot::of(d);
        let t0 = s.partitions.iter().find(|p| p.topic == "t").unwrap();
        t0.batches
            .iter()
            .map(|b| (b.base_offset, format!("{:?}", b.fate)))
            .collect()
    };
    let expected: Vec<(i64, String)> = [
        (0, "Ongoing"),
        (1, "Committed"),
        (2, "Committed"),
        (3, "Committed"),
        (4, "Ongoing"),
    ]
    .iter()
    .map(|(o, f)| (*o, f.to_string()))
    .collect();
    // Plain records above an open transaction's first offset are above
    // the LSO: not yet readable by read_committed.
    let now = fates(&d);
    assert_eq!(now[0], expected[0]);
    assert_eq!(now[4], expected[4], "the new instance's batch: {now:?}");
    assert!(matches!(
        act(&mut d, json!({"crash": {}})),
        Outcome::Recovered(_)
    ));
    assert_eq!(fates(&d)[4], expected[4], "after a crash");
    let out = act(&mut d, json!({"abort": {"txn": "tx"}}));
    assert!(matches!(out, Outcome::Ok | Outcome::Pending), "{out:?}");
    ok(&mut d, json!({"replicate": {}}));
    let after = fates(&d);
    assert_eq!(after[0].1, "Aborted", "{after:?}");
    assert_eq!(after[4].1, "Aborted", "{after:?}");
    // A fresh open replays the whole journal (a crash reuses what it
    // replayed before): txn_from in metadata.json makes it forget again.
    drop(d);
    let reopened = Driver::open_in_place(&data, Rules::Minikafka).unwrap();
    assert_eq!(fates(&reopened), after, "after the journal's replay");
}

#[test]
fn a_group_member_drops_a_deleted_topics_partitions() {
    let mut d = with_records_and_offsets("minikafka");
    ok(
        &mut d,
        json!({"join_group": {"group": "g2", "member": "m", "topics": ["t", "keep"]}}),
    );
    ok(&mut d, json!({"delete_topic": {"name": "t"}}));
    ok(&mut d, json!({"poll": {"group": "g2", "member": "m"}}));
    assert!(said(&d).contains("keep-0"), "{}", said(&d));
    assert!(!said(&d).contains("t-0"), "{}", said(&d));
    // The next rebalance assigns what exists.
    ok(
        &mut d,
        json!({"join_group": {"group": "g2", "member": "m2", "topics": ["keep"]}}),
    );
    let assigned: Vec<String> = Snapshot::of(&d)
        .groups
        .iter()
        .find(|g| g.group == "g2")
        .unwrap()
        .members
        .iter()
        .flat_map(|m| m.assignment.clone())
        .collect();
    assert_eq!(assigned, ["keep-0"]);
}

#[test]
fn a_replay_shows_the_topic_at_its_moment_forward_and_back() {
    let text = [
        serde_json::to_string(&header("kafka")).unwrap(),
        json!({"action": {"produce": {"topic": "t", "partition": 1, "value": "a"}}}).to_string(),
        json!({"action": {"delete_topic": {"name": "t"}}}).to_string(),
        json!({"action": {"create_topic": {"name": "t", "partitions": 3, "replication_factor": 1}}}).to_string(),
    ]
    .join("\n");
    let recording = Recording::parse("delete.jsonl", &text).unwrap();
    let mut s = Session::replay(recording, 1).unwrap();
    let t = |s: &Session| {
        s.snapshot()
            .partitions
            .iter()
            .filter(|p| p.topic == "t")
            .map(|p| p.log_end_offset)
            .collect::<Vec<_>>()
    };
    s.goto(1);
    assert_eq!(t(&s), [0, 1]);
    s.goto(2);
    assert_eq!(t(&s), Vec::<i64>::new(), "deleted");
    s.goto(3);
    assert_eq!(t(&s), [0, 0, 0], "created again, empty");
    s.goto(1);
    assert_eq!(t(&s), [0, 1], "back before the deletion: its record");
}

/// Offsets a transaction staged for a topic deleted before its commit are
/// not published (Kafka 4.4 drops them with the topic), across a crash
/// too; the topic, which the transaction only read, can be created again.
#[test]
fn offsets_staged_for_a_deleted_topic_are_not_published() {
    for rules in ["minikafka", "kafka"] {
        let mut d = Driver::new(&header(rules), None).unwrap();
        ok(&mut d, json!({"begin": {"txn": "tx"}}));
        let send = json!({"send": {"txn": "tx", "topic": "keep", "partition": 0, "value": "out"}});
        assert!(matches!(act(&mut d, send), Outcome::Ok | Outcome::Pending));
        ok(
            &mut d,
            json!({"send_offsets": {"txn": "tx", "group": "g", "offsets": [
                {"topic": "t", "partition": 0, "offset": 5},
                {"topic": "keep", "partition": 0, "offset": 7}]}}),
        );
        ok(&mut d, json!({"delete_topic": {"name": "t"}}));
        // The journal holds the change: a crash before the commit keeps it.
        assert!(matches!(
            act(&mut d, json!({"crash": {}})),
            Outcome::Recovered(_)
        ));
        let out = act(&mut d, json!({"commit": {"txn": "tx"}}));
        assert!(
            matches!(out, Outcome::Ok | Outcome::Pending),
            "{rules}: {out:?}"
        );
        ok(&mut d, json!({"replicate": {}}));
        assert_eq!(committed(&d), ["g keep-0 7"], "{rules}");
        ok(
            &mut d,
            json!({"create_topic": {"name": "t", "partitions": 1, "replication_factor": 1}}),
        );
        assert_eq!(committed(&d), ["g keep-0 7"], "{rules}");
    }
}

/// An acks=all write still waiting on a deleted partition ends told its
/// partition is gone, not that the cluster crashed.
#[test]
fn a_write_waiting_on_a_deleted_partition_is_told_it_is_gone() {
    let mut d = Driver::new(&header("kafka"), None).unwrap();
    let produce = json!({"produce": {"topic": "t", "partition": 0, "value": "w", "acks": "all"}});
    assert_eq!(act(&mut d, produce), Outcome::Pending);
    ok(&mut d, json!({"delete_topic": {"name": "t"}}));
    let texts: Vec<String> = d
        .events()
        .newest(4)
        .iter()
        .map(|e| e.text.clone())
        .collect();
    assert!(
        texts
            .iter()
            .any(|t| t.contains("produce of step 1 failed: unknown topic or partition t-0")),
        "{texts:?}"
    );
    assert!(!texts.iter().any(|t| t.contains("crashed")), "{texts:?}");
}

/// A tear that cuts the whole journal (E13) after a topic was created
/// again under a deleted name: the instances its `txn_from` counted are
/// gone, so the open lowers it to what the journal holds (0), and the
/// next transaction, instance 0 again, owns what it writes there.
#[test]
fn a_torn_journal_lowers_txn_from_to_the_instances_it_still_holds() {
    let mut d = Driver::new(&header("minikafka"), None).unwrap();
    ok(&mut d, json!({"begin": {"txn": "tx"}}));
    let send = json!({"send": {"txn": "tx", "topic": "t", "partition": 0, "value": "old"}});
    assert!(matches!(act(&mut d, send), Outcome::Ok | Outcome::Pending));
    ok(&mut d, json!({"replicate": {}}));
    let out = act(&mut d, json!({"commit": {"txn": "tx"}}));
    assert!(matches!(out, Outcome::Ok | Outcome::Pending), "{out:?}");
    ok(&mut d, json!({"replicate": {}}));
    ok(&mut d, json!({"delete_topic": {"name": "t"}}));
    ok(
        &mut d,
        json!({"create_topic": {"name": "t", "partitions": 1, "replication_factor": 1}}),
    );
    let metadata = || fs::read_to_string(d.data_dir().join(METADATA_FILE)).unwrap();
    assert!(metadata().contains(r#""txn_from":1"#), "{}", metadata());
    let journal = fs::metadata(d.data_dir().join("transactions.journal"))
        .unwrap()
        .len();
    let tear = json!({"tear": {"target": "journal", "cut_bytes": journal}});
    assert!(matches!(act(&mut d, tear), Outcome::Recovered(_)));
    let metadata = fs::read_to_string(d.data_dir().join(METADATA_FILE)).unwrap();
    assert!(metadata.contains(r#""txn_from":0"#), "lowered: {metadata}");
    ok(&mut d, json!({"begin": {"txn": "tx"}}));
    let send = json!({"send": {"txn": "tx", "topic": "t", "partition": 0, "value": "new"}});
    assert!(matches!(act(&mut d, send), Outcome::Ok | Outcome::Pending));
    let out = act(&mut d, json!({"commit": {"txn": "tx"}}));
    assert!(matches!(out, Outcome::Ok | Outcome::Pending), "{out:?}");
    let s = Snapshot::of(&d);
    let t0 = s.partitions.iter().find(|p| p.topic == "t").unwrap();
    let fates: Vec<String> = t0.batches.iter().map(|b| format!("{:?}", b.fate)).collect();
    assert_eq!(
        fates,
        ["Committed", "Control"],
        "the new instance owns its batch"
    );
}

/// A transaction open across the re-creation (on another topic; one
/// that wrote to the deleted topic would hold the name) then writes the
/// new topic and commits: its batch is committed, live and after a fresh
/// open replays the whole journal (the topic keeps it in `txn_kept`).
/// So is one begun before the deletion with nothing written yet, as a
/// client's `initTransactions` leaves it.
#[test]
fn a_transaction_open_across_the_re_creation_keeps_what_it_writes_there() {
    let temp = tempfile::tempdir().unwrap();
    let data = temp.path().join("data");
    let mut d = Driver::new(&header("kafka"), Some(&data)).unwrap();
    let send = |d: &mut Driver, txn: &str, topic: &str, value: &str| {
        let send = json!({"send": {"txn": txn, "topic": topic, "partition": 0, "value": value}});
        let out = act(d, send);
        assert!(matches!(out, Outcome::Ok | Outcome::Pending), "{out:?}");
    };
    let end = |d: &mut Driver, txn: &str| {
        let out = act(d, json!({"commit": {"txn": txn}}));
        assert!(matches!(out, Outcome::Ok | Outcome::Pending), "{out:?}");
        ok(d, json!({"replicate": {}}));
        ok(d, json!({"replicate": {}}));
    };
    ok(&mut d, json!({"begin": {"txn": "old"}}));
    send(&mut d, "old", "t", "old");
    ok(&mut d, json!({"replicate": {}}));
    end(&mut d, "old");
    ok(&mut d, json!({"begin": {"txn": "across"}}));
    send(&mut d, "across", "keep", "k");
    ok(&mut d, json!({"begin": {"txn": "idle", "init": true}}));
    ok(&mut d, json!({"delete_topic": {"name": "t"}}));
    ok(
        &mut d,
        json!({"create_topic": {"name": "t", "partitions": 1, "replication_factor": 2}}),
    );
    let metadata = fs::read_to_string(d.data_dir().join(METADATA_FILE)).unwrap();
    assert!(metadata.contains(r#""txn_kept":[1,2]"#), "{metadata}");
    send(&mut d, "across", "t", "across");
    end(&mut d, "across");
    send(&mut d, "idle", "t", "idle");
    end(&mut d, "idle");
    let fates = |d: &Driver| -> Vec<(String, String)> {
        let s = Snapshot::of(d);
        let t0 = s.partitions.iter().find(|p| p.topic == "t").unwrap();
        t0.batches
            .iter()
            .map(|b| {
                let value = b
                    .records
                    .first()
                    .and_then(|r| r.value.clone())
                    .unwrap_or_default();
                (value, format!("{:?}", b.fate))
            })
            .collect()
    };
    let live = fates(&d);
    let committed = |v: &str| (v.to_string(), "Committed".to_string());
    assert_eq!(live[0], committed("across"), "{live:?}");
    assert_eq!(live[2], committed("idle"), "{live:?}");
    drop(d);
    let reopened = Driver::open_in_place(&data, Rules::Kafka).unwrap();
    assert_eq!(fates(&reopened), live, "after the journal's replay");
}
