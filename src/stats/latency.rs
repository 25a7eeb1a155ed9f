//! The latency recorder: exact min/max/mean/stddev, exact percentiles while the samples fit a
//! preallocated budget, histogram percentiles (≤ 0.5 % relative error) beyond it.
//!
//! `record` is on the I/O hot path. It does no allocation (the sample buffer is allocated with
//! `Vec::with_capacity` in `new` and a push never exceeds it), takes no lock and makes no
//! syscall: a few integer adds, one 64×64→128 multiply, two compares, a histogram index
//! (leading-zeros + shift) and a table lookup for fio's coarse buckets.

use super::buckets::{lat_bucket_index, NLAT_BUCKETS};
use super::histogram::Histogram;
use super::summary::{LatSummary, PercentileMethod};
use std::borrow::Cow;

/// Samples kept per recorder for exact percentiles: 2^17 = 131,072 values of 4 bytes (u32 ns,
/// up to 4.29 s) = 512 KiB per recorder, touched only as samples arrive.
///
/// Why this size: it keeps the latency-critical recipes exact (the etcd recipe is ~10 k
/// fdatasyncs; a 60 s fdatasync run at 2,000 syncs/s is 120 k) while anything longer or faster
/// falls back to the log-linear histogram (≤ 0.39 % relative error, see `histogram.rs`), so a
/// 1-hour run and a 10-second run use the same memory: at most 512 KiB per recorder that
/// receives samples (clat per direction, and lat and slat only when their percentiles are
/// reported). A sample above `u32::MAX` ns (4.29 s) is not kept, which makes the recorder
/// non-exact: its percentiles then come from the histogram too. With many jobs the
/// orchestrator splits a global budget with [`sample_budget_for`].
pub(crate) const DEFAULT_SAMPLE_BUDGET: usize = 1 << 17;

/// Total bytes of exact samples the whole run should keep at most (64 MiB).
pub(crate) const TOTAL_SAMPLE_MEMORY: usize = 64 << 20;

/// Per-recorder sample budget when `recorders` recorders share [`TOTAL_SAMPLE_MEMORY`],
/// capped at [`DEFAULT_SAMPLE_BUDGET`].
pub(crate) fn sample_budget_for(recorders: usize) -> usize {
    let per = TOTAL_SAMPLE_MEMORY / std::mem::size_of::<u32>() / recorders.max(1);
    per.min(DEFAULT_SAMPLE_BUDGET)
}

#[derive(Debug)]
pub struct LatRecorder {
    count: u64,
    min: u64,
    max: u64,
    /// Exact Σx and Σx² (u128 cannot overflow for any realistic run: 10^10 samples of 1 h).
    sum: u128,
    sum_sq: u128,
    /// Configured budget (restored by `reset`).
    budget: usize,
    /// Current push limit: `budget`, or 0 after merging in a non-exact recorder.
    limit: usize,
    /// Exact samples in ns; a value above `u32::MAX` is not kept (the recorder is then not exact).
    samples: Vec<u32>,
    hist: Histogram,
    lat_buckets: [u64; NLAT_BUCKETS],
}

/// Manual `Clone`: a derived clone would shrink the sample buffer's capacity to its length,
/// and the next `record` on the clone would then reallocate on the hot path.
impl Clone for LatRecorder {
    fn clone(&self) -> Self {
        let mut samples = Vec::with_capacity(self.budget.max(self.samples.len()));
        samples.extend_from_slice(&self.samples);
        LatRecorder {
            samples,
            hist: self.hist.clone(),
            ..*self
        }
    }
}

impl LatRecorder {
    /// Allocates everything the recorder will ever need on the hot path.
    pub fn new(sample_budget: usize) -> Self {
        LatRecorder {
            count: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
            sum_sq: 0,
            budget: sample_budget,
            limit: sample_budget,
            samples: Vec::with_capacity(sample_budget),
            hist: Histogram::new(),
            lat_buckets: [0; NLAT_BUCKETS],
        }
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.count += 1;
        self.sum += ns as u128;
        self.sum_sq += (ns as u128) * (ns as u128);
        if ns < self.min {
            self.min = ns;
        }
        if ns > self.max {
            self.max = ns;
        }
        // len < limit ≤ capacity: this push never reallocates. A value that does not fit u32
        // (> 4.29 s) is skipped, so len < count and the recorder is no longer exact.
        if self.samples.len() < self.limit && ns <= u32::MAX as u64 {
            self.samples.push(ns as u32);
        }
        self.hist.record(ns);
        self.lat_buckets[lat_bucket_index(ns)] += 1;
    }

    /// Forget everything (end of ramp_time), keeping the allocations.
    pub fn reset(&mut self) {
        self.count = 0;
        self.min = u64::MAX;
        self.max = 0;
        self.sum = 0;
        self.sum_sq = 0;
        self.limit = self.budget;
        self.samples.clear();
        self.hist.reset();
        self.lat_buckets = [0; NLAT_BUCKETS];
    }

    /// Become a copy of `other`'s counts, extremes, sums and histogram, without its samples (so
    /// percentiles come from the histogram), reusing this recorder's allocations: the
    /// `--status-interval` snapshot a worker leaves at a 100 ms boundary.
    pub(crate) fn copy_stats_from(&mut self, other: &LatRecorder) {
        self.count = other.count;
        self.min = other.min;
        self.max = other.max;
        self.sum = other.sum;
        self.sum_sq = other.sum_sq;
        self.samples.clear();
        self.limit = 0;
        self.hist.copy_from(&other.hist);
        self.lat_buckets = other.lat_buckets;
    }

    /// Fold `other` into `self` (group reporting). Stays exact iff both sides are exact; the
    /// merged sample buffer may then exceed the budget, which is fine outside the hot path.
    pub fn merge(&mut self, other: &LatRecorder) {
        if other.count == 0 {
            return;
        }
        let exact = self.is_exact() && other.is_exact();
        self.count += other.count;
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        if exact {
            self.samples.extend_from_slice(&other.samples);
        } else {
            self.samples.clear();
            self.limit = 0;
        }
        self.hist.merge(&other.hist);
        for (a, b) in self.lat_buckets.iter_mut().zip(other.lat_buckets.iter()) {
            *a += *b;
        }
    }

    /// Sorts the exact samples in place (their order carries no meaning), so that percentiles
    /// need no copy of them. Not on the hot path: after the run.
    pub(crate) fn sort_samples(&mut self) {
        self.samples.sort_unstable();
    }

    /// Latencies recorded.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// The cumulative histogram (per-interval logs take differences of it).
    pub(crate) fn histogram(&self) -> &Histogram {
        &self.hist
    }

    /// All samples are kept, so percentiles are exact.
    pub fn is_exact(&self) -> bool {
        self.samples.len() as u64 == self.count
    }

    /// Counters for fio's `lat (usec): …` buckets (see `buckets.rs`).
    pub fn lat_bucket_counts(&self) -> &[u64; NLAT_BUCKETS] {
        &self.lat_buckets
    }

    pub fn min(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.min
        }
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// Sample standard deviation (n − 1), from the exact sums: S = Σx² − (Σx)²/n is computed in
    /// integers (with the remainder of the division kept as a fraction), so there is no
    /// cancellation; only the final division and square root are floating point.
    pub fn stddev(&self) -> f64 {
        if self.count < 2 {
            return 0.0;
        }
        let n = self.count as u128;
        let q = self.sum / n;
        let r = self.sum % n;
        // (Σx)²/n = Σx·q + Σx·r/n
        let exact = self
            .sum
            .checked_mul(q)
            .and_then(|a| self.sum.checked_mul(r).map(|b| (a, b)))
            .and_then(|(a, b)| {
                let whole = self.sum_sq.checked_sub(a)?.checked_sub(b / n)?;
                Some(whole as f64 - (b % n) as f64 / n as f64)
            });
        let s = match exact {
            Some(s) => s,
            // Unreachable for realistic data; fall back to floating point.
            None => {
                let mean = self.sum as f64 / self.count as f64;
                self.sum_sq as f64 - mean * self.sum as f64
            }
        };
        (s.max(0.0) / (self.count - 1) as f64).sqrt()
    }

    /// Summarise. `percentiles` are in percent (99.9 = p99.9), reported in the given order.
    /// Percentile rule: fio's ([`fio_rank`]). Exact recorders report the sample at that rank;
    /// others the midpoint of the histogram bucket holding that rank, clamped into [min, max]
    /// (so, unlike fio, never above the true max).
    pub fn summary(
        &self,
        percentiles: &[f64],
        with_percentiles: bool,
        with_bins: bool,
    ) -> LatSummary {
        if self.count == 0 {
            return LatSummary::default();
        }
        let mut s = LatSummary {
            n: self.count,
            min: self.min(),
            max: self.max,
            mean: self.mean(),
            stddev: self.stddev(),
            ..LatSummary::default()
        };
        if with_percentiles && !percentiles.is_empty() {
            let ranks: Vec<u64> = percentiles
                .iter()
                .map(|&p| fio_rank(p, self.count))
                .collect();
            let values = if self.is_exact() {
                s.method = Some(PercentileMethod::Exact);
                // A recorder sorted at the end of its run (`sort_samples`) is read in place; a
                // copy of up to the whole budget would raise the run's peak memory.
                let sorted: Cow<[u32]> = if self.samples.is_sorted() {
                    Cow::Borrowed(&self.samples)
                } else {
                    let mut v = self.samples.clone();
                    v.sort_unstable();
                    Cow::Owned(v)
                };
                ranks
                    .iter()
                    .map(|&r| u64::from(sorted[(r - 1) as usize]))
                    .collect::<Vec<_>>()
            } else {
                s.method = Some(PercentileMethod::Histogram);
                // One ascending pass over the buckets, then back to the caller's order.
                let mut order: Vec<usize> = (0..ranks.len()).collect();
                order.sort_by_key(|&i| ranks[i]);
                let sorted_ranks: Vec<u64> = order.iter().map(|&i| ranks[i]).collect();
                let vals = self.hist.values_at_ranks(&sorted_ranks);
                let mut out = vec![0u64; ranks.len()];
                for (k, &i) in order.iter().enumerate() {
                    out[i] = vals[k].clamp(s.min, s.max);
                }
                out
            };
            s.percentiles = percentiles.iter().copied().zip(values).collect();
        }
        if with_bins {
            s.bins = self.hist.bins();
        }
        s
    }
}

/// The 1-based rank of percentile `p` (in percent) among `n` sorted values, by fio's rule: the
/// smallest rank whose cumulative count reaches p/100·n, clamped to 1..=n (p ≤ 0 → 1, p ≥ 100 →
/// n; n = 0 → 0). Every percentile iogauge reports, charts or compares is ranked here.
///
/// fio 3.33 (stat.c `calc_clat_percentiles`) compares `sum >= (long double)p / 100.0 * nr`: the
/// binary value of `p`, divided and multiplied in x86-64's 80-bit `long double` (a 64-bit
/// significand), each step rounded to nearest. This computes the same threshold exactly, in
/// integers, so that the ranks are fio's to the last one: 99.9 is stored as
/// 99.900000000000005684…, so p99.9 of 1,000 values is the 1,000th (fio prints the maximum's
/// bucket there; checked against its per-I/O latency log), and p30 of 100,000 is the 30,001st
/// (0.3 rounds up in 80 bits). A decimal rule would differ from fio at exactly such boundaries.
pub fn fio_rank(p: f64, n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    // Also NaN, which percentile lists never hold (they are validated when parsed).
    if p.is_nan() || p <= 0.0 {
        return 1;
    }
    if p >= 100.0 {
        return n;
    }
    // p = m · 2^-s exactly, m normalized to 53 bits (a subnormal p shifted up).
    let bits = p.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let frac = u128::from(bits & ((1u64 << 52) - 1));
    let (mut m, mut s) = if biased == 0 {
        (frac, 1074i64)
    } else {
        (frac | (1u128 << 52), 1075 - biased)
    };
    while m < 1 << 52 {
        m <<= 1;
        s += 1;
    }
    // q = p / 100 rounded to a 64-bit significand: Q · 2^-(s+k), 2^63 ≤ Q < 2^64.
    let mut k = 18i64;
    if (m << k) / 100 >= 1 << 64 {
        k = 17;
    }
    let (mut q, r) = ((m << k) / 100, (m << k) % 100);
    if 2 * r > 100 || (2 * r == 100 && q & 1 == 1) {
        q += 1;
    }
    if q == 1 << 64 {
        q = 1 << 63;
        k -= 1;
    }
    // t = q · n rounded to a 64-bit significand: T · 2^-e.
    let prod = q * u128::from(n);
    let len = 128 - i64::from(prod.leading_zeros());
    let (mut t, mut shift) = (prod, 0i64);
    if len > 64 {
        shift = len - 64;
        t = prod >> shift;
        let rem = prod & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        if rem > half || (rem == half && t & 1 == 1) {
            t += 1;
        }
        if t == 1 << 64 {
            t = 1 << 63;
            shift += 1;
        }
    }
    let e = s + k - shift;
    // The smallest integer ≥ T · 2^-e. T < 2^64, so past e = 64 the threshold is below 1.
    let rank = match e {
        ..=0 => t.checked_shl((-e) as u32).unwrap_or(u128::MAX),
        1..=63 => t.div_ceil(1u128 << e),
        _ => 1,
    };
    let rank = u64::try_from(rank).unwrap_or(u64::MAX);
    rank.clamp(1, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PCTS: [f64; 17] = [
        1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
        99.95, 99.99,
    ];

    /// Small deterministic PRNG (xorshift64*), so tests need no extra crate.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        /// Log-uniform-ish latency between 100 ns and ~100 ms.
        fn latency(&mut self) -> u64 {
            let e = 7 + self.next() % 20;
            let base = 1u64 << e;
            base + self.next() % base
        }
    }

    /// The sample at fio's rank (checked on its own in `ranks_are_fios_at_the_boundaries`).
    fn brute(samples: &[u64], p: f64) -> u64 {
        let mut v = samples.to_vec();
        v.sort_unstable();
        v[(fio_rank(p, v.len() as u64) - 1) as usize]
    }

    fn brute_stats(samples: &[u64]) -> (f64, f64) {
        let n = samples.len() as f64;
        let mean = samples.iter().map(|&x| x as f64).sum::<f64>() / n;
        let var = samples
            .iter()
            .map(|&x| (x as f64 - mean).powi(2))
            .sum::<f64>()
            / (n - 1.0);
        (mean, var.sqrt())
    }

    #[test]
    fn empty_is_all_zero() {
        let r = LatRecorder::new(10);
        assert_eq!(r.summary(&PCTS, true, true), LatSummary::default());
        assert!(r.is_exact());
        assert_eq!(r.count(), 0);
    }

    #[test]
    fn sorting_in_place_keeps_every_number_and_a_later_record_is_still_counted() {
        let mut rng = Rng(7);
        let mut vals: Vec<u64> = (0..4_000).map(|_| rng.latency()).collect();
        let mut r = LatRecorder::new(5_000);
        vals.iter().for_each(|&x| r.record(x));
        let before = r.summary(&PCTS, true, true);
        r.sort_samples();
        assert_eq!(r.summary(&PCTS, true, true), before);
        // Unsorted again after a record: summary must sort a copy, not trust the order.
        r.record(1);
        vals.push(1);
        let after = r.summary(&PCTS, true, true);
        assert_eq!((after.n, after.min), (4_001, 1));
        for &(p, v) in &after.percentiles {
            assert_eq!(v, brute(&vals, p), "p{p}");
        }
    }

    #[test]
    fn exact_percentiles_match_brute_force() {
        let mut rng = Rng(42);
        let samples: Vec<u64> = (0..10_001).map(|_| rng.latency()).collect();
        let mut r = LatRecorder::new(20_000);
        samples.iter().for_each(|&x| r.record(x));
        assert!(r.is_exact());
        let s = r.summary(&PCTS, true, false);
        assert_eq!(s.method, Some(PercentileMethod::Exact));
        for &(p, v) in &s.percentiles {
            assert_eq!(v, brute(&samples, p), "p{p}");
        }
        let (mean, sd) = brute_stats(&samples);
        assert_eq!(s.min, *samples.iter().min().unwrap());
        assert_eq!(s.max, *samples.iter().max().unwrap());
        assert!((s.mean - mean).abs() / mean < 1e-12);
        assert!((s.stddev - sd).abs() / sd < 1e-9);
        assert!(s.bins.is_empty());
    }

    #[test]
    fn histogram_percentiles_within_bound_and_ordered() {
        let mut rng = Rng(7);
        let samples: Vec<u64> = (0..50_000).map(|_| rng.latency()).collect();
        let mut r = LatRecorder::new(1000);
        samples.iter().for_each(|&x| r.record(x));
        assert!(!r.is_exact());
        let s = r.summary(&PCTS, true, true);
        assert_eq!(s.method, Some(PercentileMethod::Histogram));
        let mut prev = 0;
        for &(p, v) in &s.percentiles {
            let truth = brute(&samples, p) as f64;
            assert!(
                (v as f64 - truth).abs() / truth <= 0.005,
                "p{p}: {v} vs {truth}"
            );
            assert!(v >= prev && v >= s.min && v <= s.max);
            prev = v;
        }
        assert_eq!(s.bins.iter().map(|b| b.1).sum::<u64>(), 50_000);
        assert!(s.bins.windows(2).all(|w| w[0].0 < w[1].0));
        // mean/stddev stay exact in histogram mode
        let (mean, sd) = brute_stats(&samples);
        assert!((s.mean - mean).abs() / mean < 1e-12);
        assert!((s.stddev - sd).abs() / sd < 1e-9);
    }

    #[test]
    fn histogram_percentile_never_exceeds_max() {
        let mut r = LatRecorder::new(0);
        // 1,000,001 ns sits low in a 4096 ns-wide bucket: the midpoint is above the max.
        for _ in 0..10 {
            r.record(1_000_001);
        }
        let s = r.summary(&[50.0, 100.0], true, false);
        assert!(s.percentiles.iter().all(|&(_, v)| v == 1_000_001));
        // Values beyond the histogram range clamp into the last bucket but stay exact in max.
        let mut r = LatRecorder::new(0);
        r.record(2 * 3_600_000_000_000);
        let s = r.summary(&[99.0], true, false);
        assert_eq!(s.max, 7_200_000_000_000);
        assert_eq!(s.percentiles[0].1, 7_200_000_000_000);
    }

    #[test]
    fn percentile_order_kept_as_given() {
        let mut r = LatRecorder::new(0);
        (1..=1000u64).for_each(|x| r.record(x * 1000));
        let s = r.summary(&[99.0, 1.0, 50.0], true, false);
        assert_eq!(s.percentiles.len(), 3);
        assert_eq!(s.percentiles[0].0, 99.0);
        assert!(s.percentiles[0].1 > s.percentiles[2].1 && s.percentiles[2].1 > s.percentiles[1].1);
        assert!(r.summary(&PCTS, false, false).percentiles.is_empty());
    }

    #[test]
    fn merge_equals_recording_into_one() {
        let mut rng = Rng(99);
        let a: Vec<u64> = (0..3000).map(|_| rng.latency()).collect();
        let b: Vec<u64> = (0..5000).map(|_| rng.latency()).collect();
        for budget in [10_000usize, 4000, 100] {
            let mut ra = LatRecorder::new(budget);
            let mut rb = LatRecorder::new(budget);
            let mut all = LatRecorder::new(100_000);
            a.iter().for_each(|&x| {
                ra.record(x);
                all.record(x)
            });
            b.iter().for_each(|&x| {
                rb.record(x);
                all.record(x)
            });
            let both_exact = ra.is_exact() && rb.is_exact();
            ra.merge(&rb);
            assert_eq!(ra.is_exact(), both_exact, "budget {budget}");
            assert_eq!(ra.count(), 8000);
            let m = ra.summary(&PCTS, true, true);
            let o = all.summary(&PCTS, true, true);
            assert_eq!((m.n, m.min, m.max), (o.n, o.min, o.max));
            assert!((m.mean - o.mean).abs() < 1e-6 && (m.stddev - o.stddev).abs() < 1e-6);
            assert_eq!(m.bins, o.bins);
            assert_eq!(ra.lat_bucket_counts(), all.lat_bucket_counts());
            if both_exact {
                assert_eq!(m.percentiles, o.percentiles);
            } else {
                // non-exact merge: recording more must not make it exact again
                ra.record(5);
                assert!(!ra.is_exact());
            }
        }
    }

    #[test]
    fn reset_forgets_everything_keeps_buffers() {
        let mut r = LatRecorder::new(100);
        (0..500u64).for_each(|x| r.record(x + 1));
        assert!(!r.is_exact());
        let cap = r.samples.capacity();
        r.reset();
        assert_eq!(r.count(), 0);
        assert!(r.is_exact());
        assert_eq!(r.summary(&PCTS, true, true), LatSummary::default());
        assert_eq!(r.samples.capacity(), cap);
        r.record(42);
        let s = r.summary(&[50.0], true, true);
        assert_eq!((s.n, s.min, s.max, s.percentiles[0].1), (1, 42, 42, 42));
        assert_eq!(s.method, Some(PercentileMethod::Exact));
        assert_eq!(s.bins, vec![(42, 1)]);
    }

    #[test]
    fn stddev_is_exact_for_large_values() {
        // Large offsets with tiny spread: naive f64 Σx² − (Σx)²/n would cancel catastrophically.
        let mut r = LatRecorder::new(0);
        let base = 3_000_000_000_000u64;
        for x in [base, base + 1, base + 2, base + 3] {
            r.record(x);
        }
        let expected = (5.0f64 / 3.0).sqrt();
        assert!((r.stddev() - expected).abs() < 1e-9, "{}", r.stddev());
    }

    /// fio 3.33's own ranks: its comparison `sum >= (long double)p / 100.0 * nr` evaluated in C
    /// (gcc, x86-64) for the default percentile list and p100, at the boundaries.
    #[test]
    fn ranks_are_fios_at_the_boundaries() {
        #[rustfmt::skip]
        let fio: [(u64, [u64; 18]); 12] = [
            (1, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
            (2, [1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]),
            (3, [1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3]),
            (999, [10, 50, 100, 200, 300, 400, 500, 600, 700, 800, 900, 950, 990, 995, 999, 999, 999, 999]),
            (1000, [10, 50, 100, 200, 300, 400, 500, 600, 700, 800, 900, 950, 990, 995, 1000, 1000, 1000, 1000]),
            (1001, [11, 51, 101, 201, 301, 401, 501, 601, 701, 801, 901, 951, 991, 996, 1000, 1001, 1001, 1001]),
            (9999, [100, 500, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 9500, 9900, 9950, 9990, 9995, 9999, 9999]),
            (10000, [100, 500, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 9500, 9900, 9950, 9991, 9996, 9999, 10000]),
            (10001, [101, 501, 1001, 2001, 3001, 4001, 5001, 6001, 7001, 8001, 9001, 9501, 9901, 9951, 9991, 9996, 10000, 10001]),
            (100000, [1000, 5000, 10000, 20000, 30001, 40000, 50000, 60001, 70000, 80000, 90000, 95000, 99000, 99500, 99901, 99951, 99990, 100000]),
            (131072, [1311, 6554, 13108, 26215, 39322, 52429, 65536, 78644, 91751, 104858, 117965, 124519, 129762, 130417, 130941, 131007, 131059, 131072]),
            (1000001, [10001, 50001, 100001, 200001, 300001, 400001, 500001, 600001, 700001, 800001, 900001, 950001, 990001, 995001, 999001, 999501, 999901, 1000001]),
        ];
        for (n, ranks) in fio {
            for (&p, &want) in PCTS.iter().chain(&[100.0]).zip(&ranks) {
                assert_eq!(fio_rank(p, n), want, "p{p} of {n}");
            }
        }
        // The brief's boundaries spelled out: p50, p99, p99.9 and p100 of 1, 999, 1000, 1001.
        let at = |n| [50.0, 99.0, 99.9, 100.0].map(|p| fio_rank(p, n));
        assert_eq!(at(1), [1, 1, 1, 1]);
        assert_eq!(at(999), [500, 990, 999, 999]);
        assert_eq!(at(1000), [500, 990, 1000, 1000]);
        assert_eq!(at(1001), [501, 991, 1000, 1001]);
        // Outside the range, and nothing to rank.
        assert_eq!(fio_rank(0.0, 5), 1);
        assert_eq!(fio_rank(-1.0, 5), 1);
        assert_eq!(fio_rank(f64::NAN, 5), 1);
        assert_eq!(fio_rank(250.0, 5), 5);
        assert_eq!(fio_rank(f64::MIN_POSITIVE / 4.0, 5), 1);
        assert_eq!(fio_rank(1e-300, u64::MAX), 1);
        assert_eq!(fio_rank(99.99, u64::MAX), 18_444_899_399_302_179_716);
        assert_eq!(fio_rank(50.0, 0), 0);
    }

    /// The recorder's exact percentiles are the samples at fio's ranks: p99.9 of 1,000 is the
    /// largest (the rule stats and report once disagreed on).
    #[test]
    fn the_recorder_reports_the_sample_at_fios_rank() {
        let mut r = LatRecorder::new(2000);
        (1..=1000u64).for_each(|x| r.record(x * 1000));
        let s = r.summary(&[50.0, 99.0, 99.9, 100.0], true, false);
        let v: Vec<u64> = s.percentiles.iter().map(|p| p.1).collect();
        assert_eq!(v, [500_000, 990_000, 1_000_000, 1_000_000]);
        r.record(1_001_000);
        let s = r.summary(&[99.9], true, false);
        assert_eq!(s.percentiles[0].1, 1_000_000);
    }

    #[test]
    fn clone_keeps_capacity() {
        let mut r = LatRecorder::new(1000);
        r.record(1);
        let c = r.clone();
        assert!(c.samples.capacity() >= 1000);
        assert_eq!(c.summary(&PCTS, true, true), r.summary(&PCTS, true, true));
    }

    /// A standard normal draw (Box–Muller) from the test PRNG.
    fn normal(rng: &mut Rng) -> f64 {
        let u1 = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
        let u2 = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
        (-2.0 * (1.0 - u1).ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// Real-looking latency distributions (ns): a page-cache read (log-normal around 2 µs), an
    /// SSD read with a garbage-collection tail (bimodal: 80 µs and 2 ms), an fdatasync on a
    /// disk (log-normal around 1.5 ms, wide), a queue at depth 16 (sum of exponentials).
    fn distribution(kind: usize, rng: &mut Rng) -> u64 {
        match kind {
            0 => (2_000.0 * (0.3 * normal(rng)).exp()) as u64,
            1 => {
                if rng.next() % 100 < 3 {
                    (2_000_000.0 * (0.5 * normal(rng)).exp()) as u64
                } else {
                    (80_000.0 * (0.15 * normal(rng)).exp()) as u64
                }
            }
            2 => (1_500_000.0 * (0.8 * normal(rng)).exp()) as u64,
            _ => (0..16)
                .map(|_| {
                    let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
                    -(1.0 - u).ln() * 20_000.0
                })
                .sum::<f64>() as u64,
        }
        .max(1)
    }

    #[test]
    fn switches_to_histogram_at_the_budget_and_stays_within_half_a_percent() {
        const BUDGET: usize = 4096;
        for kind in 0..4 {
            let mut rng = Rng(1234 + kind as u64);
            let samples: Vec<u64> = (0..BUDGET * 8)
                .map(|_| distribution(kind, &mut rng))
                .collect();
            let mut r = LatRecorder::new(BUDGET);
            // Exact up to and including the budget-th sample…
            for &x in &samples[..BUDGET] {
                r.record(x);
            }
            assert!(r.is_exact(), "kind {kind}");
            let s = r.summary(&PCTS, true, false);
            assert_eq!(s.method, Some(PercentileMethod::Exact));
            for &(p, v) in &s.percentiles {
                assert_eq!(v, brute(&samples[..BUDGET], p), "kind {kind} p{p}");
            }
            // …the histogram from the next one on, and the buffer never grows past the budget.
            r.record(samples[BUDGET]);
            assert!(!r.is_exact(), "kind {kind}");
            for &x in &samples[BUDGET + 1..] {
                r.record(x);
            }
            assert_eq!(r.samples.len(), BUDGET);
            assert_eq!(r.samples.capacity(), BUDGET);
            let s = r.summary(&PCTS, true, false);
            assert_eq!(s.method, Some(PercentileMethod::Histogram));
            assert_eq!(s.n, samples.len() as u64);
            for &(p, v) in &s.percentiles {
                let truth = brute(&samples, p) as f64;
                let err = (v as f64 - truth).abs() / truth;
                assert!(
                    err <= 0.005,
                    "kind {kind} p{p}: {v} vs exact {truth} ({err})"
                );
            }
        }
    }

    #[test]
    fn a_sample_beyond_u32_makes_the_recorder_inexact() {
        let mut r = LatRecorder::new(100);
        r.record(1_000);
        r.record(5_000_000_000); // 5 s does not fit the u32 samples
        r.record(2_000);
        assert!(!r.is_exact());
        let s = r.summary(&[50.0, 100.0], true, false);
        assert_eq!(s.method, Some(PercentileMethod::Histogram));
        assert_eq!(s.max, 5_000_000_000);
        assert_eq!(s.percentiles[1].1, 5_000_000_000);
        assert!((s.percentiles[0].1 as f64 - 2_000.0).abs() / 2_000.0 <= 0.005);
    }

    #[test]
    fn default_budget_keeps_the_etcd_recipe_exact() {
        // etcd's recipe: 22 MiB of 2300-byte writes, each followed by an fdatasync.
        assert!(DEFAULT_SAMPLE_BUDGET as u64 >= (22 << 20) / 2300);
        // 512 KiB of samples per recorder.
        assert_eq!(
            DEFAULT_SAMPLE_BUDGET * std::mem::size_of::<u32>(),
            512 << 10
        );
    }

    #[test]
    fn budget_split() {
        assert_eq!(sample_budget_for(1), DEFAULT_SAMPLE_BUDGET);
        assert_eq!(sample_budget_for(640), (64 << 20) / 4 / 640);
        assert_eq!(sample_budget_for(0), DEFAULT_SAMPLE_BUDGET);
    }
}
