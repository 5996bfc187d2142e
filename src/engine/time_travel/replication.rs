//! A replica set's memo, kept with a time-travel checkpoint: the in-memory
//! replication state that is not on disk (ISR, HW, what the leader knows of
//! each replica), and a replica opened with the producer state the
//! checkpoint kept, so a restore rebuilds none. The logs are the
//! checkpoint's copy of the data directory.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::config::BrokerId;
use crate::engine::log::PartitionLog;
use crate::engine::producer::ProducerStateManager;
use crate::engine::replication::{PartitionReplicaSet, Replica};

/// The in-memory replication state of a partition that is not on disk: what
/// a time-travel checkpoint keeps besides a copy of the data directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaSetMemo {
    pub isr: BTreeSet<BrokerId>,
    pub high_watermark: i64,
    /// Per replica: last fetch time, leader epoch seen, stopped.
    pub replicas: BTreeMap<BrokerId, (u64, Option<u32>, bool)>,
}

impl PartitionReplicaSet {
    /// The in-memory state a checkpoint keeps (pending appends excluded: a
    /// checkpoint is only taken when there are none).
    pub fn memo(&self) -> ReplicaSetMemo {
        ReplicaSetMemo {
            isr: self.isr.clone(),
            high_watermark: self.high_watermark,
            replicas: self
                .replicas
                .iter()
                .map(|(b, r)| (*b, (r.last_fetch_ms, r.leader_epoch_seen, r.stopped)))
                .collect(),
        }
    }

    /// Puts back the in-memory state of a checkpoint.
    pub fn restore(&mut self, memo: &ReplicaSetMemo) {
        self.isr = memo.isr.clone();
        self.high_watermark = memo.high_watermark;
        for (b, &(last_fetch_ms, seen, stopped)) in &memo.replicas {
            if let Some(r) = self.replicas.get_mut(b) {
                r.last_fetch_ms = last_fetch_ms;
                r.leader_epoch_seen = seen;
                r.stopped = stopped;
            }
        }
    }

    /// Drops every pending `acks=all` append: their futures fail with
    /// `Crashed` (the process died and could not restart).
    pub fn drop_pending(&mut self) {
        self.pending.clear();
    }

    /// True when no `acks=all` append is waiting.
    pub fn is_quiet(&self) -> bool {
        self.pending.is_empty()
    }
}

impl Replica {
    /// A replica over an opened log whose producer state is known: what
    /// [`Self::new`] would rebuild from the log's summaries, kept by a
    /// time-travel checkpoint with them, so a restore does not walk every
    /// batch again.
    pub fn with_producer_state(
        broker: BrokerId,
        log: PartitionLog,
        producer_state: ProducerStateManager,
        now_ms: u64,
    ) -> Self {
        Self {
            broker,
            log,
            producer_state,
            last_fetch_ms: now_ms,
            leader_epoch_seen: None,
            stopped: false,
            down_at_creation: false,
        }
    }
}
