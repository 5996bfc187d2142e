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

use bytes::Bytes;
use kafka_protocol::messages::fetch_response::{
    AbortedTransaction, FetchableTopicResponse, PartitionData,
};
use kafka_protocol::messages::{FetchRequest, FetchResponse, ProducerId, ResponseKind};

use super::{leader_check, topic_partition};
use crate::engine::core::cluster::ClusterState;
use crate::engine::core::metadata::TimestampType;
use crate::engine::replication::model::TransactionVisibility;
use crate::engine::{ControlType, RecordBatch, TopicPartition};
use crate::kafka::errors::{code, name_of};
use crate::kafka::records;
use crate::kafka::worker::{Answer, Worker};

pub fn handle(worker: &mut Worker, broker: u32, request: &FetchRequest, _version: i16) -> Answer {
    let committed = request.isolation_level == 1;
    let mut budget = request.max_bytes.max(0) as u64;
    let mut first = true;
    let mut bytes_out = 0usize;
    let mut aborted_listed = 0usize;
    let mut notes = Vec::new();
    let origin = worker.append_time_origin();
    let responses = worker.driver.cluster().with_state(|s| {
        request
            .topics
            .iter()
            .map(|t| {
                let name = t.topic.0.to_string();
                let partitions = t
                    .partitions
                    .iter()
                    .map(|p| {
                        let max = (p.partition_max_bytes.max(0) as u64).min(budget);
                        let read = topic_partition(&name, p.partition)
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
                        data
                    })
                    .collect();
                FetchableTopicResponse::default()
                    .with_topic(t.topic.clone())
                    .with_partitions(partitions)
            })
            .collect::<Vec<_>>()
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
    let empty_fetch = bytes_out == 0 && notes.is_empty();
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

/// One partition's answer.
struct Read {
    high_watermark: i64,
    last_stable_offset: i64,
    log_start_offset: i64,
    records: Bytes,
    /// (producer id, first offset) of each aborted run returned.
    aborted: Vec<(i64, i64)>,
}

/// The batches a read_committed fetch returns below the LSO, and its
/// `aborted_transactions`.
///
/// The engine decides what is committed (E11: the journal, per
/// transaction instance). An aborted batch is returned as Kafka returns
/// it, listed in `aborted_transactions` for the client to skip, where the
/// client's rule gives the engine's answer: the batch carries a producer
/// id (the kafka rules' transactions do) and an ABORT marker of that
/// producer follows it in the same response, so the client skips it up to
/// that marker. Any other transactional batch the engine does not count as
/// committed (the book's transactions have no producer id; a write whose
/// acks failed) is left out, and its offsets are a gap the client steps
/// over. Control batches are always returned.
fn read_committed(
    s: &ClusterState,
    tp: &TopicPartition,
    batches: Vec<RecordBatch>,
) -> (Vec<RecordBatch>, Vec<(i64, i64)>) {
    let mut aborted = Vec::new();
    let mut in_run = std::collections::BTreeSet::new();
    let mut keep = vec![true; batches.len()];
    for (i, b) in batches.iter().enumerate() {
        if b.control == Some(ControlType::Abort) {
            in_run.remove(&b.producer_id);
        }
        if b.is_control() || !b.is_transactional() || s.transactions().is_committed(tp, b) {
            continue;
        }
        let pid = b.producer_id;
        let marker_follows = pid >= 0
            && batches[i + 1..]
                .iter()
                .any(|m| m.control == Some(ControlType::Abort) && m.producer_id == pid);
        if !marker_follows {
            keep[i] = false;
            continue;
        }
        if in_run.insert(pid) {
            aborted.push((pid, b.base_offset));
        }
    }
    let visible = batches
        .into_iter()
        .zip(keep)
        .filter_map(|(b, k)| k.then_some(b))
        .collect();
    (visible, aborted)
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
    let log = &set.leader_replica().log;
    let (start, leo) = (log.log_start_offset(), log.log_end_offset());
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
    let batches: Vec<RecordBatch> = if count == 0 {
        Vec::new()
    } else {
        log.read_batches(offset, count)
            .map_err(|_| code::UNKNOWN_SERVER_ERROR)?
    };
    let (visible, aborted) = if committed {
        read_committed(s, tp, batches)
    } else {
        (batches, Vec::new())
    };
    let log_append = (set.timestamp_type() == TimestampType::LogAppendTime).then_some(origin);
    let records =
        records::encode_batches(&visible, log_append).map_err(|_| code::UNKNOWN_SERVER_ERROR)?;
    Ok(Read {
        high_watermark: hw,
        last_stable_offset: lso,
        log_start_offset: start,
        records,
        aborted,
    })
}
