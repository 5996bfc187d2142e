//! Fetch (versions 4-12) for consumers: read_uncommitted up to the HW,
//! read_committed up to the LSO, with `high_watermark`,
//! `last_stable_offset` and `log_start_offset` per partition.
//!
//! Whole engine batches are returned, encoded as Kafka v2 batches, control
//! markers included as Kafka returns them (clients skip them). Under
//! read_committed the engine decides what is visible (E11: the journal, not
//! the markers): an aborted batch the client can filter by Kafka's rule is
//! returned and listed in `aborted_transactions`, any other batch the
//! engine does not count as committed is left out (see [`read_committed`]). Fetch sessions are declined (session id 0: every request
//! is a full fetch), which Kafka allows. Reads never change the cluster.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::fetch_request::FetchPartition;
use kafka_protocol::messages::fetch_response::{
    AbortedTransaction, FetchableTopicResponse, PartitionData,
};
use kafka_protocol::messages::{FetchRequest, FetchResponse, ProducerId, ResponseKind, TopicName};
use std::collections::HashMap;
use std::collections::hash_map::Entry;

use super::{leader_check, topic_partition};
use crate::engine::vector_ext::VectorExt;
use crate::kafka::broker::{
    Answer, BatchView, Broker, ClusterState, ControlType, LoggedFrames, RecordBatch, TimestampType,
    TopicPartition, TransactionVisibility,
};
use crate::kafka::errors::{code, name_of};
use crate::kafka::wire_batch;

/// Kafka's `fetch.max.bytes` default (55 MiB): the most a Fetch response
/// holds, whatever the request's `max_bytes` asks (Kafka's
/// `KafkaApis.handleFetchRequest` caps it the same way), except that the
/// first partition with data returns at least one batch.
pub const FETCH_MAX_BYTES: u64 = 57_671_680;

/// The partitions a request names, each once: in the order first named,
/// each with the fetch offset and partition max bytes it was named with
/// last. Kafka reads a request's partitions into a map
/// (`FetchRequest.fetchData`, a `LinkedHashMap`), so a partition named
/// twice is read and answered once, at the place it was first named,
/// with the values of its last naming.
fn named_once(request: &FetchRequest) -> Vec<(&TopicName, &FetchPartition)> {
    let mut at: HashMap<(&str, i32), usize> = HashMap::new();
    let mut named: Vec<(&TopicName, &FetchPartition)> = Vec::new();
    for t in &request.topics {
        for p in &t.partitions {
            match at.entry((t.topic.0.as_str(), p.partition)) {
                Entry::Occupied(e) => named[*e.get()].1 = p,
                Entry::Vacant(e) => {
                    e.insert(named.len());
                    named.push((&t.topic, p));
                }
            }
        }
    }
    named
}

pub fn handle(
    worker: &mut dyn Broker,
    broker: u32,
    request: &FetchRequest,
    _version: i16,
) -> Answer {
    let committed = request.isolation_level == 1;
    let fetch_max = worker.fetch_max_bytes();
    let mut budget = (request.max_bytes.max(0) as u64).min(fetch_max);
    // Kafka's `fetchMinBytes`: the request's, at most the response's cap.
    let min_bytes = i64::from(request.min_bytes).min(budget as i64);
    let mut first = true;
    let mut bytes_out = 0usize;
    let mut aborted_listed = 0usize;
    let mut notes = Vec::new();
    let origin = worker.append_time_origin();
    let named = named_once(request);
    let responses = worker.read(|s| {
        let mut responses: Vec<FetchableTopicResponse> = Vec::new();
        for (topic, p) in named {
            let name = topic.0.as_str();
            let max = (p.partition_max_bytes.max(0) as u64).min(budget);
            let read = topic_partition(name, p.partition)
                .ok_or(code::UNKNOWN_TOPIC_OR_PARTITION)
                .and_then(|tp| {
                    leader_check(s, &tp, broker)?;
                    read(s, &tp, p.fetch_offset, max, first, committed, origin)
                });
            let mut data = PartitionData::default().with_partition_index(p.partition);
            match read {
                Ok(r) => {
                    budget = budget.saturating_sub(r.records.len() as u64);
                    bytes_out += r.records.len();
                    aborted_listed += r.aborted.len();
                    if !r.records.is_empty() {
                        first = false;
                    }
                    data = data
                        .with_high_watermark(r.high_watermark)
                        .with_last_stable_offset(r.last_stable_offset)
                        .with_log_start_offset(r.log_start_offset)
                        .with_aborted_transactions(committed.then(|| {
                            r.aborted
                                .iter()
                                .map(|&(pid, first)| {
                                    AbortedTransaction::default()
                                        .with_producer_id(ProducerId(pid))
                                        .with_first_offset(first)
                                })
                                .collect()
                        }))
                        .with_records(Some(r.records));
                }
                Err(error) => {
                    notes.push(format!("{name}-{}: {}", p.partition, name_of(error)));
                    data = data
                        .with_error_code(error)
                        .with_high_watermark(-1)
                        .with_last_stable_offset(-1)
                        .with_log_start_offset(-1)
                        .with_records(Some(Bytes::new()));
                }
            }
            // Consecutive partitions of a topic share its entry, as in
            // Kafka's `FetchResponse.toMessage`.
            match responses.last_mut() {
                Some(last) if last.topic == *topic => last.partitions.push(data),
                _ => responses.push(
                    FetchableTopicResponse::default()
                        .with_topic(topic.clone())
                        .with_partitions(vec![data]),
                ),
            }
        }
        responses
    });
    let isolation = if committed {
        "read_committed"
    } else {
        "read_uncommitted"
    };
    let mut outcome = format!("{isolation}, {bytes_out} bytes");
    if aborted_listed > 0 {
        outcome = format!("{outcome}, {aborted_listed} aborted transaction(s) listed");
    }
    if !notes.is_empty() {
        outcome = format!("{outcome}; {}", notes.join(", "));
    }
    // Kafka answers at once when an error is to be told or `min_bytes`
    // are there (at once for a `min_bytes` of 0); else the fetch waits.
    let empty_fetch = notes.is_empty() && (bytes_out as i64) < min_bytes;
    let response = FetchResponse::default()
        .with_session_id(0)
        .with_responses(responses);
    Answer {
        body: Some(ResponseKind::Fetch(response)),
        outcome,
        empty_fetch,
        close: false,
    }
}

/// What a waiting fetch's answer on a partition depends on: its leader
/// and whether that one is stopped, its HW, LSO, log start and log end
/// (`None`: no such partition). While these stay the same, a fetch that
/// had less than its `min_bytes` to return still has (the worker wakes a
/// waiting fetch only when one of its partitions' changes).
pub type Watched = Option<(u32, bool, i64, i64, i64, i64)>;

/// [`Watched`] of `tp` now.
pub fn watched(s: &ClusterState, tp: &TopicPartition) -> Watched {
    let set = s.partition(tp).ok()?;
    let hw = set.high_watermark();
    let lso = s.last_stable_offset(tp).unwrap_or(hw);
    let leader = set.leader();
    Some((
        set.leader_id(),
        leader.stopped,
        hw,
        lso,
        leader.log.log_start_offset(),
        leader.log.leo(),
    ))
}

/// The partitions a request names (those that can exist).
pub fn partitions(request: &FetchRequest) -> Vec<TopicPartition> {
    named_once(request)
        .into_iter()
        .filter_map(|(t, p)| topic_partition(t.0.as_str(), p.partition))
        .collect()
}

/// One partition's answer.
struct Read {
    high_watermark: i64,
    last_stable_offset: i64,
    log_start_offset: i64,
    records: Bytes,
    /// (producer id, first offset) of each aborted run returned.
    aborted: Vec<(i64, i64)>,
}

/// Which of the batches below the LSO a read_committed fetch returns, and its
/// `aborted_transactions`.
///
/// The engine decides what is committed (E11: the journal, per
/// transaction instance). An aborted batch is returned as Kafka returns
/// it, listed in `aborted_transactions` for the client to skip, where the
/// client's rule gives the engine's answer. That rule (Java's
/// `CompletedFetch`, librdkafka's `rd_kafka_aborted_txns`) skips every
/// batch of a listed producer id from the listed offset up to that
/// producer's next ABORT marker, committed ones included: so a batch is
/// listed only if an ABORT marker of its producer follows in the same
/// response before any committed batch of that producer. Any other
/// transactional batch the engine does not count as committed is left
/// out, and its offsets are a gap the client steps over: the book's
/// transactions have no producer id; a write whose acks failed; a batch
/// appended but never journaled before the process died, whose instance
/// wrote no marker there (the producer's later transactions commit after
/// it, and listing it would hide them up to its next abort).
/// Control batches are always returned.
fn read_committed(
    s: &ClusterState,
    tp: &TopicPartition,
    batches: &[RecordBatch],
) -> (Vec<bool>, Vec<(i64, i64)>) {
    let committed: Vec<bool> = batches
        .iter()
        .map(|b| b.is_control() || !b.is_transactional() || s.transactions().is_committed(tp, b))
        .collect();
    // Backwards: for each producer, whether its next batch after this one
    // that the client acts on is an ABORT marker (true) or a committed
    // data batch (false).
    let mut abort_next: HashMap<i64, bool> = HashMap::new();
    let mut listable = vec![false; batches.len()];
    for (i, b) in batches.iter().enumerate().rev() {
        let pid = b.producer_id;
        if !committed[i] {
            listable[i] = pid >= 0 && abort_next.get(&pid) == Some(&true);
        } else if b.control == Some(ControlType::Abort) {
            abort_next.insert(pid, true);
        } else if !b.is_control() && pid >= 0 {
            abort_next.insert(pid, false);
        }
    }
    let mut aborted = Vec::new();
    let mut in_run = std::collections::BTreeSet::new();
    let mut keep = vec![true; batches.len()];
    for (i, b) in batches.iter().enumerate() {
        if b.control == Some(ControlType::Abort) {
            in_run.remove(&b.producer_id);
        }
        if committed[i] {
            continue;
        }
        if !listable[i] {
            keep[i] = false;
            continue;
        }
        if in_run.insert(b.producer_id) {
            aborted.push((b.producer_id, b.base_offset));
        }
    }
    (keep, aborted)
}

/// The batches of `tp` from `offset` up to the HW (or the LSO), about
/// `max_bytes` of them (at least one batch when `at_least_one`, as Kafka
/// returns a batch larger than the limit rather than nothing).
fn read(
    s: &ClusterState,
    tp: &TopicPartition,
    offset: i64,
    max_bytes: u64,
    at_least_one: bool,
    committed: bool,
    origin: i64,
) -> Result<Read, i16> {
    let set = s
        .partition(tp)
        .map_err(|_| code::UNKNOWN_TOPIC_OR_PARTITION)?;
    let hw = set.high_watermark();
    let lso = s.last_stable_offset(tp).map_or(hw, |l| l.min(hw));
    let log = &set.leader().log;
    let (start, leo) = (log.log_start_offset(), log.leo());
    if offset < start || offset > leo {
        return Err(code::OFFSET_OUT_OF_RANGE);
    }
    let end = if committed { lso } else { hw };
    let summaries = log.batch_summaries();
    let from = summaries.partition_point(|b| b.last_offset < offset);
    let mut count = 0;
    let mut size = 0u64;
    for b in summaries.iter_from(from) {
        if b.last_offset >= end {
            break;
        }
        if (count > 0 || !at_least_one) && size + u64::from(b.size_bytes) > max_bytes {
            break;
        }
        size += u64::from(b.size_bytes);
        count += 1;
    }
    let frames = if count == 0 {
        LoggedFrames::default()
    } else {
        log.read_frames(offset, count)
            .map_err(|_| code::UNKNOWN_SERVER_ERROR)?
    };
    let views: Vec<BatchView<'_>> = frames
        .views()
        .collect::<Result<_, _>>()
        .map_err(|_| code::UNKNOWN_SERVER_ERROR)?;
    // Which batches a read_committed fetch returns is decided from their
    // headers alone.
    let headers: Vec<RecordBatch> = views.iter().map(BatchView::without_records).collect();
    let (keep, aborted) = if committed {
        read_committed(s, tp, &headers)
    } else {
        (vec![true; headers.len()], Vec::new())
    };
    let log_append = (set.timestamp_type() == TimestampType::LogAppendTime).then_some(origin);
    // The batches were chosen by their stored size (MKB1 frames); what is
    // sent is held to `max_bytes` in the wire's bytes, but for the first
    // batch when `at_least_one` (a stored frame can be a few bytes shorter
    // than its v2 batch). Each is written from its frame into the one
    // buffer the response carries.
    let mut records = BytesMut::with_capacity(size.min(max_bytes) as usize);
    let mut sent_up_to = None;
    let visible = views.iter().zip(&headers).zip(keep).filter(|(_, k)| *k);
    for ((view, header), _) in visible {
        let before = records.len();
        wire_batch::write_v2(&mut records, view, log_append);
        let first = before == 0 && at_least_one;
        if !first && records.len() as u64 > max_bytes {
            records.truncate(before);
            break;
        }
        sent_up_to = Some(header.last_offset());
    }
    let records = records.freeze();
    // The aborted transactions of the batches sent.
    let mut aborted = aborted;
    aborted.retain(|&(_, first)| sent_up_to.is_some_and(|last| first <= last));
    Ok(Read {
        high_watermark: hw,
        last_stable_offset: lso,
        log_start_offset: start,
        records,
        aborted,
    })
}

#[cfg(test)]
mod tests {
    use kafka_protocol::messages::fetch_request::FetchTopic;
    use kafka_protocol::protocol::StrBytes;

    use super::*;
    use crate::kafka::handlers::admin_tests::{Harness, cluster, cluster_with};
    use crate::session::listeners::NoSteps;

    /// Ten batches of one 1,000-byte record each in t-0, all below the HW.
    fn ten_batches() -> Harness {
        let mut h = cluster("kafka");
        for i in 0..10 {
            let value = format!("{i}").repeat(1000);
            h.act(serde_json::json!({"produce": {"topic": "t", "value": value}}));
        }
        h.act(serde_json::json!({"replicate": {}}));
        h
    }

    fn request(max_bytes: i32, partition_max: i32, min_bytes: i32) -> FetchRequest {
        FetchRequest::default()
            .with_max_bytes(max_bytes)
            .with_min_bytes(min_bytes)
            .with_topics(vec![
                FetchTopic::default()
                    .with_topic(TopicName(StrBytes::from_static_str("t")))
                    .with_partitions(vec![
                        FetchPartition::default()
                            .with_partition(0)
                            .with_fetch_offset(0)
                            .with_partition_max_bytes(partition_max),
                    ]),
            ])
    }

    /// (batches returned, record bytes, whether the fetch would wait).
    fn fetched(h: &mut Harness, request: &FetchRequest) -> (usize, usize, bool) {
        let mut steps = NoSteps;
        let mut w = h.state.worker(&mut h.driver, &mut steps);
        let answer = handle(&mut w, 1, request, 11);
        let Some(ResponseKind::Fetch(r)) = answer.body else {
            panic!("{answer:?}")
        };
        let records = r.responses[0].partitions[0].records.clone().unwrap();
        (count_batches(&records), records.len(), answer.empty_fetch)
    }

    /// The v2 batches in `records`: each is its 12-byte offset and length,
    /// then that length.
    fn count_batches(records: &[u8]) -> usize {
        let (mut at, mut n) = (0, 0);
        while at + 12 <= records.len() {
            let len = i32::from_be_bytes(records[at + 8..at + 12].try_into().unwrap());
            at += 12 + len as usize;
            n += 1;
        }
        assert_eq!(at, records.len(), "whole batches");
        n
    }

    /// What t-0's leader holds from offset 0, encoded by the protocol
    /// crate's encoder: what a fetch of all of it answered before batches
    /// were written from their frames.
    fn encoded_now(h: &Harness) -> Bytes {
        let tp = TopicPartition::new("t", 0);
        h.driver.cluster().with_state(|s| {
            let log = &s.partition(&tp).unwrap().leader().log;
            let batches = log
                .read_batches(log.log_start_offset(), usize::MAX)
                .unwrap();
            crate::kafka::records::encode_batches(&batches, None).unwrap()
        })
    }

    /// A fetch answers with the batches as the log holds them now: after
    /// a compaction rewrote them (records gone, offsets kept), the same
    /// request answers the compacted batches, byte for byte what the
    /// protocol crate's encoder makes of them, not what it answered
    /// before.
    #[test]
    fn a_fetch_after_a_compaction_answers_the_compacted_batches() {
        let mut h = cluster_with("kafka", serde_json::json!({"segment_max_bytes": 150}));
        for i in 0..12 {
            let key = format!("k{}", i % 2);
            h.act(serde_json::json!({"produce": {"topic": "t", "key": key, "value": format!("v{i}")}}));
        }
        h.act(serde_json::json!({"replicate": {}}));
        let all = request(i32::MAX, i32::MAX, 0);
        let answer = |h: &mut Harness| {
            let mut steps = NoSteps;
            let mut w = h.state.worker(&mut h.driver, &mut steps);
            let Some(ResponseKind::Fetch(r)) = handle(&mut w, 1, &all, 12).body else {
                panic!("a fetch response")
            };
            r.responses[0].partitions[0].records.clone().unwrap()
        };
        let before = answer(&mut h);
        assert_eq!(before, encoded_now(&h));
        h.act(serde_json::json!({"compact": {"topic": "t", "delete_retention_ms": 60000}}));
        let after = answer(&mut h);
        assert_eq!(after, encoded_now(&h));
        assert!(
            after.len() < before.len(),
            "{} then {} bytes",
            before.len(),
            after.len()
        );
        let values = |bytes: &Bytes| {
            let mut b = bytes.clone();
            kafka_protocol::records::RecordBatchDecoder::decode_all(&mut b)
                .unwrap()
                .into_iter()
                .flat_map(|set| set.records)
                .map(|r| (r.offset, r.value.unwrap()))
                .collect::<Vec<_>>()
        };
        let (old, new) = (values(&before), values(&after));
        assert_eq!(old.len(), 12);
        assert!(new.len() < 12, "the compaction removed records: {new:?}");
        assert!(
            new.iter().all(|r| old.contains(r)),
            "each kept at its offset"
        );
        assert_eq!(new.last(), old.last(), "the newest of a key stays");
    }

    #[test]
    fn the_default_fetch_max_bytes_is_kafkas() {
        assert_eq!(FETCH_MAX_BYTES, 55 * 1024 * 1024);
    }

    /// `max_bytes` 2^31 - 1 is capped by the broker's `fetch.max.bytes`;
    /// the first batch comes whatever the caps, so a consumer progresses.
    #[test]
    fn fetch_max_bytes_caps_a_requests_max_bytes_but_one_batch_always_comes() {
        let mut h = ten_batches();
        let (all, bytes, _) = fetched(&mut h, &request(i32::MAX, i32::MAX, 1));
        assert_eq!(all, 10);
        let batch = bytes / 10;
        // At most the cap (sizes are counted in the engine's stored
        // batches, never smaller than the wire's), but one batch always.
        let within = |h: &mut Harness, r: &FetchRequest, cap: usize| {
            let (n, bytes, _) = fetched(h, r);
            assert!(
                n >= 1 && bytes <= cap.max(batch),
                "{n} batches, {bytes} bytes, cap {cap}"
            );
            n
        };
        h.state.set_fetch_max_bytes((batch * 5 / 2) as u64);
        within(&mut h, &request(i32::MAX, i32::MAX, 1), batch * 5 / 2);
        h.state.set_fetch_max_bytes(10);
        assert_eq!(within(&mut h, &request(i32::MAX, i32::MAX, 1), 10), 1);
        h.state.set_fetch_max_bytes(FETCH_MAX_BYTES);
        assert_eq!(within(&mut h, &request(10, i32::MAX, 1), 10), 1);
        assert_eq!(within(&mut h, &request(i32::MAX, 10, 1), 10), 1);
        let cap = batch * 3;
        within(&mut h, &request(i32::MAX, cap as i32, 1), cap);
        within(&mut h, &request(cap as i32, i32::MAX, 1), cap);
    }

    /// Kafka answers once `min_bytes` are there, an error is to be told,
    /// or at once for a `min_bytes` of 0; else the fetch waits.
    #[test]
    fn a_fetch_waits_until_min_bytes_are_there() {
        let mut h = ten_batches();
        let (_, bytes, waits) = fetched(&mut h, &request(i32::MAX, i32::MAX, 1));
        assert!(!waits);
        assert!(!fetched(&mut h, &request(i32::MAX, i32::MAX, bytes as i32)).2);
        assert!(fetched(&mut h, &request(i32::MAX, i32::MAX, bytes as i32 + 1)).2);
        // min_bytes past max_bytes: max_bytes is what can come.
        assert!(!fetched(&mut h, &request(10, i32::MAX, i32::MAX)).2);
        let mut at_end = request(i32::MAX, i32::MAX, 1);
        at_end.topics[0].partitions[0].fetch_offset = 10;
        assert!(fetched(&mut h, &at_end).2, "nothing past the HW: waits");
        at_end.min_bytes = 0;
        assert!(!fetched(&mut h, &at_end).2, "min_bytes 0: answered at once");
    }

    /// A fetch at the end of t-0 waits on the driver's side; it is asked
    /// again when t-0 changes and answered once the HW passes its offset
    /// (the replication after the append), or as it is at its deadline.
    #[test]
    fn a_waiting_fetch_is_answered_by_the_step_that_gives_it_data() {
        use crate::kafka::broker::Request;
        use crate::session::Action;
        use tokio::sync::oneshot;
        let mut h = ten_batches();
        let mut at_end = request(i32::MAX, i32::MAX, 1);
        at_end.topics[0].partitions[0].fetch_offset = 10;
        at_end.max_wait_ms = 30_000;
        let ask = |h: &mut Harness, r: &FetchRequest| {
            let (tx, rx) = oneshot::channel();
            let request = Request {
                broker: 1,
                client_id: "test".into(),
                version: 11,
                body: kafka_protocol::messages::RequestKind::Fetch(r.clone()),
                connection: 0,
            };
            h.state.handle(&mut h.driver, &mut NoSteps, request, tx);
            rx
        };
        let apply = |h: &mut Harness, action: serde_json::Value| {
            let action: Action = serde_json::from_value(action).unwrap();
            let mut steps = NoSteps;
            h.state.worker(&mut h.driver, &mut steps).apply(&action);
        };
        let mut rx = ask(&mut h, &at_end);
        assert!(rx.try_recv().is_err(), "nothing past the HW: it waits");
        assert!(h.state.has_timers());
        // The append moves the log end (asked again, still nothing below
        // the HW); the replication moves the HW: answered.
        apply(
            &mut h,
            serde_json::json!({"produce": {"topic": "t", "value": "late"}}),
        );
        assert!(rx.try_recv().is_err(), "appended, not yet replicated");
        apply(&mut h, serde_json::json!({"replicate": {}}));
        let answer = rx.try_recv().expect("answered by the replication");
        let Some(ResponseKind::Fetch(r)) = answer.body else {
            panic!("{answer:?}")
        };
        let records = r.responses[0].partitions[0].records.clone().unwrap();
        assert_eq!(count_batches(&records), 1);

        // A step someone else applied (the dashboard's key): the next
        // timer is due at once, and answers it.
        at_end.topics[0].partitions[0].fetch_offset = 11;
        let mut rx = ask(&mut h, &at_end);
        h.act(serde_json::json!({"produce": {"topic": "t", "value": "key"}}));
        h.act(serde_json::json!({"replicate": {}}));
        h.state.after_step(&h.driver);
        assert_eq!(h.state.sleep_for(), std::time::Duration::ZERO);
        h.state.on_timer(&mut h.driver, &mut NoSteps);
        assert!(rx.try_recv().is_ok(), "answered at the timer");

        // Nothing comes: answered empty at its deadline.
        at_end.topics[0].partitions[0].fetch_offset = 12;
        at_end.max_wait_ms = 1;
        let mut rx = ask(&mut h, &at_end);
        assert!(rx.try_recv().is_err());
        std::thread::sleep(std::time::Duration::from_millis(5));
        h.state.on_timer(&mut h.driver, &mut NoSteps);
        let answer = rx.try_recv().expect("answered at the deadline");
        assert!(answer.empty_fetch);
        assert!(!h.state.has_timers(), "no fetch waits any more");
    }

    /// What a read_committed client shows of a response, by its rule: a
    /// listed producer's batches are skipped from the listed offset up to
    /// that producer's next ABORT marker; control batches are not shown.
    fn shown_at_read_committed(r: &PartitionData) -> Vec<String> {
        use kafka_protocol::records::RecordBatchDecoder;
        let mut listed: Vec<(i64, i64)> = r
            .aborted_transactions
            .iter()
            .flatten()
            .map(|a| (a.producer_id.0, a.first_offset))
            .collect();
        listed.sort_by_key(|&(_, first)| first);
        let mut listed = listed.into_iter().peekable();
        let mut skipping = std::collections::BTreeSet::new();
        let mut shown = Vec::new();
        let mut bytes = r.records.clone().unwrap();
        for set in RecordBatchDecoder::decode_all(&mut bytes).unwrap() {
            let first = &set.records[0];
            let last = set.records.last().unwrap().offset;
            while let Some(&(pid, _)) = listed.peek().filter(|&&(_, o)| o <= last) {
                skipping.insert(pid);
                listed.next();
            }
            if first.control {
                let abort = first.key.as_deref().is_some_and(|k| k[2..4] == [0, 0]);
                if abort {
                    skipping.remove(&first.producer_id);
                }
                continue;
            }
            if first.transactional && skipping.contains(&first.producer_id) {
                continue;
            }
            for record in &set.records {
                shown.push(String::from_utf8(record.value.clone().unwrap().to_vec()).unwrap());
            }
        }
        shown
    }

    /// A transactional batch appended but never journaled (the process
    /// died before its acks: its instance knows no partition and writes no
    /// marker) is left out at read_committed: listed as aborted, it would
    /// make the client skip the same producer's later committed
    /// transactions up to its next ABORT marker (the soak's "told
    /// committed, invisible"; MK_SOAK_SEED=1796193943869415480).
    #[test]
    fn a_batch_never_journaled_hides_none_of_its_producers_later_commits() {
        let mut h = cluster("kafka");
        let act = |h: &mut Harness, actions: &[serde_json::Value]| {
            for a in actions {
                h.act(a.clone());
            }
        };
        use serde_json::json;
        act(
            &mut h,
            &[
                json!({"begin": {"txn": "x"}}),
                json!({"send": {"txn": "x", "topic": "t", "value": "orphan"}}),
                json!({"crash": {}}),
                json!({"begin": {"txn": "x"}}),
                json!({"send": {"txn": "x", "topic": "t", "value": "committed"}}),
                json!({"replicate": {}}),
                json!({"commit": {"txn": "x"}}),
                json!({"replicate": {}}),
                json!({"begin": {"txn": "x"}}),
                json!({"send": {"txn": "x", "topic": "t", "value": "aborted"}}),
                json!({"replicate": {}}),
                json!({"abort": {"txn": "x"}}),
                json!({"replicate": {}}),
            ],
        );
        let mut fetch = request(i32::MAX, i32::MAX, 1);
        let read = |h: &mut Harness, fetch: &FetchRequest| {
            let mut steps = NoSteps;
            let mut w = h.state.worker(&mut h.driver, &mut steps);
            let Some(ResponseKind::Fetch(r)) = handle(&mut w, 1, fetch, 11).body else {
                panic!("a fetch response")
            };
            r.responses[0].partitions[0].clone()
        };
        let all = read(&mut h, &fetch);
        let mut bytes = all.records.clone().unwrap();
        let values: Vec<String> =
            kafka_protocol::records::RecordBatchDecoder::decode_all(&mut bytes)
                .unwrap()
                .iter()
                .flat_map(|set| &set.records)
                .filter(|r| !r.control)
                .map(|r| String::from_utf8(r.value.clone().unwrap().to_vec()).unwrap())
                .collect();
        assert_eq!(
            values,
            ["orphan", "committed", "aborted"],
            "read_uncommitted"
        );
        fetch.isolation_level = 1;
        let committed = read(&mut h, &fetch);
        assert_eq!(shown_at_read_committed(&committed), ["committed"]);
        assert_eq!(
            committed.aborted_transactions.as_ref().map(Vec::len),
            Some(1),
            "the aborted transaction is listed, the batch never journaled is left out"
        );
    }
}
