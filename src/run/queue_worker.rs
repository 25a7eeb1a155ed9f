//! One job instance with a queueing engine (io_uring, libaio): keeps up to `iodepth` I/Os in
//! flight. Definitions (docs/MEASUREMENT.md): slat = prepared → handed to the kernel, clat =
//! handed to the kernel → completion reaped, lat = prepared → completion reaped. The submit
//! timestamp is taken *before* the submit call, so I/O that completes inside it (buffered
//! libaio) shows in clat, not slat; every completion gets its own timestamp as it is reaped.
//! fsync/fdatasync every N writes drain the queue first and are timed as their own operation.

use super::clock::{now_ns, sleep_until};
use super::instance::Timeline;
use super::instance::{errno, wait_for_start, IoFailure, Published, WorkerInput, WorkerResult};
use super::latency_target::{self as lt, Flow, LatTarget};
use super::source::{IoSource, NextIo};
use super::timing::Timing;
use super::verify_phase::{self, Data};
use crate::engine::{Op, QueueEngine, SyncOp};
use crate::model::{DDIR_READ, DDIR_TRIM, DDIR_WRITE};
use crate::stats::DepthCounters;
use crate::workload::buffers::AlignedBuf;
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
    let job = &input.job;
    let q = Depths::of(job);
    let mut res = WorkerResult::new(sample_budget, true, job);
    res.status_lat = input.status_lat.clone();
    let failure = |op, file, offset, errno| IoFailure::new(input, op, file, offset, errno);

    wait_for_start(start_ns, job);

    let mut src = IoSource::new(input);
    let regions = bufs.regions();
    let io_max = input.io_max_len();
    for &(p, len) in &regions {
        // SAFETY: each region is a distinct, owned slice of the slot buffer.
        let s = unsafe { std::slice::from_raw_parts_mut(p, len.min(io_max)) };
        if job.zero_buffers {
            s.fill(0);
        } else {
            src.rng.fill(s);
        }
    }
    let refill = job.refill_buffers && !job.zero_buffers;
    let timed = job.timed();
    // disable_lat/clat/slat: which recorders take samples, decided once (one branch per I/O).
    let record = job.reporting.record;
    let every_lat = record.lat && record.clat && record.slat;
    let sync_every = [
        (job.fsync as u64, SyncOp::Fsync),
        (job.fdatasync as u64, SyncOp::Fdatasync),
    ];

    let mut slots = vec![Slot::default(); q.depth];
    let mut free: Vec<u32> = (0..q.depth as u32).rev().collect();
    let mut queued: Vec<u32> = Vec::with_capacity(q.depth);
    let mut inflight = 0usize;
    let mut inflight_bytes = 0u64;
    let mut depth = DepthCounters::new();

    let total = input.io_limit.unwrap_or(u64::MAX);
    let mut issued_bytes = 0u64;
    let mut writes = 0u64;
    // A sync waiting for the queue to drain: (op, file of the write that triggered it).
    let mut pending_sync: Option<(SyncOp, usize)> = None;
    // sync_file_range's spans (issue stops while a sync waits, so issued = completed then).
    let mut sfr = super::sync_range::SyncRange::new(job, input.paths.len());
    // serialize_overlap: the ranges queued or in flight, and an I/O waiting for its overlap.
    let mut overlap = super::overlap::InFlight::new(job, q.depth);
    let mut parked: Option<(usize, NextIo)> = None;
    // Next I/O's direction and due time when rate-limited and not yet due.
    let mut held: Option<(usize, u64)> = None;
    let mut stopping = false;
    // After the queue filled up, reap down to iodepth_low before refilling.
    let mut draining_to_low = false;
    // A trim (held) waits for the queue to drain, then runs synchronously (fio's
    // FIO_ASYNCIO_SYNC_TRIM).
    let mut trim_waits = false;
    let mut tl = Timeline::begin(job, published, &mut res);
    src.restart_pacing(tl.meas_start);
    let mut logs = input.take_logs();
    let mut iolog = input.take_iolog();
    res.error = super::instance::set_ioprio(input);
    if let Err(e) = engine.start() {
        res.error.get_or_insert(failure("setup", 0, 0, errno(&e)));
    }
    let total = if res.error.is_some() { 0 } else { total };
    let mut cmdprio = crate::stats::prio::CmdPrio::new(job, input.seed);
    res.prio_lat = cmdprio.as_ref().map(|c| Box::new(c.recorders()));
    let prio_by_lat = job.lat_percentiles;
    // Verify and buffer options (None without them: one check per I/O).
    let mut data = Data::new(input, &src);
    // verify with loops > 1: one loop at a time, each read back (else the whole size).
    let per_loop = verify_phase::loop_limit(data.as_ref(), input, total);
    let mut limit = per_loop;
    if let Some(d) = data.as_mut().filter(|d| d.only() && limit > 0) {
        verify_phase::dry_run(&mut src, d, input, &mut res, published);
        stopping = true;
    }
    let mut bad_read = false;
    // Thinktime and the minimum-rate check; a due pause drains the queue first (fio's quiesce).
    let mut timing = Timing::new(job, tl.meas_start, &input.diag);
    let max_lat = timing.max_lat;
    let mut thinking = false;
    // latency_target: the depth its search allows (else iodepth); flow: held back with
    // flow_sleep, the queue drains and the job sleeps.
    let mut lat = LatTarget::new(job, tl.meas_start);
    let mut cap = lat.as_ref().map_or(q.depth, LatTarget::cap);
    let mut flow = Flow::new(input);
    let mut flow_held = false;

    loop {
        if stop.load(Ordering::Relaxed) {
            stopping = true;
        }
        // 1. Fill the queue.
        let mut now = 0u64;
        while !stopping
            && !draining_to_low
            && pending_sync.is_none()
            && !thinking
            && !flow_held
            && inflight + queued.len() < cap
            && limit > 0
            && (tl.in_ramp || issued_bytes < limit)
        {
            if flow.as_mut().is_some_and(Flow::held) {
                flow_held = flow.as_ref().is_some_and(|f| f.sleep_ns > 0);
                break;
            }
            // serialize_overlap: an I/O that overlapped one in flight goes first once it no
            // longer does; until then the queue is reaped.
            let resumed = match parked.take() {
                Some((d, io))
                    if overlap
                        .as_ref()
                        .is_some_and(|o| o.overlaps(io.file, io.offset, io.len)) =>
                {
                    parked = Some((d, io));
                    break;
                }
                p => p,
            };
            // verify_backlog: a due read-back goes first, through the same queue.
            let read_back = match resumed {
                Some(_) => None,
                None => data.as_mut().and_then(|d| d.backlog_take()),
            };
            let (dir, due) = match (read_back, held.take()) {
                _ if resumed.is_some() => (resumed.map_or(0, |r| r.0), 0),
                (Some(_), h) => {
                    held = h;
                    (DDIR_READ, 0)
                }
                (None, Some(h)) => h,
                (None, None) => {
                    let dir = src.pick_dir();
                    (dir, if src.paced { src.due(dir) } else { 0 })
                }
            };
            if due > 0 {
                now = now_ns();
                if due > now {
                    held = Some((dir, due));
                    break;
                }
            }
            if dir == DDIR_TRIM {
                trim_waits = inflight + queued.len() > 0;
                if trim_waits {
                    held = Some((dir, due));
                    break;
                }
                let io = src.next(dir);
                if let Some(g) = iolog.as_mut() {
                    let now = now_ns();
                    if io.new_pass {
                        g.new_pass(now, io.file);
                    }
                    g.io(now, io.file, dir, io.offset, io.len as u64);
                }
                let t = match super::trims::sync_trim(&mut engine, &mut res, io, timed) {
                    Ok(t) => t,
                    Err(e) => {
                        res.error = Some(failure("trim", io.file, io.offset, errno(&e)));
                        break;
                    }
                };
                // Alone in flight, submitted and completed at once (as fio books it).
                depth.on_issue(1);
                depth.on_submit(1);
                depth.on_complete(1);
                published.bytes[dir].store(res.bytes[dir], Ordering::Relaxed);
                published.ios[dir].store(res.ios[dir], Ordering::Relaxed);
                issued_bytes += io.len as u64;
                if tl.ramp_over(t, &mut res, published) {
                    depth.reset();
                    issued_bytes = 0;
                    src.restart_pacing(tl.meas_start);
                } else if t >= tl.deadline {
                    stopping = true;
                }
                continue;
            }
            let io = match (resumed, read_back) {
                (Some((_, io)), _) => io,
                (None, Some(w)) => verify_phase::next_io(w),
                (None, None) => src.next(dir),
            };
            if let Some(o) = overlap.as_ref().filter(|_| resumed.is_none()) {
                if o.overlaps(io.file, io.offset, io.len) {
                    parked = Some((dir, io));
                    break;
                }
            }
            let NextIo {
                file,
                offset,
                len,
                new_pass,
                ..
            } = io;
            if new_pass {
                if let Some(g) = iolog.as_mut() {
                    g.new_pass(now_ns(), file);
                }
                input.start_pass(file);
            }
            let slot = free.pop().expect("a free slot below iodepth") as usize;
            if let Some(d) = data.as_mut() {
                d.queued(slot, read_back);
            }
            let buf = regions[slot].0;
            if dir == DDIR_WRITE {
                // SAFETY: the slot's buffer holds at least len bytes and is not in flight.
                unsafe {
                    verify_phase::prepare_write(
                        buf,
                        len,
                        refill,
                        &mut src.rng,
                        data.as_mut(),
                        file,
                        offset,
                    )
                };
            }
            let t_prep = if timed { now_ns() } else { 0 };
            let prio = match cmdprio.as_mut() {
                Some(c) => {
                    let i = c.pick(dir, len);
                    engine.set_prio(c.value(dir, i));
                    i
                }
                None => 0,
            };
            slots[slot] = Slot {
                dir,
                file,
                offset,
                len,
                t_prep,
                t_sub: 0,
                prio,
            };
            let op = Op::of_dir(dir);
            if let Some(g) = iolog.as_mut() {
                // fio logs an I/O as it is queued (verify_backlog's reads included).
                g.io(now_ns(), file, dir, offset, len as u64);
            }
            // lockfile: fio holds the file's lock from prep until the engine has the I/O.
            let held = input.file_locks.as_deref().map(|l| l[file].lock(dir));
            // SAFETY: the slot's buffer lives in `bufs`, which is freed only after the queue is
            // drained and the engine destroyed (and leaked otherwise); the slot is not reused
            // before its completion is reaped (it returns to `free` only then).
            let queued_ok = unsafe { engine.queue(slot as u32, file, op, buf, len, offset) };
            drop(held);
            if let Err(e) = queued_ok {
                free.push(slot as u32);
                let name = if dir == DDIR_READ { "read" } else { "write" };
                res.error = Some(failure(name, file, offset, errno(&e)));
                break;
            }
            queued.push(slot as u32);
            if let Some(o) = overlap.as_mut() {
                o.add(slot, file, offset, len);
            }
            depth.on_issue((inflight + queued.len()) as u32);
            if read_back.is_some() {
                continue; // not part of the workload's size, as in fio
            }
            issued_bytes += len as u64;
            if let Some(l) = lat.as_mut() {
                // fio checks the window after every I/O it issues too (one in flight now).
                if l.after_io(now_ns(), res.ios.iter().sum(), 1) == lt::Step::Done {
                    stopping = true;
                }
                cap = l.cap();
            }
            if timing.active {
                timing.issued += 1;
                thinking = timing.think_due(now_ns());
            }
            if dir == DDIR_WRITE {
                writes += 1;
                for &(every, op) in &sync_every {
                    if every != 0 && writes.is_multiple_of(every) {
                        pending_sync = Some((op, file));
                    }
                }
                if let Some(r) = sfr.as_mut() {
                    if pending_sync.is_some() {
                        r.synced(file);
                    } else if r.wrote(file, offset, len as u64, writes) {
                        pending_sync = Some((r.take(file), file));
                    }
                }
            }
            if queued.len() >= q.batch_submit {
                break;
            }
        }

        // 2. Submit what is queued (oldest first).
        while !queued.is_empty() {
            let t_sub = if timed { now_ns() } else { 0 };
            // A full queue waits for completions next (step 4), as many as the reap will want:
            // in the same system call where the engine can (io_uring, which skips the wait
            // when it took fewer entries than given), found then by the reap without another.
            let full = inflight + queued.len() >= q.depth && q.low >= q.depth;
            let wait = 1.max(q.complete_min).min(q.complete_max);
            let n = match if full {
                engine.submit_and_wait(wait)
            } else {
                engine.submit()
            } {
                Ok(n) => n,
                Err(e) => {
                    let s = slots[queued[0] as usize];
                    let op = if s.dir == DDIR_READ { "read" } else { "write" };
                    res.error = Some(failure(op, s.file, s.offset, errno(&e)).with_len(s.len));
                    // fio counts the failed I/O as issued (total_ios), of no bytes.
                    res.ios[s.dir] += 1;
                    break;
                }
            };
            if n == 0 {
                break; // the kernel is busy: reap first
            }
            for &slot in &queued[..n] {
                let s = &mut slots[slot as usize];
                s.t_sub = t_sub;
                inflight_bytes += s.len as u64;
            }
            queued.drain(..n);
            inflight += n;
            depth.on_submit(n as u32);
        }
        if res.error.is_some() {
            break;
        }
        if inflight + queued.len() >= q.depth && q.low < q.depth {
            draining_to_low = true;
        }

        // 3. Nothing in flight: run a due sync, wait for the rate schedule, or finish.
        if inflight == 0 && queued.is_empty() {
            // fio makes a sync_file_range only before a next I/O: none after the last write.
            let last = stopping || (!tl.in_ramp && issued_bytes >= total);
            if let Some((op, file)) = pending_sync
                .take()
                .filter(|(op, _)| !(last && matches!(op, SyncOp::Range { .. })))
            {
                if let Some(g) = iolog.as_mut() {
                    // fio's sync takes a fresh I/O unit here: offset 0, as it logs.
                    super::instance::iolog_sync(g, file, op, 0);
                }
                let s0 = now_ns();
                if let Err(e) = engine.sync(file, op) {
                    res.error = Some(failure(op.name(), file, 0, errno(&e)));
                    break;
                }
                let s1 = now_ns();
                if timed {
                    res.tick_queued(s1, &depth);
                    res.sync_lat.record(s1 - s0);
                }
                res.syncs += 1;
                if s1 >= tl.deadline {
                    break;
                }
                continue;
            }
            if thinking {
                thinking = false;
                timing.pause(&mut src, stop, tl.deadline);
                continue;
            }
            if let Some(f) = flow.as_ref().filter(|_| flow_held) {
                // flow_sleep: drained (fio's quiesce), now sleep it.
                flow_held = false;
                f.pause(tl.deadline);
                if now_ns() >= tl.deadline {
                    break;
                }
                continue;
            }
            if !stopping && !tl.in_ramp && issued_bytes >= limit && limit < total {
                // verify with loops > 1: the loop's I/O is done; fio reads back now.
                if let Some(d) = data
                    .as_mut()
                    .filter(|d| verify_phase::phase_due(d, &res, stop, tl.deadline))
                {
                    let (r, p) = (&mut res, published);
                    inflight = verify_phase::run_queue(
                        &mut engine,
                        d,
                        input,
                        r,
                        p,
                        &regions,
                        stop,
                        tl.deadline,
                    );
                }
                if inflight > 0 || res.error.is_some() || res.job_error != 0 {
                    break;
                }
                limit = limit.saturating_add(per_loop).min(total);
                continue;
            }
            // create_only (limit 0) does no I/O, not even during ramp.
            if stopping || limit == 0 || (!tl.in_ramp && issued_bytes >= limit) {
                break;
            }
            if let Some((_, due)) = held {
                // Sleep in slices so that Ctrl-C is noticed during slow rates.
                let now = if now == 0 { now_ns() } else { now };
                if now >= tl.deadline {
                    break;
                }
                sleep_until(due.min(now + 100_000_000).min(tl.deadline));
                continue;
            }
            // flow without flow_sleep retries at once (as fio); the runtime still ends it.
            if flow.is_some() && now_ns() >= tl.deadline {
                break;
            }
            continue;
        }

        // 4. Reap: wait while the queue is full, a sync waits, or nothing more can be issued.
        let must_wait = draining_to_low
            || inflight + queued.len() >= cap
            || flow_held
            || pending_sync.is_some()
            || parked.is_some()
            || thinking
            || held.is_some()
            || stopping
            || (!tl.in_ramp && issued_bytes >= limit);
        let min = if must_wait {
            let want = if draining_to_low {
                inflight.saturating_sub(q.low).max(1)
            } else {
                1
            };
            // Never ask for more than one reap may take (io_getevents refuses min > max).
            want.max(q.complete_min).min(q.complete_max).min(inflight)
        } else {
            0
        };
        // With iodepth_batch_complete_min above 1, reap only when waiting, as fio does: a
        // passing look at the ring would take fewer than the minimum (under CPU load, often).
        if min == 0 && (inflight == 0 || q.complete_min > 1) {
            continue;
        }
        // Waiting only for the rate schedule: wake up when the next I/O is due, not when some
        // completion happens to arrive, or paced I/O would go out in bursts.
        let only_pacing = held.is_some()
            && !trim_waits
            && !draining_to_low
            && inflight + queued.len() < cap
            && pending_sync.is_none()
            && parked.is_none()
            && !thinking
            && !stopping
            && (tl.in_ramp || issued_bytes < limit);
        let timeout = if only_pacing {
            held.map(|(_, due)| due.saturating_sub(now_ns()).max(1_000))
        } else {
            None
        };
        let mut last_t = 0u64;
        let mut io_error: Option<(usize, i64)> = None;
        let reaped = engine.reap(min, q.complete_max, timeout, &mut |slot: u32, r: i64| {
            let t = now_ns();
            last_t = t;
            let s = slots[slot as usize];
            free.push(slot);
            if let Some(o) = overlap.as_mut() {
                o.remove(slot as usize);
            }
            inflight -= 1;
            inflight_bytes -= s.len as u64;
            if let Some(v) = data.as_mut().filter(|_| s.dir == DDIR_WRITE) {
                v.write_completed(s.file, s.offset);
            }
            if r < 0 {
                if !res.survives(job, s.dir, (-r) as i32) {
                    io_error.get_or_insert((slot as usize, r));
                    // fio counts every failed I/O as issued (total_ios), of no bytes.
                    res.ios[s.dir] += 1;
                } else if job.io.error_dump {
                    let op = if s.dir == DDIR_READ { "read" } else { "write" };
                    failure(op, s.file, s.offset, (-r) as i32)
                        .with_len(s.len)
                        .dump(&input.diag);
                }
                return;
            }
            let d = s.dir;
            if timed {
                res.tick_queued(t, &depth);
                let c = t.saturating_sub(s.t_sub);
                let l = t.saturating_sub(s.t_prep);
                let sl = s.t_sub.saturating_sub(s.t_prep);
                if every_lat {
                    res.clat[d].record(c);
                    res.lat[d].record(l);
                    res.slat[d].record(sl);
                } else {
                    some_lat(&mut res, record, d, [c, l, sl]);
                }
                if let Some(p) = res.prio_lat.as_mut() {
                    let v = if prio_by_lat { s.t_prep } else { s.t_sub };
                    p.recs[d.min(1)][s.prio as usize].record(t.saturating_sub(v));
                }
                if let Some(l) = lat.as_mut() {
                    let lat_ns = t.saturating_sub(s.t_prep);
                    if l.on_io(lat_ns) {
                        let (file, dir, offset, len) = (s.file, d, s.offset, s.len);
                        l.note_miss(lt::Missed {
                            lat_ns,
                            file,
                            dir,
                            offset,
                            len,
                        });
                    }
                }
            }
            if timed && t.saturating_sub(s.t_prep) > max_lat[d] {
                let at = (s.file, d, s.offset, s.len);
                super::timing::max_latency_failed(input, at, t - s.t_prep, &mut res);
            }
            if (r as usize) < s.len {
                res.short[d] += 1;
            }
            res.bytes[d] += r as u64;
            res.ios[d] += 1;
            if let Some(l) = logs.as_mut() {
                if let Some(c) = cmdprio.as_ref() {
                    l.set_io_prio(c.value(d, s.prio));
                }
                if !tl.in_ramp {
                    let (tp, ts) = if timed { (s.t_prep, s.t_sub) } else { (t, t) };
                    let (len, off) = (s.len as u64, s.offset);
                    l.on_io(tl.meas_start, d, tp, ts, t, len, r as u64, off);
                }
            }
            if let Some(v) = data.as_mut().filter(|_| d == DDIR_READ) {
                // SAFETY: the read into this slot's buffer has completed.
                let b = unsafe { std::slice::from_raw_parts_mut(regions[slot as usize].0, s.len) };
                let n = r as u64;
                if v.after_queued_read(slot as usize, n, b, input, s.file, s.offset, &mut res)
                    .is_err()
                {
                    bad_read = true;
                }
            }
        });
        let n = match reaped {
            Ok(n) => n,
            Err(e) => {
                // Not tied to one I/O: name the job's first file, offset 0.
                res.error = Some(failure("reap", 0, 0, errno(&e)));
                break;
            }
        };
        if n > 0 {
            depth.on_complete(n as u32);
            // verify_backlog's reads, left out of the periodic samples (before the reads).
            if res.read_back_ios > 0 {
                published.read_back[0].store(res.read_back_bytes, Ordering::Relaxed);
                published.read_back[1].store(res.read_back_ios, Ordering::Relaxed);
            }
            for d in [DDIR_READ, DDIR_WRITE] {
                published.bytes[d].store(res.bytes[d], Ordering::Relaxed);
                published.ios[d].store(res.ios[d], Ordering::Relaxed);
            }
        }
        if bad_read {
            break;
        }
        if let Some((slot, r)) = io_error {
            if super::instance::fills_device(job, (-r) as i32) {
                break;
            }
            let s = slots[slot];
            let op = if s.dir == DDIR_READ { "read" } else { "write" };
            res.error = Some(failure(op, s.file, s.offset, (-r) as i32).with_len(s.len));
            break;
        }
        if draining_to_low && inflight <= q.low {
            draining_to_low = false;
        }
        if n == 0 {
            continue;
        }
        if res.job_error == libc::ETIMEDOUT {
            break; // max_latency: the job ends with what it did
        }
        if timing.active {
            timing.completed += n as u64;
            thinking = thinking || timing.think_due(last_t);
            if !tl.in_ramp && timing.min_rate_failed(last_t, &mut res, &job.name) {
                break;
            }
        }
        let mut lat_reset = false;
        if let Some(l) = lat.as_mut() {
            let (r, p) = (&mut res, published);
            match lt::after_completions(l, last_t, inflight, &mut tl, r, input, p) {
                lt::After::Go => {}
                lt::After::Done => stopping = true,
                lt::After::Restarted => lat_reset = true,
                lt::After::Failed => break,
            }
            cap = l.cap();
        }
        if lat_reset || tl.ramp_over(last_t, &mut res, published) {
            // I/Os still in flight count towards the measured period's byte limit.
            depth.reset();
            if !lat_reset {
                // (fio's issued-bytes count survives latency_target's reset.)
                issued_bytes = inflight_bytes;
            }
            src.restart_pacing(tl.meas_start);
            timing.restart(tl.meas_start);
            if let Some(l) = lat.as_mut() {
                l.ramp_over(tl.meas_start);
                cap = l.cap();
            }
            continue;
        }
        if last_t >= tl.deadline {
            stopping = true;
        }
    }

    // Drain what is still in flight (after an error too: the buffers must outlive the I/O).
    while inflight > 0 {
        match engine.reap(1, q.depth, None, &mut |slot: u32, r: i64| {
            free.push(slot);
            inflight -= 1;
            // fio counts an issued I/O that failed in total_ios (after a fatal error, those
            // still in flight fail too).
            if r < 0 {
                res.ios[slots[slot as usize].dir] += 1;
            }
        }) {
            Ok(_) => {}
            Err(_) => break,
        }
    }
    if let Some(d) = data.as_mut() {
        if inflight == 0 && verify_phase::phase_due(d, &res, stop, tl.deadline) {
            inflight = verify_phase::run_queue(
                &mut engine,
                d,
                input,
                &mut res,
                published,
                &regions,
                stop,
                tl.deadline,
            );
        }
    }
    let end = tl.finish(&mut res, input, |f| engine.sync(f, SyncOp::Fsync));
    super::instance::finish_logs(logs, end, &mut res, &input.diag);
    super::instance::finish_iolog(iolog, end, &input.diag);
    res.depth = Some(depth);
    res.latency_depth = lat.map(|l| l.depth());
    drop(flow);
    // The engine goes before the buffers it may have registered. If I/O is somehow still in
    // flight (a failed reap), leak the buffers rather than let the kernel write into freed memory.
    drop(engine);
    if inflight == 0 {
        bufs.release();
    }
    Timeline::done(published, end, &mut res);
    res
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
