//! A rate (IOPS) against a threshold from per-slice counts, by batch means.
//!
//! Two-sided interval: each counted look builds a (1 - alpha_per_look) Student-t interval,
//! alpha_per_look/2 in each tail. Inside the margin both decisions are wrong, and the two tails
//! together keep their chance at alpha_per_look per look; the stated interval is then the usual
//! two-sided one.

use super::risk::{LookClock, Risk, Side};
use super::tails::t_quantile;

/// Fewest and most batches; the number used is about sqrt(slices) within these.
const MIN_BATCHES: usize = 10;
const MAX_BATCHES: usize = 30;
/// Batch means whose lag-1 autocorrelation exceeds this are too short to be independent.
const MAX_LAG1: f64 = 0.5;
/// Ten batches estimate their own lag-1 correlation poorly (sd ~0.3), so batches must also
/// span the slices' correlation time as the slices themselves show it (many more points):
/// tau = (1 + r)/(1 - r) slices for a lag-1 correlation r (the AR(1) value of the sum of all
/// autocorrelations), and a batch at least that long.
const MIN_BATCH_OVER_TAU: f64 = 1.0;

/// A rate against one threshold, from counts in equal time slices (batch means, Student t).
#[derive(Debug, Clone)]
pub(crate) struct RateRule {
    slice_secs: f64,
    low: f64,
    high: f64,
    clock: LookClock,
    side: Side,
    interval: Option<(f64, f64)>,
}

/// What one look's batches say.
struct Batches {
    mean: f64,
    half_width: f64,
    lag1: f64,
    /// Batch length in slices over the slices' estimated correlation time.
    len_over_tau: f64,
    recent_mean: f64,
}

impl RateRule {
    pub(crate) fn new(threshold: f64, slice_secs: f64, risk: Risk) -> Self {
        RateRule {
            slice_secs,
            low: threshold * (1.0 - risk.margin),
            high: threshold * (1.0 + risk.margin),
            clock: LookClock::new(risk),
            side: Side::Undecided,
            interval: None,
        }
    }

    /// `slices`: counts per slice since measurement start, oldest first. Same look counting
    /// and stickiness as the percentile rule. Undecided when fewer than 10 slices, when the
    /// batch means are autocorrelated (lag 1 > 0.5) or shorter than the slices' correlation
    /// time, or when the recent half of the batches disagrees with the interval (a trend); the
    /// look is counted all the same.
    pub(crate) fn look(&mut self, progress: u64, slices: &[u64]) -> Side {
        if self.side != Side::Undecided || !self.clock.count(progress) {
            return self.side;
        }
        self.interval = None;
        let Some(b) = self.batches(slices) else {
            return self.side;
        };
        if b.lag1 > MAX_LAG1 || b.len_over_tau < MIN_BATCH_OVER_TAU {
            return self.side;
        }
        let (lo, hi) = (b.mean - b.half_width, b.mean + b.half_width);
        self.interval = Some((lo, hi));
        if hi < self.low && b.recent_mean < self.low {
            self.side = Side::Below;
        } else if lo > self.high && b.recent_mean > self.high {
            self.side = Side::Above;
        }
        self.side
    }

    /// Batch means (per second) of the latest slices, dropping the oldest extra ones, and the
    /// t interval's half width. None below 10 slices. No allocation: at most 30 means.
    fn batches(&self, slices: &[u64]) -> Option<Batches> {
        let s = slices.len();
        if s < MIN_BATCHES {
            return None;
        }
        let n = ((s as f64).sqrt().round() as usize).clamp(MIN_BATCHES, MAX_BATCHES);
        let len = s / n;
        let used = &slices[s - n * len..];
        let mut means = [0.0_f64; MAX_BATCHES];
        let secs = len as f64 * self.slice_secs;
        for (mean, batch) in means.iter_mut().zip(used.chunks_exact(len)) {
            *mean = batch.iter().map(|&c| c as f64).sum::<f64>() / secs;
        }
        let means = &means[..n];
        let nf = n as f64;
        let mean = means.iter().sum::<f64>() / nf;
        let ss: f64 = means.iter().map(|m| (m - mean).powi(2)).sum();
        let cross: f64 = means
            .windows(2)
            .map(|w| (w[0] - mean) * (w[1] - mean))
            .sum();
        // Identical batches (a perfectly steady rate) carry no sign of dependence.
        let lag1 = if ss > 0.0 { cross / ss } else { 0.0 };
        let se = (ss / (nf - 1.0) / nf).sqrt();
        let t = t_quantile(1.0 - 0.5 * self.clock.alpha_per_look(), nf - 1.0);
        let recent = &means[n - n / 2..];
        let recent_mean = recent.iter().sum::<f64>() / recent.len() as f64;
        // Batches shorter than the correlation time understate the variance of the mean; an
        // AR(1) fitted to the slices says by how much, and the standard error grows to match.
        let phi = slice_lag1(used);
        let inflation = (kept_tau(phi, used.len() as f64) / kept_tau(phi, len as f64)).max(1.0);
        let len_over_tau = len as f64 * (1.0 - phi) / (1.0 + phi);
        Some(Batches {
            mean,
            half_width: t * se * inflation.sqrt(),
            lag1,
            len_over_tau,
            recent_mean,
        })
    }

    /// The last counted look's interval for the mean rate (per second), for the stated result;
    /// None when that look had under 10 slices or batches too short to be independent.
    pub(crate) fn interval(&self) -> Option<(f64, f64)> {
        self.interval
    }

    /// Looks counted so far.
    pub(crate) fn looks(&self) -> u32 {
        self.clock.looks()
    }
}

/// The slices' lag-1 correlation, clamped to [0, 0.99] (0 when the counts never vary). One
/// pass over the slices, not the samples.
fn slice_lag1(slices: &[u64]) -> f64 {
    let n = slices.len() as f64;
    let mean = slices.iter().map(|&c| c as f64).sum::<f64>() / n;
    let ss: f64 = slices.iter().map(|&c| (c as f64 - mean).powi(2)).sum();
    let cross: f64 = slices
        .windows(2)
        .map(|w| (w[0] as f64 - mean) * (w[1] as f64 - mean))
        .sum();
    if ss > 0.0 {
        (cross / ss).clamp(0.0, 0.99)
    } else {
        0.0
    }
}

/// m·Var(mean of m slices)/Var(slice) for an AR(1) with coefficient `phi`: what a batch of m
/// slices keeps of the correlation time (1+phi)/(1-phi) (Priestley 1981, eq. 5.3.24).
fn kept_tau(phi: f64, m: f64) -> f64 {
    let tau = (1.0 + phi) / (1.0 - phi);
    tau - 2.0 * phi * (1.0 - phi.powf(m)) / (m * (1.0 - phi).powi(2))
}

#[cfg(test)]
#[path = "rate_tests.rs"]
mod tests;
