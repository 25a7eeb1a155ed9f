//! Data verification and buffer contents in both worker loops: the per-write fill (fio's
//! buffer options, or a verify header and checksum per interval), the log of written blocks,
//! the check of every read of a read job, `verify_only`'s dry run, and the read-back phase
//! (fio's do_verify: from the log, or with experimental_verify from a replay of the workload)
//! on a synchronous or a queueing engine. Reads of the read-back phase are
//! counted in the read direction, as fio counts them, and timed apart: the read-back's time
//! is the read runtime, never the write runtime (see `instance::dir_runtimes`). Nothing here
//! runs for a job without these options: the worker loops hold `None` and skip it with one
//! check per I/O.

use super::clock::now_ns;
use super::instance::{errno, IoFailure, Published, WorkerInput, WorkerResult};
use super::loop_ctx::Ctx;
use super::source::IoSource;
use crate::engine::{Engine, Op, QueueEngine, SyncOp};
use crate::model::{DDIR_READ, DDIR_WRITE};
use crate::workload::buffers::Filler;
use crate::workload::verify::{reads_back, Mismatch, Verifier, Written, EILSEQ};
use std::sync::atomic::{AtomicBool, Ordering};

/// fio's io_u flags printed with a checksum failure: IO_U_F_VER_LIST | IO_U_F_IN_CUR_DEPTH for
/// a read-back, IO_U_F_IN_CUR_DEPTH for a read of a read job.
const FLAGS_READ_BACK: u32 = 0x88;
const FLAGS_READ: u32 = 0x08;

/// What a job instance's writes hold and what its reads are checked against.
pub(crate) struct Data {
    ver: Option<Verifier>,
    filler: Option<Filler>,
    only: bool,
    read_back: bool,
    /// fio's numberio: writes issued so far.
    writes: u64,
    /// verify_backlog on a queueing engine (None otherwise).
    backlog: Option<Box<QueuedBacklog>>,
    /// experimental_verify: the workload generated again for the read-back (None otherwise).
    replay: Option<Box<Replay>>,
}

/// experimental_verify (fio's do_verify without a log): the read-back replays the workload from
/// its start and reads back each write, skipping its reads, until it has replayed as many
/// writes as the job issued. The memory is the workload generator's own (its random maps), not
/// a per-block log. fio resets its generators to their seeds at each loop; iogauge's workload
/// goes on from loop to loop, and so does the replay, which stays in step with it.
struct Replay {
    src: IoSource,
    /// Writes replayed so far: the next one's numberio.
    writes: u64,
    /// refill_buffers: each write drew its bytes from the source's generator before it was
    /// filled; the replay draws the same bytes into this buffer to stay in step.
    refill: Option<Vec<u8>>,
}

/// verify_backlog on a queueing engine: the backlog's reads go through the job's own queue,
/// between the workload's I/Os (fio's get_next_verify from get_io_u). Sized once per instance.
struct QueuedBacklog {
    /// Per queue slot: the block its read checks, when it holds a backlog read.
    slots: Vec<Option<Written>>,
    /// Backlog reads in flight (slots holding Some).
    reading: usize,
    /// Reads left in the current batch.
    left: usize,
    /// A write was logged since the last look at the backlog.
    fresh: bool,
}

impl Data {
    /// None when the job has no verify or buffer option (the loops then do nothing extra).
    /// `src` is the workload's source before its first I/O (experimental_verify replays it).
    pub(crate) fn new(input: &WorkerInput, src: &IoSource) -> Option<Data> {
        let job = &input.job;
        let thread = (input.jobnum + 1) as u16;
        let mut ver = Verifier::new(job, &input.regions, input.seed, thread);
        if let Some(v) = ver.as_mut() {
            v.say_to(&input.diag);
        }
        let replay = ver
            .as_mut()
            .filter(|v| v.log.is_none() && job.verify.experimental && reads_back(job))
            .and_then(|v| {
                if may_rewrite(input) {
                    v.replay_may_rewrite();
                }
                let refill = job.refill_buffers && !job.zero_buffers;
                Some(Box::new(Replay {
                    src: src.replay_copy()?,
                    writes: 0,
                    refill: refill.then(|| vec![0u8; job.max_bs() as usize]),
                }))
            });
        let filler = match ver {
            Some(_) => None,
            None => {
                let region: u64 = input.regions.iter().map(|r| r.1).sum();
                Filler::new(&job.buffers, region, job.bs[DDIR_WRITE], input.seed)
            }
        };
        if ver.is_none() && filler.is_none() {
            return None;
        }
        let backlog = ver
            .as_ref()
            .filter(|v| v.log.is_some() && job.verify.backlog > 0 && job.ioengine.is_async())
            .map(|_| {
                Box::new(QueuedBacklog {
                    slots: vec![None; job.iodepth.max(1) as usize],
                    reading: 0,
                    left: 0,
                    fresh: false,
                })
            });
        Some(Data {
            backlog,
            replay,
            only: ver.is_some() && job.verify.only && job.rw.kind != crate::model::RwKind::Read,
            read_back: reads_back(job),
            ver,
            filler,
            writes: 0,
        })
    }

    /// verify_only on a writing job: no write is issued (see [`dry_run`]).
    pub(crate) fn only(&self) -> bool {
        self.only
    }

    /// Before a write of `buf` at `offset` of `file` is issued: its content, and (verify) its
    /// place in the log, as fio logs a write before issuing it.
    #[inline]
    pub(crate) fn before_write(&mut self, buf: &mut [u8], file: usize, offset: u64, now: u64) {
        if let Some(v) = self.ver.as_mut() {
            v.fill_write(buf, offset, self.writes, now);
            self.log(file, offset, buf.len());
        } else if let Some(f) = self.filler.as_mut() {
            f.fill(buf, offset, now);
        }
        self.writes += 1;
    }

    fn log(&mut self, file: usize, offset: u64, len: usize) {
        if let Some(b) = self.backlog.as_mut() {
            b.fresh = true;
            if b.reading > 0 {
                // A backlog read of this block still in flight may see this write's data: it
                // is not checked (the block is read back again after this write).
                for s in b.slots.iter_mut() {
                    if s.is_some_and(|w| w.file == file && w.offset == offset) {
                        *s = None;
                        b.reading -= 1;
                    }
                }
            }
        }
        if let Some(log) = self.ver.as_mut().and_then(|v| v.log.as_mut()) {
            log.record(Written {
                file,
                offset,
                len,
                numberio: self.writes,
                seed: 0,
            });
        }
    }

    /// After a read of `buf` at `offset` completed: a read job with verify checks it. On a
    /// mismatch the job's error is set (the caller stops).
    #[inline]
    pub(crate) fn after_read(
        &mut self,
        buf: &mut [u8],
        input: &WorkerInput,
        file: usize,
        offset: u64,
        res: &mut WorkerResult,
        queued: bool,
    ) -> Result<(), Mismatch> {
        match self.ver.as_mut() {
            Some(v) if v.check_reads => {
                let r = v.check(buf, &input.paths[file], offset, None, FLAGS_READ);
                if r.is_err() {
                    fail(res, queued, &input.diag);
                }
                r
            }
            _ => Ok(()),
        }
    }
}

/// A write's buffer just before it is issued, in every loop (synchronous, queueing, offload):
/// fresh random bytes with refill_buffers, then what the buffer options or verify put there
/// (`Data::before_write`). Reads and jobs without either option pass through two branches.
///
/// # Safety
/// `buf` is valid for `len` bytes, owned by the caller's thread and not in flight.
#[inline]
pub(crate) unsafe fn prepare_write(
    buf: *mut u8,
    len: usize,
    refill: bool,
    rng: &mut crate::workload::rng::Rng,
    data: Option<&mut Data>,
    file: usize,
    offset: u64,
) {
    if refill {
        // SAFETY: the caller's contract.
        rng.fill(unsafe { std::slice::from_raw_parts_mut(buf, len) });
    }
    if let Some(d) = data {
        // SAFETY: as above.
        let b = unsafe { std::slice::from_raw_parts_mut(buf, len) };
        d.before_write(b, file, offset, now_ns());
    }
}

impl Data {
    /// verify_backlog on a queueing engine: the next block to read back before the workload's
    /// next I/O, if a batch is due (fio: every `verify_backlog` logged writes, a batch of
    /// `verify_backlog_batch`) and its oldest write has completed. None almost always.
    #[inline]
    pub(crate) fn backlog_take(&mut self) -> Option<Written> {
        let b = self.backlog.as_mut()?;
        let v = self.ver.as_mut()?;
        if b.left == 0 {
            if !b.fresh {
                return None;
            }
            b.fresh = false;
            b.left = v.backlog_due();
            if b.left == 0 {
                return None;
            }
        }
        let log = v.log.as_mut()?;
        match log.next_oldest() {
            Some(w) => {
                b.left -= 1;
                Some(w)
            }
            None => {
                // Nothing left, or the oldest write still in flight (retried next time).
                if log.pending() == 0 {
                    b.left = 0;
                }
                None
            }
        }
    }

    /// An I/O was queued in `slot`: `read_back` is the block when it is a backlog read.
    #[inline]
    pub(crate) fn queued(&mut self, slot: usize, read_back: Option<Written>) {
        let Some(b) = self.backlog.as_mut() else {
            return;
        };
        if slot >= b.slots.len() {
            b.slots.resize(slot + 1, None); // only if the queue is deeper than iodepth
        }
        if b.slots[slot].is_some() {
            b.reading -= 1; // a backlog read that failed: never checked
        }
        b.slots[slot] = read_back;
        b.reading += usize::from(read_back.is_some());
    }

    /// A queued write completed (failed or not): its block may now be read back.
    #[inline]
    pub(crate) fn write_completed(&mut self, file: usize, offset: u64) {
        if self.backlog.is_some() {
            if let Some(log) = self.ver.as_mut().and_then(|v| v.log.as_mut()) {
                log.write_done(file, offset);
            }
        }
    }

    /// After a read of `n` bytes in queue `slot` completed: a backlog read is checked against
    /// its write, any other read as [`Data::after_read`] does.
    /// `at` is the read's (file, offset).
    #[inline]
    pub(crate) fn after_queued_read(
        &mut self,
        slot: usize,
        n: u64,
        buf: &mut [u8],
        input: &WorkerInput,
        at: (usize, u64),
        res: &mut WorkerResult,
    ) -> Result<(), Mismatch> {
        let (file, offset) = at;
        let w = match self.backlog.as_mut() {
            Some(b) => match b.slots.get_mut(slot).and_then(|s| s.take()) {
                Some(w) => {
                    b.reading -= 1;
                    // A read-back: left out of the periodic samples (the loop publishes it).
                    res.read_back_bytes += n;
                    res.read_back_ios += 1;
                    w
                }
                None => return self.after_read(buf, input, file, offset, res, true),
            },
            None => return self.after_read(buf, input, file, offset, res, true),
        };
        let Some(v) = self.ver.as_mut() else {
            return Ok(());
        };
        let r = v.check(
            buf,
            &input.paths[w.file],
            w.offset,
            Some(&w),
            FLAGS_READ_BACK,
        );
        if r.is_err() {
            fail(res, true, &input.diag);
        }
        r
    }
}

/// Whether a loop of the workload may write a block twice. Only workloads known to write
/// each block once per pass are trusted with the write-number and seed checks: one file or
/// files in turn, no ramp (its writes come on top of the pass), no more bytes per loop than
/// the region, no zones; random offsets only from a random map or lfsr, every I/O random
/// (percentage_random 100, a new offset each I/O); sequential ones.
fn may_rewrite(input: &WorkerInput) -> bool {
    use crate::model::{blocks::FileService, blocks::RandomGenerator, Distribution};
    let job = &input.job;
    let region: u64 = input.regions.iter().map(|r| r.1).sum();
    let loops = u64::from(job.loops.max(1));
    let per_loop = input.io_limit.map_or(region, |t| t / loops);
    let lfsr = job.blocks.generator == RandomGenerator::Lfsr
        && job.random_distribution == Distribution::Random;
    let files_in_turn = input.regions.len() <= 1
        || matches!(
            job.blocks.file_service,
            FileService::RoundRobin | FileService::Sequential
        );
    let offsets_once = if job.rw.random {
        (job.uses_random_map() || lfsr)
            && job.blocks.rw_seq_nr == 1
            && job.blocks.percentage_random[DDIR_WRITE] >= 100
    } else {
        true
    };
    let once = files_in_turn
        && job.ramp_time.is_zero()
        && per_loop <= region
        && !job.blocks.strided
        && offsets_once;
    !once
}

impl Data {
    /// The next written block of the read-back: the log's next, or the replay's next write.
    fn next_back(&mut self) -> Option<Written> {
        let v = self.ver.as_mut()?;
        let Some(r) = self.replay.as_mut() else {
            return v.log.as_mut()?.next();
        };
        while r.writes < self.writes {
            let dir = r.src.pick_dir();
            let io = r.src.next(dir);
            if dir != DDIR_WRITE {
                continue; // fio: a read of the workload is skipped
            }
            if let Some(b) = r.refill.as_mut() {
                r.src.rng.fill(&mut b[..io.len]);
            }
            r.writes += 1;
            return Some(Written {
                file: io.file,
                offset: io.offset,
                len: io.len,
                numberio: r.writes - 1,
                seed: v.replayed_seed(),
            });
        }
        None
    }
}

/// verify with loops > 1: fio reads back after every loop (do_verify in thread_main's loop).
/// The bytes of the first loop when that applies (the worker loops stop there, read back, and
/// go on one loop further each time), else `total`.
pub(crate) fn loop_limit(d: Option<&Data>, input: &WorkerInput, total: u64) -> u64 {
    let job = &input.job;
    let loops = u64::from(job.loops.max(1));
    match d {
        Some(d) if d.read_back && !d.only && loops > 1 && !job.time_based && total != u64::MAX => {
            total / loops
        }
        _ => total,
    }
}

/// A backlog read as the queue loop's next I/O.
#[inline]
pub(crate) fn next_io(w: Written) -> super::source::NextIo {
    super::source::NextIo {
        file: w.file,
        offset: w.offset,
        len: w.len,
        new_pass: false,
    }
}

/// The job's error after a mismatch (EILSEQ, fio's err=84) and fio's line naming it.
#[cold]
fn fail(res: &mut WorkerResult, queued: bool, diag: &crate::diag::Diag) {
    res.job_error = EILSEQ;
    let (line, func) = if queued {
        (2190, "io_u_queued_complete")
    } else {
        (2152, "io_u_sync_complete")
    };
    diag.line(&format!(
        "fio: pid={}, err={EILSEQ}/file:io_u.c:{line}, func={func}, error={}",
        res.tid,
        crate::report::units::strerror(EILSEQ)
    ));
}

/// verify_only: walk the write workload without issuing it, logging each write for the
/// read-back and counting it as fio's dry run does (bytes and I/Os, no latency).
pub(crate) fn dry_run(
    src: &mut IoSource,
    d: &mut Data,
    input: &WorkerInput,
    res: &mut WorkerResult,
    published: &Published,
) {
    let region: u64 = input.regions.iter().map(|r| r.1).sum();
    let limit = input
        .io_limit
        .unwrap_or(region)
        .min(region.max(1) * input.job.loops.max(1) as u64);
    let mut done = 0u64;
    while done < limit {
        let dir = src.pick_dir();
        let io = src.next(dir);
        if dir == DDIR_WRITE {
            d.log(io.file, io.offset, io.len);
            d.writes += 1;
        }
        res.bytes[dir] += io.len as u64;
        res.ios[dir] += 1;
        done += io.len as u64;
    }
    for dir in [DDIR_READ, DDIR_WRITE] {
        published.bytes[dir].store(res.bytes[dir], Ordering::Relaxed);
        published.ios[dir].store(res.ios[dir], Ordering::Relaxed);
    }
}

/// Whether the read-back phase runs now: the job wrote, nothing failed, no stop, time left.
pub(crate) fn phase_due(d: &Data, res: &WorkerResult, stop: &AtomicBool, deadline: u64) -> bool {
    d.read_back
        && res.error.is_none()
        && res.job_error == 0
        && !stop.load(Ordering::Relaxed)
        && now_ns() < deadline
}

/// The end of a write phase before its read-back, and the read-back's start: fio ends each
/// write phase (do_io) with end_fsync's or fsync_on_close's sync, counted in the write time,
/// then closes every file and reads back through files it opens again. Opening drops the
/// cache (invalidate=1, as at any open), which keeps dirty pages: nothing syncs the writes
/// first, so the reads find whatever of them is still cached, as fio's do. (fio 3.33's
/// do_verify has a "sync and invalidate" loop, but it skips files that are not open: all.)
/// Returns when the read-back started, or the failed sync.
fn prepare(
    d: &Data,
    input: &WorkerInput,
    res: &mut WorkerResult,
    mut sync: impl FnMut(usize) -> std::io::Result<()>,
) -> Result<u64, IoFailure> {
    let job = &input.job;
    // verify_only wrote nothing: fio's dry run has no write phase to end, and no end_fsync
    // at the end of the job either (marked as done).
    if !d.only {
        // fio: end_fsync or fsync_on_close syncs at the end of do_io, fsync_on_close again
        // when the file is closed (nothing left to write then: a cheap call).
        let times =
            usize::from(job.end_fsync || job.fsync_on_close) + usize::from(job.fsync_on_close);
        for f in 0..input.paths.len() {
            for _ in 0..times {
                sync(f).map_err(|e| IoFailure::new(input, "fsync", f, 0, errno(&e)))?;
            }
        }
    }
    res.end_synced_at = Some(res.ios[DDIR_WRITE]);
    let start = now_ns();
    for f in 0..input.paths.len() {
        input.start_pass(f);
    }
    Ok(start)
}

/// The read-back on a synchronous engine, into `buf` (max_bs bytes).
pub(super) fn run_sync<E: Engine>(
    engine: &mut E,
    d: &mut Data,
    cx: Ctx<'_>,
    res: &mut WorkerResult,
    buf: *mut u8,
    deadline: u64,
) {
    let input = cx.input;
    let start = match prepare(d, input, res, |f| engine.sync(f, SyncOp::Fsync)) {
        Ok(t) => t,
        Err(f) => {
            res.error = Some(f);
            return;
        }
    };
    let rb = ReadBack { cx, buf };
    rb.run(engine, d, res, usize::MAX, false, deadline);
    res.read_back_ns += now_ns().saturating_sub(start);
}

impl Data {
    /// verify_backlog: how many written blocks to read back right now (0 almost always).
    #[inline]
    pub(crate) fn backlog_due(&self) -> usize {
        self.ver.as_ref().map_or(0, |v| v.backlog_due())
    }
}

/// verify_backlog on a synchronous engine: read back the `n` oldest writes now, in the middle
/// of the workload (fio does not sync or drop the cache first here).
pub(super) fn backlog_sync<E: Engine>(
    engine: &mut E,
    d: &mut Data,
    n: usize,
    cx: Ctx<'_>,
    res: &mut WorkerResult,
    buf: *mut u8,
) {
    let rb = ReadBack { cx, buf };
    rb.run(engine, d, res, n, true, u64::MAX);
}

/// Reads back written blocks on a synchronous engine into one buffer.
struct ReadBack<'a> {
    cx: Ctx<'a>,
    buf: *mut u8,
}

impl ReadBack<'_> {
    fn run<E: Engine>(
        &self,
        engine: &mut E,
        d: &mut Data,
        res: &mut WorkerResult,
        max: usize,
        backlog: bool,
        deadline: u64,
    ) {
        let (input, stop) = (self.cx.input, self.cx.stop);
        let timed = input.job.timed();
        let mut done = 0;
        while done < max {
            let next = match backlog {
                true => d.ver.as_mut().and_then(|v| v.log.as_mut()?.next_oldest()),
                false => d.next_back(),
            };
            let Some(w) = next else {
                break;
            };
            done += 1;
            if stop.load(Ordering::Relaxed) || now_ns() >= deadline {
                break;
            }
            let t0 = now_ns();
            // SAFETY: buf holds max_bs >= w.len bytes, aligned, owned by this thread.
            let r = unsafe { engine.io(w.file, Op::Read, self.buf, w.len, w.offset) };
            let t1 = now_ns();
            let n = match r {
                Ok(n) => n,
                Err(e) => {
                    res.error = Some(IoFailure::new(input, "read", w.file, w.offset, errno(&e)));
                    return;
                }
            };
            count(res, self.cx.published, timed, n, w.len, t1, (t1 - t0, None));
            // SAFETY: as above; the read is complete.
            let b = unsafe { std::slice::from_raw_parts_mut(self.buf, w.len) };
            let Some(v) = d.ver.as_mut() else { return };
            if v.check(b, &input.paths[w.file], w.offset, Some(&w), FLAGS_READ_BACK)
                .is_err()
            {
                fail(res, false, &input.diag);
                return;
            }
        }
    }
}

/// Counts one read-back read (fio counts them as reads): `n` bytes of `len`, completed at `t`
/// after `clat`, and on a queueing engine its (lat, slat).
#[inline]
fn count(
    res: &mut WorkerResult,
    published: &Published,
    timed: bool,
    n: usize,
    len: usize,
    t: u64,
    (clat, queued): (u64, Option<(u64, u64)>),
) {
    let d = DDIR_READ;
    if timed {
        res.tick(t);
        res.clat[d].record(clat);
        if let Some((lat, slat)) = queued {
            res.lat[d].record(lat);
            res.slat[d].record(slat);
        }
    }
    if n < len {
        res.short[d] += 1;
    }
    res.bytes[d] += n as u64;
    res.ios[d] += 1;
    res.read_back_bytes += n as u64;
    res.read_back_ios += 1;
    // The read-back counts first: the monitor, which loads them after the reads, then never
    // sees a read-back in the reads without it in these.
    published.read_back[0].store(res.read_back_bytes, Ordering::Relaxed);
    published.read_back[1].store(res.read_back_ios, Ordering::Relaxed);
    published.bytes[d].store(res.bytes[d], Ordering::Relaxed);
    published.ios[d].store(res.ios[d], Ordering::Relaxed);
}

/// The read-back on a queueing engine, keeping up to `regions.len()` reads in flight in the
/// slot buffers `regions` (nothing else may be in flight). Returns how many reads are still in
/// flight (not 0 only after a failed reap: the caller must then leak the buffers).
pub(super) fn run_queue<E: QueueEngine>(
    engine: &mut E,
    d: &mut Data,
    cx: Ctx<'_>,
    res: &mut WorkerResult,
    regions: &[(*mut u8, usize)],
    deadline: u64,
) -> usize {
    let input = cx.input;
    let start = match prepare(d, input, res, |f| engine.sync(f, SyncOp::Fsync)) {
        Ok(t) => t,
        Err(f) => {
            res.error = Some(f);
            return 0;
        }
    };
    let left = queue_read_back(engine, d, cx, res, regions, deadline);
    res.read_back_ns += now_ns().saturating_sub(start);
    left
}

/// [`run_queue`]'s reads.
fn queue_read_back<E: QueueEngine>(
    engine: &mut E,
    d: &mut Data,
    cx: Ctx<'_>,
    res: &mut WorkerResult,
    regions: &[(*mut u8, usize)],
    deadline: u64,
) -> usize {
    let (input, published, stop) = (cx.input, cx.published, cx.stop);
    let timed = input.job.timed();
    if d.ver.is_none() {
        return 0;
    }
    let depth = regions.len();
    // Per slot: the block, prepared and submitted instants (sized once for the phase).
    let mut slots: Vec<(Written, u64, u64)> = vec![
        (
            Written {
                file: 0,
                offset: 0,
                len: 0,
                numberio: 0,
                seed: 0
            },
            0,
            0
        );
        depth
    ];
    let mut free: Vec<u32> = (0..depth as u32).rev().collect();
    let mut queued: Vec<u32> = Vec::with_capacity(depth);
    let mut done_slots: Vec<(u32, i64, u64)> = Vec::with_capacity(depth);
    let mut inflight = 0usize;
    let mut exhausted = false;
    let mut failed = false;
    loop {
        if stop.load(Ordering::Relaxed) || now_ns() >= deadline {
            exhausted = true;
        }
        while !exhausted && !failed && !free.is_empty() {
            let Some(w) = d.next_back() else {
                exhausted = true;
                break;
            };
            let slot = free.pop().expect("a free slot") as usize;
            slots[slot] = (w, if timed { now_ns() } else { 0 }, 0);
            // SAFETY: the slot's buffer holds max_bs >= w.len bytes and is not in flight; it
            // stays untouched until this slot's completion is reaped below.
            if let Err(e) = unsafe {
                engine.queue(
                    slot as u32,
                    w.file,
                    Op::Read,
                    regions[slot].0,
                    w.len,
                    w.offset,
                )
            } {
                free.push(slot as u32);
                res.error = Some(IoFailure::new(input, "read", w.file, w.offset, errno(&e)));
                failed = true;
                break;
            }
            queued.push(slot as u32);
        }
        while !queued.is_empty() {
            let t_sub = if timed { now_ns() } else { 0 };
            let n = match engine.submit() {
                Ok(n) => n,
                Err(e) => {
                    let w = slots[queued[0] as usize].0;
                    res.error = Some(IoFailure::new(input, "read", w.file, w.offset, errno(&e)));
                    // Nothing of the queue went out: give the slots back.
                    free.append(&mut queued);
                    failed = true;
                    break;
                }
            };
            if n == 0 {
                break;
            }
            for &s in &queued[..n] {
                slots[s as usize].2 = t_sub;
            }
            queued.drain(..n);
            inflight += n;
        }
        if inflight == 0 {
            if queued.is_empty() && (exhausted || failed) {
                return 0;
            }
            continue;
        }
        done_slots.clear();
        let r = engine.reap(1, depth, None, &mut |slot: u32, r: i64| {
            done_slots.push((slot, r, now_ns()));
        });
        if let Err(e) = r {
            res.error = Some(IoFailure::new(input, "reap", 0, 0, errno(&e)));
            // The buffers may still be in use: the caller leaks them.
            return inflight;
        }
        for &(slot, r, t) in &done_slots {
            inflight -= 1;
            free.push(slot);
            if failed {
                continue;
            }
            let (w, t_prep, t_sub) = slots[slot as usize];
            if r < 0 {
                res.error = Some(IoFailure::new(input, "read", w.file, w.offset, (-r) as i32));
                failed = true;
                continue;
            }
            count(
                res,
                published,
                timed,
                r as usize,
                w.len,
                t,
                (
                    t.saturating_sub(t_sub),
                    Some((t.saturating_sub(t_prep), t_sub.saturating_sub(t_prep))),
                ),
            );
            // SAFETY: the read into this slot's buffer has completed.
            let b = unsafe { std::slice::from_raw_parts_mut(regions[slot as usize].0, w.len) };
            let Some(v) = d.ver.as_mut() else {
                return inflight;
            };
            if v.check(b, &input.paths[w.file], w.offset, Some(&w), FLAGS_READ_BACK)
                .is_err()
            {
                fail(res, true, &input.diag);
                failed = true;
            }
        }
        if failed {
            exhausted = true;
        }
    }
}
