//! Committed consumer offsets of the groups named with `--group`
//! (docs/observe.md "Committed offsets"): FindCoordinator (key 10, key
//! type 0) asks where a group lives, then OffsetFetch (key 9) with all
//! topics (null, from v2) reads what it committed. Reads only: no group is
//! joined, nothing is committed, and `require_stable` is false, so an
//! offset a transaction staged but did not commit is not shown (it is not
//! committed yet; the transaction's staged offsets are listed as
//! unavailable). Groups are not discovered (ListGroups) in this slice.

use std::collections::BTreeMap;

use kafka_protocol::messages::{FindCoordinatorRequest, GroupId, OffsetFetchRequest};
use kafka_protocol::protocol::StrBytes;

use super::connection::Conn;

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
    let request = OffsetFetchRequest::default()
        .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
        .with_topics(None)
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
