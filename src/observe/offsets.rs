//! ListOffsets (key 2), asked of each partition's leader
//! (docs/observe.md): earliest (-2) is the log start offset, latest (-1)
//! under read_uncommitted is the high watermark, latest under
//! read_committed is the last stable offset. Three requests per leader,
//! each naming all of its partitions.

use std::collections::BTreeMap;

use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::{BrokerId, ListOffsetsRequest, TopicName};
use kafka_protocol::protocol::StrBytes;

use super::connection::Conn;

use crate::session::SessionError;

/// `(topic, partition)`.
pub type Key = (String, u32);

/// A partition's three offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Offsets {
    pub log_start: i64,
    pub high_watermark: i64,
    pub last_stable: i64,
}

/// The special timestamps of ListOffsets.
const EARLIEST: i64 = -2;
const LATEST: i64 = -1;

/// The offsets of `partitions`, all led by the broker on `conn`.
pub async fn ask(
    conn: &mut Conn,
    version: i16,
    partitions: &[Key],
) -> Result<BTreeMap<Key, Offsets>, SessionError> {
    let log_start = list(conn, version, partitions, EARLIEST, 0).await?;
    let hw = list(conn, version, partitions, LATEST, 0).await?;
    let lso = list(conn, version, partitions, LATEST, 1).await?;
    Ok(partitions
        .iter()
        .map(|k| {
            (
                k.clone(),
                Offsets {
                    log_start: log_start[k],
                    high_watermark: hw[k],
                    last_stable: lso[k],
                },
            )
        })
        .collect())
}

/// One ListOffsets request: the offset at `timestamp` of each partition
/// under `isolation` (0 read_uncommitted, 1 read_committed).
async fn list(
    conn: &mut Conn,
    version: i16,
    partitions: &[Key],
    timestamp: i64,
    isolation: i8,
) -> Result<BTreeMap<Key, i64>, SessionError> {
    let mut topics: BTreeMap<&str, Vec<ListOffsetsPartition>> = BTreeMap::new();
    for (topic, partition) in partitions {
        topics.entry(topic).or_default().push(
            ListOffsetsPartition::default()
                .with_partition_index(*partition as i32)
                .with_current_leader_epoch(-1)
                .with_timestamp(timestamp),
        );
    }
    let request = ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_isolation_level(isolation)
        .with_topics(
            topics
                .into_iter()
                .map(|(t, ps)| {
                    ListOffsetsTopic::default()
                        .with_name(TopicName(StrBytes::from_string(t.to_string())))
                        .with_partitions(ps)
                })
                .collect(),
        );
    let response = conn.call("ListOffsets", &request, version).await?;
    let mut out = BTreeMap::new();
    for t in &response.topics {
        for p in &t.partitions {
            let key = (t.name.0.to_string(), p.partition_index.max(0) as u32);
            if p.error_code != 0 {
                return Err(SessionError::protocol(
                    format!("{}-{}", key.0, key.1),
                    format!(
                        "ListOffsets v{version} answered error code {} ({})",
                        p.error_code, conn.address
                    ),
                ));
            }
            out.insert(key, p.offset);
        }
    }
    for (topic, partition) in partitions {
        if !out.contains_key(&(topic.clone(), *partition)) {
            return Err(SessionError::protocol(
                format!("{topic}-{partition}"),
                format!(
                    "ListOffsets v{version} left it out of its answer ({})",
                    conn.address
                ),
            ));
        }
    }
    Ok(out)
}
