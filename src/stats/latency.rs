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
#[path = "latency_tests.rs"]
mod tests;
