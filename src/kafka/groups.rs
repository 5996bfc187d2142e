//! Kafka's classic consumer group protocol, as Apache Kafka's group
//! coordinator runs it (its `ClassicGroup` and `GroupMetadataManager`):
//! the state machine, membership, rebalances, the leader and the
//! protocol chosen. The handlers ([`crate::kafka::handlers::groups`])
//! translate JoinGroup, SyncGroup, Heartbeat, LeaveGroup and
//! DescribeGroups to the calls here; a JoinGroup or a follower's
//! SyncGroup that waits gets a [`Ticket`], answered once the group decides
//! ([`Groups::take`]).
//!
//! A group is `Empty` (no members), `PreparingRebalance` (waiting for every
//! known member to rejoin, until the rebalance timeout: dynamic members
//! that did not are removed), `CompletingRebalance` (the join answered, a new
//! generation: waiting for the leader's SyncGroup) or `Stable` (every
//! member has its assignment). `Dead` is what DescribeGroups says of a
//! group that does not exist: groups are never deleted here.
//!
//! A static member (KIP-345: a `group.instance.id`) keeps its place
//! through a rebalance it misses and, when it starts again, takes its
//! instance's old member id's place without a rebalance
//! ([`Groups::join`]; the old id is then FENCED_INSTANCE_ID).
//!
//! Membership is the server's, not the engine's: no action changes it and
//! a replay has none (the committed offsets, which are the engine's, come
//! from OffsetCommit and TxnOffsetCommit actions, fenced here by
//! [`Groups::validate_commit`]). A member that neither heartbeats nor
//! rejoins within its session timeout is removed and the group rebalances;
//! the time is the server's real time, passed in as `now` by the handlers
//! and the server's timer (a pure function of its calls, tested with an
//! explicit clock).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::kafka::errors::code;
use crate::kafka::subscription;

/// The longest session (and rebalance timeout) a member is given: Kafka's
/// `group.max.session.timeout.ms` default, 30 minutes. A longer one is
/// clamped to it (Kafka refuses the session, INVALID_SESSION_TIMEOUT).
/// Static members are given long sessions so that a restart keeps their
/// place (a new user's trial: the 300 s cap before would have dropped a
/// member Kafka waits 10 minutes for).
pub const MAX_SESSION: Duration = Duration::from_secs(30 * 60);

/// Kafka's `group.initial.rebalance.delay.ms`: how long an empty group's
/// first rebalance waits for more members. Kafka's default is 3 s; 0 here,
/// as Kafka's own `config/server.properties` sets it for development: a
/// lesson's consumers join at once, and the later ones rebalance.
pub const INITIAL_REBALANCE_DELAY: Duration = Duration::ZERO;

/// A waiting JoinGroup or SyncGroup's claim on its answer.
pub type Ticket = u64;

/// The classic group states, as Kafka names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum GroupState {
    Empty,
    PreparingRebalance,
    CompletingRebalance,
    Stable,
    Dead,
}

impl GroupState {
    /// Kafka's name, as DescribeGroups and ListGroups give it.
    pub fn name(self) -> &'static str {
        match self {
            GroupState::Empty => "Empty",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Stable => "Stable",
            GroupState::Dead => "Dead",
        }
    }
}

/// One member of a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub id: String,
    /// A static member's `group.instance.id` (KIP-345): the member it
    /// names keeps its place when it rejoins under a new member id.
    pub instance_id: Option<String>,
    pub client_id: String,
    /// Where it connects from, as Kafka's DescribeGroups shows it
    /// (`/127.0.0.1`).
    pub client_host: String,
    /// The connection its last JoinGroup came on (the clients pane shows
    /// the member on that connection's row).
    pub connection: u64,
    pub session: Duration,
    pub rebalance: Duration,
    /// The protocols it supports (assignors), in its preference order,
    /// with the metadata of each.
    pub protocols: Vec<(String, Bytes)>,
    /// What the leader's SyncGroup assigned it (empty until then).
    pub assignment: Bytes,
    /// When its session runs out unless it heartbeats.
    pub heartbeat_deadline: Instant,
    /// Its JoinGroup waiting for the rebalance to complete.
    awaiting_join: Option<Ticket>,
    /// Its SyncGroup waiting for the leader's.
    awaiting_sync: Option<Ticket>,
    /// Joined this generation, not synced yet (Kafka's pending sync: it is
    /// removed if it does not sync within the rebalance timeout).
    pending_sync: bool,
}

impl Member {
    /// Its metadata for `protocol`.
    pub fn metadata(&self, protocol: &str) -> Bytes {
        self.protocols
            .iter()
            .find(|(name, _)| name == protocol)
            .map(|(_, m)| m.clone())
            .unwrap_or_default()
    }

    fn names(&self) -> impl Iterator<Item = &str> {
        self.protocols.iter().map(|(n, _)| n.as_str())
    }
}

/// One group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub state: GroupState,
    pub generation: i32,
    /// The protocol type (`consumer`) of its members; kept once empty, as
    /// Kafka keeps it.
    pub protocol_type: Option<String>,
    /// The protocol chosen for this generation (the assignor).
    pub protocol: Option<String>,
    pub leader: Option<String>,
    pub members: BTreeMap<String, Member>,
    /// Member ids handed out with MEMBER_ID_REQUIRED, until they join or
    /// their session runs out.
    pending: BTreeMap<String, Instant>,
    /// PreparingRebalance: when the join completes with whoever rejoined.
    rebalance_deadline: Option<Instant>,
    /// An empty group's first rebalance: not before this.
    initial_delay_until: Option<Instant>,
    /// CompletingRebalance or Stable: when the members that did not sync
    /// yet are removed.
    sync_deadline: Option<Instant>,
    /// The topics its members subscribe to, read from their metadata when
    /// a generation starts (Kafka's `subscribedTopics`); None until the
    /// first generation or when the metadata is not the consumer
    /// protocol's ([`crate::kafka::subscription`]).
    subscribed: Option<BTreeSet<String>>,
}

impl Default for Group {
    fn default() -> Self {
        Self {
            state: GroupState::Empty,
            generation: 0,
            protocol_type: None,
            protocol: None,
            leader: None,
            members: BTreeMap::new(),
            pending: BTreeMap::new(),
            rebalance_deadline: None,
            initial_delay_until: None,
            sync_deadline: None,
            subscribed: None,
        }
    }
}

/// A JoinGroup's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinReply {
    pub error: i16,
    pub generation: i32,
    pub protocol_type: Option<String>,
    pub protocol: Option<String>,
    pub leader: String,
    pub member_id: String,
    /// Every member with its metadata for the protocol chosen: the
    /// leader's answer only (it assigns); empty for the others.
    pub members: Vec<(String, Bytes)>,
    /// KIP-814 (JoinGroup v9): a static leader that rejoined a Stable
    /// group with nothing changed is given the members but must not
    /// assign again.
    pub skip_assignment: bool,
}

impl JoinReply {
    /// A refusal with `error`, naming `member_id` (empty: none).
    pub fn error(error: i16, member_id: &str) -> Self {
        Self {
            error,
            generation: -1,
            protocol_type: None,
            protocol: None,
            leader: String::new(),
            member_id: member_id.to_string(),
            members: Vec::new(),
            skip_assignment: false,
        }
    }
}

/// A SyncGroup's answer: the member's assignment and the group's protocol
/// type and name, or an error code.
pub type SyncReply = Result<(Bytes, Option<String>, Option<String>), i16>;

/// An answer kept for its ticket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Join(JoinReply),
    Sync(SyncReply),
}

/// Answered now, or later under a ticket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Started<T> {
    Now(T),
    Wait(Ticket),
}

/// What a JoinGroup asks.
#[derive(Debug, Clone)]
pub struct Join {
    pub group: String,
    pub member_id: String,
    pub client_id: String,
    pub client_host: String,
    /// The connection it came on.
    pub connection: u64,
    pub session: Duration,
    pub rebalance: Duration,
    pub protocol_type: String,
    pub protocols: Vec<(String, Bytes)>,
    /// Its `group.instance.id` (v5+): a static member (KIP-345).
    pub instance_id: Option<String>,
    /// v4+: a new dynamic member is first given its id with
    /// MEMBER_ID_REQUIRED (KIP-394).
    pub require_known_member: bool,
    /// v9+: a static leader's rejoin may be answered with
    /// `skip_assignment` (KIP-814).
    pub supports_skip_assignment: bool,
    /// The number in the id a new member (`member_id` empty) is given:
    /// never given before, across restarts too (the handler takes it from
    /// the server's file, [`crate::kafka::producer_ids`]).
    pub new_member_number: u64,
}

/// A new member's id: its client id and a number (KIP-394: the server
/// names members; Kafka adds a UUID, here a number never given before).
pub fn member_id(client_id: &str, number: u64) -> String {
    let client = if client_id.is_empty() {
        "consumer"
    } else {
        client_id
    };
    format!("{client}-{number}")
}

/// What a SyncGroup asks.
#[derive(Debug, Clone)]
pub struct Sync {
    pub group: String,
    pub member_id: String,
    /// v3+: a static member's instance id, checked against the member id.
    pub instance_id: Option<String>,
    pub generation: i32,
    /// v5: checked against the group's.
    pub protocol_type: Option<String>,
    pub protocol: Option<String>,
    /// The leader's assignment, by member id.
    pub assignments: Vec<(String, Bytes)>,
}

/// Every group, by id.
#[derive(Debug, Clone)]
pub struct Groups {
    groups: BTreeMap<String, Group>,
    next_ticket: Ticket,
    replies: BTreeMap<Ticket, Reply>,
    initial_delay: Duration,
    /// The generation a group starts from (its first is the next): above
    /// every generation of the server's last life
    /// ([`crate::kafka::producer_ids`]).
    generation_floor: i32,
}

impl Default for Groups {
    fn default() -> Self {
        Self::with_initial_delay(INITIAL_REBALANCE_DELAY)
    }
}

impl Groups {
    /// Groups whose first rebalance waits `delay` for more members.
    pub fn with_initial_delay(delay: Duration) -> Self {
        Self {
            groups: BTreeMap::new(),
            next_ticket: 0,
            replies: BTreeMap::new(),
            initial_delay: delay,
            generation_floor: 0,
        }
    }

    /// Groups made from now on start at `floor` (their first generation
    /// is the next), unless they start higher already.
    pub fn set_generation_floor(&mut self, floor: i32) {
        self.generation_floor = self.generation_floor.max(floor);
    }

    /// The group, if the server has seen a member of it.
    pub fn group(&self, group: &str) -> Option<&Group> {
        self.groups.get(group)
    }

    /// Every group the server has seen a member of, by id.
    pub fn listed(&self) -> impl Iterator<Item = (&String, &Group)> {
        self.groups.iter()
    }

    /// Takes the answer to `ticket`, once the group gave it.
    pub fn take(&mut self, ticket: Ticket) -> Option<Reply> {
        self.replies.remove(&ticket)
    }

    /// Forgets `ticket` (its request was answered otherwise): the member
    /// no longer waits on it.
    pub fn abandon(&mut self, ticket: Ticket) {
        self.replies.remove(&ticket);
        for g in self.groups.values_mut() {
            for m in g.members.values_mut() {
                if m.awaiting_join == Some(ticket) {
                    m.awaiting_join = None;
                }
                if m.awaiting_sync == Some(ticket) {
                    m.awaiting_sync = None;
                }
            }
        }
    }

    fn ticket(&mut self) -> Ticket {
        self.next_ticket += 1;
        self.next_ticket
    }

    /// The earliest time [`Self::tick`] has work: a session, a pending
    /// member, a rebalance or a sync running out.
    pub fn next_deadline(&self) -> Option<Instant> {
        let mut at: Option<Instant> = None;
        let mut note = |t: Instant| at = Some(at.map_or(t, |a| a.min(t)));
        for g in self.groups.values() {
            g.pending.values().copied().for_each(&mut note);
            for m in g.members.values() {
                if m.awaiting_join.is_none() && m.awaiting_sync.is_none() {
                    note(m.heartbeat_deadline);
                }
            }
            if g.state == GroupState::PreparingRebalance {
                if let Some(t) = g.rebalance_deadline {
                    note(t);
                }
                if let Some(t) = g.initial_delay_until {
                    note(t);
                }
            }
            if let Some(t) = g.sync_deadline {
                note(t);
            }
        }
        at
    }

    /// Runs the timeouts due at `now`: sessions that ran out (the member
    /// is removed, the group rebalances), pending member ids, rebalances
    /// that waited long enough, members that did not sync in time.
    pub fn tick(&mut self, now: Instant) {
        let ids: Vec<String> = self.groups.keys().cloned().collect();
        for id in ids {
            self.tick_group(&id, now);
        }
    }

    fn tick_group(&mut self, id: &str, now: Instant) {
        let Some(g) = self.groups.get_mut(id) else {
            return;
        };
        g.pending.retain(|_, deadline| now < *deadline);
        let expired: Vec<String> = g
            .members
            .values()
            .filter(|m| {
                m.awaiting_join.is_none()
                    && m.awaiting_sync.is_none()
                    && now >= m.heartbeat_deadline
            })
            .map(|m| m.id.clone())
            .collect();
        let late_sync: Vec<String> = match g.sync_deadline {
            Some(t) if now >= t => {
                g.sync_deadline = None;
                g.members
                    .values()
                    .filter(|m| m.pending_sync)
                    .map(|m| m.id.clone())
                    .collect()
            }
            _ => Vec::new(),
        };
        let mut gone = expired;
        for m in late_sync {
            if !gone.contains(&m) {
                gone.push(m);
            }
        }
        if gone.is_empty() {
            self.try_complete_join(id, now);
        } else {
            self.remove_members(id, &gone, now);
        }
    }

    /// A JoinGroup.
    pub fn join(&mut self, j: Join, now: Instant) -> Started<JoinReply> {
        self.tick_group(&j.group, now);
        if !j.member_id.is_empty() && !self.groups.contains_key(&j.group) {
            return Started::Now(JoinReply::error(code::UNKNOWN_MEMBER_ID, &j.member_id));
        }
        if !self.groups.contains_key(&j.group)
            && !Group::default().supports(&j.protocol_type, &j.protocols)
        {
            // Refused before the group exists: it is not made.
            return Started::Now(JoinReply::error(
                code::INCONSISTENT_GROUP_PROTOCOL,
                &j.member_id,
            ));
        }
        let floor = self.generation_floor;
        let g = self.groups.entry(j.group.clone()).or_insert_with(|| Group {
            generation: floor,
            ..Group::default()
        });
        if g.state == GroupState::Dead {
            return Started::Now(JoinReply::error(
                code::COORDINATOR_NOT_AVAILABLE,
                &j.member_id,
            ));
        }
        if !g.supports(&j.protocol_type, &j.protocols) {
            return Started::Now(JoinReply::error(
                code::INCONSISTENT_GROUP_PROTOCOL,
                &j.member_id,
            ));
        }
        if j.member_id.is_empty() {
            if let Some(instance) = j.instance_id.clone() {
                // A static member is named at once (no MEMBER_ID_REQUIRED)
                // and, if its instance is a member, takes that place.
                let id = member_id(&instance, j.new_member_number);
                return match g.static_member_id(&instance).map(str::to_string) {
                    Some(old) => self.replace_static_member(j, &old, id, now),
                    None => self.add_member(j, id, now),
                };
            }
            let id = member_id(&j.client_id, j.new_member_number);
            if j.require_known_member {
                let g = self.groups.get_mut(&j.group).expect("made above");
                g.pending.insert(id.clone(), now + j.session);
                return Started::Now(JoinReply::error(code::MEMBER_ID_REQUIRED, &id));
            }
            return self.add_member(j, id, now);
        }
        if g.pending.contains_key(&j.member_id) {
            if j.instance_id.is_some() {
                // Kafka's coordinator never names a static member pending:
                // it throws (an UNKNOWN_SERVER_ERROR to the client).
                return Started::Now(JoinReply::error(code::UNKNOWN_SERVER_ERROR, &j.member_id));
            }
            g.pending.remove(&j.member_id);
            let id = j.member_id.clone();
            return self.add_member(j, id, now);
        }
        if let Err(error) = g.validate_member(&j.member_id, j.instance_id.as_deref()) {
            return Started::Now(JoinReply::error(error, &j.member_id));
        }
        let m = &g.members[&j.member_id];
        let same = m.protocols == j.protocols;
        let is_leader = g.leader.as_deref() == Some(j.member_id.as_str());
        match g.state {
            GroupState::PreparingRebalance => self.update_member(j, now),
            GroupState::CompletingRebalance if same => Started::Now(g.current_reply(&j.member_id)),
            GroupState::Stable if same && !is_leader => Started::Now(g.current_reply(&j.member_id)),
            GroupState::CompletingRebalance | GroupState::Stable => self.update_member(j, now),
            GroupState::Empty | GroupState::Dead => {
                Started::Now(JoinReply::error(code::UNKNOWN_MEMBER_ID, &j.member_id))
            }
        }
    }

    fn add_member(&mut self, j: Join, id: String, now: Instant) -> Started<JoinReply> {
        let ticket = self.ticket();
        let initial_delay = self.initial_delay;
        let g = self.groups.get_mut(&j.group).expect("made by join");
        if g.members.is_empty() {
            g.protocol_type = Some(j.protocol_type.clone());
        }
        g.members.insert(
            id.clone(),
            Member {
                id: id.clone(),
                instance_id: j.instance_id,
                client_id: j.client_id,
                client_host: j.client_host,
                connection: j.connection,
                session: j.session,
                rebalance: j.rebalance,
                protocols: j.protocols,
                assignment: Bytes::new(),
                heartbeat_deadline: now + j.session,
                awaiting_join: Some(ticket),
                awaiting_sync: None,
                pending_sync: false,
            },
        );
        if g.leader.is_none() {
            g.leader = Some(id);
        }
        match g.state {
            GroupState::PreparingRebalance => {
                // A new member during an empty group's first delay
                // extends it, up to the rebalance timeout (Kafka's
                // InitialDelayedJoin).
                if let (Some(until), Some(deadline)) = (g.initial_delay_until, g.rebalance_deadline)
                    && now < until
                {
                    g.initial_delay_until = Some((now + initial_delay).min(deadline));
                }
            }
            _ => self.prepare_rebalance(&j.group, now),
        }
        self.try_complete_join(&j.group, now);
        Started::Wait(ticket)
    }

    /// A static member rejoining under a new id (Kafka's
    /// `updateStaticMemberThenRebalanceOrCompleteJoin`): the old id's
    /// waiting JoinGroup and SyncGroup are answered FENCED_INSTANCE_ID and
    /// the new id takes its place, assignment and leadership. A Stable
    /// group whose protocol this does not change is not rebalanced: the
    /// member is answered the current generation at once (before v9 with
    /// the leader as it was, so that a returning leader syncs as a
    /// follower; v9+ with `skip_assignment`, KIP-814). Otherwise the group
    /// rebalances, as it must while CompletingRebalance (the leader may
    /// be assigning to the old id).
    fn replace_static_member(
        &mut self,
        j: Join,
        old_id: &str,
        new_id: String,
        now: Instant,
    ) -> Started<JoinReply> {
        let ticket = self.ticket();
        let g = self.groups.get_mut(&j.group).expect("known");
        let current_leader = g.leader.clone().unwrap_or_default();
        let old = g.members.remove(old_id).expect("the instance's member");
        if let Some(t) = old.awaiting_join {
            self.replies.insert(
                t,
                Reply::Join(JoinReply::error(code::FENCED_INSTANCE_ID, old_id)),
            );
        }
        if let Some(t) = old.awaiting_sync {
            self.replies
                .insert(t, Reply::Sync(Err(code::FENCED_INSTANCE_ID)));
        }
        if g.leader.as_deref() == Some(old_id) {
            g.leader = Some(new_id.clone());
        }
        // Kafka keeps the old member's client id and host; the connection
        // is ours (the clients pane), and is the new one's.
        g.members.insert(
            new_id.clone(),
            Member {
                id: new_id.clone(),
                connection: j.connection,
                session: j.session,
                rebalance: j.rebalance,
                protocols: j.protocols,
                heartbeat_deadline: now + j.session,
                awaiting_join: Some(ticket),
                awaiting_sync: None,
                pending_sync: false,
                ..old
            },
        );
        match g.state {
            GroupState::Stable if g.protocol.as_deref() == Some(g.select_protocol().as_str()) => {
                let m = g.members.get_mut(&new_id).expect("inserted");
                m.awaiting_join = None;
                let mut reply = g.current_reply(&new_id);
                if j.supports_skip_assignment {
                    reply.skip_assignment = reply.leader == new_id;
                } else {
                    reply.members = Vec::new();
                    reply.leader = current_leader;
                }
                self.replies.remove(&ticket);
                Started::Now(reply)
            }
            GroupState::Stable | GroupState::CompletingRebalance => {
                self.prepare_rebalance(&j.group, now);
                self.try_complete_join(&j.group, now);
                Started::Wait(ticket)
            }
            _ => {
                self.try_complete_join(&j.group, now);
                Started::Wait(ticket)
            }
        }
    }

    fn update_member(&mut self, j: Join, now: Instant) -> Started<JoinReply> {
        let ticket = self.ticket();
        let g = self.groups.get_mut(&j.group).expect("known");
        let m = g.members.get_mut(&j.member_id).expect("known");
        m.protocols = j.protocols;
        m.session = j.session;
        m.rebalance = j.rebalance;
        m.client_id = j.client_id;
        m.client_host = j.client_host;
        m.connection = j.connection;
        if let Some(old) = m.awaiting_join.replace(ticket) {
            // A JoinGroup sent again: the newer one is answered.
            self.replies.insert(
                old,
                Reply::Join(JoinReply::error(code::REBALANCE_IN_PROGRESS, &j.member_id)),
            );
        }
        if g.state != GroupState::PreparingRebalance {
            self.prepare_rebalance(&j.group, now);
        }
        self.try_complete_join(&j.group, now);
        Started::Wait(ticket)
    }

    /// Moves to PreparingRebalance: members waiting for an assignment are
    /// told to rejoin; the join completes when all have rejoined or at
    /// the rebalance timeout (the longest of the members').
    fn prepare_rebalance(&mut self, id: &str, now: Instant) {
        let initial_delay = self.initial_delay;
        let Some(g) = self.groups.get_mut(id) else {
            return;
        };
        let mut told = Vec::new();
        for m in g.members.values_mut() {
            if g.state == GroupState::CompletingRebalance {
                m.assignment = Bytes::new();
            }
            if let Some(t) = m.awaiting_sync.take() {
                told.push(t);
            }
            m.pending_sync = false;
        }
        for t in told {
            self.replies
                .insert(t, Reply::Sync(Err(code::REBALANCE_IN_PROGRESS)));
        }
        let g = self.groups.get_mut(id).expect("above");
        let timeout = g.rebalance_timeout();
        g.initial_delay_until =
            (g.state == GroupState::Empty).then(|| now + initial_delay.min(timeout));
        g.rebalance_deadline = Some(now + timeout);
        g.sync_deadline = None;
        g.state = GroupState::PreparingRebalance;
    }

    /// Completes the join if every member rejoined (and an empty group's
    /// first delay passed), or at the rebalance timeout.
    fn try_complete_join(&mut self, id: &str, now: Instant) {
        let Some(g) = self.groups.get(id) else {
            return;
        };
        if g.state != GroupState::PreparingRebalance {
            return;
        }
        let all_joined =
            g.members.values().all(|m| m.awaiting_join.is_some()) && g.pending.is_empty();
        let delay_over = g.initial_delay_until.is_none_or(|t| now >= t);
        let timed_out = g.rebalance_deadline.is_some_and(|t| now >= t);
        if (all_joined && delay_over) || timed_out {
            self.complete_join(id, now);
        }
    }

    /// The members that did not rejoin are removed; a new generation, the
    /// protocol chosen, the leader kept if it rejoined; every waiting
    /// JoinGroup answered (the leader's with every member's metadata).
    fn complete_join(&mut self, id: &str, now: Instant) {
        let g = self.groups.get_mut(id).expect("known");
        // Static members keep their place through a rebalance they miss
        // (until their session runs out); dynamic ones are removed.
        let absent: Vec<String> = g
            .members
            .values()
            .filter(|m| m.awaiting_join.is_none() && m.instance_id.is_none())
            .map(|m| m.id.clone())
            .collect();
        for m in &absent {
            g.members.remove(m);
        }
        if g.leader
            .as_ref()
            .is_some_and(|l| !g.members.contains_key(l))
        {
            g.leader = g.members.keys().next().cloned();
        }
        // Kafka's `maybeElectNewJoinedLeader`: a leader that did not
        // rejoin hands over to the first member that did; if none did
        // (only absent static members are left), the rebalance waits
        // another timeout for them.
        let joined = |m: &Member| m.awaiting_join.is_some();
        if g.leader
            .as_ref()
            .is_some_and(|l| !g.members.get(l).is_some_and(joined))
        {
            match g.members.values().find(|m| joined(m)) {
                Some(m) => g.leader = Some(m.id.clone()),
                None => {
                    g.rebalance_deadline = Some(now + g.rebalance_timeout());
                    return;
                }
            }
        }
        g.generation += 1;
        g.rebalance_deadline = None;
        g.initial_delay_until = None;
        if g.members.is_empty() {
            g.state = GroupState::Empty;
            g.protocol = None;
            g.leader = None;
            g.subscribed = subscription::subscribed_topics(g.protocol_type.as_deref(), None, []);
            return;
        }
        let protocol = g.select_protocol();
        g.protocol = Some(protocol.clone());
        let metadata: Vec<Bytes> = g.members.values().map(|m| m.metadata(&protocol)).collect();
        g.subscribed =
            subscription::subscribed_topics(g.protocol_type.as_deref(), Some(&protocol), &metadata);
        g.state = GroupState::CompletingRebalance;
        let timeout = g.rebalance_timeout();
        g.sync_deadline = Some(now + timeout);
        let leader = g.leader.clone().unwrap_or_default();
        let everyone: Vec<(String, Bytes)> = g
            .members
            .values()
            .map(|m| (m.id.clone(), m.metadata(&protocol)))
            .collect();
        let mut answers = Vec::new();
        for m in g.members.values_mut() {
            m.pending_sync = true;
            m.heartbeat_deadline = now + m.session;
            if let Some(t) = m.awaiting_join.take() {
                answers.push((
                    t,
                    JoinReply {
                        error: code::NONE,
                        generation: g.generation,
                        protocol_type: g.protocol_type.clone(),
                        protocol: Some(protocol.clone()),
                        leader: leader.clone(),
                        member_id: m.id.clone(),
                        members: if m.id == leader {
                            everyone.clone()
                        } else {
                            Vec::new()
                        },
                        skip_assignment: false,
                    },
                ));
            }
        }
        for (t, reply) in answers {
            self.replies.insert(t, Reply::Join(reply));
        }
    }

    /// Removes `members` (left, or their session ran out): their waiting
    /// requests are answered UNKNOWN_MEMBER_ID, a new leader is chosen if
    /// the leader went, and the group rebalances.
    fn remove_members(&mut self, id: &str, members: &[String], now: Instant) {
        let Some(g) = self.groups.get_mut(id) else {
            return;
        };
        let mut told = Vec::new();
        for m in members {
            if let Some(gone) = g.members.remove(m) {
                if let Some(t) = gone.awaiting_join {
                    told.push((t, Reply::Join(JoinReply::error(code::UNKNOWN_MEMBER_ID, m))));
                }
                if let Some(t) = gone.awaiting_sync {
                    told.push((t, Reply::Sync(Err(code::UNKNOWN_MEMBER_ID))));
                }
            }
        }
        if g.leader
            .as_ref()
            .is_some_and(|l| !g.members.contains_key(l))
        {
            g.leader = g.members.keys().next().cloned();
        }
        let state = g.state;
        self.replies.extend(told);
        match state {
            GroupState::Stable | GroupState::CompletingRebalance => {
                self.prepare_rebalance(id, now);
                self.try_complete_join(id, now);
            }
            GroupState::PreparingRebalance => self.try_complete_join(id, now),
            GroupState::Empty | GroupState::Dead => {}
        }
    }

    /// A SyncGroup: the leader's hands every member its assignment; a
    /// follower's waits for it.
    pub fn sync(&mut self, s: Sync, now: Instant) -> Started<SyncReply> {
        self.tick_group(&s.group, now);
        let Some(g) = self.groups.get_mut(&s.group) else {
            return Started::Now(Err(code::UNKNOWN_MEMBER_ID));
        };
        if g.state == GroupState::Dead {
            return Started::Now(Err(code::COORDINATOR_NOT_AVAILABLE));
        }
        if let Err(error) = g.validate_member(&s.member_id, s.instance_id.as_deref()) {
            return Started::Now(Err(error));
        }
        if s.generation != g.generation {
            return Started::Now(Err(code::ILLEGAL_GENERATION));
        }
        let type_differs = s
            .protocol_type
            .as_ref()
            .is_some_and(|t| g.protocol_type.as_ref() != Some(t));
        let name_differs = s
            .protocol
            .as_ref()
            .is_some_and(|p| g.protocol.as_ref() != Some(p));
        if type_differs || name_differs {
            return Started::Now(Err(code::INCONSISTENT_GROUP_PROTOCOL));
        }
        match g.state {
            GroupState::Empty | GroupState::Dead => Started::Now(Err(code::UNKNOWN_MEMBER_ID)),
            GroupState::PreparingRebalance => Started::Now(Err(code::REBALANCE_IN_PROGRESS)),
            GroupState::Stable => {
                let m = g.members.get_mut(&s.member_id).expect("known");
                m.pending_sync = false;
                m.heartbeat_deadline = now + m.session;
                Started::Now(Ok((
                    m.assignment.clone(),
                    g.protocol_type.clone(),
                    g.protocol.clone(),
                )))
            }
            GroupState::CompletingRebalance => {
                self.next_ticket += 1;
                let ticket = self.next_ticket;
                let m = g.members.get_mut(&s.member_id).expect("known");
                m.pending_sync = false;
                m.heartbeat_deadline = now + m.session;
                if let Some(old) = m.awaiting_sync.replace(ticket) {
                    self.replies
                        .insert(old, Reply::Sync(Err(code::REBALANCE_IN_PROGRESS)));
                }
                if g.leader.as_deref() == Some(s.member_id.as_str()) {
                    let by_member: BTreeMap<&str, &Bytes> = s
                        .assignments
                        .iter()
                        .map(|(id, a)| (id.as_str(), a))
                        .collect();
                    for m in g.members.values_mut() {
                        m.assignment = by_member
                            .get(m.id.as_str())
                            .map(|a| (*a).clone())
                            .unwrap_or_default();
                        if let Some(t) = m.awaiting_sync.take() {
                            self.replies.insert(
                                t,
                                Reply::Sync(Ok((
                                    m.assignment.clone(),
                                    g.protocol_type.clone(),
                                    g.protocol.clone(),
                                ))),
                            );
                        }
                    }
                    g.state = GroupState::Stable;
                    if g.members.values().all(|m| !m.pending_sync) {
                        g.sync_deadline = None;
                    }
                }
                Started::Wait(ticket)
            }
        }
    }

    /// A Heartbeat: NONE, or why the member must rejoin.
    /// `instance`: a static member's instance id (v3+), checked against
    /// the member id.
    pub fn heartbeat(
        &mut self,
        group: &str,
        member: &str,
        instance: Option<&str>,
        generation: i32,
        now: Instant,
    ) -> i16 {
        self.tick_group(group, now);
        let Some(g) = self.groups.get_mut(group) else {
            return code::UNKNOWN_MEMBER_ID;
        };
        if g.state == GroupState::Dead {
            return code::COORDINATOR_NOT_AVAILABLE;
        }
        if let Err(error) = g.validate_member(member, instance) {
            return error;
        }
        let m = g.members.get_mut(member).expect("validated");
        if generation != g.generation {
            return code::ILLEGAL_GENERATION;
        }
        m.heartbeat_deadline = now + m.session;
        match g.state {
            GroupState::PreparingRebalance => code::REBALANCE_IN_PROGRESS,
            GroupState::Empty | GroupState::Dead => code::UNKNOWN_MEMBER_ID,
            GroupState::CompletingRebalance | GroupState::Stable => code::NONE,
        }
    }

    /// A LeaveGroup of dynamic `members`: each one's code
    /// (UNKNOWN_MEMBER_ID for one the group does not have). The group
    /// rebalances without them.
    pub fn leave(&mut self, group: &str, members: &[String], now: Instant) -> Vec<i16> {
        let identified: Vec<(String, Option<String>)> =
            members.iter().map(|m| (m.clone(), None)).collect();
        self.leave_identified(group, &identified, now)
    }

    /// A LeaveGroup (v3+) of `members`, each a member id and, for a
    /// static member, its instance id, as Kafka's `classicGroupLeave`:
    /// an empty member id with an instance id removes that instance's
    /// member (the admin's `removeMembersFromConsumerGroup`); otherwise
    /// the ids must match (FENCED_INSTANCE_ID from an older member id).
    pub fn leave_identified(
        &mut self,
        group: &str,
        members: &[(String, Option<String>)],
        now: Instant,
    ) -> Vec<i16> {
        self.tick_group(group, now);
        let Some(g) = self.groups.get_mut(group) else {
            return vec![code::UNKNOWN_MEMBER_ID; members.len()];
        };
        let mut codes = Vec::new();
        let mut gone = Vec::new();
        for (m, instance) in members {
            let named = match (m.is_empty(), instance) {
                (true, Some(instance)) => g.static_member_id(instance).map(str::to_string),
                _ => None,
            };
            if m.is_empty() {
                match named {
                    Some(id) if !gone.contains(&id) => {
                        gone.push(id);
                        codes.push(code::NONE);
                    }
                    _ => codes.push(code::UNKNOWN_MEMBER_ID),
                }
            } else if g.pending.remove(m).is_some() {
                codes.push(code::NONE);
            } else if gone.contains(m) {
                codes.push(code::UNKNOWN_MEMBER_ID);
            } else {
                match g.validate_member(m, instance.as_deref()) {
                    Ok(()) => {
                        gone.push(m.clone());
                        codes.push(code::NONE);
                    }
                    Err(error) => codes.push(error),
                }
            }
        }
        if gone.is_empty() {
            self.try_complete_join(group, now);
        } else {
            self.remove_members(group, &gone, now);
        }
        codes
    }

    /// Whether DeleteGroups must refuse `group` with NON_EMPTY_GROUP: it
    /// has members, or is rebalancing (not `Empty`), once the sessions
    /// that ran out are expired (Kafka's `validateDeleteGroup`).
    pub fn not_empty(&mut self, group: &str, now: Instant) -> bool {
        self.tick_group(group, now);
        self.groups
            .get(group)
            .is_some_and(|g| g.state != GroupState::Empty || !g.members.is_empty())
    }

    /// Forgets an `Empty` group (DeleteGroups took it): member ids it
    /// handed out and never saw join go with it. Whether it was known.
    pub fn forget_empty(&mut self, group: &str) -> bool {
        let empty = self
            .groups
            .get(group)
            .is_some_and(|g| g.state == GroupState::Empty && g.members.is_empty());
        empty && self.groups.remove(group).is_some()
    }

    /// Kafka's `ClassicGroup.validateOffsetDelete` once the sessions that
    /// ran out are expired: NON_EMPTY_GROUP for a group that is not
    /// `Empty` and whose members are not of the consumer protocol type;
    /// else the group if the server knows it.
    pub fn validate_offset_delete(
        &mut self,
        group: &str,
        now: Instant,
    ) -> Result<Option<&Group>, i16> {
        self.tick_group(group, now);
        match self.groups.get(group) {
            Some(g)
                if g.state != GroupState::Empty
                    && g.protocol_type.as_deref() != Some(subscription::CONSUMER) =>
            {
                Err(code::NON_EMPTY_GROUP)
            }
            g => Ok(g),
        }
    }

    /// Whether an OffsetCommit (or a transactional one, v3+) of a member
    /// (its id and, if static, its instance id) at `generation` may commit, as
    /// Kafka's `validateOffsetCommit`:
    /// generation -1 without a member is a simple commit, accepted while
    /// the group has no members; a member's commit needs its id and the
    /// current generation; a plain commit waits out CompletingRebalance.
    /// `has_offsets`: the group exists by its committed offsets alone. A
    /// member's accepted commit counts as a heartbeat.
    pub fn validate_commit(
        &mut self,
        group: &str,
        (member, instance): (&str, Option<&str>),
        generation: i32,
        transactional: bool,
        has_offsets: bool,
        now: Instant,
    ) -> Result<(), i16> {
        self.tick_group(group, now);
        let Some(g) = self.groups.get_mut(group) else {
            return match (generation < 0, has_offsets) {
                (true, _) => Ok(()),
                // An empty group (offsets only) has no such member.
                (false, true) => Err(code::UNKNOWN_MEMBER_ID),
                // Kafka: no such group for a member's commit (OffsetCommit
                // before v9 says ILLEGAL_GENERATION).
                (false, false) => Err(code::ILLEGAL_GENERATION),
            };
        };
        if g.state == GroupState::Dead {
            return Err(code::COORDINATOR_NOT_AVAILABLE);
        }
        if generation < 0 && g.state == GroupState::Empty {
            return Ok(());
        }
        if generation >= 0 || !member.is_empty() || instance.is_some() {
            g.validate_member(member, instance)?;
            let m = g.members.get_mut(member).expect("validated");
            if generation != g.generation {
                return Err(code::ILLEGAL_GENERATION);
            }
            if !transactional && g.state == GroupState::CompletingRebalance {
                return Err(code::REBALANCE_IN_PROGRESS);
            }
            m.heartbeat_deadline = now + m.session;
            return Ok(());
        }
        if !transactional && g.state != GroupState::Empty {
            return Err(code::UNKNOWN_MEMBER_ID);
        }
        Ok(())
    }
}

impl Group {
    /// Kafka's `ClassicGroup.isSubscribedToTopic`: whether its members
    /// subscribe to `topic` as of the current generation; when that is not
    /// known, whether it uses the consumer protocol type (to be safe).
    pub fn is_subscribed_to(&self, topic: &str) -> bool {
        match &self.subscribed {
            Some(topics) => topics.contains(topic),
            None => self.protocol_type.as_deref() == Some(subscription::CONSUMER),
        }
    }

    /// Whether a member of `protocol_type` offering `protocols` may join:
    /// an empty group takes any; else the type must be the group's and
    /// one protocol one every member supports.
    fn supports(&self, protocol_type: &str, protocols: &[(String, Bytes)]) -> bool {
        if protocol_type.is_empty() || protocols.is_empty() {
            return false;
        }
        if self.members.is_empty() {
            return true;
        }
        self.protocol_type.as_deref() == Some(protocol_type)
            && protocols
                .iter()
                .any(|(name, _)| self.members.values().all(|m| m.names().any(|n| n == name)))
    }

    /// Kafka's choice: among the protocols every member supports, each
    /// member votes for the first it prefers; the most votes win (a tie
    /// goes to the one the first member, by id, prefers).
    fn select_protocol(&self) -> String {
        let first = self.members.values().next().expect("not empty");
        let candidates: Vec<&str> = first
            .names()
            .filter(|name| self.members.values().all(|m| m.names().any(|n| n == *name)))
            .collect();
        let mut votes: BTreeMap<&str, usize> = BTreeMap::new();
        for m in self.members.values() {
            if let Some(choice) = m.names().find(|n| candidates.contains(n)) {
                *votes.entry(choice).or_default() += 1;
            }
        }
        let most = votes.values().copied().max().unwrap_or(0);
        candidates
            .iter()
            .find(|c| votes.get(*c).copied().unwrap_or(0) == most)
            .map(|c| c.to_string())
            .unwrap_or_default()
    }

    /// The current generation's JoinGroup answer for `member` (a member
    /// that rejoins with nothing changed while no rebalance is due).
    fn current_reply(&self, member: &str) -> JoinReply {
        let protocol = self.protocol.clone().unwrap_or_default();
        let leader = self.leader.clone().unwrap_or_default();
        JoinReply {
            error: code::NONE,
            generation: self.generation,
            protocol_type: self.protocol_type.clone(),
            protocol: self.protocol.clone(),
            member_id: member.to_string(),
            members: if member == leader {
                self.members
                    .values()
                    .map(|m| (m.id.clone(), m.metadata(&protocol)))
                    .collect()
            } else {
                Vec::new()
            },
            leader,
            skip_assignment: false,
        }
    }

    /// Kafka's `rebalanceTimeoutMs()`: the longest of its members'
    /// rebalance timeouts.
    fn rebalance_timeout(&self) -> Duration {
        self.members
            .values()
            .map(|m| m.rebalance)
            .max()
            .unwrap_or_default()
    }

    /// The member id of the static member `instance`, if one is.
    pub fn static_member_id(&self, instance: &str) -> Option<&str> {
        self.members
            .values()
            .find(|m| m.instance_id.as_deref() == Some(instance))
            .map(|m| m.id.as_str())
    }

    /// Kafka's `ClassicGroup.validateMember`: a request naming an
    /// instance must come from that instance's current member id
    /// (FENCED_INSTANCE_ID from an older one, UNKNOWN_MEMBER_ID if the
    /// instance is not a member); the member must be one.
    fn validate_member(&self, member: &str, instance: Option<&str>) -> Result<(), i16> {
        if let Some(instance) = instance {
            match self.static_member_id(instance) {
                None => return Err(code::UNKNOWN_MEMBER_ID),
                Some(id) if id != member => return Err(code::FENCED_INSTANCE_ID),
                Some(_) => {}
            }
        }
        if self.members.contains_key(member) {
            Ok(())
        } else {
            Err(code::UNKNOWN_MEMBER_ID)
        }
    }
}

#[cfg(test)]
#[path = "groups_tests.rs"]
mod tests;
