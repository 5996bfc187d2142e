//! Seeded random recordings for the differential test: brokers 1-3, topics
//! 1-2, partitions 1-2, at most 25 steps. Each step is chosen against the
//! current state (mk-tui's comparable view), so that most steps do
//! something: sends go to open transactions, promotions name replicas.
//!
//! Left out by construction, each for a reason in docs/book-differences.md:
//! `stop_broker`/`start_broker` and `replicate` by broker (the book cannot),
//! keyless records on a topic of two partitions (D1), `--rules kafka`.

use serde_json::{Value, json};

/// SplitMix64: small, seeded, the same on every machine.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A recording header.
pub fn header(rng: &mut Rng) -> Value {
    let brokers: Vec<u32> = (1..=rng.range(1, 3) as u32).collect();
    let n = brokers.len();
    let topics: Vec<Value> = ["a", "b"][..rng.range(1, 2)]
        .iter()
        .map(|name| {
            json!({"name": name, "partitions": rng.range(1, 2),
                   "replication_factor": rng.range(1, n)})
        })
        .collect();
    let min_isr = rng.range(1, n.min(2));
    let lag_time = *rng.pick(&[1000, 10_000]);
    let lag_offsets = *rng.pick(&[2, 10_000]);
    json!({
        "mk_recording": 1,
        "title": "book differential",
        "rules": "minikafka",
        "cluster": {
            "brokers": brokers,
            "topics": topics,
            "config": {
                "min_insync_replicas": min_isr,
                "replica_lag_time_ms": lag_time,
                "replica_lag_max_offsets": lag_offsets,
            },
        },
    })
}

/// What the generator needs besides the state: transaction ids handed out.
#[derive(Default)]
pub struct Ids {
    pub next: usize,
    /// Brokers in the cluster.
    pub brokers: usize,
}

const CUTS: [&str; 5] = ["prepare", "marker:1", "marker:2", "markers", "offsets"];

/// The partitions of a view: `(topic, partition, replicas)`.
fn partitions(view: &Value) -> Vec<(String, u32, Vec<u32>)> {
    view["partitions"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, p)| {
            let (topic, number) = name.rsplit_once('-').unwrap();
            let replicas = p["replicas"]
                .as_object()
                .unwrap()
                .keys()
                .map(|b| b.parse().unwrap())
                .collect();
            (topic.to_string(), number.parse().unwrap(), replicas)
        })
        .collect()
}

/// Topic, partition and key of a record: a named partition, or a key.
fn target(rng: &mut Rng, view: &Value) -> (String, u32, u32, Option<String>) {
    let parts = partitions(view);
    let (topic, partition, _) = rng.pick(&parts).clone();
    let count = parts.iter().filter(|(t, _, _)| *t == topic).count() as u32;
    let key = rng.chance(25).then(|| format!("k{}", rng.below(4)));
    (topic, partition, count, key)
}

/// One action, chosen against `view` (the comparable state).
pub fn action(rng: &mut Rng, view: &Value, ids: &mut Ids, step: usize) -> Value {
    let txns: Vec<String> = view["transactions"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let open: Vec<String> = view["transactions"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, t)| t["state"] == "ongoing")
        .map(|(id, _)| id.clone())
        .collect();
    let some_txn = |rng: &mut Rng| -> String {
        if !open.is_empty() && rng.chance(80) {
            rng.pick(&open).clone()
        } else if !txns.is_empty() && rng.chance(80) {
            rng.pick(&txns).clone()
        } else {
            "tx-none".to_string()
        }
    };
    let value = format!("v{step}");
    let roll = rng.below(100);
    match roll {
        0..=23 => {
            let (topic, partition, count, key) = target(rng, view);
            let mut fields = json!({"topic": topic, "value": value,
                                    "acks": *rng.pick(&["0", "1", "1", "all", "all"])});
            match key {
                Some(k) if rng.chance(50) || count == 1 => fields["key"] = json!(k),
                _ => fields["partition"] = json!(partition),
            }
            json!({"produce": fields})
        }
        24..=31 => {
            let txn = if !txns.is_empty() && rng.chance(25) {
                rng.pick(&txns).clone()
            } else {
                ids.next += 1;
                format!("tx-{}", ids.next)
            };
            json!({"begin": {"txn": txn}})
        }
        32..=45 => {
            let (topic, partition, count, key) = target(rng, view);
            let mut fields = json!({"txn": some_txn(rng), "topic": topic, "value": value});
            match key {
                Some(k) if rng.chance(50) || count == 1 => fields["key"] = json!(k),
                _ => fields["partition"] = json!(partition),
            }
            json!({"send": fields})
        }
        46..=49 => {
            let (topic, partition, _, _) = target(rng, view);
            json!({"send_offsets": {"txn": some_txn(rng), "group": "g",
                "offsets": [{"topic": topic, "partition": partition,
                             "offset": rng.below(6)}]}})
        }
        50..=60 => {
            let verb = if rng.chance(65) { "commit" } else { "abort" };
            let mut fields = json!({"txn": some_txn(rng)});
            if rng.chance(20) {
                fields["crash_after"] = json!(rng.pick(&CUTS));
            }
            json!({ verb: fields })
        }
        61..=78 => {
            if rng.chance(65) {
                json!({"replicate": {}})
            } else {
                let (topic, partition, _) = rng.pick(&partitions(view)).clone();
                json!({"replicate": {"topic": topic, "partition": partition}})
            }
        }
        79..=84 => json!({"advance_clock": {"ms": *rng.pick(&[400, 1200, 6000, 11_000])}}),
        85..=87 => json!({"crash": {}}),
        88..=89 => {
            let cut = rng.chance(70);
            let target = if rng.chance(50) {
                json!("journal")
            } else {
                let (topic, partition, replicas) = rng.pick(&partitions(view)).clone();
                json!({"topic": topic, "partition": partition,
                       "broker": *rng.pick(&replicas)})
            };
            if cut {
                json!({"tear": {"target": target, "cut_bytes": rng.range(1, 60)}})
            } else {
                json!({"tear": {"target": target, "append_garbage": true}})
            }
        }
        90..=96 => {
            let parts: Vec<_> = partitions(view)
                .into_iter()
                .filter(|(_, _, r)| r.len() > 1)
                .collect();
            if parts.is_empty() {
                return json!({"replicate": {}});
            }
            let (topic, partition, replicas) = rng.pick(&parts).clone();
            let leader = &view["partitions"][format!("{topic}-{partition}")]["leader"];
            let others: Vec<u32> = replicas.iter().copied().filter(|b| leader != b).collect();
            // Mostly a follower: promoting the leader is a decided
            // difference (D5) that both sides skip.
            let broker = if others.is_empty() || rng.chance(10) {
                *rng.pick(&replicas)
            } else {
                *rng.pick(&others)
            };
            json!({"promote": {"topic": topic, "partition": partition, "broker": broker}})
        }
        _ => {
            let topics: std::collections::BTreeSet<String> =
                partitions(view).into_iter().map(|(t, _, _)| t).collect();
            let brokers = ids.brokers;
            if topics.len() >= 2 {
                json!({"advance_clock": {"ms": 400}})
            } else {
                json!({"create_topic": {"name": "c", "partitions": rng.range(1, 2),
                                        "replication_factor": rng.range(1, brokers)}})
            }
        }
    }
}

/// The members the group steps use.
const MEMBERS: [&str; 3] = ["m1", "m2", "m3"];

/// A header for the group cases: [`header`]'s cluster with a short
/// session (1,000 ms), so clock steps expire members.
pub fn group_header(rng: &mut Rng) -> Value {
    let mut h = header(rng);
    h["cluster"]["config"]["group_session_timeout_ms"] = json!(1000);
    h
}

/// One step of a consumer-group case (E15), chosen against `view`: joins,
/// leaves, heartbeats and commits at the group's generation or a stale
/// one, polls, clock steps around the session timeout, crashes, and the
/// writes and fetch rounds that give the members something to read.
pub fn group_action(rng: &mut Rng, view: &Value, step: usize) -> Value {
    let member = *rng.pick(&MEMBERS);
    let generation = view["groups"]["g"]["generation"].as_i64().unwrap_or(0);
    let stale = |rng: &mut Rng| generation - i64::from(rng.chance(25));
    let topics: Vec<String> = partitions(view)
        .into_iter()
        .map(|(t, _, _)| t)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    match rng.below(100) {
        0..=19 => {
            let (topic, partition, _, _) = target(rng, view);
            json!({"produce": {"topic": topic, "partition": partition, "value": format!("v{step}"),
                               "acks": *rng.pick(&["1", "1", "all"])}})
        }
        20..=29 => json!({"replicate": {}}),
        30..=44 => {
            let mut chosen: Vec<String> =
                topics.iter().filter(|_| rng.chance(70)).cloned().collect();
            if chosen.is_empty() {
                chosen.push(rng.pick(&topics).clone());
            }
            json!({"join_group": {"group": "g", "member": member, "topics": chosen}})
        }
        45..=50 => json!({"leave_group": {"group": "g", "member": member}}),
        51..=60 => {
            json!({"heartbeat": {"group": "g", "member": member, "generation": stale(rng)}})
        }
        61..=72 => {
            // Mostly a partition the member owns, at the position it read to.
            let owned = view["groups"]["g"]["members"][member]["positions"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            let (topic, partition, offset) = match owned.iter().next() {
                Some((tp, p)) if rng.chance(70) => {
                    let (t, n) = tp.rsplit_once('-').unwrap();
                    (
                        t.to_string(),
                        n.parse::<u32>().unwrap(),
                        p.as_i64().unwrap(),
                    )
                }
                _ => {
                    let (t, n, _, _) = target(rng, view);
                    (t, n, rng.below(4) as i64)
                }
            };
            json!({"commit_group_offsets": {"group": "g", "member": member, "generation": stale(rng),
                "offsets": [{"topic": topic, "partition": partition, "offset": offset}]}})
        }
        73..=87 => {
            json!({"poll": {"group": "g", "member": member, "max": rng.range(1, 3)}})
        }
        88..=96 => json!({"advance_clock": {"ms": *rng.pick(&[300, 600, 1000, 1200])}}),
        _ => json!({"crash": {}}),
    }
}

/// A header for the cleanup cases (E16): one topic of 1-2 partitions on
/// 1-2 brokers, and segments of a few hundred bytes, so that a handful of
/// batches closes one and retention and compaction have something to do.
pub fn cleanup_header(rng: &mut Rng) -> Value {
    let n = rng.range(1, 2);
    let brokers: Vec<u32> = (1..=n as u32).collect();
    json!({
        "mk_recording": 1,
        "title": "book differential: retention and compaction",
        "rules": "minikafka",
        "cluster": {
            "brokers": brokers,
            "topics": [{"name": "a", "partitions": rng.range(1, 2),
                        "replication_factor": rng.range(1, n)}],
            "config": {
                "min_insync_replicas": 1,
                "replica_lag_time_ms": 10_000,
                "replica_lag_max_offsets": 10_000,
                "segment_max_bytes": *rng.pick(&[150, 250, 400]),
            },
        },
    })
}

/// One step of a cleanup case, chosen against `view`: batches of keyed
/// records over four keys (some keyless, some tombstones), fetch rounds,
/// clock steps, `retention` by time and/or bytes, `compact` (some crashed
/// at `before_swap`) and crashes.
pub fn cleanup_action(rng: &mut Rng, view: &Value, step: usize) -> Value {
    let (topic, partition, _) = rng.pick(&partitions(view)).clone();
    let named = |rng: &mut Rng, fields: &mut Value| {
        if rng.chance(70) {
            fields["partition"] = json!(partition);
        }
    };
    match rng.below(100) {
        0..=39 => {
            let records: Vec<Value> = (0..rng.range(1, 3))
                .map(|i| {
                    if rng.chance(10) {
                        return json!({"value": format!("v{step}.{i}")});
                    }
                    let key = format!("k{}", rng.below(4));
                    if rng.chance(20) {
                        json!({"key": key, "tombstone": true})
                    } else {
                        json!({"key": key, "value": format!("v{step}.{i}")})
                    }
                })
                .collect();
            json!({"produce": {"topic": topic, "partition": partition, "records": records,
                               "acks": *rng.pick(&["1", "all"])}})
        }
        40..=54 => json!({"replicate": {}}),
        55..=69 => json!({"advance_clock": {"ms": *rng.pick(&[50, 200, 1000, 5000])}}),
        70..=84 => {
            let mut fields = json!({"topic": topic});
            named(rng, &mut fields);
            let by_time = rng.chance(65);
            if by_time {
                fields["retention_ms"] = json!(*rng.pick(&[0, 500, 2000, 10_000]));
            }
            if !by_time || rng.chance(35) {
                fields["retention_bytes"] = json!(*rng.pick(&[100, 300, 600, 1200]));
            }
            json!({ "retention": fields })
        }
        85..=97 => {
            let mut fields =
                json!({"topic": topic, "delete_retention_ms": *rng.pick(&[0, 500, 3000])});
            named(rng, &mut fields);
            if rng.chance(10) {
                fields["crash_at"] = json!("before_swap");
            }
            json!({ "compact": fields })
        }
        _ => json!({"crash": {}}),
    }
}
