//! The sequential watch (issue 27), run by the phase's control on the monitor thread: every
//! 100 ms of a measuring job it counts what the thresholds need (the sync- or write-latency
//! histogram's exceedances from the worker's 100 ms snapshot, the I/Os of each 100 ms slice
//! from the published counters), asks `stats::sequential`'s rules, and stops the job once
//! every threshold is decided. Nothing here runs per I/O.

use super::shared::{Published, StatusLat, PHASE_DONE, PHASE_MEASURING};
use crate::model::sequential::{SequentialSpec, WatchedMetric};
use crate::model::{JobSpec, SizeSpec, DDIR_WRITE};
use crate::report::sequential::{SequentialRun, Side as ReportSide, ThresholdDecision};
use crate::stats::histogram::{bucket_index, bucket_low, bucket_width};
use crate::stats::sequential::{
    quantile_lower_rank, quantile_upper_rank, QuantileRule, RateRule, Risk, Side,
};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// One slice of a rate, and the interval between looks.
const SLICE_NS: u64 = 100_000_000;
/// Nothing is decided before a second of measurement (after any ramp): the first writes of a
/// run can land in a cache that a longer run fills.
const FLOOR_NS: u64 = 1_000_000_000;
/// A rate of a time-bound job is not judged before 3 s: its slices can stay correlated for
/// seconds (a busy spell, a writeback burst), which no statistic of a shorter window can see
/// (`stats::sequential`'s rate tests: with a strongly correlated rate a 3 s floor still erred
/// 4 times in 600 runs inside the margin; the throttled validation in docs/MEASUREMENT.md).
const RATE_FLOOR_MS: u64 = 3_000;
/// A size-bound job is not judged before this share of its recipe either.
const FLOOR_SHARE: u64 = 50;
/// Counted looks at progress growing by this factor.
const GROWTH: f64 = 1.5;

/// One threshold's rule.
enum Rule {
    /// `rec`: the snapshot's recorder (1 write, 3 sync).
    Quantile {
        q: f64,
        rec: usize,
        rule: QuantileRule,
    },
    Rate {
        dir: usize,
        rule: RateRule,
    },
}

struct Threshold {
    /// A percentile's counts at each look (n, above the low edge, above the high edge), for
    /// the check that the recent third agrees.
    seen: Vec<(u64, u64, u64)>,
    key: String,
    value: f64,
    rule: Rule,
    side: Side,
    bound: Option<f64>,
}

/// The watch over one job instance.
pub(crate) struct Watch {
    spec: SequentialSpec,
    published: Arc<Published>,
    status: Option<Arc<StatusLat>>,
    time_based: bool,
    /// The full recipe in progress units: ms (time-bound) or bytes (size-bound).
    full: u64,
    /// Its I/Os, for a size-bound job.
    full_ios: Option<u64>,
    thresholds: Vec<Threshold>,
    /// The risk each counted look spends on one threshold (for the stated bounds).
    alpha_look: f64,
    /// Per direction, the I/Os of each 100 ms slice since measurement started.
    slices: [Vec<u64>; 3],
    last_ios: [u64; 3],
    /// The next slice's end (0: measurement has not started).
    next_slice: u64,
    meas_start: u64,
    decided_at: Option<(u64, u64)>,
    done: bool,
    ended: (u64, u64),
}

impl Watch {
    /// The watch for `job`, None when it has nothing to watch.
    pub(crate) fn new(
        job: &JobSpec,
        published: Arc<Published>,
        status: Option<Arc<StatusLat>>,
    ) -> Option<Watch> {
        let spec = job.timing.sequential.clone()?;
        let time_based = job.time_based && job.runtime.is_some();
        let bytes = match job.size {
            Some(SizeSpec::Bytes(b)) => b.saturating_mul(u64::from(job.loops.max(1))),
            _ => 0,
        };
        let (full, floor, full_ios) = if time_based {
            let ms = job.runtime.map_or(0, |r| r.as_millis() as u64);
            (ms, FLOOR_NS / 1_000_000, None)
        } else {
            (
                bytes,
                bytes / FLOOR_SHARE,
                Some(bytes / job.unit_bs().max(1)),
            )
        };
        if full == 0 {
            return None;
        }
        let alpha = (1.0 - spec.confidence) / spec.thresholds().max(1) as f64;
        let risk = Risk {
            alpha,
            margin: spec.margin,
            full,
            floor: floor.max(1).min(full),
            growth: GROWTH,
        };
        let rate_risk = if time_based {
            Risk {
                floor: RATE_FLOOR_MS.min(full),
                ..risk
            }
        } else {
            risk
        };
        let mut thresholds = Vec::new();
        for w in &spec.watch {
            for &t in &w.thresholds {
                let rule = match w.metric {
                    WatchedMetric::SyncQuantile(q) => Rule::Quantile {
                        q,
                        rec: 3,
                        rule: QuantileRule::new(q, t, risk),
                    },
                    WatchedMetric::WriteQuantile(q) => Rule::Quantile {
                        q,
                        rec: DDIR_WRITE,
                        rule: QuantileRule::new(q, t, risk),
                    },
                    WatchedMetric::Iops(dir) => Rule::Rate {
                        dir: dir.min(2),
                        rule: RateRule::new(t, SLICE_NS as f64 / 1e9, rate_risk),
                    },
                };
                thresholds.push(Threshold {
                    seen: Vec::with_capacity(match w.metric {
                        WatchedMetric::SyncQuantile(_) | WatchedMetric::WriteQuantile(_) => {
                            MAX_SEEN
                        }
                        WatchedMetric::Iops(_) => 0,
                    }),
                    key: w.key.clone(),
                    value: t,
                    rule,
                    side: Side::Undecided,
                    bound: None,
                });
            }
        }
        let cap = (full_secs(time_based, full) * 1e9 / SLICE_NS as f64) as usize + 16;
        Some(Watch {
            spec,
            published,
            status,
            time_based,
            full,
            full_ios,
            thresholds,
            alpha_look: risk.alpha_per_look(),
            slices: std::array::from_fn(|_| Vec::with_capacity(cap.min(1 << 16))),
            last_ios: [0; 3],
            next_slice: 0,
            meas_start: 0,
            decided_at: None,
            done: false,
            ended: (0, 0),
        })
    }

    /// When the monitor must wake next for this watch.
    pub(crate) fn next_wake(&self) -> u64 {
        if self.done || self.decided_at.is_some() || self.next_slice == 0 {
            u64::MAX
        } else {
            self.next_slice
        }
    }

    /// Called at every monitor wake-up; true once every threshold is decided (the job's own
    /// stop flag is then set by the control).
    pub(crate) fn poll(&mut self, now: u64) -> bool {
        if self.done || self.decided_at.is_some() {
            return false;
        }
        let p = self.published.clone();
        let phase = p.phase.load(Ordering::Acquire);
        if phase == PHASE_DONE {
            self.done = true;
            self.ended = (self.ios(), p.end_ns.load(Ordering::Relaxed));
            return false;
        }
        if phase != PHASE_MEASURING {
            return false;
        }
        if self.next_slice == 0 {
            // Counters restart when measurement starts (after ramp_time): slices count from here.
            self.meas_start = p.meas_start_ns.load(Ordering::Relaxed);
            self.next_slice = self.meas_start + SLICE_NS;
            return false;
        }
        if now < self.next_slice {
            return false;
        }
        self.slice(now);
        // Before the floor the counts are only remembered (for the recent-third check).
        let judge = now.saturating_sub(self.meas_start) >= FLOOR_NS;
        let progress = if self.time_based {
            (now - self.meas_start) / 1_000_000
        } else {
            (0..3).map(|d| p.bytes[d].load(Ordering::Relaxed)).sum()
        };
        self.look(progress, now - self.meas_start, judge);
        if judge && self.thresholds.iter().all(|t| t.side != Side::Undecided) {
            // Decided at the recipe's last look is not stopping early: the run was whole.
            if progress < self.full {
                self.decided_at = Some((self.ios(), now));
                return true;
            }
            self.done = true;
            self.ended = (self.ios(), now);
        }
        false
    }

    /// Closes the slices that ended by `now`: a late wake-up spreads its I/Os evenly.
    fn slice(&mut self, now: u64) {
        let n = 1 + (now - self.next_slice) / SLICE_NS;
        for d in 0..3 {
            let ios = self.published.ios[d].load(Ordering::Relaxed);
            let delta = ios.saturating_sub(self.last_ios[d]);
            self.last_ios[d] = ios;
            for k in 0..n {
                self.slices[d].push(delta / n + u64::from(k < delta % n));
            }
        }
        self.next_slice += n * SLICE_NS;
    }

    fn look(&mut self, progress: u64, measured_ns: u64, judge: bool) {
        let alpha_look = self.alpha_look;
        let snap = self.status.as_ref().map(|s| s.read().0);
        for t in self.thresholds.iter_mut() {
            match &mut t.rule {
                Rule::Quantile { q, rec, rule } => {
                    let Some(rec) = snap.as_ref().map(|s| &s.recs[*rec]) else {
                        continue;
                    };
                    let counts = rec.histogram().counts();
                    let n = rec.count();
                    let (low, high) = rule.edges();
                    let above_low = above(counts, bucket_index(low as u64));
                    let above_high = above(counts, bucket_index(high as u64) + 1);
                    let now = (n, above_low, above_high);
                    if !judge {
                        if t.seen.len() < t.seen.capacity() {
                            t.seen.push(now);
                        }
                        continue;
                    }
                    let side = rule.look(progress, n, above_low, above_high);
                    t.side = if steady(&t.seen, now, 1.0 - *q, side) {
                        side
                    } else {
                        // Vetoed: the look's risk is spent, and only a later look decides.
                        rule.undecide();
                        Side::Undecided
                    };
                    if t.seen.len() < t.seen.capacity() {
                        t.seen.push(now);
                    }
                    if t.side != Side::Undecided && t.bound.is_none() {
                        t.bound = quantile_bound(counts, n, *q, alpha_look / 2.0, t.side);
                    }
                }
                // A rate waits 3 s whatever the recipe's measure (see RATE_FLOOR_MS).
                Rule::Rate { .. } if !judge || measured_ns < RATE_FLOOR_MS * 1_000_000 => {}
                Rule::Rate { dir, rule } => {
                    t.side = rule.look(progress, &self.slices[*dir]);
                    if t.side != Side::Undecided && t.bound.is_none() {
                        t.bound = rule.interval().map(|(lo, hi)| match t.side {
                            Side::Below => hi,
                            _ => lo,
                        });
                    }
                }
            }
        }
    }

    /// I/Os completed so far, every direction (with fdatasync=1 as many syncs as writes).
    fn ios(&self) -> u64 {
        let p = &self.published;
        (0..3).map(|d| p.ios[d].load(Ordering::Relaxed)).sum()
    }

    /// The run's course, for the job's report.
    pub(crate) fn report(&self) -> SequentialRun {
        let (ios, end) = match (self.decided_at, self.done) {
            (Some(at), _) => at,
            (None, true) => self.ended,
            (None, false) => (self.ios(), self.published.end_ns.load(Ordering::Relaxed)),
        };
        // A job that ended before the watch saw it measure: its start is published all the same.
        let start = match self.meas_start {
            0 => self.published.meas_start_ns.load(Ordering::Relaxed),
            s => s,
        };
        let seconds = if start > 0 && end > start {
            (end - start) as f64 / 1e9
        } else {
            0.0
        };
        SequentialRun {
            stopped_early: self.decided_at.is_some(),
            confidence: self.spec.confidence,
            margin: self.spec.margin,
            ios,
            seconds,
            full_ios: self.full_ios,
            full_seconds: self
                .time_based
                .then(|| full_secs(self.time_based, self.full)),
            decisions: self
                .thresholds
                .iter()
                .map(|t| ThresholdDecision {
                    metric: t.key.clone(),
                    threshold: t.value,
                    side: match t.side {
                        Side::Undecided => ReportSide::Undecided,
                        Side::Below => ReportSide::Below,
                        Side::Above => ReportSide::Above,
                    },
                    bound: t.bound,
                    looks: match &t.rule {
                        Rule::Quantile { rule, .. } => rule.looks(),
                        Rule::Rate { rule, .. } => rule.looks(),
                    },
                })
                .collect(),
        }
    }
}

fn full_secs(time_based: bool, full: u64) -> f64 {
    if time_based {
        full as f64 / 1e3
    } else {
        0.0
    }
}

/// Looks remembered for the recent-third check (a look per 100 ms: over 10 minutes).
const MAX_SEEN: usize = 8192;

/// A percentile's decision stands only if the most recent third of the samples agrees with
/// it on its own (its share above the edge on the same side of `tail`, the share the
/// percentile leaves above it): a disk that slowed down midway is not judged by its fast start.
fn steady(seen: &[(u64, u64, u64)], now: (u64, u64, u64), tail: f64, side: Side) -> bool {
    let two_thirds = now.0 / 3 * 2;
    let Some(&(n0, low0, high0)) = seen.iter().rev().find(|s| s.0 <= two_thirds) else {
        return side == Side::Undecided;
    };
    let n = now.0.saturating_sub(n0).max(1) as f64;
    match side {
        Side::Below => (now.1.saturating_sub(low0)) as f64 / n <= tail,
        Side::Above => (now.2.saturating_sub(high0)) as f64 / n >= tail,
        Side::Undecided => true,
    }
}

/// Samples in buckets `from..`.
fn above(counts: &[u64], from: usize) -> u64 {
    counts.get(from..).map_or(0, |c| c.iter().sum())
}

/// The order-statistic bound that decided a percentile: an upper bound (the top of the bucket
/// holding the rank) when below, a lower bound (the bucket's bottom) when above.
fn quantile_bound(counts: &[u64], n: u64, q: f64, alpha: f64, side: Side) -> Option<f64> {
    let (rank, upper) = match side {
        Side::Below => (quantile_upper_rank(n, q, alpha)?, true),
        Side::Above => (quantile_lower_rank(n, q, alpha)?, false),
        Side::Undecided => return None,
    };
    let mut seen = 0u64;
    for (i, &c) in counts.iter().enumerate() {
        seen += c;
        if seen >= rank {
            let v = if upper {
                bucket_low(i) + bucket_width(i) - 1
            } else {
                bucket_low(i)
            };
            return Some(v as f64);
        }
    }
    None
}

#[cfg(test)]
#[path = "sequential_tests.rs"]
mod tests;
