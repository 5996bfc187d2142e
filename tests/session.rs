//! The session layer (SPEC §4, §5): every action kind through the driver,
//! every error event, pending operations and per-transaction order,
//! determinism, time travel and the live-recording round trip.

use std::path::Path;

use minikafka::session::recording::Header;
use minikafka::session::{
    Action, Driver, Outcome, OutcomeKind, Recording, RecordingWriter, Snapshot, Step, Timeline,
};
use serde_json::Value;

fn header(brokers: &[u32], topics: &[(&str, u32, u32)], config: Value, rules: &str) -> Header {
    serde_json::from_value(serde_json::json!({
        "mk_recording": 1,
        "title": "test",
        "rules": rules,
        "cluster": {
            "brokers": brokers,
            "topics": topics.iter().map(|(n, p, rf)| serde_json::json!({"name": n, "partitions": p, "replication_factor": rf})).collect::<Vec<_>>(),
            "config": config,
        },
    }))
    .unwrap()
}

fn act(json: &str) -> Action {
    Action::from_json(&serde_json::from_str(json).unwrap()).unwrap()
}

fn state(d: &Driver) -> Value {
    serde_json::from_str(&Snapshot::of(d).to_json()).unwrap()
}

fn recording(h: &Header, actions: &[&str]) -> Recording {
    Recording {
        header: h.clone(),
        steps: actions
            .iter()
            .enumerate()
            .map(|(i, a)| Step {
                present: None,
                at_ms: i as u64 * 100,
                action: act(a),
                caption: None,
            })
            .collect(),
    }
}

/// Every action kind, through the driver, with its effect in the state.
#[test]
fn every_action_kind_applies() {
    let h = header(
        &[1, 2],
        &[("out", 1, 2), ("in", 1, 1)],
        serde_json::json!({}),
        "minikafka",
    );
    let mut d = Driver::new(&h, None).unwrap();
    let steps: &[(&str, OutcomeKind)] = &[
        (
            r#"{"create_topic":{"name":"extra","partitions":2,"replication_factor":1}}"#,
            OutcomeKind::Ok,
        ),
        (
            r#"{"produce":{"topic":"extra","partition":1,"key":"k","value":"v1"}}"#,
            OutcomeKind::Ok,
        ),
        (
            r#"{"produce":{"topic":"out","value":"durable","acks":"all","producer":"p"}}"#,
            OutcomeKind::Pending,
        ),
        (r#"{"replicate":{}}"#, OutcomeKind::Ok),
        (r#"{"begin":{"txn":"tx"}}"#, OutcomeKind::Ok),
        (
            r#"{"send":{"txn":"tx","topic":"out","value":"t1"}}"#,
            OutcomeKind::Pending,
        ),
        (r#"{"replicate":{"broker":2}}"#, OutcomeKind::Ok),
        (
            r#"{"send_offsets":{"txn":"tx","group":"g","offsets":[{"topic":"in","partition":0,"offset":7}]}}"#,
            OutcomeKind::Ok,
        ),
        (r#"{"commit":{"txn":"tx"}}"#, OutcomeKind::Pending),
        (
            r#"{"replicate":{"topic":"out","partition":0}}"#,
            OutcomeKind::Ok,
        ),
        (r#"{"begin":{"txn":"tx2"}}"#, OutcomeKind::Ok),
        (r#"{"abort":{"txn":"tx2"}}"#, OutcomeKind::Ok),
        (r#"{"advance_clock":{"ms":500}}"#, OutcomeKind::Ok),
        (r#"{"stop_broker":{"broker":2}}"#, OutcomeKind::Ok),
        (r#"{"start_broker":{"broker":2}}"#, OutcomeKind::Ok),
        (
            r#"{"replicate":{"broker":2,"topic":"out","partition":0}}"#,
            OutcomeKind::Ok,
        ),
        (
            r#"{"promote":{"topic":"out","partition":0,"broker":2}}"#,
            OutcomeKind::Ok,
        ),
        (r#"{"crash":{}}"#, OutcomeKind::Recovered),
        (
            r#"{"tear":{"target":"journal","cut_bytes":3}}"#,
            OutcomeKind::Recovered,
        ),
        (
            r#"{"tear":{"target":{"topic":"extra","partition":1,"broker":2},"append_garbage":true}}"#,
            OutcomeKind::Recovered,
        ),
        (r#"{"note":{}}"#, OutcomeKind::Ok),
        (r#"{"ui":{"focus":"journal"}}"#, OutcomeKind::Ok),
    ];
    for (i, (json, expected)) in steps.iter().enumerate() {
        let outcome = d.apply(&act(json));
        assert_eq!(
            outcome.kind(),
            *expected,
            "step {}: {json}: {outcome:?}",
            i + 1
        );
    }
    let s = state(&d);
    assert_eq!(s["step"], 22);
    assert_eq!(s["clock_ms"], 500);
    assert!(
        s["errors"].as_array().unwrap().is_empty(),
        "{}",
        s["errors"]
    );
    let out = s["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["topic"] == "out")
        .unwrap();
    assert_eq!(
        (out["leader"].as_u64(), out["leader_epoch"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(
        s["consumers"]["read_committed"]["out-0"],
        serde_json::json!(["durable", "t1"])
    );
    assert_eq!(s["committed_offsets"]["g"]["in-0"], 7);
    assert_eq!(
        s["consumers"]["read_uncommitted"]["extra-1"],
        serde_json::json!(["v1"])
    );
    let recovery = &s["last_recovery"];
    assert_eq!(
        recovery["logs_truncated"][0]["topic"], "extra",
        "the tear's recovery: {recovery}"
    );
    assert!(
        recovery["logs_truncated"][0]["truncated_bytes"]
            .as_u64()
            .unwrap()
            > 0
    );
}

/// Failed actions are error events; the run goes on.
#[test]
fn failures_are_error_events_and_the_run_continues() {
    let h = header(
        &[1, 2],
        &[("out", 1, 2)],
        serde_json::json!({"min_insync_replicas": 2}),
        "minikafka",
    );
    let mut d = Driver::new(&h, None).unwrap();
    let cases = [
        (r#"{"commit":{"txn":"ghost"}}"#, "unknown transaction"),
        (
            r#"{"produce":{"topic":"nope","value":"x"}}"#,
            "unknown topic",
        ),
        (r#"{"begin":{"txn":"tx"}}"#, ""),
        (
            r#"{"send":{"txn":"tx","topic":"nope","value":"x"}}"#,
            "unknown topic",
        ),
        (r#"{"stop_broker":{"broker":2}}"#, ""),
        (r#"{"advance_clock":{"ms":10001}}"#, ""),
        // The fetch round judges the ISR (the book's rules): 2 leaves.
        (r#"{"replicate":{}}"#, ""),
        (
            r#"{"produce":{"topic":"out","value":"x","acks":"all"}}"#,
            "not enough replicas",
        ),
        (r#"{"commit":{"txn":"tx"}}"#, ""),
        (r#"{"commit":{"txn":"tx"}}"#, "complete_commit"),
        (
            r#"{"send":{"txn":"tx","topic":"out","value":"late"}}"#,
            "complete_commit",
        ),
        (
            r#"{"promote":{"topic":"out","partition":0,"broker":9}}"#,
            "not a replica",
        ),
    ];
    for (i, (json, message)) in cases.iter().enumerate() {
        let outcome = d.apply(&act(json));
        match outcome {
            Outcome::Error(e) => assert!(
                e.to_string().to_lowercase().contains(message),
                "step {}: {e}",
                i + 1
            ),
            other => assert!(message.is_empty(), "step {}: {json} gave {other:?}", i + 1),
        }
    }
    let s = state(&d);
    let steps: Vec<u64> = s["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["step"].as_u64().unwrap())
        .collect();
    assert_eq!(steps, [1, 2, 4, 8, 10, 11, 12]);
    let codes: Vec<&str> = d.errors().iter().map(|e| e.code).collect();
    assert_eq!(
        codes,
        [
            "UnknownTransaction",
            "UnknownTopicOrPartition",
            "UnknownTopicOrPartition",
            "NotEnoughReplicas",
            "InvalidTransactionState",
            "InvalidTransactionState",
            "InvalidPromotion",
        ],
        "each error keeps the engine's kind"
    );
}

/// acks=all waits for named replicas; a later action on the same
/// transaction waits behind a pending one; both show as pending.
#[test]
fn pending_operations_and_transaction_order() {
    let h = header(
        &[1, 2],
        &[("out", 1, 2)],
        serde_json::json!({}),
        "minikafka",
    );
    let mut d = Driver::new(&h, None).unwrap();
    assert_eq!(d.apply(&act(r#"{"begin":{"txn":"tx"}}"#)), Outcome::Ok);
    assert_eq!(
        d.apply(&act(r#"{"send":{"txn":"tx","topic":"out","value":"a"}}"#)),
        Outcome::Pending
    );
    assert_eq!(
        d.apply(&act(r#"{"commit":{"txn":"tx"}}"#)),
        Outcome::Pending,
        "queued behind the send"
    );
    let s = state(&d);
    assert_eq!(
        s["pending"],
        serde_json::json!([
            {"action_step": 2, "kind": "send", "txn": "tx", "waiting_for": [2], "queued_behind": null,
             "batches": [{"partition": "out-0", "base_offset": 0, "last_offset": 0}]},
            {"action_step": 3, "kind": "commit", "txn": "tx", "waiting_for": [], "queued_behind": 2,
             "batches": [{"partition": "out-0", "base_offset": 0, "last_offset": 0}]}
        ])
    );
    assert_eq!(
        s["transactions"][0]["state"], "ongoing",
        "the commit has not started"
    );
    d.apply(&act(r#"{"replicate":{}}"#));
    let s = state(&d);
    assert_eq!(
        s["transactions"][0]["state"], "prepare_commit",
        "the send finished, the commit started"
    );
    assert_eq!(s["pending"].as_array().unwrap().len(), 1);
    d.apply(&act(r#"{"replicate":{}}"#));
    let s = state(&d);
    assert_eq!(s["transactions"][0]["state"], "complete_commit");
    assert!(s["pending"].as_array().unwrap().is_empty());
    let texts: Vec<String> = d.events().iter().map(|e| e.text.clone()).collect();
    assert!(
        texts.contains(&"send of step 2 completed".to_string()),
        "{texts:?}"
    );
    assert!(
        texts.contains(&"commit of step 3 completed".to_string()),
        "{texts:?}"
    );
}

/// A crash fails pending operations: each is an error at its own step.
#[test]
fn a_crash_fails_pending_operations_at_their_steps() {
    let h = header(
        &[1, 2],
        &[("out", 1, 2)],
        serde_json::json!({}),
        "minikafka",
    );
    let mut d = Driver::new(&h, None).unwrap();
    d.apply(&act(
        r#"{"produce":{"topic":"out","value":"a","acks":"all"}}"#,
    ));
    d.apply(&act(r#"{"crash":{}}"#));
    let s = state(&d);
    assert_eq!(s["errors"][0]["step"], 1);
    assert!(
        s["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("crashed")
    );
    assert!(s["pending"].as_array().unwrap().is_empty());
    assert!(s["last_recovery"].is_object());
}

/// A commit with a cut point crashes the cluster; the outcome and the
/// state report what recovery completed.
#[test]
fn a_cut_point_crash_is_reported_as_recovery() {
    let h = header(&[1], &[("out", 1, 1)], serde_json::json!({}), "kafka");
    let mut d = Driver::new(&h, None).unwrap();
    for a in [
        r#"{"begin":{"txn":"tx"}}"#,
        r#"{"send":{"txn":"tx","topic":"out","value":"v"}}"#,
    ] {
        assert_eq!(d.apply(&act(a)), Outcome::Ok);
    }
    let commit = d.apply(&act(r#"{"commit":{"txn":"tx","crash_after":"prepare"}}"#));
    assert_eq!(
        commit,
        Outcome::Recovered(
            "commit of tx crashed after PREPARE_COMMIT (cut point prepare); recovery completed tx (offsets published, COMMIT marker re-sent to out-0 at offset 1)".into()
        ),
        "kafka rules re-send the marker"
    );
    let s = state(&d);
    assert_eq!(s["rules"], "kafka");
    assert_eq!(s["last_recovery"]["completed"], serde_json::json!(["tx"]));
    assert_eq!(
        s["last_recovery"]["markers_resent"][0]["partition"],
        "out-0"
    );
    assert_eq!(
        s["consumers"]["read_committed"]["out-0"],
        serde_json::json!(["v"])
    );
}

fn long_recording() -> Recording {
    let h = header(
        &[1, 2],
        &[("out", 2, 2)],
        serde_json::json!({}),
        "minikafka",
    );
    let mut actions = Vec::new();
    // Cycles of eleven steps; the last steps of each cycle leave nothing
    // pending (sends queue one behind the other, and markers go out one
    // partition at a time), so checkpoints can be taken there.
    for i in 0..44 {
        let t = i / 11;
        actions.push(match i % 11 {
            0 => format!(r#"{{"begin":{{"txn":"t{t}"}}}}"#),
            1 | 2 => format!(r#"{{"send":{{"txn":"t{t}","topic":"out","value":"v{i}"}}}}"#),
            3 => format!(r#"{{"produce":{{"topic":"out","value":"p{i}","acks":"all"}}}}"#),
            6 => format!(r#"{{"commit":{{"txn":"t{t}"}}}}"#),
            10 => r#"{"advance_clock":{"ms":250}}"#.to_string(),
            _ => r#"{"replicate":{}}"#.to_string(),
        });
    }
    let refs: Vec<&str> = actions.iter().map(String::as_str).collect();
    recording(&h, &refs)
}

/// The same recording replayed twice gives byte-identical state JSON.
#[test]
fn replays_are_byte_identical() {
    let r = long_recording();
    let run = || {
        let mut d = Driver::new(&r.header, None).unwrap();
        let mut all = String::new();
        for s in &r.steps {
            d.apply(&s.action);
            all.push_str(&Snapshot::of(&d).to_json());
            all.push('\n');
        }
        all
    };
    let (a, b) = (run(), run());
    assert_eq!(a, b);
    assert!(a.contains("\"read_committed\""));
}

/// Stepping back and forward gives the same state as going straight there,
/// and a step back replays at most the checkpoint interval.
#[test]
fn time_travel_matches_going_straight() {
    let r = long_recording();
    let straight: Vec<String> = {
        let mut d = Driver::new(&r.header, None).unwrap();
        let mut out = vec![Snapshot::of(&d).to_json()];
        for s in &r.steps {
            d.apply(&s.action);
            out.push(Snapshot::of(&d).to_json());
        }
        out
    };
    let every = 6;
    let mut t = Timeline::new(r.clone(), every).unwrap();
    t.goto(44).unwrap();
    assert_eq!(Snapshot::of(t.driver()).to_json(), straight[44]);
    for target in [43, 25, 31, 3, 0, 17, 44, 12] {
        t.goto(target).unwrap();
        assert_eq!(
            Snapshot::of(t.driver()).to_json(),
            straight[target],
            "at step {target}"
        );
    }
    t.goto(44).unwrap();
    t.step_back().unwrap();
    let steps = t.checkpoint_steps();
    assert!(steps.len() >= 5, "checkpoints at {steps:?}");
    let nearest = steps.iter().rev().find(|&&s| s <= 43).unwrap();
    assert_eq!(t.replayed(), 43 - nearest);
    assert!(
        t.replayed() < 2 * every,
        "replayed {} with checkpoints {steps:?}",
        t.replayed()
    );
    t.step_forward().unwrap();
    assert_eq!(Snapshot::of(t.driver()).to_json(), straight[44]);
}

/// A live session recorded as it goes replays to the same state.
#[test]
fn a_live_recording_replays_to_the_same_state() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.jsonl");
    let r = long_recording();
    let mut writer = RecordingWriter::create(&path, &r.header).unwrap();
    let mut live = Driver::new(&r.header, None).unwrap();
    for s in &r.steps {
        live.apply(&s.action);
        writer.append(s).unwrap();
    }
    let replayed = Recording::load(&path).unwrap();
    assert_eq!(replayed, r);
    let mut again = Driver::new(&replayed.header, None).unwrap();
    for s in &replayed.steps {
        again.apply(&s.action);
    }
    assert_eq!(
        Snapshot::of(&again).to_json(),
        Snapshot::of(&live).to_json()
    );
}

/// The chapter's experiment as a recording: the state at each step matches
/// the chapter's measured output.
#[test]
fn the_chapters_experiment_recording_matches_its_measured_output() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings/ch08-visibility.jsonl");
    let r = Recording::load(&path).unwrap();
    let mut d = Driver::new(&r.header, None).unwrap();
    let mut seen = Vec::new();
    for s in &r.steps {
        let outcome = d.apply(&s.action);
        assert!(!matches!(outcome, Outcome::Error(_)), "{outcome:?}");
        let st = state(&d);
        seen.push((
            st["consumers"]["read_uncommitted"]["out-0"].clone(),
            st["consumers"]["read_committed"]["out-0"].clone(),
        ));
    }
    let j = |v: Value| v;
    // after the send: "before marker, read_uncommitted: ['pending']" and "read_committed: []"
    assert_eq!(
        seen[1],
        (j(serde_json::json!(["pending"])), j(serde_json::json!([])))
    );
    // after the commit: "after commit marker: ['pending']"
    assert_eq!(seen[2].1, serde_json::json!(["pending"]));
    // after the abort: "after abort marker: ['pending']"
    assert_eq!(seen[5].1, serde_json::json!(["pending"]));
    assert_eq!(
        seen[5].0,
        serde_json::json!(["pending", "discard-me"]),
        "aborted data stays in the log"
    );
}

/// `waiting_for` is per operation: a later append that only needs broker 2
/// does not list broker 3, which an earlier append on the same partition
/// still waits for.
#[test]
fn waiting_for_is_per_operation() {
    let h = header(
        &[1, 2, 3],
        &[("out", 1, 3)],
        serde_json::json!({}),
        "minikafka",
    );
    let mut d = Driver::new(&h, None).unwrap();
    d.apply(&act(r#"{"stop_broker":{"broker":3}}"#));
    d.apply(&act(
        r#"{"produce":{"topic":"out","value":"a","acks":"all"}}"#,
    ));
    d.apply(&act(r#"{"advance_clock":{"ms":6000}}"#));
    d.apply(&act(r#"{"replicate":{}}"#)); // broker 2 has "a"; stopped 3 does not
    d.apply(&act(r#"{"advance_clock":{"ms":4001}}"#));
    d.apply(&act(r#"{"replicate":{}}"#)); // the round: 3 leaves the ISR
    d.apply(&act(
        r#"{"produce":{"topic":"out","value":"b","acks":"all"}}"#,
    ));
    let pending = d.pending();
    assert_eq!(pending.len(), 2);
    assert_eq!(
        pending[0].waiting_for,
        [3],
        "captured ISR [1,2,3]; broker 2 has it"
    );
    assert_eq!(pending[1].waiting_for, [2], "captured ISR [1,2]");
}

/// Issue 7's P5: the newest checkpoints keep the transaction coordinator's
/// state (a restore does not read the journal), older ones forget it (a
/// restore reads the journal): both give the state of a straight run.
#[test]
fn old_and_new_checkpoints_restore_the_same_state_as_a_straight_run() {
    let r = minikafka::perf::generated_recording(400);
    let straight: Vec<String> = {
        let mut d = Driver::new(&r.header, None).unwrap();
        let mut out = vec![Snapshot::of(&d).to_json()];
        for s in &r.steps {
            d.apply(&s.action);
            out.push(Snapshot::of(&d).to_json());
        }
        out
    };
    let mut t = Timeline::new(r, 10).unwrap();
    t.goto(400).unwrap();
    let checkpoints = t.checkpoint_steps();
    assert!(
        checkpoints.len() > minikafka::session::timeline::REMEMBERED,
        "{checkpoints:?}"
    );
    // 399 and 371 restore remembered checkpoints; 95 and 13 forgotten ones.
    // Near the current step a step back replays at most the interval
    // (twice it, as checkpoints wait for a quiet step); further back the
    // checkpoints are spaced wider (issue 17 item 11), at most a quarter
    // of the distance apart.
    for target in [399, 95, 371, 13, 400, 250] {
        let from = t.step();
        let back = target < from;
        t.goto(target).unwrap();
        assert_eq!(
            Snapshot::of(t.driver()).to_json(),
            straight[target],
            "at step {target}"
        );
        if back {
            let bound = 20.max((from - target) / 4);
            assert!(t.replayed() <= bound, "replayed {} > {bound}", t.replayed());
        }
    }
}

/// Issue 17 item 11: checkpoints are spaced wider further from the current
/// step, so a long replay keeps O(log steps) data directory copies, not one
/// per interval (main kept 300 here); a step back still replays at most
/// twice the interval, and the state is a straight run's.
#[test]
fn a_long_timeline_keeps_few_checkpoints_and_steps_back_within_the_interval() {
    let every = 10;
    let r = minikafka::perf::generated_recording(3_000);
    let straight = {
        let mut d = Driver::new(&r.header, None).unwrap();
        for s in &r.steps[..2_999] {
            d.apply(&s.action);
        }
        Snapshot::of(&d).to_json()
    };
    let mut t = Timeline::new(r, every).unwrap();
    t.goto(3_000).unwrap();
    let kept = t.checkpoint_steps();
    let dense = minikafka::session::timeline::DENSE;
    let bound = dense * (2 + (3_000 / (every * dense)).ilog2() as usize);
    assert!(
        kept.len() <= bound,
        "{} checkpoints > {bound}: {kept:?}",
        kept.len()
    );
    assert_eq!(kept[0], 0);
    t.goto(2_999).unwrap();
    assert!(t.replayed() <= 2 * every, "replayed {}", t.replayed());
    assert_eq!(Snapshot::of(t.driver()).to_json(), straight);
}
