//! The two slice methods the engine's lists use that `imbl::Vector` lacks.
//!
//! The engine's state that grows with history (each log's batch summaries,
//! the coordinator's instances, owners and markers, the journal's frame
//! index) is held in `imbl::Vector`s: persistent lists (RRB trees) whose
//! clone shares every node, and whose writes copy only the nodes on the
//! path to what they change. Time travel keeps that state with every
//! checkpoint (`ClusterMemo`) and hands it to the driver a step back
//! restores, so taking a checkpoint is a clone, not a copy, and so is a
//! restore.

use std::cmp::Ordering;

use imbl::Vector;
use imbl::vector::Iter;

/// [`slice::partition_point`] and `&v[start..]` for an `imbl::Vector`.
pub trait VectorExt<T> {
    /// The index of the first entry for which `pred` is false, the entries
    /// being partitioned by it (all trues first): a binary search.
    fn partition_point(&self, pred: impl FnMut(&T) -> bool) -> usize;

    /// The entries from `start` on (none if `start` is past the end),
    /// reached in O(log n), not by walking the entries before it.
    fn iter_from(&self, start: usize) -> Iter<'_, T, imbl::shared_ptr::DefaultSharedPtr>;
}

impl<T: Clone> VectorExt<T> for Vector<T> {
    fn partition_point(&self, mut pred: impl FnMut(&T) -> bool) -> usize {
        // Never `Equal`: the search ends between the last true and the
        // first false.
        let found = self.binary_search_by(|item| match pred(item) {
            true => Ordering::Less,
            false => Ordering::Greater,
        });
        found.unwrap_or_else(|at| at)
    }

    fn iter_from(&self, start: usize) -> Iter<'_, T, imbl::shared_ptr::DefaultSharedPtr> {
        let start = start.min(self.len());
        self.focus().narrow(start..).into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_point_and_iter_from_match_a_slice() {
        // Long enough for a tree of several levels (64 entries a leaf).
        for n in [0usize, 1, 2, 63, 64, 65, 200, 5000] {
            let v: Vector<usize> = (0..n).collect();
            let r: Vec<usize> = (0..n).collect();
            for at in [0, 1, n / 2, n.saturating_sub(1), n, n + 3] {
                assert_eq!(
                    v.partition_point(|&x| x < at),
                    r.partition_point(|&x| x < at),
                    "partition_point {at} of {n}"
                );
                let tail: Vec<usize> = v.iter_from(at).copied().collect();
                assert_eq!(tail, r[at.min(n)..].to_vec(), "iter_from {at} of {n}");
                assert_eq!(v.iter_from(at).len(), n - at.min(n));
                assert_eq!(
                    v.iter_from(at).next_back(),
                    r.last().filter(|_| at < n),
                    "last from {at} of {n}"
                );
            }
        }
    }
}
