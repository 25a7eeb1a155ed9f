//! One job instance with a queueing engine (io_uring, libaio): keeps up to `iodepth` I/Os in
//! flight. Definitions (docs/MEASUREMENT.md): slat = prepared → handed to the kernel, clat =
//! handed to the kernel → completion reaped, lat = prepared → completion reaped. The submit
//! timestamp is taken *before* the submit call, so I/O that completes inside it (buffered
//! libaio) shows in clat, not slat; every completion gets its own timestamp as it is reaped.
//! fsync/fdatasync every N writes drain the queue first and are timed as their own operation.

use super::clock::{now_ns, sleep_until};
use super::instance::{errno, fills_device, Published, Timeline, WorkerInput, WorkerResult};
use super::latency_target::{self as lt, Flow, LatTarget};
use super::loop_core::LoopState;
use super::loop_ctx::{Ctx, Step};
use super::overlap::InFlight;
use super::source::NextIo;
use super::verify_phase;
use crate::engine::{Op, QueueEngine, SyncOp};
use crate::model::{RecordSpec, DDIR_READ, DDIR_TRIM, DDIR_WRITE};
use crate::stats::prio::CmdPrio;
use crate::stats::DepthCounters;
use crate::workload::buffers::AlignedBuf;
use crate::workload::verify::Written;
use std::sync::atomic::{AtomicBool, Ordering};

/// An I/O slot: what is in it and when it was prepared and submitted.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    dir: usize,
    file: usize,
    offset: u64,
    len: usize,
    t_prep: u64,
    t_sub: u64,
    /// Priority index (cmdprio: 1 = the command priority).
    prio: u8,
}

/// Slot buffers: one aligned allocation, `stride` bytes per slot. The kernel may write into
/// them until every queued I/O is reaped, so they are freed only by [`SlotBuffers::release`],
/// which the worker calls once nothing is in flight and the engine is gone. Dropped any other
/// way (a panic in the loop, a failed reap) they are leaked, never freed under the kernel.
pub(crate) struct SlotBuffers {
    buf: std::mem::ManuallyDrop<AlignedBuf>,
    stride: usize,
}

impl SlotBuffers {
    pub(crate) fn new(depth: u32, max_bs: usize) -> Self {
        let stride = max_bs.div_ceil(4096) * 4096;
        SlotBuffers {
            buf: std::mem::ManuallyDrop::new(AlignedBuf::new(stride * depth.max(1) as usize)),
            stride,
        }
    }

    /// Frees the buffers: call only when no I/O on them is queued or in flight.
    pub(crate) fn release(mut self) {
        // SAFETY: `self` is consumed, so the buffer is dropped exactly once and never used again.
        unsafe { std::mem::ManuallyDrop::drop(&mut self.buf) };
    }

    /// (pointer, length) of every slot's buffer, for engines that register them.
    pub(crate) fn regions(&mut self) -> Vec<(*mut u8, usize)> {
        let base = self.buf.as_mut_ptr();
        let n = self.buf.len() / self.stride;
        // SAFETY: every slot lies inside the allocation.
        (0..n)
            .map(|i| (unsafe { base.add(i * self.stride) }, self.stride))
            .collect()
    }
}

/// Queue settings resolved from the job (0 = iodepth, as fio).
struct Depths {
    depth: usize,
    batch_submit: usize,
    complete_min: usize,
    complete_max: usize,
    low: usize,
}

impl Depths {
    fn of(job: &crate::model::JobSpec) -> Self {
        let depth = job.iodepth.max(1) as usize;
        let complete_min = (job.iodepth_batch_complete_min as usize).min(depth);
        // fio: the maximum defaults to the minimum, so by default one completion per reap.
        let complete_max = match job.iodepth_batch_complete_max as usize {
            0 => complete_min.max(1),
            v => v.clamp(complete_min.max(1), depth),
        };
        Depths {
            depth,
            batch_submit: match job.iodepth_batch_submit {
                0 => depth,
                v => (v as usize).min(depth),
            },
            complete_min,
            complete_max,
            low: if job.iodepth_low == 0 {
                depth
            } else {
                (job.iodepth_low as usize).min(depth)
            },
        }
    }
}

/// Run one job instance on a queueing engine. `bufs` must be the buffers the engine registered
/// (if it did).
pub(crate) fn run_queue_worker<E: QueueEngine>(
    mut engine: E,
    mut bufs: SlotBuffers,
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
    let regions = bufs.regions();
    let (io_max, zero) = (input.io_max_len(), input.job.zero_buffers);
    let mut st = LoopState::begin(cx, start_ns, sample_budget, true, |src| {
        for &(p, len) in &regions {
            // SAFETY: each region is a distinct, owned slice of the slot buffer.
            let s = unsafe { std::slice::from_raw_parts_mut(p, len.min(io_max)) };
            if zero {
                s.fill(0);
            } else {
                src.rng.fill(s);
            }
        }
    });
    if let Err(e) = engine.start() {
        st.res
            .error
            .get_or_insert(cx.failure("setup", 0, 0, errno(&e)));
    }
    if st.res.error.is_some() {
        st.total = 0;
    }
    st.set_limits();
    let mut l = QueueLoop::new(st, regions);
    if l.st.limit > 0 && l.st.verify_only() {
        l.stopping = true;
    }
    l.run(&mut engine);
    l.drain(&mut engine);
    if l.inflight == 0 && l.st.read_back_due() {
        l.inflight = l.read_back(&mut engine);
    }
    let QueueLoop {
        st,
        depth,
        inflight,
        ..
    } = l;
    let (mut res, end) = st.finish(|f| engine.sync(f, SyncOp::Fsync));
    res.depth = Some(depth);
    // The engine goes before the buffers it may have registered. If I/O is somehow still in
    // flight (a failed reap), leak the buffers rather than let the kernel write into freed memory.
    drop(engine);
    if inflight == 0 {
        bufs.release();
    }
    Timeline::done(published, end, &mut res);
    res
}

/// The queueing loop's own state, beside the shared [`LoopState`]: the slots, the queue and
/// what holds issue back.
struct QueueLoop<'a> {
    st: LoopState<'a>,
    q: Depths,
    /// Each slot's buffer (pointer, length).
    regions: Vec<(*mut u8, usize)>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Queued, not yet submitted (oldest first).
    queued: Vec<u32>,
    inflight: usize,
    inflight_bytes: u64,
    depth: DepthCounters,
    issued_bytes: u64,
    /// A sync waiting for the queue to drain: (op, file of the write that triggered it).
    pending_sync: Option<(SyncOp, usize)>,
    /// serialize_overlap: the ranges queued or in flight, and an I/O waiting for its overlap.
    overlap: Option<InFlight>,
    parked: Option<(usize, NextIo)>,
    /// Next I/O's direction and due time when rate-limited and not yet due.
    held: Option<(usize, u64)>,
    stopping: bool,
    /// After the queue filled up, reap down to iodepth_low before refilling.
    draining_to_low: bool,
    /// A trim (held) waits for the queue to drain, then runs synchronously (fio's
    /// FIO_ASYNCIO_SYNC_TRIM).
    trim_waits: bool,
    /// A thinktime pause is due; it drains the queue first (fio's quiesce).
    thinking: bool,
    /// flow: held back with flow_sleep, the queue drains and the job sleeps.
    flow_held: bool,
    /// A verify read found a mismatch.
    bad_read: bool,
    /// latency_target: the depth its search allows (else iodepth).
    cap: usize,
    cmdprio: Option<CmdPrio>,
    prio_by_lat: bool,
    /// disable_lat/clat/slat: which recorders take samples, decided once (one branch per I/O).
    record: RecordSpec,
    every_lat: bool,
    /// The clock read while filling, if any (0: none this round).
    now: u64,
    /// Of the current reap: the last completion's instant and the first fatal error.
    last_t: u64,
    io_error: Option<(usize, i64)>,
}

impl<'a> QueueLoop<'a> {
    fn new(mut st: LoopState<'a>, regions: Vec<(*mut u8, usize)>) -> Self {
        let (input, job) = (st.cx.input, &st.cx.input.job);
        let q = Depths::of(job);
        let cmdprio = CmdPrio::new(job, input.seed);
        st.res.prio_lat = cmdprio.as_ref().map(|c| Box::new(c.recorders()));
        let record = job.reporting.record;
        QueueLoop {
            slots: vec![Slot::default(); q.depth],
            free: (0..q.depth as u32).rev().collect(),
            queued: Vec::with_capacity(q.depth),
            inflight: 0,
            inflight_bytes: 0,
            depth: DepthCounters::new(),
            issued_bytes: 0,
            pending_sync: None,
            overlap: InFlight::new(job, q.depth),
            parked: None,
            held: None,
            stopping: false,
            draining_to_low: false,
            trim_waits: false,
            thinking: false,
            flow_held: false,
            bad_read: false,
            cap: st.lat.as_ref().map_or(q.depth, LatTarget::cap),
            cmdprio,
            prio_by_lat: job.lat_percentiles,
            record,
            every_lat: record.lat && record.clat && record.slat,
            now: 0,
            last_t: 0,
            io_error: None,
            q,
            regions,
            st,
        }
    }

    /// Fill, submit, then run what waits for an empty queue or reap; until the job ends.
    fn run<E: QueueEngine>(&mut self, e: &mut E) {
        loop {
            if self.st.cx.stopped() {
                self.stopping = true;
            }
            // 1. Fill the queue.
            self.now = 0;
            while self.may_issue() {
                if self.fill_one(e) == Step::End {
                    break;
                }
            }
            // 2. Submit what is queued (oldest first).
            self.submit(e);
            if self.st.res.error.is_some() {
                break;
            }
            if self.inflight + self.queued.len() >= self.q.depth && self.q.low < self.q.depth {
                self.draining_to_low = true;
            }
            // 3. Nothing in flight: run a due sync, wait for the rate schedule, or finish.
            if self.inflight == 0 && self.queued.is_empty() {
                match self.idle(e) {
                    Step::End => break,
                    _ => continue,
                }
            }
            // 4. Reap.
            if self.reap(e) == Step::End {
                break;
            }
        }
    }

    /// Whether one more I/O may be queued now.
    #[inline]
    fn may_issue(&self) -> bool {
        !self.stopping
            && !self.draining_to_low
            && self.pending_sync.is_none()
            && !self.thinking
            && !self.flow_held
            && self.inflight + self.queued.len() < self.cap
            && self.st.limit > 0
            && (self.st.tl.in_ramp || self.issued_bytes < self.st.limit)
    }

    /// Queues the next I/O. End: stop filling for now.
    #[inline]
    fn fill_one<E: QueueEngine>(&mut self, e: &mut E) -> Step {
        if self.st.flow.as_mut().is_some_and(Flow::held) {
            self.flow_held = self.st.flow.as_ref().is_some_and(|f| f.sleep_ns > 0);
            return Step::End;
        }
        // serialize_overlap: an I/O that overlapped one in flight goes first once it no longer
        // does; until then the queue is reaped.
        let resumed = match self.parked.take() {
            Some((d, io)) if self.overlaps(&io) => {
                self.parked = Some((d, io));
                return Step::End;
            }
            p => p,
        };
        // verify_backlog: a due read-back goes first, through the same queue.
        let read_back = match resumed {
            Some(_) => None,
            None => self.st.data.as_mut().and_then(|d| d.backlog_take()),
        };
        let (dir, due) = match (read_back, self.held.take()) {
            _ if resumed.is_some() => (resumed.map_or(0, |r| r.0), 0),
            (Some(_), h) => {
                self.held = h;
                (DDIR_READ, 0)
            }
            (None, Some(h)) => h,
            (None, None) => {
                let dir = self.st.src.pick_dir();
                let src = &mut self.st.src;
                (dir, if src.paced { src.due(dir) } else { 0 })
            }
        };
        if due > 0 {
            self.now = now_ns();
            if due > self.now {
                self.held = Some((dir, due));
                return Step::End;
            }
        }
        if dir == DDIR_TRIM {
            return self.trim(e, due);
        }
        let io = match (resumed, read_back) {
            (Some((_, io)), _) => io,
            (None, Some(w)) => verify_phase::next_io(w),
            (None, None) => self.st.src.next(dir),
        };
        if resumed.is_none() && self.overlaps(&io) {
            self.parked = Some((dir, io));
            return Step::End;
        }
        self.queue_io(e, dir, io, read_back)
    }

    /// serialize_overlap: `io` overlaps an I/O queued or in flight.
    #[inline]
    fn overlaps(&self, io: &NextIo) -> bool {
        self.overlap
            .as_ref()
            .is_some_and(|o| o.overlaps(io.file, io.offset, io.len))
    }

    /// A trim waits for an empty queue, then runs synchronously. Again: fill on.
    #[cold]
    fn trim<E: QueueEngine>(&mut self, e: &mut E, due: u64) -> Step {
        let dir = DDIR_TRIM;
        self.trim_waits = self.inflight + self.queued.len() > 0;
        if self.trim_waits {
            self.held = Some((dir, due));
            return Step::End;
        }
        let io = self.st.src.next(dir);
        if let Some(g) = self.st.iolog.as_mut() {
            let now = now_ns();
            if io.new_pass {
                g.new_pass(now, io.file);
            }
            g.io(now, io.file, dir, io.offset, io.len as u64);
        }
        let t = match super::trims::sync_trim(e, &mut self.st.res, io, self.st.timed) {
            Ok(t) => t,
            Err(err) => {
                let f = self.st.cx.failure("trim", io.file, io.offset, errno(&err));
                self.st.res.error = Some(f);
                return Step::End;
            }
        };
        // Alone in flight, submitted and completed at once (as fio books it).
        self.depth.on_issue(1);
        self.depth.on_submit(1);
        self.depth.on_complete(1);
        self.st.publish(dir);
        self.issued_bytes += io.len as u64;
        if self.st.ramp_over(t) {
            self.depth.reset();
            self.issued_bytes = 0;
            self.st.src.restart_pacing(self.st.tl.meas_start);
        } else if t >= self.st.tl.deadline {
            self.stopping = true;
        }
        Step::Again
    }

    /// Queues `io` (a read-back of `read_back` if set) in a free slot.
    #[inline]
    fn queue_io<E: QueueEngine>(
        &mut self,
        e: &mut E,
        dir: usize,
        io: NextIo,
        read_back: Option<Written>,
    ) -> Step {
        let NextIo {
            file,
            offset,
            len,
            new_pass,
            ..
        } = io;
        if new_pass {
            self.st.log_pass(file);
            self.st.cx.input.start_pass(file);
        }
        let slot = self.free.pop().expect("a free slot below iodepth") as usize;
        if let Some(d) = self.st.data.as_mut() {
            d.queued(slot, read_back);
        }
        let buf = self.regions[slot].0;
        if dir == DDIR_WRITE {
            let st = &mut self.st;
            // SAFETY: the slot's buffer holds at least len bytes and is not in flight.
            unsafe {
                verify_phase::prepare_write(
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
        let t_prep = if self.st.timed { now_ns() } else { 0 };
        let prio = match self.cmdprio.as_mut() {
            Some(c) => {
                let i = c.pick(dir, len);
                e.set_prio(c.value(dir, i));
                i
            }
            None => 0,
        };
        self.slots[slot] = Slot {
            dir,
            file,
            offset,
            len,
            t_prep,
            t_sub: 0,
            prio,
        };
        // fio logs an I/O as it is queued (verify_backlog's reads included).
        self.st.log_io(file, dir, offset, len);
        // lockfile: fio holds the file's lock from prep until the engine has the I/O.
        let held = self
            .st
            .cx
            .input
            .file_locks
            .as_deref()
            .map(|l| l[file].lock(dir));
        // SAFETY: the slot's buffer lives in `bufs`, which is freed only after the queue is
        // drained and the engine destroyed (and leaked otherwise); the slot is not reused
        // before its completion is reaped (it returns to `free` only then).
        let queued_ok = unsafe { e.queue(slot as u32, file, Op::of_dir(dir), buf, len, offset) };
        drop(held);
        if let Err(err) = queued_ok {
            self.free.push(slot as u32);
            let name = if dir == DDIR_READ { "read" } else { "write" };
            self.st.res.error = Some(self.st.cx.failure(name, file, offset, errno(&err)));
            return Step::End;
        }
        self.queued.push(slot as u32);
        if let Some(o) = self.overlap.as_mut() {
            o.add(slot, file, offset, len);
        }
        self.depth
            .on_issue((self.inflight + self.queued.len()) as u32);
        if read_back.is_some() {
            return Step::Again; // not part of the workload's size, as in fio
        }
        self.issued_bytes += len as u64;
        self.after_issue(dir, file, offset, len)
    }

    /// After a workload I/O was queued: latency_target's window, thinktime, the syncs due.
    #[inline]
    fn after_issue(&mut self, dir: usize, file: usize, offset: u64, len: usize) -> Step {
        if let Some(l) = self.st.lat.as_mut() {
            // fio checks the window after every I/O it issues too (one in flight now).
            if l.after_io(now_ns(), self.st.res.ios.iter().sum(), 1) == lt::Step::Done {
                self.stopping = true;
            }
            self.cap = l.cap();
        }
        if self.st.timing.active {
            self.st.timing.issued += 1;
            self.thinking = self.st.timing.think_due(now_ns());
        }
        if dir == DDIR_WRITE {
            for op in self.st.count_write().into_iter().flatten() {
                self.pending_sync = Some((op, file));
            }
            let synced = self.pending_sync.is_some();
            if self.st.range_due(file, offset, len as u64, synced) {
                if let Some(op) = self.st.take_range(file) {
                    self.pending_sync = Some((op, file));
                }
            }
        }
        if self.queued.len() >= self.q.batch_submit {
            return Step::End;
        }
        Step::Again
    }

    /// Submits what is queued, oldest first (an error is left in the result).
    fn submit<E: QueueEngine>(&mut self, e: &mut E) {
        while !self.queued.is_empty() {
            let t_sub = if self.st.timed { now_ns() } else { 0 };
            // A full queue waits for completions next (step 4), as many as the reap will want:
            // in the same system call where the engine can (io_uring, which skips the wait
            // when it took fewer entries than given), found then by the reap without another.
            let q = &self.q;
            let full = self.inflight + self.queued.len() >= q.depth && q.low >= q.depth;
            let wait = 1.max(q.complete_min).min(q.complete_max);
            let r = if full {
                e.submit_and_wait(wait)
            } else {
                e.submit()
            };
            let n = match r {
                Ok(n) => n,
                Err(err) => {
                    let s = self.slots[self.queued[0] as usize];
                    let op = if s.dir == DDIR_READ { "read" } else { "write" };
                    let f = self.st.cx.failure(op, s.file, s.offset, errno(&err));
                    self.st.res.error = Some(f.with_len(s.len));
                    // fio counts the failed I/O as issued (total_ios), of no bytes.
                    self.st.res.ios[s.dir] += 1;
                    break;
                }
            };
            if n == 0 {
                break; // the kernel is busy: reap first
            }
            for &slot in &self.queued[..n] {
                let s = &mut self.slots[slot as usize];
                s.t_sub = t_sub;
                self.inflight_bytes += s.len as u64;
            }
            self.queued.drain(..n);
            self.inflight += n;
            self.depth.on_submit(n as u32);
        }
    }

    /// Nothing in flight: a due sync, thinktime, flow's sleep, a loop's read-back, the rate's
    /// wait, or the end. Never Go.
    fn idle<E: QueueEngine>(&mut self, e: &mut E) -> Step {
        let deadline = self.st.tl.deadline;
        // fio makes a sync_file_range only before a next I/O: none after the last write.
        let last = self.stopping || (!self.st.tl.in_ramp && self.issued_bytes >= self.st.total);
        if let Some((op, file)) = self
            .pending_sync
            .take()
            .filter(|(op, _)| !(last && matches!(op, SyncOp::Range { .. })))
        {
            return self.drained_sync(e, op, file);
        }
        if self.thinking {
            self.thinking = false;
            let st = &mut self.st;
            st.timing.pause(&mut st.src, st.cx.stop, deadline);
            return Step::Again;
        }
        if let Some(f) = self.st.flow.as_ref().filter(|_| self.flow_held) {
            // flow_sleep: drained (fio's quiesce), now sleep it.
            self.flow_held = false;
            f.pause(deadline);
            if now_ns() >= deadline {
                return Step::End;
            }
            return Step::Again;
        }
        if !self.stopping && self.st.loop_ends(self.issued_bytes) {
            // verify with loops > 1: the loop's I/O is done; fio reads back now.
            if self.st.read_back_due() {
                self.inflight = self.read_back(e);
            }
            if self.inflight > 0 || self.st.failed() {
                return Step::End;
            }
            self.st.next_loop();
            return Step::Again;
        }
        // create_only (limit 0) does no I/O, not even during ramp.
        if self.stopping || self.st.limit == 0 || self.st.loop_done(self.issued_bytes) {
            return Step::End;
        }
        if let Some((_, due)) = self.held {
            // Sleep in slices so that Ctrl-C is noticed during slow rates.
            let now = if self.now == 0 { now_ns() } else { self.now };
            if now >= deadline {
                return Step::End;
            }
            sleep_until(due.min(now + 100_000_000).min(deadline));
            return Step::Again;
        }
        // flow without flow_sleep retries at once (as fio); the runtime still ends it.
        if self.st.flow.is_some() && now_ns() >= deadline {
            return Step::End;
        }
        Step::Again
    }

    /// fsync, fdatasync or sync_file_range once the queue drained.
    #[cold]
    fn drained_sync<E: QueueEngine>(&mut self, e: &mut E, op: SyncOp, file: usize) -> Step {
        // fio's sync takes a fresh I/O unit here: offset 0, as it logs.
        self.st.log_sync(file, op, 0);
        let s0 = now_ns();
        if let Err(err) = e.sync(file, op) {
            self.st.res.error = Some(self.st.cx.failure(op.name(), file, 0, errno(&err)));
            return Step::End;
        }
        let s1 = now_ns();
        self.st.count_sync(s0, s1, Some(&self.depth));
        if s1 >= self.st.tl.deadline {
            return Step::End;
        }
        Step::Again
    }

    /// verify: the read-back through the queue (nothing in flight). Returns what is left in
    /// flight (not 0 only after a failed reap).
    fn read_back<E: QueueEngine>(&mut self, e: &mut E) -> usize {
        let st = &mut self.st;
        match st.data.as_mut() {
            Some(d) => {
                let deadline = st.tl.deadline;
                verify_phase::run_queue(e, d, st.cx, &mut st.res, &self.regions, deadline)
            }
            None => 0,
        }
    }

    /// Reap: wait while the queue is full, a sync waits, or nothing more can be issued.
    #[inline]
    fn reap<E: QueueEngine>(&mut self, e: &mut E) -> Step {
        let blocked = self.draining_to_low
            || self.inflight + self.queued.len() >= self.cap
            || self.flow_held
            || self.pending_sync.is_some()
            || self.parked.is_some()
            || self.thinking;
        let issue_done =
            self.held.is_some() || self.stopping || self.st.loop_done(self.issued_bytes);
        let min = if blocked || issue_done {
            let want = if self.draining_to_low {
                self.inflight.saturating_sub(self.q.low).max(1)
            } else {
                1
            };
            // Never ask for more than one reap may take (io_getevents refuses min > max).
            let q = &self.q;
            want.max(q.complete_min)
                .min(q.complete_max)
                .min(self.inflight)
        } else {
            0
        };
        // With iodepth_batch_complete_min above 1, reap only when waiting, as fio does: a
        // passing look at the ring would take fewer than the minimum (under CPU load, often).
        if min == 0 && (self.inflight == 0 || self.q.complete_min > 1) {
            return Step::Again;
        }
        // Waiting only for the rate schedule: wake up when the next I/O is due, not when some
        // completion happens to arrive, or paced I/O would go out in bursts.
        let only_pacing = self.held.is_some()
            && !self.trim_waits
            && !self.draining_to_low
            && self.inflight + self.queued.len() < self.cap
            && self.pending_sync.is_none()
            && self.parked.is_none()
            && !self.thinking
            && !self.stopping
            && (self.st.tl.in_ramp || self.issued_bytes < self.st.limit);
        let timeout = match self.held {
            Some((_, due)) if only_pacing => Some(due.saturating_sub(now_ns()).max(1_000)),
            _ => None,
        };
        self.last_t = 0;
        self.io_error = None;
        let max = self.q.complete_max;
        let reaped = e.reap(min, max, timeout, &mut |slot: u32, r: i64| {
            self.complete(slot, r)
        });
        match reaped {
            Ok(n) => self.after_reap(n),
            Err(err) => {
                // Not tied to one I/O: name the job's first file, offset 0.
                self.st.res.error = Some(self.st.cx.failure("reap", 0, 0, errno(&err)));
                Step::End
            }
        }
    }

    /// One completion: `r` bytes done or a negative errno, of the I/O in `slot`.
    #[inline]
    fn complete(&mut self, slot: u32, r: i64) {
        let t = now_ns();
        self.last_t = t;
        let s = self.slots[slot as usize];
        self.free.push(slot);
        if let Some(o) = self.overlap.as_mut() {
            o.remove(slot as usize);
        }
        self.inflight -= 1;
        self.inflight_bytes -= s.len as u64;
        if let Some(v) = self.st.data.as_mut().filter(|_| s.dir == DDIR_WRITE) {
            v.write_completed(s.file, s.offset);
        }
        if r < 0 {
            self.failed_io(slot, s, r);
            return;
        }
        let d = s.dir;
        let at = (s.file, d, s.offset, s.len);
        if self.st.timed {
            self.record(t, s);
            self.st.lat_sample(at, t.saturating_sub(s.t_prep));
        }
        self.st.over_max_lat(at, t.saturating_sub(s.t_prep));
        self.st.count(d, s.len, r as u64);
        if let (Some(l), Some(c)) = (self.st.logs.as_mut(), self.cmdprio.as_ref()) {
            l.set_io_prio(c.value(d, s.prio));
        }
        let (tp, ts) = if self.st.timed {
            (s.t_prep, s.t_sub)
        } else {
            (t, t)
        };
        self.st.log_done(d, [tp, ts, t], s.len, r as u64, s.offset);
        if d == DDIR_READ && self.st.data.is_some() {
            self.check_read(slot as usize, s, r as u64);
        }
    }

    /// A completion's latencies at `t` (timed jobs).
    #[inline]
    fn record(&mut self, t: u64, s: Slot) {
        let (res, d) = (&mut self.st.res, s.dir);
        res.tick_queued(t, &self.depth);
        let c = t.saturating_sub(s.t_sub);
        let l = t.saturating_sub(s.t_prep);
        let sl = s.t_sub.saturating_sub(s.t_prep);
        if self.every_lat {
            res.clat[d].record(c);
            res.lat[d].record(l);
            res.slat[d].record(sl);
        } else {
            some_lat(res, self.record, d, [c, l, sl]);
        }
        if let Some(p) = res.prio_lat.as_mut() {
            let v = if self.prio_by_lat { s.t_prep } else { s.t_sub };
            p.recs[d.min(1)][s.prio as usize].record(t.saturating_sub(v));
        }
    }

    /// A failed I/O: survived (continue_on_error) or the first fatal one of this reap.
    #[cold]
    fn failed_io(&mut self, slot: u32, s: Slot, r: i64) {
        let no = (-r) as i32;
        if !self.st.res.survives(&self.st.cx.input.job, s.dir, no) {
            self.io_error.get_or_insert((slot as usize, r));
            // fio counts every failed I/O as issued (total_ios), of no bytes.
            self.st.res.ios[s.dir] += 1;
        } else if self.st.cx.input.job.io.error_dump {
            let op = if s.dir == DDIR_READ { "read" } else { "write" };
            let f = self.st.cx.failure(op, s.file, s.offset, no);
            f.with_len(s.len).dump(&self.st.cx.input.diag);
        }
    }

    /// verify: a completed read of `n` bytes into `slot`'s buffer is checked.
    #[inline]
    fn check_read(&mut self, slot: usize, s: Slot, n: u64) {
        let st = &mut self.st;
        let Some(v) = st.data.as_mut() else { return };
        // SAFETY: the read into this slot's buffer has completed.
        let b = unsafe { std::slice::from_raw_parts_mut(self.regions[slot].0, s.len) };
        let input = st.cx.input;
        if v.after_queued_read(slot, n, b, input, (s.file, s.offset), &mut st.res)
            .is_err()
        {
            self.bad_read = true;
        }
    }

    /// After a reap of `n` completions: publish, stop on an error, then the per-completion
    /// features (thinktime, minimum rate, latency target, end of ramp, runtime).
    #[inline]
    fn after_reap(&mut self, n: usize) -> Step {
        if n > 0 {
            self.depth.on_complete(n as u32);
            // verify_backlog's reads, left out of the periodic samples (before the reads).
            let (res, p) = (&self.st.res, self.st.cx.published);
            if res.read_back_ios > 0 {
                p.read_back[0].store(res.read_back_bytes, Ordering::Relaxed);
                p.read_back[1].store(res.read_back_ios, Ordering::Relaxed);
            }
            self.st.publish(DDIR_READ);
            self.st.publish(DDIR_WRITE);
        }
        if self.bad_read {
            return Step::End;
        }
        if let Some((slot, r)) = self.io_error {
            self.fatal_io(slot, r);
            return Step::End;
        }
        if self.draining_to_low && self.inflight <= self.q.low {
            self.draining_to_low = false;
        }
        if n == 0 {
            return Step::Again;
        }
        if self.st.res.job_error == libc::ETIMEDOUT {
            return Step::End; // max_latency: the job ends with what it did
        }
        let last_t = self.last_t;
        if self.st.timing.active {
            let st = &mut self.st;
            st.timing.completed += n as u64;
            self.thinking = self.thinking || st.timing.think_due(last_t);
            let job = &st.cx.input.job;
            if !st.tl.in_ramp && st.timing.min_rate_failed(last_t, &mut st.res, &job.name) {
                return Step::End;
            }
        }
        let mut lat_reset = false;
        if self.st.lat.is_some() {
            match self.st.lat_after(last_t, self.inflight) {
                lt::After::Go => {}
                lt::After::Done => self.stopping = true,
                lt::After::Restarted => lat_reset = true,
                lt::After::Failed => return Step::End,
            }
            self.cap = self.st.lat.as_ref().map_or(self.cap, LatTarget::cap);
        }
        if lat_reset || self.st.ramp_over(last_t) {
            // I/Os still in flight count towards the measured period's byte limit.
            self.depth.reset();
            if !lat_reset {
                // (fio's issued-bytes count survives latency_target's reset.)
                self.issued_bytes = self.inflight_bytes;
            }
            self.st.restarted(true);
            self.cap = self.st.lat.as_ref().map_or(self.cap, LatTarget::cap);
            return Step::Again;
        }
        if last_t >= self.st.tl.deadline {
            self.stopping = true;
        }
        Step::Go
    }

    /// The first fatal error of a reap ends the job (fill_device's ENOSPC without an error).
    #[cold]
    fn fatal_io(&mut self, slot: usize, r: i64) {
        if fills_device(&self.st.cx.input.job, (-r) as i32) {
            return;
        }
        let s = self.slots[slot];
        let op = if s.dir == DDIR_READ { "read" } else { "write" };
        let f = self.st.cx.failure(op, s.file, s.offset, (-r) as i32);
        self.st.res.error = Some(f.with_len(s.len));
    }

    /// Reaps what is still in flight (after an error too: the buffers must outlive the I/O).
    fn drain<E: QueueEngine>(&mut self, e: &mut E) {
        while self.inflight > 0 {
            let depth = self.q.depth;
            let r = e.reap(1, depth, None, &mut |slot: u32, r: i64| {
                self.free.push(slot);
                self.inflight -= 1;
                // fio counts an issued I/O that failed in total_ios (after a fatal error, those
                // still in flight fail too).
                if r < 0 {
                    self.st.res.ios[self.slots[slot as usize].dir] += 1;
                }
            });
            if r.is_err() {
                break;
            }
        }
    }
}

/// The latencies a job records when some are switched off (disable_clat, disable_lat,
/// disable_slat): `[clat, lat, slat]` of one completion of direction `d`.
fn some_lat(res: &mut WorkerResult, r: crate::model::RecordSpec, d: usize, v: [u64; 3]) {
    if r.clat {
        res.clat[d].record(v[0]);
    }
    if r.lat {
        res.lat[d].record(v[1]);
    }
    if r.slat {
        res.slat[d].record(v[2]);
    }
}
