//! ListGroups (versions 0-5): the consumer groups the coordinator knows,
//! as Kafka's group coordinator lists them (docs/kafka-protocol.md
//! *Consumer groups*). Reads only.
//!
//! A group is known when the engine's offset store holds offsets of it
//! (E8), when an open or finished transaction staged offsets for it
//! (Kafka's TxnOffsetCommit creates the group), or when the server has
//! seen a member join it ([`crate::kafka::groups`]). Its state (v4+) is
//! the group's (Kafka's classic states: `Empty`, `PreparingRebalance`,
//! `CompletingRebalance`, `Stable`); its protocol type is its members'
//! (`consumer`, kept once empty), or empty for a group that only has offsets
//! (one that `assign()` consumers commit for, as in Kafka); its type (v5)
//! is `classic`, the only group protocol served.
//!
//! As for transactions, the engine has one offset store: the coordinator
//! FindCoordinator names (the first running broker) lists every group, the
//! other brokers none, as Kafka's brokers each list the groups of the
//! `__consumer_offsets` partitions they lead.

use std::collections::BTreeMap;

use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::{GroupId, ListGroupsRequest, ListGroupsResponse, ResponseKind};
use kafka_protocol::protocol::StrBytes;

use super::find_coordinator::coordinator;
use crate::kafka::broker::{Answer, Broker};

/// One listed group: (protocol type, state).
type Listing = BTreeMap<String, (String, &'static str)>;

/// Every group known, by id.
pub fn known(worker: &dyn Broker) -> Listing {
    let mut out: Listing = worker.read(|s| {
        let mut out = Listing::new();
        for g in s.offsets().groups().keys() {
            out.insert(g.clone(), (String::new(), "Empty"));
        }
        for d in s.transactions().current() {
            for g in d.staged_offsets.keys() {
                out.entry(g.clone())
                    .or_insert_with(|| (String::new(), "Empty"));
            }
        }
        out
    });
    for (id, g) in worker.groups().listed() {
        out.insert(
            id.clone(),
            (g.protocol_type.clone().unwrap_or_default(), g.state.name()),
        );
    }
    out
}

pub fn handle(
    worker: &mut dyn Broker,
    broker: u32,
    request: &ListGroupsRequest,
    version: i16,
) -> Answer {
    let here = coordinator(worker).is_some_and(|c| c.broker == broker);
    let states: Vec<String> = if version >= 4 {
        request
            .states_filter
            .iter()
            .map(|s| s.to_ascii_lowercase())
            .collect()
    } else {
        Vec::new()
    };
    let types: Vec<String> = if version >= 5 {
        request
            .types_filter
            .iter()
            .map(|s| s.to_ascii_lowercase())
            .collect()
    } else {
        Vec::new()
    };
    let listed: Vec<(String, (String, &'static str))> = if here {
        known(worker)
            .into_iter()
            .filter(|(_, (_, state))| {
                states.is_empty() || states.contains(&state.to_ascii_lowercase())
            })
            .filter(|_| types.is_empty() || types.iter().any(|t| t == "classic"))
            .collect()
    } else {
        Vec::new()
    };
    let outcome = if here {
        let names: Vec<String> = listed
            .iter()
            .map(|(g, (_, s))| format!("{g} {s}"))
            .collect();
        format!("{} groups: {}", listed.len(), names.join(", "))
    } else {
        "not the coordinator: none listed here".to_string()
    };
    let groups = listed
        .into_iter()
        .map(|(id, (protocol_type, state))| {
            let mut g = ListedGroup::default()
                .with_group_id(GroupId(StrBytes::from_string(id)))
                .with_protocol_type(StrBytes::from_string(protocol_type));
            if version >= 4 {
                g = g.with_group_state(StrBytes::from_static_str(state));
            }
            if version >= 5 {
                g = g.with_group_type(StrBytes::from_static_str("classic"));
            }
            g
        })
        .collect();
    let response = ListGroupsResponse::default().with_groups(groups);
    Answer::now(ResponseKind::ListGroups(response), outcome)
}
