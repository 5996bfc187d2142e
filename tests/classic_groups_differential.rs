//! The engine's classic group coordinator (`--rules kafka`,
//! src/engine/consumer/classic.rs) against `mk-tui serve`'s
//! (src/kafka/groups.rs, itself pinned to Apache Kafka 4.4 by
//! tests/kafka_differential.rs): the same seeded random sequences of
//! joins, syncs, heartbeats, commits, leaves and clock moves, driven
//! through both with one explicit clock; after every call the error
//! codes, generations, leaders, members, states and assignments must
//! agree, and every answer serve gives a waiting JoinGroup or SyncGroup
//! must be what the engine's state says that member has. A failure
//! prints its seed and the calls so far.
//!
//! Where they cannot meet, the test does not go: the engine names its
//! members (serve hands out ids: the engine's `b` is serve's `b-7`, the
//! order kept since names are single letters), and the leader's
//! assignment, computed client-side in Kafka, is Kafka's RangeAssignor
//! here for both (the engine's own, played by the test for serve's
//! leader). A commit before the group exists is not sent (the engine
//! answers UnknownMember, serve ILLEGAL_GENERATION as Kafka's OffsetCommit
//! before v9 does; docs/kafka-mapping.md).

#![cfg(feature = "serve")]

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use bytes::Bytes;
use minikafka::engine::config::GroupProtocol;
use minikafka::engine::consumer::group::{GroupCoordinator, GroupState as EngineState};
use minikafka::engine::consumer::{OffsetStore, SyncOutcome, range_assign};
use minikafka::engine::{MiniKafkaError, TopicPartition};
use minikafka::kafka::errors::{code, code_of};
use minikafka::kafka::groups::{self, Groups, Join, Reply, Started, Sync, Ticket};

const TIMEOUT_MS: u64 = 10_000;
const GROUP: &str = "g";
const NAMES: [&str; 4] = ["a", "b", "c", "d"];

/// A small seeded generator (xorshift64*): the sequences are a function
/// of the seed alone.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

fn topics() -> BTreeMap<String, Vec<u32>> {
    BTreeMap::from([
        ("audit".to_string(), vec![0, 1]),
        ("orders".to_string(), vec![0, 1, 2, 3, 4]),
    ])
}

fn encode(tps: &[TopicPartition]) -> Bytes {
    Bytes::from(
        tps.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(","),
    )
}

fn decode_subs(b: &Bytes) -> BTreeSet<String> {
    String::from_utf8_lossy(b)
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The engine's name of serve's member id (`b-7` is `b`).
fn name_of(id: &str) -> String {
    id.rsplit_once('-').map_or(id, |(n, _)| n).to_string()
}

fn engine_code<T>(r: &Result<T, MiniKafkaError>) -> i16 {
    r.as_ref().err().map_or(code::NONE, code_of)
}

fn serve_state(s: groups::GroupState) -> &'static str {
    match s {
        groups::GroupState::Empty => "empty",
        groups::GroupState::PreparingRebalance => "preparing_rebalance",
        groups::GroupState::CompletingRebalance => "completing_rebalance",
        groups::GroupState::Stable => "stable",
        groups::GroupState::Dead => "dead",
    }
}

struct Pair {
    engine: GroupCoordinator,
    serve: Groups,
    t0: Instant,
    now_ms: u64,
    /// Each engine name's current serve id.
    ids: BTreeMap<String, String>,
    /// Serve's waiting JoinGroups and SyncGroups, by engine name.
    joins: BTreeMap<String, Ticket>,
    syncs: BTreeMap<String, Ticket>,
    log: Vec<String>,
    seed: u64,
    /// Where the engine's commits go (none is made: the offsets are empty).
    store: OffsetStore,
}

impl Pair {
    fn now(&self) -> Instant {
        self.t0 + Duration::from_millis(self.now_ms)
    }

    fn id(&self, name: &str) -> String {
        self.ids
            .get(name)
            .cloned()
            .unwrap_or_else(|| format!("{name}-0"))
    }

    fn fail(&self, what: &str) -> String {
        format!(
            "seed {}: {what}\ncalls:\n  {}",
            self.seed,
            self.log.join("\n  ")
        )
    }

    fn engine_generation(&self) -> i32 {
        self.engine.group(GROUP).map_or(0, |g| g.generation)
    }

    fn join(&mut self, name: &str, subs: &BTreeSet<String>) {
        self.log
            .push(format!("{} ms: join {name} {subs:?}", self.now_ms));
        let engine = self.engine.join(GROUP, name, subs, &topics(), self.now_ms);
        let known = self
            .engine
            .group(GROUP)
            .is_some_and(|g| g.members.contains_key(name));
        let member_id = match self.ids.get(name) {
            // A member the engine still has rejoins with its id.
            Some(id)
                if self
                    .serve
                    .group(GROUP)
                    .is_some_and(|g| g.members.contains_key(id)) =>
            {
                id.clone()
            }
            _ => String::new(),
        };
        let meta = Bytes::from(subs.iter().cloned().collect::<Vec<_>>().join(","));
        let started = self.serve.join(
            Join {
                group: GROUP.into(),
                member_id,
                client_id: name.into(),
                client_host: "/127.0.0.1".into(),
                connection: 1,
                session: Duration::from_millis(TIMEOUT_MS),
                rebalance: Duration::from_millis(TIMEOUT_MS),
                protocol_type: "consumer".into(),
                protocols: vec![("range".into(), meta)],
                instance_id: None,
                require_known_member: false,
                supports_skip_assignment: false,
                new_member_number: self.log.len() as u64,
            },
            self.now(),
        );
        let engine = engine.expect("the engine refuses no join of a known topic");
        assert!(
            known,
            "{}",
            self.fail("the engine lost a member it just took")
        );
        let serve_generation = match started {
            Started::Now(r) => {
                assert_eq!(r.error, code::NONE, "{}", self.fail("serve refused a join"));
                self.ids.insert(name.into(), r.member_id.clone());
                r.generation
            }
            Started::Wait(t) => {
                let id = self
                    .serve
                    .group(GROUP)
                    .and_then(|g| g.members.keys().rev().find(|k| name_of(k) == name).cloned())
                    .expect("serve took the member");
                self.ids.insert(name.into(), id);
                self.joins.insert(name.into(), t);
                self.answers();
                -1
            }
        };
        let answered = !self.joins.contains_key(name) && serve_generation == -1;
        let serve_generation = if answered {
            self.engine_generation()
        } else {
            serve_generation
        };
        assert_eq!(
            engine.generation,
            serve_generation,
            "{}",
            self.fail(&format!("join {name}: generation (-1: waiting)"))
        );
    }

    fn sync(&mut self, name: &str, stale: bool) {
        let generation = self.engine_generation() - i32::from(stale);
        self.log.push(format!(
            "{} ms: sync {name} generation {generation}",
            self.now_ms
        ));
        let engine = self
            .engine
            .sync(GROUP, name, generation, None, &topics(), self.now_ms);
        // Serve's leader assigns client-side: Kafka's RangeAssignor over
        // the members' metadata, as the engine does for a sync without one.
        let assignments: Vec<(String, Bytes)> = self
            .serve
            .group(GROUP)
            .map(|g| {
                let subs = g
                    .members
                    .values()
                    .map(|m| (m.id.clone(), decode_subs(&m.metadata("range"))))
                    .collect();
                range_assign(&subs, &topics())
                    .into_iter()
                    .map(|(id, tps)| (id, encode(&tps)))
                    .collect()
            })
            .unwrap_or_default();
        let started = self.serve.sync(
            Sync {
                group: GROUP.into(),
                member_id: self.id(name),
                instance_id: None,
                generation,
                protocol_type: Some("consumer".into()),
                protocol: None,
                assignments,
            },
            self.now(),
        );
        match (engine, started) {
            (Err(e), Started::Now(Err(c))) => {
                assert_eq!(
                    code_of(&e),
                    c,
                    "{}",
                    self.fail(&format!("sync {name}: code"))
                )
            }
            (Ok(SyncOutcome::Assigned { assignment, .. }), Started::Now(Ok((bytes, ..)))) => {
                assert_eq!(
                    encode(&assignment),
                    bytes,
                    "{}",
                    self.fail("sync: assignment")
                )
            }
            (Ok(outcome), Started::Wait(t)) => {
                self.syncs.insert(name.into(), t);
                self.answers();
                match outcome {
                    SyncOutcome::Waiting { .. } => assert!(
                        self.syncs.contains_key(name),
                        "{}",
                        self.fail(&format!("sync {name}: serve answered, the engine waits"))
                    ),
                    SyncOutcome::Assigned { .. } => assert!(
                        !self.syncs.contains_key(name),
                        "{}",
                        self.fail(&format!("sync {name}: the engine assigned, serve waits"))
                    ),
                }
            }
            (engine, serve) => panic!(
                "{}",
                self.fail(&format!("sync {name}: engine {engine:?}, serve {serve:?}"))
            ),
        }
    }

    fn heartbeat(&mut self, name: &str, stale: bool) {
        let generation = self.engine_generation() - i32::from(stale);
        self.log.push(format!(
            "{} ms: heartbeat {name} generation {generation}",
            self.now_ms
        ));
        let engine = self.engine.heartbeat(GROUP, name, generation, self.now_ms);
        let serve = self
            .serve
            .heartbeat(GROUP, &self.id(name), None, generation, self.now());
        assert_eq!(
            engine_code(&engine),
            serve,
            "{}",
            self.fail(&format!("heartbeat {name}: code"))
        );
        self.answers();
    }

    fn commit(&mut self, name: &str, stale: bool) {
        if self.engine.group(GROUP).is_none() {
            return;
        }
        let generation = self.engine_generation() - i32::from(stale);
        self.log.push(format!(
            "{} ms: commit {name} generation {generation}",
            self.now_ms
        ));
        let engine = self.engine.commit(
            GROUP,
            name,
            generation,
            &BTreeMap::new(),
            &mut self.store,
            self.now_ms,
        );
        let serve = self.serve.validate_commit(
            GROUP,
            (&self.id(name), None),
            generation,
            false,
            false,
            self.now(),
        );
        assert_eq!(
            engine_code(&engine),
            serve.err().unwrap_or(code::NONE),
            "{}",
            self.fail(&format!("commit {name}: code"))
        );
        self.answers();
    }

    fn leave(&mut self, name: &str) {
        self.log.push(format!("{} ms: leave {name}", self.now_ms));
        let engine = self.engine.leave(GROUP, name, &topics(), self.now_ms);
        let serve = self.serve.leave(GROUP, &[self.id(name)], self.now());
        assert_eq!(
            if engine {
                code::NONE
            } else {
                code::UNKNOWN_MEMBER_ID
            },
            serve[0],
            "{}",
            self.fail(&format!("leave {name}"))
        );
        self.joins.remove(name);
        self.syncs.remove(name);
        self.answers();
    }

    fn advance(&mut self, ms: u64) {
        self.now_ms += ms;
        self.log.push(format!("advance {ms} ms to {}", self.now_ms));
        self.engine.expire_members(&topics(), self.now_ms);
        self.serve.tick(self.now());
        self.answers();
    }

    /// Serve's answers to waiting requests, each checked against what the
    /// engine's state says of that member.
    fn answers(&mut self) {
        let group = self.engine.group(GROUP).cloned();
        for (name, t) in std::mem::take(&mut self.joins) {
            let member = group.as_ref().and_then(|g| g.members.get(&name));
            match self.serve.take(t) {
                None => {
                    assert!(
                        member.is_some_and(|m| m.classic.awaiting_join),
                        "{}",
                        self.fail(&format!("{name}'s join waits in serve, not in the engine"))
                    );
                    self.joins.insert(name, t);
                }
                Some(Reply::Join(r)) if r.error == code::NONE => {
                    let g = group.as_ref().expect("a group answered");
                    assert!(
                        member.is_some_and(|m| !m.classic.awaiting_join),
                        "{}",
                        self.fail(&format!("serve answered {name}'s join, the engine waits"))
                    );
                    assert_eq!(r.generation, g.generation, "{}", self.fail("join answer"));
                    assert_eq!(
                        Some(name_of(&r.leader)),
                        g.leader.clone(),
                        "{}",
                        self.fail("join answer: leader")
                    );
                }
                Some(Reply::Join(r)) => {
                    let rejoin_replaced = r.error == code::REBALANCE_IN_PROGRESS;
                    assert!(
                        rejoin_replaced || member.is_none(),
                        "{}",
                        self.fail(&format!("{name}'s join refused {} by serve only", r.error))
                    );
                }
                Some(Reply::Sync(_)) => panic!("{}", self.fail("a sync answer to a join")),
            }
        }
        for (name, t) in std::mem::take(&mut self.syncs) {
            let member = group.as_ref().and_then(|g| g.members.get(&name));
            match self.serve.take(t) {
                None => {
                    assert!(
                        member.is_some_and(|m| m.classic.awaiting_sync),
                        "{}",
                        self.fail(&format!("{name}'s sync waits in serve, not in the engine"))
                    );
                    self.syncs.insert(name, t);
                }
                Some(Reply::Sync(Ok((bytes, ..)))) => {
                    let g = group.as_ref().expect("a group answered");
                    assert!(
                        member.is_some_and(|m| !m.classic.awaiting_sync),
                        "{}",
                        self.fail(&format!("serve answered {name}'s sync, the engine waits"))
                    );
                    let mine = g.assignment.get(&name).cloned().unwrap_or_default();
                    assert_eq!(encode(&mine), bytes, "{}", self.fail("sync answer"));
                }
                Some(Reply::Sync(Err(c))) => assert!(
                    !member.is_some_and(|m| m.classic.awaiting_sync),
                    "{}",
                    self.fail(&format!("{name}'s sync refused {c} by serve only"))
                ),
                Some(Reply::Join(_)) => panic!("{}", self.fail("a join answer to a sync")),
            }
        }
        self.compare();
    }

    /// The two groups as they stand.
    fn compare(&self) {
        let (Some(e), Some(s)) = (self.engine.group(GROUP), self.serve.group(GROUP)) else {
            assert_eq!(
                self.engine.group(GROUP).is_some(),
                self.serve.group(GROUP).is_some(),
                "{}",
                self.fail("one has the group")
            );
            return;
        };
        let names: Vec<String> = s.members.keys().map(|id| name_of(id)).collect();
        assert_eq!(
            e.members.keys().cloned().collect::<Vec<_>>(),
            names,
            "{}",
            self.fail("members")
        );
        assert_eq!(
            e.state.name(),
            serve_state(s.state),
            "{}",
            self.fail("state")
        );
        assert_eq!(e.generation, s.generation, "{}", self.fail("generation"));
        assert_eq!(
            e.leader.clone(),
            s.leader.as_deref().map(name_of),
            "{}",
            self.fail("leader")
        );
        if e.state == EngineState::Stable {
            for m in s.members.values() {
                let mine = e
                    .assignment
                    .get(&name_of(&m.id))
                    .cloned()
                    .unwrap_or_default();
                assert_eq!(
                    encode(&mine),
                    m.assignment,
                    "{}",
                    self.fail(&format!("{}'s assignment", m.id))
                );
            }
        }
    }
}

fn run(seed: u64, steps: usize, dir: &std::path::Path) -> usize {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut p = Pair {
        engine: GroupCoordinator::with_protocol(TIMEOUT_MS, GroupProtocol::Classic),
        serve: Groups::default(),
        t0: Instant::now(),
        now_ms: 0,
        ids: BTreeMap::new(),
        joins: BTreeMap::new(),
        syncs: BTreeMap::new(),
        log: Vec::new(),
        seed,
        store: OffsetStore::open(dir).unwrap(),
    };
    let mut stable_seen = 0;
    for _ in 0..steps {
        let name = NAMES[rng.below(NAMES.len() as u64) as usize];
        let stale = rng.below(6) == 0;
        match rng.below(12) {
            0..=2 => {
                let subs = if rng.below(4) == 0 {
                    BTreeSet::from(["audit".to_string(), "orders".to_string()])
                } else {
                    BTreeSet::from(["orders".to_string()])
                };
                p.join(name, &subs);
            }
            3..=5 => p.sync(name, stale),
            6 | 7 => p.heartbeat(name, stale),
            8 => p.commit(name, stale),
            9 => p.leave(name),
            // Whole seconds, so a deadline is often met exactly.
            _ => p.advance(rng.below(8) * 1_000),
        }
        if p.engine
            .group(GROUP)
            .is_some_and(|g| g.state == EngineState::Stable)
        {
            stable_seen += 1;
        }
    }
    stable_seen
}

#[test]
fn the_engines_classic_coordinator_answers_as_serves_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut stable = 0;
    for seed in 0..200 {
        stable += run(seed, 80, dir.path());
    }
    // The sequences reach every state, not only the first join.
    assert!(stable > 700, "the sequences rarely reach Stable: {stable}");
}
