//! Issue 17 item 11: time travel's checkpoints and restores share the files
//! no one writes in place (closed segments, whole-replaced JSON files, a
//! checkpoint's journal: `minikafka::engine::shared_files`) instead of
//! copying them, and every in-place write of a shared file gives the writer
//! its own copy first. These tests fail on a copy-everything timeline (no
//! file has a second link) and on a sharing that leaks a write into a
//! checkpoint (a state differs from a straight run's).

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use minikafka::session::{Action, Driver, Recording, Snapshot, Step, Timeline};

fn recording(actions: &[String]) -> Recording {
    let header = serde_json::from_value(serde_json::json!({
        "mk_recording": 1,
        "title": "sharing",
        "rules": "minikafka",
        "cluster": {
            "brokers": [1, 2],
            "topics": [
                {"name": "out", "partitions": 1, "replication_factor": 2},
                {"name": "in", "partitions": 1, "replication_factor": 1},
            ],
            // Small segments: most of each log is closed segments.
            "config": {"segment_max_bytes": 300},
        },
    }))
    .unwrap();
    Recording {
        header,
        steps: actions
            .iter()
            .enumerate()
            .map(|(i, a)| Step {
                present: None,
                at_ms: i as u64 * 100,
                action: Action::from_json(&serde_json::from_str(a).unwrap()).unwrap(),
                caption: None,
            })
            .collect(),
    }
}

/// Produces that roll segments, transactions that grow the journal, a
/// crash, a journal tear deep enough to reach below earlier checkpoints'
/// journal lengths, a log tear, and a leader change whose old leader then
/// truncates into what were closed segments.
fn actions() -> Vec<String> {
    let mut a = Vec::new();
    for round in 0..6 {
        let txn = format!("t{round}");
        a.push(format!(r#"{{"begin":{{"txn":"{txn}"}}}}"#));
        a.push(format!(
            r#"{{"send":{{"txn":"{txn}","topic":"out","value":"tx-{round}"}}}}"#
        ));
        a.push(r#"{"replicate":{}}"#.to_string());
        for i in 0..4 {
            a.push(format!(
                r#"{{"produce":{{"topic":"out","value":"value-{round}-{i}-xxxxxxxxxxxxxxxx","acks":"all"}}}}"#
            ));
            a.push(r#"{"replicate":{}}"#.to_string());
        }
        a.push(format!(r#"{{"commit":{{"txn":"{txn}"}}}}"#));
        a.push(r#"{"replicate":{}}"#.to_string());
        a.push(r#"{"replicate":{}}"#.to_string());
        match round {
            1 => a.push(r#"{"crash":{}}"#.to_string()),
            2 => a.push(r#"{"tear":{"target":"journal","cut_bytes":700}}"#.to_string()),
            3 => a.push(
                r#"{"tear":{"target":{"topic":"out","partition":0,"broker":2},"cut_bytes":5}}"#
                    .to_string(),
            ),
            4 => {
                // Broker 1 leads and gets records broker 2 never fetches;
                // broker 2 takes over, and broker 1 truncates to it.
                for i in 0..6 {
                    a.push(format!(
                        r#"{{"produce":{{"topic":"out","value":"lost-{i}-yyyyyyyyyyyyyyyyyyyy","acks":"1"}}}}"#
                    ));
                }
                a.push(r#"{"stop_broker":{"broker":1}}"#.to_string());
                a.push(r#"{"advance_clock":{"ms":20000}}"#.to_string());
                a.push(r#"{"replicate":{}}"#.to_string());
                a.push(r#"{"promote":{"topic":"out","partition":0,"broker":2}}"#.to_string());
                a.push(
                    r#"{"produce":{"topic":"out","value":"new-leader","acks":"1"}}"#.to_string(),
                );
                a.push(r#"{"start_broker":{"broker":1}}"#.to_string());
                a.push(r#"{"replicate":{}}"#.to_string());
                a.push(r#"{"replicate":{}}"#.to_string());
            }
            _ => a.push(r#"{"advance_clock":{"ms":100}}"#.to_string()),
        }
    }
    a
}

fn straight(r: &Recording) -> Vec<String> {
    let mut d = Driver::new(&r.header, None).unwrap();
    let mut out = vec![Snapshot::of(&d).to_json()];
    for s in &r.steps {
        d.apply(&s.action);
        out.push(Snapshot::of(&d).to_json());
    }
    out
}

/// Every `.log` file under `dir` with its link count.
fn segment_links(dir: &Path) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for broker in std::fs::read_dir(dir).unwrap() {
        let broker = broker.unwrap().path();
        if !broker.is_dir() {
            continue;
        }
        for log in std::fs::read_dir(&broker).unwrap() {
            for file in std::fs::read_dir(log.unwrap().path()).unwrap() {
                let path = file.unwrap().path();
                if path.extension().is_some_and(|e| e == "log") {
                    let links = std::fs::metadata(&path).unwrap().nlink();
                    out.push((path.display().to_string(), links));
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn jumps_back_and_forth_match_a_straight_run_with_tears_crashes_and_truncations() {
    let r = recording(&actions());
    let expected = straight(&r);
    let n = r.steps.len();
    for every in [3, 7] {
        let mut t = Timeline::new(r.clone(), every).unwrap();
        t.goto(n).unwrap();
        assert_eq!(Snapshot::of(t.driver()).to_json(), expected[n]);
        // Back over every step, then jumps both ways: each restore reuses
        // checkpoints that earlier restores' drivers wrote after.
        let mut targets: Vec<usize> = (0..n).rev().collect();
        targets.extend((0..n).map(|i| (i * 37 + 11) % (n + 1)));
        for target in targets {
            t.goto(target).unwrap();
            assert_eq!(
                Snapshot::of(t.driver()).to_json(),
                expected[target],
                "every {every}, at step {target}"
            );
        }
    }
}

#[test]
fn checkpoints_link_closed_segments_and_a_restore_links_the_journal() {
    let r = recording(&actions());
    let n = r.steps.len();
    let mut t = Timeline::new(r, 5).unwrap();
    t.goto(n).unwrap();
    // The newest checkpoint links the live driver's closed segments: each
    // log has more than one segment, and every one but the newest has a
    // second link.
    let links = segment_links(t.driver().data_dir());
    let shared = links.iter().filter(|(_, l)| *l >= 2).count();
    assert!(
        shared >= 4,
        "closed segments are copied, not linked: {links:?}"
    );
    // A restore links the checkpoint's journal rather than copying it.
    t.goto(n - 2).unwrap();
    let journal = t
        .driver()
        .data_dir()
        .join(minikafka::engine::transaction::journal::JOURNAL_FILE);
    let journal_links = std::fs::metadata(&journal).unwrap().nlink();
    assert!(
        journal_links >= 2,
        "the journal was copied ({journal_links} link)"
    );
}
