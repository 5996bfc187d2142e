//! Partition choice for records produced without a partition (SPEC §4
//! defaults): a keyed record goes to `crc32(key) mod partitions`; a keyless one
//! goes round-robin per topic, starting at partition 0. The round-robin cursor
//! is in-memory state, so the choice is a pure function of the action list.

use std::collections::BTreeMap;

/// `crc32(key) mod partitions`.
pub fn partition_for_key(key: &[u8], partitions: u32) -> u32 {
    crc32fast::hash(key) % partitions.max(1)
}

/// Per-topic round-robin cursors for keyless records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Partitioner {
    cursors: BTreeMap<String, u32>,
}

impl Partitioner {
    /// Forgets `topic`'s round-robin cursor (a deleted topic): a topic
    /// created again under its name starts from partition 0.
    pub fn forget(&mut self, topic: &str) {
        self.cursors.remove(topic);
    }

    /// The partition for a record with this key (or none) on a topic with
    /// `partitions` partitions.
    pub fn choose(&mut self, topic: &str, key: Option<&[u8]>, partitions: u32) -> u32 {
        match key {
            Some(key) => partition_for_key(key, partitions),
            None => {
                let cursor = self.cursors.entry(topic.to_string()).or_insert(0);
                let p = *cursor % partitions.max(1);
                *cursor = cursor.wrapping_add(1);
                p
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_is_crc32_mod_partitions_and_keyless_is_round_robin() {
        let mut p = Partitioner::default();
        assert_eq!(
            p.choose("t", Some(b"user-1"), 4),
            crc32fast::hash(b"user-1") % 4
        );
        let keyless: Vec<u32> = (0..5).map(|_| p.choose("t", None, 3)).collect();
        assert_eq!(keyless, vec![0, 1, 2, 0, 1]);
        assert_eq!(p.choose("other", None, 3), 0, "cursors are per topic");
    }
}
