//! The book's `producer/partitioner.py`: the producer's own `Partitioner`.
//! A keyed record goes to `crc32(key) mod partitions`; a keyless one sticks
//! to one partition (the first is 0) until a batch holding a keyless record
//! closes there, then moves to the next (`on_batch_closed`), as Kafka's
//! sticky partitioner does. The cluster's round-robin for unbatched
//! `produce` is `core/partitioner.rs` (docs/book-differences.md, D1).

use std::collections::BTreeMap;

use crate::engine::core::partitioner::partition_for_key;

/// The book's producer `Partitioner`: sticky partitions by partition count.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StickyPartitioner {
    sticky: BTreeMap<u32, u32>,
}

impl StickyPartitioner {
    /// The partition for a record with this key (or none) among
    /// `partition_count` (at least one).
    pub fn choose(&mut self, partition_count: u32, key: Option<&[u8]>) -> u32 {
        match key {
            Some(key) => partition_for_key(key, partition_count),
            None => *self.sticky.entry(partition_count).or_insert(0),
        }
    }

    /// A batch holding a keyless record closed on `partition`: keyless
    /// records move on to the next partition.
    pub fn on_batch_closed(&mut self, partition_count: u32, partition: u32) {
        if self.sticky.get(&partition_count) == Some(&partition) {
            self.sticky
                .insert(partition_count, (partition + 1) % partition_count.max(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyless_sticks_until_a_batch_closes_there() {
        let mut p = StickyPartitioner::default();
        assert_eq!(p.choose(3, None), 0);
        assert_eq!(p.choose(3, None), 0);
        p.on_batch_closed(3, 2);
        assert_eq!(
            p.choose(3, None),
            0,
            "another partition's batch moves nothing"
        );
        p.on_batch_closed(3, 0);
        assert_eq!(p.choose(3, None), 1);
        assert_eq!(p.choose(3, Some(b"k")), partition_for_key(b"k", 3));
    }
}
