//! fio's `io_submit_mode=offload`: the job's thread prepares each I/O (offset, size, buffer,
//! pacing: the same `IoSource` as the inline loops) and hands it to a pool of `iodepth`
//! submitting threads, each with its own engine set up for one I/O at a time (fio's
//! rate-submit.c clones the engine per worker with iodepth=1). A rate is then kept whatever
//! the device's completion rate, and an I/O's latency counts from its preparation on the job's
//! thread, so it includes its wait for a free submitter.
//!
//! The hand-off is one mutex and two condition variables (fio's workqueue uses the same):
//! per I/O one lock to hand it over and one to hand it back, a wake-up only when the other
//! side sleeps, and nothing allocated (the queues hold at most iodepth entries, sized up
//! front). Completions are counted on the job's thread, which owns the recorders, so the
//! published counters and the report are the job's as fio sums its workers' into it.
//!
//! Times, as fio's: `t_prep` on the job's thread when the I/O is ready (fio's start_time in
//! get_io_u), `t_issue` on the submitter just before the engine call (issue_time in
//! td_io_queue), `t_done` as it returns. clat = done - issue, lat = done - prep; slat =
//! issue - prep is recorded for queueing engines only (a synchronous engine's is never
//! recorded in fio: N=0). IO depths: each submitter has one I/O at a time, so every I/O counts
//! at depth 1; a queueing engine's submissions and completions are one at a time (fio's 1-4
//! bucket), and a synchronous engine's distributions stay empty, as fio 3.33 prints them.

use super::clock::{now_ns, sleep_until};
use super::engines::Engines;
use super::instance::{errno, fills_device, Published, Timeline, WorkerInput, WorkerResult};
use super::loop_core::LoopState;
use super::loop_ctx::Ctx;
use super::overlap::InFlight;
use super::queue_worker::SlotBuffers;
use super::source::NextIo;
use super::RunError;
use crate::engine::{Engine, Op, QueueEngine, SyncOp};
use crate::model::{JobSpec, RecordSpec, DDIR_WRITE};
use crate::stats::{CpuTimes, DepthCounters};
use std::collections::VecDeque;
use std::os::unix::io::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// The longest the job's thread sleeps at once, so that Ctrl-C is noticed during slow I/O.
const SLICE_NS: u64 = 100_000_000;

/// One engine per submitting thread (`iodepth` of them), each made for one I/O at a time.
pub(crate) fn make_pool(job: &JobSpec, fds: &[RawFd]) -> Result<Engines, RunError> {
    let mut one = job.clone();
    one.iodepth = 1;
    (0..job.iodepth.max(1))
        .map(|_| super::engines::make(&one, fds.to_vec()))
        .collect::<Result<Vec<_>, _>>()
        .map(Engines::Offload)
}

/// What a submitter is asked to do.
#[derive(Debug, Clone, Copy)]
enum Task {
    Io(Op),
    /// end_fsync / fsync_on_close, through a submitter's engine.
    Fsync,
}

/// A slot's buffer, handed to the submitter with its I/O.
#[derive(Debug, Clone, Copy)]
struct BufPtr(*mut u8);

// SAFETY: a slot's buffer is used by one thread at a time: the job's thread until the I/O is
// handed over, then the submitter until it hands the completion back; the slot is reused only
// after that.
unsafe impl Send for BufPtr {}

#[derive(Debug, Clone, Copy)]
struct Work {
    slot: u32,
    file: usize,
    task: Task,
    buf: BufPtr,
    len: usize,
    offset: u64,
}

/// A completion: bytes done or a negative errno, and when the submitter issued and finished it.
#[derive(Debug, Clone, Copy)]
struct Done {
    slot: u32,
    result: i64,
    t_issue: u64,
    t_done: u64,
}

struct Queues {
    work: VecDeque<Work>,
    done: VecDeque<Done>,
    /// Submitters asleep waiting for work (a hand-off wakes one only then).
    idle: usize,
    /// The job's thread sleeps waiting for a completion.
    waiting: bool,
    closed: bool,
    /// A submitter panicked: the I/O it held never comes back.
    dead: bool,
}

/// The bounded hand-off between the job's thread and its submitters.
struct Handoff {
    q: Mutex<Queues>,
    work_cv: Condvar,
    done_cv: Condvar,
}

impl Handoff {
    fn new(depth: usize) -> Self {
        Handoff {
            q: Mutex::new(Queues {
                work: VecDeque::with_capacity(depth),
                done: VecDeque::with_capacity(depth),
                idle: 0,
                waiting: false,
                closed: false,
                dead: false,
            }),
            work_cv: Condvar::new(),
            done_cv: Condvar::new(),
        }
    }

    /// A panic elsewhere does not leave the queues inconsistent (every update is one push or
    /// pop), so a poisoned lock is used as it is.
    fn lock(&self) -> MutexGuard<'_, Queues> {
        self.q.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hands one I/O over (never more than iodepth are out, so the queue never grows).
    #[inline]
    fn push(&self, w: Work) {
        let mut q = self.lock();
        q.work.push_back(w);
        let wake = q.idle > 0;
        drop(q);
        if wake {
            self.work_cv.notify_one();
        }
    }

    /// Moves the completions handed back into `out` (empty, with capacity iodepth: the two
    /// queues are swapped, nothing is allocated). With `wait`, sleeps up to `SLICE_NS` for one.
    #[inline]
    fn take_done(&self, out: &mut VecDeque<Done>, wait: bool) {
        let mut q = self.lock();
        if q.dead {
            drop(q);
            // Waiting for the lost I/O would hang the run: the panic goes on to the run's
            // cleanup, as a job thread's own does.
            panic!("io_submit_mode=offload: a submitting thread panicked");
        }
        if wait && q.done.is_empty() {
            q.waiting = true;
            let slice = Duration::from_nanos(SLICE_NS);
            q = match self.done_cv.wait_timeout(q, slice) {
                Ok((q, _)) => q,
                Err(e) => e.into_inner().0,
            };
            q.waiting = false;
        }
        std::mem::swap(out, &mut q.done);
    }

    /// No more work: each submitter ends once the queue is empty.
    fn close(&self) {
        self.lock().closed = true;
        self.work_cv.notify_all();
    }

    /// A submitter's loop: takes work, runs `f` on it, hands the completion back.
    fn serve(&self, mut f: impl FnMut(&Work) -> Done) {
        let _dead = OnPanic(self);
        loop {
            let mut q = self.lock();
            let w = loop {
                if let Some(w) = q.work.pop_front() {
                    break w;
                }
                if q.closed {
                    return;
                }
                q.idle += 1;
                q = self.work_cv.wait(q).unwrap_or_else(|e| e.into_inner());
                q.idle -= 1;
            };
            drop(q);
            let d = f(&w);
            let mut q = self.lock();
            q.done.push_back(d);
            let wake = q.waiting;
            drop(q);
            if wake {
                self.done_cv.notify_one();
            }
        }
    }
}

/// Tells the job's thread when a submitter unwinds (it would wait for the I/O forever).
struct OnPanic<'a>(&'a Handoff);

impl Drop for OnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock().dead = true;
            self.0.done_cv.notify_all();
        }
    }
}

/// Closes the hand-off however the job's loop ends, a panic included: the submitters then end
/// and the scope that joins them does not wait forever.
struct CloseOnDrop<'a>(&'a Handoff);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// An engine result as bytes done or a negative errno.
fn as_result(r: std::io::Result<usize>) -> i64 {
    match r {
        Ok(n) => n as i64,
        Err(e) => -(i64::from(errno(&e).max(1))),
    }
}

/// A submitter with a synchronous engine: each I/O is one engine call.
fn serve_sync<E: Engine>(mut e: E, h: &Handoff) {
    h.serve(|w| {
        let t_issue = now_ns();
        let r = match w.task {
            // SAFETY: the slot's buffer holds max_bs >= len bytes, aligned for O_DIRECT, and
            // is this thread's until the completion is handed back (see `BufPtr`).
            Task::Io(op) => as_result(unsafe { e.io(w.file, op, w.buf.0, w.len, w.offset) }),
            Task::Fsync => as_result(e.sync(w.file, SyncOp::Fsync).map(|()| 0)),
        };
        Done {
            slot: w.slot,
            result: r,
            t_issue,
            t_done: now_ns(),
        }
    });
}

/// A submitter with a queueing engine (libaio, posixaio) of depth 1: queue, submit, wait for
/// the one completion, as fio's worker with iodepth=1 waits for one event.
fn serve_queue<E: QueueEngine>(mut e: E, own: SlotBuffers, h: &Handoff) {
    let started = e.start().map_err(|e| errno(&e));
    h.serve(|w| {
        let t_issue = now_ns();
        let r = match (started, w.task) {
            (Err(no), _) => -i64::from(no.max(1)),
            (Ok(()), Task::Fsync) => as_result(e.sync(w.file, SyncOp::Fsync).map(|()| 0)),
            (Ok(()), Task::Io(op)) => one_queued(&mut e, w, op),
        };
        Done {
            slot: w.slot,
            result: r,
            t_issue,
            t_done: now_ns(),
        }
    });
    // The engine goes before its own (unused) buffers; the job's slot buffers outlive both.
    drop(e);
    own.release();
}

fn one_queued<E: QueueEngine>(e: &mut E, w: &Work, op: Op) -> i64 {
    // SAFETY: the slot's buffer stays this submitter's until the completion below is reaped
    // and handed back; it is freed only after every submitter has ended.
    let queued = unsafe { e.queue(0, w.file, op, w.buf.0, w.len, w.offset) };
    if let Err(err) = queued {
        return as_result(Err(err));
    }
    loop {
        match e.submit() {
            Ok(0) => continue,
            Ok(_) => break,
            Err(err) => return as_result(Err(err)),
        }
    }
    let mut r = None;
    while r.is_none() {
        if let Err(err) = e.reap(1, 1, None, &mut |_, v| r = Some(v)) {
            return as_result(Err(err));
        }
    }
    r.unwrap_or(0)
}

/// A submitting thread: serves with its engine, returns the CPU time it used.
fn submitter(engine: Engines, h: &Handoff) -> CpuTimes {
    let start = CpuTimes::now_thread().unwrap_or_default();
    match engine {
        Engines::Sync(e) => serve_sync(e, h),
        Engines::Psync(e) => serve_sync(e, h),
        Engines::Null(e) => serve_sync(e, h),
        Engines::Vsync(e) => serve_sync(e, h),
        Engines::Pvsync(e) => serve_sync(e, h),
        Engines::Pvsync2(e) => serve_sync(e, h),
        Engines::Mmap(e) => serve_sync(e, h),
        Engines::Falloc(e) => serve_sync(e, h),
        Engines::Ftruncate(e) => serve_sync(e, h),
        Engines::Aio(e, b) => serve_queue(e, b, h),
        Engines::Posix(e, b) => serve_queue(e, b, h),
        Engines::Uring(e, b) => serve_queue(*e, b, h),
        // Refused with offload when the job is read (no data I/O to hand over).
        Engines::Cpu | Engines::Exec | Engines::FileOps(_) | Engines::Offload(_) => {
            h.serve(|w| Done {
                slot: w.slot,
                result: -i64::from(libc::EOPNOTSUPP),
                t_issue: 0,
                t_done: 0,
            })
        }
    }
    CpuTimes::now_thread().unwrap_or_default().delta(&start)
}

/// Run one job instance in offload mode with `pool`'s engines (one submitting thread each).
pub(crate) fn run_offload(
    pool: Vec<Engines>,
    input: &WorkerInput,
    published: &Published,
    stop: &AtomicBool,
    start_ns: u64,
    sample_budget: usize,
) -> WorkerResult {
    let depth = pool.len().max(1);
    let h = Handoff::new(depth);
    let mut bufs = SlotBuffers::new(depth as u32, input.job.max_bs() as usize);
    let regions = bufs.regions();
    let (mut res, cpu) = std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(depth);
        let mut spawned = true;
        for (i, e) in pool.into_iter().enumerate() {
            let h = &h;
            let b = std::thread::Builder::new()
                .name(format!("{}.s{i}", input.jobnum))
                .spawn_scoped(s, move || submitter(e, h));
            match b {
                Ok(t) => handles.push(t),
                Err(_) => {
                    spawned = false;
                    break;
                }
            }
        }
        let cx = Ctx {
            input,
            published,
            stop,
        };
        let closing = CloseOnDrop(&h);
        let r = JobLoop::run(cx, &h, &regions, spawned, start_ns, sample_budget);
        drop(closing);
        let mut cpu = CpuTimes::default();
        for t in handles {
            match t.join() {
                Ok(c) => cpu += c,
                Err(p) => std::panic::resume_unwind(p),
            }
        }
        (r, cpu)
    });
    // Every submitter has ended: nothing uses the slot buffers any more.
    bufs.release();
    res.0.cpu += cpu;
    Timeline::done(published, res.1, &mut res.0);
    res.0
}

/// What the job's thread keeps of one I/O while a submitter has it.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    dir: usize,
    file: usize,
    offset: u64,
    len: usize,
    t_prep: u64,
}

/// The job's thread: the shared loop state, and the slots handed to the submitters.
struct JobLoop<'a> {
    st: LoopState<'a>,
    h: &'a Handoff,
    regions: &'a [(*mut u8, usize)],
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Completions taken from the hand-off (swapped with its queue: nothing allocated).
    done_q: VecDeque<Done>,
    inflight: usize,
    inflight_bytes: u64,
    depth: DepthCounters,
    issued: u64,
    /// serialize_overlap: the ranges out, and an I/O waiting for its overlap.
    overlap: Option<InFlight>,
    parked: Option<(usize, NextIo)>,
    stopping: bool,
    /// A synchronous engine's submission is its completion: fio records no slat for it.
    queueing: bool,
    record: RecordSpec,
}

impl<'a> JobLoop<'a> {
    /// The job's thread: prepares and hands over I/Os, counts completions. Returns the result
    /// and the end instant.
    fn run(
        cx: Ctx<'a>,
        h: &'a Handoff,
        regions: &'a [(*mut u8, usize)],
        spawned: bool,
        start_ns: u64,
        sample_budget: usize,
    ) -> (WorkerResult, u64) {
        let (input, job) = (cx.input, &cx.input.job);
        let io_max = input.io_max_len();
        let mut st = LoopState::begin(cx, start_ns, sample_budget, true, |src| {
            for &(p, len) in regions {
                // SAFETY: each region is a distinct slice of the slot buffer; no submitter has
                // it yet.
                let b = unsafe { std::slice::from_raw_parts_mut(p, len.min(io_max)) };
                if job.zero_buffers {
                    b.fill(0);
                } else {
                    src.rng.fill(b);
                }
            }
        });
        if !spawned {
            st.res
                .error
                .get_or_insert(cx.failure("setup", 0, 0, libc::EAGAIN));
        }
        let depth = regions.len();
        let mut l = JobLoop {
            stopping: st.res.error.is_some() || st.total == 0,
            st,
            h,
            regions,
            slots: vec![Slot::default(); depth],
            free: (0..depth as u32).rev().collect(),
            done_q: VecDeque::with_capacity(depth),
            inflight: 0,
            inflight_bytes: 0,
            depth: DepthCounters::new(),
            issued: 0,
            overlap: InFlight::new(job, depth),
            parked: None,
            queueing: job.ioengine.is_async(),
            record: job.reporting.record,
        };
        l.io_loop();
        let JobLoop { st, depth, .. } = l;
        let (mut res, end) = st.finish(|f| fsync(h, regions, f));
        res.depth = Some(depth);
        (res, end)
    }

    fn io_loop(&mut self) {
        loop {
            if self.st.cx.stopped() {
                self.stopping = true;
            }
            if self.stopping && self.inflight == 0 {
                break;
            }
            let blocked = self.stopping || self.free.is_empty() || self.parked.is_some();
            self.h
                .take_done(&mut self.done_q, blocked && self.inflight > 0);
            while let Some(d) = self.done_q.pop_front() {
                self.complete(d);
            }
            if self.stopping || self.free.is_empty() {
                continue;
            }
            if !self.st.tl.in_ramp && self.issued >= self.st.total {
                self.stopping = true;
                continue;
            }
            if let Some((dir, io)) = self.next_io() {
                self.hand_over(dir, io);
            }
        }
    }

    /// One completion handed back by a submitter.
    #[inline]
    fn complete(&mut self, d: Done) {
        let s = self.slots[d.slot as usize];
        self.free.push(d.slot);
        self.inflight -= 1;
        self.inflight_bytes -= s.len as u64;
        if let Some(o) = self.overlap.as_mut() {
            o.remove(d.slot as usize);
        }
        let dir = s.dir;
        if d.result < 0 {
            self.failed(d, s);
            return;
        }
        let n = d.result as u64;
        let lat = d.t_done.saturating_sub(s.t_prep);
        let st = &mut self.st;
        if st.timed {
            st.res.tick_queued(d.t_done, &self.depth);
            if self.record.clat {
                st.res.clat[dir].record(d.t_done.saturating_sub(d.t_issue));
            }
            if self.record.lat {
                st.res.lat[dir].record(lat);
            }
            if self.record.slat && self.queueing {
                st.res.slat[dir].record(d.t_issue.saturating_sub(s.t_prep));
            }
        }
        self.depth.on_issue(1);
        if self.queueing {
            self.depth.on_submit(1);
            self.depth.on_complete(1);
        }
        st.count(dir, s.len, n);
        st.publish(dir);
        st.log_done(dir, [s.t_prep, d.t_issue, d.t_done], s.len, n, s.offset);
        if st.over_max_lat((s.file, dir, s.offset, s.len), lat) {
            self.stopping = true;
        }
        if st.ramp_over(d.t_done) {
            // I/Os still out count towards the measured period's byte limit.
            self.depth.reset();
            self.issued = self.inflight_bytes;
            st.src.restart_pacing(st.tl.meas_start);
        } else if d.t_done >= st.tl.deadline {
            self.stopping = true;
        }
    }

    /// A failed I/O: survived (continue_on_error), one still out after a fatal error, or the
    /// fatal error itself.
    #[cold]
    fn failed(&mut self, d: Done, s: Slot) {
        let (st, dir, no) = (&mut self.st, s.dir, (-d.result) as i32);
        let input = st.cx.input;
        let job = &input.job;
        let op = Op::of_dir(dir).name();
        if st.res.error.is_some() || st.res.survives(job, dir, no) {
            // (survives counts it; after a fatal error the rest count as issued.)
            if st.res.error.is_some() {
                st.res.ios[dir] += 1;
            } else if job.io.error_dump {
                st.cx
                    .failure(op, s.file, s.offset, no)
                    .with_len(s.len)
                    .dump(&input.diag);
            }
            // A job whose every I/O fails still ends at its runtime.
            if d.t_done >= st.tl.deadline {
                self.stopping = true;
            }
            return;
        }
        // fio counts the failed I/O as issued (total_ios), of no bytes.
        st.res.ios[dir] += 1;
        if !fills_device(job, no) {
            st.res.error = Some(st.cx.failure(op, s.file, s.offset, no).with_len(s.len));
        }
        self.stopping = true;
    }

    /// The next I/O to hand over: a parked one that no longer overlaps, or a new one (paced).
    /// None: nothing to hand over now.
    #[inline]
    fn next_io(&mut self) -> Option<(usize, NextIo)> {
        if let Some((dir, io)) = self.parked.take() {
            if self.overlaps(&io) {
                self.parked = Some((dir, io));
                return None;
            }
            return Some((dir, io));
        }
        let st = &mut self.st;
        let dir = st.src.pick_dir();
        if st.src.paced && !pace(st.cx.stop, st.src.due(dir), st.tl.deadline) {
            self.stopping = true;
            return None;
        }
        let io = st.src.next(dir);
        if io.new_pass {
            if let Err(f) = st.start_pass(io.file) {
                st.res.error = Some(f);
                self.stopping = true;
                return None;
            }
        }
        if self.overlaps(&io) {
            self.parked = Some((dir, io));
            return None;
        }
        Some((dir, io))
    }

    /// serialize_overlap: `io` overlaps an I/O out.
    #[inline]
    fn overlaps(&self, io: &NextIo) -> bool {
        self.overlap
            .as_ref()
            .is_some_and(|o| o.overlaps(io.file, io.offset, io.len))
    }

    /// Prepares `io` in a free slot and hands it to a submitter.
    #[inline]
    fn hand_over(&mut self, dir: usize, io: NextIo) {
        let NextIo {
            file, offset, len, ..
        } = io;
        let Some(slot) = self.free.pop() else {
            return;
        };
        let buf = self.regions[slot as usize].0;
        let st = &mut self.st;
        if dir == DDIR_WRITE {
            // SAFETY: the slot's buffer holds max_bs >= len bytes; no submitter has it.
            unsafe {
                super::verify_phase::prepare_write(
                    buf,
                    len,
                    st.refill,
                    &mut st.src.rng,
                    st.data.as_mut(),
                    file,
                    offset,
                )
            };
        }
        let t_prep = if st.timed { now_ns() } else { 0 };
        self.slots[slot as usize] = Slot {
            dir,
            file,
            offset,
            len,
            t_prep,
        };
        if let Some(o) = self.overlap.as_mut() {
            o.add(slot as usize, file, offset, len);
        }
        self.h.push(Work {
            slot,
            file,
            task: Task::Io(Op::of_dir(dir)),
            buf: BufPtr(buf),
            len,
            offset,
        });
        self.inflight += 1;
        self.inflight_bytes += len as u64;
        self.issued += len as u64;
    }
}

/// Rate pacing: sleeps until `due` in slices, so that Ctrl-C is noticed. False when the job
/// should stop instead (stopped, or the I/O would be due after the deadline).
fn pace(stop: &AtomicBool, due: u64, deadline: u64) -> bool {
    if due >= deadline {
        return false;
    }
    loop {
        let now = now_ns();
        if now >= due {
            return true;
        }
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        sleep_until(due.min(now + SLICE_NS));
    }
}

/// end_fsync / fsync_on_close of file `file` through a submitter (nothing is out then).
fn fsync(h: &Handoff, regions: &[(*mut u8, usize)], file: usize) -> std::io::Result<()> {
    h.push(Work {
        slot: 0,
        file,
        task: Task::Fsync,
        buf: BufPtr(regions[0].0),
        len: 0,
        offset: 0,
    });
    let mut q = VecDeque::with_capacity(regions.len());
    loop {
        h.take_done(&mut q, true);
        if let Some(d) = q.pop_front() {
            return match d.result {
                r if r < 0 => Err(std::io::Error::from_raw_os_error((-r) as i32)),
                _ => Ok(()),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slow synchronous engine: each I/O takes `ns`.
    struct Slow(u64);

    impl Engine for Slow {
        unsafe fn io(
            &mut self,
            _file: usize,
            _op: Op,
            _buf: *mut u8,
            len: usize,
            _offset: u64,
        ) -> std::io::Result<usize> {
            std::thread::sleep(Duration::from_nanos(self.0));
            Ok(len)
        }

        fn sync(&mut self, _file: usize, _op: SyncOp) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Two I/Os handed at once to a pool of one slow submitter: the second waits for the first,
    /// and that wait is in its latency (done - prep), not in its clat (done - issue).
    #[test]
    fn latency_includes_the_wait_for_a_submitter() {
        let h = Handoff::new(2);
        let mut buf = [0u8; 8];
        let slow = 30_000_000;
        std::thread::scope(|s| {
            let hh = &h;
            s.spawn(move || serve_sync(Slow(slow), hh));
            let t_prep = now_ns();
            for slot in 0..2 {
                h.push(Work {
                    slot,
                    file: 0,
                    task: Task::Io(Op::Read),
                    buf: BufPtr(buf.as_mut_ptr()),
                    len: 8,
                    offset: 0,
                });
            }
            let mut got = Vec::new();
            let mut q = VecDeque::with_capacity(2);
            while got.len() < 2 {
                h.take_done(&mut q, true);
                got.extend(q.drain(..));
            }
            h.close();
            let second = got.iter().find(|d| d.slot == 1).unwrap();
            assert_eq!(second.result, 8);
            let clat = second.t_done - second.t_issue;
            let lat = second.t_done - t_prep;
            assert!(clat >= slow, "clat {clat} is the engine's time");
            assert!(clat < 2 * slow, "clat {clat} leaves the wait out");
            assert!(
                lat >= 2 * slow,
                "lat {lat} includes the wait for the submitter"
            );
        });
    }

    /// An engine that panics (a bug), as the fuzzer would find one.
    struct Panics;

    impl Engine for Panics {
        unsafe fn io(
            &mut self,
            _file: usize,
            _op: Op,
            _buf: *mut u8,
            _len: usize,
            _offset: u64,
        ) -> std::io::Result<usize> {
            panic!("engine bug")
        }

        fn sync(&mut self, _file: usize, _op: SyncOp) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A submitter that panics with an I/O: the job's thread, waiting for it, panics too
    /// instead of waiting forever, and the scope ends (the hand-off is closed on the way out).
    #[test]
    fn a_submitter_panic_reaches_the_jobs_thread_instead_of_a_hang() {
        let h = Handoff::new(1);
        let mut buf = [0u8; 8];
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            std::thread::scope(|s| {
                let hh = &h;
                s.spawn(move || serve_sync(Panics, hh));
                let _closing = CloseOnDrop(&h);
                h.push(Work {
                    slot: 0,
                    file: 0,
                    task: Task::Io(Op::Read),
                    buf: BufPtr(buf.as_mut_ptr()),
                    len: 8,
                    offset: 0,
                });
                let mut q = VecDeque::with_capacity(1);
                loop {
                    h.take_done(&mut q, true);
                }
            })
        }));
        let p = r.unwrap_err();
        let msg = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        assert!(
            msg == "io_submit_mode=offload: a submitting thread panicked" || msg == "engine bug",
            "{msg}"
        );
    }

    #[test]
    fn an_engine_error_comes_back_as_a_negative_errno() {
        let e = std::io::Error::from_raw_os_error(libc::EIO);
        assert_eq!(as_result(Err(e)), -i64::from(libc::EIO));
        assert_eq!(as_result(Ok(4096)), 4096);
    }
}
