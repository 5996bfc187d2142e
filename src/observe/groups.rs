//! Committed consumer offsets of the groups named with `--group`
//! (docs/observe.md "Committed offsets"): FindCoordinator (key 10, key
//! type 0) asks where a group lives, then OffsetFetch (key 9) with all
//! topics (null, from v2) reads what it committed. Reads only: no group is
//! joined, nothing is committed, and `require_stable` is false, so an
//! offset a transaction staged but did not commit is not shown (it is not
//! committed yet; the transaction's staged offsets are listed as
//! unavailable). Groups are not discovered (ListGroups) in this slice.

use std::collections::BTreeMap;

use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic;
use kafka_protocol::messages::{FindCoordinatorRequest, GroupId, OffsetFetchRequest, TopicName};
use kafka_protocol::protocol::StrBytes;

use super::connection::{self, Conn};
use super::offsets::Key;

/// The offsets of one group, keyed `<topic>-<partition>`; partitions with
/// no committed offset (-1) are left out, as `mk-tui state` leaves them.
pub type Committed = BTreeMap<String, i64>;

/// Where `group`'s coordinator listens, `HOST:PORT`.
pub async fn coordinator(conn: &mut Conn, version: i16, group: &str) -> Result<String, String> {
    let request = FindCoordinatorRequest::default()
        .with_key(StrBytes::from_string(group.to_string()))
        .with_key_type(0);
    let response = conn.call("FindCoordinator", &request, version).await?;
    if response.error_code != 0 {
        return Err(format!(
            "group {group}: FindCoordinator v{version} answered error code {} ({})",
            response.error_code, conn.address
        ));
    }
    Ok(format!("{}:{}", response.host.as_str(), response.port))
}

/// What `group` committed, asked of its coordinator on `conn`.
pub async fn committed(conn: &mut Conn, version: i16, group: &str) -> Result<Committed, String> {
    offset_fetch(conn, version, group, None).await
}

/// What `group` committed, as [`committed`] asks it; but when the answer
/// for all topics does not decode, asked again naming the `observed`
/// partitions, as a consumer asks, with the line `unavailable` lists for
/// what that leaves out. librdkafka's mock cluster answers all topics
/// (null) with a null topic array, which no OffsetFetch response may hold
/// (docs/observe.md "Tested implementations"); a response read whole
/// leaves the connection in step ([`connection::UNDECODABLE`]).
pub async fn committed_or_observed(
    conn: &mut Conn,
    version: i16,
    group: &str,
    observed: &[Key],
) -> Result<(Committed, Option<String>), String> {
    match committed(conn, version, group).await {
        Err(e) if e.contains(connection::UNDECODABLE) => {
            let note = format!(
                "committed_offsets[{group}] of topics not observed ({}: OffsetFetch v{version} for all topics does not decode)",
                conn.address
            );
            let offsets = offset_fetch(conn, version, group, Some(observed)).await?;
            Ok((offsets, Some(note)))
        }
        other => other.map(|offsets| (offsets, None)),
    }
}

/// One OffsetFetch of `group`: all topics (`None`) or `partitions`.
async fn offset_fetch(
    conn: &mut Conn,
    version: i16,
    group: &str,
    partitions: Option<&[Key]>,
) -> Result<Committed, String> {
    let topics = partitions.map(|partitions| {
        let mut topics: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for (topic, partition) in partitions {
            topics.entry(topic).or_default().push(*partition as i32);
        }
        topics
            .into_iter()
            .map(|(t, ps)| {
                OffsetFetchRequestTopic::default()
                    .with_name(TopicName(StrBytes::from_string(t.to_string())))
                    .with_partition_indexes(ps)
            })
            .collect()
    });
    let request = OffsetFetchRequest::default()
        .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
        .with_topics(topics)
        .with_require_stable(false);
    let response = conn.call("OffsetFetch", &request, version).await?;
    let at = format!("group {group}: OffsetFetch v{version} ({})", conn.address);
    if response.error_code != 0 {
        return Err(format!("{at}: error code {}", response.error_code));
    }
    let mut out = BTreeMap::new();
    for t in &response.topics {
        for p in &t.partitions {
            if p.error_code != 0 {
                return Err(format!(
                    "{at}: {}-{}: error code {}",
                    t.name.0.as_str(),
                    p.partition_index,
                    p.error_code
                ));
            }
            if p.committed_offset >= 0 {
                out.insert(
                    format!("{}-{}", t.name.0.as_str(), p.partition_index),
                    p.committed_offset,
                );
            }
        }
    }
    Ok(out)
}
