//! `Partitions`: every replica set of a cluster, and which of them an
//! operation may have changed.
//!
//! `BrokerCluster::mutate` brings every ISR, HW and pending ack up to the
//! clock before and after each operation (SPEC §3 E5: the ISR and the HW
//! follow the clock and the replicas). Doing that for every partition made
//! each operation cost O(partitions), so creating N topics cost O(N²).
//! `PartitionReplicaSet::update` depends only on the replica set itself and
//! the clock's time, and is idempotent at a fixed time, so a partition
//! that nothing changed since it was last updated at the same time is
//! already at its fixed point. This map remembers the time of the last full
//! update and which partitions were borrowed mutably since: the update
//! after an operation visits only those, and a full update happens only
//! when the clock moved or when code took the whole map mutably (which
//! marks every partition).

use std::collections::{BTreeMap, BTreeSet};
use std::ops::{Deref, DerefMut};

use crate::engine::core::metadata::TopicPartition;
use crate::engine::replication::PartitionReplicaSet;

/// The partitions of a cluster, with the bookkeeping of which ones are
/// known to be up to date.
#[derive(Debug, Default)]
pub struct Partitions {
    map: BTreeMap<TopicPartition, PartitionReplicaSet>,
    /// The clock's time at which every partition not in `touched` was last
    /// updated (None: never, or unknown).
    settled_at: Option<u64>,
    /// Partitions borrowed mutably since `settled_at`; None: possibly all.
    touched: Option<BTreeSet<TopicPartition>>,
}

impl Deref for Partitions {
    type Target = BTreeMap<TopicPartition, PartitionReplicaSet>;

    fn deref(&self) -> &Self::Target {
        &self.map
    }
}

impl DerefMut for Partitions {
    /// The whole map, mutably: every partition may change, so the next
    /// update visits them all.
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.touched = None;
        &mut self.map
    }
}

impl Partitions {
    /// One partition, mutably; only it is marked as changed.
    pub fn get_tracked(&mut self, tp: &TopicPartition) -> Option<&mut PartitionReplicaSet> {
        let set = self.map.get_mut(tp)?;
        if let Some(touched) = &mut self.touched {
            touched.insert(tp.clone());
        }
        Some(set)
    }

    /// Adds (or replaces) a partition; only it is marked as changed.
    pub fn insert_tracked(&mut self, tp: TopicPartition, set: PartitionReplicaSet) {
        if let Some(touched) = &mut self.touched {
            touched.insert(tp.clone());
        }
        self.map.insert(tp, set);
    }

    /// The whole map, mutably, without marking anything: the caller must
    /// call [`Self::touch_all`] if it changed a partition.
    pub fn untracked(&mut self) -> &mut BTreeMap<TopicPartition, PartitionReplicaSet> {
        &mut self.map
    }

    /// Marks every partition as possibly changed.
    pub fn touch_all(&mut self) {
        self.touched = None;
    }

    /// Brings every partition up to `now`: all of them if the clock moved
    /// since the last full update or if any may have changed in unknown
    /// ways, else only those borrowed mutably since.
    pub fn update(&mut self, now_ms: u64) {
        match (self.settled_at == Some(now_ms), self.touched.take()) {
            (true, Some(touched)) => {
                for tp in touched {
                    if let Some(set) = self.map.get_mut(&tp) {
                        set.update(now_ms);
                    }
                }
            }
            _ => {
                for set in self.map.values_mut() {
                    set.update(now_ms);
                }
            }
        }
        self.settled_at = Some(now_ms);
        self.touched = Some(BTreeSet::new());
    }
}
