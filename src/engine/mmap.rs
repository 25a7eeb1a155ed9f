//! `mmap`: reads and writes are memcpy from and to a shared mapping of the file, as fio's mmap
//! engine: the whole file is mapped when it fits in 1 GiB / nrfiles, else a window of that size
//! starting at the I/O (remapped when an I/O falls outside it). The mapping is advised
//! SEQUENTIAL or RANDOM by the job's pattern (unless fadvise_hint=0), then DONTNEED. fsync and
//! fdatasync are msync(MS_SYNC) of the mapping; with direct=1 every I/O is followed by msync and
//! DONTNEED of its pages ("not really direct", as fio says).
//!
//! Differs from fio on purpose: fio maps at the first I/O (untimed, in its prep step); here the
//! first mapping is made before the job starts, and only window remaps (files above the 1 GiB
//! share) happen inside a timed I/O. fio's mapping ignores `offset=` when it computes the address
//! of an I/O (it maps from the file's start but subtracts the job's offset); here an I/O always
//! touches the file bytes at its offset.

use super::{Engine, Op, SyncOp};
use std::io;
use std::os::unix::io::RawFd;

/// fio's MMAP_TOTAL_SZ: all of a job's mappings together.
const MMAP_TOTAL: u64 = 1 << 30;
const PAGE: u64 = 4096;

struct Map {
    fd: RawFd,
    /// File length (bytes).
    len: u64,
    ptr: *mut u8,
    /// File offset and length of the current mapping (len 0 = none).
    off: u64,
    size: u64,
}

pub(crate) struct Mmap {
    maps: Vec<Map>,
    prot: libc::c_int,
    /// posix_madvise advice for new mappings (None for fadvise_hint=0).
    advice: Option<libc::c_int>,
    direct: bool,
    /// Largest mapping per file.
    window: u64,
}

// SAFETY: the mappings are owned by this struct and used by one thread at a time.
unsafe impl Send for Mmap {}

/// The job settings the engine needs.
pub(crate) struct MmapOptions {
    /// The job writes: map PROT_WRITE (and PROT_READ when it also reads).
    pub writes: bool,
    /// The job reads.
    pub reads: bool,
    /// Random offsets: POSIX_MADV_RANDOM, else SEQUENTIAL.
    pub random: bool,
    /// fadvise_hint is not 0: advise the mapping.
    pub advise: bool,
    /// direct=1: msync and drop each I/O's pages after it.
    pub direct: bool,
}

impl Mmap {
    /// Maps every file (or its first window). `fds` stay owned by the caller and must outlive
    /// the engine.
    pub(crate) fn new(fds: Vec<RawFd>, o: MmapOptions) -> io::Result<Self> {
        let window = (MMAP_TOTAL / fds.len().max(1) as u64) & !(PAGE - 1);
        let mut prot = 0;
        if o.reads || !o.writes {
            prot |= libc::PROT_READ;
        }
        if o.writes {
            prot |= libc::PROT_WRITE;
        }
        let mut m = Mmap {
            maps: Vec::with_capacity(fds.len()),
            prot,
            advice: o.advise.then_some(if o.random {
                libc::POSIX_MADV_RANDOM
            } else {
                libc::POSIX_MADV_SEQUENTIAL
            }),
            direct: o.direct,
            window: window.max(PAGE),
        };
        for fd in fds {
            // SAFETY: plain syscall on a descriptor the caller owns.
            let end = unsafe { libc::lseek(fd, 0, libc::SEEK_END) };
            if end < 0 {
                return Err(io::Error::last_os_error());
            }
            m.maps.push(Map {
                fd,
                len: end as u64,
                ptr: std::ptr::null_mut(),
                off: 0,
                size: 0,
            });
            let i = m.maps.len() - 1;
            if end > 0 {
                m.map_at(i, 0)?;
            }
        }
        Ok(m)
    }

    /// Replaces file `i`'s mapping by one that starts at the page holding `offset`.
    fn map_at(&mut self, i: usize, offset: u64) -> io::Result<()> {
        self.unmap(i);
        let m = &mut self.maps[i];
        let off = offset & !(PAGE - 1);
        let size = m.len.saturating_sub(off).min(self.window);
        if size == 0 {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: a new shared mapping of the caller's descriptor; the kernel picks the address.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size as usize,
                self.prot,
                libc::MAP_SHARED,
                m.fd,
                off as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        m.ptr = p.cast();
        m.off = off;
        m.size = size;
        if let Some(a) = self.advice {
            // SAFETY: the range is the mapping just made.
            let r = unsafe { libc::posix_madvise(p, size as usize, a) };
            if r != 0 {
                return Err(io::Error::from_raw_os_error(r));
            }
        }
        // SAFETY: as above.
        let r = unsafe { libc::posix_madvise(p, size as usize, libc::POSIX_MADV_DONTNEED) };
        if r != 0 {
            return Err(io::Error::from_raw_os_error(r));
        }
        Ok(())
    }

    fn unmap(&mut self, i: usize) {
        let m = &mut self.maps[i];
        if m.size > 0 {
            // SAFETY: ptr/size are a mapping this engine made and nothing refers to it any more.
            unsafe { libc::munmap(m.ptr.cast(), m.size as usize) };
            m.size = 0;
            m.ptr = std::ptr::null_mut();
        }
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        for i in 0..self.maps.len() {
            self.unmap(i);
        }
    }
}

fn ok_or_errno(r: libc::c_int) -> io::Result<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl Engine for Mmap {
    #[inline]
    unsafe fn io(
        &mut self,
        file: usize,
        op: Op,
        buf: *mut u8,
        len: usize,
        offset: u64,
    ) -> io::Result<usize> {
        if op == Op::Trim {
            // fio's mmap engine trims through the descriptor (do_io_u_trim).
            return super::trim::trim_fd(self.maps[file].fd, offset, len);
        }
        let end = offset + len as u64;
        let m = &self.maps[file];
        if end > m.len {
            // Beyond the end of the file a mapping faults (SIGBUS); fio's engine does not extend.
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        if len as u64 > self.window {
            return Err(io::Error::other("bs too big for the mmap engine"));
        }
        if offset < m.off || end > m.off + m.size {
            self.map_at(file, offset)?;
        }
        let m = &self.maps[file];
        // SAFETY: [offset, end) lies inside the mapping (checked above), which is at least as
        // long as the file's bytes it maps; buf is valid for len bytes (Engine contract) and does
        // not overlap a file mapping.
        let at = unsafe { m.ptr.add((offset - m.off) as usize) };
        // SAFETY: as above.
        unsafe {
            match op {
                Op::Read => std::ptr::copy_nonoverlapping(at, buf, len),
                Op::Write | Op::Trim => std::ptr::copy_nonoverlapping(buf, at, len),
            }
        }
        if self.direct {
            // Page-aligned start as msync needs (bs is a page multiple when direct, see input).
            let skew = (offset - m.off) as usize % PAGE as usize;
            // SAFETY: the range lies inside the mapping.
            let (p, l) = unsafe { (at.sub(skew), len + skew) };
            // SAFETY: as above.
            ok_or_errno(unsafe { libc::msync(p.cast(), l, libc::MS_SYNC) })?;
            // SAFETY: as above.
            let r = unsafe { libc::posix_madvise(p.cast(), l, libc::POSIX_MADV_DONTNEED) };
            if r != 0 {
                return Err(io::Error::from_raw_os_error(r));
            }
        }
        Ok(len)
    }

    /// msync(MS_SYNC) of the file's mapping, for fsync and fdatasync alike (fio's mmap engine).
    fn sync(&mut self, file: usize, _op: SyncOp) -> io::Result<()> {
        let m = &self.maps[file];
        if m.size == 0 {
            return Ok(());
        }
        // SAFETY: the file's current mapping.
        ok_or_errno(unsafe { libc::msync(m.ptr.cast(), m.size as usize, libc::MS_SYNC) })
    }
}
