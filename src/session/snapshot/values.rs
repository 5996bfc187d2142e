//! The record values a frame draws, beside its snapshot rather than in it.
//!
//! A frame's snapshot carries no records ([`super::Bounds::FRAME`]); the
//! frame asks its source for the first records of the few dozen batches it
//! draws ([`super::SnapshotSource::values`]). Written into the snapshot,
//! they needed a copy of the whole snapshot every frame (it is shared
//! between the frames of a state and must not change): its partitions'
//! 1,024 batches, the consumers' lists, the journal's tail, cloned and
//! dropped to carry 40 batches' values (docs/performance.md "P1", fifth
//! pass). Kept here, the panes that draw values (the partitions list and
//! the log) look a batch's records up by its place in the snapshot, and
//! fall back to the batch's own (a saved state, `mk-tui state`, or values
//! the step's changes read).
//!
//! The records of a leader's batch are shared with the heads kept between
//! frames ([`super::heads`]): handing them to a frame copies no record.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::session::snapshot::{BatchSnapshot, RecordSnapshot, Snapshot};

/// The first records of one batch, shared: the first `len` of `all`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Records {
    all: Arc<[RecordSnapshot]>,
    len: usize,
}

impl Records {
    /// All of `records`.
    pub fn new(records: Vec<RecordSnapshot>) -> Self {
        let len = records.len();
        Self {
            all: records.into(),
            len,
        }
    }

    /// The first `n` of these (all of them when there are fewer), sharing
    /// the same records.
    pub fn first(&self, n: usize) -> Self {
        Self {
            all: Arc::clone(&self.all),
            len: self.len.min(n),
        }
    }

    pub fn as_slice(&self) -> &[RecordSnapshot] {
        &self.all[..self.len]
    }
}

/// The values a frame reads for the batches it draws: by (partition,
/// index into its `batches`) for the leader's batches, by (partition,
/// broker, base offset) for a replica's divergent ones (E6).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Values {
    /// In (partition, batch) order: a frame's asks come so, and a few
    /// hundred are found by a binary search cheaper than a map's inserts.
    batches: Vec<((usize, usize), Records)>,
    divergent: BTreeMap<(usize, u32, i64), Vec<RecordSnapshot>>,
}

/// No values: what a frame without a source, or a pane drawn alone, reads.
static NONE: Values = Values {
    batches: Vec::new(),
    divergent: BTreeMap::new(),
};

impl Values {
    /// No values (every batch's own records are drawn).
    pub fn none() -> &'static Values {
        &NONE
    }

    pub fn is_empty(&self) -> bool {
        self.batches.is_empty() && self.divergent.is_empty()
    }

    /// Batch `b` of partition `p` (an index into its `batches`) has
    /// `records`.
    pub fn set_batch(&mut self, p: usize, b: usize, records: Records) {
        let key = (p, b);
        match self.batches.last() {
            Some(&(last, _)) if last >= key => match self.find(key) {
                Ok(i) => self.batches[i].1 = records,
                Err(i) => self.batches.insert(i, (key, records)),
            },
            _ => self.batches.push((key, records)),
        }
    }

    fn find(&self, key: (usize, usize)) -> Result<usize, usize> {
        self.batches.binary_search_by_key(&key, |&(k, _)| k)
    }

    /// The divergent batch at `base` of `broker`'s log of partition `p`
    /// has `records`.
    pub fn set_divergent(
        &mut self,
        p: usize,
        broker: u32,
        base: i64,
        records: Vec<RecordSnapshot>,
    ) {
        self.divergent.insert((p, broker, base), records);
    }

    /// The records a frame draws of `batch`, batch `b` of partition `p`
    /// (an index into its `batches`): those read for it, else its own.
    pub fn of<'a>(&'a self, p: usize, b: usize, batch: &'a BatchSnapshot) -> &'a [RecordSnapshot] {
        match self.find((p, b)) {
            Ok(i) => self.batches[i].1.as_slice(),
            Err(_) => &batch.records,
        }
    }

    /// The records read for the divergent batch at `base` of `broker`'s
    /// log of partition `p`, if any were.
    pub fn divergent(&self, p: usize, broker: u32, base: i64) -> Option<&[RecordSnapshot]> {
        self.divergent.get(&(p, broker, base)).map(Vec::as_slice)
    }

    /// Writes these values into `snapshot` (the one they were read for):
    /// what a snapshot that carries its values (`App::snapshot_for`, a
    /// step's changes) is made with.
    pub fn write_into(self, snapshot: &mut Snapshot) {
        for ((p, b), records) in self.batches {
            if let Some(batch) = snapshot
                .partitions
                .get_mut(p)
                .and_then(|part| part.batches.get_mut(b))
            {
                batch.records = records.as_slice().to_vec();
            }
        }
        for ((p, broker, base), records) in self.divergent {
            let Some(part) = snapshot.partitions.get_mut(p) else {
                continue;
            };
            for r in part.replicas.iter_mut().filter(|r| r.broker == broker) {
                for b in r.log.iter_mut().filter(|b| b.base_offset == base) {
                    b.records = records.clone();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch() -> BatchSnapshot {
        serde_json::from_str(
            r#"{"base_offset":0,"last_offset":0,"kind":"data","control":null,
                "transactional_id":null,"producer_id":-1,"leader_epoch":0,
                "fate":"committed","records":[]}"#,
        )
        .expect("a batch")
    }

    fn one(v: &str) -> Records {
        Records::new(vec![RecordSnapshot::new(0, None, Some(v.into()))])
    }

    /// Set in any order, replaced when set again, found by place; a batch
    /// without values read keeps its own.
    #[test]
    fn values_are_found_by_partition_and_batch_in_any_order() {
        let mut values = Values::default();
        for (p, b) in [(1, 5), (0, 9), (1, 2), (3, 0), (0, 1)] {
            values.set_batch(p, b, one(&format!("{p}.{b}")));
        }
        values.set_batch(1, 2, one("again"));
        let b = batch();
        let got = |p, i| values.of(p, i, &b).first().and_then(|r| r.value.clone());
        assert_eq!(got(1, 5).as_deref(), Some("1.5"));
        assert_eq!(got(0, 9).as_deref(), Some("0.9"));
        assert_eq!(got(0, 1).as_deref(), Some("0.1"));
        assert_eq!(got(3, 0).as_deref(), Some("3.0"));
        assert_eq!(got(1, 2).as_deref(), Some("again"));
        assert_eq!(got(2, 0), None);
        let firsts = Records::new(vec![
            RecordSnapshot::new(0, None, Some("a".into())),
            RecordSnapshot::new(1, None, Some("b".into())),
        ]);
        assert_eq!(firsts.first(1).as_slice().len(), 1);
        assert_eq!(firsts.first(5).as_slice().len(), 2);
    }
}
