//! The book's own tests (`../shared/book/tests`, issue 16 item 4), their
//! scenarios ported to recordings with the book's expected values.
//!
//! Each test names the book test it ports. The recording runs through
//! mk-tui's session driver and the book's values are asserted on mk-tui's
//! state; where the book's code can run the same recording (no stopped
//! broker), it also runs through `tests/book/drive_book.py` and the two
//! must agree at every step (no decided difference is needed for these).
//! A book test that pokes an internal (`refresh_isr()`, `remove_from_isr`,
//! `log.truncate_to`) is ported with the public action that does the same
//! to the ISR: a fetch round while the follower is stopped.
//! docs/book-differences.md lists the ported tests and those not ported.

mod book;

use book::compare::mk_view;
use book::{Book, unavailable};
use minikafka::session::recording::Header;
use minikafka::session::{Action, Driver, Snapshot};
use serde_json::{Value, json};

fn header(brokers: &[u32], topics: &[(&str, u32, u32)], config: Value) -> Value {
    json!({
        "mk_recording": 1, "rules": "minikafka",
        "cluster": {
            "brokers": brokers,
            "topics": topics.iter()
                .map(|(n, p, rf)| json!({"name": n, "partitions": p, "replication_factor": rf}))
                .collect::<Vec<_>>(),
            "config": config,
        },
    })
}

fn actions(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// mk-tui's comparable view after every step (step 0 first).
fn mk_views(header: &Value, steps: &[Value]) -> Vec<Value> {
    let parsed: Header = serde_json::from_value(header.clone()).unwrap();
    let mut driver = Driver::new(&parsed, None).unwrap();
    let view = |d: &Driver| mk_view(&serde_json::to_value(Snapshot::of(d)).unwrap());
    let mut out = vec![view(&driver)];
    for s in steps {
        let action: Action = serde_json::from_value(s.clone()).unwrap();
        driver.apply(&action);
        out.push(view(&driver));
    }
    out
}

/// Runs a ported scenario: mk-tui's views, after checking that the book's
/// code agrees step by step when it can run it (`with_book`).
fn port(header: &Value, steps: &[Value], with_book: bool) -> Vec<Value> {
    let views = mk_views(header, steps);
    if with_book && unavailable().is_none() {
        let mut book = Book::start();
        let dir = tempfile::tempdir().unwrap();
        let mut states = vec![book.open(header, dir.path())];
        for s in steps {
            states.push(book.step(s, None));
        }
        book.close();
        for (i, (mk, bk)) in views.iter().zip(&states).enumerate() {
            let diffs = book::compare::differences(mk, bk);
            assert!(diffs.is_empty(), "step {i}: {}", diffs.join("\n"));
        }
    }
    views
}

fn p<'a>(view: &'a Value, name: &str, field: &str) -> &'a Value {
    &view["partitions"][name][field]
}

/// tests/replication/test_isr.py::test_lagging_follower_leaves_and_rejoins_isr
#[test]
fn lagging_follower_leaves_and_rejoins_isr() {
    let h = header(
        &[1, 2],
        &[("events", 1, 2)],
        json!({"replica_lag_max_offsets": 0}),
    );
    let v = port(
        &h,
        &actions(
            r#"
        {"stop_broker":{"broker":2}}
        {"produce":{"topic":"events","partition":0,"value":"x","acks":"1"}}
        {"replicate":{}}
        {"start_broker":{"broker":2}}
        {"replicate":{}}
    "#,
        ),
        false,
    );
    assert_eq!(p(&v[3], "events-0", "isr"), &json!([1]));
    assert_eq!(p(&v[5], "events-0", "isr"), &json!([1, 2]));
}

/// tests/replication/test_isr.py::test_follower_expires_from_isr_by_fetch_time
#[test]
fn follower_expires_from_isr_by_fetch_time() {
    let h = header(
        &[1, 2],
        &[("events", 1, 2)],
        json!({"replica_lag_time_ms": 100}),
    );
    let v = port(
        &h,
        &actions(
            r#"
        {"stop_broker":{"broker":2}}
        {"advance_clock":{"ms":101}}
        {"replicate":{}}
    "#,
        ),
        false,
    );
    assert_eq!(
        p(&v[2], "events-0", "isr"),
        &json!([1, 2]),
        "judged at the round"
    );
    assert_eq!(p(&v[3], "events-0", "isr"), &json!([1]));
}

/// tests/replication/test_ack_modes.py::test_acks_all_waits_for_acknowledgement_set
#[test]
fn acks_all_waits_for_acknowledgement_set() {
    let h = header(
        &[1, 2],
        &[("events", 1, 2)],
        json!({"min_insync_replicas": 2}),
    );
    let v = port(
        &h,
        &actions(
            r#"
        {"produce":{"topic":"events","partition":0,"value":"safe","acks":"all"}}
        {"replicate":{}}
    "#,
        ),
        true,
    );
    assert_eq!(v[1]["pending"], json!(1));
    assert_eq!(
        (v[2]["pending"].clone(), v[2]["errors"].clone()),
        (json!(0), json!(0))
    );
    assert_eq!(
        p(&v[2], "events-0", "high_watermark"),
        &json!(1),
        "next offset 1"
    );
}

/// tests/replication/test_ack_modes.py::test_acks_all_rejects_insufficient_isr_before_append
#[test]
fn acks_all_rejects_insufficient_isr_before_append() {
    let h = header(
        &[1, 2],
        &[("events", 1, 2)],
        json!({"min_insync_replicas": 2}),
    );
    let v = port(
        &h,
        &actions(
            r#"
        {"stop_broker":{"broker":2}}
        {"advance_clock":{"ms":10001}}
        {"replicate":{}}
        {"produce":{"topic":"events","partition":0,"value":"rejected","acks":"all"}}
    "#,
        ),
        false,
    );
    assert_eq!(v[4]["errors"], json!(1));
    assert!(
        v[4]["error_messages"][0]
            .as_str()
            .unwrap()
            .contains("not enough replicas")
    );
    assert_eq!(
        p(&v[4], "events-0", "replicas")["1"],
        json!(0),
        "leader LEO 0"
    );
}

/// tests/replication/test_ack_modes.py::test_acks_all_fails_if_isr_shrinks_after_append
#[test]
fn acks_all_fails_if_isr_shrinks_after_append() {
    let h = header(
        &[1, 2],
        &[("events", 1, 2)],
        json!({"min_insync_replicas": 2}),
    );
    let v = port(
        &h,
        &actions(
            r#"
        {"produce":{"topic":"events","partition":0,"value":"x","acks":"all"}}
        {"stop_broker":{"broker":2}}
        {"advance_clock":{"ms":10001}}
        {"replicate":{}}
    "#,
        ),
        false,
    );
    assert!(
        v[4]["error_messages"][0]
            .as_str()
            .unwrap()
            .contains("not enough replicas after append"),
        "{}",
        v[4]["error_messages"]
    );
    assert_eq!(
        p(&v[4], "events-0", "replicas")["1"],
        json!(1),
        "leader LEO 1"
    );
}

/// tests/replication/test_ack_modes.py::test_acks_zero_returns_unknown_offsets
/// (the offsets a producer gets are not in the state: the leader's LEO is)
#[test]
fn acks_zero_appends() {
    let h = header(&[1], &[("events", 1, 1)], json!({}));
    let v = port(
        &h,
        &actions(
            r#"{"produce":{"topic":"events","partition":0,"value":"fire-and-forget","acks":"0"}}"#,
        ),
        true,
    );
    assert_eq!(p(&v[1], "events-0", "replicas")["1"], json!(1));
}

/// tests/replication/test_divergent_tail.py::test_old_leader_truncates_uncommitted_tail
/// (`rejoin(1)` is the old leader fetching from the new one)
#[test]
fn old_leader_truncates_uncommitted_tail() {
    let h = header(
        &[1, 2],
        &[("events", 1, 2)],
        json!({"min_insync_replicas": 2}),
    );
    let v = port(
        &h,
        &actions(
            r#"
        {"produce":{"topic":"events","partition":0,"value":"committed","acks":"all"}}
        {"replicate":{}}
        {"produce":{"topic":"events","partition":0,"value":"leader-only","acks":"1"}}
        {"promote":{"topic":"events","partition":0,"broker":2}}
        {"replicate":{}}
    "#,
        ),
        true,
    );
    assert_eq!(p(&v[4], "events-0", "high_watermark"), &json!(1));
    assert_eq!(p(&v[4], "events-0", "replicas")["1"], json!(2));
    let leos = p(&v[5], "events-0", "replicas");
    assert_eq!(
        leos["1"], leos["2"],
        "the old leader caught up with the new"
    );
    assert_eq!(leos["1"], json!(1), "its uncommitted tail is gone");
}

/// tests/replication/test_follower_fetch.py::test_follower_pulls_complete_batches_from_its_leo
/// and ::test_cluster_can_pump_all_partition_followers
#[test]
fn followers_pull_batches_for_every_partition() {
    let h = header(&[1, 2], &[("events", 2, 2)], json!({}));
    let v = port(
        &h,
        &actions(
            r#"
        {"produce":{"topic":"events","partition":0,"value":"p0"}}
        {"produce":{"topic":"events","partition":1,"value":"p1"}}
        {"replicate":{}}
    "#,
        ),
        true,
    );
    assert_eq!(p(&v[3], "events-0", "replicas")["2"], json!(1));
    assert_eq!(p(&v[3], "events-1", "replicas")["1"], json!(1));
}

/// tests/replication/test_high_watermark.py::test_high_watermark_is_minimum_isr_leo
/// and ::test_consumer_cannot_read_above_high_watermark
#[test]
fn high_watermark_is_minimum_isr_leo_and_bounds_reads() {
    let h = header(&[1, 2], &[("events", 1, 2)], json!({}));
    let v = port(
        &h,
        &actions(
            r#"
        {"produce":{"topic":"events","partition":0,"value":"hidden"}}
        {"replicate":{}}
    "#,
        ),
        true,
    );
    assert_eq!(p(&v[1], "events-0", "high_watermark"), &json!(0));
    assert_eq!(p(&v[1], "events-0", "read_committed"), &json!([]));
    assert_eq!(p(&v[1], "events-0", "read_uncommitted"), &json!([]));
    assert_eq!(p(&v[2], "events-0", "high_watermark"), &json!(1));
    assert_eq!(p(&v[2], "events-0", "read_uncommitted"), &json!(["hidden"]));
}

/// tests/replication/test_high_watermark.py::test_single_replica_append_immediately_advances_hw
#[test]
fn single_replica_append_immediately_advances_hw() {
    let h = header(&[1], &[("events", 1, 1)], json!({}));
    let v = port(
        &h,
        &actions(r#"{"produce":{"topic":"events","partition":0,"value":"visible"}}"#),
        true,
    );
    assert_eq!(p(&v[1], "events-0", "high_watermark"), &json!(1));
}

/// tests/replication/test_promotion.py::test_only_isr_replica_can_be_promoted
#[test]
fn only_isr_replica_can_be_promoted() {
    let h = header(&[1, 2, 3], &[("events", 1, 3)], json!({}));
    let v = port(
        &h,
        &actions(
            r#"
        {"stop_broker":{"broker":2}}
        {"advance_clock":{"ms":10001}}
        {"replicate":{}}
        {"start_broker":{"broker":2}}
        {"promote":{"topic":"events","partition":0,"broker":2}}
    "#,
        ),
        false,
    );
    assert_eq!(p(&v[3], "events-0", "isr"), &json!([1, 3]));
    assert_eq!(v[5]["errors"], json!(1));
    assert_eq!(p(&v[5], "events-0", "leader"), &json!(1));
}

/// tests/replication/test_promotion.py::test_replica_behind_high_watermark_cannot_reenter_isr
/// (its log cut to 0 by a tear instead of `truncate_to`)
#[test]
fn replica_behind_high_watermark_cannot_reenter_isr() {
    let h = header(
        &[1, 2],
        &[("events", 1, 2)],
        json!({"replica_lag_max_offsets": 10}),
    );
    let v = port(
        &h,
        &actions(
            r#"
        {"produce":{"topic":"events","partition":0,"value":"committed"}}
        {"replicate":{}}
        {"tear":{"target":{"topic":"events","partition":0,"broker":2},"cut_bytes":1000}}
        {"promote":{"topic":"events","partition":0,"broker":2}}
    "#,
        ),
        false,
    );
    assert_eq!(p(&v[2], "events-0", "high_watermark"), &json!(1));
    assert_eq!(p(&v[3], "events-0", "isr"), &json!([1]));
    assert_eq!(v[4]["errors"], json!(1));
}

/// tests/replication/test_promotion.py::test_promotion_increments_epoch_and_fences_old_requests
/// and ::test_promoted_metadata_survives_restart
#[test]
fn promotion_increments_epoch_and_survives_restart() {
    let h = header(&[1, 2], &[("events", 1, 2)], json!({}));
    let v = port(
        &h,
        &actions(
            r#"
        {"promote":{"topic":"events","partition":0,"broker":2}}
        {"crash":{}}
    "#,
        ),
        true,
    );
    for step in [1, 2] {
        assert_eq!(p(&v[step], "events-0", "leader"), &json!(2));
        assert_eq!(p(&v[step], "events-0", "leader_epoch"), &json!(1));
    }
}

/// tests/transaction/test_abort.py::test_aborted_records_remain_hidden
#[test]
fn aborted_records_remain_hidden() {
    let h = header(&[1], &[("out", 1, 1)], json!({}));
    let v = port(
        &h,
        &actions(
            r#"
        {"begin":{"txn":"tx-2"}}
        {"send":{"txn":"tx-2","topic":"out","value":"discard"}}
        {"abort":{"txn":"tx-2"}}
    "#,
        ),
        true,
    );
    assert_eq!(p(&v[3], "out-0", "read_committed"), &json!([]));
}

/// tests/transaction/test_abort.py::test_abort_marker_waits_for_all_isr_replicas,
/// tests/transaction/test_visibility.py::test_transaction_data_waits_for_all_isr_replicas
/// and ::test_commit_marker_waits_for_all_isr_replicas
#[test]
fn transactional_data_and_markers_wait_for_all_isr_replicas() {
    for end in ["commit", "abort"] {
        let h = header(&[1, 2], &[("out", 1, 2)], json!({"min_insync_replicas": 2}));
        let steps = format!(
            r#"
            {{"begin":{{"txn":"tx"}}}}
            {{"send":{{"txn":"tx","topic":"out","value":"v"}}}}
            {{"replicate":{{}}}}
            {{"{end}":{{"txn":"tx"}}}}
            {{"replicate":{{}}}}
        "#
        );
        let v = port(&h, &actions(&steps), true);
        assert_eq!(v[2]["pending"], json!(1), "the send waits");
        assert_eq!(v[3]["pending"], json!(0));
        assert_eq!(v[4]["pending"], json!(1), "the {end} marker waits");
        assert_eq!(v[5]["pending"], json!(0));
        assert_eq!(v[5]["errors"], json!(0));
    }
}

/// tests/transaction/test_offsets.py::test_output_and_input_offset_publish_together
/// and ::test_abort_discards_staged_offsets
#[test]
fn offsets_publish_with_the_commit_and_an_abort_discards_them() {
    let h = header(&[1], &[("input", 1, 1), ("output", 1, 1)], json!({}));
    let v = port(
        &h,
        &actions(
            r#"
        {"begin":{"txn":"processor"}}
        {"send":{"txn":"processor","topic":"output","value":"result"}}
        {"send_offsets":{"txn":"processor","group":"workers","offsets":[{"topic":"input","partition":0,"offset":4}]}}
        {"commit":{"txn":"processor"}}
        {"begin":{"txn":"other"}}
        {"send_offsets":{"txn":"other","group":"later","offsets":[{"topic":"input","partition":0,"offset":9}]}}
        {"abort":{"txn":"other"}}
    "#,
        ),
        true,
    );
    assert_eq!(v[3]["committed_offsets"], json!({}));
    assert_eq!(
        v[4]["committed_offsets"],
        json!({"workers": {"input-0": 4}})
    );
    assert_eq!(
        v[7]["committed_offsets"],
        json!({"workers": {"input-0": 4}})
    );
}

/// tests/transaction/test_visibility.py::test_read_committed_waits_for_commit_marker
/// and ::test_replica_set_read_committed_uses_last_stable_offset
#[test]
fn read_committed_waits_for_the_commit_and_stops_at_the_lso() {
    let h = header(&[1], &[("out", 1, 1)], json!({}));
    let v = port(
        &h,
        &actions(
            r#"
        {"begin":{"txn":"tx-1"}}
        {"send":{"txn":"tx-1","topic":"out","value":"pending"}}
        {"produce":{"topic":"out","partition":0,"value":"later"}}
        {"commit":{"txn":"tx-1"}}
    "#,
        ),
        true,
    );
    assert_eq!(
        p(&v[3], "out-0", "read_uncommitted"),
        &json!(["pending", "later"])
    );
    assert_eq!(p(&v[3], "out-0", "read_committed"), &json!([]));
    assert_eq!(
        p(&v[4], "out-0", "read_committed"),
        &json!(["pending", "later"])
    );
    let batches = p(&v[4], "out-0", "batches").as_array().unwrap();
    assert_eq!(batches.last().unwrap()["kind"], json!("control"));
}

/// tests/reliability/test_transaction_restart.py::test_committed_transaction_visibility_survives_restart,
/// ::test_prepare_commit_finishes_offsets_during_recovery (a commit cut
/// after PREPARE_COMMIT instead of a hand-written journal) and
/// ::test_transaction_journal_truncates_incomplete_tail (garbage after the
/// last frame)
#[test]
fn transactions_survive_a_restart_and_recovery_finishes_prepare_commit() {
    let h = header(&[1], &[("input", 1, 1), ("out", 1, 1)], json!({}));
    let v = port(
        &h,
        &actions(
            r#"
        {"begin":{"txn":"durable"}}
        {"send":{"txn":"durable","topic":"out","value":"kept"}}
        {"commit":{"txn":"durable"}}
        {"crash":{}}
        {"begin":{"txn":"recover-me"}}
        {"send_offsets":{"txn":"recover-me","group":"workers","offsets":[{"topic":"input","partition":0,"offset":7}]}}
        {"commit":{"txn":"recover-me","crash_after":"prepare"}}
        {"begin":{"txn":"valid"}}
        {"tear":{"target":"journal","append_garbage":"deadbeef {"}}
    "#,
        ),
        true,
    );
    assert_eq!(p(&v[4], "out-0", "read_committed"), &json!(["kept"]));
    assert_eq!(
        v[7]["committed_offsets"],
        json!({"workers": {"input-0": 7}})
    );
    assert_eq!(
        v[7]["transactions"]["recover-me"]["state"],
        json!("complete_commit")
    );
    assert_eq!(v[9]["transactions"]["valid"]["state"], json!("ongoing"));
}

/// tests/reliability/test_offset_restart.py::test_committed_offset_survives_cluster_restart
/// and tests/reliability/test_log_restart.py::test_restart_preserves_leo_offsets_and_segments
#[test]
fn offsets_and_logs_survive_a_restart() {
    let h = header(&[1], &[("events", 1, 1)], json!({}));
    let v = port(
        &h,
        &actions(
            r#"
        {"produce":{"topic":"events","partition":0,"value":"a"}}
        {"produce":{"topic":"events","partition":0,"value":"b"}}
        {"begin":{"txn":"c"}}
        {"send_offsets":{"txn":"c","group":"g","offsets":[{"topic":"events","partition":0,"offset":2}]}}
        {"commit":{"txn":"c"}}
        {"crash":{}}
    "#,
        ),
        true,
    );
    assert_eq!(v[6]["committed_offsets"], json!({"g": {"events-0": 2}}));
    assert_eq!(p(&v[6], "events-0", "replicas")["1"], json!(2));
    assert_eq!(p(&v[6], "events-0", "read_uncommitted"), &json!(["a", "b"]));
}

/// tests/reliability/test_lost_acked_write.py::test_acks_one_can_confirm_a_leader_only_tail
/// (the book's leader-failure lab; `recordings/ch06-leader-failure.jsonl`
/// tells it with a stopped leader)
#[test]
fn acks_one_can_confirm_a_leader_only_tail() {
    let h = header(&[1, 2], &[("t", 1, 2)], json!({}));
    let v = port(
        &h,
        &actions(
            r#"
        {"produce":{"topic":"t","partition":0,"value":"lost","acks":"1"}}
        {"promote":{"topic":"t","partition":0,"broker":2}}
        {"replicate":{}}
    "#,
        ),
        true,
    );
    assert_eq!(
        p(&v[1], "t-0", "high_watermark"),
        &json!(0),
        "acknowledged, HW 0"
    );
    assert_eq!(
        p(&v[3], "t-0", "read_uncommitted"),
        &json!([]),
        "lost after failover"
    );
    assert_eq!(p(&v[3], "t-0", "replicas")["1"], json!(0));
}
