//! `libaio`: Linux native AIO through the raw system calls (io_setup, io_submit, io_getevents).
//! Only O_DIRECT I/O is asynchronous; buffered I/O completes inside io_submit, as with fio.

use super::{sync_fd, Op, QueueEngine, SyncOp};
use std::io;
use std::os::unix::io::RawFd;
use std::sync::atomic::{AtomicU32, Ordering};

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

/// The header of the completion ring the kernel maps at the context's address (`struct
/// aio_ring` in fs/aio.c); the events follow it.
#[allow(dead_code)]
#[repr(C)]
struct AioRing {
    id: u32,
    nr: u32,
    head: AtomicU32,
    tail: AtomicU32,
    magic: u32,
    compat_features: u32,
    incompat_features: u32,
    header_length: u32,
}

const AIO_RING_MAGIC: u32 = 0xa10a_10a1;

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
    /// Whether completions can be taken from the mapped ring without io_getevents.
    user_ring: bool,
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
            user_ring: false,
        })
        .map(|mut a| {
            // SAFETY: the context id is the address of the ring the kernel mapped for it, which
            // lives until io_destroy; only its header is read here.
            let ring = unsafe { &*(a.ctx as *const AioRing) };
            a.user_ring = ring.magic == AIO_RING_MAGIC && ring.incompat_features == 0;
            a
        })
    }

    /// Takes up to `max` completions straight from the mapped ring (fio's `userspace_reap`), as
    /// io_getevents would, without a system call. Only this thread consumes the ring; the kernel
    /// only appends (it publishes `tail` after the event) and counts what the moved `head`
    /// freed when it next needs room.
    #[inline]
    fn reap_ring<F: FnMut(u32, i64)>(&mut self, max: usize, on: &mut F) -> usize {
        if !self.user_ring {
            return 0;
        }
        let ring = self.ctx as *const AioRing;
        // SAFETY: see `new`; the header is followed by `nr` io_events.
        let (hdr, events) = unsafe { (&*ring, ring.add(1).cast::<IoEvent>()) };
        let nr = hdr.nr;
        let mut head = hdr.head.load(Ordering::Relaxed);
        let tail = hdr.tail.load(Ordering::Acquire);
        let mut got = 0;
        while head != tail && got < max {
            // SAFETY: head < nr indexes an event the kernel published before `tail`.
            let ev = unsafe { events.add(head as usize).read_volatile() };
            on(ev.data as u32, ev.res);
            head = (head + 1) % nr;
            got += 1;
        }
        if got > 0 {
            hdr.head.store(head, Ordering::Release);
        }
        got
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
        // The ring is all the kernel has completed: when it holds enough, no system call.
        let got = self.reap_ring(max, on);
        if self.user_ring && got >= min {
            return Ok(got);
        }
        let (min, max) = (min - got, max - got);
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
        Ok(got + n)
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
    fn completions_come_from_the_mapped_ring_and_io_getevents_alike() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 64 << 10]).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        use std::os::unix::io::AsRawFd;
        let mut aio = Aio::new(vec![f.as_raw_fd()], 4).unwrap();
        assert!(
            aio.user_ring,
            "this kernel's AIO ring has the layout iogauge reads"
        );
        let mut bufs = vec![[0u8; 4096]; 4];
        for round in 0..3u64 {
            for (slot, b) in bufs.iter_mut().enumerate() {
                let off = (round * 4 + slot as u64) * 4096;
                // SAFETY: each buffer outlives its completion, reaped below.
                unsafe { aio.queue(slot as u32, 0, Op::Read, b.as_mut_ptr(), 4096, off) }.unwrap();
            }
            assert_eq!(aio.submit().unwrap(), 4);
            let mut seen = Vec::new();
            // Buffered reads complete inside io_submit: all four are in the ring already, and
            // a passive look (min 0) takes them; the last round waits through the syscall path
            // (min 4), which must still see every completion once.
            let min = if round == 2 { 4 } else { 0 };
            let n = aio
                .reap(min, 4, None, &mut |slot, res| seen.push((slot, res)))
                .unwrap();
            assert_eq!(n, 4);
            seen.sort();
            assert_eq!(seen, (0..4).map(|s| (s, 4096)).collect::<Vec<_>>());
            assert!(bufs.iter().all(|b| b.iter().all(|&x| x == 7)));
            assert_eq!(
                aio.reap(0, 4, None, &mut |_, _| panic!("reaped twice"))
                    .unwrap(),
                0
            );
        }
    }

    #[test]
    fn abi_sizes_match_the_kernel() {
        assert_eq!(std::mem::size_of::<Iocb>(), 64);
        assert_eq!(std::mem::size_of::<IoEvent>(), 32);
    }
}
