//! `posixaio`: POSIX AIO (aio_read/aio_write, glibc's thread pool) behind the queueing trait, as
//! fio's posixaio engine: each queued I/O is handed to aio_read/aio_write at submit (EAGAIN
//! means busy: reap first), completions are found by polling aio_error over the I/Os in flight
//! and waited for with aio_suspend, their result read with aio_return. glibc serves the requests
//! of one file descriptor in order, so the depth shows across files more than within one.

use super::{sync_fd, Op, QueueEngine, SyncOp};
use std::io;
use std::os::unix::io::RawFd;

pub(crate) struct PosixAio {
    fds: Vec<RawFd>,
    /// One control block per slot; boxed so their addresses never move while in flight.
    cbs: Box<[libc::aiocb]>,
    /// Per slot: the control block is with glibc (submitted, not yet reaped).
    busy: Box<[bool]>,
    /// Queued, not yet submitted, oldest first: (slot, op).
    pending: Vec<(u32, Op)>,
    /// Scratch list for aio_suspend, sized to the depth.
    wait: Vec<*const libc::aiocb>,
}

// SAFETY: the control blocks are owned by this struct; glibc's helper threads only touch the
// ones in flight, and the struct is used by one thread at a time.
unsafe impl Send for PosixAio {}

impl PosixAio {
    /// `fds` stay owned by the caller and must outlive the engine.
    pub(crate) fn new(fds: Vec<RawFd>, depth: u32) -> Self {
        let depth = depth.max(1) as usize;
        // SAFETY: aiocb is a plain C struct for which all-zero is a valid value.
        let zero: libc::aiocb = unsafe { std::mem::zeroed() };
        PosixAio {
            fds,
            cbs: vec![zero; depth].into_boxed_slice(),
            busy: vec![false; depth].into_boxed_slice(),
            pending: Vec::with_capacity(depth),
            wait: Vec::with_capacity(depth),
        }
    }

    /// Hands completed I/Os (up to `max`) to `on`; returns the count.
    fn collect<F: FnMut(u32, i64)>(&mut self, max: usize, on: &mut F) -> usize {
        let mut n = 0;
        for slot in 0..self.cbs.len() {
            if n == max {
                break;
            }
            if !self.busy[slot] {
                continue;
            }
            let cb = &mut self.cbs[slot];
            // SAFETY: the control block was submitted and is still owned by this engine.
            let err = unsafe { libc::aio_error(cb) };
            if err == libc::EINPROGRESS {
                continue;
            }
            // SAFETY: the request is complete; aio_return reads its result once.
            let ret = unsafe { libc::aio_return(cb) };
            self.busy[slot] = false;
            let res = match err {
                0 => ret as i64,
                libc::ECANCELED => 0,
                e => -(e as i64),
            };
            on(slot as u32, res);
            n += 1;
        }
        n
    }
}

impl Drop for PosixAio {
    fn drop(&mut self) {
        // glibc writes into a control block until its request finishes: cancel and wait for
        // any still in flight (the worker drains first, so normally there are none).
        for slot in 0..self.cbs.len() {
            if !self.busy[slot] {
                continue;
            }
            let cb: *mut libc::aiocb = &mut self.cbs[slot];
            // SAFETY: a submitted control block owned by this engine.
            unsafe { libc::aio_cancel((*cb).aio_fildes, cb) };
            // SAFETY: as above; the list holds one valid pointer.
            while unsafe { libc::aio_error(cb) } == libc::EINPROGRESS {
                let list = [cb as *const libc::aiocb];
                // SAFETY: as above.
                unsafe { libc::aio_suspend(list.as_ptr(), 1, std::ptr::null()) };
            }
            // SAFETY: complete now; releases glibc's record of it.
            unsafe { libc::aio_return(cb) };
        }
    }
}

impl QueueEngine for PosixAio {
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
        let cb = &mut self.cbs[slot as usize];
        cb.aio_fildes = self.fds[file];
        cb.aio_buf = buf.cast();
        cb.aio_nbytes = len;
        cb.aio_offset = offset as libc::off_t;
        cb.aio_reqprio = 0;
        cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
        self.pending.push((slot, op));
        Ok(())
    }

    fn submit(&mut self) -> io::Result<usize> {
        let mut n = 0;
        for &(slot, op) in &self.pending {
            let cb = &mut self.cbs[slot as usize];
            // SAFETY: the control block lives in `cbs` (stable address) and its buffer stays
            // valid until the slot is reaped (QueueEngine contract).
            let r = unsafe {
                match op {
                    Op::Read => libc::aio_read(cb),
                    Op::Write | Op::Trim => libc::aio_write(cb),
                }
            };
            if r != 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EAGAIN) {
                    break; // out of resources: reap first, as fio's FIO_Q_BUSY
                }
                if n == 0 {
                    return Err(e);
                }
                break; // report the ones taken; this one fails on the next submit
            }
            self.busy[slot as usize] = true;
            n += 1;
        }
        self.pending.drain(..n);
        Ok(n)
    }

    fn reap<F: FnMut(u32, i64)>(
        &mut self,
        min: usize,
        max: usize,
        timeout_ns: Option<u64>,
        on: &mut F,
    ) -> io::Result<usize> {
        let mut done = self.collect(max, on);
        let ts = timeout_ns.map(super::timespec);
        while done < min.min(max) {
            self.wait.clear();
            for (slot, cb) in self.cbs.iter().enumerate() {
                if self.busy[slot] {
                    self.wait.push(cb);
                }
            }
            if self.wait.is_empty() {
                break;
            }
            let tsp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const _);
            // SAFETY: `wait` holds pointers to submitted control blocks owned by this engine.
            let r = unsafe { libc::aio_suspend(self.wait.as_ptr(), self.wait.len() as i32, tsp) };
            if r != 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::EAGAIN) => {
                        // The timeout passed.
                        done += self.collect(max - done, on);
                        break;
                    }
                    _ => return Err(e),
                }
            }
            done += self.collect(max - done, on);
        }
        Ok(done)
    }

    fn sync(&mut self, file: usize, op: SyncOp) -> io::Result<()> {
        sync_fd(self.fds[file], op)
    }

    fn trim(&mut self, file: usize, offset: u64, len: usize) -> io::Result<usize> {
        super::trim::trim_fd(self.fds[file], offset, len)
    }
}
