//! `mk-tui observe` (issue 15; docs/observe.md): the same
//! [`Snapshot`] the panes render, built from a Kafka cluster over its wire
//! protocol instead of from the embedded engine. A plain consumer's
//! requests — ApiVersions, Metadata, ListOffsets, Fetch — and the admin
//! client's reads (the transaction APIs, OffsetFetch), so it never writes
//! to the cluster: no CreateTopics, no commits, no group joined.
//! Plaintext only: authentication and TLS are out of scope
//! ([`bootstrap`]).
//!
//! One job per file: [`connection`] frames requests on a socket with
//! bounded reads, [`versions`] picks each API's version, [`metadata`],
//! [`offsets`] and [`fetch`] ask, [`batches`] decodes record batches,
//! [`coordinator`] finds a group's or a transactional id's coordinator,
//! [`groups`] reads committed offsets, [`transactions`] the open
//! transactions, [`log_dirs`] the replicas' offset lags, [`fate`] decides
//! batch fates from the wire alone, [`assemble`] fills the snapshot and
//! lists what it could not fill, [`live`] refreshes it on a period.

pub mod assemble;
pub mod batches;
pub mod bootstrap;
pub mod connection;
pub mod coordinator;
pub mod fate;
pub mod fetch;
pub mod groups;
pub mod live;
pub mod log_dirs;
pub mod metadata;
pub mod offsets;
pub mod transactions;
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
    /// The consumer groups whose committed offsets to read (every group
    /// ListGroups lists when empty).
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

/// The link to `address`, opened if there is none yet.
async fn link<'a>(
    links: &'a mut BTreeMap<String, Link>,
    address: &str,
) -> Result<&'a mut Link, String> {
    if !links.contains_key(address) {
        links.insert(address.to_string(), Link::open(address).await?);
    }
    Ok(links.get_mut(address).expect("inserted above"))
}

/// The address of the bootstrap broker that answered (the first link).
fn cluster_address(links: &BTreeMap<String, Link>, bootstrap: &[String]) -> String {
    bootstrap
        .iter()
        .find(|a| links.contains_key(*a))
        .cloned()
        .expect("a bootstrap broker answered")
}

/// The line for a leader that Metadata names but that does not answer:
/// which broker leads which partitions. A broker that died stays in
/// Kafka's Metadata until the controller fences it
/// (`broker.session.timeout.ms`, 9 s by default), so this is what a
/// refresh says for those seconds (docs/observe.md "Apache Kafka 4.4").
fn unreachable_leader(e: String, cluster: &metadata::Cluster, indexes: &[usize]) -> String {
    let names: Vec<String> = indexes
        .iter()
        .map(|&i| {
            let p = &cluster.partitions[i];
            format!("{}-{}", p.topic, p.partition)
        })
        .collect();
    let shown = match names.len() {
        0..=3 => names.join(", "),
        n => format!("{} and {} more", names[..3].join(", "), n - 3),
    };
    let leader = cluster.partitions[indexes[0]].leader;
    format!("{e} (broker {leader}, which Metadata names the leader of {shown})")
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
            let link = Link::open(address)
                .await
                .map_err(|e| unreachable_leader(e, &cluster, indexes))?;
            links.insert(address.clone(), link);
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
    let bootstrap = cluster_address(&links, &options.bootstrap);
    let keys: BTreeMap<String, Vec<Key>> = led
        .iter()
        .map(|(address, indexes)| {
            let keys = indexes.iter().map(|&i| {
                let p = &cluster.partitions[i];
                (p.topic.clone(), p.partition)
            });
            (address.clone(), keys.collect())
        })
        .collect();
    let answers = transactions::ask(&mut links, &cluster, &bootstrap, &keys).await?;
    let all: Vec<Key> = keys.values().flatten().cloned().collect();
    let groups = groups::ask(&mut links, &cluster, &bootstrap, &options.groups, &all).await?;
    let dirs = log_dirs::ask(&mut links, &cluster, &all).await?;
    let observed = observed.into_iter().flatten().collect();
    let mut snapshot = assemble::assemble(&options.bootstrap, &cluster, observed);
    snapshot.committed_offsets = groups.committed;
    snapshot.unavailable.extend(groups.unavailable);
    let (txns, lacking) = transactions::fill(&answers);
    snapshot.transactions = txns;
    snapshot.unavailable.extend(lacking);
    transactions::decide(&mut snapshot, &transactions::deciding(&answers));
    transactions::explain_lso(&mut snapshot);
    log_dirs::fill(&mut snapshot, &dirs);
    Ok(snapshot)
}
