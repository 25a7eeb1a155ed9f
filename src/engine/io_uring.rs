//! `io_uring`: one ring per job instance, `iodepth` slots. Completions are read straight from
//! the completion ring, so the worker can timestamp each one as it is reaped.

use super::{sync_fd, Op, QueueEngine, SyncOp};
use io_uring::{opcode, squeue, types, IoUring};
use std::io;
use std::os::unix::io::{AsRawFd, RawFd};

/// io_uring settings from the job (`fixedbufs`, `registerfiles`, `sqthread_poll` and its CPU,
/// `hipri`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct UringOptions {
    pub fixedbufs: bool,
    pub registerfiles: bool,
    pub sqthread_poll: bool,
    /// The CPU of the polling thread (fio `sqthread_poll_cpu`).
    pub sqthread_poll_cpu: Option<u32>,
    pub hipri: bool,
    /// IOSQE_ASYNC on every N-th entry (fio `force_async`); 0 never.
    pub force_async: u32,
}

/// linux/io_uring.h: wait for completions; the argument is an io_uring_getevents_arg.
const IORING_ENTER_GETEVENTS: u32 = 1;
const IORING_ENTER_EXT_ARG: u32 = 1 << 3;
/// The fd argument is an index into the task's registered rings (Linux 5.18+).
const IORING_ENTER_REGISTERED_RING: u32 = 1 << 4;
const IORING_REGISTER_RING_FDS: libc::c_uint = 20;
const IORING_UNREGISTER_RING_FDS: libc::c_uint = 21;

/// `struct io_uring_rsrc_update`: one ring fd to (un)register.
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

/// `struct io_uring_getevents_arg` (Linux 5.11+): a wait timeout without a timeout SQE.
#[repr(C)]
struct GeteventsArg {
    sigmask: u64,
    sigmask_sz: u32,
    pad: u32,
    ts: u64,
}

pub(crate) struct Uring {
    ring: IoUring,
    fds: Vec<RawFd>,
    opts: UringOptions,
    /// Entries pushed since the last submit.
    unsubmitted: usize,
    /// The SQE ioprio of the next entries (cmdprio; 0 = the task's priority).
    prio: u16,
    /// Set up with IORING_SETUP_DEFER_TASKRUN: completions reach the ring only when this
    /// thread enters the kernel with GETEVENTS, so `submit` asks for them too.
    deferred: bool,
    /// What `enter` passes as the ring: its fd, or after `start` registered it on the worker's
    /// thread, the index (with IORING_ENTER_REGISTERED_RING in `enter_flags`). The kernel then
    /// skips the fd lookup, whose reference count a multi-threaded process pays on every call
    /// (fio's single-threaded job processes do not).
    enter_fd: i32,
    enter_flags: u32,
    /// The thread that registered the ring (registrations are per thread), 0 when none.
    registered_on: libc::pid_t,
    /// Entries prepared since the last one forced async (fio's `prepped`).
    prepped: u32,
}

/// Why io_uring cannot be used here, in words that name the fix.
pub(crate) fn unavailable_reason(e: &io::Error) -> Option<String> {
    let disabled = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| s != "0");
    match e.raw_os_error() {
        Some(libc::ENOSYS) => Some(
            "io_uring is not available: this kernel has no io_uring (ENOSYS, or a seccomp \
             profile hides it); use --ioengine=libaio"
                .into(),
        ),
        Some(libc::EPERM) | Some(libc::EACCES) => Some(match disabled {
            Some(v) => format!(
                "io_uring is disabled on this host (sysctl kernel.io_uring_disabled={v}); set it \
                 to 0 or use --ioengine=libaio"
            ),
            None => "io_uring is not permitted here (EPERM): container runtimes block it by \
                     default (Docker's seccomp profile; run with a profile that allows \
                     io_uring_setup) or sysctl kernel.io_uring_disabled is set; use \
                     --ioengine=libaio"
                .into(),
        }),
        _ => None,
    }
}

/// Whether this host lets iogauge set up a ring at all (None) or why not.
pub(crate) fn probe() -> Option<String> {
    match IoUring::new(1) {
        Ok(_) => None,
        Err(e) => {
            Some(unavailable_reason(&e).unwrap_or_else(|| format!("io_uring setup failed: {e}")))
        }
    }
}

impl Uring {
    /// A ring for `depth` I/Os on `fds`. With `fixedbufs`, `bufs` (one per slot) are registered.
    pub(crate) fn new(
        fds: Vec<RawFd>,
        depth: u32,
        opts: UringOptions,
        bufs: &[(*mut u8, usize)],
    ) -> io::Result<Self> {
        let entries = depth.max(1).next_power_of_two();
        let build = |deferred: bool| {
            let mut b = IoUring::builder();
            if opts.sqthread_poll {
                b.setup_sqpoll(1000);
                if let Some(cpu) = opts.sqthread_poll_cpu {
                    b.setup_sqpoll_cpu(cpu);
                }
            }
            if opts.hipri {
                b.setup_iopoll();
            }
            if deferred {
                // As fio 3.33 sets up its rings where the kernel has these (6.1+): completions
                // are posted when the worker asks for them, not by interrupting it (an IPI each,
                // costly in a VM). The ring is one thread's, enabled on it by `start`.
                b.setup_coop_taskrun()
                    .setup_single_issuer()
                    .setup_defer_taskrun()
                    .setup_r_disabled();
            }
            b.build(entries)
        };
        // A kernel polling thread submits for us, so it cannot be a single issuer.
        let (ring, deferred) = match opts.sqthread_poll {
            false => match build(true) {
                Ok(r) => (r, true),
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => (build(false)?, false),
                Err(e) => return Err(e),
            },
            true => (build(false)?, false),
        };
        if opts.fixedbufs {
            let iov: Vec<libc::iovec> = bufs
                .iter()
                .map(|&(p, len)| libc::iovec {
                    iov_base: p.cast(),
                    iov_len: len,
                })
                .collect();
            // SAFETY: the buffers are owned by the worker and outlive the ring (dropped after it).
            unsafe { ring.submitter().register_buffers(&iov)? };
        }
        if opts.registerfiles {
            ring.submitter().register_files(&fds)?;
        }
        let enter_fd = ring.as_raw_fd();
        Ok(Uring {
            ring,
            fds,
            opts,
            enter_fd,
            enter_flags: 0,
            registered_on: 0,
            unsubmitted: 0,
            prepped: 0,
            prio: 0,
            deferred,
        })
    }

    /// io_uring_enter(2) on this ring (its registered index once `start` has run).
    ///
    /// # Safety
    /// `arg`, when given, is what `flags` says it is (IORING_ENTER_EXT_ARG: a getevents arg).
    #[inline]
    unsafe fn enter(
        &self,
        to_submit: u32,
        min_complete: u32,
        flags: u32,
        arg: Option<&GeteventsArg>,
    ) -> io::Result<usize> {
        let (ptr, size) = match arg {
            Some(a) => (
                a as *const GeteventsArg,
                std::mem::size_of::<GeteventsArg>(),
            ),
            None => (std::ptr::null(), 0),
        };
        let args = [
            self.enter_fd as usize,
            to_submit as usize,
            min_complete as usize,
            (flags | self.enter_flags) as usize,
            ptr as usize,
            size,
        ];
        // SAFETY: the caller vouches for arg (# Safety); the ring and its index stay valid
        // while self lives.
        super::rawsys::result(unsafe { super::rawsys::syscall6(libc::SYS_io_uring_enter, args) })
    }

    /// Registers the ring's fd with the calling thread (it must be the thread that enters). A
    /// kernel without ring registration keeps the plain fd.
    fn register_ring_fd(&mut self) {
        let mut up = RsrcUpdate {
            offset: u32::MAX,
            resv: 0,
            data: self.ring.as_raw_fd() as u64,
        };
        // SAFETY: a valid io_uring_rsrc_update for one entry; the kernel writes the index back.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_uring_register,
                self.ring.as_raw_fd(),
                IORING_REGISTER_RING_FDS,
                &mut up as *mut RsrcUpdate,
                1,
            )
        };
        if r == 1 {
            self.enter_fd = up.offset as i32;
            self.enter_flags = IORING_ENTER_REGISTERED_RING;
            // SAFETY: gettid has no preconditions.
            self.registered_on = unsafe { libc::gettid() };
        }
    }

    /// Submits what is queued and waits for `wait` completions in the same call.
    #[inline]
    fn submit_waiting(&mut self, wait: u32) -> io::Result<usize> {
        if self.unsubmitted == 0 {
            return Ok(0);
        }
        let busy = |e: &io::Error| matches!(e.raw_os_error(), Some(libc::EBUSY | libc::EAGAIN));
        let to_submit = self.unsubmitted as u32;
        let submitted = || match self.deferred || wait > 0 {
            // With GETEVENTS the same call posts the completions that arrived since the last
            // one (deferred task work), so the worker's look at the ring afterwards sees them.
            // SAFETY: no argument struct is passed; flags are IORING_ENTER_GETEVENTS.
            true if !self.opts.sqthread_poll => unsafe {
                self.enter(to_submit, wait, IORING_ENTER_GETEVENTS, None)
            },
            _ => self.ring.submit(),
        };
        let n = match retry_eintr(submitted) {
            Err(e) if busy(&e) => 0,
            r => r?,
        };
        // With a kernel polling thread an entry is submitted once it is in the ring, and the
        // returned count covers entries still waiting from earlier calls; without one, a reap
        // may already have submitted some of them.
        let n = if self.opts.sqthread_poll {
            self.unsubmitted
        } else {
            n.min(self.unsubmitted)
        };
        self.unsubmitted -= n;
        Ok(n)
    }

    fn entry(
        &self,
        slot: u32,
        file: usize,
        op: Op,
        buf: *mut u8,
        len: usize,
        offset: u64,
    ) -> squeue::Entry {
        let len = len as u32;
        let idx = slot as u16;
        // The same four opcodes for a plain or a registered file (different target types).
        macro_rules! rw {
            ($target:expr) => {
                match (op, self.opts.fixedbufs) {
                    (Op::Read, false) => opcode::Read::new($target, buf, len)
                        .offset(offset)
                        .ioprio(self.prio)
                        .build(),
                    (Op::Read, true) => opcode::ReadFixed::new($target, buf, len, idx)
                        .offset(offset)
                        .ioprio(self.prio)
                        .build(),
                    (Op::Write | Op::Trim, false) => opcode::Write::new($target, buf, len)
                        .offset(offset)
                        .ioprio(self.prio)
                        .build(),
                    (Op::Write | Op::Trim, true) => opcode::WriteFixed::new($target, buf, len, idx)
                        .offset(offset)
                        .ioprio(self.prio)
                        .build(),
                }
            };
        }
        let e = if self.opts.registerfiles {
            rw!(types::Fixed(file as u32))
        } else {
            rw!(types::Fd(self.fds[file]))
        };
        e.user_data(slot as u64)
    }
}

/// Retries a ring call interrupted by a signal (the worker checks its stop flag itself).
fn retry_eintr(mut f: impl FnMut() -> io::Result<usize>) -> io::Result<usize> {
    loop {
        match f() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

impl QueueEngine for Uring {
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
        // Trims never come here (the worker calls `trim` once the queue is drained); the write
        // arms below only complete the match.
        if op == Op::Trim {
            return Err(io::Error::from_raw_os_error(libc::EOPNOTSUPP));
        }
        let mut e = self.entry(slot, file, op, buf, len, offset);
        if self.opts.force_async != 0 {
            // fio: the kernel runs every N-th request in its worker threads (io-wq) instead
            // of trying it inline first.
            self.prepped += 1;
            if self.prepped == self.opts.force_async {
                self.prepped = 0;
                e = e.flags(squeue::Flags::ASYNC);
            }
        }
        // SAFETY: the caller keeps the buffer valid until the completion is reaped (# Safety).
        let pushed = unsafe { self.ring.submission().push(&e) };
        // The ring has at least iodepth entries and the caller never exceeds iodepth, so this
        // is a broken invariant, reported rather than assumed away.
        pushed.map_err(|_| io::Error::other("io_uring submission ring full"))?;
        self.unsubmitted += 1;
        Ok(())
    }

    fn start(&mut self) -> io::Result<()> {
        if self.deferred {
            self.ring.submitter().register_enable_rings()?;
        }
        // A polling kernel thread is entered only to wake it, through the crate's own path.
        if !self.opts.sqthread_poll {
            self.register_ring_fd();
        }
        Ok(())
    }

    #[inline]
    fn submit(&mut self) -> io::Result<usize> {
        self.submit_waiting(0)
    }

    #[inline]
    fn submit_and_wait(&mut self, wait: usize) -> io::Result<usize> {
        self.submit_waiting(wait as u32)
    }

    #[inline]
    fn reap<F: FnMut(u32, i64)>(
        &mut self,
        min: usize,
        max: usize,
        timeout_ns: Option<u64>,
        on: &mut F,
    ) -> io::Result<usize> {
        let mut got = 0;
        let ts = timeout_ns.map(super::timespec);
        loop {
            for cqe in self.ring.completion() {
                on(cqe.user_data() as u32, cqe.result() as i64);
                got += 1;
                if got == max {
                    return Ok(got);
                }
            }
            if got >= min {
                return Ok(got);
            }
            // Wait without submitting (to_submit = 0): everything queued was handed over by
            // submit(), so a reap never submits behind the worker's back (after EBUSY, say).
            let want = (min - got) as u32;
            let r = match &ts {
                None => {
                    // SAFETY: no argument struct is passed; flags are IORING_ENTER_GETEVENTS.
                    retry_eintr(|| unsafe { self.enter(0, want, IORING_ENTER_GETEVENTS, None) })
                }
                Some(ts) => {
                    let arg = GeteventsArg {
                        sigmask: 0,
                        sigmask_sz: 0,
                        pad: 0,
                        ts: ts as *const libc::timespec as u64,
                    };
                    // SAFETY: EXT_ARG with a valid io_uring_getevents_arg whose timespec
                    // outlives the call.
                    retry_eintr(|| unsafe {
                        self.enter(
                            0,
                            want,
                            IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
                            Some(&arg),
                        )
                    })
                }
            };
            match r {
                Err(e) if e.raw_os_error() == Some(libc::ETIME) => {
                    // Timed out: take whatever has arrived and let the caller go on.
                    for cqe in self.ring.completion().take(max - got) {
                        on(cqe.user_data() as u32, cqe.result() as i64);
                        got += 1;
                    }
                    return Ok(got);
                }
                r => {
                    r?;
                }
            }
        }
    }

    fn sync(&mut self, file: usize, op: SyncOp) -> io::Result<()> {
        sync_fd(self.fds[file], op)
    }

    fn trim(&mut self, file: usize, offset: u64, len: usize) -> io::Result<usize> {
        super::trim::trim_fd(self.fds[file], offset, len)
    }
}

impl Drop for Uring {
    /// Frees the registration slot (the thread may go on to run another ring). Registrations
    /// are per thread: on another thread the index would name someone else's ring, so only the
    /// registering thread unregisters; a thread's slots are freed when it exits anyway.
    fn drop(&mut self) {
        // SAFETY: gettid has no preconditions.
        if self.registered_on == 0 || self.registered_on != unsafe { libc::gettid() } {
            return;
        }
        let up = RsrcUpdate {
            offset: self.enter_fd as u32,
            resv: 0,
            data: 0,
        };
        // SAFETY: a valid io_uring_rsrc_update for one entry, read by the kernel.
        unsafe {
            libc::syscall(
                libc::SYS_io_uring_register,
                self.ring.as_raw_fd(),
                IORING_UNREGISTER_RING_FDS,
                &up as *const RsrcUpdate,
                1,
            )
        };
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::FileExt;

    /// A ring reads through its registered index, and dropping it frees the thread's slot: a
    /// thread has 16, so 20 rings in turn would run out if a slot leaked.
    #[test]
    fn rings_enter_by_registered_index_and_free_the_slot_when_dropped() {
        if let Some(why) = probe() {
            assert!(std::env::var_os("CI").is_none(), "{why}");
            eprintln!("skipped: {why}");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let file = std::fs::File::create_new(dir.path().join("f")).unwrap();
        file.write_all_at(&[7u8; 4096], 0).unwrap();
        let mut buf = vec![0u8; 4096];
        for round in 0..20 {
            let opts = UringOptions::default();
            let mut ring = Uring::new(vec![file.as_raw_fd()], 1, opts, &[]).unwrap();
            ring.start().unwrap();
            assert_eq!(
                ring.enter_flags, IORING_ENTER_REGISTERED_RING,
                "ring {round}"
            );
            buf.fill(0);
            // SAFETY: buf outlives the completion, reaped below.
            unsafe { ring.queue(0, 0, Op::Read, buf.as_mut_ptr(), 4096, 0) }.unwrap();
            assert_eq!(ring.submit().unwrap(), 1);
            let mut got = Vec::new();
            ring.reap(1, 1, None, &mut |slot, res| got.push((slot, res)))
                .unwrap();
            assert_eq!(got, [(0, 4096)]);
            assert!(buf.iter().all(|&b| b == 7));
        }
    }
}
