//! `psync`: pread(2)/pwrite(2) at an explicit offset, one system call per I/O.

use super::{rawsys, sync_fd, Engine, Op, SyncOp};
use std::io;
use std::os::unix::io::RawFd;

pub(crate) struct Psync {
    fds: Vec<RawFd>,
}

impl Psync {
    /// `fds` stay owned by the caller and must outlive the engine.
    pub(crate) fn new(fds: Vec<RawFd>) -> Self {
        Psync { fds }
    }
}

impl Engine for Psync {
    #[inline]
    unsafe fn io(
        &mut self,
        file: usize,
        op: Op,
        buf: *mut u8,
        len: usize,
        offset: u64,
    ) -> io::Result<usize> {
        let fd = self.fds[file];
        // The system call itself rather than glibc's wrapper: in a threaded process the
        // wrapper makes every call a cancellation point (two calls around the system call,
        // about 2 % of a page-cache read here); no worker is ever cancelled.
        let nr = match op {
            Op::Read => libc::SYS_pread64,
            Op::Write => libc::SYS_pwrite64,
            Op::Trim => return super::trim::trim_fd(fd, offset, len),
        };
        let args = [fd as usize, buf as usize, len, offset as usize, 0, 0];
        // SAFETY: buf is valid for len bytes (Engine contract); pread64/pwrite64 take
        // (fd, buf, count, offset) and touch nothing else.
        rawsys::result(unsafe { rawsys::syscall6(nr, args) })
    }

    fn sync(&mut self, file: usize, op: SyncOp) -> io::Result<()> {
        sync_fd(self.fds[file], op)
    }
}
