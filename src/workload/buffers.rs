//! I/O buffers aligned for O_DIRECT, filled once with random data (or zeros with
//! `zero_buffers`), so compressing or deduplicating storage sees realistic data; and
//! [`Filler`], which makes each write's content as fio's buffer options ask (a pattern,
//! compressible chunks, deduplicable writes, the 512-byte scramble).

use super::rng::Rng;
use crate::model::buffers::{BufferSpec, DedupeMode};
use crate::model::verify::Pattern;
use std::alloc::{alloc_zeroed, dealloc, Layout};

/// Alignment that satisfies O_DIRECT on every Linux block device (page size).
pub(crate) const BUF_ALIGN: usize = 4096;

pub(crate) struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
    /// An anonymous mapping (large buffers), unmapped on drop; else from the allocator.
    mapped: bool,
}

/// From this size on a buffer is an anonymous mapping: zero pages the kernel hands out as they
/// are first touched. The allocator's zeroed aligned memory is written through up front, which
/// for a 4 GiB block (bsrange up to 4g) took seconds before the first I/O.
const MAP_FROM: usize = 1 << 20;

// SAFETY: the buffer is owned by one worker thread at a time and holds no thread-bound state,
// so moving it between threads is safe.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    pub(crate) fn new(len: usize) -> Self {
        let layout = Layout::from_size_align(len.max(1).next_multiple_of(BUF_ALIGN), BUF_ALIGN)
            .expect("buffer size fits the address space");
        if layout.size() >= MAP_FROM {
            // SAFETY: a fresh private anonymous mapping; the result is checked below.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    layout.size(),
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                std::alloc::handle_alloc_error(layout);
            }
            // Page aligned (BUF_ALIGN is the page size) and zero-filled by the kernel.
            return AlignedBuf {
                ptr: p.cast(),
                layout,
                mapped: true,
            };
        }
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf {
            ptr,
            layout,
            mapped: false,
        }
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
        self.fill_prefix(rng, zero, usize::MAX);
    }

    /// `fill` of the first `n` bytes only (those I/O can move; see `WorkerInput::io_max_len`).
    pub(crate) fn fill_prefix(&mut self, rng: &mut Rng, zero: bool, n: usize) {
        let n = n.min(self.len());
        let s = &mut self.as_mut_slice()[..n];
        if zero {
            s.fill(0);
        } else {
            rng.fill(s);
        }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if self.mapped {
            // SAFETY: mapped with this size in new(), unmapped once here.
            unsafe { libc::munmap(self.ptr.cast(), self.layout.size()) };
            return;
        }
        // SAFETY: allocated with this layout in new().
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// Repeats `pattern` over `buf` from its start (fio's cpy_pattern).
pub(crate) fn fill_pattern(buf: &mut [u8], pattern: &[u8]) {
    if pattern.is_empty() {
        return;
    }
    let n = pattern.len().min(buf.len());
    buf[..n].copy_from_slice(&pattern[..n]);
    let mut filled = n;
    while filled < buf.len() {
        let m = filled.min(buf.len() - filled);
        buf.copy_within(..m, filled);
        filled += m;
    }
}

/// fio's __fill_random_buf_percentage: each `segment` of `buf` is random for its first
/// (100 - `pct`)% and zeros (or `pattern`) for the rest; 100% is all zeros (or the pattern).
pub(crate) fn fill_percentage(
    rng: &mut Rng,
    buf: &mut [u8],
    pct: u32,
    segment: usize,
    pattern: Option<&[u8]>,
) {
    let plain = |b: &mut [u8]| match pattern {
        Some(p) => fill_pattern(b, p),
        None => b.fill(0),
    };
    if pct >= 100 {
        plain(buf);
        return;
    }
    let segment = segment.clamp(1, buf.len().max(1));
    let mut rest = buf;
    while !rest.is_empty() {
        let rnd = (segment * (100 - pct as usize) / 100).min(rest.len());
        let (r, tail) = rest.split_at_mut(rnd);
        rng.fill(r);
        rest = tail;
        if rest.is_empty() {
            break;
        }
        let mut zero = segment - rnd;
        // fio: a tail of a word or less joins the last plain run.
        if zero > rest.len() || rest.len() - zero <= 8 {
            zero = rest.len();
        }
        let (z, tail) = rest.split_at_mut(zero);
        plain(z);
        rest = tail;
    }
}

/// What each write holds under fio's buffer options. Built once per job instance; filling
/// allocates nothing.
pub(crate) struct Filler {
    pattern: Option<Vec<u8>>,
    compress: u32,
    chunk: u64,
    dedupe: u32,
    mode: DedupeMode,
    /// working_set: how many distinct buffers repeated writes pick from.
    ws_pages: u64,
    ws_base: u64,
    scramble: bool,
    /// Content of each buffer comes from a seed: the last unique one (dedupe repeat).
    last_seed: u64,
    rng: Rng,
}

impl Filler {
    /// None when the job's buffers are the plain random (or zero) ones filled at start.
    /// `region_bytes` sizes the dedupe working set; `seed` is the instance's.
    pub(crate) fn new(spec: &BufferSpec, region_bytes: u64, bs: u64, seed: u64) -> Option<Filler> {
        if !spec.active() {
            return None;
        }
        let ws = region_bytes * spec.dedupe_working_set_percentage as u64 / 100;
        let mut rng = Rng::new(seed ^ 0xb0ff_e25e_ed00_0001);
        let own_ws = rng.next_u64();
        // dedupe_global: one working set for every job that shares it (fio spreads it over
        // the jobs' generators); the same base gives the same buffers in every job.
        let ws_base = if spec.dedupe_global {
            0x6c6f_6261_6c77_7321
        } else {
            own_ws
        };
        Some(Filler {
            pattern: spec.pattern.as_ref().map(|p: &Pattern| p.bytes.clone()),
            compress: spec.compress_percentage,
            chunk: spec.compress_chunk,
            dedupe: spec.dedupe_percentage,
            mode: spec.dedupe_mode,
            ws_pages: (ws / bs.max(1)).max(1),
            ws_base,
            scramble: spec.scramble,
            last_seed: rng.next_u64(),
            rng,
        })
    }

    /// Fills `buf` (one write of its length at `offset`); `now_ns` stamps the scramble.
    pub(crate) fn fill(&mut self, buf: &mut [u8], offset: u64, now_ns: u64) {
        if self.compress > 0 || self.dedupe > 0 {
            let seed = self.next_seed();
            let mut rng = Rng::new(seed);
            let seg = if self.chunk == 0 {
                buf.len()
            } else {
                self.chunk as usize
            };
            fill_percentage(&mut rng, buf, self.compress, seg, self.pattern.as_deref());
        } else if let Some(p) = &self.pattern {
            fill_pattern(buf, p);
        } else if !self.scramble {
            self.rng.fill(buf);
        }
        if self.scramble {
            scramble(buf, offset, now_ns);
        }
    }

    /// The seed of the next buffer: a new one, or (dedupe) one used before.
    fn next_seed(&mut self) -> u64 {
        if self.dedupe > 0 && (self.rng.below(100) as u32) < self.dedupe {
            return match self.mode {
                DedupeMode::Repeat => self.last_seed,
                DedupeMode::WorkingSet => {
                    let i = self.rng.below(self.ws_pages);
                    self.ws_base ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                }
            };
        }
        let s = match self.mode {
            // working_set: unique writes are fresh data too (fio's buf_state).
            DedupeMode::Repeat | DedupeMode::WorkingSet => self.rng.next_u64(),
        };
        self.last_seed = s;
        s
    }
}

/// fio's small_content_scramble: in every 512 bytes, the offset goes into one of the eight
/// 64-byte lines (chosen by time and offset) and the time into the end of the first line.
fn scramble(buf: &mut [u8], offset: u64, now_ns: u64) {
    let (sec, nsec) = (now_ns / 1_000_000_000, now_ns % 1_000_000_000);
    let line = (((nsec ^ offset) & 7) << 6) as usize;
    let mut boff = offset;
    for block in buf.chunks_exact_mut(512) {
        block[line..line + 8].copy_from_slice(&boff.to_ne_bytes());
        block[48..56].copy_from_slice(&sec.to_ne_bytes());
        block[56..64].copy_from_slice(&nsec.to_ne_bytes());
        boff += 512;
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

    #[test]
    fn percentages_and_patterns() {
        let mut rng = Rng::new(1);
        let mut b = vec![1u8; 4096];
        fill_percentage(&mut rng, &mut b, 75, 4096, None);
        assert!(b[1024..].iter().all(|&x| x == 0));
        assert!(b[..1024].iter().filter(|&&x| x == 0).count() < 20);
        fill_percentage(&mut rng, &mut b, 50, 1024, Some(b"ab"));
        assert_eq!(&b[512..516], b"abab");
        assert_eq!(&b[1536..1540], b"abab");
        let mut p = vec![0u8; 7];
        fill_pattern(&mut p, b"xyz");
        assert_eq!(p, b"xyzxyzx");
    }
}
