//! The loop core: what the job loops share. `worker.rs` (synchronous engines) and
//! `queue_worker.rs` (queueing engines) keep only how they issue and reap; the per-job state
//! (counters, timeline, logs, iolog, verify data, timing, latency target, flow, sync ranges)
//! lives in one [`LoopState`], and each feature is one step both loops call at the same point:
//! set-up ([`LoopState::begin`]), a new pass, a write's syncs ([`LoopState::count_write`],
//! [`LoopState::range_due`]), a completion's accounting ([`LoopState::count`],
//! [`LoopState::over_max_lat`], [`LoopState::lat_sample`]), a measurement restart, and the end
//! ([`LoopState::finish`]). Static dispatch only; nothing here allocates, locks or makes a
//! system call per I/O (clock reads aside).

use super::clock::now_ns;
use super::instance::{
    errno, finish_iolog, finish_logs, iolog_sync, set_ioprio, wait_for_start, IoFailure, Timeline,
    WorkerResult,
};
use super::latency_target::{self as lt, Flow, LatTarget};
use super::loop_ctx::Ctx;
use super::source::IoSource;
use super::sync_range::SyncRange;
use super::timing::Timing;
use super::verify_phase::{self, Data};
use crate::engine::SyncOp;
use crate::stats::iolog::IoLog;
use crate::stats::logs::JobLogs;
use crate::stats::DepthCounters;
use std::sync::atomic::Ordering;

/// One job instance's state while its loop runs, shared by both loops.
pub(super) struct LoopState<'a> {
    pub cx: Ctx<'a>,
    pub res: WorkerResult,
    pub src: IoSource,
    pub tl: Timeline,
    pub logs: Option<JobLogs>,
    pub iolog: Option<IoLog>,
    /// Verify and buffer options (None without them: one check per I/O).
    pub data: Option<Data>,
    /// Thinktime and the minimum-rate check.
    pub timing: Timing,
    /// latency_target's search (None without it).
    pub lat: Option<LatTarget>,
    /// The job's share of its flow group (None without `flow`).
    pub flow: Option<Flow>,
    /// sync_file_range's spans (None without it).
    pub sfr: Option<SyncRange>,
    /// Latencies are measured (decided once).
    pub timed: bool,
    /// refill_buffers: new random data before each write.
    pub refill: bool,
    /// The bytes to transfer after ramp (u64::MAX: until the deadline).
    pub total: u64,
    /// verify with loops > 1: one loop at a time, each read back (else the whole size).
    pub per_loop: u64,
    /// Where the current loop ends.
    pub limit: u64,
    /// Writes issued (fsync/fdatasync/sync_file_range count them; never reset).
    pub writes: u64,
    /// (every N writes, sync): fsync, then fdatasync (0 = off).
    sync_every: [(u64, SyncOp); 2],
}

impl<'a> LoopState<'a> {
    /// Set-up before the first I/O: waits for the group's start, seeds the I/O buffers with
    /// `fill` (from the workload's random stream, before anything else draws from it), begins
    /// the timeline, takes the logs and the iolog, sets the I/O priority, and prepares every
    /// feature's state. The limits are set by [`LoopState::set_limits`].
    pub(super) fn begin(
        cx: Ctx<'a>,
        start_ns: u64,
        sample_budget: usize,
        queued: bool,
        fill: impl FnOnce(&mut IoSource),
    ) -> Self {
        let (input, job) = (cx.input, &cx.input.job);
        let mut res = WorkerResult::new(sample_budget, queued, job);
        res.status_lat = input.status_lat.clone();
        wait_for_start(start_ns, job);
        let mut src = IoSource::new(input);
        fill(&mut src);
        let tl = Timeline::begin(job, cx.published, &mut res);
        src.restart_pacing(tl.meas_start);
        let logs = input.take_logs();
        let iolog = input.take_iolog();
        res.error = set_ioprio(input);
        let data = Data::new(input, &src);
        LoopState {
            cx,
            timing: Timing::new(job, tl.meas_start, &input.diag),
            lat: LatTarget::new(job, tl.meas_start),
            flow: Flow::new(input),
            sfr: SyncRange::new(job, input.paths.len()),
            res,
            src,
            tl,
            logs,
            iolog,
            data,
            timed: job.timed(),
            refill: job.refill_buffers && !job.zero_buffers,
            total: input.io_limit.unwrap_or(u64::MAX),
            per_loop: 0,
            limit: 0,
            writes: 0,
            sync_every: [
                (job.fsync as u64, SyncOp::Fsync),
                (job.fdatasync as u64, SyncOp::Fdatasync),
            ],
        }
    }

    /// The size limits, once `total` is final: the first loop's end (see `per_loop`).
    pub(super) fn set_limits(&mut self) {
        self.per_loop = verify_phase::loop_limit(self.data.as_ref(), self.cx.input, self.total);
        self.limit = self.per_loop;
    }

    /// verify_only on a writing job: the dry run instead of the writes. True when it ran.
    pub(super) fn verify_only(&mut self) -> bool {
        let (input, published) = (self.cx.input, self.cx.published);
        match self.data.as_mut().filter(|d| d.only()) {
            Some(d) => {
                verify_phase::dry_run(&mut self.src, d, input, &mut self.res, published);
                true
            }
            None => false,
        }
    }

    /// The job counts this verify-only job's work as done without I/O.
    pub(super) fn only_verifies(&self) -> bool {
        self.data.as_ref().is_some_and(Data::only)
    }

    /// The loop's size check: measuring, and this loop's bytes are issued.
    #[inline]
    pub(super) fn loop_done(&self, bytes: u64) -> bool {
        !self.tl.in_ramp && bytes >= self.limit
    }

    /// A later loop follows this one (verify with loops > 1: fio reads back after each).
    #[inline]
    pub(super) fn loop_ends(&self, bytes: u64) -> bool {
        self.loop_done(bytes) && self.limit < self.total
    }

    /// The next loop: its limit moves on by one loop's size.
    pub(super) fn next_loop(&mut self) {
        self.limit = self.limit.saturating_add(self.per_loop).min(self.total);
    }

    /// The run's stop flag, the timeline's deadline, no error: the read-back phase is due.
    pub(super) fn read_back_due(&self) -> bool {
        let (res, stop, deadline) = (&self.res, self.cx.stop, self.tl.deadline);
        self.data
            .as_ref()
            .is_some_and(|d| verify_phase::phase_due(d, res, stop, deadline))
    }

    /// The job failed or ended with its own error (verify mismatch, rate, latency).
    #[inline]
    pub(super) fn failed(&self) -> bool {
        self.res.error.is_some() || self.res.job_error != 0
    }

    /// The counters of direction `dir` as the monitor reads them.
    #[inline]
    pub(super) fn publish(&self, dir: usize) {
        let p = self.cx.published;
        p.bytes[dir].store(self.res.bytes[dir], Ordering::Relaxed);
        p.ios[dir].store(self.res.ios[dir], Ordering::Relaxed);
    }

    /// iolog: a new pass over `file` starts.
    #[inline]
    pub(super) fn log_pass(&mut self, file: usize) {
        if let Some(g) = self.iolog.as_mut() {
            g.new_pass(now_ns(), file);
        }
    }

    /// iolog: one I/O, as fio logs it when issued (before its issue time is taken).
    #[inline]
    pub(super) fn log_io(&mut self, file: usize, dir: usize, offset: u64, len: usize) {
        if let Some(g) = self.iolog.as_mut() {
            g.io(now_ns(), file, dir, offset, len as u64);
        }
    }

    /// iolog: a sync of `file`, at `at` (the offset fio's reused I/O unit still holds).
    #[inline]
    pub(super) fn log_sync(&mut self, file: usize, op: SyncOp, at: u64) {
        if let Some(g) = self.iolog.as_mut() {
            iolog_sync(g, file, op, at);
        }
    }

    /// A new pass over `file` (synchronous and offload loops): an open that failed since,
    /// unlink_each_loop's new file, the cache drop. Err: the job ends with that failure.
    #[cold]
    pub(super) fn start_pass(&mut self, file: usize) -> Result<(), IoFailure> {
        if let Some((f, e)) = self.src.take_open_error() {
            return Err(self.cx.failure("open", f, 0, errno(&e)));
        }
        self.log_pass(file);
        self.cx.input.relink(file)?;
        self.cx.input.start_pass(file);
        Ok(())
    }

    /// A write was issued: counts it, and returns the syncs due after it (fsync, fdatasync:
    /// each every N writes).
    #[inline]
    pub(super) fn count_write(&mut self) -> [Option<SyncOp>; 2] {
        self.writes += 1;
        let w = self.writes;
        self.sync_every
            .map(|(every, op)| (every != 0 && w.is_multiple_of(every)).then_some(op))
    }

    /// sync_file_range after a write of `n` bytes at `offset` of `file` (`synced`: an fsync or
    /// fdatasync already covers it). True: its call on `file` is due.
    #[inline]
    pub(super) fn range_due(&mut self, file: usize, offset: u64, n: u64, synced: bool) -> bool {
        let Some(r) = self.sfr.as_mut() else {
            return false;
        };
        if synced {
            r.synced(file);
            return false;
        }
        r.wrote(file, offset, n, self.writes)
    }

    /// sync_file_range: the call on `file` that [`LoopState::range_due`] found due.
    #[inline]
    pub(super) fn take_range(&mut self, file: usize) -> Option<SyncOp> {
        self.sfr.as_mut().map(|r| r.take(file))
    }

    /// A sync that ran from `s0` to `s1`: its latency (timed jobs) and its count. `depth`: the
    /// queueing loop's counters, for a status snapshot at an interval boundary.
    #[inline]
    pub(super) fn count_sync(&mut self, s0: u64, s1: u64, depth: Option<&DepthCounters>) {
        if self.timed {
            match depth {
                Some(d) => self.res.tick_queued(s1, d),
                None => self.res.tick(s1),
            }
            self.res.sync_lat.record(s1 - s0);
        }
        self.res.syncs += 1;
    }

    /// One completion of `n` bytes of the `len` asked for, in direction `dir`.
    #[inline]
    pub(super) fn count(&mut self, dir: usize, len: usize, n: u64) {
        if n < len as u64 {
            self.res.short[dir] += 1;
        }
        self.res.bytes[dir] += n;
        self.res.ios[dir] += 1;
    }

    /// The per-I/O logs: one completion (prepared, submitted, done), measuring only. (Inlined
    /// always: else a call per I/O even without logs, 17 instructions by callgrind.)
    #[inline(always)]
    pub(super) fn log_done(&mut self, dir: usize, t: [u64; 3], len: usize, n: u64, offset: u64) {
        if let Some(l) = self.logs.as_mut().filter(|_| !self.tl.in_ramp) {
            l.on_io(
                self.tl.meas_start,
                dir,
                t[0],
                t[1],
                t[2],
                len as u64,
                n,
                offset,
            );
        }
    }

    /// max_latency: an I/O of total latency `lat` ends the job (ETIMEDOUT). True when it did.
    #[inline]
    pub(super) fn over_max_lat(&mut self, at: (usize, usize, u64, usize), lat: u64) -> bool {
        if self.timed && lat > self.timing.max_lat[at.1] {
            super::timing::max_latency_failed(self.cx.input, at, lat, &mut self.res);
            return true;
        }
        false
    }

    /// latency_target: one I/O's latency into the window; a miss at depth 1 is noted.
    #[inline]
    pub(super) fn lat_sample(&mut self, at: (usize, usize, u64, usize), lat_ns: u64) {
        if let Some(l) = self.lat.as_mut() {
            if l.on_io(lat_ns) {
                let (file, dir, offset, len) = at;
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

    /// latency_target after completions at `now` with `inflight` still out (Go without it).
    #[inline]
    pub(super) fn lat_after(&mut self, now: u64, inflight: usize) -> lt::After {
        let (input, p) = (self.cx.input, self.cx.published);
        match self.lat.as_mut() {
            Some(l) => {
                lt::after_completions(l, now, inflight, &mut self.tl, &mut self.res, input, p)
            }
            None => lt::After::Go,
        }
    }

    /// ramp_time ended at `t`: measurement restarts. True when it did.
    #[inline]
    pub(super) fn ramp_over(&mut self, t: u64) -> bool {
        self.tl.ramp_over(t, &mut self.res, self.cx.published)
    }

    /// Measurement restarted (ramp over, or latency_target settled): the pacing and the
    /// minimum-rate settle period start again; with `lat`, the latency search's window too.
    pub(super) fn restarted(&mut self, lat: bool) {
        self.src.restart_pacing(self.tl.meas_start);
        self.timing.restart(self.tl.meas_start);
        if let Some(l) = self.lat.as_mut().filter(|_| lat) {
            l.ramp_over(self.tl.meas_start);
        }
    }

    /// The end: end_fsync/fsync_on_close through `sync`, the logs and iolog flushed, the
    /// flow group left. Returns the result and the end instant; the loop then publishes it
    /// with [`Timeline::done`] and drops its engine.
    pub(super) fn finish(
        self,
        sync: impl FnMut(usize) -> std::io::Result<()>,
    ) -> (WorkerResult, u64) {
        let LoopState {
            cx,
            mut res,
            tl,
            logs,
            iolog,
            lat,
            flow,
            ..
        } = self;
        let end = tl.finish(&mut res, cx.input, sync);
        finish_logs(logs, end, &mut res, &cx.input.diag);
        finish_iolog(iolog, end, &cx.input.diag);
        res.latency_depth = lat.map(|l| l.depth());
        drop(flow);
        (res, end)
    }
}
