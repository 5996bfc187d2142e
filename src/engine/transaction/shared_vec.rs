//! `SharedVec<T>`: a growable list kept in chunks behind `Arc`s, so that a
//! clone shares every chunk (issue 17 item 11).
//!
//! The coordinator keeps every transaction instance it has seen, and a
//! time-travel checkpoint keeps a copy of them (`CoordinatorMemo`), which a
//! step back copies again into the restored coordinator: held as a `Vec`,
//! each of those copies cost every instance ever run (a few allocations
//! each), and freeing the replaced coordinator as much again. Here a clone
//! costs one `Arc` per [`CHUNK`] entries, and a write copies only the chunk
//! it lands in, once, if another clone still shares it (`Arc::make_mut`).
//! Instances are mostly appended and the newest ones written, so clones
//! taken a few steps apart share all but their last chunks.

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

    pub fn last(&self) -> Option<&T> {
        self.len.checked_sub(1).and_then(|i| self.get(i))
    }

    /// Every entry, in order (double-ended, of known length).
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            list: self,
            front: 0,
            back: self.len,
        }
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
}
