//! Large buffers handed back by the agent's writer thread once their records are written, for
//! the next frame's read-backs on the program's thread. A buffer allocated anew each frame
//! has its pages faulted in again: a frame of 1,000 draws reads back 48 MB of positions at 3M
//! vertices (about a sixth of a geometry-captured frame of `many_draws`), and a heat frame at
//! 1920×1080 24 MB of maps (its conversion went from 7 to 20 ms on llvmpipe with one more
//! fresh buffer). A leaf: nothing of GL.

use std::sync::Mutex;

/// Buffers of `T`, kept up to a number of bytes.
pub struct Pool<T> {
    buffers: Mutex<Vec<Vec<T>>>,
    max_bytes: usize,
}

impl<T> Pool<T> {
    /// An empty pool that keeps at most `max_bytes` of buffers' capacity.
    pub const fn new(max_bytes: usize) -> Pool<T> {
        Pool {
            buffers: Mutex::new(Vec::new()),
            max_bytes,
        }
    }

    /// An empty buffer with room for `len` items, from the pool when it has one.
    pub fn take(&self, len: usize) -> Vec<T> {
        let reused = self.buffers.lock().ok().and_then(|mut p| {
            let at = p.iter().position(|v| v.capacity() >= len)?;
            Some(p.swap_remove(at))
        });
        reused.unwrap_or_else(|| Vec::with_capacity(len))
    }

    /// Keeps `buffers` (emptied) for later, within the pool's bytes; the rest are freed.
    pub fn give(&self, buffers: impl IntoIterator<Item = Vec<T>>) {
        let Ok(mut pool) = self.buffers.lock() else {
            return;
        };
        let item = std::mem::size_of::<T>().max(1);
        let mut bytes: usize = pool.iter().map(|v| v.capacity() * item).sum();
        for mut v in buffers {
            let size = v.capacity() * item;
            if size == 0 || bytes + size > self.max_bytes {
                continue;
            }
            v.clear();
            bytes += size;
            pool.push(v);
        }
    }

    /// Frees every buffer kept (at a capture's end: the program keeps nothing of ours between
    /// captures).
    pub fn release(&self) {
        if let Ok(mut pool) = self.buffers.lock() {
            *pool = Vec::new();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_given_back_is_taken_again_empty_and_the_cap_holds() {
        let pool: Pool<u32> = Pool::new(64);
        let mut v = pool.take(8);
        assert!(v.capacity() >= 8);
        v.extend([1, 2, 3]);
        let at = v.as_ptr();
        pool.give([v]);
        let again = pool.take(4);
        assert_eq!((again.as_ptr(), again.len()), (at, 0));
        // Over the cap (64 bytes = 16 u32): not kept, so a larger ask is a new buffer.
        pool.give([again, Vec::with_capacity(100)]);
        assert_eq!(pool.take(50).capacity(), 50);
        let kept = pool.take(4);
        assert_eq!(kept.as_ptr(), at);
        pool.release();
    }
}
