//! The timing group's per-I/O helpers for both worker loops: thinktime (fio's handle_thinktime)
//! and the minimum-rate check (fio's check_min_rate). Each is `None` when the job does not ask
//! for it, so a job without them pays one branch per I/O; with them, no allocation per I/O.

use super::clock::{now_ns, sleep_until};
use crate::model::timing::ThinkBlocks;
use crate::model::JobSpec;
use std::sync::atomic::{AtomicBool, Ordering};

/// fio's thinktime: after every `thinktime_blocks` I/Os (issued or completed), or after
/// `thinktime_iotime` of I/O, wait for the queue to drain, spin `thinktime_spin`, then sleep the
/// rest of `thinktime`.
#[derive(Debug)]
pub(super) struct Think {
    think_ns: u64,
    spin_ns: u64,
    /// I/Os between pauses; 0 = only the time check (iotime set, blocks not).
    blocks: u64,
    iotime_ns: u64,
    /// Count issued I/Os instead of completed ones.
    pub issue: bool,
    last_blocks: u64,
    last_time: u64,
    /// rate_ignore_thinktime: the caller moves its rate schedule by the pause.
    pub ignore_rate: bool,
}

impl Think {
    /// None when the job has no thinktime. `start` is the job's start (fio's epoch).
    pub(super) fn new(job: &JobSpec, start: u64) -> Option<Think> {
        let t = &job.timing;
        if t.thinktime.is_zero() {
            return None;
        }
        let iotime_ns = t.thinktime_iotime.as_nanos() as u64;
        // fio: with thinktime_iotime and no explicit thinktime_blocks, only the time counts.
        let blocks = match t.thinktime_blocks {
            Some(b) => b as u64,
            None if iotime_ns > 0 => 0,
            None => 1,
        };
        Some(Think {
            think_ns: t.thinktime.as_nanos() as u64,
            spin_ns: t.thinktime_spin.as_nanos() as u64,
            blocks,
            iotime_ns,
            issue: t.thinktime_blocks_type == ThinkBlocks::Issue,
            last_blocks: 0,
            last_time: start,
            ignore_rate: t.rate_ignore_thinktime,
        })
    }

    /// Whether a pause is due now, with `count` I/Os issued or completed (as `issue` says).
    #[inline]
    pub(super) fn due(&self, count: u64, now: u64) -> bool {
        if self.iotime_ns > 0
            && now.saturating_sub(self.last_time) >= self.iotime_ns + self.think_ns
        {
            return true;
        }
        self.blocks > 0 && count >= self.last_blocks + self.blocks
    }

    /// The pause itself (the queue is drained by the caller first); returns the ns it took. It
    /// ends early on `stop` and at `deadline` (fio would sleep past the runtime).
    #[cold]
    pub(super) fn pause(&mut self, count: u64, stop: &AtomicBool, deadline: u64) -> u64 {
        let t0 = now_ns();
        let spin_end = (t0 + self.spin_ns).min(deadline);
        while now_ns() < spin_end {
            std::hint::spin_loop();
        }
        let end = (t0 + self.think_ns).min(deadline);
        loop {
            let now = now_ns();
            if now >= end || stop.load(Ordering::Relaxed) {
                break;
            }
            sleep_until(end.min(now + 100_000_000));
        }
        self.last_blocks = count;
        self.last_time = t0;
        now_ns() - t0
    }
}

/// fio's rate_min / rate_iops_min: after a 2 s settle period, the rate over each `rate_cycle`
/// window must reach the minimum in every direction that has done I/O, or the job fails.
#[derive(Debug)]
pub(super) struct MinRate {
    min_bytes: [u64; 2],
    min_iops: [u64; 2],
    cycle_ns: u64,
    settle_end: u64,
    /// Per direction: bytes, I/Os and time at the last check (time 0: not yet).
    last: [(u64, u64, u64); 2],
    next: u64,
}

impl MinRate {
    /// None when the job sets no minimum rate. `start` is the start of measurement.
    pub(super) fn new(job: &JobSpec, start: u64) -> Option<MinRate> {
        let t = &job.timing;
        if !t.checks_min_rate() {
            return None;
        }
        let settle_end = start + 2_000_000_000;
        Some(MinRate {
            min_bytes: [t.rate_min[0].unwrap_or(0), t.rate_min[1].unwrap_or(0)],
            min_iops: [
                t.rate_iops_min[0].unwrap_or(0),
                t.rate_iops_min[1].unwrap_or(0),
            ],
            cycle_ns: t.ratecycle_ms * 1_000_000,
            settle_end,
            last: [(0, 0, 0); 2],
            next: settle_end,
        })
    }

    /// Restart the settle period (end of ramp).
    pub(super) fn restart(&mut self, start: u64) {
        self.settle_end = start + 2_000_000_000;
        self.next = self.settle_end;
        self.last = [(0, 0, 0); 2];
    }

    /// One compare per I/O; the check itself once per window. Some(message) when a minimum
    /// was missed (fio's wording).
    #[inline]
    pub(super) fn check(
        &mut self,
        now: u64,
        bytes: &[u64; 3],
        ios: &[u64; 3],
        job: &str,
    ) -> Option<String> {
        if now < self.next {
            return None;
        }
        self.check_now(now, bytes, ios, job)
    }

    #[cold]
    fn check_now(
        &mut self,
        now: u64,
        bytes: &[u64; 3],
        ios: &[u64; 3],
        job: &str,
    ) -> Option<String> {
        let mut next = u64::MAX;
        for d in 0..2 {
            if bytes[d] == 0 || (self.min_bytes[d] == 0 && self.min_iops[d] == 0) {
                continue;
            }
            let (lb, li, lt) = self.last[d];
            if lt != 0 {
                let spent_ms = (now - lt) / 1_000_000;
                if now - lt < self.cycle_ns || spent_ms == 0 {
                    next = next.min(lt + self.cycle_ns);
                    continue;
                }
                if self.min_bytes[d] > 0 {
                    let got = (bytes[d] - lb) * 1000 / spent_ms;
                    if got < self.min_bytes[d] {
                        return Some(format!(
                            "{job}: rate_min={}B/s not met, got {got}B/s",
                            self.min_bytes[d]
                        ));
                    }
                } else {
                    let got = (ios[d] - li) * 1000 / spent_ms;
                    if got < self.min_iops[d] {
                        return Some(format!(
                            "{job}: rate_iops_min={} not met, got {got} IOPS",
                            self.min_iops[d]
                        ));
                    }
                }
            }
            self.last[d] = (bytes[d], ios[d], now);
            next = next.min(now + self.cycle_ns);
        }
        self.next = if next == u64::MAX {
            now + self.cycle_ns
        } else {
            next
        };
        None
    }
}

/// An I/O took `lat` ns, over the job's max_latency: fio's message on stderr, and the job
/// ends with ETIMEDOUT (its results kept), as fio's lat_fatal.
#[cold]
pub(super) fn max_latency_failed(
    input: &super::instance::WorkerInput,
    at: (usize, usize, u64, usize),
    lat: u64,
    res: &mut super::instance::WorkerResult,
) {
    let (file, dir, offset, len) = at;
    if res.job_error == 0 {
        let name = input.paths.get(file).map(|p| p.display().to_string());
        input.diag.line(&format!(
            "fio: latency of {lat} nsec exceeds specified max ({} nsec): {} {} {offset} {len}",
            input.job.timing.max_latency[dir].unwrap_or(0),
            name.unwrap_or_default(),
            ["read", "write", "trim"][dir.min(2)],
        ));
        res.job_error = libc::ETIMEDOUT;
    }
}

/// errno fio gives a job that missed its minimum rate (EIO, func=check_min_rate).
pub(super) const MIN_RATE_ERRNO: i32 = libc::EIO;

/// Both helpers of one worker, and the I/O counts thinktime looks at (never reset by the ramp).
#[derive(Debug)]
pub(super) struct Timing {
    think: Option<Think>,
    min: Option<MinRate>,
    pub issued: u64,
    pub completed: u64,
    /// Nothing to do per I/O: the worker skips every call below.
    pub active: bool,
    /// fio's max_latency per direction in ns (u64::MAX: none), so the check is one compare.
    pub max_lat: [u64; 3],
    /// Where a missed minimum rate is said.
    diag: crate::diag::Diag,
}

impl Timing {
    pub(super) fn new(job: &JobSpec, start: u64, diag: &crate::diag::Diag) -> Timing {
        let think = Think::new(job, start);
        let min = MinRate::new(job, start);
        Timing {
            active: think.is_some() || min.is_some(),
            think,
            min,
            issued: 0,
            completed: 0,
            // fio checks max_latency on the total latency, so not under disable_lat.
            max_lat: job
                .timing
                .max_latency
                .map(|m| m.filter(|_| job.reporting.record.lat).unwrap_or(u64::MAX)),
            diag: diag.clone(),
        }
    }

    /// A thinktime pause is due (the queueing worker drains its queue first).
    #[inline]
    pub(super) fn think_due(&self, now: u64) -> bool {
        match &self.think {
            Some(t) => t.due(if t.issue { self.issued } else { self.completed }, now),
            None => false,
        }
    }

    /// Pause; with rate_ignore_thinktime the rate schedules move by the pause.
    #[cold]
    pub(super) fn pause(
        &mut self,
        src: &mut super::source::IoSource,
        stop: &AtomicBool,
        deadline: u64,
    ) {
        if let Some(t) = self.think.as_mut() {
            let count = if t.issue { self.issued } else { self.completed };
            let ns = t.pause(count, stop, deadline);
            if t.ignore_rate {
                src.delay_pacing(ns);
            }
        }
    }

    /// The minimum-rate check after I/O completed at `now` (measuring only). True when the job
    /// failed it: the message is on stderr, as fio's, and the result carries fio's errno.
    #[inline]
    pub(super) fn min_rate_failed(
        &mut self,
        now: u64,
        res: &mut super::instance::WorkerResult,
        job: &str,
    ) -> bool {
        let Some(m) = self.min.as_mut() else {
            return false;
        };
        match m.check(now, &res.bytes, &res.ios, job) {
            None => false,
            Some(msg) => {
                self.diag.line(&msg);
                res.job_error = MIN_RATE_ERRNO;
                true
            }
        }
    }

    /// Measurement (re)starts at `at` (end of ramp): the settle period starts again.
    pub(super) fn restart(&mut self, at: u64) {
        if let Some(m) = self.min.as_mut() {
            m.restart(at);
        }
    }

    /// Sync worker: after each I/O (issued and completed at once). True: end the job.
    #[inline]
    pub(super) fn after_sync_io(
        &mut self,
        now: u64,
        tl: &super::instance::Timeline,
        res: &mut super::instance::WorkerResult,
        src: &mut super::source::IoSource,
        stop: &AtomicBool,
        job: &str,
    ) -> bool {
        self.issued += 1;
        self.completed += 1;
        if self.think_due(now) {
            self.pause(src, stop, tl.deadline);
        }
        !tl.in_ramp && self.min_rate_failed(now, res, job)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn job() -> JobSpec {
        let mut j = JobSpec::default();
        j.timing.thinktime = Duration::from_millis(1);
        j
    }

    #[test]
    fn thinktime_blocks_and_iotime() {
        let mut j = job();
        let t = Think::new(&j, 0).unwrap();
        assert!(t.due(1, 0));
        j.timing.thinktime_blocks = Some(4);
        let mut t = Think::new(&j, 0).unwrap();
        assert!(!t.due(3, 0) && t.due(4, 0));
        t.pause(4, &AtomicBool::new(false), u64::MAX);
        assert!(!t.due(7, 0) && t.due(8, 0));
        // iotime without blocks: only time counts.
        j.timing.thinktime_blocks = None;
        j.timing.thinktime_iotime = Duration::from_secs(1);
        let t = Think::new(&j, 0).unwrap();
        assert!(!t.due(1000, 500_000_000));
        assert!(t.due(0, 1_001_000_000));
        j.timing.thinktime = Duration::ZERO;
        assert!(Think::new(&j, 0).is_none());
    }

    #[test]
    fn pause_takes_the_thinktime() {
        let mut t = Think::new(&job(), 0).unwrap();
        let ns = t.pause(1, &AtomicBool::new(false), u64::MAX);
        assert!(ns >= 1_000_000, "{ns}");
    }

    #[test]
    fn min_rate_after_settle_per_cycle() {
        let mut j = JobSpec::default();
        j.timing.rate_iops_min = [Some(100), None, None];
        let mut m = MinRate::new(&j, 0).unwrap();
        let s = 1_000_000_000u64;
        // Settling: no check.
        assert!(m.check(s, &[4096, 0, 0], &[1, 0, 0], "t").is_none());
        // First check only records.
        assert!(m.check(2 * s, &[40960, 0, 0], &[10, 0, 0], "t").is_none());
        // 150 I/Os in the next second: fine; then 50: fails, with fio's message.
        assert!(m
            .check(3 * s, &[160 * 4096, 0, 0], &[160, 0, 0], "t")
            .is_none());
        assert_eq!(
            m.check(4 * s, &[210 * 4096, 0, 0], &[210, 0, 0], "t")
                .as_deref(),
            Some("t: rate_iops_min=100 not met, got 50 IOPS")
        );
        assert!(MinRate::new(&JobSpec::default(), 0).is_none());
    }
}
