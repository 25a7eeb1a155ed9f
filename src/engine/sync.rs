//! `sync`: read(2)/write(2) on the file position, with lseek(2) only when the next offset is not
//! where the previous I/O ended (as fio's sync engine does).

use super::{check, sync_fd, Engine, Op, SyncOp};
use std::io;
use std::os::unix::io::RawFd;

pub(crate) struct Sync {
    fds: Vec<RawFd>,
    /// The kernel's file position per file, as far as we know (u64::MAX = unknown).
    pos: Vec<u64>,
}

impl Sync {
    /// `fds` stay owned by the caller and must outlive the engine.
    pub(crate) fn new(fds: Vec<RawFd>) -> Self {
        let n = fds.len();
        Sync {
            fds,
            pos: vec![u64::MAX; n],
        }
    }
}

impl Engine for Sync {
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
        if op == Op::Trim {
            return super::trim::trim_fd(fd, offset, len);
        }
        if self.pos[file] != offset {
            // SAFETY: plain syscall on an owned descriptor.
            let r = unsafe { libc::lseek(fd, offset as libc::off_t, libc::SEEK_SET) };
            if r < 0 {
                self.pos[file] = u64::MAX;
                return Err(io::Error::last_os_error());
            }
        }
        // SAFETY: buf is valid for len bytes (Engine contract).
        let n = unsafe {
            match op {
                Op::Read => libc::read(fd, buf.cast(), len),
                Op::Write | Op::Trim => libc::write(fd, buf.cast(), len),
            }
        };
        match check(n) {
            Ok(done) => {
                self.pos[file] = offset + done as u64;
                Ok(done)
            }
            Err(e) => {
                self.pos[file] = u64::MAX;
                Err(e)
            }
        }
    }

    fn sync(&mut self, file: usize, op: SyncOp) -> io::Result<()> {
        sync_fd(self.fds[file], op)
    }
}
