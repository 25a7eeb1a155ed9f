//! IO depth, submit and complete distributions (fio's `IO depths`, `submit`, `complete` lines;
//! JSON `iodepth_level`, `iodepth_submit`, `iodepth_complete`).
//!
//! Bucket rules, as fio 3.33 (`io_u_mark_depth`, `__io_u_mark_map` in io_u.c):
//! - level: the number of I/Os in flight *including the one being issued*, bucketed
//!   1 | 2–3 | 4–7 | 8–15 | 16–31 | 32–63 | ≥64, labelled 1, 2, 4, 8, 16, 32, >=64
//!   (a depth of 0 cannot happen; we count it as 1, fio would put it in >=64);
//! - submit / complete: I/Os per submit call / per reap call, bucketed
//!   0 | 1–4 | 5–8 | 9–16 | 17–32 | 33–64 | >64, labelled 0, 4, 8, 16, 32, 64, >=64.
//!   A sync engine submits and completes one I/O per call, so it shows `4=100.0%`.
//!
//! Percentages: level counts over the number of issued I/Os, submit/complete counts over the
//! number of calls; a non-empty bucket below 0.1 % shows 0.1 (fio's `stat_calc_dist` floor,
//! visible in its JSON, e.g. `"1": 0.1` at iodepth=16).
//!
//! **Deliberate difference from fio.** fio marks fsync/fdatasync issues in the level
//! histogram but divides by read+write+trim I/Os only, so `--ioengine=sync --fdatasync=1` shows
//! `IO depths: 1=200.0%`. iogauge counts a sync as an issued I/O in the numerator *and* the
//! denominator (the engine calls [`DepthCounters::on_issue`] for syncs too, and the total is the
//! sum of the level counters), so the same job shows `1=100.0%`.
//!
//! Hot path: each `on_*` is one branchy bucket computation and one array increment; no
//! allocation, lock or syscall.

use super::summary::DepthReport;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DepthCounters {
    level: [u64; 7],
    submit: [u64; 7],
    complete: [u64; 7],
}

#[inline(always)]
fn level_index(depth: u32) -> usize {
    match depth {
        0..=1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    }
}

#[inline(always)]
fn batch_index(nr: u32) -> usize {
    match nr {
        0 => 0,
        1..=4 => 1,
        5..=8 => 2,
        9..=16 => 3,
        17..=32 => 4,
        33..=64 => 5,
        _ => 6,
    }
}

fn percentages(counts: &[u64; 7]) -> [f64; 7] {
    let total: u64 = counts.iter().sum();
    let mut out = [0.0; 7];
    if total == 0 {
        return out;
    }
    for (o, &c) in out.iter_mut().zip(counts.iter()) {
        if c > 0 {
            *o = (100.0 * c as f64 / total as f64).max(0.1);
        }
    }
    out
}

impl DepthCounters {
    pub fn new() -> Self {
        Self::default()
    }

    /// One I/O (or sync) issued while `in_flight` I/Os, counting this one, are outstanding.
    #[inline]
    pub fn on_issue(&mut self, in_flight: u32) {
        self.level[level_index(in_flight)] += 1;
    }

    /// `n` I/Os issued at the same depth (e.g. one io_uring_enter with n SQEs).
    #[cfg(test)]
    fn on_issue_n(&mut self, in_flight: u32, n: u32) {
        self.level[level_index(in_flight)] += n as u64;
    }

    /// One submit call that handed `n` I/Os to the kernel.
    #[inline]
    pub fn on_submit(&mut self, n: u32) {
        self.submit[batch_index(n)] += 1;
    }

    /// One reap call that returned `n` completions.
    #[inline]
    pub fn on_complete(&mut self, n: u32) {
        self.complete[batch_index(n)] += 1;
    }

    pub fn reset(&mut self) {
        *self = Self::default();
    }

    pub fn merge(&mut self, other: &DepthCounters) {
        for i in 0..7 {
            self.level[i] += other.level[i];
            self.submit[i] += other.submit[i];
            self.complete[i] += other.complete[i];
        }
    }

    /// Raw counters (level, submit, complete).
    #[cfg(test)]
    fn counts(&self) -> (&[u64; 7], &[u64; 7], &[u64; 7]) {
        (&self.level, &self.submit, &self.complete)
    }

    pub fn report(&self) -> DepthReport {
        DepthReport {
            level: percentages(&self.level),
            submit: percentages(&self.submit),
            complete: percentages(&self.complete),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_edges() {
        let expect = [
            (0, 0),
            (1, 0),
            (2, 1),
            (3, 1),
            (4, 2),
            (7, 2),
            (8, 3),
            (15, 3),
            (16, 4),
            (31, 4),
            (32, 5),
            (63, 5),
            (64, 6),
            (1000, 6),
        ];
        for (d, i) in expect {
            assert_eq!(level_index(d), i, "depth {d}");
        }
    }

    #[test]
    fn batch_edges() {
        let expect = [
            (0, 0),
            (1, 1),
            (4, 1),
            (5, 2),
            (8, 2),
            (9, 3),
            (16, 3),
            (17, 4),
            (32, 4),
            (33, 5),
            (64, 5),
            (65, 6),
        ];
        for (n, i) in expect {
            assert_eq!(batch_index(n), i, "nr {n}");
        }
    }

    #[test]
    fn sync_engine_with_fdatasync_is_100_percent() {
        let mut d = DepthCounters::new();
        for _ in 0..911 {
            // write, then fdatasync: both are issued at depth 1, one per call
            for _ in 0..2 {
                d.on_issue(1);
                d.on_submit(1);
                d.on_complete(1);
            }
        }
        let r = d.report();
        assert_eq!(r.level, [100.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(r.submit, [0.0, 100.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(r.complete, [0.0, 100.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn ramp_up_floors_at_point_one() {
        // iodepth=16: the first 15 issues see depth 1..15, then always 16 (fio run2 shape).
        let mut d = DepthCounters::new();
        for depth in 1..=15 {
            d.on_issue(depth);
        }
        for _ in 0..100_000 {
            d.on_issue(16);
        }
        let r = d.report();
        assert_eq!(&r.level[..4], &[0.1, 0.1, 0.1, 0.1]);
        assert!(r.level[4] > 99.98 && r.level[4] < 100.0);
        assert_eq!(DepthCounters::new().report(), DepthReport::default());
    }

    #[test]
    fn merge_and_reset() {
        let mut a = DepthCounters::new();
        let mut b = DepthCounters::new();
        a.on_issue(1);
        b.on_issue_n(40, 3);
        b.on_submit(3);
        a.merge(&b);
        assert_eq!(a.counts().0, &[1, 0, 0, 0, 0, 3, 0]);
        assert_eq!(a.report().level[5], 75.0);
        a.reset();
        assert_eq!(a, DepthCounters::new());
    }
}
