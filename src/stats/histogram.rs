//! Log-linear latency histogram: 128 linear sub-buckets per power of two.
//!
//! Values below 256 ns get one bucket each (exact). From 2^k (k ≥ 8) each power of two
//! [2^k, 2^(k+1)) is split into 128 buckets of width 2^(k−7). A bucket is represented by
//! `lo + width/2`, so the reported value is within width/2 / lo = 2^(k−8) / 2^k = 1/256
//! ≈ 0.39 % of any value in the bucket (the contract asks for ≤ 0.5 %).
//!
//! The top bucket group is [2^41, 2^42) ns, i.e. up to ≈ 73.3 min, which covers 1 ns … 1 h.
//! **Values ≥ 2^42 ns (≈ 73 min) are clamped into the last bucket**; min/max stay exact because
//! the recorder tracks them separately, and percentile values are clamped into [min, max].
//!
//! 4608 `u64` counters = 36 KiB per histogram; allocated once in `new`.

/// log2 of the number of linear sub-buckets per power of two.
const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
/// Highest power of two covered: buckets end at 2^MAX_EXP ns (≈ 73 min).
const MAX_EXP: u32 = 42;
/// Number of buckets: values < 2·SUB take one bucket each, then SUB buckets per power of two.
pub(crate) const NBUCKETS: usize = ((MAX_EXP - SUB_BITS + 1) as usize) * SUB as usize;
/// Largest value with its own bucket; anything above is clamped into the last bucket.
pub(crate) const MAX_TRACKED_NS: u64 = (1 << MAX_EXP) - 1;

/// Bucket index of a value (clamped to the last bucket).
#[inline(always)]
pub(crate) fn bucket_index(v: u64) -> usize {
    let v = if v > MAX_TRACKED_NS {
        MAX_TRACKED_NS
    } else {
        v
    };
    if v < SUB {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros();
    let shift = msb - SUB_BITS;
    // (shift + 1)·SUB is the first index of this power-of-two group; v >> shift is in [SUB, 2·SUB).
    ((shift as u64 + 1) * SUB + ((v >> shift) - SUB)) as usize
}

/// Lowest value that falls into bucket `idx`.
pub(crate) fn bucket_low(idx: usize) -> u64 {
    let idx = idx as u64;
    if idx < 2 * SUB {
        return idx;
    }
    let shift = idx / SUB - 1;
    (SUB + idx % SUB) << shift
}

/// Width of bucket `idx` in ns.
pub(crate) fn bucket_width(idx: usize) -> u64 {
    let idx = idx as u64;
    if idx < 2 * SUB {
        1
    } else {
        1 << (idx / SUB - 1)
    }
}

/// The value reported for bucket `idx`: its midpoint (exact for the one-value buckets).
pub(crate) fn bucket_value(idx: usize) -> u64 {
    bucket_low(idx) + bucket_width(idx) / 2
}

/// Fixed-size log-linear histogram of nanosecond values.
#[derive(Debug, Clone)]
pub struct Histogram {
    counts: Box<[u64]>,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    pub fn new() -> Self {
        Histogram {
            counts: vec![0u64; NBUCKETS].into_boxed_slice(),
        }
    }

    /// Hot path: one index computation and one increment.
    #[inline(always)]
    pub fn record(&mut self, v: u64) {
        let idx = bucket_index(v);
        // bucket_index clamps to NBUCKETS − 1, so this bounds check never fails.
        self.counts[idx] += 1;
    }

    /// The counters, one per bucket index.
    pub(crate) fn counts(&self) -> &[u64] {
        &self.counts
    }

    pub fn reset(&mut self) {
        self.counts.fill(0);
    }

    /// Become a copy of `other` without allocating.
    pub(crate) fn copy_from(&mut self, other: &Histogram) {
        self.counts.copy_from_slice(&other.counts);
    }

    /// Add `other`'s counts.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += *b;
        }
    }

    /// Non-empty buckets as (representative value, count), ascending.
    pub fn bins(&self) -> Vec<(u64, u64)> {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (bucket_value(i), c))
            .collect()
    }

    /// Representative values for the given 1-based ranks (ascending), one pass over the buckets.
    /// `ranks` must be sorted ascending and each ≤ the total count.
    pub fn values_at_ranks(&self, ranks: &[u64]) -> Vec<u64> {
        let mut out = Vec::with_capacity(ranks.len());
        let mut cum = 0u64;
        let mut r = ranks.iter().peekable();
        for (i, &c) in self.counts.iter().enumerate() {
            cum += c;
            while let Some(&&rank) = r.peek() {
                if rank <= cum {
                    out.push(bucket_value(i));
                    r.next();
                } else {
                    break;
                }
            }
            if r.peek().is_none() {
                break;
            }
        }
        // Ranks beyond the total (not expected) report the last bucket.
        while out.len() < ranks.len() {
            out.push(bucket_value(NBUCKETS - 1));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_is_continuous_and_monotonic() {
        let mut prev = 0usize;
        for v in 0..100_000u64 {
            let i = bucket_index(v);
            assert!(i == prev || i == prev + 1, "jump at {v}: {prev} -> {i}");
            prev = i;
        }
        assert_eq!(bucket_index(MAX_TRACKED_NS), NBUCKETS - 1);
    }

    #[test]
    fn bucket_bounds_round_trip() {
        for idx in 0..NBUCKETS {
            let lo = bucket_low(idx);
            let w = bucket_width(idx);
            assert_eq!(bucket_index(lo), idx, "low of {idx}");
            assert_eq!(bucket_index(lo + w - 1), idx, "high of {idx}");
            if idx + 1 < NBUCKETS {
                assert_eq!(bucket_low(idx + 1), lo + w);
            }
        }
        assert_eq!(
            bucket_low(NBUCKETS - 1) + bucket_width(NBUCKETS - 1),
            1 << MAX_EXP
        );
    }

    /// Relative error of the representative over 1 ns … 1 h, and clamping beyond.
    #[test]
    fn relative_error_sweep_1ns_to_1h() {
        const HOUR: u64 = 3_600_000_000_000;
        let mut v = 1u64;
        let mut worst = 0f64;
        while v <= HOUR {
            for probe in [v, v + v / 3, v + v / 2, v.saturating_mul(2) - 1] {
                let probe = probe.min(HOUR);
                let rep = bucket_value(bucket_index(probe));
                let err = (rep as f64 - probe as f64).abs() / probe as f64;
                worst = worst.max(err);
                assert!(err <= 0.005, "value {probe}: rep {rep}, err {err}");
            }
            v = v + v / 7 + 1;
        }
        assert!(worst <= 1.0 / 256.0 + 1e-12, "worst {worst}");
        // Values of 1 h and more: 1 h still has its own bucket; ≥ 2^42 ns clamp into the last one.
        assert!(bucket_index(HOUR) < NBUCKETS - 1);
        for big in [1u64 << 42, 2 * HOUR, u64::MAX] {
            assert_eq!(bucket_index(big), NBUCKETS - 1);
        }
    }

    #[test]
    fn ranks() {
        let mut h = Histogram::new();
        for v in [5u64, 5, 7, 1000, 1_000_000] {
            h.record(v);
        }
        assert_eq!(h.values_at_ranks(&[1, 2, 3, 4, 5]).len(), 5);
        let vals = h.values_at_ranks(&[1, 3, 5]);
        assert_eq!(vals[0], 5);
        assert_eq!(vals[1], 7);
        let rel = (vals[2] as f64 - 1e6).abs() / 1e6;
        assert!(rel <= 0.005);
        let bins = h.bins();
        assert_eq!(bins[0], (5, 2));
        assert_eq!(bins.iter().map(|b| b.1).sum::<u64>(), 5);
    }
}
