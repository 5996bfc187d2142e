//! `History<T>`: an append-only list whose clones share everything but a short
//! tail.
//!
//! A driver's events and errors grow by a few entries every step, and every
//! time-travel checkpoint keeps a copy of them (`DriverMemo`). Held as a
//! `Vec`, each checkpoint copied the whole history, so a 100,000-step
//! recording kept about 2,000 copies of up to 100,000 events: O(steps²)
//! memory, gigabytes. Here the entries are kept in frozen chunks of
//! [`CHUNK`] entries, each behind an `Arc` and linked to the chunk before
//! it, plus an unfrozen tail of fewer than [`CHUNK`]: a clone costs one
//! `Arc` and at most `CHUNK - 1` entries, whatever the length, and the
//! clones of one history share every frozen chunk. Pushing onto a clone
//! never changes another (the frozen chunks are never written again).

use std::sync::Arc;

/// Entries per frozen chunk.
pub const CHUNK: usize = 32;

/// One frozen chunk and the chunks before it.
#[derive(Debug)]
struct Frozen<T> {
    before: Option<Arc<Frozen<T>>>,
    /// Entries in this chunk and every chunk before it.
    len: usize,
    items: Box<[T]>,
}

/// An append-only list with cheap clones (see the module's comment).
#[derive(Debug)]
pub struct History<T> {
    frozen: Option<Arc<Frozen<T>>>,
    tail: Vec<T>,
}

impl<T> Default for History<T> {
    fn default() -> Self {
        Self {
            frozen: None,
            tail: Vec::new(),
        }
    }
}

impl<T: Clone> Clone for History<T> {
    fn clone(&self) -> Self {
        Self {
            frozen: self.frozen.clone(),
            tail: self.tail.clone(),
        }
    }
}

impl<T: PartialEq> PartialEq for History<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<T: Eq> Eq for History<T> {}

impl<T> History<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.frozen.as_ref().map_or(0, |f| f.len) + self.tail.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends an entry; a full tail is frozen into a shared chunk.
    pub fn push(&mut self, item: T) {
        self.tail.push(item);
        if self.tail.len() == CHUNK {
            let items = std::mem::take(&mut self.tail).into_boxed_slice();
            let len = self.len() + items.len();
            self.frozen = Some(Arc::new(Frozen {
                before: self.frozen.take(),
                len,
                items,
            }));
        }
    }

    /// The newest entry.
    pub fn last(&self) -> Option<&T> {
        self.tail
            .last()
            .or_else(|| self.frozen.as_ref().and_then(|f| f.items.last()))
    }

    /// The chunks, oldest first (the tail last).
    fn chunks(&self) -> Vec<&[T]> {
        let mut chunks = vec![self.tail.as_slice()];
        let mut at = self.frozen.as_deref();
        while let Some(f) = at {
            chunks.push(&f.items);
            at = f.before.as_deref();
        }
        chunks.reverse();
        chunks
    }

    /// Every entry, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> {
        self.chunks().into_iter().flatten()
    }

    /// The newest `n` entries (all if fewer), oldest first, visiting only
    /// the chunks that hold them.
    pub fn newest(&self, n: usize) -> Vec<&T> {
        let mut out: Vec<&T> = Vec::with_capacity(n.min(self.len()));
        out.extend(self.tail.iter().rev().take(n));
        let mut at = self.frozen.as_deref();
        while let (Some(f), true) = (at, out.len() < n) {
            let want = n - out.len();
            out.extend(f.items.iter().rev().take(want));
            at = f.before.as_deref();
        }
        out.reverse();
        out
    }
}

impl<T> Drop for History<T> {
    /// Drops a long chain of chunks iteratively: the default recursive drop
    /// of a linked list would overflow the stack past about 100,000 chunks.
    fn drop(&mut self) {
        let mut at = self.frozen.take();
        while let Some(frozen) = at {
            match Arc::try_unwrap(frozen) {
                Ok(mut f) => at = f.before.take(),
                Err(_) => break, // still shared: another clone drops it
            }
        }
    }
}

impl<'a, T> IntoIterator for &'a History<T> {
    type Item = &'a T;
    type IntoIter = std::iter::Flatten<std::vec::IntoIter<&'a [T]>>;

    fn into_iter(self) -> Self::IntoIter {
        self.chunks().into_iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_shares_its_past_and_diverges_on_push() {
        let mut a = History::new();
        for i in 0..(3 * CHUNK + 5) {
            a.push(i);
        }
        let mut b = a.clone();
        b.push(1000);
        a.push(2000);
        assert_eq!(a.len(), 3 * CHUNK + 6);
        assert_eq!(b.len(), a.len());
        assert_eq!(a.last(), Some(&2000));
        assert_eq!(b.last(), Some(&1000));
        let va: Vec<usize> = a.iter().copied().collect();
        let mut expected: Vec<usize> = (0..(3 * CHUNK + 5)).collect();
        expected.push(2000);
        assert_eq!(va, expected);
        assert_ne!(a, b);
        assert!(Arc::ptr_eq(
            a.frozen.as_ref().unwrap(),
            b.frozen.as_ref().unwrap()
        ));
    }

    #[test]
    fn newest_reads_across_chunks_in_order() {
        let mut h = History::new();
        assert!(h.newest(3).is_empty() && h.last().is_none() && h.is_empty());
        for i in 0..(2 * CHUNK + 3) {
            h.push(i);
        }
        let n: Vec<usize> = h.newest(5).into_iter().copied().collect();
        let top = 2 * CHUNK + 3;
        assert_eq!(n, ((top - 5)..top).collect::<Vec<_>>());
        assert_eq!(h.newest(usize::MAX).len(), top);
        let exactly_frozen = {
            let mut g = History::new();
            (0..CHUNK).for_each(|i| g.push(i));
            g
        };
        assert_eq!(exactly_frozen.last(), Some(&(CHUNK - 1)));
        assert_eq!(exactly_frozen.newest(2), vec![&(CHUNK - 2), &(CHUNK - 1)]);
    }

    #[test]
    fn a_long_history_drops_without_overflowing_the_stack() {
        let mut h = History::new();
        for i in 0..(CHUNK * 200_000) {
            h.push(i as u8);
        }
        assert_eq!(h.len(), CHUNK * 200_000);
        drop(h);
    }
}
