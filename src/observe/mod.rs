//! `mk-tui observe` (issue 15, first slice; docs/observe.md): the same
//! [`Snapshot`] the panes render, built from a Kafka cluster over its wire
//! protocol instead of from the embedded engine. A plain consumer's
//! requests only — ApiVersions, Metadata, ListOffsets, Fetch — so it never
//! writes to the cluster: no CreateTopics, no commits, no group joined.
//! Plaintext only: authentication and TLS are out of scope
//! ([`bootstrap`]).
//!
//! One job per file: [`connection`] frames requests on a socket with
//! bounded reads, [`versions`] picks each API's version, [`metadata`],
//! [`offsets`] and [`fetch`] ask, [`batches`] decodes record batches,
//! [`groups`] reads committed offsets, [`fate`] decides batch fates from
//! the wire alone, [`assemble`] fills the snapshot and lists what it could
//! not fill.

pub mod assemble;
pub mod batches;
pub mod bootstrap;
pub mod connection;
pub mod fate;
pub mod fetch;
pub mod groups;
pub mod live;
pub mod metadata;
pub mod offsets;
pub mod versions;

use std::collections::BTreeMap;

use kafka_protocol::messages::ApiKey;

use crate::session::Snapshot;

use assemble::Observed;
use connection::Conn;
use offsets::Key;
use versions::{Versions, ours};

/// What to observe.
#[derive(Debug, Clone)]
pub struct Options {
    /// `HOST:PORT` of the brokers to ask first, tried in order.
    pub bootstrap: Vec<String>,
    /// The topics (every non-internal topic when empty).
    pub topics: Vec<String>,
    /// The consumer groups whose committed offsets to read (none when
    /// empty: groups are not discovered in this slice).
    pub groups: Vec<String>,
}

/// One snapshot of the cluster, or the one line saying what failed where.
pub fn observe(options: &Options) -> Result<Snapshot, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| format!("cannot start the observer's runtime: {e}"))?;
    runtime.block_on(observe_async(options))
}

/// A broker's connection and the versions it speaks.
struct Link {
    conn: Conn,
    versions: Versions,
}

impl Link {
    async fn open(address: &str) -> Result<Self, String> {
        let mut conn = Conn::connect(address).await?;
        let versions = Versions::ask(&mut conn).await?;
        Ok(Self { conn, versions })
    }
}

/// The address of the bootstrap broker that answered (the first link).
fn cluster_address(links: &BTreeMap<String, Link>, bootstrap: &[String]) -> String {
    bootstrap
        .iter()
        .find(|a| links.contains_key(*a))
        .cloned()
        .expect("a bootstrap broker answered")
}

async fn observe_async(options: &Options) -> Result<Snapshot, String> {
    let mut first = None;
    let mut failures = Vec::new();
    for address in &options.bootstrap {
        match Link::open(address).await {
            Ok(link) => {
                first = Some(link);
                break;
            }
            Err(e) => failures.push(e),
        }
    }
    let Some(mut first) = first else {
        return Err(match failures.len() {
            1 => failures.remove(0),
            _ => format!("no bootstrap broker answered: {}", failures.join("; ")),
        });
    };
    let version = first
        .versions
        .pick(ApiKey::Metadata, "Metadata", ours::METADATA)?;
    let cluster = metadata::ask(&mut first.conn, version, &options.topics).await?;
    let mut links: BTreeMap<String, Link> = BTreeMap::new();
    links.insert(first.conn.address.clone(), first);
    // Partitions by their leader's address.
    let mut led: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, p) in cluster.partitions.iter().enumerate() {
        let broker = cluster
            .brokers
            .iter()
            .find(|b| b.id == p.leader)
            .ok_or_else(|| {
                format!(
                    "{}-{}: leader {} is not among the brokers Metadata lists",
                    p.topic, p.partition, p.leader
                )
            })?;
        led.entry(broker.address.clone()).or_default().push(i);
    }
    let mut observed: Vec<Option<Observed>> = vec![None; cluster.partitions.len()];
    for (address, indexes) in &led {
        if !links.contains_key(address) {
            links.insert(address.clone(), Link::open(address).await?);
        }
        let link = links.get_mut(address).expect("inserted above");
        let list_version =
            link.versions
                .pick(ApiKey::ListOffsets, "ListOffsets", ours::LIST_OFFSETS)?;
        let fetch_version = link.versions.pick(ApiKey::Fetch, "Fetch", ours::FETCH)?;
        let keys: Vec<Key> = indexes
            .iter()
            .map(|&i| {
                let p = &cluster.partitions[i];
                (p.topic.clone(), p.partition)
            })
            .collect();
        let offsets = offsets::ask(&mut link.conn, list_version, &keys).await?;
        let tails: Vec<(Key, i64, i64)> = keys
            .iter()
            .map(|k| {
                let o = offsets[k];
                let start = fetch::tail_start(o.log_start, o.high_watermark);
                (k.clone(), start, o.high_watermark)
            })
            .collect();
        let mut uncommitted = fetch::fetch_tail(&mut link.conn, fetch_version, &tails, 0).await?;
        let mut committed = fetch::fetch_tail(&mut link.conn, fetch_version, &tails, 1).await?;
        for (&i, (key, start, _)) in indexes.iter().zip(&tails) {
            observed[i] = Some(Observed {
                meta: cluster.partitions[i].clone(),
                offsets: offsets[key],
                start: *start,
                read_uncommitted: uncommitted.remove(key).unwrap_or_default(),
                read_committed: committed.remove(key).unwrap_or_default(),
            });
        }
    }
    let mut committed = BTreeMap::new();
    let mut only_observed = Vec::new();
    let bootstrap = cluster_address(&links, &options.bootstrap);
    for group in &options.groups {
        let link = links.get_mut(&bootstrap).expect("the first link");
        let version = link.versions.pick(
            ApiKey::FindCoordinator,
            "FindCoordinator",
            ours::FIND_COORDINATOR,
        )?;
        let address = groups::coordinator(&mut link.conn, version, group).await?;
        if !links.contains_key(&address) {
            links.insert(address.clone(), Link::open(&address).await?);
        }
        let link = links.get_mut(&address).expect("inserted above");
        let version = link
            .versions
            .pick(ApiKey::OffsetFetch, "OffsetFetch", ours::OFFSET_FETCH)?;
        let keys: Vec<Key> = cluster
            .partitions
            .iter()
            .map(|p| (p.topic.clone(), p.partition))
            .collect();
        let (offsets, note) =
            groups::committed_or_observed(&mut link.conn, version, group, &keys).await?;
        only_observed.extend(note);
        if !offsets.is_empty() {
            committed.insert(group.clone(), offsets);
        }
    }
    let observed = observed.into_iter().flatten().collect();
    let mut snapshot = assemble::assemble(&options.bootstrap, &cluster, observed);
    snapshot.committed_offsets = committed;
    if !options.groups.is_empty() {
        snapshot
            .unavailable
            .retain(|f| f != crate::session::snapshot::field::COMMITTED_OFFSETS);
        snapshot
            .unavailable
            .push("committed_offsets of groups not named with --group".into());
    }
    snapshot.unavailable.extend(only_observed);
    Ok(snapshot)
}
