//! The first records of the batches frames drew, kept between frames: a
//! frame draws the values of a few dozen batches ([`super::build::load_values`]),
//! and without this every frame read them again from the segments (a read
//! of each frame's header, its index lookup and the first 4 KiB of its
//! payload, then a decode), so each redraw of a state, and each frame after
//! a step that added one batch, paid for every batch on screen. Kept, a
//! frame reads only the batches it has not drawn before: what a step added.
//!
//! A batch is known by its partition, offsets, record count and the CRC of
//! its whole payload (the summary's): a batch rewritten by compaction, cut
//! and written again after a truncation, or replaced by another leader's has
//! another payload, so another key, and is read again. What a key holds is
//! what reading that batch gives, so a frame drawn from the cache is the
//! frame drawn from the disk.
//!
//! Kept by topic, then by [`HeadKey`]: a frame asks for a few hundred
//! batches, and a key that held the topic cloned its name for each ask.
//! The records are shared ([`Records`]): a frame's values hold the kept
//! ones, not a copy.
//!
//! Bounded: past [`KEPT`] batches the least recently drawn half goes.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::session::snapshot::values::Records;

/// Batches kept at most (before the oldest half is dropped): many frames'
/// worth (a 200x60 frame draws about 40).
pub const KEPT: usize = 4096;

/// Which batch of a topic: partition, base and last offsets, record count,
/// payload CRC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct HeadKey {
    pub partition: u32,
    pub base_offset: i64,
    pub last_offset: i64,
    pub record_count: u32,
    pub crc: u32,
}

#[derive(Debug)]
struct Head {
    /// How many first records were asked for when it was read.
    asked: usize,
    /// What that read gave: its first `asked` records (fewer when the
    /// batch holds fewer).
    records: Records,
    /// When it was last drawn (a counter of uses).
    used: u64,
}

#[derive(Debug, Default)]
struct Heads {
    kept: BTreeMap<String, BTreeMap<HeadKey, Head>>,
    /// How many batches `kept` holds, all topics together.
    len: usize,
    uses: u64,
}

/// The batch heads frames read (see the module's comment).
#[derive(Debug, Default)]
pub struct HeadCache(Mutex<Heads>);

impl HeadCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Heads> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The first `n` records of batch `key` of `topic`, if a read of at
    /// least as many was kept.
    pub fn get(&self, topic: &str, key: &HeadKey, n: usize) -> Option<Records> {
        let mut heads = self.lock();
        heads.uses += 1;
        let uses = heads.uses;
        let head = heads
            .kept
            .get_mut(topic)?
            .get_mut(key)
            .filter(|h| h.asked >= n)?;
        head.used = uses;
        Some(head.records.first(n))
    }

    /// Keeps `records`, what a read of batch `key` of `topic`'s first
    /// `asked` records gave.
    pub fn put(&self, topic: &str, key: HeadKey, asked: usize, records: &Records) {
        let mut heads = self.lock();
        heads.uses += 1;
        let used = heads.uses;
        let head = Head {
            asked,
            records: records.clone(),
            used,
        };
        let added = match heads.kept.get_mut(topic) {
            Some(batches) => batches.insert(key, head).is_none(),
            None => {
                heads
                    .kept
                    .insert(topic.to_string(), BTreeMap::from([(key, head)]));
                true
            }
        };
        heads.len += usize::from(added);
        if heads.len > KEPT {
            let mut stamps: Vec<u64> = heads
                .kept
                .values()
                .flat_map(|b| b.values().map(|h| h.used))
                .collect();
            stamps.sort_unstable();
            let oldest_kept = stamps[stamps.len() / 2];
            for batches in heads.kept.values_mut() {
                batches.retain(|_, h| h.used >= oldest_kept);
            }
            heads.kept.retain(|_, b| !b.is_empty());
            heads.len = heads.kept.values().map(BTreeMap::len).sum();
        }
    }

    /// How many batches are kept.
    pub fn len(&self) -> usize {
        self.lock().len
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::snapshot::RecordSnapshot;

    fn kept(records: &[RecordSnapshot]) -> Records {
        Records::new(records.to_vec())
    }

    fn key(base: i64) -> HeadKey {
        HeadKey {
            partition: 0,
            base_offset: base,
            last_offset: base + 9,
            record_count: 10,
            crc: 7,
        }
    }

    fn rec(offset: i64) -> RecordSnapshot {
        RecordSnapshot {
            offset,
            key: None,
            value: Some(format!("v{offset}")),
            headers: Vec::new(),
        }
    }

    #[test]
    fn a_kept_read_answers_for_as_many_records_as_it_read() {
        let cache = HeadCache::default();
        let four: Vec<_> = (0..4).map(rec).collect();
        cache.put("t", key(0), 4, &kept(&four));
        let got = |n| cache.get("t", &key(0), n).map(|r| r.as_slice().to_vec());
        assert_eq!(got(2), Some(four[..2].to_vec()));
        assert_eq!(got(4), Some(four.clone()));
        // More than was read: read again.
        assert_eq!(got(5), None);
        // Another payload (another CRC) is another batch.
        let other = HeadKey { crc: 8, ..key(0) };
        assert_eq!(cache.get("t", &other, 1), None);
        // The same batch of another topic is another batch.
        assert_eq!(cache.get("u", &key(0), 1), None);
    }

    #[test]
    fn past_the_bound_the_least_recently_drawn_half_goes() {
        let cache = HeadCache::default();
        for b in 0..=KEPT as i64 {
            cache.put(
                if b % 2 == 0 { "t" } else { "u" },
                key(b * 10),
                1,
                &kept(&[rec(b * 10)]),
            );
            if b == 0 {
                continue;
            }
            // Batch 0 is drawn again each time: it stays.
            assert!(cache.get("t", &key(0), 1).is_some());
        }
        assert!(cache.len() <= KEPT / 2 + 1, "{}", cache.len());
        assert!(cache.get("t", &key(0), 1).is_some());
        assert!(cache.get("u", &key(10), 1).is_none());
        // The last put (KEPT is even: batch KEPT went to "t").
        assert!(cache.get("t", &key(KEPT as i64 * 10), 1).is_some());
    }
}
