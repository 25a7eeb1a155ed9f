//! I/O engines, one file each, behind one trait. The worker loop is generic over the engine,
//! so the per-I/O call is static and inlinable (no virtual call on the hot path).

pub(crate) mod falloc;
pub(crate) mod ftruncate;
pub(crate) mod io_uring;
pub(crate) mod libaio;
pub(crate) mod mmap;
pub(crate) mod null;
pub(crate) mod posixaio;
pub(crate) mod psync;
pub(crate) mod pvsync;
pub(crate) mod pvsync2;
pub(crate) mod rawsys;
pub(crate) mod sync;
pub(crate) mod trim;
pub(crate) mod vsync;

use std::io;
use std::os::unix::io::RawFd;

/// For callers that only need a queueing engine (`check`'s gitlab profile): io_uring where the
/// host allows it, else libaio, which queues the same way. Decided before anything is laid out.
/// Returns why io_uring was replaced.
pub(crate) fn io_uring_or_libaio(engine: &mut crate::model::IoEngine) -> Option<String> {
    if *engine != crate::model::IoEngine::IoUring {
        return None;
    }
    let why = io_uring::probe()?;
    *engine = crate::model::IoEngine::Libaio;
    Some(format!("{why}; using libaio instead"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Read,
    Write,
    /// A trim: synchronous engines do it in `io`; queueing engines in `QueueEngine::trim`
    /// (never queued).
    Trim,
}

impl Op {
    /// The operation of direction `dir` (DDIR_READ, DDIR_WRITE, DDIR_TRIM).
    #[inline]
    pub(crate) fn of_dir(dir: usize) -> Op {
        match dir {
            crate::model::DDIR_READ => Op::Read,
            crate::model::DDIR_WRITE => Op::Write,
            _ => Op::Trim,
        }
    }

    /// fio's name of the operation in error messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Trim => "trim",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SyncOp {
    Fsync,
    Fdatasync,
    /// sync_file_range(2) of `len` bytes at `offset` with `flags` (fio's `sync_file_range`);
    /// an empty range makes no call, as in fio.
    Range {
        offset: u64,
        len: u64,
        flags: u32,
    },
}

impl SyncOp {
    /// The name fio's error line and iogauge's failure use.
    pub(crate) fn name(self) -> &'static str {
        match self {
            SyncOp::Fsync => "fsync",
            SyncOp::Fdatasync => "fdatasync",
            SyncOp::Range { .. } => "sync_file_range",
        }
    }
}

/// A synchronous engine: each call performs one operation and returns when it is complete.
pub(crate) trait Engine: Send {
    /// One I/O of `len` bytes at `offset` of the job's file number `file`; returns bytes done.
    ///
    /// # Safety
    /// `buf` must be valid for reads and writes of `len` bytes for the duration of the call,
    /// aligned as O_DIRECT needs when the file was opened with it, and not used elsewhere
    /// meanwhile.
    unsafe fn io(
        &mut self,
        file: usize,
        op: Op,
        buf: *mut u8,
        len: usize,
        offset: u64,
    ) -> io::Result<usize>;

    /// fsync, fdatasync or sync_file_range of the job's file number `file`.
    fn sync(&mut self, file: usize, op: SyncOp) -> io::Result<()>;
}

/// A queueing engine: I/Os are queued into numbered slots (0..iodepth), submitted in the order
/// queued, and completed in any order. The worker owns the slots and their buffers; a slot is
/// reused only after its completion was reaped.
pub(crate) trait QueueEngine: Send {
    /// Prepare one I/O in `slot`; it is sent by the next [`QueueEngine::submit`]. The caller never
    /// has more than iodepth I/Os queued or in flight; an engine that still runs out of room
    /// says so with an error.
    ///
    /// # Safety
    /// `buf` must be valid for `len` bytes (aligned for O_DIRECT where needed) from this call
    /// until the slot's completion has been reaped; the kernel reads or writes it meanwhile, so
    /// it must neither be freed nor used for anything else until then.
    unsafe fn queue(
        &mut self,
        slot: u32,
        file: usize,
        op: Op,
        buf: *mut u8,
        len: usize,
        offset: u64,
    ) -> io::Result<()>;

    /// Called once on the worker's own thread before its first I/O (an io_uring ring is set up
    /// for a single issuer, and becomes this thread's here).
    fn start(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Submit queued I/Os, oldest first; returns how many the kernel took (0 = busy, reap first).
    fn submit(&mut self) -> io::Result<usize>;

    /// `submit`, for a caller that will then wait for `wait` completions anyway (its queue is
    /// full): an engine that can also wait in the same system call does (io_uring); the
    /// completions are then found by the next `reap` without entering the kernel again.
    fn submit_and_wait(&mut self, wait: usize) -> io::Result<usize> {
        let _ = wait;
        self.submit()
    }

    /// Wait until at least `min` completions are available (or `timeout_ns` passed, if given),
    /// then hand up to `max` of them to `on(slot, result)`, where result is bytes done or a
    /// negative errno. Returns the count.
    fn reap<F: FnMut(u32, i64)>(
        &mut self,
        min: usize,
        max: usize,
        timeout_ns: Option<u64>,
        on: &mut F,
    ) -> io::Result<usize>;

    /// fsync, fdatasync or sync_file_range of file `file`, synchronously (the caller drains the queue first).
    fn sync(&mut self, file: usize, op: SyncOp) -> io::Result<()>;

    /// The I/O priority (class << 13 | level; 0 = the thread's) of the I/Os queued from now on
    /// (fio's cmdprio_*). Called only by jobs that use command priorities.
    fn set_prio(&mut self, _prio: u16) {}
    /// A trim of `len` bytes at `offset` of file `file`, synchronously (the caller drains the
    /// queue first), as fio's queueing engines do (FIO_ASYNCIO_SYNC_TRIM); returns `len`.
    fn trim(&mut self, file: usize, offset: u64, len: usize) -> io::Result<usize>;
}

/// A nanosecond count (a duration, or a CLOCK_MONOTONIC instant) as a `timespec`.
pub(crate) fn timespec(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

/// Shared helper: fsync, fdatasync or sync_file_range on a raw fd.
pub(crate) fn sync_fd(fd: RawFd, op: SyncOp) -> io::Result<()> {
    // SAFETY: plain syscalls on a descriptor the engine owns for the job's lifetime.
    let r = unsafe {
        match op {
            SyncOp::Fsync => libc::fsync(fd),
            SyncOp::Fdatasync => libc::fdatasync(fd),
            SyncOp::Range { len: 0, .. } => 0,
            SyncOp::Range { offset, len, flags } => {
                libc::sync_file_range(fd, offset as i64, len as i64, flags)
            }
        }
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Turn a read/write return value into a Result.
#[inline]
pub(crate) fn check(n: isize) -> io::Result<usize> {
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}
