//! `falloc`: every I/O is one fallocate(2) of its range, as fio's falloc engine: a read is
//! fallocate(FALLOC_FL_KEEP_SIZE), a write fallocate(0) (both allocate, never change data), a trim
//! punches a hole (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE), on block devices too. No data moves; the I/O counts
//! its full length. The files are opened read-write whatever `rw` says, as fio opens them.

use super::{sync_fd, Engine, Op, SyncOp};
use std::io;
use std::os::unix::io::RawFd;

pub(crate) struct Falloc {
    fds: Vec<RawFd>,
}

impl Falloc {
    /// `fds` (opened read-write) stay owned by the caller and must outlive the engine.
    pub(crate) fn new(fds: Vec<RawFd>) -> Self {
        Falloc { fds }
    }
}

impl Engine for Falloc {
    #[inline]
    unsafe fn io(
        &mut self,
        file: usize,
        op: Op,
        _buf: *mut u8,
        len: usize,
        offset: u64,
    ) -> io::Result<usize> {
        let mode = match op {
            Op::Read => libc::FALLOC_FL_KEEP_SIZE,
            Op::Write => 0,
            Op::Trim => return super::trim::punch_hole(self.fds[file], offset, len),
        };
        // SAFETY: plain syscall on a descriptor the caller owns; no memory is passed.
        let r = unsafe {
            libc::fallocate(
                self.fds[file],
                mode,
                offset as libc::off_t,
                len as libc::off_t,
            )
        };
        if r == 0 {
            Ok(len)
        } else {
            Err(io::Error::last_os_error())
        }
    }

    fn sync(&mut self, file: usize, op: SyncOp) -> io::Result<()> {
        sync_fd(self.fds[file], op)
    }
}
