//! `libaio`: Linux native AIO through the raw system calls (io_setup, io_submit, io_getevents).
//! Only O_DIRECT I/O is asynchronous; buffered I/O completes inside io_submit, as with fio.

use super::{sync_fd, Op, QueueEngine, SyncOp};
use std::io;
use std::os::unix::io::RawFd;

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;

/// `struct iocb` from linux/aio_abi.h (little-endian field order). All fields are kernel ABI,
/// including the ones iogauge never sets.
#[allow(dead_code)]
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    data: u64,
    key: u32,
    rw_flags: i32,
    opcode: u16,
    reqprio: i16,
    fildes: u32,
    buf: u64,
    nbytes: u64,
    offset: i64,
    reserved2: u64,
    flags: u32,
    resfd: u32,
}

/// `struct io_event`.
#[allow(dead_code)]
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

pub(crate) struct Aio {
    ctx: libc::c_ulong,
    fds: Vec<RawFd>,
    /// One control block per slot; their addresses are stable (never reallocated).
    iocbs: Box<[Iocb]>,
    /// Queued, not yet submitted, oldest first.
    pending: Vec<*mut Iocb>,
    events: Box<[IoEvent]>,
    /// aio_reqprio of the next iocbs (cmdprio; 0 = the thread's priority).
    prio: u16,
}

// SAFETY: the raw pointers point into `iocbs`, which this struct owns; the context is used by one
// thread at a time.
unsafe impl Send for Aio {}

fn sys(r: libc::c_long) -> io::Result<usize> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

impl Aio {
    pub(crate) fn new(fds: Vec<RawFd>, depth: u32) -> io::Result<Self> {
        let depth = depth.max(1) as usize;
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes the new context id into `ctx`.
        sys(unsafe { libc::syscall(libc::SYS_io_setup, depth as libc::c_long, &mut ctx) })?;
        Ok(Aio {
            ctx,
            fds,
            iocbs: vec![Iocb::default(); depth].into_boxed_slice(),
            pending: Vec::with_capacity(depth),
            events: vec![IoEvent::default(); depth].into_boxed_slice(),
            prio: 0,
        })
    }
}

impl Drop for Aio {
    fn drop(&mut self) {
        // SAFETY: destroys the context created in new(); waits for its outstanding I/O.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
    }
}

impl QueueEngine for Aio {
    fn set_prio(&mut self, prio: u16) {
        self.prio = prio;
    }

    #[inline]
    unsafe fn queue(
        &mut self,
        slot: u32,
        file: usize,
        op: Op,
        buf: *mut u8,
        len: usize,
        offset: u64,
    ) -> io::Result<()> {
        if op == Op::Trim {
            return Err(io::Error::from_raw_os_error(libc::EOPNOTSUPP));
        }
        let cb = &mut self.iocbs[slot as usize];
        *cb = Iocb {
            data: slot as u64,
            opcode: match op {
                Op::Read => IOCB_CMD_PREAD,
                Op::Write | Op::Trim => IOCB_CMD_PWRITE,
            },
            fildes: self.fds[file] as u32,
            buf: buf as u64,
            nbytes: len as u64,
            offset: offset as i64,
            reqprio: self.prio as i16,
            // IOCB_FLAG_IOPRIO: the kernel takes aio_reqprio only with this flag.
            flags: if self.prio != 0 { 1 << 1 } else { 0 },
            ..Iocb::default()
        };
        self.pending.push(cb);
        Ok(())
    }

    #[inline]
    fn submit(&mut self) -> io::Result<usize> {
        if self.pending.is_empty() {
            return Ok(0);
        }
        loop {
            // SAFETY: `pending` holds valid iocb pointers into `iocbs` whose buffers stay valid
            // until their completions are reaped.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    self.pending.len() as libc::c_long,
                    self.pending.as_ptr(),
                )
            };
            match sys(r) {
                Ok(n) => {
                    self.pending.drain(..n);
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => return Ok(0),
                Err(e) => return Err(e),
            }
        }
    }

    #[inline]
    fn reap<F: FnMut(u32, i64)>(
        &mut self,
        min: usize,
        max: usize,
        timeout_ns: Option<u64>,
        on: &mut F,
    ) -> io::Result<usize> {
        let mut ts = timeout_ns.map(super::timespec);
        let tsp = ts
            .as_mut()
            .map_or(std::ptr::null_mut(), |t| t as *mut libc::timespec);
        let max = max.min(self.events.len());
        let min = min.min(max);
        let n = loop {
            // SAFETY: `events` has room for `max` entries; a null timeout waits for `min`, a
            // timespec (relative) bounds the wait.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min as libc::c_long,
                    max as libc::c_long,
                    self.events.as_mut_ptr(),
                    tsp,
                )
            };
            match sys(r) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        for ev in &self.events[..n] {
            on(ev.data as u32, ev.res);
        }
        Ok(n)
    }

    fn sync(&mut self, file: usize, op: SyncOp) -> io::Result<()> {
        sync_fd(self.fds[file], op)
    }

    fn trim(&mut self, file: usize, offset: u64, len: usize) -> io::Result<usize> {
        super::trim::trim_fd(self.fds[file], offset, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abi_sizes_match_the_kernel() {
        assert_eq!(std::mem::size_of::<Iocb>(), 64);
        assert_eq!(std::mem::size_of::<IoEvent>(), 32);
    }
}
