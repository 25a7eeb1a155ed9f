//! Per-interval latency histograms: what each 100 ms of a run looked like, so that a percentile's
//! uncertainty can be estimated by resampling blocks of intervals (latencies within a run are
//! correlated: a bootstrap over single I/Os understates it) and charts can draw p50/p99 over time.
//!
//! Hot-path cost: one compare per I/O ([`IntervalLogs::due`]: completion time ≥ next boundary).
//! The recorders already keep cumulative histograms; when a boundary is crossed (rare), the
//! worker calls [`IntervalLogs::advance`], which stores, per recorder, the sparse difference
//! between its histogram now and a copy taken at the previous boundary (O(buckets) per interval,
//! an allocation per interval, nothing per I/O).
//!
//! The grid starts at the measurement start (after ramp_time), as the periodic samples do:
//! interval k covers completions in [k·len, (k+1)·len). Every interval is kept, empty ones too,
//! so position = index. The last, partial interval ends at the end of the measured period.
//! Memory is bounded: when a log would hold more than [`MAX_INTERVALS`], or the logs together
//! more than [`MAX_ENTRIES`] non-empty buckets, adjacent pairs are merged and the interval
//! length doubles (100 ms, 200 ms, 400 ms …). The entry bound is what keeps memory flat in run
//! length: longer intervals hold more distinct buckets each, so a count bound alone would let a
//! 1-hour run use several times the memory of a 1-minute one.

use super::histogram::{bucket_value, NBUCKETS};
use super::latency::LatRecorder;
use super::summary::{IntervalLatency, LatIntervals};
use std::borrow::Cow;

/// The first interval length: 100 ms.
pub(crate) const BASE_INTERVAL_NS: u64 = 100_000_000;
/// Most intervals a log holds; one more and pairs merge.
pub(crate) const MAX_INTERVALS: usize = 1024;
/// Most non-empty buckets all logs of a worker hold together (8 bytes each: 256 KiB); past
/// it, pairs merge at the next even interval count. A wide distribution (≈ 500 distinct
/// buckets per interval) still keeps ≥ 64 intervals for the block bootstrap.
pub(crate) const MAX_ENTRIES: usize = 32 << 10;

/// A non-empty bucket packed into one `u64`: bucket index in the top 16 bits, count in the low
/// 48 (half the memory of an `(index, count)` pair; 2^48 I/Os in one interval is out of reach).
const COUNT_BITS: u32 = 48;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
const _: () = assert!(NBUCKETS < 1 << (64 - COUNT_BITS));

fn pack(idx: usize, count: u64) -> u64 {
    ((idx as u64) << COUNT_BITS) | count.min(COUNT_MASK)
}

fn unpack(b: u64) -> (usize, u64) {
    ((b >> COUNT_BITS) as usize, b & COUNT_MASK)
}

/// One interval of one recorder.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Interval {
    /// End, ns since the measurement start: (k+1)·length, or the end of the measured period
    /// for the last, partial one.
    pub end_ns: u64,
    /// Non-empty buckets, ascending by index, packed (see [`pack`]).
    bins: Vec<u64>,
}

impl Interval {
    /// (bucket index, count) of the non-empty buckets, ascending.
    pub(crate) fn bins(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.bins.iter().map(|&b| unpack(b))
    }

    #[cfg(test)]
    fn count(&self) -> u64 {
        self.bins().map(|(_, c)| c).sum()
    }

    /// Adds `other`'s counts (a merge of two sorted sparse lists); the end is the later one.
    fn add(&mut self, other: &Interval) {
        self.end_ns = self.end_ns.max(other.end_ns);
        if other.bins.is_empty() {
            return;
        }
        if self.bins.is_empty() {
            self.bins = other.bins.clone();
            return;
        }
        let mut out = Vec::with_capacity(self.bins.len() + other.bins.len());
        let mine = std::mem::take(&mut self.bins);
        let (mut a, mut b) = (
            mine.iter().map(|&x| unpack(x)).peekable(),
            other.bins().peekable(),
        );
        loop {
            match (a.peek().copied(), b.peek().copied()) {
                (Some((i, x)), Some((j, y))) if i == j => {
                    out.push(pack(i, x + y));
                    a.next();
                    b.next();
                }
                (Some((i, x)), Some((j, _))) if i < j => {
                    out.push(pack(i, x));
                    a.next();
                }
                (_, Some((j, y))) => {
                    out.push(pack(j, y));
                    b.next();
                }
                (Some((i, x)), None) => {
                    out.push(pack(i, x));
                    a.next();
                }
                (None, None) => break,
            }
        }
        self.bins = out;
    }
}

/// Merges runs of `factor` consecutive intervals into one (factor 1: unchanged).
pub(crate) fn coarsen(intervals: &[Interval], factor: usize) -> Vec<Interval> {
    intervals
        .chunks(factor.max(1))
        .map(|c| {
            let mut m = Interval::default();
            c.iter().for_each(|i| m.add(i));
            m.bins.shrink_to_fit();
            m
        })
        .collect()
}

/// The intervals of one recorder and its cumulative counts at the last boundary.
/// `coarsen(intervals, 2)` without a second copy of the log: pair k is merged into slot k, one
/// pair at a time, so a long run's merge does not briefly need twice the log's memory (which the
/// allocator would then keep).
fn halve_in_place(intervals: &mut Vec<Interval>) {
    let n = intervals.len();
    for k in 0..n.div_ceil(2) {
        let mut m = std::mem::take(&mut intervals[2 * k]);
        if 2 * k + 1 < n {
            let other = std::mem::take(&mut intervals[2 * k + 1]);
            m.add(&other);
        }
        m.bins.shrink_to_fit();
        intervals[k] = m;
    }
    intervals.truncate(n.div_ceil(2));
}

#[derive(Debug, Clone, Default)]
struct Log {
    /// Counts at the last boundary; sized when measurement starts.
    prev: Vec<u64>,
    prev_total: u64,
    intervals: Vec<Interval>,
}

impl Log {
    /// Closes the interval ending at `end_ns`: what `rec` recorded since the last boundary.
    /// Returns the number of non-empty buckets it stored.
    fn close(&mut self, end_ns: u64, rec: &LatRecorder) -> usize {
        let mut iv = Interval {
            end_ns,
            bins: Vec::new(),
        };
        // Nothing new (an idle direction, a stall): skip the scan.
        if rec.count() != self.prev_total {
            self.prev_total = rec.count();
            for (i, (p, &c)) in self
                .prev
                .iter_mut()
                .zip(rec.histogram().counts())
                .enumerate()
            {
                if c != *p {
                    iv.bins.push(pack(i, c - *p));
                    *p = c;
                }
            }
            // Kept for the whole run: no spare capacity.
            iv.bins.shrink_to_fit();
        }
        let n = iv.bins.len();
        self.intervals.push(iv);
        n
    }
}

/// Per-interval histograms of a worker's recorders, all on one time grid.
#[derive(Debug, Clone)]
pub(crate) struct IntervalLogs {
    /// CLOCK_MONOTONIC ns of the next boundary; `u64::MAX` while not measuring (ramp,
    /// gtod_reduce, after the end), so the per-I/O compare never fires then.
    next_ns: u64,
    /// The measurement start (after ramp); interval k ends at origin + (k+1)·len.
    origin_ns: u64,
    len_ns: u64,
    /// Intervals closed so far (every log holds this many).
    closed: usize,
    /// Non-empty buckets stored by all logs together (bounded by [`MAX_ENTRIES`]).
    entries: usize,
    /// Measurement started and the logs are live.
    started: bool,
    logs: Vec<Log>,
}

impl IntervalLogs {
    /// Logs for `n` recorders, idle until [`IntervalLogs::start`].
    pub(crate) fn new(n: usize) -> Self {
        IntervalLogs {
            next_ns: u64::MAX,
            origin_ns: 0,
            len_ns: BASE_INTERVAL_NS,
            closed: 0,
            entries: 0,
            started: false,
            logs: vec![Log::default(); n],
        }
    }

    /// Measurement starts at `at` with empty recorders (the run's start or the end of the ramp):
    /// forget earlier intervals and start the grid there. Logs for no recorder (latency not
    /// measured) stay idle.
    pub(crate) fn start(&mut self, at: u64) {
        if self.logs.is_empty() {
            return;
        }
        for log in &mut self.logs {
            log.prev.clear();
            log.prev.resize(NBUCKETS, 0);
            log.prev_total = 0;
            log.intervals.clear();
        }
        self.origin_ns = at;
        self.len_ns = BASE_INTERVAL_NS;
        self.closed = 0;
        self.entries = 0;
        self.started = true;
        self.next_ns = at.saturating_add(BASE_INTERVAL_NS);
    }

    /// Hot path: does an I/O completing at `t` belong to a later interval than the open one?
    /// Call [`IntervalLogs::advance`] before recording it when it does.
    #[inline(always)]
    pub(crate) fn due(&self, t: u64) -> bool {
        t >= self.next_ns
    }

    /// Closes every interval that ended at or before `t`. `recs` are the recorders, in the
    /// order of the logs.
    #[cold]
    #[inline(never)]
    pub(crate) fn advance(&mut self, t: u64, recs: &[&LatRecorder]) {
        while t >= self.next_ns {
            if self.closed == MAX_INTERVALS
                || (self.entries > MAX_ENTRIES && self.closed.is_multiple_of(2) && self.closed > 1)
            {
                // The open interval now runs to the next boundary of the doubled grid.
                self.halve();
                continue;
            }
            let end = self.next_ns - self.origin_ns;
            for (log, rec) in self.logs.iter_mut().zip(recs) {
                self.entries += log.close(end, rec);
            }
            self.closed += 1;
            self.next_ns = self.boundary(self.closed + 1);
        }
    }

    /// The measured period ends at `end`: close the full intervals and the partial last one
    /// (unless the end falls on a boundary), then stop.
    pub(crate) fn finish(&mut self, end: u64, recs: &[&LatRecorder]) {
        if !self.started {
            return;
        }
        self.advance(end, recs);
        let open_start = self.boundary(self.closed);
        if end > open_start {
            if self.closed == MAX_INTERVALS {
                self.halve();
            }
            let end_ns = end - self.origin_ns;
            for (log, rec) in self.logs.iter_mut().zip(recs) {
                self.entries += log.close(end_ns, rec);
            }
            self.closed += 1;
        }
        self.next_ns = u64::MAX;
        for log in &mut self.logs {
            // The copies are only needed while recording.
            log.prev = Vec::new();
        }
    }

    fn boundary(&self, k: usize) -> u64 {
        self.origin_ns
            .saturating_add((k as u64).saturating_mul(self.len_ns))
    }

    /// Merges adjacent pairs and doubles the interval length (the count is even here).
    fn halve(&mut self) {
        self.entries = 0;
        for log in &mut self.logs {
            halve_in_place(&mut log.intervals);
            self.entries += log.intervals.iter().map(|i| i.bins.len()).sum::<usize>();
        }
        self.len_ns *= 2;
        self.closed = self.closed.div_ceil(2);
        self.next_ns = self.boundary(self.closed + 1);
    }

    /// Interval length in ns (100 ms doubled once per merge).
    pub(crate) fn len_ns(&self) -> u64 {
        self.len_ns
    }

    /// The intervals of recorder `i` (none when latency was not measured).
    pub(crate) fn intervals(&self, i: usize) -> &[Interval] {
        self.logs.get(i).map_or(&[], |l| &l.intervals)
    }
}

/// Which latency the direction's intervals hold: the one whose percentiles the JSON prints
/// (clat by default; lat when only lat_percentiles is on).
pub(crate) fn interval_latency(clat_percentiles: bool, lat_percentiles: bool) -> IntervalLatency {
    if !clat_percentiles && lat_percentiles {
        IntervalLatency::Lat
    } else {
        IntervalLatency::Clat
    }
}

/// Folds instances' intervals into one report (group_reporting): each instance is brought to the
/// coarsest interval length among them, then intervals with the same index add up. None when no
/// instance has intervals.
pub(crate) fn merge_intervals(
    parts: &[(u64, &[Interval])],
    latency: IntervalLatency,
) -> Option<LatIntervals> {
    let parts: Vec<_> = parts.iter().filter(|p| !p.1.is_empty()).collect();
    let len_ns = parts.iter().map(|p| p.0).max()?;
    // One instance (the usual case) is read where it is: copies of a long run's log would add
    // to the end-of-run peak memory.
    let acc: Cow<[Interval]> = match parts.as_slice() {
        [(_, ivs)] => Cow::Borrowed(ivs),
        _ => {
            let mut acc: Vec<Interval> = Vec::new();
            for &&(len, ivs) in &parts {
                // Lengths are 100 ms · 2^k, so the ratio is a whole power of two.
                let ivs = coarsen(ivs, (len_ns / len.max(1)) as usize);
                if acc.len() < ivs.len() {
                    acc.resize(ivs.len(), Interval::default());
                }
                for (a, i) in acc.iter_mut().zip(&ivs) {
                    a.add(i);
                }
            }
            Cow::Owned(acc)
        }
    };
    Some(LatIntervals {
        interval_ms: len_ns / 1_000_000,
        latency,
        intervals: acc
            .iter()
            .map(|i| {
                (
                    i.end_ns.div_ceil(1_000_000),
                    i.bins().map(|(b, c)| (bucket_value(b), c)).collect(),
                )
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::histogram::bucket_index;

    const MS: u64 = 1_000_000;

    /// One recorder driven by a synthetic clock: `per_interval` I/Os of latency `lat(k)` evenly
    /// spread over each 100 ms, for `intervals` intervals, starting at `t0`.
    fn drive(
        logs: &mut IntervalLogs,
        rec: &mut LatRecorder,
        t0: u64,
        intervals: u64,
        per_interval: u64,
    ) -> u64 {
        let step = BASE_INTERVAL_NS / per_interval;
        let mut t = t0;
        for k in 0..intervals {
            for _ in 0..per_interval {
                if logs.due(t) {
                    logs.advance(t, &[rec]);
                }
                rec.record(1000 + k % 7 * 100);
                t += step;
            }
        }
        t
    }

    #[test]
    fn halving_in_place_equals_coarsening_by_two() {
        for n in [0usize, 1, 2, 5, 8] {
            let ivs: Vec<Interval> = (0..n)
                .map(|k| Interval {
                    end_ns: (k as u64 + 1) * BASE_INTERVAL_NS,
                    bins: (0..k % 3 + 1)
                        .map(|b| pack(b * 7 + k, b as u64 + 1))
                        .collect(),
                })
                .collect();
            let want = coarsen(&ivs, 2);
            let mut got = ivs.clone();
            halve_in_place(&mut got);
            assert_eq!(got, want, "{n} intervals");
        }
    }

    #[test]
    fn intervals_split_counts_on_the_grid() {
        let t0 = 5_000 * MS;
        let mut logs = IntervalLogs::new(1);
        let mut rec = LatRecorder::new(0);
        logs.start(t0);
        let end = drive(&mut logs, &mut rec, t0, 10, 50);
        // The last I/O was at end − step; the job ends 30 ms into the 11th interval.
        logs.finish(end + 30 * MS, &[&rec]);
        let iv = logs.intervals(0);
        assert_eq!(iv.len(), 11);
        for (k, i) in iv.iter().take(10).enumerate() {
            assert_eq!(i.end_ns, (k as u64 + 1) * BASE_INTERVAL_NS);
            assert_eq!(i.count(), 50);
            let (b, _) = i.bins().next().unwrap();
            assert_eq!(b, bucket_index(1000 + k as u64 % 7 * 100));
        }
        // The partial last one: empty, ending 30 ms after the 10th boundary.
        assert_eq!(iv[10].end_ns, 1030 * MS);
        assert_eq!(iv[10].count(), 0);
        let m = merge_intervals(&[(logs.len_ns(), iv)], IntervalLatency::Clat).unwrap();
        assert_eq!(m.interval_ms, 100);
        assert_eq!(m.intervals[0].0, 100);
        // 1000 ns falls in the 4 ns wide bucket [1000, 1004).
        assert_eq!(m.intervals[0].1, vec![(1002, 50)]);
        assert_eq!(m.intervals[10], (1030, vec![]));
    }

    #[test]
    fn an_end_on_a_boundary_adds_no_empty_interval_and_stalls_stay_visible() {
        let mut logs = IntervalLogs::new(1);
        let mut rec = LatRecorder::new(0);
        logs.start(0);
        rec.record(10);
        // Nothing for 350 ms, then one I/O.
        let t = 350 * MS;
        assert!(logs.due(t));
        logs.advance(t, &[&rec]);
        rec.record(20);
        logs.finish(400 * MS, &[&rec]);
        let counts: Vec<u64> = logs.intervals(0).iter().map(Interval::count).collect();
        assert_eq!(counts, vec![1, 0, 0, 1]);
        assert!(!logs.due(u64::MAX - 1), "idle after finish");
    }

    #[test]
    fn many_buckets_per_interval_merge_pairs_and_memory_stays_bounded() {
        // 600 distinct buckets every 100 ms (a wide distribution): the entry bound, not the
        // interval count, decides; a 1-minute and a 1-hour run hold about as many buckets.
        let run = |intervals: u64| {
            let mut logs = IntervalLogs::new(1);
            let mut rec = LatRecorder::new(0);
            logs.start(0);
            let mut t = 0;
            for _ in 0..intervals {
                for j in 0..600u64 {
                    if logs.due(t) {
                        logs.advance(t, &[&rec]);
                    }
                    // 600 values 1 % apart from 10 µs: one bucket each.
                    rec.record(10_000 + j * 100 + j * j);
                    t += BASE_INTERVAL_NS / 600;
                }
            }
            logs.finish(t, &[&rec]);
            let total: usize = logs.intervals(0).iter().map(|i| i.bins.len()).sum();
            let count: u64 = logs.intervals(0).iter().map(Interval::count).sum();
            assert_eq!(count, intervals * 600);
            assert!(logs
                .intervals(0)
                .iter()
                .all(|i| i.bins.capacity() == i.bins.len()));
            (total, logs.len_ns(), logs.intervals(0).len())
        };
        let (minute, len_1m, n_1m) = run(600);
        let (hour, len_1h, n_1h) = run(36_000);
        for (total, len, n) in [(minute, len_1m, n_1m), (hour, len_1h, n_1h)] {
            assert!(total <= MAX_ENTRIES + 1200, "{total} buckets");
            assert!(total > MAX_ENTRIES / 4, "{total} buckets");
            assert!(n >= MAX_ENTRIES / 600 / 4, "{n} intervals of {len} ns");
        }
        assert!(len_1h > len_1m);
    }

    #[test]
    fn over_1024_intervals_pairs_merge_and_counts_are_kept() {
        let mut logs = IntervalLogs::new(2);
        let mut rec = LatRecorder::new(0);
        let idle = LatRecorder::new(0);
        logs.start(0);
        // 1500 intervals of 3 I/Os each.
        for k in 0..1500 {
            for j in 0..3 {
                let t = k * BASE_INTERVAL_NS + j * (BASE_INTERVAL_NS / 3);
                if logs.due(t) {
                    logs.advance(t, &[&rec, &idle]);
                }
                rec.record(100 + j);
            }
        }
        logs.finish(1500 * BASE_INTERVAL_NS, &[&rec, &idle]);
        let iv = logs.intervals(0);
        assert_eq!(logs.len_ns(), 2 * BASE_INTERVAL_NS);
        assert!(iv.len() <= MAX_INTERVALS);
        assert_eq!(iv.iter().map(Interval::count).sum::<u64>(), 4500);
        assert_eq!(logs.intervals(1).len(), iv.len());
        // Every full 200 ms interval holds two 100 ms ones: 6 I/Os, ending on the new grid.
        for (k, i) in iv.iter().enumerate().take(iv.len() - 1) {
            assert_eq!(i.count(), 6, "interval {k}");
            assert_eq!(i.end_ns, (k as u64 + 1) * 2 * BASE_INTERVAL_NS);
            // Three one-value buckets (100, 101, 102), counts added pairwise.
            assert_eq!(i.bins().collect::<Vec<_>>().len(), 3);
        }
        assert!(iv.windows(2).all(|w| w[0].end_ns < w[1].end_ns));
    }

    #[test]
    fn an_hour_stays_within_1024_intervals() {
        let mut logs = IntervalLogs::new(1);
        let mut rec = LatRecorder::new(0);
        logs.start(7);
        // One I/O per 50 ms for an hour.
        let hour = 3_600_000 * MS;
        let mut t = 7;
        let mut n = 0u64;
        while t < 7 + hour {
            if logs.due(t) {
                logs.advance(t, &[&rec]);
            }
            rec.record(1 + n % 5000);
            n += 1;
            t += 50 * MS;
        }
        logs.finish(7 + hour, &[&rec]);
        let iv = logs.intervals(0);
        assert!(iv.len() <= MAX_INTERVALS, "{}", iv.len());
        // 36,000 intervals of 100 ms → 100 ms · 64 = 6.4 s: 563 intervals of at most 1024.
        assert_eq!(logs.len_ns(), 64 * BASE_INTERVAL_NS);
        assert_eq!(iv.len(), 563);
        assert_eq!(iv.iter().map(Interval::count).sum::<u64>(), n);
        assert_eq!(iv.last().unwrap().end_ns, hour);
    }

    #[test]
    fn members_merge_at_the_coarser_length() {
        let iv = |end_ns: u64, idx: usize, c: u64| Interval {
            end_ns,
            bins: vec![pack(idx, c)],
        };
        let fine: Vec<Interval> = (1..=5).map(|k| iv(k * 100 * MS, 300, 1)).collect();
        let coarse = vec![iv(200 * MS, 301, 10), iv(330 * MS, 300, 5)];
        let m = merge_intervals(
            &[(100 * MS, &fine), (200 * MS, &coarse), (100 * MS, &[])],
            IntervalLatency::Lat,
        )
        .unwrap();
        assert_eq!(m.interval_ms, 200);
        assert_eq!(m.latency, IntervalLatency::Lat);
        let (v300, v301) = (bucket_value(300), bucket_value(301));
        assert_eq!(
            m.intervals,
            vec![
                (200, vec![(v300, 2), (v301, 10)]),
                (400, vec![(v300, 7)]),
                (500, vec![(v300, 1)]),
            ]
        );
        assert!(merge_intervals(&[(100 * MS, &[])], IntervalLatency::Clat).is_none());
    }

    #[test]
    fn idle_until_started() {
        let mut logs = IntervalLogs::new(1);
        let rec = LatRecorder::new(0);
        assert!(!logs.due(u64::MAX - 1));
        logs.finish(1_000 * MS, &[&rec]);
        assert!(logs.intervals(0).is_empty());
    }
}
