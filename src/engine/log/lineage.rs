//! `Lineage`: which history a partition log's batch summaries are, so a
//! reader can tell that the first `k` summaries it once read are still the
//! log's first `k` without comparing them (the dashboard's reader cache,
//! `core::cluster::reader_cache`).
//!
//! A log's summaries change in two ways only: a batch is appended, which
//! leaves every listed summary as it was, or the tail is cut
//! (`PartitionLog::truncate_to`, as when a replica's log is cut back
//! where it diverges from its leader's). So a log gets a new lineage
//! when it is opened and whenever a summary is cut, and keeps it while it
//! only grows: two logs of the same lineage agree on as many summaries as
//! the shorter holds, provided they did not both grow apart from a common
//! state. A time-travel checkpoint's memo keeps its log's lineage and a
//! restore hands it back, together with the checkpoint's reader cache (a
//! memo is never appended to; the restored log grows, but its cache is the
//! memo's, taken with it).
//!
//! Two lineages are equal when they are the same allocation: a new one is
//! a new `Arc`, and a cache that holds one keeps it alive, so its address
//! is never reused for another while compared. Nothing of it reaches
//! output.

use std::sync::Arc;

/// See the module's comment. `Default` gives a new lineage.
#[derive(Debug, Clone, Default)]
pub struct Lineage(Arc<()>);

impl Lineage {
    /// A lineage no other log has.
    pub fn new() -> Self {
        Self::default()
    }
}

impl PartialEq for Lineage {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Lineage {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_is_the_same_lineage_and_a_new_one_is_not() {
        let a = Lineage::new();
        assert_eq!(a, a.clone());
        assert_ne!(a, Lineage::new());
        assert_ne!(Lineage::default(), Lineage::default());
    }
}
