//! `ftruncate`: every write is ftruncate(2) of the file to the write's offset, as fio's ftruncate
//! engine; no data moves and the I/O counts its full length (fio's FIO_FAKEIO). Only writes: the
//! input refuses other directions (fio fails the first such I/O with EINVAL).

use super::{sync_fd, Engine, Op, SyncOp};
use std::io;
use std::os::unix::io::RawFd;

pub(crate) struct Ftruncate {
    fds: Vec<RawFd>,
}

impl Ftruncate {
    /// `fds` stay owned by the caller and must outlive the engine.
    pub(crate) fn new(fds: Vec<RawFd>) -> Self {
        Ftruncate { fds }
    }
}

impl Engine for Ftruncate {
    #[inline]
    unsafe fn io(
        &mut self,
        file: usize,
        op: Op,
        _buf: *mut u8,
        len: usize,
        offset: u64,
    ) -> io::Result<usize> {
        if op != Op::Write {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: plain syscall on a descriptor the caller owns.
        let r = unsafe { libc::ftruncate(self.fds[file], offset as libc::off_t) };
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
