//! `pvsync2`: preadv2(2)/pwritev2(2) of one iovec at an explicit offset with per-I/O flags, as
//! fio's pvsync2 engine: `hipri` sets RWF_HIPRI (polled completion) on `hipri_percentage` percent
//! of the I/Os, `nowait` sets RWF_NOWAIT (EAGAIN instead of blocking, which ends the job with that
//! error, as in fio).

use super::{check, sync_fd, Engine, Op, SyncOp};
use std::io;
use std::os::unix::io::RawFd;

pub(crate) struct Pvsync2 {
    fds: Vec<RawFd>,
    /// Percent of I/Os with RWF_HIPRI (0 when hipri is off).
    hipri_pct: u32,
    /// Flags every I/O gets.
    flags: libc::c_int,
    /// xorshift64 state for the hipri draw.
    rand: u64,
}

impl Pvsync2 {
    /// `fds` stay owned by the caller and must outlive the engine.
    pub(crate) fn new(fds: Vec<RawFd>, hipri: bool, hipri_percentage: u32, nowait: bool) -> Self {
        Pvsync2 {
            fds,
            hipri_pct: if hipri { hipri_percentage } else { 0 },
            flags: if nowait { libc::RWF_NOWAIT } else { 0 },
            rand: 0x9E37_79B9_7F4A_7C15,
        }
    }

    /// Whether this I/O gets RWF_HIPRI: fio's rand_between(1, 100) <= hipri_percentage.
    #[inline]
    fn hipri(&mut self) -> bool {
        match self.hipri_pct {
            0 => false,
            100 => true,
            p => {
                let mut x = self.rand;
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                self.rand = x;
                (x % 100) < p as u64
            }
        }
    }
}

impl Engine for Pvsync2 {
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
        let mut flags = self.flags;
        if self.hipri() {
            flags |= libc::RWF_HIPRI;
        }
        let iov = libc::iovec {
            iov_base: buf.cast(),
            iov_len: len,
        };
        // SAFETY: the iovec covers buf, valid for len bytes (Engine contract).
        let n = unsafe {
            match op {
                Op::Read => libc::preadv2(fd, &iov, 1, offset as libc::off_t, flags),
                Op::Write => libc::pwritev2(fd, &iov, 1, offset as libc::off_t, flags),
                Op::Trim => return super::trim::trim_fd(fd, offset, len),
            }
        };
        check(n)
    }

    fn sync(&mut self, file: usize, op: SyncOp) -> io::Result<()> {
        sync_fd(self.fds[file], op)
    }
}
