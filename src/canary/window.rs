//! The rolling window: the probes of the last `--window`, and each profile's metrics judged over
//! them with the sequential rules' statistics (issue 27), once per probe cycle.
//!
//! A window's verdict is a fixed-sample test on that window's data, at the stated confidence:
//! a percentile from the merged latency histogram's exceedance counts (exact binomial bounds,
//! whatever the distribution), a rate from the probes' own rates as independent batches (the
//! probes are minutes apart) with a Student-t interval. Nothing is decided within the margin
//! of a threshold: such a window is `undecided`, as it would run on in `check`.

use super::probe::ProbeSample;
use crate::report::document::{CanaryMetric, CanaryVerdict};
use crate::stats::histogram::{bucket_index, bucket_low, bucket_value, bucket_width, NBUCKETS};
use crate::stats::sequential::tails::t_quantile;
use crate::stats::sequential::{
    quantile_lower_rank, quantile_upper_rank, QuantileRule, Risk, Side,
};
use crate::verdict::criteria::{Better, Metric, MetricKey, Profile};
use crate::verdict::sequential::{CONFIDENCE, MARGIN};
use std::collections::VecDeque;
use std::time::{Duration, SystemTime};

/// Fewest probes a rate is judged on: a t interval on fewer says nothing useful.
const MIN_RATE_PROBES: usize = 3;

/// One profile's probes inside the window, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Window {
    probes: VecDeque<ProbeSample>,
}

impl Window {
    /// Adds a probe that succeeded and forgets those older than `span` before `now`.
    pub(crate) fn push(&mut self, sample: ProbeSample, span: Duration, now: SystemTime) {
        self.probes.push_back(sample);
        self.forget(span, now);
    }

    /// Forgets the probes that ended more than `span` before `now`.
    pub(crate) fn forget(&mut self, span: Duration, now: SystemTime) {
        while self
            .probes
            .front()
            .is_some_and(|p| now.duration_since(p.at).unwrap_or_default() > span)
        {
            self.probes.pop_front();
        }
    }

    /// Probes in the window.
    pub(crate) fn len(&self) -> usize {
        self.probes.len()
    }

    /// Every judged metric of `p` over the window, and the profile's verdict: `error` without a
    /// probe, else the worst metric (fail, then undecided, then warn).
    pub(crate) fn judge(&self, p: &Profile) -> (CanaryVerdict, Vec<CanaryMetric>) {
        let thresholds: usize = p
            .metrics
            .iter()
            .map(|m| 1 + usize::from(m.warn.is_some()))
            .sum();
        // The risk of any wrong decision, split over every threshold of the profile.
        let alpha = (1.0 - CONFIDENCE) / thresholds.max(1) as f64;
        let metrics: Vec<CanaryMetric> = p
            .metrics
            .iter()
            .map(|m| self.judge_metric(m, alpha))
            .collect();
        let verdict = if self.probes.is_empty() {
            CanaryVerdict::Error
        } else {
            worst(metrics.iter().map(|m| m.verdict))
        };
        (verdict, metrics)
    }

    fn judge_metric(&self, m: &Metric, alpha: f64) -> CanaryMetric {
        let pass = m.pass.value().unwrap_or(f64::NAN);
        let warn = m.warn.as_ref().and_then(|w| w.value().ok());
        let latency = m.key == MetricKey::SyncP99;
        let judged = if latency {
            self.sync_quantile(0.99, pass, warn, m.better, alpha)
        } else {
            let dir = usize::from(m.key == MetricKey::WriteIops);
            self.rate(dir, pass, warn, m.better, alpha)
        };
        // Latencies are kept in ns and shown in seconds, as Prometheus wants.
        let unit = if latency { 1e-9 } else { 1.0 };
        CanaryMetric {
            key: m.key.name().to_string(),
            label: m.label.clone(),
            unit: if latency { "seconds" } else { "iops" }.to_string(),
            better: match m.better {
                Better::Lower => "lower",
                Better::Higher => "higher",
            }
            .to_string(),
            value: judged.value.map(|v| v * unit),
            pass: pass * unit,
            warn: warn.map(|w| w * unit),
            samples: judged.samples,
            probes: self.probes.len() as u64,
            verdict: judged.verdict,
            bound: judged.bound.map(|v| v * unit),
        }
    }

    /// The merged sync-latency histogram's q-quantile against the thresholds.
    fn sync_quantile(
        &self,
        q: f64,
        pass: f64,
        warn: Option<f64>,
        better: Better,
        alpha: f64,
    ) -> Judged {
        let mut counts = vec![0u64; NBUCKETS];
        for p in &self.probes {
            for &(v, c) in &p.sync {
                counts[bucket_index(v)] += c;
            }
        }
        let n: u64 = counts.iter().sum();
        let value = (n > 0)
            .then(|| bucket_at_rank(&counts, crate::stats::latency::fio_rank(q * 100.0, n)))
            .flatten()
            .map(|i| bucket_value(i) as f64);
        let side = |threshold: f64| {
            let risk = one_look(alpha, n);
            let mut rule = QuantileRule::new(q, threshold, risk);
            let (low, high) = rule.edges();
            // A bucket straddling an edge counts against the decision it could favour.
            let above_low = above(&counts, bucket_index(low as u64));
            let above_high = above(&counts, bucket_index(high as u64) + 1);
            rule.look(n, n, above_low, above_high)
        };
        let (verdict, decided) = decide(side, pass, warn, better);
        let bound = decided.and_then(|s| match s {
            Side::Below => quantile_upper_rank(n, q, alpha / 2.0).map(|r| top_at_rank(&counts, r)),
            Side::Above => {
                quantile_lower_rank(n, q, alpha / 2.0).map(|r| bottom_at_rank(&counts, r))
            }
            Side::Undecided => None,
        });
        Judged {
            value,
            samples: n,
            verdict,
            bound: bound.map(|b| b as f64),
        }
    }

    /// The window's rate of direction `dir` (0 read, 1 write) against the thresholds: the
    /// probes' rates as batches, with a two-sided t interval at `alpha` per threshold.
    fn rate(&self, dir: usize, pass: f64, warn: Option<f64>, better: Better, alpha: f64) -> Judged {
        let ios: u64 = self.probes.iter().map(|p| p.ios[dir]).sum();
        let secs: f64 = self.probes.iter().map(|p| p.seconds).sum();
        let value = (secs > 0.0).then(|| ios as f64 / secs);
        let rates: Vec<f64> = self
            .probes
            .iter()
            .filter(|p| p.seconds > 0.0)
            .map(|p| p.ios[dir] as f64 / p.seconds)
            .collect();
        let interval = t_interval(&rates, alpha);
        let side = |threshold: f64| match interval {
            Some((_, hi)) if hi < threshold * (1.0 - MARGIN) => Side::Below,
            Some((lo, _)) if lo > threshold * (1.0 + MARGIN) => Side::Above,
            _ => Side::Undecided,
        };
        let (verdict, decided) = decide(side, pass, warn, better);
        let bound = match (decided, interval) {
            (Some(Side::Below), Some((_, hi))) => Some(hi),
            (Some(Side::Above), Some((lo, _))) => Some(lo),
            _ => None,
        };
        Judged {
            value,
            samples: ios,
            verdict,
            bound,
        }
    }
}

/// What one metric's judging found.
struct Judged {
    value: Option<f64>,
    samples: u64,
    verdict: CanaryVerdict,
    bound: Option<f64>,
}

/// A fixed-sample test: one look at `n`, spending all of `alpha`.
fn one_look(alpha: f64, n: u64) -> Risk {
    Risk {
        alpha,
        margin: MARGIN,
        full: n.max(1),
        floor: n.max(1),
        growth: 2.0,
    }
}

/// The verdict from the side of each threshold, with the side that decided the deciding
/// threshold (for its bound). Lower is better: below pass passes; above pass, below warn
/// warns; above the last threshold fails. Higher is better: the mirror.
fn decide(
    side: impl Fn(f64) -> Side,
    pass: f64,
    warn: Option<f64>,
    better: Better,
) -> (CanaryVerdict, Option<Side>) {
    let (good, bad) = match better {
        Better::Lower => (Side::Below, Side::Above),
        Better::Higher => (Side::Above, Side::Below),
    };
    let at_pass = side(pass);
    if at_pass == good {
        return (CanaryVerdict::Pass, Some(good));
    }
    if at_pass == Side::Undecided {
        return (CanaryVerdict::Undecided, None);
    }
    match warn {
        None => (CanaryVerdict::Fail, Some(bad)),
        Some(w) => match side(w) {
            s if s == good => (CanaryVerdict::Warn, Some(good)),
            s if s == bad => (CanaryVerdict::Fail, Some(bad)),
            _ => (CanaryVerdict::Undecided, None),
        },
    }
}

/// The worst of some metric verdicts: fail, then error, then undecided, then warn, then pass.
pub(crate) fn worst(v: impl Iterator<Item = CanaryVerdict>) -> CanaryVerdict {
    let rank = |v: CanaryVerdict| match v {
        CanaryVerdict::Pass => 0,
        CanaryVerdict::Warn => 1,
        CanaryVerdict::Undecided => 2,
        CanaryVerdict::Error => 3,
        CanaryVerdict::Fail => 4,
    };
    v.max_by_key(|v| rank(*v))
        .unwrap_or(CanaryVerdict::Undecided)
}

/// Mean ± t·s/√n of `x` at two-sided `alpha`; None with fewer than [`MIN_RATE_PROBES`].
fn t_interval(x: &[f64], alpha: f64) -> Option<(f64, f64)> {
    if x.len() < MIN_RATE_PROBES {
        return None;
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let half = t_quantile(1.0 - alpha / 2.0, n - 1.0) * (var / n).sqrt();
    Some((mean - half, mean + half))
}

/// Samples in buckets `from..`.
fn above(counts: &[u64], from: usize) -> u64 {
    counts.get(from..).map_or(0, |c| c.iter().sum())
}

/// The bucket holding the r-th smallest sample (1-based), if there are r.
fn bucket_at_rank(counts: &[u64], r: u64) -> Option<usize> {
    let mut cum = 0u64;
    counts.iter().position(|&c| {
        cum += c;
        cum >= r
    })
}

/// The top of the bucket holding rank r (an upper bound on that sample), in ns.
fn top_at_rank(counts: &[u64], r: u64) -> u64 {
    bucket_at_rank(counts, r).map_or(0, |i| bucket_low(i) + bucket_width(i) - 1)
}

/// The bottom of the bucket holding rank r (a lower bound on that sample), in ns.
fn bottom_at_rank(counts: &[u64], r: u64) -> u64 {
    bucket_at_rank(counts, r).map_or(0, bucket_low)
}

#[cfg(test)]
#[path = "window_tests.rs"]
mod tests;
