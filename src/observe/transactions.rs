//! Open transactions over the admin APIs (docs/observe.md "Transactions";
//! KIP-664): ListTransactions on every broker (each lists the ids it
//! coordinates), FindCoordinator (key type 1) and DescribeTransactions for
//! each id, and DescribeProducers of each observed partition on its
//! leader. Reads only. Each API is asked only where the broker advertises
//! it; without ListTransactions on every broker `transactions` stays
//! unavailable. A broker that cannot be reached is named (the ids it
//! coordinates may be missing); a stopped broker of `mk-tui serve`, which
//! Metadata still lists, coordinates nothing.
//!
//! What fills a [`TransactionSnapshot`]:
//! - `id` and `state`: ListTransactions, DescribeTransactions' when asked
//!   (Kafka's `PrepareEpochFence`, an abort of a fenced producer's
//!   transaction, reads `prepare_abort`; an `Empty` or `Dead` id has no
//!   transaction and is left out, named in `unavailable`).
//! - `first_offsets`, the LSO's cause: each partition's DescribeProducers
//!   entry of the transaction's producer id with a
//!   `current_txn_start_offset`; `partitions` are those, with the ones
//!   DescribeTransactions lists (Kafka lists an open transaction's
//!   partitions; a deciding one's without a replicated marker).
//! - The book's rules give transactions producer id -1, so an entry of id
//!   -1 is given to the one open transaction of id -1 that lists the
//!   partition, or to the only open transaction of id -1; when that is
//!   ambiguous those transactions' partitions and first offsets are
//!   listed unavailable.
//! - A complete transaction's partitions and first offsets are not on the
//!   wire (Kafka keeps none once it completes): listed unavailable.
//! - `staged_offsets`: no API shows a transaction's offsets (OffsetFetch
//!   with `require_stable` says a partition has some pending, not whose):
//!   always unavailable.

use std::collections::{BTreeMap, BTreeSet};

use kafka_protocol::messages::describe_producers_request::TopicRequest;
use kafka_protocol::messages::{
    ApiKey, DescribeProducersRequest, DescribeTransactionsRequest, ListTransactionsRequest,
    TopicName, TransactionalId,
};
use kafka_protocol::protocol::StrBytes;

use crate::session::SessionError;
use crate::session::snapshot::{Fate, Snapshot, TransactionSnapshot, TxnState, field};

use super::Links;
use super::connection::Conn;
use super::coordinator;
use super::metadata::Cluster;
use super::offsets::Key;
use super::versions::ours;

/// The most open transactions described per observation, in id order:
/// each costs a FindCoordinator round trip, and the panes show fewer.
pub const MAX_DESCRIBED: usize = 256;

/// One id as ListTransactions lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub id: String,
    pub producer_id: i64,
    pub state: String,
}

/// One id as DescribeTransactions describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Described {
    pub state: String,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub partitions: Vec<Key>,
}

/// One active producer of a partition, as DescribeProducers lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Producer {
    pub producer_id: i64,
    /// `current_txn_start_offset`; -1 for none.
    pub start: i64,
}

/// What the admin APIs said: None for an API not asked (not advertised).
#[derive(Debug, Clone, Default)]
pub struct Answers {
    pub listed: Option<Vec<Listed>>,
    pub described: Option<BTreeMap<String, Described>>,
    pub producers: Option<BTreeMap<Key, Vec<Producer>>>,
    /// Brokers Metadata lists whose ListTransactions did not answer (why,
    /// in words: unreachable, an error code): the ids they coordinate may
    /// be missing.
    pub silent: Vec<(u32, String)>,
    /// Partitions whose DescribeProducers answered an error code (a leader
    /// that moved): their first offsets are missing.
    pub producer_errors: Vec<(Key, i16)>,
    /// Open transactions past [`MAX_DESCRIBED`], not described.
    pub undescribed: usize,
}

/// The snapshot's state for Kafka's name, if it has one.
pub fn state_of(kafka: &str) -> Option<TxnState> {
    Some(match kafka {
        "Ongoing" => TxnState::Ongoing,
        "PrepareCommit" => TxnState::PrepareCommit,
        "PrepareAbort" | "PrepareEpochFence" => TxnState::PrepareAbort,
        "CompleteCommit" => TxnState::CompleteCommit,
        "CompleteAbort" => TxnState::CompleteAbort,
        _ => return None,
    })
}

fn name(key: &Key) -> String {
    format!("{}-{}", key.0, key.1)
}

/// The transactions, in id order, and the fields they could not fill.
pub fn fill(answers: &Answers) -> (Vec<TransactionSnapshot>, Vec<String>) {
    let Some(listed) = &answers.listed else {
        return (Vec::new(), vec![field::TRANSACTIONS.to_string()]);
    };
    let mut unavailable = vec![field::TXN_STAGED_OFFSETS.to_string()];
    for (b, why) in &answers.silent {
        unavailable.push(format!(
            "{} coordinated by broker {b} ({why})",
            field::TRANSACTIONS
        ));
    }
    if answers.undescribed > 0 {
        unavailable.push(format!(
            "{} of {} open transactions past the first {MAX_DESCRIBED} (not described)",
            field::TXN_PARTITIONS,
            answers.undescribed
        ));
    }
    for ((topic, p), e) in &answers.producer_errors {
        unavailable.push(format!(
            "{} on {topic}-{p} (DescribeProducers error code {e})",
            field::TXN_FIRST_OFFSETS
        ));
    }
    if answers.producers.is_none() {
        unavailable.push(field::TXN_FIRST_OFFSETS.to_string());
    }
    // id -> (state, producer id, partitions DescribeTransactions lists).
    let mut known: BTreeMap<String, (TxnState, i64, Vec<Key>)> = BTreeMap::new();
    for l in listed {
        let d = answers.described.as_ref().and_then(|d| d.get(&l.id));
        let kafka = d.map_or(l.state.as_str(), |d| d.state.as_str());
        let Some(state) = state_of(kafka) else {
            unavailable.push(format!(
                "{}[{}] (Kafka state {kafka}: no transaction)",
                field::TRANSACTIONS,
                l.id
            ));
            continue;
        };
        let producer = d.map_or(l.producer_id, |d| d.producer_id);
        let parts = d.map(|d| d.partitions.clone()).unwrap_or_default();
        known.insert(l.id.clone(), (state, producer, parts));
    }
    let open = |state: &TxnState| state.is_unstable();
    let anonymous: Vec<&String> = known
        .iter()
        .filter(|(_, (s, p, _))| open(s) && *p < 0)
        .map(|(id, _)| id)
        .collect();
    let mut firsts: BTreeMap<&String, BTreeMap<Key, i64>> = BTreeMap::new();
    // The partitions where a producer -1 entry could not be given to one
    // transaction: the anonymous transactions there have a first offset
    // nobody can tell.
    let mut ambiguous: BTreeSet<Key> = BTreeSet::new();
    for (key, producers) in answers.producers.iter().flatten() {
        for p in producers.iter().filter(|p| p.start >= 0) {
            let owner = if p.producer_id >= 0 {
                known
                    .iter()
                    .find(|(_, (s, id, _))| open(s) && *id == p.producer_id)
                    .map(|(id, _)| id)
            } else {
                let listing: Vec<&String> = anonymous
                    .iter()
                    .copied()
                    .filter(|id| known[*id].2.contains(key))
                    .collect();
                let several = producers.iter().filter(|q| q.producer_id < 0).count() > 1;
                match (listing.as_slice(), anonymous.as_slice()) {
                    ([one], _) if !several => Some(*one),
                    (_, [one]) => Some(*one),
                    _ => None,
                }
            };
            match owner {
                Some(id) => {
                    firsts.entry(id).or_default().insert(key.clone(), p.start);
                }
                None if p.producer_id < 0 => {
                    ambiguous.insert(key.clone());
                }
                None => {}
            }
        }
    }
    let mut out = Vec::new();
    for (id, (state, producer, parts)) in &known {
        let mut first = firsts.remove(id).unwrap_or_default();
        let mut partitions: BTreeSet<Key> = first.keys().cloned().collect();
        partitions.extend(parts.iter().cloned());
        // What is listed unavailable is left empty, never shown half
        // (a new user's review: partitions listed unavailable were drawn).
        if !state.is_unstable() {
            // A complete transaction's partitions are not on the wire.
            unavailable.push(field::at(field::TXN_PARTITIONS, id));
            unavailable.push(field::at(field::TXN_FIRST_OFFSETS, id));
            partitions.clear();
            first.clear();
        } else if *producer < 0
            && !ambiguous.is_empty()
            && (parts.is_empty() || parts.iter().any(|k| ambiguous.contains(k)))
        {
            // Its partitions are DescribeTransactions' (known, when it
            // answered); its first offsets on them cannot be told apart
            // from another producer -1's.
            if parts.is_empty() {
                unavailable.push(field::at(field::TXN_PARTITIONS, id));
                partitions.clear();
            }
            unavailable.push(field::at(field::TXN_FIRST_OFFSETS, id));
            first.clear();
        }
        out.push(TransactionSnapshot {
            id: id.clone(),
            state: *state,
            partitions: partitions.iter().map(name).collect(),
            first_offsets: first.iter().map(|(k, o)| (name(k), *o)).collect(),
            staged_offsets: BTreeMap::new(),
            producer_id: None,
            producer_epoch: None,
            next_producer_epoch: None,
        });
    }
    (out, unavailable)
}

/// The deciding transactions (`Prepare*`) that DescribeTransactions
/// described with a producer id, by (producer id, epoch): the instance a
/// batch of that id and epoch belongs to (`--rules kafka` gives each
/// `begin` its own epoch). The book's transactions have id -1: none.
pub fn deciding(answers: &Answers) -> BTreeMap<(i64, i32), (String, TxnState)> {
    answers
        .described
        .iter()
        .flatten()
        .filter(|(_, d)| d.producer_id >= 0)
        .filter_map(|(id, d)| {
            let state = state_of(&d.state)?;
            matches!(state, TxnState::PrepareCommit | TxnState::PrepareAbort).then(|| {
                (
                    (d.producer_id, i32::from(d.producer_epoch)),
                    (id.clone(), state),
                )
            })
        })
        .collect()
}

/// Gives each batch the wire rule calls `ongoing` (transactional data at
/// or above the LSO with no marker of its producer after it) the fate
/// `decided` when its producer id is that of a deciding transaction at
/// its epoch or the next: the outcome is decided, its marker is not below
/// the HW yet (docs/observe.md "Fates").
pub fn decide(snapshot: &mut Snapshot, deciding: &BTreeMap<(i64, i32), (String, TxnState)>) {
    for p in &mut snapshot.partitions {
        let (key, lso) = (p.name(), p.last_stable_offset);
        for b in &mut p.batches {
            if b.fate != Fate::Ongoing || b.producer_id < 0 {
                continue;
            }
            // At the batch's epoch, or the next: the coordinator bumps it
            // as it decides under transaction version 2 (KIP-890) and when
            // it aborts a timed-out transaction (src/observe/fate.rs).
            let described = [b.producer_epoch, b.producer_epoch + 1]
                .iter()
                .find_map(|&e| deciding.get(&(b.producer_id, e)));
            if let Some((id, state)) = described {
                b.fate = Fate::Decided;
                b.explanation = format!(
                    "{id} is {} (DescribeTransactions, producer {} epoch {}): decided, but its marker on {key} is not below the HW, so read_committed waits at LSO {lso}",
                    state.name().to_uppercase(),
                    b.producer_id,
                    b.producer_epoch
                );
            }
        }
    }
}

/// Says in each held-back or ongoing batch's explanation which open
/// transaction's first offset the LSO is (the LSO's cause, E11).
pub fn explain_lso(snapshot: &mut Snapshot) {
    for p in &mut snapshot.partitions {
        let key = p.name();
        let lso = p.last_stable_offset;
        if lso >= p.high_watermark {
            continue;
        }
        let causes: Vec<&str> = snapshot
            .transactions
            .iter()
            .filter(|t| t.state.is_unstable() && t.first_offsets.get(&key) == Some(&lso))
            .map(|t| t.id.as_str())
            .collect();
        if causes.is_empty() {
            continue;
        }
        let why = format!(
            "; the LSO {lso} is the first offset of open transaction {} (DescribeProducers)",
            causes.join(", ")
        );
        for b in &mut p.batches {
            if b.base_offset >= lso
                && matches!(b.fate, Fate::HeldBack | Fate::Ongoing | Fate::Decided)
            {
                b.explanation.push_str(&why);
            }
        }
    }
}

/// Asks the cluster: ListTransactions of every broker in `cluster`,
/// DescribeTransactions of each id at its coordinator (found through the
/// `bootstrap` broker), DescribeProducers of `led` (partitions by their
/// leader's address).
pub(super) async fn ask(
    links: &mut Links,
    cluster: &Cluster,
    bootstrap: &str,
    led: &BTreeMap<String, Vec<Key>>,
) -> Result<Answers, SessionError> {
    let mut answers = Answers::default();
    let mut listed: Vec<Listed> = Vec::new();
    let mut everywhere = true;
    for b in &cluster.brokers {
        let Ok(link) = super::link(links, &b.address).await else {
            answers.silent.push((b.id, links.reason(&b.address)));
            continue;
        };
        let Some(v) = link
            .versions
            .optional(ApiKey::ListTransactions, ours::LIST_TRANSACTIONS)
        else {
            everywhere = false;
            break;
        };
        match list(&mut link.conn, v).await {
            Ok(Ok(l)) => listed.extend(l),
            Ok(Err(e)) => answers
                .silent
                .push((b.id, format!("ListTransactions error code {e}"))),
            // A broker going away mid-observation (a stopped broker of
            // `mk-tui serve` closing its listener) says nothing; the others
            // still do.
            Err(e) => {
                answers.silent.push((b.id, e.to_string()));
                links.failed(&b.address, e);
            }
        }
    }
    if everywhere {
        listed.sort_by(|a, b| a.id.cmp(&b.id));
        listed.dedup_by(|a, b| a.id == b.id);
        // Only open transactions are described (a complete one's
        // partitions are not on the wire anyway), at most MAX_DESCRIBED:
        // each costs a FindCoordinator.
        let open: Vec<&Listed> = listed
            .iter()
            .filter(|l| state_of(&l.state).is_some_and(|s| s.is_unstable()))
            .collect();
        answers.undescribed = open.len().saturating_sub(MAX_DESCRIBED);
        let described: Vec<Listed> = open.into_iter().take(MAX_DESCRIBED).cloned().collect();
        answers.described = describe_all(links, bootstrap, &described).await?;
        answers.listed = Some(listed);
    }
    let mut producers = BTreeMap::new();
    for (address, keys) in led {
        let link = super::link(links, address).await?;
        let Some(v) = link
            .versions
            .optional(ApiKey::DescribeProducers, ours::DESCRIBE_PRODUCERS)
        else {
            return Ok(answers);
        };
        let (found, errors) = describe_producers(&mut link.conn, v, keys).await?;
        producers.extend(found);
        answers.producer_errors.extend(errors);
    }
    answers.producers = Some(producers);
    Ok(answers)
}

/// ListTransactions, all states, all producers; the error code the
/// broker answered instead (a coordinator still loading), if any.
async fn list(conn: &mut Conn, version: i16) -> Result<Result<Vec<Listed>, i16>, SessionError> {
    let request = ListTransactionsRequest::default().with_duration_filter(-1);
    let response = conn.call("ListTransactions", &request, version).await?;
    if response.error_code != 0 {
        return Ok(Err(response.error_code));
    }
    Ok(Ok(response
        .transaction_states
        .iter()
        .map(|t| Listed {
            id: t.transactional_id.0.to_string(),
            producer_id: t.producer_id.0,
            state: t.transaction_state.to_string(),
        })
        .collect()))
}

/// DescribeTransactions of every id at its coordinator; None when a
/// coordinator does not serve it.
async fn describe_all(
    links: &mut Links,
    bootstrap: &str,
    listed: &[Listed],
) -> Result<Option<BTreeMap<String, Described>>, SessionError> {
    let mut by_coordinator: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for l in listed {
        let link = super::link(links, bootstrap).await?;
        let version = link.versions.pick(
            ApiKey::FindCoordinator,
            "FindCoordinator",
            ours::FIND_COORDINATOR,
        )?;
        let address = coordinator::find(
            &mut link.conn,
            version,
            coordinator::Of::TransactionalId,
            &l.id,
        )
        .await?;
        by_coordinator
            .entry(address)
            .or_default()
            .push(l.id.clone());
    }
    let mut out = BTreeMap::new();
    for (address, ids) in by_coordinator {
        let link = super::link(links, &address).await?;
        let Some(version) = link
            .versions
            .optional(ApiKey::DescribeTransactions, ours::DESCRIBE_TRANSACTIONS)
        else {
            return Ok(None);
        };
        let request = DescribeTransactionsRequest::default().with_transactional_ids(
            ids.iter()
                .map(|id| TransactionalId(StrBytes::from_string(id.clone())))
                .collect(),
        );
        let response = link
            .conn
            .call("DescribeTransactions", &request, version)
            .await?;
        for t in &response.transaction_states {
            let id = t.transactional_id.0.to_string();
            if t.error_code != 0 {
                // Gone between the list and the describe (expired), or
                // moved: the list's state stands.
                continue;
            }
            let mut partitions: Vec<Key> =
                t.topics
                    .iter()
                    .flat_map(|topic| {
                        topic.partitions.iter().filter_map(|&p| {
                            Some((topic.topic.0.to_string(), u32::try_from(p).ok()?))
                        })
                    })
                    .collect();
            partitions.sort();
            out.insert(
                id,
                Described {
                    state: t.transaction_state.to_string(),
                    producer_id: t.producer_id.0,
                    producer_epoch: t.producer_epoch,
                    partitions,
                },
            );
        }
    }
    Ok(Some(out))
}

/// A partition's error code in DescribeProducers.
type ProducerError = (Key, i16);

/// DescribeProducers of `keys`, all led by the broker on `conn`, and the
/// partitions it answered with an error code instead.
async fn describe_producers(
    conn: &mut Conn,
    version: i16,
    keys: &[Key],
) -> Result<(BTreeMap<Key, Vec<Producer>>, Vec<ProducerError>), SessionError> {
    let mut topics: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for (topic, partition) in keys {
        topics
            .entry(topic)
            .or_default()
            .push(i32::try_from(*partition).unwrap_or(i32::MAX));
    }
    let request = DescribeProducersRequest::default().with_topics(
        topics
            .into_iter()
            .map(|(t, ps)| {
                TopicRequest::default()
                    .with_name(TopicName(StrBytes::from_string(t.to_string())))
                    .with_partition_indexes(ps)
            })
            .collect(),
    );
    let response = conn.call("DescribeProducers", &request, version).await?;
    let mut out = BTreeMap::new();
    let mut errors = Vec::new();
    for t in &response.topics {
        for p in &t.partitions {
            let key = (t.name.0.to_string(), p.partition_index.max(0) as u32);
            if p.error_code != 0 {
                errors.push((key, p.error_code));
                continue;
            }
            out.insert(
                key,
                p.active_producers
                    .iter()
                    .map(|a| Producer {
                        producer_id: a.producer_id.0,
                        start: a.current_txn_start_offset,
                    })
                    .collect(),
            );
        }
    }
    Ok((out, errors))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(p: u32) -> Key {
        ("out".into(), p)
    }

    fn listed(id: &str, producer_id: i64, state: &str) -> Listed {
        Listed {
            id: id.into(),
            producer_id,
            state: state.into(),
        }
    }

    fn producer(producer_id: i64, start: i64) -> Producer {
        Producer { producer_id, start }
    }

    #[test]
    fn first_offsets_come_from_the_producer_of_each_transaction() {
        let answers = Answers {
            listed: Some(vec![
                listed("a", 7, "Ongoing"),
                listed("b", 8, "CompleteCommit"),
                listed("c", 9, "Empty"),
            ]),
            described: None,
            producers: Some(BTreeMap::from([
                (
                    key(0),
                    vec![producer(7, 3), producer(8, -1), producer(5, -1)],
                ),
                (key(1), vec![producer(7, 0)]),
            ])),
            silent: vec![(3, "unreachable".into())],
            producer_errors: vec![(key(2), 6)],
            undescribed: 2,
        };
        let (txns, unavailable) = fill(&answers);
        assert_eq!(txns.len(), 2, "an Empty id has no transaction");
        assert_eq!(txns[0].partitions, ["out-0", "out-1"]);
        assert_eq!(
            txns[0].first_offsets,
            BTreeMap::from([("out-0".into(), 3), ("out-1".into(), 0)])
        );
        assert!(txns[1].first_offsets.is_empty());
        for f in [
            "transactions[b].partitions",
            "transactions[b].first_offsets",
            "transactions[].staged_offsets",
        ] {
            assert!(unavailable.iter().any(|u| u == f), "{f}: {unavailable:?}");
        }
        assert!(unavailable.iter().any(|u| u.starts_with("transactions[c]")));
        assert!(
            unavailable.contains(&"transactions coordinated by broker 3 (unreachable)".to_string())
        );
        assert!(unavailable.contains(
            &"transactions[].first_offsets on out-2 (DescribeProducers error code 6)".to_string()
        ));
        assert!(!unavailable.iter().any(|u| u.starts_with("transactions[a]")));
    }

    #[test]
    fn producer_minus_one_is_given_only_where_it_is_unambiguous() {
        let described = |parts: &[u32]| Described {
            state: "Ongoing".into(),
            producer_id: -1,
            producer_epoch: -1,
            partitions: parts.iter().map(|&p| key(p)).collect(),
        };
        let answers = Answers {
            listed: Some(vec![listed("a", -1, "Ongoing"), listed("b", -1, "Ongoing")]),
            described: Some(BTreeMap::from([
                ("a".into(), described(&[0])),
                ("b".into(), described(&[0, 1])),
            ])),
            producers: Some(BTreeMap::from([
                (key(0), vec![producer(-1, 2), producer(-1, 4)]),
                (key(1), vec![producer(-1, 5)]),
            ])),
            ..Answers::default()
        };
        let (txns, unavailable) = fill(&answers);
        // out-0 has two of id -1: neither a's nor b's first offset there
        // can be told, so both are listed unavailable and shown empty,
        // never half (b's out-1 alone would read as all of b).
        assert!(txns[0].first_offsets.is_empty(), "out-0 has two of id -1");
        assert!(txns[1].first_offsets.is_empty(), "b lists out-0 too");
        for f in [
            "transactions[a].first_offsets",
            "transactions[b].first_offsets",
        ] {
            assert!(unavailable.iter().any(|u| u == f), "{f}: {unavailable:?}");
        }
        // Their partitions are DescribeTransactions': known.
        assert_eq!(txns[1].partitions, ["out-0", "out-1"]);
        assert!(!unavailable.iter().any(|u| u.ends_with("].partitions")));
        // A transaction alone on its partitions keeps its first offsets
        // (a new user's review: the demo's tx-open on orders-1, with two
        // clients' transactions open on out-0).
        let answers = Answers {
            listed: Some(vec![
                listed("a", -1, "Ongoing"),
                listed("b", -1, "Ongoing"),
                listed("c", -1, "Ongoing"),
            ]),
            described: Some(BTreeMap::from([
                ("a".into(), described(&[1])),
                ("b".into(), described(&[0])),
                ("c".into(), described(&[0])),
            ])),
            producers: Some(BTreeMap::from([
                (key(0), vec![producer(-1, 2), producer(-1, 4)]),
                (key(1), vec![producer(-1, 5)]),
            ])),
            ..Answers::default()
        };
        let (txns, unavailable) = fill(&answers);
        assert_eq!(txns[0].first_offsets, BTreeMap::from([("out-1".into(), 5)]));
        assert!(!unavailable.contains(&"transactions[a].first_offsets".to_string()));
        for (t, id) in txns[1..].iter().zip(["b", "c"]) {
            assert!(t.first_offsets.is_empty());
            assert!(unavailable.contains(&format!("transactions[{id}].first_offsets")));
        }
        // Every field listed unavailable is empty.
        for t in &txns {
            for (f, empty) in [
                ("first_offsets", t.first_offsets.is_empty()),
                ("partitions", t.partitions.is_empty()),
            ] {
                let listed = unavailable.contains(&format!("transactions[{}].{f}", t.id));
                assert!(!listed || empty, "{} {f}", t.id);
            }
        }
        // Without ListTransactions, nothing.
        let (none, unavailable) = fill(&Answers::default());
        assert!(none.is_empty());
        assert_eq!(unavailable, ["transactions"]);
    }

    #[test]
    fn a_held_back_batch_names_the_transaction_whose_first_offset_is_the_lso() {
        let batch = |at: i64, fate: &str| {
            serde_json::json!({"base_offset": at, "last_offset": at, "kind": "data",
                "control": null, "transactional_id": null, "producer_id": -1,
                "leader_epoch": 0, "fate": fate, "explanation": "why", "records": []})
        };
        let mut snapshot: Snapshot = serde_json::from_value(serde_json::json!({
            "step": 0, "clock_ms": 0, "rules": "observed",
            "partitions": [{"topic": "out", "partition": 0, "leader": 1, "leader_epoch": 0,
                "isr": [1], "log_start_offset": 0, "high_watermark": 3, "last_stable_offset": 1,
                "replicas": [], "batches": [batch(0, "committed"), batch(1, "ongoing"), batch(2, "held_back")]}],
            "transactions": [
                {"id": "a", "state": "ongoing", "partitions": ["out-0"], "first_offsets": {"out-0": 1}, "staged_offsets": {}},
                {"id": "b", "state": "ongoing", "partitions": ["out-0"], "first_offsets": {"out-0": 2}, "staged_offsets": {}}],
            "committed_offsets": {}, "journal": {"frames": 0, "bytes": 0},
            "last_recovery": null,
            "consumers": {"read_uncommitted": {}, "read_committed": {}},
            "pending": [], "errors": []
        }))
        .unwrap();
        explain_lso(&mut snapshot);
        let why: Vec<&str> = snapshot.partitions[0]
            .batches
            .iter()
            .map(|b| b.explanation.as_str())
            .collect();
        assert_eq!(why[0], "why", "below the LSO: not held back");
        for w in &why[1..] {
            assert!(
                w.ends_with(
                    "the LSO 1 is the first offset of open transaction a (DescribeProducers)"
                ),
                "{w}"
            );
        }
    }

    #[test]
    fn a_batch_of_a_deciding_producer_epoch_is_decided_and_others_stay_ongoing() {
        let batch = |at: i64, pid: i64, epoch: i32| {
            serde_json::json!({"base_offset": at, "last_offset": at, "kind": "data",
                "control": null, "transactional_id": null, "producer_id": pid,
                "producer_epoch": epoch, "leader_epoch": 0, "fate": "ongoing",
                "explanation": "why", "records": []})
        };
        let mut snapshot: Snapshot = serde_json::from_value(serde_json::json!({
            "step": 0, "clock_ms": 0, "rules": "observed",
            "partitions": [{"topic": "out", "partition": 0, "leader": 1, "leader_epoch": 0,
                "isr": [1], "log_start_offset": 0, "high_watermark": 5, "last_stable_offset": 0,
                "replicas": [], "batches": [batch(0, 5, 2), batch(1, 5, 1), batch(2, 5, 0), batch(3, 6, 0), batch(4, -1, -1)]}],
            "transactions": [], "committed_offsets": {}, "journal": {"frames": 0, "bytes": 0},
            "last_recovery": null,
            "consumers": {"read_uncommitted": {}, "read_committed": {}},
            "pending": [], "errors": []
        }))
        .unwrap();
        let described = |state: &str, pid: i64, epoch: i16| Described {
            state: state.into(),
            producer_id: pid,
            producer_epoch: epoch,
            partitions: vec![key(0)],
        };
        let answers = Answers {
            described: Some(BTreeMap::from([
                ("a".into(), described("PrepareAbort", 5, 2)),
                ("b".into(), described("Ongoing", 6, 0)),
                ("c".into(), described("PrepareCommit", -1, -1)),
            ])),
            ..Answers::default()
        };
        decide(&mut snapshot, &deciding(&answers));
        let fates: Vec<&str> = snapshot.partitions[0]
            .batches
            .iter()
            .map(|b| b.fate.name())
            .collect();
        assert_eq!(
            fates,
            ["decided", "decided", "ongoing", "ongoing", "ongoing"],
            "producer 5 at epoch 2 and at 1 (bumped as it decides, KIP-890); an epoch two older, an ongoing one and id -1 are not matched"
        );
        assert!(
            snapshot.partitions[0].batches[0]
                .explanation
                .starts_with("a is PREPARE_ABORT"),
            "{}",
            snapshot.partitions[0].batches[0].explanation
        );
    }
}
