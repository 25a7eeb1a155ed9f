//! Periodic bandwidth / IOPS samples (fio's `bw (KiB/s): min=…, samples=N` and `iops : …` lines,
//! JSON `bw_min … bw_samples`, `iops_min … iops_samples`), plus the whole series for charts.
//!
//! The monitor thread calls [`PeriodicSampler::observe`] with the time since the job's
//! measurement start and the job's cumulative byte (or I/O) counter. Deadlines are absolute:
//! k·interval_ms for k = 1, 2, …, so a late wake-up does not shift later samples (no drift).
//!
//! Rules (with the fio 3.33 behaviour they mirror or deliberately change):
//! - An observation before the next deadline is ignored (the monitor may poll more often, e.g.
//!   every 250 ms for disk stats). An observation at or after it closes the interval that began
//!   at the previous sample: value = Δcounter·1000 / Δt_ms (÷1024 for KiB/s), computed in f64.
//!   fio truncates each sample to an integer; we keep the fraction (≤ 1 unit of difference).
//! - If the monitor oversleeps past several deadlines, the one long interval yields one sample
//!   (its rate is still correct); the next deadline is the first multiple after that time.
//! - Zero-value intervals: fio skips them (`No entries for interval`), which is what keeps a
//!   write-only job from reporting read samples of 0, but it also hides stalls. iogauge follows
//!   fio for the summary (min/max/mean/stddev/samples exclude zero intervals, so the numbers
//!   match fio's) and keeps them in the series with value 0; [`PeriodicSampler::zero_intervals`]
//!   counts them so a verdict can report stalls.
//! - The trailing partial interval is never sampled: at the end the runner calls `observe`
//!   once more with the final time and counter, and it is sampled only if that time reached
//!   the next deadline (i.e. the interval completed). fio additionally tends to lose the last
//!   complete interval (5 s at 500 ms gives 9 samples in fio, 10 here when the job runs its full
//!   5 s).
//! - group_reporting: fio 3.33 *adds* the per-job sample statistics (min = Σ mins, max = Σ maxes,
//!   mean = Σ means, S = Σ S, samples = Σ samples; stddev = √(ΣS/(Σsamples−1))), so the group line
//!   describes the aggregate throughput, not a pooled population. Checked with
//!   `fio --group_reporting --numjobs=2 --ioengine=null --time_based --runtime=3 --log_avg_msec=500`
//!   and the per-job bw logs: group bw_min 37580448 = 18092192 + 19488256, bw_samples 10 = 5 + 5,
//!   bw_dev 1094623.79 = √((S₁+S₂)/9). [`SampleStats::sum_fio`] mirrors that;
//!   [`SampleStats::pooled`] combines populations exactly (Chan et al.) for iogauge's own views,
//!   and [`aggregate_series`] builds the true aggregate series (sum per deadline).

use crate::report::{SampleSummary, SeriesPoint};

/// What the counter counts and how a sample is expressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleUnit {
    /// Counter in bytes, samples in KiB/s (fio `bw`).
    KiBPerSec,
    /// Counter in I/Os, samples in I/Os per second (fio `iops`).
    PerSec,
}

impl SampleUnit {
    fn divisor(self) -> f64 {
        match self {
            SampleUnit::KiBPerSec => 1024.0,
            SampleUnit::PerSec => 1.0,
        }
    }
}

/// Welford running statistics of samples: count, min, max, mean and S = Σ(x − mean)².
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SampleStats {
    pub n: u64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub m2: f64,
}

impl SampleStats {
    pub fn add(&mut self, x: f64) {
        if self.n == 0 {
            *self = SampleStats {
                n: 1,
                min: x,
                max: x,
                mean: x,
                m2: 0.0,
            };
            return;
        }
        self.n += 1;
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        let delta = x - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (x - self.mean);
    }

    /// Sample standard deviation (n − 1), as fio.
    pub fn stddev(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            (self.m2.max(0.0) / (self.n - 1) as f64).sqrt()
        }
    }

    /// min/max are reported as the integers that bracket the exact values (floor / ceil), so
    /// min ≤ mean ≤ max always holds.
    pub fn summary(&self) -> SampleSummary {
        if self.n == 0 {
            return SampleSummary::default();
        }
        SampleSummary {
            min: self.min.max(0.0).floor() as u64,
            max: self.max.max(0.0).ceil() as u64,
            mean: self.mean,
            stddev: self.stddev(),
            samples: self.n,
        }
    }

    /// fio 3.33's group_reporting rule for bw/iops samples: every field is summed over the jobs
    /// that have samples (see the module docs for the evidence).
    pub fn sum_fio(parts: &[SampleStats]) -> SampleStats {
        parts
            .iter()
            .filter(|p| p.n > 0)
            .fold(SampleStats::default(), |acc, p| {
                if acc.n == 0 {
                    *p
                } else {
                    SampleStats {
                        n: acc.n + p.n,
                        min: acc.min + p.min,
                        max: acc.max + p.max,
                        mean: acc.mean + p.mean,
                        m2: acc.m2 + p.m2,
                    }
                }
            })
    }

    /// Exact combination of sample populations (parallel Welford / Chan et al.): the result
    /// equals adding every sample of every part to one `SampleStats`.
    pub fn pooled(parts: &[SampleStats]) -> SampleStats {
        parts
            .iter()
            .filter(|p| p.n > 0)
            .fold(SampleStats::default(), |acc, p| {
                if acc.n == 0 {
                    return *p;
                }
                let n = acc.n + p.n;
                let delta = p.mean - acc.mean;
                SampleStats {
                    n,
                    min: acc.min.min(p.min),
                    max: acc.max.max(p.max),
                    mean: acc.mean + delta * p.n as f64 / n as f64,
                    m2: acc.m2 + p.m2 + delta * delta * (acc.n as f64 * p.n as f64) / n as f64,
                }
            })
    }
}

/// Periodic sampler of one counter (one direction's bytes or I/Os of one job). Not on the hot
/// path: the monitor thread owns it; the series `Vec` grows as samples arrive.
#[derive(Debug, Clone)]
pub struct PeriodicSampler {
    interval_ms: u64,
    unit: SampleUnit,
    last_t_ms: u64,
    last_value: u64,
    next_deadline_ms: u64,
    stats: SampleStats,
    series: Vec<SeriesPoint>,
    zero_intervals: u64,
}

impl PeriodicSampler {
    /// Baseline: time 0, counter 0. Use [`PeriodicSampler::rebase`] when the counter does not
    /// start at 0 (e.g. it kept counting through ramp_time). An interval of 0 is treated as 1 ms.
    pub fn new(interval_ms: u64, unit: SampleUnit) -> Self {
        let interval_ms = interval_ms.max(1);
        PeriodicSampler {
            interval_ms,
            unit,
            last_t_ms: 0,
            last_value: 0,
            next_deadline_ms: interval_ms,
            stats: SampleStats::default(),
            series: Vec::new(),
            zero_intervals: 0,
        }
    }

    /// Forget all samples and restart the deadlines from `t_ms` with counter `value`
    /// (end of ramp_time: call with the measurement start, t_ms = 0).
    pub fn rebase(&mut self, t_ms: u64, value: u64) {
        self.last_t_ms = t_ms;
        self.last_value = value;
        self.next_deadline_ms = t_ms + self.interval_ms;
        self.stats = SampleStats::default();
        self.series.clear();
        self.zero_intervals = 0;
    }

    pub fn interval_ms(&self) -> u64 {
        self.interval_ms
    }

    /// When the monitor should observe next (ms since measurement start).
    pub fn next_deadline_ms(&self) -> u64 {
        self.next_deadline_ms
    }

    /// Feed the cumulative counter at `t_ms`. Returns the new sample when an interval closed.
    pub fn observe(&mut self, t_ms: u64, cumulative: u64) -> Option<SeriesPoint> {
        if t_ms < self.next_deadline_ms {
            return None;
        }
        // t_ms ≥ next deadline > last_t_ms, so dt ≥ 1.
        let dt = (t_ms - self.last_t_ms) as f64;
        let dv = cumulative.saturating_sub(self.last_value);
        let value = dv as f64 * 1000.0 / dt / self.unit.divisor();
        let point = SeriesPoint { t_ms, value };
        self.series.push(point);
        if dv == 0 {
            self.zero_intervals += 1;
        } else {
            self.stats.add(value);
        }
        self.last_t_ms = t_ms;
        self.last_value = cumulative;
        self.next_deadline_ms = (t_ms / self.interval_ms + 1) * self.interval_ms;
        Some(point)
    }

    /// fio-compatible summary (zero intervals excluded).
    pub fn summary(&self) -> SampleSummary {
        self.stats.summary()
    }

    pub fn stats(&self) -> &SampleStats {
        &self.stats
    }

    /// Every closed interval, zero ones included.
    pub fn series(&self) -> &[SeriesPoint] {
        &self.series
    }

    /// Closed intervals in which the counter did not move (kept in the series, not in the
    /// summary).
    pub fn zero_intervals(&self) -> u64 {
        self.zero_intervals
    }
}

/// Sum several jobs' series into the group's aggregate series: points are matched by deadline
/// number (t_ms / interval_ms) and reported at that deadline. A job without a point for some
/// deadline (it had not started, had finished, or its monitor overslept) contributes nothing.
pub fn aggregate_series(series: &[&[SeriesPoint]], interval_ms: u64) -> Vec<SeriesPoint> {
    let interval_ms = interval_ms.max(1);
    let mut sums: std::collections::BTreeMap<u64, f64> = std::collections::BTreeMap::new();
    for s in series {
        for p in s.iter() {
            *sums.entry(p.t_ms / interval_ms).or_insert(0.0) += p.value;
        }
    }
    sums.into_iter()
        .map(|(k, value)| SeriesPoint {
            t_ms: k * interval_ms,
            value,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_on_absolute_deadlines() {
        let mut s = PeriodicSampler::new(500, SampleUnit::KiBPerSec);
        // monitor polls every 250 ms, a little late each time; 1 KiB per ms
        let mut points = 0;
        for k in 1..=20u64 {
            let t = k * 250 + 3;
            let bytes = t * 1024;
            if s.observe(t, bytes).is_some() {
                points += 1;
            }
        }
        assert_eq!(points, 10);
        let ts: Vec<u64> = s.series().iter().map(|p| p.t_ms).collect();
        assert_eq!(ts[0], 503);
        assert_eq!(ts[9], 5003); // lateness does not accumulate
        for p in s.series() {
            assert!((p.value - 1000.0).abs() < 1e-9, "{}", p.value);
        }
        let sum = s.summary();
        assert_eq!(sum.samples, 10);
        assert_eq!((sum.min, sum.max), (1000, 1000));
    }

    #[test]
    fn trailing_partial_interval_is_not_sampled() {
        let mut s = PeriodicSampler::new(500, SampleUnit::PerSec);
        assert!(s.observe(500, 100).is_some());
        assert!(s.observe(1000, 200).is_some());
        // job ends at 1400 ms: partial interval
        assert!(s.observe(1400, 290).is_none());
        assert_eq!(s.summary().samples, 2);
        assert_eq!(s.series().len(), 2);
        assert_eq!(s.series()[1].value, 200.0);
    }

    #[test]
    fn overslept_monitor_gives_one_long_sample() {
        let mut s = PeriodicSampler::new(500, SampleUnit::PerSec);
        s.observe(500, 500);
        let p = s.observe(1730, 1730).unwrap(); // missed 1000 and 1500
        assert!((p.value - 1000.0).abs() < 1e-9);
        assert_eq!(s.next_deadline_ms(), 2000);
        assert!(s.observe(1999, 2000).is_none());
        assert!(s.observe(2000, 2000).is_some());
    }

    #[test]
    fn zero_intervals_stay_in_series_not_in_summary() {
        let mut s = PeriodicSampler::new(100, SampleUnit::PerSec);
        s.observe(100, 10); // 100 IOPS
        s.observe(200, 10); // stall
        s.observe(300, 30); // 200 IOPS
        assert_eq!(s.series().len(), 3);
        assert_eq!(s.series()[1].value, 0.0);
        assert_eq!(s.zero_intervals(), 1);
        let sum = s.summary();
        assert_eq!((sum.samples, sum.min, sum.max), (2, 100, 200));
        assert!((sum.mean - 150.0).abs() < 1e-9);
        assert!((sum.stddev - 70.710678118654).abs() < 1e-6);
    }

    #[test]
    fn rebase_forgets_and_restarts_deadlines() {
        let mut s = PeriodicSampler::new(500, SampleUnit::PerSec);
        s.observe(500, 1000);
        s.rebase(0, 5000);
        assert!(s.series().is_empty());
        assert_eq!(s.next_deadline_ms(), 500);
        let p = s.observe(500, 5100).unwrap();
        assert_eq!(p.value, 200.0);
    }

    /// The fio 3.33 numbers recorded in the module docs.
    #[test]
    fn group_sum_mirrors_fio() {
        let a = [18092192.0, 20890160.0, 21462248.0, 19995584.0, 21415144.0];
        let b = [20853843.0, 21630200.0, 21507416.0, 19488256.0, 20953904.0];
        let mut sa = SampleStats::default();
        let mut sb = SampleStats::default();
        a.iter().for_each(|&x| sa.add(x));
        b.iter().for_each(|&x| sb.add(x));
        let g = SampleStats::sum_fio(&[sa, SampleStats::default(), sb]).summary();
        assert_eq!(g.samples, 10);
        assert_eq!(g.min, 37580448);
        assert_eq!(g.max, 43092448);
        assert!((g.mean - 41257789.4).abs() < 1e-3);
        assert!((g.stddev - 1094623.792769).abs() < 1e-3);
    }

    #[test]
    fn pooled_equals_one_population() {
        let a = [1.0, 5.0, 9.0, 2.5];
        let b = [100.0, 3.0, 7.0];
        let (mut sa, mut sb, mut all) = (
            SampleStats::default(),
            SampleStats::default(),
            SampleStats::default(),
        );
        a.iter().for_each(|&x| {
            sa.add(x);
            all.add(x)
        });
        b.iter().for_each(|&x| {
            sb.add(x);
            all.add(x)
        });
        let p = SampleStats::pooled(&[sa, sb]);
        assert_eq!((p.n, p.min, p.max), (all.n, all.min, all.max));
        assert!((p.mean - all.mean).abs() < 1e-12);
        assert!((p.stddev() - all.stddev()).abs() < 1e-12);
        assert_eq!(SampleStats::pooled(&[]).summary(), SampleSummary::default());
    }

    #[test]
    fn aggregate_by_deadline() {
        let a = [
            SeriesPoint {
                t_ms: 500,
                value: 1.0,
            },
            SeriesPoint {
                t_ms: 1001,
                value: 2.0,
            },
        ];
        let b = [SeriesPoint {
            t_ms: 502,
            value: 10.0,
        }];
        let g = aggregate_series(&[&a, &b], 500);
        assert_eq!(
            g,
            vec![
                SeriesPoint {
                    t_ms: 500,
                    value: 11.0
                },
                SeriesPoint {
                    t_ms: 1000,
                    value: 2.0
                }
            ]
        );
    }
}
