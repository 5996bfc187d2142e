//! ListOffsets (versions 1-10): earliest (-2) is the log start offset;
//! latest (-1) is the HW for read_uncommitted and the LSO for
//! read_committed, as Kafka answers. A timestamp at or above 0 finds the
//! first offset whose record is stamped at or after it (the producer's
//! CreateTime, kept as sent, or a LogAppendTime topic's append time, as a
//! Unix time), with that record's timestamp; as in Kafka,
//! only an offset a consumer of that isolation level may read (below the
//! HW, or the LSO for read_committed) is an answer, else none (-1). The
//! max-timestamp query (-3, KIP-734) finds the first record stamped with
//! the largest timestamp in the log, under the same filter: Kafka looks
//! over the whole log, so a largest timestamp above the HW answers none
//! rather than the largest below it.
//!
//! Tiered storage's queries (KIP-405, KIP-1005), with no tiered storage,
//! as Kafka 4.4 answers them on a topic without remote storage: the
//! earliest local offset (-4, v8) is the log start, as -2 (every segment
//! is local); the latest tiered offset (-5, v9) is none: offset -1,
//! timestamp -1, leader epoch -1. v10 adds only the request's
//! `timeout_ms`, for a remote read's wait: nothing here waits.

use kafka_protocol::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
};
use kafka_protocol::messages::{ListOffsetsRequest, ListOffsetsResponse, ResponseKind};

use super::{leader_check, topic_partition};
use crate::kafka::broker::{
    Answer, Broker, ClusterState, PartitionLog, RecordBatch, TimestampType, TopicPartition,
};
use crate::kafka::errors::{code, name_of};

/// Kafka's special timestamps.
const LATEST: i64 = -1;
const EARLIEST: i64 = -2;
const MAX_TIMESTAMP: i64 = -3;
const EARLIEST_LOCAL: i64 = -4;
const LATEST_TIERED: i64 = -5;

pub fn handle(
    worker: &mut dyn Broker,
    broker: u32,
    request: &ListOffsetsRequest,
    version: i16,
) -> Answer {
    let committed = request.isolation_level == 1;
    let mut notes = Vec::new();
    let origin = worker.append_time_origin();
    let topics = worker.read(|s| {
        request
            .topics
            .iter()
            .map(|t| {
                let name = t.name.0.to_string();
                let partitions = t
                    .partitions
                    .iter()
                    .map(|p| {
                        let r = ListOffsetsPartitionResponse::default()
                            .with_partition_index(p.partition_index);
                        let found = topic_partition(&name, p.partition_index)
                            .ok_or(code::UNKNOWN_TOPIC_OR_PARTITION)
                            .and_then(|tp| {
                                leader_check(s, &tp, broker)?;
                                offset_for(s, &tp, p.timestamp, committed, origin)
                            });
                        match found {
                            Ok((offset, timestamp, epoch)) => {
                                notes.push(format!(
                                    "{name}-{} {} -> {offset}",
                                    p.partition_index, p.timestamp
                                ));
                                let r = r.with_offset(offset).with_timestamp(timestamp);
                                // The field exists from v4: a value in an
                                // older version cannot be encoded (kcat
                                // 1.7's librdkafka 2.0 asks v2).
                                if version >= 4 {
                                    r.with_leader_epoch(epoch)
                                } else {
                                    r
                                }
                            }
                            Err(error) => {
                                notes.push(format!(
                                    "{name}-{}: {}",
                                    p.partition_index,
                                    name_of(error)
                                ));
                                r.with_error_code(error).with_offset(-1).with_timestamp(-1)
                            }
                        }
                    })
                    .collect();
                ListOffsetsTopicResponse::default()
                    .with_name(t.name.clone())
                    .with_partitions(partitions)
            })
            .collect::<Vec<_>>()
    });
    let response = ListOffsetsResponse::default().with_topics(topics);
    Answer::now(ResponseKind::ListOffsets(response), notes.join(", "))
}

/// (offset, timestamp, leader epoch) for one partition.
fn offset_for(
    s: &ClusterState,
    tp: &TopicPartition,
    timestamp: i64,
    committed: bool,
    origin: i64,
) -> Result<(i64, i64, i32), i16> {
    let set = s
        .partition(tp)
        .map_err(|_| code::UNKNOWN_TOPIC_OR_PARTITION)?;
    let epoch = set.leader_epoch() as i32;
    let hw = set.high_watermark();
    let lso = s.last_stable_offset(tp).map_or(hw, |l| l.min(hw));
    // The end of what a consumer of this isolation level reads.
    let readable = if committed { lso } else { hw };
    let log = &set.leader().log;
    // A LogAppendTime topic's records hold the engine clock's time; the
    // client asks and is answered in Unix time (fetch.rs).
    let shift = if set.timestamp_type() == TimestampType::LogAppendTime {
        origin
    } else {
        0
    };
    match timestamp {
        EARLIEST | EARLIEST_LOCAL => Ok((log.log_start_offset(), -1, epoch)),
        LATEST_TIERED => Ok((-1, -1, -1)),
        LATEST => Ok((readable, -1, epoch)),
        t if t >= 0 => {
            let t = t.saturating_sub(shift);
            let count = log
                .batch_summaries()
                .iter()
                .take_while(|b| b.last_offset < hw)
                .count();
            let batches = read(log, count)?;
            let found = batches
                .iter()
                .find_map(|b| {
                    b.records
                        .iter()
                        .find(|r| r.timestamp_ms >= t)
                        .map(|r| (b.base_offset + i64::from(r.offset_delta), r.timestamp_ms))
                })
                .filter(|(offset, _)| *offset < readable);
            Ok(found.map_or((-1, -1, epoch), |(o, ts)| {
                (o, ts.saturating_add(shift), epoch)
            }))
        }
        MAX_TIMESTAMP => {
            let batches = read(log, log.batch_summaries().len())?;
            // The first record with the largest timestamp: a later one
            // only replaces it when strictly larger.
            let found = batches
                .iter()
                .flat_map(|b| {
                    b.records
                        .iter()
                        .map(|r| (b.base_offset + i64::from(r.offset_delta), r.timestamp_ms))
                })
                .fold(None, |best: Option<(i64, i64)>, (o, ts)| match best {
                    Some((_, top)) if top >= ts => best,
                    _ => Some((o, ts)),
                })
                .filter(|(offset, _)| *offset < readable);
            Ok(found.map_or((-1, -1, epoch), |(o, ts)| {
                (o, ts.saturating_add(shift), epoch)
            }))
        }
        // Another negative timestamp (-6, the earliest offset pending
        // upload, is ListOffsets v11's, not served; anything below is
        // unknown) is one this server's version does not support, as
        // Kafka answers an unknown one.
        _ => Err(code::UNSUPPORTED_VERSION),
    }
}

/// The first `count` batches from the log start (none when `count` is 0).
fn read(log: &PartitionLog, count: usize) -> Result<Vec<RecordBatch>, i16> {
    if count == 0 {
        return Ok(Vec::new());
    }
    log.read_batches(log.log_start_offset(), count)
        .map_err(|_| code::UNKNOWN_SERVER_ERROR)
}

#[cfg(test)]
mod tests {
    use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
    use kafka_protocol::messages::{ListOffsetsRequest, RequestKind, ResponseKind, TopicName};
    use kafka_protocol::protocol::StrBytes;

    use crate::kafka::handlers::admin_tests::{Harness, cluster, cluster_with};

    /// (offset, timestamp) ListOffsets v7 answers for `timestamp` on t-0.
    fn by_time(h: &mut Harness, timestamp: i64, committed: bool) -> (i64, i64) {
        by_time_in(h, "t", timestamp, committed)
    }

    /// [`by_time`] on partition 0 of `topic`.
    fn by_time_in(h: &mut Harness, topic: &str, timestamp: i64, committed: bool) -> (i64, i64) {
        let request = ListOffsetsRequest::default()
            .with_isolation_level(i8::from(committed))
            .with_topics(vec![
                ListOffsetsTopic::default()
                    .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                    .with_partitions(vec![
                        ListOffsetsPartition::default().with_timestamp(timestamp),
                    ]),
            ]);
        let ResponseKind::ListOffsets(r) = h.ask(1, 7, RequestKind::ListOffsets(request)) else {
            panic!("a ListOffsets response")
        };
        let p = &r.topics[0].partitions[0];
        assert_eq!(p.error_code, 0);
        (p.offset, p.timestamp)
    }

    /// (error, offset, timestamp, leader epoch) ListOffsets `version`
    /// answers for `timestamp` on t-0 at broker `broker`.
    fn answer(h: &mut Harness, broker: u32, version: i16, timestamp: i64) -> (i16, i64, i64, i32) {
        let request = ListOffsetsRequest::default().with_topics(vec![
            ListOffsetsTopic::default()
                .with_name(TopicName(StrBytes::from_static_str("t")))
                .with_partitions(vec![
                    ListOffsetsPartition::default().with_timestamp(timestamp),
                ]),
        ]);
        let ResponseKind::ListOffsets(r) =
            h.ask(broker, version, RequestKind::ListOffsets(request))
        else {
            panic!("a ListOffsets response")
        };
        let p = &r.topics[0].partitions[0];
        (p.error_code, p.offset, p.timestamp, p.leader_epoch)
    }

    /// Tiered storage's queries with no tiered storage, as Kafka 4.4
    /// answers them on a topic without it: the earliest local offset (-4)
    /// is the log start with its leader epoch, as the earliest (-2), after
    /// DeleteRecords moved it too; the latest tiered offset (-5) is none,
    /// with no epoch. Only the leader answers, as for every query.
    #[test]
    fn earliest_local_is_the_log_start_and_latest_tiered_is_none() {
        // Segments of 100 bytes: each one-record batch is a segment of its
        // own, so DeleteRecords moves the log start to the offset asked.
        let mut h = cluster_with("kafka", serde_json::json!({"segment_max_bytes": 100}));
        for value in ["a", "b", "c", "d"] {
            h.act(serde_json::json!({"produce": {"topic": "t", "partition": 0, "value": value}}));
        }
        h.act(serde_json::json!({"replicate": {}}));
        for version in [8, 9, 10] {
            assert_eq!(answer(&mut h, 1, version, -4), (0, 0, -1, 0), "v{version}");
            assert_eq!(
                answer(&mut h, 1, version, -5),
                (0, -1, -1, -1),
                "v{version}"
            );
        }
        h.act(serde_json::json!({"delete_records": {"topic": "t", "partition": 0, "offset": 2}}));
        h.act(serde_json::json!({"replicate": {}}));
        assert_eq!(answer(&mut h, 1, 10, -2), (0, 2, -1, 0));
        assert_eq!(
            answer(&mut h, 1, 10, -4),
            (0, 2, -1, 0),
            "the new log start"
        );
        assert_eq!(answer(&mut h, 1, 10, -5), (0, -1, -1, -1));
        assert_eq!(answer(&mut h, 1, 10, -1), (0, 4, -1, 0), "the HW");
        for timestamp in [-4, -5] {
            assert_eq!(
                answer(&mut h, 2, 10, timestamp).0,
                6,
                "a follower: NOT_LEADER_OR_FOLLOWER"
            );
        }
    }

    /// A negative timestamp other than -1 to -5 asks for an offset this
    /// server has no notion of (-6, the earliest pending upload, is v11's,
    /// and anything newer): UNSUPPORTED_VERSION, as Apache Kafka 4.4
    /// answers -7.
    #[test]
    fn an_unknown_negative_timestamp_is_unsupported_version() {
        let mut h = cluster("minikafka");
        for timestamp in [-6, -7, i64::MIN] {
            let request = ListOffsetsRequest::default().with_topics(vec![
                ListOffsetsTopic::default()
                    .with_name(TopicName(StrBytes::from_static_str("t")))
                    .with_partitions(vec![
                        ListOffsetsPartition::default().with_timestamp(timestamp),
                    ]),
            ]);
            let ResponseKind::ListOffsets(r) = h.ask(1, 1, RequestKind::ListOffsets(request))
            else {
                panic!("a ListOffsets response")
            };
            let p = &r.topics[0].partitions[0];
            assert_eq!(p.error_code, 35, "{timestamp}: UNSUPPORTED_VERSION");
            assert_eq!((p.offset, p.timestamp), (-1, -1));
        }
    }

    /// The first offset stamped at or after the time asked, with its
    /// timestamp; as in Kafka, only an offset the isolation level may read
    /// answers: an open transaction's record is past the LSO.
    #[test]
    fn a_timestamp_finds_the_first_readable_offset_stamped_at_or_after_it() {
        let mut h = cluster("minikafka");
        h.act(
            serde_json::json!({"produce": {"topic": "t", "partition": 0, "records": [
            {"value": "a", "timestamp_ms": 100}, {"value": "b", "timestamp_ms": 200}]}}),
        );
        h.act(serde_json::json!({"begin": {"txn": "tx"}}));
        h.act(
            serde_json::json!({"send": {"txn": "tx", "topic": "t", "partition": 0,
            "records": [{"value": "c", "timestamp_ms": 300}]}}),
        );
        h.act(serde_json::json!({"replicate": {}}));
        for committed in [false, true] {
            assert_eq!(by_time(&mut h, 50, committed), (0, 100));
            assert_eq!(by_time(&mut h, 150, committed), (1, 200));
            assert_eq!(by_time(&mut h, 301, committed), (-1, -1), "none after");
        }
        assert_eq!(by_time(&mut h, 250, false), (2, 300));
        assert_eq!(by_time(&mut h, 250, true), (-1, -1), "past the LSO");
    }

    /// The max-timestamp query (-3): the first record with the largest
    /// timestamp, not the last offset; under the same isolation filter,
    /// so an open transaction's larger timestamp answers none at
    /// read_committed rather than the largest committed one.
    #[test]
    fn max_timestamp_finds_the_first_record_with_the_largest_timestamp() {
        let mut h = cluster("minikafka");
        h.act(
            serde_json::json!({"produce": {"topic": "t", "partition": 0, "records": [
            {"value": "a", "timestamp_ms": 100}, {"value": "b", "timestamp_ms": 300},
            {"value": "c", "timestamp_ms": 300}, {"value": "d", "timestamp_ms": 200}]}}),
        );
        h.act(serde_json::json!({"replicate": {}}));
        for committed in [false, true] {
            assert_eq!(by_time(&mut h, -3, committed), (1, 300));
        }
        h.act(serde_json::json!({"begin": {"txn": "tx"}}));
        h.act(
            serde_json::json!({"send": {"txn": "tx", "topic": "t", "partition": 0,
            "records": [{"value": "e", "timestamp_ms": 400}]}}),
        );
        h.act(serde_json::json!({"replicate": {}}));
        assert_eq!(by_time(&mut h, -3, false), (4, 400));
        assert_eq!(by_time(&mut h, -3, true), (-1, -1), "past the LSO");
    }

    /// A LogAppendTime topic is asked and answered in Unix time: its
    /// engine stamps (100 and 150 on the engine clock) plus the origin the
    /// server fixed when first asked, the wall clock minus the engine
    /// clock then (150).
    #[test]
    fn a_log_append_time_topic_is_found_by_its_append_times_as_unix_times() {
        let mut h = cluster("minikafka");
        h.act(
            serde_json::json!({"create_topic": {"name": "lat", "partitions": 1,
            "replication_factor": 2, "timestamp_type": "LogAppendTime"}}),
        );
        for ms in [100, 50] {
            h.act(serde_json::json!({"advance_clock": {"ms": ms}}));
            h.act(
                serde_json::json!({"produce": {"topic": "lat", "partition": 0,
                "records": [{"value": "a", "timestamp_ms": 7}]}}),
            );
        }
        h.act(serde_json::json!({"replicate": {}}));
        let before = crate::kafka::clock::RealTime::unix_ms();
        let (offset, first) = by_time_in(&mut h, "lat", 0, false);
        let after = crate::kafka::clock::RealTime::unix_ms();
        assert_eq!(offset, 0);
        assert!(
            (before - 50..=after - 50).contains(&first),
            "{first} is the wall clock then, less the 50 ms since the append"
        );
        assert_eq!(by_time_in(&mut h, "lat", first + 1, false), (1, first + 50));
        assert_eq!(by_time_in(&mut h, "lat", first + 51, false), (-1, -1));
        // The CreateTime the producer sent (7) is not kept: asking for it
        // finds the first record at its append time.
        assert_eq!(by_time_in(&mut h, "lat", 7, false), (0, first));
    }
}
