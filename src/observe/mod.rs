//! `mk-tui observe` (docs/observe.md): the same [`Snapshot`] the panes render,
//! built from a Kafka cluster over its wire protocol instead of from the
//! embedded engine. A plain consumer's requests — ApiVersions, Metadata,
//! ListOffsets, Fetch — and the admin client's reads (the transaction APIs,
//! OffsetFetch), so it never writes to the cluster: no CreateTopics, no
//! commits, no group joined. Plaintext only: authentication and TLS are out of
//! scope ([`bootstrap`]).
//!
//! One job per file: [`connection`] frames requests on a socket with
//! bounded reads, [`versions`] picks each API's version, [`metadata`],
//! [`offsets`] and [`fetch`] ask, [`batches`] decodes record batches,
//! [`coordinator`] finds a group's or a transactional id's coordinator,
//! [`groups`] reads committed offsets, [`transactions`] the open
//! transactions, [`log_dirs`] the replicas' offset lags, [`configs`] the
//! topics' settings, [`fate`] decides batch fates from the wire alone,
//! [`assemble`] fills the snapshot and lists what it could not fill (its
//! JSON writes them null), [`live`] refreshes it on a period.

pub mod assemble;
pub mod batches;
pub mod bootstrap;
pub mod configs;
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
use std::sync::Arc;
use std::time::Instant;

use kafka_protocol::messages::ApiKey;

use crate::session::SessionError;
use crate::session::Snapshot;
use crate::session::snapshot::field;

use assemble::Observed;
use connection::{Conn, Deadline};
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
    /// The one deadline of an observation (`--timeout`; issue 25).
    pub timeout: std::time::Duration,
}

/// `--timeout`'s default: 30 s for an observation, whatever its brokers do.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// One snapshot of the cluster, or the one line saying what failed where.
pub fn observe(options: &Options) -> Result<Snapshot, SessionError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| SessionError::os("cannot start the observer's runtime", e))?;
    runtime.block_on(observe_async(options))
}

/// A broker's connection and the versions it speaks.
struct Link {
    conn: Conn,
    versions: Versions,
}

impl Link {
    async fn open(address: &str, deadline: Deadline) -> Result<Self, SessionError> {
        let mut conn = Conn::connect(address, deadline).await?;
        let versions = Versions::ask(&mut conn).await?;
        Ok(Self { conn, versions })
    }
}

/// The observation's links to its brokers, by address, and the brokers
/// that failed: a broker that did not answer once is not asked again in
/// the same observation (issue 25: four silent brokers cost 10 s each at
/// every ask, 80 s in all).
pub(crate) struct Links {
    open: BTreeMap<String, Link>,
    /// Shared: each later ask of a failed broker meets the same error.
    failed: BTreeMap<String, Arc<SessionError>>,
    deadline: Deadline,
}

impl Links {
    fn new(deadline: Deadline) -> Self {
        Self {
            open: BTreeMap::new(),
            failed: BTreeMap::new(),
            deadline,
        }
    }

    /// The link to `address`, opened if there is none yet; the error it
    /// failed with, if it did.
    async fn get(&mut self, address: &str) -> Result<&mut Link, SessionError> {
        if let Some(e) = self.failed.get(address) {
            return Err(SessionError::Again(e.clone()));
        }
        if !self.open.contains_key(address) {
            match Link::open(address, self.deadline).await {
                Ok(link) => {
                    self.open.insert(address.to_string(), link);
                }
                Err(e) => {
                    let e = Arc::new(e);
                    self.failed.insert(address.to_string(), e.clone());
                    return Err(SessionError::Again(e));
                }
            }
        }
        Ok(self.open.get_mut(address).expect("inserted above"))
    }

    /// Opens every address not yet opened or failed, all at once: silent
    /// brokers cost one wait together, not one each.
    async fn open_all(&mut self, addresses: &[String]) {
        let mut opening = tokio::task::JoinSet::new();
        for address in addresses {
            if self.open.contains_key(address) || self.failed.contains_key(address) {
                continue;
            }
            let (address, deadline) = (address.clone(), self.deadline);
            opening.spawn(async move {
                let link = Link::open(&address, deadline).await;
                (address, link)
            });
        }
        while let Some(joined) = opening.join_next().await {
            match joined {
                Ok((address, Ok(link))) => {
                    self.open.insert(address, link);
                }
                Ok((address, Err(e))) => {
                    self.failed.insert(address, Arc::new(e));
                }
                Err(_) => {} // not opened: asked again on its own later
            }
        }
    }

    /// The link to `address` failed mid-observation (`why`): closed, and
    /// not asked again.
    fn failed(&mut self, address: &str, why: SessionError) {
        self.open.remove(address);
        self.failed
            .entry(address.to_string())
            .or_insert_with(|| Arc::new(why));
    }

    /// Why a broker gave nothing, in the words `unavailable` uses:
    /// `unreachable` when it could not be connected to, what the deadline
    /// cut, or the request a broker that was reached failed on and how
    /// (`DescribeConfigs v4: the broker closed the connection before
    /// answering`): a broker that answered other requests is not
    /// unreachable.
    fn reason(&self, address: &str) -> String {
        let ran_out = self.deadline.ran_out();
        let failed = self.failed.get(address).map(Arc::as_ref);
        match failed.map(|e| (e, e.to_string())) {
            Some((_, e)) if e.contains("not asked: ") && e.contains(&ran_out) => {
                format!("not asked: {ran_out}")
            }
            Some((_, e)) if e.contains(&ran_out) => format!("no answer before {ran_out}"),
            Some((SessionError::Protocol { what, problem }, _))
                if !problem.starts_with("cannot connect") =>
            {
                let request = what.strip_prefix(&format!("{address}: ")).unwrap_or(what);
                format!("{request}: {problem}")
            }
            None if self.deadline.passed() => format!("not asked: {ran_out}"),
            _ => "unreachable".to_string(),
        }
    }
}

/// The link to `address`, opened if there is none yet.
async fn link<'a>(links: &'a mut Links, address: &str) -> Result<&'a mut Link, SessionError> {
    links.get(address).await
}

/// The line for a leader that Metadata names but that does not answer:
/// which broker leads which partitions. A broker that died stays in
/// Kafka's Metadata until the controller fences it
/// (`broker.session.timeout.ms`, 9 s by default), so this is what a
/// refresh says for those seconds (docs/observe.md "Apache Kafka 4.4").
fn unreachable_leader(
    e: SessionError,
    cluster: &metadata::Cluster,
    indexes: &[usize],
) -> SessionError {
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
    SessionError::Leader {
        source: Box::new(e),
        broker: cluster.partitions[indexes[0]].leader,
        partitions: shown,
    }
}

async fn observe_async(options: &Options) -> Result<Snapshot, SessionError> {
    let deadline = Deadline::after(options.timeout);
    let mut first = None;
    let mut failures = Vec::new();
    for address in &options.bootstrap {
        match Link::open(address, deadline).await {
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
            _ => SessionError::NoBootstrap(failures),
        });
    };
    let version = first
        .versions
        .pick(ApiKey::Metadata, "Metadata", ours::METADATA)?;
    let cluster = metadata::ask(&mut first.conn, version, &options.topics).await?;
    // The bootstrap broker that answered.
    let bootstrap = first.conn.address.clone();
    let mut links = Links::new(deadline);
    links.open.insert(bootstrap.clone(), first);
    // Partitions by their leader's address.
    let mut led: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, p) in cluster.partitions.iter().enumerate() {
        let broker = cluster
            .brokers
            .iter()
            .find(|b| b.id == p.leader)
            .ok_or_else(|| {
                SessionError::protocol(
                    format!("{}-{}", p.topic, p.partition),
                    format!(
                        "leader {} is not among the brokers Metadata lists",
                        p.leader
                    ),
                )
            })?;
        led.entry(broker.address.clone()).or_default().push(i);
    }
    // The partitions themselves (their offsets) are the snapshot: a leader
    // that cannot say them ends the observation. Their tails are fetched
    // after, each of the 2 fetches per leader in its share of the time
    // left, so one slow leader cannot starve the others.
    let mut offsets_by_leader = Vec::new();
    for (address, indexes) in &led {
        let link = links
            .get(address)
            .await
            .map_err(|e| unreachable_leader(e, &cluster, indexes))?;
        let list_version =
            link.versions
                .pick(ApiKey::ListOffsets, "ListOffsets", ours::LIST_OFFSETS)?;
        let keys: Vec<Key> = indexes
            .iter()
            .map(|&i| {
                let p = &cluster.partitions[i];
                (p.topic.clone(), p.partition)
            })
            .collect();
        let offsets = offsets::ask(&mut link.conn, list_version, &keys).await?;
        offsets_by_leader.push((address, indexes, keys, offsets));
    }
    let mut observed: Vec<Option<Observed>> = vec![None; cluster.partitions.len()];
    let mut cut: Vec<String> = Vec::new();
    let mut fetches_left = 2 * offsets_by_leader.len() as u32;
    let share = |left: u32| Instant::now() + deadline.left() / left.max(1);
    for (address, indexes, keys, offsets) in offsets_by_leader {
        let link = links.get(address).await?;
        let fetch_version = link.versions.pick(ApiKey::Fetch, "Fetch", ours::FETCH)?;
        let tails: Vec<(Key, i64, i64)> = keys
            .iter()
            .map(|k| {
                let o = offsets[k];
                let start = fetch::tail_start(o.log_start, o.high_watermark);
                (k.clone(), start, o.high_watermark)
            })
            .collect();
        let until = share(fetches_left);
        fetches_left -= 1;
        let mut uncommitted =
            fetch::fetch_tail(&mut link.conn, fetch_version, &tails, 0, until).await?;
        // read_committed reads no further than read_uncommitted reached.
        let committed_tails: Vec<(Key, i64, i64)> = tails
            .iter()
            .map(|(k, start, end)| {
                let reached = uncommitted.get(k).and_then(|f| f.cut_at).unwrap_or(*end);
                (k.clone(), *start, reached)
            })
            .collect();
        let until = share(fetches_left);
        fetches_left -= 1;
        let mut committed =
            fetch::fetch_tail(&mut link.conn, fetch_version, &committed_tails, 1, until).await?;
        for (&i, (key, start, _)) in indexes.iter().zip(&tails) {
            let mut read_uncommitted = uncommitted.remove(key).unwrap_or_default();
            let read_committed = committed.remove(key).unwrap_or_default();
            // Both isolation levels cover the same offsets, so the fates
            // (committed below the LSO when read_committed returned it) hold.
            let stop = [read_uncommitted.cut_at, read_committed.cut_at]
                .into_iter()
                .flatten()
                .min();
            if let Some(stop) = stop {
                read_uncommitted.batches.retain(|b| b.last_offset < stop);
                cut.push(format!(
                    "partitions[{}-{}].batches from offset {stop} (not fetched: {})",
                    key.0,
                    key.1,
                    deadline.ran_out()
                ));
            }
            observed[i] = Some(Observed {
                meta: cluster.partitions[i].clone(),
                offsets: offsets[key],
                start: *start,
                read_uncommitted,
                read_committed,
            });
        }
    }
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
    // Every broker Metadata lists is asked something (DescribeLogDirs at
    // least): connect to the rest all at once, so silent ones cost one
    // wait together. What the admin APIs add is not worth the
    // observation: once the deadline has passed, what they could not ask
    // is listed unavailable.
    let addresses: Vec<String> = cluster.brokers.iter().map(|b| b.address.clone()).collect();
    links.open_all(&addresses).await;
    let mut late: Vec<String> = Vec::new();
    let answers = match transactions::ask(&mut links, &cluster, &bootstrap, &keys).await {
        Ok(a) => a,
        Err(e) if deadline.passed() => {
            late.push(format!("{} ({e})", field::TRANSACTIONS));
            transactions::Answers::default()
        }
        Err(e) => return Err(e),
    };
    let all: Vec<Key> = keys.values().flatten().cloned().collect();
    let groups = match groups::ask(&mut links, &cluster, &bootstrap, &options.groups, &all).await {
        Ok(g) => g,
        Err(e) if deadline.passed() => {
            late.push(format!("{} ({e})", field::COMMITTED_OFFSETS));
            groups::Observed::default()
        }
        Err(e) => return Err(e),
    };
    let dirs = log_dirs::ask(&mut links, &cluster, &all).await?;
    let topics: Vec<String> = cluster
        .partitions
        .iter()
        .map(|p| p.topic.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let settings = configs::ask(&mut links, &bootstrap, &topics).await;
    let observed = observed.into_iter().flatten().collect();
    let mut snapshot = assemble::assemble(&options.bootstrap, &cluster, observed);
    snapshot.unavailable.extend(cut);
    snapshot.committed_offsets = groups.committed;
    snapshot.unavailable.extend(groups.unavailable);
    let (txns, lacking) = transactions::fill(&answers);
    snapshot.transactions = txns;
    snapshot.unavailable.extend(lacking);
    snapshot.unavailable.extend(late);
    // Each broker that did not answer, named once with why (issue 25):
    // whatever it alone could say is missing.
    for b in &cluster.brokers {
        if links.failed.contains_key(&b.address) {
            snapshot.unavailable.push(format!(
                "broker {} at {} ({})",
                b.id,
                b.address,
                links.reason(&b.address)
            ));
        }
    }
    transactions::decide(&mut snapshot, &transactions::deciding(&answers));
    transactions::explain_lso(&mut snapshot);
    log_dirs::fill(&mut snapshot, &dirs);
    configs::fill(&mut snapshot, &settings);
    Ok(snapshot)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links_failed_with(address: &str, why: SessionError) -> Links {
        let mut links = Links::new(Deadline::after(std::time::Duration::from_secs(60)));
        links.failed(address, why);
        links
    }

    #[test]
    fn a_broker_that_failed_a_request_is_named_with_it_not_unreachable() {
        let address = "127.0.0.1:9092";
        let closed = SessionError::protocol(
            format!("{address}: DescribeConfigs v4"),
            "the broker closed the connection before answering",
        );
        assert_eq!(
            links_failed_with(address, closed).reason(address),
            "DescribeConfigs v4: the broker closed the connection before answering"
        );
        let refused = SessionError::protocol(address, "cannot connect: Connection refused");
        assert_eq!(
            links_failed_with(address, refused).reason(address),
            "unreachable"
        );
    }
}
