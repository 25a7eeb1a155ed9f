//! I/O buffers aligned for O_DIRECT, filled once with random data (or zeros with
//! `zero_buffers`), so compressing or deduplicating storage sees realistic data.

use super::rng::Rng;
use std::alloc::{alloc_zeroed, dealloc, Layout};

/// Alignment that satisfies O_DIRECT on every Linux block device (page size).
pub(crate) const BUF_ALIGN: usize = 4096;

pub(crate) struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: the buffer is owned by one worker thread at a time and holds no thread-bound state,
// so moving it between threads is safe.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    pub(crate) fn new(len: usize) -> Self {
        let layout = Layout::from_size_align(len.max(1).next_multiple_of(BUF_ALIGN), BUF_ALIGN)
            .expect("buffer size fits the address space");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, layout }
    }

    pub(crate) fn len(&self) -> usize {
        self.layout.size()
    }

    #[cfg(test)]
    fn as_ptr(&self) -> *const u8 {
        self.ptr
    }

    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for layout.size() bytes and uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }

    #[cfg(test)]
    fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for layout.size() bytes.
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }

    /// Random contents unless `zero`.
    pub(crate) fn fill(&mut self, rng: &mut Rng, zero: bool) {
        if zero {
            self.as_mut_slice().fill(0);
        } else {
            rng.fill(self.as_mut_slice());
        }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in new().
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_rounded_up() {
        let b = AlignedBuf::new(2300);
        assert_eq!(b.as_ptr() as usize % BUF_ALIGN, 0);
        assert_eq!(b.len(), 4096);
    }

    #[test]
    fn fill_random_or_zero() {
        let mut b = AlignedBuf::new(8192);
        let mut rng = Rng::new(5);
        b.fill(&mut rng, false);
        assert!(b.as_slice().iter().filter(|&&x| x == 0).count() < 100);
        b.fill(&mut rng, true);
        assert!(b.as_slice().iter().all(|&x| x == 0));
    }
}
