//! Committed consumer offsets (docs/observe.md "Committed offsets"):
//! the groups named with `--group`, or else every group ListGroups (key
//! 16) lists on any broker (each lists the groups it coordinates); for
//! each, FindCoordinator (key 10, key type 0) asks where it lives, then
//! OffsetFetch (key 9) with all topics (null, from v2) reads what it
//! committed. Reads only: no group is joined, nothing is committed.
//!
//! `require_stable` is false for the committed offsets, so an offset a
//! transaction staged but did not commit is not shown as committed (it is
//! not, yet). A second OffsetFetch (v7+) with `require_stable` true, naming
//! every observed partition, finds where one is pending: Kafka answers
//! UNSTABLE_OFFSET_COMMIT for a partition with a pending transactional
//! offset commit. Which transaction staged it, and what offset, are not
//! on the wire; the partition is listed as pending
//! ([`field::pending_commit`]), and the offsets pane says so.

use std::collections::BTreeMap;

use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic;
use kafka_protocol::messages::{ApiKey, GroupId, ListGroupsRequest, OffsetFetchRequest, TopicName};
use kafka_protocol::protocol::StrBytes;

use crate::session::SessionError;
use crate::session::snapshot::{GroupOffsets, field};

use super::Links;
use super::connection::{self, Conn};
use super::coordinator;
use super::metadata::Cluster;
use super::offsets::Key;
use super::versions::ours;

/// The most groups discovered per observation whose offsets are read.
pub const MAX_GROUPS: usize = 256;

/// UNSTABLE_OFFSET_COMMIT: a transaction's offset commit is pending.
const UNSTABLE_OFFSET_COMMIT: i16 = 88;

/// The offsets of one group, keyed `<topic>-<partition>`; partitions with
/// no committed offset (-1) are left out, as `mk-tui state` leaves them.
pub type Committed = BTreeMap<String, i64>;

/// What `group` committed, asked of its coordinator on `conn`.
pub async fn committed(
    conn: &mut Conn,
    version: i16,
    group: &str,
) -> Result<Committed, SessionError> {
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
) -> Result<(Committed, Option<String>), SessionError> {
    match committed(conn, version, group).await {
        Err(e) if e.to_string().contains(connection::UNDECODABLE) => {
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
) -> Result<Committed, SessionError> {
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
        return Err(SessionError::protocol(
            &at,
            format!("error code {}", response.error_code),
        ));
    }
    let mut out = BTreeMap::new();
    for t in &response.topics {
        for p in &t.partitions {
            if p.error_code != 0 {
                return Err(SessionError::protocol(
                    &at,
                    format!(
                        "{}-{}: error code {}",
                        t.name.0.as_str(),
                        p.partition_index,
                        p.error_code
                    ),
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

/// What the groups' coordinators said: the committed offsets, and the
/// fields they leave unknown (pending commits, groups not listed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observed {
    pub committed: GroupOffsets,
    pub unavailable: Vec<String>,
}

/// The groups `named`, or every group listed; their committed offsets and
/// where a transactional commit of theirs is pending among `keys`.
pub(super) async fn ask(
    links: &mut Links,
    cluster: &Cluster,
    bootstrap: &str,
    named: &[String],
    keys: &[Key],
) -> Result<Observed, SessionError> {
    let mut out = Observed::default();
    let groups: Vec<String> = if named.is_empty() {
        let mut all = Vec::new();
        let mut lacking = Vec::new();
        for b in &cluster.brokers {
            let Ok(link) = super::link(links, &b.address).await else {
                lacking.push(format!("broker {} ({})", b.id, links.reason(&b.address)));
                continue;
            };
            match link
                .versions
                .optional(ApiKey::ListGroups, ours::LIST_GROUPS)
            {
                Some(v) => match list(&mut link.conn, v).await {
                    Ok(Ok(groups)) => all.extend(groups),
                    Ok(Err(e)) => {
                        lacking.push(format!("broker {} (ListGroups error code {e})", b.id))
                    }
                    Err(e) => {
                        lacking.push(format!("broker {} ({e})", b.id));
                        links.failed(&b.address, e);
                    }
                },
                None => lacking.push(format!("broker {} (no ListGroups)", b.id)),
            }
        }
        if lacking.len() == cluster.brokers.len() {
            out.unavailable.push(field::COMMITTED_OFFSETS.into());
        } else {
            for l in lacking {
                out.unavailable.push(format!(
                    "{} of groups coordinated by {l}",
                    field::COMMITTED_OFFSETS
                ));
            }
        }
        all.sort();
        all.dedup();
        // Each group costs a FindCoordinator and two OffsetFetch round
        // trips: at most MAX_GROUPS, in id order.
        if all.len() > MAX_GROUPS {
            out.unavailable.push(format!(
                "{} of {} groups past the first {MAX_GROUPS} (by id)",
                field::COMMITTED_OFFSETS,
                all.len() - MAX_GROUPS
            ));
            all.truncate(MAX_GROUPS);
        }
        all
    } else {
        out.unavailable.push(format!(
            "{} of groups not named with --group",
            field::COMMITTED_OFFSETS
        ));
        named.to_vec()
    };
    for group in &groups {
        let link = super::link(links, bootstrap).await?;
        let version = link.versions.pick(
            ApiKey::FindCoordinator,
            "FindCoordinator",
            ours::FIND_COORDINATOR,
        )?;
        let address =
            coordinator::find(&mut link.conn, version, coordinator::Of::Group, group).await?;
        let link = super::link(links, &address).await?;
        let version = link
            .versions
            .pick(ApiKey::OffsetFetch, "OffsetFetch", ours::OFFSET_FETCH)?;
        let (offsets, note) = committed_or_observed(&mut link.conn, version, group, keys).await?;
        out.unavailable.extend(note);
        if version >= 7 {
            for key in pending(&mut link.conn, version, group, keys).await? {
                out.unavailable.push(field::pending_commit(
                    group,
                    &format!("{}-{}", key.0, key.1),
                ));
            }
        }
        if !offsets.is_empty() {
            out.committed.insert(group.clone(), offsets);
        }
    }
    Ok(out)
}

/// The group ids ListGroups lists on the broker on `conn`, or the error
/// code it answered instead (a coordinator still loading).
async fn list(conn: &mut Conn, version: i16) -> Result<Result<Vec<String>, i16>, SessionError> {
    let response = conn
        .call("ListGroups", &ListGroupsRequest::default(), version)
        .await?;
    if response.error_code != 0 {
        return Ok(Err(response.error_code));
    }
    Ok(Ok(response
        .groups
        .iter()
        .map(|g| g.group_id.0.to_string())
        .collect()))
}

/// The partitions of `keys` where `group` has a transactional offset
/// commit pending: OffsetFetch with `require_stable` (v7+) answers them
/// UNSTABLE_OFFSET_COMMIT.
async fn pending(
    conn: &mut Conn,
    version: i16,
    group: &str,
    keys: &[Key],
) -> Result<Vec<Key>, SessionError> {
    let mut topics: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for (t, p) in keys {
        topics
            .entry(t)
            .or_default()
            .push(i32::try_from(*p).unwrap_or(i32::MAX));
    }
    if topics.is_empty() {
        return Ok(Vec::new());
    }
    let request = OffsetFetchRequest::default()
        .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
        .with_topics(Some(
            topics
                .into_iter()
                .map(|(t, ps)| {
                    OffsetFetchRequestTopic::default()
                        .with_name(TopicName(StrBytes::from_string(t.to_string())))
                        .with_partition_indexes(ps)
                })
                .collect(),
        ))
        .with_require_stable(true);
    let response = conn.call("OffsetFetch", &request, version).await?;
    let at = format!(
        "group {group}: OffsetFetch v{version} require_stable ({})",
        conn.address
    );
    if response.error_code != 0 {
        return Err(SessionError::protocol(
            &at,
            format!("error code {}", response.error_code),
        ));
    }
    let mut out = Vec::new();
    for t in &response.topics {
        for p in &t.partitions {
            let key = (t.name.0.to_string(), p.partition_index.max(0) as u32);
            match p.error_code {
                0 => {}
                UNSTABLE_OFFSET_COMMIT => out.push(key),
                e => {
                    return Err(SessionError::protocol(
                        &at,
                        format!("{}-{}: error code {e}", key.0, key.1),
                    ));
                }
            }
        }
    }
    Ok(out)
}
