//! `psync`: pread(2)/pwrite(2) at an explicit offset, one system call per I/O.

use super::{check, sync_fd, Engine, Op, SyncOp};
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
        // SAFETY: buf is valid for len bytes (Engine contract).
        let n = unsafe {
            match op {
                Op::Read => libc::pread(fd, buf.cast(), len, offset as libc::off_t),
                Op::Write => libc::pwrite(fd, buf.cast(), len, offset as libc::off_t),
                Op::Trim => return super::trim::trim_fd(fd, offset, len),
            }
        };
        check(n)
    }

    fn sync(&mut self, file: usize, op: SyncOp) -> io::Result<()> {
        sync_fd(self.fds[file], op)
    }
}
