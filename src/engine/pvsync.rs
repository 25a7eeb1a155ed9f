//! `pvsync`: preadv(2)/pwritev(2) of one iovec at an explicit offset (fio's pvsync engine).

use super::{check, sync_fd, Engine, Op, SyncOp};
use std::io;
use std::os::unix::io::RawFd;

pub(crate) struct Pvsync {
    fds: Vec<RawFd>,
}

impl Pvsync {
    /// `fds` stay owned by the caller and must outlive the engine.
    pub(crate) fn new(fds: Vec<RawFd>) -> Self {
        Pvsync { fds }
    }
}

impl Engine for Pvsync {
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
        let iov = libc::iovec {
            iov_base: buf.cast(),
            iov_len: len,
        };
        // SAFETY: the iovec covers buf, valid for len bytes (Engine contract).
        let n = unsafe {
            match op {
                Op::Read => libc::preadv(fd, &iov, 1, offset as libc::off_t),
                Op::Write => libc::pwritev(fd, &iov, 1, offset as libc::off_t),
                Op::Trim => return super::trim::trim_fd(fd, offset, len),
            }
        };
        check(n)
    }

    fn sync(&mut self, file: usize, op: SyncOp) -> io::Result<()> {
        sync_fd(self.fds[file], op)
    }
}
