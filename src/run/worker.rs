//! One job instance on one OS thread: the I/O loop for synchronous engines (each call is one
//! complete I/O). The state and the per-feature steps are the loop core's (`loop_core.rs`);
//! this file only issues each I/O and orders the steps around it. The loop allocates nothing,
//! takes no lock and makes no system call besides the I/O itself and the clock (and, once per
//! pass over a file in a buffered job, the cache drop); progress is published through relaxed
//! atomics that the monitor thread reads.

use super::clock::{now_ns, sleep_until};
use super::file_lock::FileLock;
use super::instance::{errno, fills_device, Published, Timeline, WorkerInput, WorkerResult};
use super::latency_target as lt;
use super::loop_core::LoopState;
use super::loop_ctx::{Ctx, Step};
use super::source::NextIo;
use super::verify_phase;
use crate::engine::{Engine, Op, SyncOp};
use crate::model::{DDIR_READ, DDIR_TRIM, DDIR_WRITE};
use crate::workload::buffers::AlignedBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

struct Loop<'a, E: Engine> {
    engine: E,
    st: LoopState<'a>,
    /// The one I/O buffer (max_bs bytes, aligned for O_DIRECT), owned by `run_worker`.
    bufp: *mut u8,
    /// sync_file_range due before the next I/O: the file, and the offset of the write that
    /// made it due (what fio's iolog shows for it).
    sfr_due: Option<(usize, u64)>,
    /// lockfile: each file's lock, held around the I/O (None without it: one branch).
    locks: Option<&'a [Arc<FileLock>]>,
    /// Bytes issued in the measured period (towards the size limit).
    done_bytes: u64,
}

/// Run one job instance. `start_ns` is the common start instant of the group (after startdelay
/// is added here).
pub(crate) fn run_worker<E: Engine>(
    engine: E,
    input: &WorkerInput,
    published: &Published,
    stop: &AtomicBool,
    start_ns: u64,
    sample_budget: usize,
) -> WorkerResult {
    let cx = Ctx {
        input,
        published,
        stop,
    };
    let job = &input.job;
    let mut buf = AlignedBuf::new(job.max_bs() as usize);
    let mut st = LoopState::begin(cx, start_ns, sample_budget, false, |src| {
        buf.fill_prefix(&mut src.rng, job.zero_buffers, input.io_max_len());
    });
    st.set_limits();
    if st.res.error.is_none() {
        st.verify_only();
    }
    let mut l = Loop {
        engine,
        st,
        bufp: buf.as_mut_ptr(),
        sfr_due: None,
        locks: input.file_locks.as_deref(),
        done_bytes: 0,
    };
    // create_only (a limit of 0 bytes): lay out, do no I/O, not even during ramp.
    if l.st.limit > 0 && !l.st.only_verifies() && l.st.res.error.is_none() {
        while l.step() != Step::End {}
    }
    if l.st.read_back_due() {
        l.read_back();
    }
    let Loop { mut engine, st, .. } = l;
    let (mut res, end) = st.finish(|f| engine.sync(f, SyncOp::Fsync));
    Timeline::done(published, end, &mut res);
    drop(engine);
    drop(buf);
    res
}

impl<E: Engine> Loop<'_, E> {
    /// One I/O and the steps around it. End: the job is over.
    #[inline]
    fn step(&mut self) -> Step {
        if self.st.cx.stopped() {
            return Step::End;
        }
        if self.sfr_due.is_some() && self.range_sync() == Step::End {
            return Step::End;
        }
        let deadline = self.st.tl.deadline;
        if let Some(f) = self.st.flow.as_mut() {
            if f.held() {
                f.pause(deadline);
                if now_ns() >= deadline {
                    return Step::End;
                }
                return Step::Again;
            }
        }
        let dir = self.st.src.pick_dir();
        if self.st.src.paced {
            self.pace(dir);
        }
        let io = self.st.src.next(dir);
        if io.new_pass {
            if let Err(f) = self.st.start_pass(io.file) {
                self.st.res.error = Some(f);
                return Step::End;
            }
        }
        let (t0, t1, r) = self.issue(dir, io);
        match r {
            Ok(n) => self.completed(dir, io, n, t0, t1),
            Err(e) => self.io_failed(dir, io, t1, errno(&e)),
        }
    }

    /// Rate pacing: sleep until the I/O is due, in slices so that Ctrl-C is noticed.
    #[inline]
    fn pace(&mut self, dir: usize) {
        let due = self.st.src.due(dir);
        if due > now_ns() {
            loop {
                let now = now_ns();
                if now >= due || self.st.cx.stopped() {
                    break;
                }
                sleep_until(due.min(now + 100_000_000));
            }
        }
    }

    /// Issues `io`: the write's data, the iolog line, the file's lock around the engine call.
    /// Returns the issue and completion instants and the engine's result.
    #[inline(always)]
    fn issue(&mut self, dir: usize, io: NextIo) -> (u64, u64, std::io::Result<usize>) {
        let (file, offset, len) = (io.file, io.offset, io.len);
        if dir == DDIR_WRITE {
            let st = &mut self.st;
            // SAFETY: buf holds max_bs >= len bytes and is owned by this thread.
            unsafe {
                verify_phase::prepare_write(
                    self.bufp,
                    len,
                    st.refill,
                    &mut st.src.rng,
                    st.data.as_mut(),
                    file,
                    offset,
                )
            };
        }
        // fio logs an I/O as it is issued, before its issue time is taken.
        self.st.log_io(file, dir, offset, len);
        let held = self.locks.map(|l| l[file].lock(dir));
        let t0 = now_ns();
        // SAFETY: bufp points at the worker's buffer, max_bs >= len bytes aligned for
        // O_DIRECT, owned by this thread and alive for the whole loop.
        let r = unsafe {
            self.engine
                .io(file, Op::of_dir(dir), self.bufp, len, offset)
        };
        let t1 = now_ns();
        drop(held);
        (t0, t1, r)
    }

    /// A failed I/O (errno `no`): survived (continue_on_error) or the end of the job.
    #[cold]
    fn io_failed(&mut self, dir: usize, io: NextIo, t1: u64, no: i32) -> Step {
        let (file, offset, len) = (io.file, io.offset, io.len);
        let input = self.st.cx.input;
        let (job, st) = (&input.job, &mut self.st);
        let op = Op::of_dir(dir).name();
        if st.res.survives(job, dir, no) {
            if job.io.error_dump {
                st.cx
                    .failure(op, file, offset, no)
                    .with_len(len)
                    .dump(&input.diag);
            }
            // continue_on_error: the I/O was issued, so it counts towards the size.
            self.done_bytes += len as u64;
            // (A loop's read-back, with verify and loops, waits for the next I/O.)
            if t1 >= st.tl.deadline || (!st.tl.in_ramp && self.done_bytes >= st.total) {
                return Step::End;
            }
            return Step::Again;
        }
        // fio counts the failed I/O as issued (total_ios), of no bytes.
        st.res.ios[dir] += 1;
        if !fills_device(job, no) {
            st.res.error = Some(st.cx.failure(op, file, offset, no).with_len(len));
        }
        Step::End
    }

    /// `io` moved `n` bytes between `t0` and `t1`: account it, verify a read, the syncs after
    /// a write, then the per-I/O features.
    #[inline]
    fn completed(&mut self, dir: usize, io: NextIo, n: usize, t0: u64, t1: u64) -> Step {
        let (file, offset, len) = (io.file, io.offset, io.len);
        let at = (file, dir, offset, len);
        let st = &mut self.st;
        if st.timed {
            st.res.tick(t1);
            st.res.clat[dir].record(t1 - t0);
        }
        st.count(dir, len, n as u64);
        st.publish(dir);
        st.log_done(dir, [t0, t0, t1], len, n as u64, offset);
        self.done_bytes += len as u64;
        if st.over_max_lat(at, t1 - t0) {
            return Step::End;
        }
        if dir == DDIR_READ && st.data.is_some() && self.check_read(file, offset, len).is_err() {
            return Step::End;
        }
        let mut t_end = t1;
        if dir == DDIR_WRITE {
            match self.write_syncs(file, offset, n, t0) {
                Some(0) => {}
                Some(t) => t_end = t,
                None => return Step::End,
            }
            if self.backlog() == Step::End {
                return Step::End;
            }
        }
        self.after_io(at, t1 - t0, t_end)
    }

    /// verify: the read just done is checked against what was written.
    #[inline]
    fn check_read(&mut self, file: usize, offset: u64, len: usize) -> Result<(), ()> {
        let st = &mut self.st;
        let Some(d) = st.data.as_mut() else {
            return Ok(());
        };
        // SAFETY: the read into buf is complete; nothing else uses buf.
        let b = unsafe { std::slice::from_raw_parts_mut(self.bufp, len) };
        let input = st.cx.input;
        d.after_read(b, input, file, offset, &mut st.res, false)
            .map_err(|_| ())
    }

    /// fsync/fdatasync every N writes (right after the write, timed with it), and
    /// sync_file_range's call made due for before the next I/O. Returns when the last sync
    /// ended (0: none ran), None when one failed.
    #[inline]
    fn write_syncs(&mut self, file: usize, offset: u64, n: usize, t0: u64) -> Option<u64> {
        let mut t_end = 0;
        for op in self.st.count_write().into_iter().flatten() {
            self.st.log_sync(file, op, offset);
            let s0 = now_ns();
            let r = self.engine.sync(file, op);
            let s1 = now_ns();
            let st = &mut self.st;
            if let Err(e) = r {
                st.res.error = Some(st.cx.failure(op.name(), file, offset, errno(&e)));
                return None;
            }
            st.count_sync(s0, s1, None);
            if st.timed {
                st.res.write_sync.record(s1 - t0);
            }
            t_end = s1;
        }
        if self.st.range_due(file, offset, n as u64, t_end != 0) {
            self.sfr_due = Some((file, offset));
        }
        Some(t_end)
    }

    /// The sync_file_range made due by the last write, before the next I/O.
    #[cold]
    fn range_sync(&mut self) -> Step {
        let Some((file, at)) = self.sfr_due.take() else {
            return Step::Go;
        };
        let Some(op) = self.st.take_range(file) else {
            return Step::Go;
        };
        self.st.log_sync(file, op, at);
        let s0 = now_ns();
        let r = self.engine.sync(file, op);
        let s1 = now_ns();
        let st = &mut self.st;
        if let Err(e) = r {
            let at = match op {
                SyncOp::Range { offset, .. } => offset,
                _ => 0,
            };
            st.res.error = Some(st.cx.failure(op.name(), file, at, errno(&e)));
            return Step::End;
        }
        st.count_sync(s0, s1, None);
        if s1 >= st.tl.deadline {
            return Step::End;
        }
        Step::Go
    }

    /// verify_backlog after a write: read back the blocks now due.
    #[inline]
    fn backlog(&mut self) -> Step {
        let st = &mut self.st;
        let Some(d) = st.data.as_mut() else {
            return Step::Go;
        };
        let n = d.backlog_due();
        if n > 0 {
            verify_phase::backlog_sync(&mut self.engine, d, n, st.cx, &mut st.res, self.bufp);
            if st.failed() {
                return Step::End;
            }
        }
        Step::Go
    }

    /// After each I/O (`lat_ns` its latency, `t_end` when it and its syncs ended): thinktime
    /// and the minimum rate, latency_target, the end of ramp, a loop's read-back, the limits.
    #[inline]
    fn after_io(&mut self, at: (usize, usize, u64, usize), lat_ns: u64, t_end: u64) -> Step {
        let st = &mut self.st;
        if st.timing.active {
            let job = &st.cx.input.job;
            if st.timing.after_sync_io(
                t_end,
                &st.tl,
                &mut st.res,
                &mut st.src,
                st.cx.stop,
                &job.name,
            ) {
                return Step::End;
            }
        }
        if st.lat.is_some() {
            // Reads and writes only, as fio's account_io_completion.
            if st.timed && at.1 != DDIR_TRIM {
                st.lat_sample(at, lat_ns);
            }
            match st.lat_after(t_end, 0) {
                lt::After::Go => {}
                lt::After::Done | lt::After::Failed => return Step::End,
                lt::After::Restarted => {
                    // (fio's issued-bytes count survives this reset.)
                    st.restarted(false);
                    return Step::Again;
                }
            }
        }
        if st.ramp_over(t_end) {
            self.done_bytes = 0;
            st.restarted(true);
            return Step::Again;
        }
        if st.loop_ends(self.done_bytes) {
            // verify with loops > 1: fio reads back after every loop.
            if st.read_back_due() {
                self.read_back();
            }
            if self.st.failed() {
                return Step::End;
            }
            self.st.next_loop();
        }
        if t_end >= self.st.tl.deadline || self.st.loop_done(self.done_bytes) {
            return Step::End;
        }
        Step::Again
    }

    /// verify: the read-back phase, into the worker's buffer.
    fn read_back(&mut self) {
        let st = &mut self.st;
        if let Some(d) = st.data.as_mut() {
            let deadline = st.tl.deadline;
            verify_phase::run_sync(&mut self.engine, d, st.cx, &mut st.res, self.bufp, deadline);
        }
    }
}
