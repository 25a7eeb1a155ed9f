//! The load budget (`--max-busy`): what the canary's probes cost the disk, from the disk's own
//! busy-time counter (`io_ticks` in /sys/block/DEV/stat), and how the canary stays under it:
//! first by shrinking its probe (down to a tenth), then by stretching its interval.
//!
//! A probe's busy time is the counter's growth while it ran, so another process's I/O in that
//! time counts against the canary too: the share stated is an upper bound on the canary's own.
//! Without a counter (tmpfs, an overlay without a disk) a probe's whole wall time counts.

use std::collections::VecDeque;
use std::time::{Duration, SystemTime};

/// The probe never shrinks below this share of its normal size (etcd: about 250 fdatasyncs):
/// an hour's window of smaller probes would hold too few for a p99 decided at 99.9 % (over
/// 750 with none slow); past it the interval stretches instead.
pub(crate) const MIN_SCALE: f64 = 0.5;

/// The canary's budget and what it used.
#[derive(Debug)]
pub(crate) struct Budget {
    /// `--max-busy` as a ratio.
    pub max: f64,
    every: Duration,
    window: Duration,
    /// The probe's size factor (1 = normal).
    pub scale: f64,
    /// The interval in use.
    pub interval: Duration,
    /// (end of a cycle, busy time during its probes).
    cycles: VecDeque<(SystemTime, Duration)>,
    started: SystemTime,
}

impl Budget {
    pub(crate) fn new(max: f64, every: Duration, window: Duration, started: SystemTime) -> Self {
        Budget {
            max,
            every,
            window,
            scale: 1.0,
            interval: every,
            cycles: VecDeque::new(),
            started,
        }
    }

    /// Records a cycle's busy time and sets the next cycle's scale and interval: a cycle that
    /// alone would exceed the budget at `--every` shrinks the probe in proportion (with a
    /// tenth to spare); at the smallest probe the interval stretches to what the budget
    /// allows. A cycle well under budget lets the probe grow back, and the interval return.
    pub(crate) fn record(&mut self, at: SystemTime, busy: Duration) {
        self.cycles.push_back((at, busy));
        while self
            .cycles
            .front()
            .is_some_and(|(t, _)| at.duration_since(*t).unwrap_or_default() > self.window)
        {
            self.cycles.pop_front();
        }
        if self.max <= 0.0 {
            return;
        }
        let allowed = self.every.as_secs_f64() * self.max;
        let used = busy.as_secs_f64();
        let ran_at = self.scale;
        if used > allowed {
            // Busy time scales about linearly with the probe's size.
            self.scale = (self.scale * allowed / used * 0.9).clamp(MIN_SCALE, 1.0);
        } else if used < allowed / 2.0 && self.scale < 1.0 {
            self.scale = (self.scale * 1.5).min(1.0);
        }
        // What the next probe will likely take at its new scale, spread over the interval.
        let expected = used * self.scale / ran_at;
        // Never longer than the window: a window without a probe judges nothing.
        let needed = Duration::try_from_secs_f64(expected / self.max).unwrap_or(self.window);
        self.interval = self.every.max(needed.min(self.window));
    }

    /// Busy time over wall time since the window's start (or the canary's, if later), and at
    /// least one interval: the first probe alone is not a 100 % share.
    pub(crate) fn share(&self, now: SystemTime) -> f64 {
        let busy: f64 = self.cycles.iter().map(|(_, b)| b.as_secs_f64()).sum();
        let since = now
            .duration_since(self.started)
            .unwrap_or_default()
            .min(self.window)
            .max(self.interval)
            .as_secs_f64();
        if since > 0.0 {
            busy / since
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: f64) -> Duration {
        Duration::from_secs_f64(v)
    }

    #[test]
    fn under_budget_nothing_changes() {
        let t0 = SystemTime::UNIX_EPOCH + s(1e6);
        let mut b = Budget::new(0.01, s(300.0), s(3600.0), t0);
        b.record(t0 + s(300.0), s(1.0));
        assert_eq!((b.scale, b.interval), (1.0, s(300.0)));
        // 1 s busy in 300 s of wall time; the first probe alone counts over one interval.
        assert!((b.share(t0 + s(300.0)) - 1.0 / 300.0).abs() < 1e-9);
        assert!((b.share(t0 + s(1.0)) - 1.0 / 300.0).abs() < 1e-9);
    }

    #[test]
    fn over_budget_the_probe_shrinks_then_the_interval_stretches() {
        let t0 = SystemTime::UNIX_EPOCH + s(1e6);
        // 1 % of 100 s is 1 s; a probe took 4 s of disk time: 0.225 is below the smallest
        // probe, which at 2 s of disk time needs 200 s.
        let mut b = Budget::new(0.01, s(100.0), s(3600.0), t0);
        b.record(t0 + s(100.0), s(4.0));
        assert_eq!(b.scale, MIN_SCALE);
        assert!(
            (b.interval.as_secs_f64() - 200.0).abs() < 1e-6,
            "{:?}",
            b.interval
        );
        // A probe a little over: it shrinks, and --every stays.
        let mut b = Budget::new(0.01, s(100.0), s(3600.0), t0);
        b.record(t0 + s(100.0), s(1.2));
        assert!((b.scale - 0.75).abs() < 1e-9, "{}", b.scale);
        assert_eq!(b.interval, s(100.0));
        // A disk so slow that the smallest probe needs longer than the window: the window.
        b.record(t0 + s(200.0), s(500.0));
        assert_eq!(b.scale, MIN_SCALE);
        assert_eq!(b.interval, s(3600.0));
    }

    #[test]
    fn the_smallest_budget_never_overflows() {
        let t0 = SystemTime::UNIX_EPOCH + s(1e6);
        let mut b = Budget::new(1e-4, s(1.0), s(60.0), t0);
        b.record(t0 + s(1.0), s(1e9));
        assert_eq!(b.interval, s(60.0));
        assert!(b.share(t0 + s(1.0)).is_finite());
    }

    #[test]
    fn well_under_budget_the_probe_grows_back() {
        let t0 = SystemTime::UNIX_EPOCH + s(1e6);
        let mut b = Budget::new(0.01, s(100.0), s(3600.0), t0);
        b.record(t0 + s(100.0), s(10.0));
        assert_eq!(b.scale, MIN_SCALE);
        b.record(t0 + s(200.0), s(0.1));
        assert!((b.scale - 0.75).abs() < 1e-9);
        assert_eq!(b.interval, s(100.0));
    }

    #[test]
    fn the_share_forgets_cycles_older_than_the_window() {
        let t0 = SystemTime::UNIX_EPOCH + s(1e6);
        let mut b = Budget::new(0.5, s(10.0), s(100.0), t0);
        b.record(t0 + s(10.0), s(4.0));
        b.record(t0 + s(150.0), s(1.0));
        // Only the second cycle is inside the last 100 s.
        assert!((b.share(t0 + s(150.0)) - 0.01).abs() < 1e-9);
    }
}
