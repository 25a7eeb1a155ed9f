//! What a profile's probes added up to since the canary started: the counters and cumulative
//! latency histograms that Prometheus wants (it takes rates and windows itself), as opposed to
//! the window's verdict.

use super::probe::{FailReason, ProbeSample};
use crate::report::document::{CanaryErrorCount, CanaryHistogram};
use crate::stats::histogram::{bucket_index, bucket_low, bucket_width, NBUCKETS};
use std::collections::BTreeMap;

/// Bucket bounds of `iogauge_latency_seconds` besides the profiles' thresholds: from 50 µs
/// (a fast NVMe's sync) to 10 s (a stalled network volume).
const EDGES_S: [f64; 16] = [
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 10.0,
];

/// The bucket bounds for a profile: [`EDGES_S`] and its latency thresholds, so that an alert or
/// a dashboard can count exactly the latencies over a threshold.
pub(crate) fn edges(thresholds_s: &[f64]) -> Vec<f64> {
    let mut e: Vec<f64> = EDGES_S.iter().chain(thresholds_s).copied().collect();
    e.sort_by(f64::total_cmp);
    e.dedup_by(|a, b| (*a - *b).abs() <= f64::EPSILON * b.abs());
    e
}

/// A latency kind's histogram since the start, at the recorder's resolution.
#[derive(Debug)]
struct Cumulative {
    counts: Vec<u64>,
    sum_ns: f64,
}

impl Cumulative {
    fn new() -> Self {
        Cumulative {
            counts: vec![0; NBUCKETS],
            sum_ns: 0.0,
        }
    }

    fn add(&mut self, bins: &[(u64, u64)]) {
        for &(v, c) in bins {
            self.counts[bucket_index(v)] += c;
            self.sum_ns += v as f64 * c as f64;
        }
    }

    /// Prometheus's buckets: a recorder bucket counts under `le` only if all of it lies at or
    /// below `le`, so a latency is never counted as faster than it may have been.
    fn render(&self, kind: &str, edges: &[f64]) -> CanaryHistogram {
        let mut buckets: Vec<(f64, u64)> = edges.iter().map(|&e| (e, 0)).collect();
        let mut count = 0;
        for (i, &c) in self.counts.iter().enumerate().filter(|(_, c)| **c > 0) {
            count += c;
            let top_s = (bucket_low(i) + bucket_width(i) - 1) as f64 * 1e-9;
            for b in buckets.iter_mut().filter(|b| top_s <= b.0) {
                b.1 += c;
            }
        }
        CanaryHistogram {
            kind: kind.to_string(),
            buckets,
            count,
            sum: self.sum_ns * 1e-9,
        }
    }
}

/// One profile's totals.
#[derive(Debug)]
pub(crate) struct Totals {
    pub probes: u64,
    pub errors: BTreeMap<FailReason, u64>,
    pub last_success: Option<f64>,
    pub last_error: Option<String>,
    pub last_duration_s: Option<f64>,
    /// sync, read, write; created at the first latency of each kind.
    kinds: [Option<Cumulative>; 3],
}

const KINDS: [&str; 3] = ["sync", "read", "write"];

impl Totals {
    pub(crate) fn new() -> Self {
        Totals {
            probes: 0,
            errors: BTreeMap::new(),
            last_success: None,
            last_error: None,
            last_duration_s: None,
            kinds: [None, None, None],
        }
    }

    pub(crate) fn succeeded(&mut self, s: &ProbeSample, at_unix: f64, wall_s: f64) {
        self.probes += 1;
        self.last_success = Some(at_unix);
        self.last_error = None;
        self.last_duration_s = Some(wall_s);
        for (slot, bins) in self.kinds.iter_mut().zip([&s.sync, &s.clat[0], &s.clat[1]]) {
            if !bins.is_empty() {
                slot.get_or_insert_with(Cumulative::new).add(bins);
            }
        }
    }

    pub(crate) fn failed(&mut self, reason: FailReason, why: &str, wall_s: f64) {
        self.probes += 1;
        *self.errors.entry(reason).or_insert(0) += 1;
        self.last_error = Some(why.to_string());
        self.last_duration_s = Some(wall_s);
    }

    /// Every reason, 0 included: a counter that appears only at its first increase hides
    /// that increase from `increase()` (and so from the probe-errors alert).
    pub(crate) fn error_counts(&self) -> Vec<CanaryErrorCount> {
        FailReason::ALL
            .iter()
            .map(|r| CanaryErrorCount {
                reason: r.word().to_string(),
                count: self.errors.get(r).copied().unwrap_or(0),
            })
            .collect()
    }

    pub(crate) fn histograms(&self, edges: &[f64]) -> Vec<CanaryHistogram> {
        KINDS
            .iter()
            .zip(&self.kinds)
            .filter_map(|(k, c)| c.as_ref().map(|c| c.render(k, edges)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::histogram::bucket_value;
    use std::time::SystemTime;

    fn sample(sync: Vec<(u64, u64)>) -> ProbeSample {
        ProbeSample {
            at: SystemTime::now(),
            sync,
            clat: [Vec::new(), Vec::new()],
            ios: [0, 0],
            seconds: 1.0,
        }
    }

    #[test]
    fn edges_hold_the_thresholds_once() {
        let e = edges(&[0.01, 0.008]);
        assert!(e.contains(&0.008));
        assert_eq!(e.iter().filter(|v| **v == 0.01).count(), 1);
        assert!(e.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn buckets_are_cumulative_and_never_count_a_latency_as_faster() {
        let mut t = Totals::new();
        // 1 ms, 9.9 ms, and the recorder bucket holding exactly 10 ms (its top is above 10 ms).
        let ten = bucket_value(bucket_index(10_000_000));
        let bins = vec![
            (bucket_value(bucket_index(1_000_000)), 5),
            (bucket_value(bucket_index(9_900_000)), 3),
            (ten, 2),
        ];
        t.succeeded(&sample(bins), 1.0, 0.5);
        t.succeeded(
            &sample(vec![(bucket_value(bucket_index(1_000_000)), 1)]),
            2.0,
            0.5,
        );
        let h = &t.histograms(&edges(&[0.01]))[0];
        assert_eq!(h.kind, "sync");
        assert_eq!(h.count, 11);
        let at = |le: f64| h.buckets.iter().find(|b| b.0 == le).unwrap().1;
        assert_eq!(at(0.001), 0, "the 1 ms bucket's top is above 1 ms");
        assert_eq!(at(0.0025), 6);
        assert_eq!(at(0.01), 9, "the bucket holding 10 ms reaches above it");
        assert_eq!(at(0.025), 11);
        assert!(h.buckets.windows(2).all(|w| w[0].1 <= w[1].1));
        assert!(h.sum > 0.0 && h.sum < 11.0 * 0.011);
        assert_eq!(t.probes, 2);
        assert_eq!(t.last_success, Some(2.0));
    }

    #[test]
    fn failures_count_by_reason() {
        let mut t = Totals::new();
        t.failed(FailReason::NoSpace, "full", 0.1);
        t.failed(FailReason::NoSpace, "full", 0.1);
        t.failed(FailReason::ReadOnly, "ro", 0.1);
        let c = t.error_counts();
        assert_eq!(c.len(), 5);
        assert_eq!((c[0].reason.as_str(), c[0].count), ("no_space", 2));
        assert_eq!((c[1].reason.as_str(), c[1].count), ("read_only", 1));
        assert_eq!((c[4].reason.as_str(), c[4].count), ("other", 0));
        assert_eq!(t.last_error.as_deref(), Some("ro"));
        assert!(t.histograms(&edges(&[])).is_empty());
    }
}
