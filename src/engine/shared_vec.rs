//! `SharedVec<T>`: a growable list kept in chunks behind `Arc`s, so that a
//! clone shares every chunk.
//!
//! Time travel keeps the in-memory state a data directory's files parse
//! to with every checkpoint (`ClusterMemo`), so that a step back restores
//! it instead of reading the files again, and a restore hands it to the
//! new driver: the coordinator's instances and owners, its markers, the
//! journal's frame index, each log's batch summaries. Each grows with
//! history. Held as `Vec`s, every one of those copies cost all of it, and
//! freeing the replaced driver as much again. Here a clone costs one `Arc`
//! per [`CHUNK`] entries, and a write copies only the chunk it lands in,
//! once, if another clone still shares it (`Arc::make_mut`). These lists
//! are mostly appended and their newest entries written, so clones taken a
//! few steps apart share all but their last chunks.
//!
//! Every chunk but the last is full, so two lists with the same entries
//! have the same chunks, and the derived equality compares entries.

use std::sync::Arc;

/// Entries per chunk.
pub const CHUNK: usize = 64;

/// A list whose clones share their chunks (see the module's comment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedVec<T> {
    chunks: Vec<Arc<Vec<T>>>,
    len: usize,
}

impl<T> Default for SharedVec<T> {
    fn default() -> Self {
        Self {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Clone> SharedVec<T> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends an entry (copying the last chunk first if a clone shares it).
    pub fn push(&mut self, item: T) {
        if self.len.is_multiple_of(CHUNK) {
            self.chunks.push(Arc::new(Vec::with_capacity(CHUNK)));
        }
        let last = self.chunks.last_mut().expect("a chunk was just ensured");
        Arc::make_mut(last).push(item);
        self.len += 1;
    }

    pub fn get(&self, index: usize) -> Option<&T> {
        (index < self.len).then(|| &self.chunks[index / CHUNK][index % CHUNK])
    }

    /// The entry at `index`, writable: its chunk is copied first if a clone
    /// shares it.
    pub fn get_mut(&mut self, index: usize) -> Option<&mut T> {
        if index >= self.len {
            return None;
        }
        Arc::make_mut(&mut self.chunks[index / CHUNK]).get_mut(index % CHUNK)
    }

    pub fn first(&self) -> Option<&T> {
        self.get(0)
    }

    pub fn last(&self) -> Option<&T> {
        self.len.checked_sub(1).and_then(|i| self.get(i))
    }

    /// Every entry, in order (double-ended, of known length).
    pub fn iter(&self) -> Iter<'_, T> {
        self.iter_from(0)
    }

    /// The entries from `start` on (none if `start` is past the end): what
    /// `&v[start..]` is for a slice.
    pub fn iter_from(&self, start: usize) -> Iter<'_, T> {
        Iter {
            list: self,
            front: start.min(self.len),
            back: self.len,
        }
    }

    /// The index of the first entry for which `pred` is false, the entries
    /// being partitioned by it (all trues first), as
    /// [`slice::partition_point`]: a binary search.
    pub fn partition_point(&self, mut pred: impl FnMut(&T) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(&self[mid]) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Keeps the first `len` entries. The chunks before the cut stay
    /// shared; the one it falls in is copied if shared.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        self.chunks.truncate(len.div_ceil(CHUNK));
        if !len.is_multiple_of(CHUNK) {
            let last = self.chunks.last_mut().expect("len > 0 keeps a chunk");
            Arc::make_mut(last).truncate(len % CHUNK);
        }
        self.len = len;
    }

    /// Inserts `item` at `index` (at most `len`), shifting the entries
    /// after it: O(entries after it), as for a `Vec`, plus a chunk.
    pub fn insert(&mut self, index: usize, item: T) {
        assert!(index <= self.len, "insert at {index} past {}", self.len);
        let tail = self.split_off(index);
        self.push(item);
        self.append(tail);
    }

    /// Removes and returns the entry at `index`, shifting the entries after
    /// it: O(entries after it), as for a `Vec`.
    pub fn remove(&mut self, index: usize) -> T {
        let item = self[index].clone();
        let tail = self.split_off(index + 1);
        self.truncate(index);
        self.append(tail);
        item
    }

    /// Moves the entries from `at` on into a new list: O(entries moved).
    pub fn split_off(&mut self, at: usize) -> Self {
        let tail: Self = self.iter_from(at).cloned().collect();
        self.truncate(at);
        tail
    }

    /// Appends every entry of `other`.
    pub fn append(&mut self, other: Self) {
        self.extend(other.iter().cloned());
    }

    /// The entries as a `Vec` (a copy).
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().cloned().collect()
    }

    /// How many chunks this list shares with `other` (for tests of sharing).
    pub fn shared_chunks(&self, other: &Self) -> usize {
        self.chunks
            .iter()
            .zip(&other.chunks)
            .filter(|(a, b)| Arc::ptr_eq(a, b))
            .count()
    }
}

impl<T: Clone> Extend<T> for SharedVec<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        for item in items {
            self.push(item);
        }
    }
}

impl<T: Clone> FromIterator<T> for SharedVec<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut list = Self::new();
        list.extend(items);
        list
    }
}

impl<T: Clone> std::ops::Index<usize> for SharedVec<T> {
    type Output = T;

    fn index(&self, index: usize) -> &T {
        match self.get(index) {
            Some(item) => item,
            None => panic!("index {index} out of range for a list of {}", self.len),
        }
    }
}

impl<T: Clone> std::ops::IndexMut<usize> for SharedVec<T> {
    fn index_mut(&mut self, index: usize) -> &mut T {
        let len = self.len;
        match self.get_mut(index) {
            Some(item) => item,
            None => panic!("index {index} out of range for a list of {len}"),
        }
    }
}

impl<'a, T: Clone> IntoIterator for &'a SharedVec<T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

/// The iterator of [`SharedVec::iter`].
#[derive(Debug, Clone)]
pub struct Iter<'a, T> {
    list: &'a SharedVec<T>,
    front: usize,
    back: usize,
}

impl<'a, T: Clone> Iterator for Iter<'a, T> {
    type Item = &'a T;

    fn next(&mut self) -> Option<&'a T> {
        if self.front >= self.back {
            return None;
        }
        self.front += 1;
        self.list.get(self.front - 1)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.back - self.front;
        (left, Some(left))
    }

    /// Skips in O(1) (`iter().skip(n)` and `nth` do not walk the entries).
    fn nth(&mut self, n: usize) -> Option<&'a T> {
        self.front = self.front.saturating_add(n).min(self.back);
        self.next()
    }
}

impl<T: Clone> DoubleEndedIterator for Iter<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.front >= self.back {
            return None;
        }
        self.back -= 1;
        self.list.get(self.back)
    }
}

impl<T: Clone> ExactSizeIterator for Iter<'_, T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_chunks_and_writes_do_not_leak_into_clones() {
        let mut a = SharedVec::new();
        for i in 0..(3 * CHUNK + 5) {
            a.push(i);
        }
        let b = a.clone();
        // Every chunk is shared.
        assert!(
            a.chunks
                .iter()
                .zip(&b.chunks)
                .all(|(x, y)| Arc::ptr_eq(x, y))
        );
        a[1] = 1000;
        a.push(7);
        assert_eq!(b[1], 1);
        assert_eq!(b.len(), 3 * CHUNK + 5);
        assert_eq!(a.len(), 3 * CHUNK + 6);
        // Only the chunks written were copied.
        assert!(!Arc::ptr_eq(&a.chunks[0], &b.chunks[0]));
        assert!(Arc::ptr_eq(&a.chunks[1], &b.chunks[1]));
        assert!(Arc::ptr_eq(&a.chunks[2], &b.chunks[2]));
        assert_eq!(a.iter().rposition(|&x| x == 1000), Some(1));
        assert_eq!(a.iter().next_back(), Some(&7));
        assert_eq!(a.iter().len(), a.len());
        assert_eq!(a.last(), Some(&7));
        assert_eq!(a.get(a.len()), None);
        let all: Vec<usize> = b.iter().copied().collect();
        assert_eq!(all, (0..(3 * CHUNK + 5)).collect::<Vec<_>>());
    }

    /// Every edit gives what the same edit of a `Vec` gives, and leaves a
    /// clone taken before it as it was, sharing the chunks before the edit.
    #[test]
    fn edits_match_a_vec_and_leave_clones_alone() {
        let n = 3 * CHUNK + 7;
        let base: SharedVec<usize> = (0..n).collect();
        let reference: Vec<usize> = (0..n).collect();
        for at in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, n - 1, n] {
            let mut v = base.clone();
            let mut r = reference.clone();
            v.truncate(at);
            r.truncate(at);
            assert_eq!(v.to_vec(), r, "truncate {at}");
            assert_eq!(v.len(), r.len());
            // A cut shares the chunks before it (all of them: no cut).
            let kept = if at == n {
                base.chunks.len()
            } else {
                at / CHUNK
            };
            assert_eq!(v.shared_chunks(&base), kept, "truncate {at}");
            v.push(1000);
            r.push(1000);
            assert_eq!(v.to_vec(), r, "push after truncate {at}");

            let (mut v, mut r) = (base.clone(), reference.clone());
            v.insert(at, 2000);
            r.insert(at, 2000);
            assert_eq!(v.to_vec(), r, "insert {at}");
            assert_eq!(v.shared_chunks(&base), at / CHUNK, "insert {at}");
            if at < n {
                let (mut v, mut r) = (base.clone(), reference.clone());
                assert_eq!(v.remove(at), r.remove(at));
                assert_eq!(v.to_vec(), r, "remove {at}");
            }
            let (mut v, mut r) = (base.clone(), reference.clone());
            let tail = v.split_off(at);
            let rtail = r.split_off(at);
            assert_eq!(
                (v.to_vec(), tail.to_vec()),
                (r.clone(), rtail),
                "split {at}"
            );
            v.append(tail);
            assert_eq!(v, base, "split then append {at}");
            assert_eq!(
                v.iter_from(at).copied().collect::<Vec<_>>(),
                reference[at..].to_vec()
            );
            assert_eq!(v.iter().nth(at), reference.get(at));
            assert_eq!(v.partition_point(|&x| x < at), at);
        }
        assert_eq!(base.to_vec(), reference, "the clones' edits left it alone");
        assert_eq!(base.first(), Some(&0));
        assert_eq!(base.iter_from(n + 5).count(), 0);
    }
}
