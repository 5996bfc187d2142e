//! Replica lag over DescribeLogDirs (key 35; docs/observe.md "Replica
//! lag"): each broker is asked for its replicas of the observed
//! partitions, and each replica gets its log's size and the offset lag its
//! broker reports. Reads only. Asked only of brokers that advertise it.
//!
//! Kafka's `offset_lag` of a current replica is `max(HW - LEO, 0)` with
//! the HW as that broker holds it: it says how far the replica's LEO is
//! below the high watermark, never how far behind the leader's LEO it is.
//! So it does not fill the snapshot's `lag` (the leader's LEO minus the
//! replica's), which stays unavailable: it goes in the replica's own
//! `offset_lag`, and the replicas pane shows it in the lag column as
//! `HW-N` (or `≥HW` for 0). In Apache Kafka a follower's own HW is capped
//! at its LEO, so its answer is 0 for every current replica; `mk-tui
//! serve` uses the partition's HW (docs/kafka-protocol.md *DescribeLogDirs*). A replica is
//! never given its LEO from this: a lag of 0 says only LEO ≥ HW.

use std::collections::BTreeMap;

use kafka_protocol::messages::describe_log_dirs_request::DescribableLogDirTopic;
use kafka_protocol::messages::{ApiKey, DescribeLogDirsRequest, TopicName};
use kafka_protocol::protocol::StrBytes;

use crate::session::SessionError;
use crate::session::Snapshot;
use crate::session::snapshot::field;

use super::Links;
use super::connection::Conn;
use super::metadata::Cluster;
use super::offsets::Key;
use super::versions::ours;

/// One replica's directory entry: (log size in bytes, offset lag).
pub type Entry = (u64, i64);

/// What the brokers said, by broker and partition, and which brokers said
/// nothing (why, in words).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dirs {
    pub replicas: BTreeMap<(u32, Key), Entry>,
    pub silent: Vec<(u32, String)>,
}

/// Asks every broker of `cluster` about `keys`.
pub(super) async fn ask(
    links: &mut Links,
    cluster: &Cluster,
    keys: &[Key],
) -> Result<Dirs, SessionError> {
    let mut out = Dirs::default();
    for b in &cluster.brokers {
        let Ok(link) = super::link(links, &b.address).await else {
            out.silent.push((b.id, links.reason(&b.address)));
            continue;
        };
        let Some(v) = link
            .versions
            .optional(ApiKey::DescribeLogDirs, ours::DESCRIBE_LOG_DIRS)
        else {
            out.silent.push((b.id, "no DescribeLogDirs".into()));
            continue;
        };
        match describe(&mut link.conn, v, keys).await {
            Ok(Ok(found)) => {
                for (key, entry) in found {
                    out.replicas.insert((b.id, key), entry);
                }
            }
            Ok(Err(why)) => out.silent.push((b.id, why)),
            // A broker going away mid-observation says nothing.
            Err(e) => {
                out.silent.push((b.id, e.to_string()));
                links.failed(&b.address, e);
            }
        }
    }
    Ok(out)
}

/// One broker's replicas of `keys`, or why its log directories could not
/// say (an offline directory).
async fn describe(
    conn: &mut Conn,
    version: i16,
    keys: &[Key],
) -> Result<Result<Vec<(Key, Entry)>, String>, SessionError> {
    let mut topics: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for (t, p) in keys {
        topics
            .entry(t)
            .or_default()
            .push(i32::try_from(*p).unwrap_or(i32::MAX));
    }
    let request = DescribeLogDirsRequest::default().with_topics(Some(
        topics
            .into_iter()
            .map(|(t, ps)| {
                DescribableLogDirTopic::default()
                    .with_topic(TopicName(StrBytes::from_string(t.to_string())))
                    .with_partitions(ps)
            })
            .collect(),
    ));
    let response = conn.call("DescribeLogDirs", &request, version).await?;
    if response.error_code != 0 {
        return Ok(Err(format!(
            "DescribeLogDirs error code {}",
            response.error_code
        )));
    }
    let mut out = Vec::new();
    for dir in &response.results {
        if dir.error_code != 0 {
            return Ok(Err(format!(
                "log dir {} error code {}",
                dir.log_dir.as_str(),
                dir.error_code
            )));
        }
        for t in &dir.topics {
            for p in &t.partitions {
                // A replica being moved between directories (KIP-113) is
                // listed twice; its current copy is the one consumers read.
                if p.is_future_key {
                    continue;
                }
                let key = (t.name.0.to_string(), p.partition_index.max(0) as u32);
                out.push((
                    key,
                    (u64::try_from(p.partition_size).unwrap_or(0), p.offset_lag),
                ));
            }
        }
    }
    Ok(Ok(out))
}

/// Fills each replica's `offset_lag` and `log_size_bytes` from `dirs`, and
/// names what stays unknown.
pub fn fill(snapshot: &mut Snapshot, dirs: &Dirs) {
    if dirs.replicas.is_empty() && !dirs.silent.is_empty() {
        for f in [field::REPLICA_OFFSET_LAG, field::REPLICA_LOG_SIZE] {
            snapshot.unavailable.push(f.into());
        }
        return;
    }
    for (broker, why) in &dirs.silent {
        for f in [field::REPLICA_OFFSET_LAG, field::REPLICA_LOG_SIZE] {
            snapshot
                .unavailable
                .push(format!("{f} of broker {broker} ({why})"));
        }
    }
    for p in &mut snapshot.partitions {
        let key = (p.topic.clone(), p.partition);
        for r in &mut p.replicas {
            // An offset lag of -1 is Kafka's "not available" (the replica
            // is not created or is offline).
            match dirs.replicas.get(&(r.broker, key.clone())) {
                Some(&(size, lag)) if lag >= 0 => {
                    r.offset_lag = Some(lag);
                    r.log_size_bytes = Some(size);
                }
                _ if dirs.silent.iter().any(|(b, _)| *b == r.broker) => {}
                _ => snapshot.unavailable.push(format!(
                    "{} of partitions[{}-{}] on broker {} (not reported)",
                    field::REPLICA_OFFSET_LAG,
                    key.0,
                    key.1,
                    r.broker
                )),
            }
        }
    }
}
