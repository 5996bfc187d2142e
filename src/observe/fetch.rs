//! Fetch (key 1) of each partition's tail, from its leader, at each
//! isolation level (docs/observe.md "What a fetch holds"). A fetch asks
//! for at most [`PARTITION_MAX_BYTES`] per partition from
//! [`tail_start`], does not wait for data (`min_bytes` 0, `max_wait_ms`
//! [`MAX_WAIT_MS`]), and is a plain consumer's (replica id -1, no fetch
//! session): it commits nothing and joins no group.

use std::collections::BTreeMap;
use std::time::Instant;

use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::{BrokerId, FetchRequest, TopicName};
use kafka_protocol::protocol::StrBytes;

use super::batches::{WireBatch, decode_batches};
use super::connection::Conn;
use super::offsets::Key;

use crate::session::SessionError;

/// The bytes asked of one partition per fetch: 64 KiB. A pane draws at
/// most [`crate::session::snapshot::BATCH_WINDOW`] batches, which a
/// teaching cluster's batches fit in many times over; a real cluster's
/// tail is cut to this, and the snapshot says so (`unavailable`).
pub const PARTITION_MAX_BYTES: i32 = 64 * 1024;

/// How long a fetch may wait for data: 10 ms, not 0, because tansu 0.6.0
/// answers a fetch with `max_wait_ms` 0 with no topic at all
/// (docs/observe.md "Tested implementations"). With `min_bytes` 0 Kafka
/// answers at once; `mk-tui serve` waits these 10 ms at most, when there
/// is nothing to return.
pub const MAX_WAIT_MS: i32 = 10;

/// How many offsets below the HW a tail starts at most: 1024. The fetch
/// starts at `max(log start, HW - TAIL_OFFSETS)`.
pub const TAIL_OFFSETS: i64 = 1024;

/// Where a partition's tail starts.
pub fn tail_start(log_start: i64, high_watermark: i64) -> i64 {
    log_start.max(high_watermark - TAIL_OFFSETS)
}

/// One partition's fetch: its whole batches, in offset order, the
/// aborted transactions the broker listed (read_committed only), and the
/// watermarks its first answer told.
#[derive(Debug, Clone, Default)]
pub struct Fetched {
    pub batches: Vec<WireBatch>,
    /// `(producer id, first offset)`.
    pub aborted: Vec<(i64, i64)>,
    /// `(high watermark, last stable offset)` as the partition's first
    /// answer said them: what a consumer is told and stops at, checked
    /// against ListOffsets (docs/observe.md "Fetch against ListOffsets").
    pub watermarks: Option<(i64, i64)>,
    /// Where the fetch stopped because its time ran out (the next offset
    /// it would have asked for), if it did before the end (issue 25).
    pub cut_at: Option<i64>,
}

/// Fetches each partition's tail `start..end` (`end` its HW) from the
/// broker on `conn`, at `isolation` (0 read_uncommitted, 1
/// read_committed), asking again from where the last answer stopped, as a
/// consumer does: a broker may return fewer batches than fit (librdkafka's
/// mock cluster returns one per partition per fetch; docs/observe.md
/// "Tested implementations"). A partition is done when it reaches `end`,
/// when an answer brings no whole batch (read_committed stops at the
/// LSO), or when its answers add up to [`PARTITION_MAX_BYTES`]: the bound
/// holds across the rounds, and each round moves at least one offset, so
/// there are at most [`TAIL_OFFSETS`] of them. No round starts at or after
/// `until`, and one the observation's deadline cuts ends the fetch too:
/// each partition not done is then marked [`Fetched::cut_at`] where it
/// stopped, with what came before kept.
pub async fn fetch_tail(
    conn: &mut Conn,
    version: i16,
    partitions: &[(Key, i64, i64)],
    isolation: i8,
    until: Instant,
) -> Result<BTreeMap<Key, Fetched>, SessionError> {
    let mut out: BTreeMap<Key, Fetched> = BTreeMap::new();
    // (key, next offset, end, bytes left)
    let mut open: Vec<(Key, i64, i64, i32)> = partitions
        .iter()
        .map(|(k, start, end)| (k.clone(), *start, *end, PARTITION_MAX_BYTES))
        .collect();
    loop {
        let ask: Vec<(Key, i64, i32)> = open
            .iter()
            .filter(|(k, next, end, left)| *left > 0 && (!out.contains_key(k) || next < end))
            .map(|(k, next, _, left)| (k.clone(), *next, *left))
            .collect();
        if ask.is_empty() {
            return Ok(out);
        }
        // None: out of time before asking.
        let answer = if Instant::now() >= until || conn.deadline.passed() {
            None
        } else {
            Some(fetch(conn, version, &ask, isolation).await)
        };
        let answer = match answer {
            Some(Ok(answer)) => answer,
            Some(Err(e)) if !conn.deadline.passed() => return Err(e),
            _ => {
                // Out of time: keep what came, say where it stopped.
                for (key, next, _) in ask {
                    out.entry(key).or_default().cut_at = Some(next);
                }
                return Ok(out);
            }
        };
        for (key, next, _, left) in &mut open {
            let Some((got, bytes)) = answer.get(key) else {
                continue; // not asked this round
            };
            let entry = out.entry(key.clone()).or_default();
            let before = entry.batches.last().map(|b| b.last_offset);
            // A batch already held (a broker answers with the whole batch
            // holding the fetch offset) is not taken twice.
            let new = got
                .batches
                .iter()
                .filter(|b| before.is_none_or(|last| b.base_offset > last));
            entry.batches.extend(new.cloned());
            entry.aborted.extend(got.aborted.iter().copied());
            entry.watermarks = entry.watermarks.or(got.watermarks);
            match entry.batches.last().map(|b| b.last_offset) {
                Some(last) if Some(last) != before => {
                    *next = last + 1;
                    *left = left.saturating_sub(*bytes);
                }
                _ => *left = 0, // no whole batch came: done
            }
        }
    }
}

/// Fetches `partitions` (each from its start offset, at most its byte
/// count) from the broker on `conn`, once, at `isolation`; with each
/// partition's answer, the size of its records in bytes.
async fn fetch(
    conn: &mut Conn,
    version: i16,
    partitions: &[(Key, i64, i32)],
    isolation: i8,
) -> Result<BTreeMap<Key, (Fetched, i32)>, SessionError> {
    let mut topics: BTreeMap<&str, Vec<FetchPartition>> = BTreeMap::new();
    for ((topic, partition), start, max_bytes) in partitions {
        topics.entry(topic).or_default().push(
            FetchPartition::default()
                .with_partition(*partition as i32)
                .with_current_leader_epoch(-1)
                .with_fetch_offset(*start)
                .with_last_fetched_epoch(-1)
                .with_log_start_offset(-1)
                .with_partition_max_bytes(*max_bytes),
        );
    }
    let request = FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(MAX_WAIT_MS)
        .with_min_bytes(0)
        .with_max_bytes(
            partitions
                .iter()
                .fold(0i32, |sum, (_, _, bytes)| sum.saturating_add(*bytes)),
        )
        .with_isolation_level(isolation)
        .with_session_id(0)
        .with_session_epoch(-1)
        .with_topics(
            topics
                .into_iter()
                .map(|(t, ps)| {
                    FetchTopic::default()
                        .with_topic(TopicName(StrBytes::from_string(t.to_string())))
                        .with_partitions(ps)
                })
                .collect(),
        );
    let level = if isolation == 0 {
        "read_uncommitted"
    } else {
        "read_committed"
    };
    let response = conn.call("Fetch", &request, version).await?;
    if response.error_code != 0 {
        return Err(SessionError::protocol(
            &conn.address,
            format!(
                "Fetch v{version} ({level}) answered error code {}",
                response.error_code
            ),
        ));
    }
    let mut out = BTreeMap::new();
    for t in &response.responses {
        for p in &t.partitions {
            let key = (t.topic.0.to_string(), p.partition_index.max(0) as u32);
            let at = format!(
                "{}-{}: Fetch v{version} {level} from {}",
                key.0, key.1, conn.address
            );
            if p.error_code != 0 {
                return Err(SessionError::protocol(
                    &at,
                    format!("error code {}", p.error_code),
                ));
            }
            let batches = match &p.records {
                Some(bytes) => decode_batches(bytes).map_err(|e| e.in_(&at))?,
                None => Vec::new(),
            };
            let aborted = p
                .aborted_transactions
                .iter()
                .flatten()
                .map(|a| (a.producer_id.0, a.first_offset))
                .collect();
            let bytes = p.records.as_ref().map_or(0, |r| r.len());
            let bytes = i32::try_from(bytes).unwrap_or(i32::MAX);
            let watermarks = Some((p.high_watermark, p.last_stable_offset));
            let fetched = Fetched {
                batches,
                aborted,
                watermarks,
                cut_at: None,
            };
            out.insert(key, (fetched, bytes));
        }
    }
    for ((topic, partition), _, _) in partitions {
        if !out.contains_key(&(topic.clone(), *partition)) {
            return Err(SessionError::protocol(
                format!("{topic}-{partition}"),
                format!(
                    "Fetch v{version} {level} left it out of its answer ({})",
                    conn.address
                ),
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    //! [`fetch_tail`] against a fake broker that answers as librdkafka's
    //! mock cluster does: the one batch holding the fetch offset.

    use bytes::{Buf, BufMut, Bytes, BytesMut};
    use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
    use kafka_protocol::messages::{FetchResponse, RequestHeader, ResponseHeader};
    use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion};
    use kafka_protocol::records::{
        Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
    };
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::observe::connection::Deadline;

    fn far() -> Instant {
        Instant::now() + std::time::Duration::from_secs(30)
    }

    /// A batch of `count` records from `base`.
    fn batch(base: i64, count: i64) -> Bytes {
        let records: Vec<Record> = (base..base + count)
            .map(|offset| Record {
                transactional: false,
                control: false,
                delete_horizon: false,
                partition_leader_epoch: 0,
                producer_id: -1,
                producer_epoch: -1,
                timestamp_type: TimestampType::Creation,
                offset,
                // Offset minus sequence constant: one batch.
                sequence: (offset - base) as i32,
                timestamp: 0,
                key: None,
                value: Some(Bytes::from(format!("v{offset}"))),
                headers: Default::default(),
            })
            .collect();
        let mut buf = BytesMut::new();
        let options = RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        };
        RecordBatchEncoder::encode(&mut buf, records.iter(), &options).unwrap();
        buf.freeze()
    }

    /// Serves `log` (batches in offset order) on a loopback port, one
    /// batch per Fetch, counting the fetches; returns the address.
    async fn one_batch_per_fetch(log: Vec<(i64, i64)>) -> (String, tokio::task::JoinHandle<u32>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let task = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut fetches = 0;
            loop {
                let mut size = [0u8; 4];
                if s.read_exact(&mut size).await.is_err() {
                    return fetches; // the client is done
                }
                let mut payload = vec![0; i32::from_be_bytes(size) as usize];
                s.read_exact(&mut payload).await.unwrap();
                let mut payload = Bytes::from(payload);
                let version = i16::from_be_bytes([payload[2], payload[3]]);
                let header =
                    RequestHeader::decode(&mut payload, FetchRequest::header_version(version))
                        .unwrap();
                let request = FetchRequest::decode(&mut payload, version).unwrap();
                assert!(!payload.has_remaining());
                fetches += 1;
                let asked = &request.topics[0].partitions[0];
                let end = log.last().map_or(0, |(b, n)| b + n);
                let records = log
                    .iter()
                    .find(|(b, n)| (*b..b + n).contains(&asked.fetch_offset))
                    .map(|&(b, n)| batch(b, n));
                let response = FetchResponse::default().with_responses(vec![
                    FetchableTopicResponse::default()
                        .with_topic(request.topics[0].topic.clone())
                        .with_partitions(vec![
                            PartitionData::default()
                                .with_partition_index(asked.partition)
                                .with_high_watermark(end)
                                .with_last_stable_offset(end)
                                .with_records(records),
                        ]),
                ]);
                let mut out = BytesMut::new();
                out.put_i32(0);
                ResponseHeader::default()
                    .with_correlation_id(header.correlation_id)
                    .encode(&mut out, FetchResponse::header_version(version))
                    .unwrap();
                response.encode(&mut out, version).unwrap();
                let size = (out.len() - 4) as i32;
                out[..4].copy_from_slice(&size.to_be_bytes());
                s.write_all(&out).await.unwrap();
            }
        });
        (address, task)
    }

    #[test]
    fn a_broker_answering_one_batch_per_fetch_is_asked_again_up_to_the_hw() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            // Batches 0-2, 3, 4-7; the tail starts inside the first.
            let (address, server) = one_batch_per_fetch(vec![(0, 3), (3, 1), (4, 4)]).await;
            let deadline = Deadline::after(std::time::Duration::from_secs(30));
            let mut conn = Conn::connect(&address, deadline).await.unwrap();
            let key: Key = ("t".into(), 0);
            let got = fetch_tail(&mut conn, 12, &[(key.clone(), 1, 8)], 0, far())
                .await
                .unwrap();
            drop(conn);
            let bases: Vec<(i64, i64)> = got[&key]
                .batches
                .iter()
                .map(|b| (b.base_offset, b.last_offset))
                .collect();
            // The batch holding the start, then each next one, once each:
            // three fetches, none past the HW.
            assert_eq!(bases, [(0, 2), (3, 3), (4, 7)]);
            assert_eq!(
                got[&key].watermarks,
                Some((8, 8)),
                "the answer's HW and LSO"
            );
            assert_eq!(server.await.unwrap(), 3);
        });
    }

    /// Tansu 0.6.0 sends NodeEndpoints (tag 0, Kafka's v16+) in its Fetch
    /// v12 answers: the response decodes, the tag kept as unknown
    /// (vendor/README.md), and at v16 it is NodeEndpoints again.
    #[test]
    fn a_fetch_answer_with_a_newer_versions_tagged_field_still_decodes() {
        for version in [12, 16] {
            // A response with no tagged field ends with their count, 0:
            // instead, one field, tag 0, of one byte, an empty compact
            // array (its length + 1). The encoder cannot write tag 0 at
            // v12, so the bytes are put by hand.
            let mut out = BytesMut::new();
            FetchResponse::default().encode(&mut out, version).unwrap();
            assert_eq!(out.last(), Some(&0));
            out.truncate(out.len() - 1);
            out.put_slice(&[1, 0, 1, 1]);
            let got = FetchResponse::decode(&mut out.freeze(), version)
                .unwrap_or_else(|e| panic!("v{version}: {e}"));
            assert!(got.node_endpoints.is_empty());
            let kept: Vec<i32> = got.unknown_tagged_fields.keys().copied().collect();
            assert_eq!(
                kept,
                if version < 16 { vec![0] } else { vec![] },
                "v{version}"
            );
        }
    }

    #[test]
    fn an_answer_without_a_new_batch_ends_the_tail() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            // The broker holds 0-1 but says (end) HW 5 of a partition it
            // cannot serve past 2: the second fetch brings nothing.
            let (address, server) = one_batch_per_fetch(vec![(0, 2)]).await;
            let deadline = Deadline::after(std::time::Duration::from_secs(30));
            let mut conn = Conn::connect(&address, deadline).await.unwrap();
            let key: Key = ("t".into(), 0);
            let got = fetch_tail(&mut conn, 12, &[(key.clone(), 0, 5)], 1, far())
                .await
                .unwrap();
            drop(conn);
            assert_eq!(got[&key].batches.len(), 1);
            assert_eq!(server.await.unwrap(), 2, "one fetch more, then done");
        });
    }
}
