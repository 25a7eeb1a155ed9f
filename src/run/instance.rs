//! What one job instance is given and gives back, shared by the worker loops and the
//! orchestrator: its input (job, open files, regions, seed), its result, and the measurement
//! clock the loops share. The counters it publishes and its I/O failure are in the leaf
//! `shared.rs` (re-exported here), so the watchers need not import this module.

use super::clock::{gettid, now_ns, sleep_until};
use crate::model::{JobSpec, RwKind};
use crate::report::IntervalLatency;
use crate::stats::{interval_latency, CpuTimes, DepthCounters, IntervalLogs, LatRecorder};
use crate::workload::layout::CacheDrop;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

// The types shared with the watchers live in the leaf `shared.rs`; the worker loops take them
// from here with the rest of what an instance is given and gives back.
pub(crate) use super::shared::{IoFailure, Published, PHASE_DONE, PHASE_MEASURING, PHASE_RAMP};

/// Everything a worker needs, prepared by the orchestrator (files are open).
pub(crate) struct WorkerInput {
    pub job: JobSpec,
    pub jobnum: u32,
    pub paths: Vec<PathBuf>,
    /// (offset, region length) of each file.
    pub regions: Vec<(u64, u64)>,
    /// Bytes to transfer after ramp (None: time-based, run until the deadline).
    pub io_limit: Option<u64>,
    pub seed: u64,
    /// Per file, how to drop its cache when a later pass over its region starts (fio resets the
    /// file and invalidates it then); empty when the job keeps the cache (invalidate=0, direct).
    pub pass_drops: Vec<CacheDrop>,
    /// The job's log files (fio `write_*_log`), opened before the run; the worker takes them.
    pub logs: std::sync::Mutex<Option<crate::stats::logs::JobLogs>>,
    /// The job's `write_iolog` file, opened before the run; the worker takes it.
    pub iolog: std::sync::Mutex<Option<crate::stats::iolog::IoLog>>,
    /// `--status-interval`: where the worker leaves its latency snapshot (see `status.rs`).
    pub status_lat: Option<std::sync::Arc<super::shared::StatusLat>>,
    /// unlink_each_loop: replaces a file with a new empty one when a later pass starts.
    pub relink: Option<crate::workload::relink::Relinker>,
    /// The flow group of a job that sets `flow` (see `latency_target.rs`).
    pub flow: Option<std::sync::Arc<super::shared::FlowGroup>>,
    /// openfiles below the number of files: which files are open; `IoSource` takes it.
    pub open_window: std::sync::Mutex<Option<crate::workload::openfiles::OpenWindow>>,
    /// lockfile: the lock of each file, shared with the other jobs on it (None without it).
    pub file_locks: Option<Vec<std::sync::Arc<super::file_lock::FileLock>>>,
    /// Where the job's warnings and fio's error lines go (the run's `RunOptions::diag`).
    pub diag: crate::diag::Diag,
}

impl WorkerInput {
    /// unlink_each_loop: at the start of a later pass (a loop) over `file`, a new empty file
    /// in its place. fio unlinks every file at the loop's start; here each file is replaced
    /// at its own next pass, which is the same moment when files take turns.
    #[cold]
    pub(super) fn relink(&self, file: usize) -> Result<(), IoFailure> {
        match &self.relink {
            Some(r) => r
                .relink(file)
                .map_err(|e| IoFailure::new(self, "unlink", file, 0, errno(&e))),
            None => Ok(()),
        }
    }

    /// The worker takes the job's logs once, before its loop (None when it writes none).
    pub(super) fn take_logs(&self) -> Option<crate::stats::logs::JobLogs> {
        self.logs.lock().ok().and_then(|mut l| l.take())
    }

    /// The worker takes the job's iolog once, as its thread starts (None when it writes none),
    /// with the header and file lines written: fio's times count from here.
    pub(super) fn take_iolog(&self) -> Option<crate::stats::iolog::IoLog> {
        let mut log = self.iolog.lock().ok().and_then(|mut l| l.take())?;
        log.begin(now_ns());
        Some(log)
    }
}

/// fio's fill_device: a write that finds the filesystem full (ENOSPC, EDQUOT) ends the job
/// without an error.
#[cold]
pub(super) fn fills_device(job: &JobSpec, errno: i32) -> bool {
    job.files.fill_device && (errno == libc::ENOSPC || errno == libc::EDQUOT)
}

/// fio's prio/prioclass: the worker thread's I/O priority (ioprio_set on the calling thread),
/// before any I/O. A failure (e.g. the real-time class without CAP_SYS_ADMIN) fails the job,
/// as fio's td_verror does.
#[cold]
pub(super) fn set_ioprio(input: &WorkerInput) -> Option<IoFailure> {
    let value = input.job.ioprio.value()?;
    const IOPRIO_WHO_PROCESS: libc::c_int = 1;
    // SAFETY: ioprio_set takes three integers and touches no memory of ours; who = 0 is the
    // calling thread.
    let r = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0,
            libc::c_int::from(value),
        )
    };
    if r == 0 {
        return None;
    }
    let e = std::io::Error::last_os_error();
    Some(IoFailure::new(input, "ioprio_set", 0, 0, errno(&e)))
}

/// The job ended at `end`: flush its logs; a file that could not be written is a warning.
#[cold]
pub(super) fn finish_logs(
    logs: Option<crate::stats::logs::JobLogs>,
    end: u64,
    res: &mut WorkerResult,
    diag: &crate::diag::Diag,
) {
    if let Some(l) = logs {
        let (stats, done) = l.finish(end);
        res.per_io_samples = stats;
        if let Err(e) = done {
            diag.line(&format!("iogauge: warning: {e}"));
        }
    }
}

/// A sync `op` of `file` goes into the job's iolog as fio logs it: its action's name, at `at`
/// (the offset fio's reused I/O unit still holds) with length 0.
#[inline]
pub(super) fn iolog_sync(
    log: &mut crate::stats::iolog::IoLog,
    file: usize,
    op: crate::engine::SyncOp,
    at: u64,
) {
    use crate::engine::SyncOp;
    use crate::stats::iolog::{DATASYNC, SYNC, SYNC_FILE_RANGE};
    let action = match op {
        SyncOp::Fsync => SYNC,
        SyncOp::Fdatasync => DATASYNC,
        SyncOp::Range { .. } => SYNC_FILE_RANGE,
    };
    log.sync(now_ns(), file, action, at);
}

/// The job ended at `end`: close its iolog's files and flush it; a failure is a warning.
#[cold]
pub(super) fn finish_iolog(
    log: Option<crate::stats::iolog::IoLog>,
    end: u64,
    diag: &crate::diag::Diag,
) {
    if let Some(Err(e)) = log.map(|l| l.finish(end)) {
        diag.line(&format!("iogauge: warning: {e}"));
    }
}

impl WorkerInput {
    /// The most bytes one I/O of this instance can move: its largest block, but a block drawn
    /// from a range never exceeds the region it falls in (a fixed size may). Buffers beyond
    /// that are never written from, so their initial fill stops there (a bsrange up to 4 GiB
    /// over a 128 KiB file filled 4 GiB with random bytes, for 30 s, before the first I/O).
    pub(crate) fn io_max_len(&self) -> usize {
        let job = &self.job;
        let region = self.regions.iter().map(|r| r.1).max().unwrap_or(0);
        let min_bs = (0..3).map(|d| job.bs_range(d).0).max().unwrap_or(0);
        job.max_bs().min(region.max(min_bs).max(1)) as usize
    }

    /// A second or later pass over file `file` starts: drop its cache again, or every pass after
    /// the first would read memory instead of the storage. No drain first: like fio, I/O still
    /// in flight from the previous pass keeps its (locked) pages. Failures were already
    /// reported when the file was opened.
    #[cold]
    pub(super) fn start_pass(&self, file: usize) {
        if let Some(d) = self.pass_drops.get(file) {
            let _ = d.drop_cache();
        }
    }
}

/// An [`IoFailure`] is built from the worker's input (its paths), so its constructor lives here.
impl IoFailure {
    /// `op` failed with `errno` on file number `file` of `input`.
    pub(super) fn new(
        input: &WorkerInput,
        op: &'static str,
        file: usize,
        offset: u64,
        errno: i32,
    ) -> Self {
        IoFailure {
            op,
            path: input.paths[file].clone(),
            offset,
            len: 0,
            errno,
            message: crate::report::units::strerror(errno),
        }
    }

    /// fio's `error_dump`: fio's io_u error line on stderr for an error the job survives
    /// (continue_on_error/ignore_error); a fatal one is printed once by the command. In the
    /// command's name ("iogauge check:" under check).
    #[cold]
    pub(super) fn dump(&self, diag: &crate::diag::Diag) {
        if let Some(line) = super::partial::fio_error_line(self) {
            diag.note(&line);
        }
    }
}

/// The errno of an engine error (engines only return OS errors).
pub(super) fn errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(0)
}

/// Wait for the group's common start plus the job's startdelay.
pub(super) fn wait_for_start(start_ns: u64, job: &JobSpec) {
    let begin = start_ns + job.startdelay.as_nanos() as u64;
    if begin > now_ns() {
        sleep_until(begin);
    }
}

/// What a worker measured.
pub struct WorkerResult {
    pub tid: u32,
    /// Completion latency (= total latency for synchronous engines) per direction.
    pub clat: [LatRecorder; 3],
    /// Queueing engines only: submission latency and total latency per direction.
    pub slat: Vec<LatRecorder>,
    pub lat: Vec<LatRecorder>,
    /// Queueing engines only: measured queue depth, submit and complete batch sizes.
    pub depth: Option<DepthCounters>,
    pub sync_lat: LatRecorder,
    /// Synchronous engines: the write that triggered a sync plus the sync.
    pub write_sync: LatRecorder,
    pub bytes: [u64; 3],
    pub ios: [u64; 3],
    pub short: [u64; 3],
    pub syncs: u64,
    /// Length of the measured period (after ramp) in ns.
    pub measured_ns: u64,
    /// Per direction, the part of the measured period fio reports as its runtime (set at the
    /// end): the whole period, except after a read-back (see [`dir_runtimes`]).
    pub runtime_ns: [u64; 3],
    /// Time spent in read-back phases (fio's do_verify): fio counts it in the read runtime
    /// only, never in the write runtime.
    pub read_back_ns: u64,
    /// Of the reads counted in `bytes` and `ios`, the verify read-backs' (and backlog's).
    pub read_back_bytes: u64,
    pub read_back_ios: u64,
    /// Writes done when the last write phase before a read-back ended (with end_fsync's or
    /// fsync_on_close's sync, when set: fio syncs at the end of each write phase): the end of
    /// the job syncs for end_fsync only if more writes followed.
    pub(super) end_synced_at: Option<u64>,
    pub cpu: CpuTimes,
    pub error: Option<IoFailure>,
    /// errno of a failure that ends the job but keeps its report and the run (fio's job `error`:
    /// EILSEQ for a verify mismatch, EIO for a missed rate_min); 0 = none.
    pub job_error: i32,
    /// I/O errors survived under continue_on_error, and the first one's errno.
    pub total_err: u64,
    pub first_error: i32,
    pub finished_at: std::time::SystemTime,
    /// Per-interval histograms of the read, write, trim and sync recorders (the `clat` ones,
    /// or `lat` when `intervals_from_lat`); no logs when latency is not measured.
    pub intervals: IntervalLogs,
    /// Queueing engines whose JSON prints only lat percentiles: intervals count `lat`.
    pub intervals_from_lat: bool,
    /// Latency per command priority (cmdprio_*), None when the job uses none.
    pub prio_lat: Option<Box<crate::stats::prio::PrioLat>>,
    /// Per-I/O bw/iops statistics from the logs (fio's JSON uses them with a per-I/O log).
    pub(crate) per_io_samples: Option<crate::stats::logs::PerIoStats>,
    /// `--status-interval`: the latency snapshot left at each interval boundary.
    pub(super) status_lat: Option<std::sync::Arc<super::shared::StatusLat>>,
    /// latency_target: the queue depth the search ended at (fio's `latency_depth`).
    pub latency_depth: Option<u32>,
}

impl WorkerResult {
    /// Empty results; queueing engines also record slat, lat and depth, synchronous engines the
    /// write+sync time.
    pub(super) fn new(sample_budget: usize, queued: bool, job: &JobSpec) -> Self {
        let rec = || LatRecorder::new(sample_budget);
        let lat = interval_latency(job.clat_percentiles, job.lat_percentiles);
        // Trim latencies get samples only in a job that trims, and a recorder keeps exact samples
        // only when its percentiles are reported (a synchronous engine's clat is also its lat);
        // the others need only the histogram (memory: see DEFAULT_SAMPLE_BUDGET).
        let trims = matches!(job.rw.kind, RwKind::Trim | RwKind::TrimWrite);
        let three = |pcts: bool| {
            let b = if pcts { sample_budget } else { 0 };
            [
                LatRecorder::new(b),
                LatRecorder::new(b),
                LatRecorder::new(if trims { b } else { 0 }),
            ]
        };
        let clat_pcts = job.clat_percentiles || (!queued && job.lat_percentiles);
        WorkerResult {
            tid: gettid(),
            clat: three(clat_pcts),
            slat: if queued {
                three(job.reporting.slat_percentiles).into()
            } else {
                Vec::new()
            },
            lat: if queued {
                three(job.lat_percentiles).into()
            } else {
                Vec::new()
            },
            depth: queued.then(DepthCounters::new),
            sync_lat: rec(),
            write_sync: if queued { LatRecorder::new(0) } else { rec() },
            bytes: [0; 3],
            ios: [0; 3],
            short: [0; 3],
            syncs: 0,
            measured_ns: 0,
            runtime_ns: [0; 3],
            read_back_ns: 0,
            read_back_bytes: 0,
            read_back_ios: 0,
            end_synced_at: None,
            cpu: CpuTimes::default(),
            error: None,
            job_error: 0,
            total_err: 0,
            first_error: 0,
            finished_at: std::time::SystemTime::now(),
            intervals: IntervalLogs::new(if job.measured().latency { 4 } else { 0 }),
            // Synchronous engines have one recorder for both (lat = clat).
            intervals_from_lat: queued && lat == IntervalLatency::Lat,
            prio_lat: None,
            per_io_samples: None,
            status_lat: None,
            latency_depth: None,
        }
    }

    /// Sorts every recorder's exact samples in place once the worker is done, so that the
    /// report reads percentiles without copying up to a whole budget per recorder.
    pub(super) fn sort_samples(&mut self) {
        let recs = self
            .clat
            .iter_mut()
            .chain(&mut self.slat)
            .chain(&mut self.lat);
        for r in recs.chain([&mut self.sync_lat, &mut self.write_sync]) {
            r.sort_samples();
        }
    }

    /// An I/O failed with `errno`: true when continue_on_error survives it (then counted, as
    /// fio's total_err and first_error, and as an issued I/O of no bytes, as fio's total_ios).
    #[cold]
    pub(super) fn survives(&mut self, job: &JobSpec, dir: usize, errno: i32) -> bool {
        if !job.timing.errors.ignores(dir, errno) {
            return false;
        }
        self.total_err += 1;
        self.ios[dir] += 1;
        if self.first_error == 0 {
            self.first_error = errno;
        }
        true
    }

    /// Hot path, before recording an I/O that completed at `t`: one compare, and the interval
    /// bookkeeping only when a boundary was crossed.
    #[inline(always)]
    pub(super) fn tick(&mut self, t: u64) {
        if self.intervals.due(t) {
            self.close_intervals(t);
        }
    }

    /// [`tick`](Self::tick) for the queueing worker, whose depth counters are its own until
    /// the end: a `--status-interval` snapshot copies them at the boundary.
    #[inline(always)]
    pub(super) fn tick_queued(&mut self, t: u64, depth: &DepthCounters) {
        if self.intervals.due(t) {
            self.close_intervals_at(t, Some(depth));
        }
    }

    #[cold]
    #[inline(never)]
    fn close_intervals(&mut self, t: u64) {
        self.close_intervals_at(t, None);
    }

    #[cold]
    #[inline(never)]
    fn close_intervals_at(&mut self, t: u64, depth: Option<&DepthCounters>) {
        let dirs = if self.intervals_from_lat {
            &self.lat
        } else {
            &self.clat[..]
        };
        let recs = [&dirs[0], &dirs[1], &dirs[2], &self.sync_lat];
        self.intervals.advance(t, &recs);
        if let Some(s) = &self.status_lat {
            let state = super::shared::WorkerState {
                cpu_start: &self.cpu,
                depth: depth.or(self.depth.as_ref()),
            };
            s.publish(&recs, self.intervals_from_lat, !self.lat.is_empty(), state);
        }
    }

    /// The measured period ended at `end`: close the last intervals.
    fn finish_intervals(&mut self, end: u64) {
        let dirs = if self.intervals_from_lat {
            &self.lat
        } else {
            &self.clat[..]
        };
        let recs = [&dirs[0], &dirs[1], &dirs[2], &self.sync_lat];
        self.intervals.finish(end, &recs);
    }

    /// fsync every file (end_fsync, fsync_on_close), stopping at the first error.
    pub(super) fn fsync_files(
        &mut self,
        input: &WorkerInput,
        mut fsync: impl FnMut(usize) -> std::io::Result<()>,
    ) {
        for f in 0..input.paths.len() {
            if let Err(e) = fsync(f) {
                self.error = Some(IoFailure::new(input, "fsync", f, 0, errno(&e)));
                return;
            }
        }
    }

    /// End of ramp_time: forget everything measured so far (latencies, counts, CPU time) and
    /// tell the monitor that measurement starts at `at`. Used by both worker loops.
    pub(super) fn restart_measurement(&mut self, published: &Published, at: u64) {
        let recorders = self
            .clat
            .iter_mut()
            .chain(self.lat.iter_mut())
            .chain(self.slat.iter_mut());
        for rec in recorders {
            rec.reset();
        }
        self.sync_lat.reset();
        self.write_sync.reset();
        self.bytes = [0; 3];
        self.ios = [0; 3];
        self.short = [0; 3];
        self.syncs = 0;
        self.read_back_ns = 0;
        self.read_back_bytes = 0;
        self.read_back_ios = 0;
        for c in &published.read_back {
            c.store(0, Ordering::Relaxed);
        }
        if let Some(d) = self.depth.as_mut() {
            d.reset();
        }
        if let Some(p) = self.prio_lat.as_mut() {
            p.reset();
        }
        for d in 0..3 {
            published.bytes[d].store(0, Ordering::Relaxed);
            published.ios[d].store(0, Ordering::Relaxed);
        }
        self.intervals.start(at);
        published.meas_start_ns.store(at, Ordering::Relaxed);
        published.phase.store(PHASE_MEASURING, Ordering::Release);
        self.cpu = CpuTimes::now_thread().unwrap_or_default();
    }
}

/// Each direction's runtime, as fio's update_runtime accumulates it: a direction's clock runs
/// during the write phases (do_io) of a job that does that direction; the read-back phases
/// (do_verify) add to the read clock alone. So the write runtime of a write-then-verify job
/// leaves the read-back out, and a job that only writes has the read-back as its read runtime
/// (verify_backlog's reads during the writes included in its count, not in its time).
/// verify_only's writes, never issued, have no runtime (fio's update_runtime skips them).
pub(super) fn dir_runtimes(job: &JobSpec, measured_ns: u64, read_back_ns: u64) -> [u64; 3] {
    let io_ns = measured_ns.saturating_sub(read_back_ns);
    let reads = matches!(job.rw.kind, RwKind::Read | RwKind::ReadWrite);
    let dry = job.verify.only && job.rw.kind != RwKind::Read;
    [
        if reads { measured_ns } else { read_back_ns },
        if dry { 0 } else { io_ns },
        io_ns,
    ]
}

/// The measurement clock both worker loops share: the ramp, when measurement started, and the
/// runtime deadline. `begin` publishes the first phase and takes the CPU snapshot; `ramp_over`
/// restarts the measurement once the ramp has passed; `finish` does the end-of-job syncs and
/// closes the books; `done` tells the monitor.
pub(super) struct Timeline {
    pub in_ramp: bool,
    pub meas_start: u64,
    pub deadline: u64,
    ramp_end: u64,
    runtime_ns: Option<u64>,
}

impl Timeline {
    pub(super) fn begin(job: &JobSpec, published: &Published, res: &mut WorkerResult) -> Timeline {
        let t_begin = now_ns();
        let ramp_end = t_begin + job.ramp_time.as_nanos() as u64;
        let runtime_ns = job.runtime.map(|d| d.as_nanos() as u64).filter(|&n| n > 0);
        let tl = Timeline {
            in_ramp: ramp_end > t_begin,
            meas_start: t_begin,
            deadline: runtime_ns.map(|r| ramp_end + r).unwrap_or(u64::MAX),
            ramp_end,
            runtime_ns,
        };
        if tl.in_ramp {
            published.phase.store(PHASE_RAMP, Ordering::Release);
        } else {
            res.intervals.start(t_begin);
            published.meas_start_ns.store(t_begin, Ordering::Relaxed);
            published.phase.store(PHASE_MEASURING, Ordering::Release);
        }
        res.cpu = CpuTimes::now_thread().unwrap_or_default();
        published.tid.store(res.tid, Ordering::Relaxed);
        tl
    }

    /// At `t`, the ramp has just ended: forget everything measured so far (CPU time too) and
    /// start the runtime from here. False when still ramping or already measuring.
    #[inline]
    pub(super) fn ramp_over(
        &mut self,
        t: u64,
        res: &mut WorkerResult,
        published: &Published,
    ) -> bool {
        if !self.in_ramp || t < self.ramp_end {
            return false;
        }
        self.restart(t, res, published);
        true
    }

    /// Measurement (re)starts at `t`: after the ramp, or when latency_target's search has
    /// settled (fio's reset_all_stats). Forgets what was measured; the runtime counts from `t`.
    #[cold]
    pub(super) fn restart(&mut self, t: u64, res: &mut WorkerResult, published: &Published) {
        self.in_ramp = false;
        self.meas_start = t;
        self.deadline = self.runtime_ns.map(|r| t + r).unwrap_or(u64::MAX);
        res.restart_measurement(published, t);
    }

    /// `end_fsync`, the measured time and CPU, then `fsync_on_close`; returns the end instant.
    pub(super) fn finish(
        &self,
        res: &mut WorkerResult,
        input: &WorkerInput,
        mut fsync: impl FnMut(usize) -> std::io::Result<()>,
    ) -> u64 {
        let job = &input.job;
        // Not again when a read-back came last: its write phase ended with this sync.
        let synced = res.end_synced_at == Some(res.ios[crate::model::DDIR_WRITE]);
        if job.end_fsync && res.error.is_none() && !synced {
            res.fsync_files(input, &mut fsync);
        }
        let end = now_ns();
        // Stopped during ramp: nothing was measured.
        res.measured_ns = if self.in_ramp {
            0
        } else {
            end.saturating_sub(self.meas_start)
        };
        res.runtime_ns = dir_runtimes(job, res.measured_ns, res.read_back_ns);
        // Never started during a ramp: then this does nothing.
        res.finish_intervals(end);
        res.cpu = CpuTimes::now_thread().unwrap_or_default().delta(&res.cpu);
        if job.fsync_on_close && res.error.is_none() {
            res.fsync_files(input, &mut fsync);
        }
        end
    }

    /// Tells the monitor the instance is done.
    pub(super) fn done(published: &Published, end: u64, res: &mut WorkerResult) {
        let failed = res.error.is_some() || res.job_error != 0;
        published.failed.store(failed, Ordering::Relaxed);
        published.end_ns.store(end, Ordering::Relaxed);
        published.phase.store(PHASE_DONE, Ordering::Release);
        res.finished_at = std::time::SystemTime::now();
    }
}
