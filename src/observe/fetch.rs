//! Fetch (key 1) of each partition's tail, from its leader, at each
//! isolation level (docs/observe.md "What a fetch holds"). A fetch asks
//! for at most [`PARTITION_MAX_BYTES`] per partition from
//! [`tail_start`], never waits for data (`max_wait_ms` 0), and is a plain
//! consumer's (replica id -1, no fetch session): it commits nothing and
//! joins no group.

use std::collections::BTreeMap;

use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::{BrokerId, FetchRequest, TopicName};
use kafka_protocol::protocol::StrBytes;

use super::batches::{WireBatch, decode_batches};
use super::connection::Conn;
use super::offsets::Key;

/// The bytes asked of one partition per fetch: 64 KiB. A pane draws at
/// most [`crate::session::snapshot::BATCH_WINDOW`] batches, which a
/// teaching cluster's batches fit in many times over; a real cluster's
/// tail is cut to this, and the snapshot says so (`unavailable`).
pub const PARTITION_MAX_BYTES: i32 = 64 * 1024;

/// How many offsets below the HW a tail starts at most: 1024. The fetch
/// starts at `max(log start, HW - TAIL_OFFSETS)`.
pub const TAIL_OFFSETS: i64 = 1024;

/// Where a partition's tail starts.
pub fn tail_start(log_start: i64, high_watermark: i64) -> i64 {
    log_start.max(high_watermark - TAIL_OFFSETS)
}

/// One partition's fetch: its whole batches, in offset order, and the
/// aborted transactions the broker listed (read_committed only).
#[derive(Debug, Clone, Default)]
pub struct Fetched {
    pub batches: Vec<WireBatch>,
    /// `(producer id, first offset)`.
    pub aborted: Vec<(i64, i64)>,
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
/// there are at most [`TAIL_OFFSETS`] of them.
pub async fn fetch_tail(
    conn: &mut Conn,
    version: i16,
    partitions: &[(Key, i64, i64)],
    isolation: i8,
) -> Result<BTreeMap<Key, Fetched>, String> {
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
        let answer = fetch(conn, version, &ask, isolation).await?;
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
) -> Result<BTreeMap<Key, (Fetched, i32)>, String> {
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
        .with_max_wait_ms(0)
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
        return Err(format!(
            "{}: Fetch v{version} ({level}) answered error code {}",
            conn.address, response.error_code
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
                return Err(format!("{at}: error code {}", p.error_code));
            }
            let batches = match &p.records {
                Some(bytes) => decode_batches(bytes).map_err(|e| format!("{at}: {e}"))?,
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
            out.insert(key, (Fetched { batches, aborted }, bytes));
        }
    }
    for ((topic, partition), _, _) in partitions {
        if !out.contains_key(&(topic.clone(), *partition)) {
            return Err(format!(
                "{topic}-{partition}: Fetch v{version} {level} left it out of its answer ({})",
                conn.address
            ));
        }
    }
    Ok(out)
}
