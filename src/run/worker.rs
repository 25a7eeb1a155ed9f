//! One job instance on one OS thread: the I/O loop. The loop allocates nothing, takes no lock and
//! makes no system call besides the I/O itself and the clock (and, once per pass over a file in
//! a buffered job, the cache drop); progress is published through relaxed atomics that the
//! monitor thread reads.

use super::clock::{now_ns, sleep_until};
use super::instance::{
    errno, fills_device, finish_iolog, finish_logs, wait_for_start, IoFailure, Published, Timeline,
    WorkerInput, WorkerResult,
};
use super::latency_target::{self as lt, Flow, LatTarget};
use super::source::{IoSource, NextIo};
use super::timing::Timing;
use super::verify_phase::{self, Data};
use crate::engine::{Engine, Op, SyncOp};
use crate::model::{DDIR_READ, DDIR_TRIM, DDIR_WRITE};
use crate::workload::buffers::AlignedBuf;
use std::sync::atomic::{AtomicBool, Ordering};

struct Loop<'a, E: Engine> {
    engine: E,
    input: &'a WorkerInput,
    published: &'a Published,
    stop: &'a AtomicBool,
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
    let l = Loop {
        engine,
        input,
        published,
        stop,
    };
    l.run(start_ns, sample_budget)
}

impl<E: Engine> Loop<'_, E> {
    fn run(mut self, start_ns: u64, sample_budget: usize) -> WorkerResult {
        let job = &self.input.job;
        let mut res = WorkerResult::new(sample_budget, false, job);
        res.status_lat = self.input.status_lat.clone();

        wait_for_start(start_ns, job);

        let mut src = IoSource::new(self.input);
        let max_bs = job.max_bs() as usize;
        let mut buf = AlignedBuf::new(max_bs);
        buf.fill_prefix(&mut src.rng, job.zero_buffers, self.input.io_max_len());
        let bufp = buf.as_mut_ptr();
        let timed = job.timed();
        let refill = job.refill_buffers && !job.zero_buffers;
        let fsync_every = job.fsync as u64;
        let fdatasync_every = job.fdatasync as u64;
        // sync_file_range: the file whose call is due before the next I/O.
        let mut sfr = super::sync_range::SyncRange::new(job, self.input.paths.len());
        // sync_file_range due before the next I/O: the file, and the offset of the write that
        // made it due (what fio's iolog shows for it).
        let mut sfr_due: Option<(usize, u64)> = None;
        // lockfile: each file's lock, held around the I/O (None without it: one branch).
        let locks = self.input.file_locks.as_deref();

        let total = self.input.io_limit.unwrap_or(u64::MAX);
        let mut done_bytes: u64 = 0;
        let mut writes: u64 = 0;
        let mut tl = Timeline::begin(job, self.published, &mut res);
        src.restart_pacing(tl.meas_start);
        let mut logs = self.input.take_logs();
        let mut iolog = self.input.take_iolog();
        res.error = super::instance::set_ioprio(self.input);
        // Verify and buffer options (None without them: one check per I/O).
        let mut data = Data::new(self.input, &src);
        // verify with loops > 1: one loop at a time, each read back (else the whole size).
        let per_loop = verify_phase::loop_limit(data.as_ref(), self.input, total);
        let mut limit = per_loop;
        if let Some(d) = data.as_mut().filter(|d| d.only() && res.error.is_none()) {
            verify_phase::dry_run(&mut src, d, self.input, &mut res, self.published);
        }
        let mut timing = Timing::new(job, tl.meas_start, &self.input.diag);
        // latency_target's search (the depth is only counted: one I/O at a time) and flow.
        let mut lat = LatTarget::new(job, tl.meas_start);
        let mut flow = Flow::new(self.input);

        // create_only (a limit of 0 bytes): lay out, do no I/O, not even during ramp.
        if limit > 0 && !data.as_ref().is_some_and(Data::only) && res.error.is_none() {
            'io: loop {
                if self.stop.load(Ordering::Relaxed) {
                    break;
                }
                if let (Some((file, at)), Some(r)) = (sfr_due.take(), sfr.as_mut()) {
                    let op = r.take(file);
                    if let Some(g) = iolog.as_mut() {
                        super::instance::iolog_sync(g, file, op, at);
                    }
                    let s0 = now_ns();
                    let e = self.engine.sync(file, op);
                    let s1 = now_ns();
                    if let Err(e) = e {
                        let at = match op {
                            SyncOp::Range { offset, .. } => offset,
                            _ => 0,
                        };
                        let f = IoFailure::new(self.input, op.name(), file, at, errno(&e));
                        res.error = Some(f);
                        break;
                    }
                    if timed {
                        res.tick(s1);
                        res.sync_lat.record(s1 - s0);
                    }
                    res.syncs += 1;
                    if s1 >= tl.deadline {
                        break;
                    }
                }
                if flow.as_mut().is_some_and(Flow::held) {
                    if let Some(f) = &flow {
                        f.pause(tl.deadline);
                    }
                    if now_ns() >= tl.deadline {
                        break;
                    }
                    continue;
                }
                let dir = src.pick_dir();
                if src.paced {
                    let due = src.due(dir);
                    if due > now_ns() {
                        // Sleep in slices so that Ctrl-C is noticed during slow rates.
                        loop {
                            let now = now_ns();
                            if now >= due || self.stop.load(Ordering::Relaxed) {
                                break;
                            }
                            sleep_until(due.min(now + 100_000_000));
                        }
                    }
                }
                let NextIo {
                    file,
                    offset,
                    len,
                    new_pass,
                    ..
                } = src.next(dir);
                if new_pass {
                    if let Some((f, e)) = src.take_open_error() {
                        res.error = Some(IoFailure::new(self.input, "open", f, 0, errno(&e)));
                        break;
                    }
                    if let Some(g) = iolog.as_mut() {
                        g.new_pass(now_ns(), file);
                    }
                    if let Err(e) = self.input.relink(file) {
                        res.error = Some(e);
                        break;
                    }
                    self.input.start_pass(file);
                }
                if dir == DDIR_WRITE {
                    // SAFETY: buf holds max_bs >= len bytes and is owned by this thread.
                    unsafe {
                        verify_phase::prepare_write(
                            bufp,
                            len,
                            refill,
                            &mut src.rng,
                            data.as_mut(),
                            file,
                            offset,
                        )
                    };
                }
                let op = Op::of_dir(dir);
                if let Some(g) = iolog.as_mut() {
                    // fio logs an I/O as it is issued, before its issue time is taken.
                    g.io(now_ns(), file, dir, offset, len as u64);
                }
                let held = locks.map(|l| l[file].lock(dir));
                let t0 = now_ns();
                // SAFETY: bufp points at `buf`, max_bs >= len bytes aligned for O_DIRECT,
                // owned by this thread and alive for the whole loop.
                let r = unsafe { self.engine.io(file, op, bufp, len, offset) };
                let t1 = now_ns();
                drop(held);
                let n = match r {
                    Ok(n) => n,
                    Err(e) if res.survives(job, dir, errno(&e)) => {
                        if job.io.error_dump {
                            let f = IoFailure::new(self.input, op.name(), file, offset, errno(&e));
                            f.with_len(len).dump(&self.input.diag);
                        }
                        // continue_on_error: the I/O was issued, so it counts towards the size.
                        done_bytes += len as u64;
                        // (A loop's read-back, with verify and loops, waits for the next I/O.)
                        if t1 >= tl.deadline || (!tl.in_ramp && done_bytes >= total) {
                            break;
                        }
                        continue;
                    }
                    Err(e) => {
                        // fio counts the failed I/O as issued (total_ios), of no bytes.
                        res.ios[dir] += 1;
                        if !fills_device(job, errno(&e)) {
                            res.error = Some(
                                IoFailure::new(self.input, op.name(), file, offset, errno(&e))
                                    .with_len(len),
                            );
                        }
                        break;
                    }
                };
                if n < len {
                    res.short[dir] += 1;
                }
                if timed {
                    res.tick(t1);
                    res.clat[dir].record(t1 - t0);
                }
                res.bytes[dir] += n as u64;
                res.ios[dir] += 1;
                self.published.bytes[dir].store(res.bytes[dir], Ordering::Relaxed);
                self.published.ios[dir].store(res.ios[dir], Ordering::Relaxed);
                if let Some(l) = logs.as_mut() {
                    if !tl.in_ramp {
                        l.on_io(tl.meas_start, dir, t0, t0, t1, len as u64, n as u64, offset);
                    }
                }
                done_bytes += len as u64;
                if timed && t1 - t0 > timing.max_lat[dir] {
                    let at = (file, dir, offset, len);
                    super::timing::max_latency_failed(self.input, at, t1 - t0, &mut res);
                    break;
                }
                if let Some(d) = data.as_mut().filter(|_| dir == DDIR_READ) {
                    // SAFETY: the read into buf is complete; nothing else uses buf.
                    let b = unsafe { std::slice::from_raw_parts_mut(bufp, len) };
                    if d.after_read(b, self.input, file, offset, &mut res, false)
                        .is_err()
                    {
                        break;
                    }
                }
                let mut t_end = t1;

                if dir == DDIR_WRITE {
                    writes += 1;
                    let mut synced = false;
                    for (every, sop, name) in [
                        (fsync_every, SyncOp::Fsync, "fsync"),
                        (fdatasync_every, SyncOp::Fdatasync, "fdatasync"),
                    ] {
                        if every != 0 && writes.is_multiple_of(every) {
                            if let Some(g) = iolog.as_mut() {
                                super::instance::iolog_sync(g, file, sop, offset);
                            }
                            let s0 = now_ns();
                            let r = self.engine.sync(file, sop);
                            let s1 = now_ns();
                            if let Err(e) = r {
                                res.error =
                                    Some(IoFailure::new(self.input, name, file, offset, errno(&e)));
                                break 'io;
                            }
                            if timed {
                                res.tick(s1);
                                res.sync_lat.record(s1 - s0);
                                res.write_sync.record(s1 - t0);
                            }
                            res.syncs += 1;
                            t_end = s1;
                            synced = true;
                        }
                    }
                    if let Some(r) = sfr.as_mut() {
                        if synced {
                            r.synced(file);
                        } else if r.wrote(file, offset, n as u64, writes) {
                            sfr_due = Some((file, offset));
                        }
                    }
                }

                if let Some(d) = data.as_mut().filter(|_| dir == DDIR_WRITE) {
                    let n = d.backlog_due();
                    if n > 0 {
                        let (input, published) = (self.input, self.published);
                        verify_phase::backlog_sync(
                            &mut self.engine,
                            d,
                            n,
                            input,
                            &mut res,
                            published,
                            bufp,
                            self.stop,
                        );
                        if res.error.is_some() || res.job_error != 0 {
                            break;
                        }
                    }
                }

                if timing.active
                    && timing.after_sync_io(t_end, &tl, &mut res, &mut src, self.stop, &job.name)
                {
                    break;
                }
                if let Some(l) = lat.as_mut() {
                    // Reads and writes only, as fio's account_io_completion.
                    let lat_ns = t1 - t0;
                    if timed && dir != DDIR_TRIM && l.on_io(lat_ns) {
                        let m = lt::Missed {
                            lat_ns,
                            file,
                            dir,
                            offset,
                            len,
                        };
                        l.note_miss(m);
                    }
                    let (input, p) = (self.input, self.published);
                    match lt::after_completions(l, t_end, 0, &mut tl, &mut res, input, p) {
                        lt::After::Go => {}
                        lt::After::Done | lt::After::Failed => break,
                        lt::After::Restarted => {
                            // (fio's issued-bytes count survives this reset.)
                            src.restart_pacing(tl.meas_start);
                            timing.restart(tl.meas_start);
                            continue;
                        }
                    }
                }
                if tl.ramp_over(t_end, &mut res, self.published) {
                    done_bytes = 0;
                    src.restart_pacing(tl.meas_start);
                    timing.restart(tl.meas_start);
                    if let Some(l) = lat.as_mut() {
                        l.ramp_over(tl.meas_start);
                    }
                    continue;
                }
                if !tl.in_ramp && done_bytes >= limit && limit < total {
                    // verify with loops > 1: fio reads back after every loop.
                    let (stop, published) = (self.stop, self.published);
                    if let Some(d) = data
                        .as_mut()
                        .filter(|d| verify_phase::phase_due(d, &res, stop, tl.deadline))
                    {
                        let input = self.input;
                        let e = &mut self.engine;
                        verify_phase::run_sync(
                            e,
                            d,
                            input,
                            &mut res,
                            published,
                            bufp,
                            stop,
                            tl.deadline,
                        );
                    }
                    if res.error.is_some() || res.job_error != 0 {
                        break;
                    }
                    limit = limit.saturating_add(per_loop).min(total);
                }
                if t_end >= tl.deadline || (!tl.in_ramp && done_bytes >= limit) {
                    break;
                }
            }
        }

        if let Some(d) = data.as_mut() {
            if verify_phase::phase_due(d, &res, self.stop, tl.deadline) {
                verify_phase::run_sync(
                    &mut self.engine,
                    d,
                    self.input,
                    &mut res,
                    self.published,
                    bufp,
                    self.stop,
                    tl.deadline,
                );
            }
        }
        let end = tl.finish(&mut res, self.input, |f| self.engine.sync(f, SyncOp::Fsync));
        finish_logs(logs, end, &mut res, &self.input.diag);
        finish_iolog(iolog, end, &self.input.diag);
        res.latency_depth = lat.map(|l| l.depth());
        drop(flow);
        Timeline::done(self.published, end, &mut res);
        res
    }
}
