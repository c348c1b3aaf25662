//! A vector stored in fixed chunks, so growing it never copies what it holds and
//! never has an old and a new allocation live at once: a search's node store can
//! fill its memory cap instead of a third of it.

use std::ops::{Index, IndexMut};

/// Elements per chunk. The first chunk grows by doubling up to this size, so small
/// searches allocate little; later chunks are allocated whole.
const CHUNK: usize = 1 << 16;

pub struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Chunked<T> {
    pub fn new() -> Chunked<T> {
        Chunked {
            chunks: Vec::new(),
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Elements it holds without allocating.
    pub fn capacity(&self) -> usize {
        self.chunks.iter().map(Vec::capacity).sum()
    }

    /// Elements allocated, the old allocation included, at the moment one more push
    /// grows it (just `capacity()` when it has room).
    pub fn slots_with_one_more(&self) -> usize {
        let capacity = self.capacity();
        if self.len < capacity {
            capacity
        } else if capacity < CHUNK {
            // The first chunk doubles: its old and new buffers are both live.
            capacity + (2 * capacity).max(4)
        } else {
            capacity + CHUNK
        }
    }

    pub fn push(&mut self, value: T) {
        match self.chunks.last_mut() {
            Some(chunk) if chunk.len() < CHUNK => chunk.push(value),
            _ => {
                let mut chunk = Vec::with_capacity(if self.chunks.is_empty() { 4 } else { CHUNK });
                chunk.push(value);
                self.chunks.push(chunk);
            }
        }
        self.len += 1;
    }

    pub fn clear(&mut self) {
        self.chunks.clear();
        self.len = 0;
    }
}

impl<T> Index<usize> for Chunked<T> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        &self.chunks[i / CHUNK][i % CHUNK]
    }
}

impl<T> IndexMut<usize> for Chunked<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.chunks[i / CHUNK][i % CHUNK]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_what_is_pushed_across_chunks_and_grows_by_one_chunk_at_a_time() {
        let mut chunked = Chunked::new();
        assert_eq!(chunked.slots_with_one_more(), 4);
        let n = 3 * CHUNK + 5;
        for i in 0..n {
            chunked.push(i as u32);
        }
        assert_eq!(chunked.len(), n);
        assert_eq!(chunked.capacity(), 4 * CHUNK);
        assert!((0..n).all(|i| chunked[i] == i as u32));
        chunked[CHUNK] = 7;
        assert_eq!(chunked[CHUNK], 7);
        while chunked.len() < chunked.capacity() {
            chunked.push(0);
        }
        assert_eq!(chunked.slots_with_one_more(), 5 * CHUNK);
        chunked.clear();
        assert_eq!((chunked.len(), chunked.capacity()), (0, 0));
    }
}
