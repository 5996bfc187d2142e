//! Consumer groups of one member ("enough of the group protocol for
//! `subscribe()` with a single consumer"): each group has at most one member,
//! which is its leader, assigns the partitions to itself (the client's own
//! assignor, in SyncGroup) and keeps them while it heartbeats. A second member
//! is refused with GROUP_MAX_SIZE_REACHED, Kafka's answer when
//! `group.max.size` is reached (here 1): such consumers use `assign()` or
//! groups of their own (docs/kafka-protocol.md).
//!
//! Membership is the server's, not the engine's: no action changes it and
//! a replay has none (the committed offsets, which are the engine's, come
//! from OffsetCommit and TxnOffsetCommit actions). A member that neither
//! heartbeats nor rejoins within its session timeout is dropped; the time
//! is the server's real time ([`RealTime`]), as for the other timeouts of
//! the network side.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::kafka::clock::RealTime;

/// The longest session a member may ask for (Kafka's
/// `group.max.session.timeout.ms` default is 30 minutes; a lesson needs
/// less).
pub const MAX_SESSION: Duration = Duration::from_secs(300);

/// A group's one member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub id: String,
    pub client_id: String,
    pub session: Duration,
    pub last_seen: Instant,
    /// The group protocol type JoinGroup named (`consumer`), which
    /// ListGroups reports.
    pub protocol_type: String,
    /// The protocol chosen (the member's first) and its metadata.
    pub protocol: String,
    pub metadata: Bytes,
    /// What SyncGroup assigned it.
    pub assignment: Option<Bytes>,
}

/// One group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Group {
    pub generation: i32,
    pub member: Option<Member>,
}

/// Why a group request is refused, as Kafka's codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    UnknownMember,
    IllegalGeneration,
}

/// Every group, by id.
#[derive(Debug, Clone, Default)]
pub struct Groups {
    groups: BTreeMap<String, Group>,
    next_member: u64,
}

impl Groups {
    /// The group, after dropping a member whose session ran out.
    pub fn get(&mut self, group: &str, now: Instant) -> &mut Group {
        let g = self.groups.entry(group.to_string()).or_default();
        if g.member
            .as_ref()
            .is_some_and(|m| now > m.last_seen + m.session)
        {
            g.member = None;
        }
        g
    }

    /// Every group the server has seen a member of, by id, with its
    /// member at `now` (None once its session ran out), read without
    /// dropping anything.
    pub fn listed(&self, now: Instant) -> impl Iterator<Item = (&String, Option<&Member>)> {
        self.groups.iter().map(move |(id, g)| {
            let alive = g.member.as_ref().filter(|m| now <= m.last_seen + m.session);
            (id, alive)
        })
    }

    /// A new member id for `client_id` (KIP-394: the server names members).
    pub fn new_member_id(&mut self, client_id: &str) -> String {
        self.next_member += 1;
        let client = if client_id.is_empty() {
            "consumer"
        } else {
            client_id
        };
        format!("{client}-{}", self.next_member)
    }

    /// Checks `member` of `generation` (-1: any) and notes that it is
    /// alive.
    pub fn check(
        &mut self,
        group: &str,
        member: &str,
        generation: Option<i32>,
    ) -> Result<&mut Group, Refusal> {
        let now = RealTime::now();
        let g = self.get(group, now);
        match &mut g.member {
            Some(m) if m.id == member => {
                m.last_seen = now;
            }
            _ => return Err(Refusal::UnknownMember),
        }
        if generation.is_some_and(|n| n != g.generation) {
            return Err(Refusal::IllegalGeneration);
        }
        Ok(g)
    }

    /// Removes `member` from `group`; whether it was there.
    pub fn leave(&mut self, group: &str, member: &str) -> bool {
        let g = self.get(group, RealTime::now());
        if g.member.as_ref().is_some_and(|m| m.id == member) {
            g.member = None;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(id: &str, session_ms: u64) -> Member {
        Member {
            id: id.into(),
            client_id: "c".into(),
            session: Duration::from_millis(session_ms),
            last_seen: RealTime::now(),
            protocol_type: "consumer".into(),
            protocol: "range".into(),
            metadata: Bytes::new(),
            assignment: None,
        }
    }

    #[test]
    fn one_member_checked_by_id_and_generation_and_dropped_after_its_session() {
        let mut groups = Groups::default();
        assert_eq!(groups.new_member_id("rdkafka"), "rdkafka-1");
        let now = RealTime::now();
        let g = groups.get("g", now);
        g.generation = 3;
        g.member = Some(member("m", 60_000));
        assert!(groups.check("g", "m", Some(3)).is_ok());
        assert!(groups.check("g", "m", None).is_ok());
        assert_eq!(
            groups.check("g", "m", Some(2)).unwrap_err(),
            Refusal::IllegalGeneration
        );
        assert_eq!(
            groups.check("g", "x", Some(3)).unwrap_err(),
            Refusal::UnknownMember
        );
        assert!(!groups.leave("g", "x"));
        assert!(groups.leave("g", "m"));
        assert!(groups.get("g", now).member.is_none());
        groups.get("g", now).member = Some(member("m", 0));
        let later = now + Duration::from_millis(5);
        assert!(
            groups.get("g", later).member.is_none(),
            "a session that ran out drops the member"
        );
    }
}
