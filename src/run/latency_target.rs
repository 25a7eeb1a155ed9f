//! fio 3.33's `latency_target` search (io_u.c's lat_target_*) and flow control (flow.c), used by
//! both worker loops through a call or two; jobs without them pay one predictable branch.
//!
//! The search starts at depth 1 and, after every `latency_window`, compares the share of the
//! window's I/Os that met the target with `latency_percentile`. A window that passes raises the
//! depth (doubling until a depth has failed, then bisecting towards the lowest failed depth); a
//! window that fails (or, at percentile 100, any single I/O over the target) bisects down and
//! drains the queue first. When a passing window leaves the depth where it was, the search has
//! settled: without `latency_run` the job drains, forgets its statistics, runs one more window at
//! that depth and ends. At depth 1 with percentile 100, an I/O over the target ends the job with
//! ETIMEDOUT, as fio's lat_fatal.

use super::shared::FlowGroup;
use crate::model::JobSpec;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// errno of a job whose I/O missed the latency target at depth 1 (fio: ETIMEDOUT).
pub(super) const LAT_ERRNO: i32 = libc::ETIMEDOUT;

/// What a check asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// Go on at [`LatTarget::cap`].
    Go,
    /// The search settled and the queue is drained: forget the statistics measured so far (as
    /// fio's reset_all_stats) and go on for one last window.
    Reset,
    /// The last window passed: the job is done.
    Done,
}

/// One job instance's queue-depth search (fio's latency_qd, _low, _high, stable count).
#[derive(Debug)]
pub(super) struct LatTarget {
    target_ns: u64,
    window_ns: u64,
    percentile: f64,
    run: bool,
    iodepth: u32,
    /// The depth the job may use now (fio's latency_qd).
    qd: u32,
    qd_high: u32,
    qd_low: u32,
    stable: u32,
    /// The current window: its start and the I/O count then, and the I/Os over the target.
    cycle_start: u64,
    cycle_ios: u64,
    failed: u64,
    /// The search settled and its last window runs (fio's latency_end_run).
    end_run: bool,
    /// Draining the queue (fio's io_u_quiesce) before a new window, or before the reset.
    quiesce: bool,
    reset_due: bool,
    /// The I/O that missed the target at depth 1, if one did (the job then fails).
    missed: Option<Missed>,
}

impl LatTarget {
    /// The search of a job with latency_target set (None without it), starting at `now`.
    pub(super) fn new(job: &JobSpec, now: u64) -> Option<Self> {
        let l = &job.latency;
        if !l.target_on() {
            return None;
        }
        let iodepth = job.iodepth.max(1);
        let mut t = LatTarget {
            target_ns: l.target_ns,
            window_ns: l.window_us.saturating_mul(1000),
            percentile: l.percentile,
            run: l.run,
            iodepth,
            qd: 1,
            qd_high: iodepth,
            qd_low: 1,
            stable: 0,
            cycle_start: now,
            cycle_ios: 0,
            failed: 0,
            end_run: false,
            quiesce: false,
            reset_due: false,
            missed: None,
        };
        t.init(now, 0);
        Some(t)
    }

    /// fio's lat_target_init: depth 1, bounds 1 and iodepth, a new window.
    fn init(&mut self, now: u64, ios: u64) {
        self.end_run = false;
        self.qd = 1;
        self.qd_high = self.iodepth;
        self.qd_low = 1;
        self.cycle_start = now;
        self.cycle_ios = ios;
        self.quiesce = false;
        self.reset_due = false;
    }

    /// The end of ramp_time restarts the search (fio's lat_target_reset).
    pub(super) fn ramp_over(&mut self, now: u64) {
        if !self.end_run {
            self.init(now, 0);
        }
    }

    /// The depth the search ended at (fio's `latency_depth`).
    pub(super) fn depth(&self) -> u32 {
        self.qd
    }

    /// How many I/Os may be in flight now: the current depth, or none while draining.
    #[inline]
    pub(super) fn cap(&self) -> usize {
        if self.quiesce {
            0
        } else {
            self.qd as usize
        }
    }

    fn new_cycle(&mut self, now: u64, ios: u64) {
        self.cycle_start = now;
        self.cycle_ios = ios;
        self.failed = 0;
    }

    /// The first I/O [`LatTarget::on_io`] found fatal, for fio's message.
    #[cold]
    pub(super) fn note_miss(&mut self, m: Missed) {
        self.missed.get_or_insert(m);
    }

    /// One completed I/O took `lat_ns` (fio's total latency). True when the job must end with
    /// ETIMEDOUT (percentile 100, over the target at depth 1): pass it to `note_miss`.
    #[inline]
    pub(super) fn on_io(&mut self, lat_ns: u64) -> bool {
        if lat_ns <= self.target_ns {
            return false;
        }
        if self.percentile == 100.0 {
            // Differs: an I/O reaped while already draining does not bisect again (fio's
            // io_u_quiesce accounts those completions and may ramp down once more).
            if self.quiesce {
                return false;
            }
            return self.ramp_down();
        }
        self.failed += 1;
        false
    }

    /// fio's __lat_target_failed: true at depth 1 (nothing lower to try); else bisect down and
    /// drain, the new window starting once drained.
    fn ramp_down(&mut self) -> bool {
        if self.qd == 1 {
            return true;
        }
        self.qd_high = self.qd;
        if self.qd == self.qd_low {
            self.qd_low -= 1;
        }
        self.qd = (self.qd + self.qd_low) / 2;
        self.stable = 0;
        self.quiesce = true;
        false
    }

    /// fio's lat_target_success; true when the job is done (its last window passed).
    fn ramp_up(&mut self, now: u64, ios: u64) -> bool {
        let qd = self.qd;
        self.qd_low = self.qd;
        if self.qd + 1 == self.qd_high {
            // fio: stuck one below the highest failed depth; every third pass try one higher.
            self.stable += 1;
            if self.stable >= 3 {
                self.qd_high += 1;
                self.stable = 0;
            }
        }
        if self.qd_high != self.iodepth {
            self.qd = (self.qd + self.qd_high) / 2;
        } else {
            self.qd *= 2;
        }
        self.qd = self.qd.min(self.iodepth);
        if !self.run && self.qd == qd {
            if self.end_run {
                return true;
            }
            self.quiesce = true;
            self.reset_due = true;
            self.end_run = true;
        }
        self.new_cycle(now, ios);
        false
    }

    /// After completions (or an issued I/O) at `now`, with `ios` completed in all (since the
    /// last reset) and `inflight` still in flight: checks a finished window (fio's
    /// lat_target_check), or ends a drain once nothing is in flight.
    pub(super) fn after_io(&mut self, now: u64, ios: u64, inflight: usize) -> Step {
        // fio checks only once the job has completed an I/O (since the start or the reset).
        if !self.quiesce && ios > 0 && now.saturating_sub(self.cycle_start) >= self.window_ns {
            let n = ios.saturating_sub(self.cycle_ios);
            // As fio: no I/O in the window is 0/0, which never passes.
            let ok = n > 0 && (n - self.failed.min(n)) as f64 / n as f64 * 100.0 >= self.percentile;
            if ok {
                if self.ramp_up(now, ios) {
                    return Step::Done;
                }
            } else {
                // At depth 1 fio keeps the window going (and checks again after the next I/O).
                self.ramp_down();
            }
        }
        if !self.quiesce || inflight > 0 {
            return Step::Go;
        }
        // Drained: the next window starts now (after the reset, from no I/O).
        self.quiesce = false;
        if self.reset_due {
            self.reset_due = false;
            self.new_cycle(now, 0);
            return Step::Reset;
        }
        self.new_cycle(now, ios);
        Step::Go
    }
}

/// The I/O that missed the target at depth 1 (percentile 100): it ends the job.
#[derive(Debug, Clone, Copy)]
pub(super) struct Missed {
    pub lat_ns: u64,
    pub file: usize,
    pub dir: usize,
    pub offset: u64,
    pub len: usize,
}

/// What the loop does after [`after_completions`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum After {
    /// Go on at [`LatTarget::cap`].
    Go,
    /// Measurement restarted (the search settled): the loop restarts its own per-measurement
    /// state, as at the end of ramp_time, but keeps its issued-bytes count (fio's survives).
    Restarted,
    /// The job is done: drain and end.
    Done,
    /// An I/O missed the target at depth 1: the job ended with ETIMEDOUT (message printed).
    Failed,
}

/// After completions at `now` (`inflight` still in flight), in either loop: a miss at depth 1
/// fails the job, else the window check or the end of a drain; a settled search restarts the
/// measurement through `tl`. Nothing is checked during ramp_time (as fio).
pub(super) fn after_completions(
    lat: &mut LatTarget,
    now: u64,
    inflight: usize,
    tl: &mut super::instance::Timeline,
    res: &mut super::instance::WorkerResult,
    input: &super::instance::WorkerInput,
    published: &super::instance::Published,
) -> After {
    if let Some(m) = lat.missed {
        fatal(res, input, m);
        return After::Failed;
    }
    if tl.in_ramp {
        return After::Go;
    }
    match lat.after_io(now, res.ios.iter().sum(), inflight) {
        Step::Go => After::Go,
        Step::Done => After::Done,
        Step::Reset => {
            tl.restart(now, res, published);
            After::Restarted
        }
    }
}

/// The message fio prints when an I/O misses the target at depth 1 (lat_fatal).
#[cold]
fn fatal(res: &mut super::instance::WorkerResult, input: &super::instance::WorkerInput, m: Missed) {
    input.diag.line(&format!(
        "fio: latency of {} nsec exceeds specified max ({} nsec): {} {} {} {}",
        m.lat_ns,
        input.job.latency.target_ns,
        input.paths[m.file].display(),
        ["read", "write", "trim"][m.dir.min(2)],
        m.offset,
        m.len
    ));
    input.diag.line(&format!(
        "fio: pid={}, err={LAT_ERRNO}/file:io_u.c:1432, func=max latency exceeded, error={}",
        res.tid,
        crate::report::units::strerror(LAT_ERRNO)
    ));
    res.job_error = LAT_ERRNO;
}

/// Every flow group of a run, with the weight of every job instance that uses one registered
/// before any starts (fio adds them as it parses the jobs, later phases' jobs included).
#[derive(Debug, Default)]
pub(crate) struct FlowRegistry {
    groups: Vec<(i32, Arc<FlowGroup>)>,
}

impl FlowRegistry {
    /// The groups of the run's jobs (empty when none sets `flow`).
    pub(crate) fn new(jobs: &[JobSpec]) -> Self {
        let mut groups: Vec<(i32, Arc<FlowGroup>)> = Vec::new();
        for j in jobs.iter().filter(|j| j.latency.flow > 0) {
            let w = j.latency.flow as u64 * j.numjobs.max(1) as u64;
            match groups.iter().find(|(id, _)| *id == j.latency.flow_id) {
                Some((_, g)) => {
                    g.total_weight.fetch_add(w, Ordering::Relaxed);
                }
                None => groups.push((
                    j.latency.flow_id,
                    Arc::new(FlowGroup {
                        counter: AtomicU64::new(1),
                        total_weight: AtomicU64::new(w),
                    }),
                )),
            }
        }
        FlowRegistry { groups }
    }

    /// The group a job instance belongs to, if it sets `flow`.
    pub(crate) fn group(&self, job: &JobSpec) -> Option<Arc<FlowGroup>> {
        if job.latency.flow == 0 {
            return None;
        }
        self.groups
            .iter()
            .find(|(id, _)| *id == job.latency.flow_id)
            .map(|(_, g)| g.clone())
    }
}

/// A flow group whose jobs run in different stonewall phases, or one of whose jobs waits for
/// another (wait_for), is refused. fio 3.33 counts every
/// job's weight from the start, so the earlier phase's jobs stall after a few I/Os waiting for
/// jobs that have not started: a size-based job never ends (fio hangs), a time_based one idles
/// through its runtime. Differs on purpose: iogauge says so instead of running that.
pub(crate) fn check_flow_phases(
    jobs: &[JobSpec],
    instances: impl Iterator<Item = (usize, u32)>,
) -> Result<(), String> {
    let mut first: Vec<(i32, u32, usize)> = Vec::new(); // flow_id, phase, job
    for (ji, phase) in instances {
        let j = &jobs[ji];
        if j.latency.flow == 0 {
            continue;
        }
        match first.iter().find(|(id, _, _)| *id == j.latency.flow_id) {
            None => first.push((j.latency.flow_id, phase, ji)),
            Some(&(id, p, other)) if p != phase => {
                return Err(format!(
                    "jobs '{}' and '{}' share flow_id={id} but run one after the other \
                     (stonewall): fio 3.33 counts both weights from the start, so the first \
                     stalls waiting for the second (fio never ends); give them different \
                     flow_id values or run them together",
                    jobs[other].name, j.name
                ));
            }
            Some(_) => {}
        }
    }
    // wait_for within one flow group stalls the same way.
    for j in jobs.iter().filter(|j| j.latency.flow > 0) {
        let waitee = j.timing.wait_for.as_deref().and_then(|w| {
            jobs.iter().find(|k| {
                k.name == w && k.latency.flow > 0 && k.latency.flow_id == j.latency.flow_id
            })
        });
        if let Some(k) = waitee {
            return Err(format!(
                "job '{}' waits for '{}' (wait_for) but both are in flow_id={}: fio 3.33 counts \
                 both weights from the start, so '{}' stalls waiting for a job that cannot start \
                 (fio never ends); give them different flow_id values",
                j.name, k.name, j.latency.flow_id, k.name
            ));
        }
    }
    Ok(())
}

/// One job instance's side of its flow group (fio's td->flow, td->flow_counter); leaving the
/// group (drop) takes its I/Os and weight out, as fio's flow_exit_job.
#[derive(Debug)]
pub(super) struct Flow {
    group: Arc<FlowGroup>,
    weight: u64,
    mine: u64,
    /// flow_sleep in ns (0: retry at once).
    pub sleep_ns: u64,
}

impl Flow {
    /// The instance's flow, None when its job sets no `flow`.
    pub(super) fn new(input: &super::instance::WorkerInput) -> Option<Self> {
        input.flow.as_ref().map(|g| Flow {
            group: g.clone(),
            weight: input.job.latency.flow as u64,
            mine: 0,
            sleep_ns: input.job.latency.flow_sleep_us as u64 * 1000,
        })
    }

    /// fio's flow_threshold_exceeded: true when the job is ahead of its share and must not
    /// issue now; else the I/O about to be issued is counted (one shared atomic add).
    #[inline]
    pub(super) fn held(&mut self) -> bool {
        let all = self.group.counter.load(Ordering::Relaxed);
        let weights = self.group.total_weight.load(Ordering::Relaxed);
        if self.mine as f64 / all as f64 > self.weight as f64 / weights as f64 {
            return true;
        }
        self.group.counter.fetch_add(1, Ordering::Relaxed);
        self.mine += 1;
        false
    }

    /// Held back with flow_sleep set: sleep it (the queue is drained), at most until `deadline`.
    pub(super) fn pause(&self, deadline: u64) {
        if self.sleep_ns > 0 {
            let now = super::clock::now_ns();
            super::clock::sleep_until((now + self.sleep_ns).min(deadline.max(now)));
        }
    }
}

impl Drop for Flow {
    fn drop(&mut self) {
        self.group.counter.fetch_sub(self.mine, Ordering::Relaxed);
        self.group
            .total_weight
            .fetch_sub(self.weight, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(depth: u32, pct: f64, run: bool) -> JobSpec {
        let mut j = JobSpec {
            iodepth: depth,
            ..JobSpec::default()
        };
        j.latency.target_ns = 1000;
        j.latency.window_us = 1;
        j.latency.percentile = pct;
        j.latency.run = run;
        j
    }

    /// Windows that always pass: 1, 2, 4, 8, 16, settled (reset), done: fio's doubling.
    #[test]
    fn always_met_reaches_iodepth_then_ends() {
        let mut t = LatTarget::new(&job(16, 100.0, false), 0).unwrap();
        let mut seen = vec![t.cap()];
        let mut now = 0;
        let mut ios = 0;
        let mut steps = Vec::new();
        for _ in 0..10 {
            now += 2000;
            ios += 10;
            let s = t.after_io(now, ios, 0);
            steps.push(s);
            seen.push(t.cap());
            if s == Step::Done {
                break;
            }
        }
        assert_eq!(seen, vec![1, 2, 4, 8, 16, 16, 16]);
        assert_eq!(steps.iter().filter(|&&s| s == Step::Reset).count(), 1);
        assert_eq!(steps.last(), Some(&Step::Done));
        assert_eq!(t.depth(), 16);
    }

    /// percentile 100: one slow I/O at depth 1 is fatal; at depth 8 it bisects down to 4 (low
    /// bound 4 after 1, 2, 4 passed) and drains first.
    #[test]
    fn slow_io_bisects_down_or_is_fatal() {
        let mut t = LatTarget::new(&job(16, 100.0, true), 0).unwrap();
        assert!(t.on_io(5000));
        let mut t = LatTarget::new(&job(16, 100.0, true), 0).unwrap();
        for i in 1..=3 {
            t.after_io(i * 2000, i * 10, 0);
        }
        assert_eq!(t.cap(), 8);
        assert!(!t.on_io(5000));
        assert_eq!(t.cap(), 0, "drains first");
        assert_eq!(t.after_io(7000, 40, 3), Step::Go);
        assert_eq!(t.after_io(7100, 43, 0), Step::Go);
        assert_eq!(t.cap(), 6);
    }

    /// percentile below 100: a window under it at depth 1 keeps depth 1 and the job going.
    #[test]
    fn failing_windows_stay_at_one() {
        let mut t = LatTarget::new(&job(16, 50.0, false), 0).unwrap();
        for i in 1..20 {
            for _ in 0..10 {
                assert!(!t.on_io(9999));
            }
            assert_eq!(t.after_io(i * 2000, i * 10, 0), Step::Go);
            assert_eq!(t.cap(), 1);
        }
    }

    /// Weights 2 and 1: the issued counts stay near 2:1 whatever order the jobs ask in.
    #[test]
    fn flow_keeps_the_ratio() {
        let mut a = job(1, 100.0, false);
        a.latency.flow = 2;
        let mut b = a.clone();
        b.latency.flow = 1;
        let reg = FlowRegistry::new(&[a.clone(), b.clone()]);
        let g = reg.group(&a).unwrap();
        let mut fa = Flow {
            group: g.clone(),
            weight: 2,
            mine: 0,
            sleep_ns: 0,
        };
        let mut fb = Flow {
            group: g,
            weight: 1,
            mine: 0,
            sleep_ns: 0,
        };
        let (mut na, mut nb) = (0u32, 0u32);
        for i in 0..30_000u32 {
            // A asks three times as often as B.
            if i % 4 == 0 {
                nb += u32::from(!fb.held());
            } else {
                na += u32::from(!fa.held());
            }
        }
        let r = na as f64 / nb as f64;
        assert!((1.9..2.1).contains(&r), "ratio {r} ({na}/{nb})");
    }
}
