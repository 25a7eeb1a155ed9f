//! Periodic bandwidth / IOPS samples (fio's `bw (KiB/s): min=…, samples=N` and `iops : …` lines,
//! JSON `bw_min … bw_samples`, `iops_min … iops_samples`), plus the whole series for charts.
//!
//! The monitor thread reads each job's cumulative byte (and I/O) counters at deadlines that are
//! absolute: k·interval_ms after the measurement start, for k = 1, 2, …, so a late wake-up does
//! not shift later samples (no drift). `run::assemble` replays those [`Reading`]s through
//! [`PeriodicSampler::from_trace`], which applies fio's rule for the end of the job.
//!
//! Rules (with the fio 3.33 behaviour they mirror or deliberately change):
//! - An observation before the next deadline is ignored. An observation at or after it closes
//!   the interval that began at the previous observation: value = Δcounter / Δt over the times
//!   the counter was actually read (as fio's `__add_samples`, which divides by the ms since its
//!   previous sample), computed in f64 (fio truncates each sample to an integer: ≤ 1 unit apart).
//! - If the monitor oversleeps past several deadlines, the one long interval yields one sample
//!   (its rate is still correct); the next deadline is the first multiple after that time.
//! - Zero-value intervals: fio skips them (`No entries for interval`), which is what keeps a
//!   write-only job from reporting read samples of 0, but it also hides stalls. iogauge follows
//!   fio for the summary (min/max/mean/stddev/samples exclude zero intervals, so the numbers
//!   match fio's) and keeps them in the series with value 0, so that stalls stay visible.
//! - The end of the job ([`PeriodicSampler::from_trace`], [`MeasuredEnd`]): fio's helper thread
//!   samples a job only while it is running (`calc_log_samples` skips a thread whose runstate is
//!   no longer TD_RUNNING) and takes nothing when it stops. When each sample happens depends on
//!   the helper's timers:
//!   - Without ramp_time, sample times drift later than k·interval (`__add_samples` measures
//!     each interval from the previous sample's wake-up; the helper wakes on its 250 ms disk
//!     timer, started before the job, and ≈0.2–1 ms late each time). So the deadline at which a
//!     time-based job's runtime ends is never a fio sample: 3 s at 500 ms gives 5 samples, 10 s
//!     gives 19, 1 s gives 1, 1.2 s gives 2, 3 s at 250 ms 11 (every run, unloaded).
//!     iogauge counts a deadline if it is before the runtime limit and the job was still
//!     measuring 1 ms after it.
//!   - With ramp_time, the end of the ramp restarts the helper's timers (`reset_all_stats` →
//!     `helper_reset`), and a timer fires up to 1 ms early (`eval_timer`'s sleep accuracy), so
//!     samples land on the deadlines, the last one racing the job's end: 1 s after a ramp gives 2
//!     samples in about 4 runs of 5, else 1. iogauge counts the deadlines up to and including the
//!     runtime limit and the job's end.
//!   - Not simulated: a job whose last I/O outlasts fio's drift, or a loaded machine, can give
//!     fio one more; a long run with a short interval can lose a further one to the drift.
//!     iogauge's deadlines do not drift.
//! - Everything after the last counted sample — the trailing partial interval, including an
//!   interval that closes exactly at the end — is [`PeriodicSampler::tail`]: kept for charts,
//!   outside the series and the statistics.
//! - group_reporting: fio 3.33 *adds* the per-job sample statistics (min = Σ mins, max = Σ maxes,
//!   mean = Σ means, S = Σ S, samples = Σ samples; stddev = √(ΣS/(Σsamples−1))), so the group line
//!   describes the aggregate throughput, not a pooled population. Checked with
//!   `fio --group_reporting --numjobs=2 --ioengine=null --time_based --runtime=3 --log_avg_msec=500`
//!   and the per-job bw logs: group bw_min 37580448 = 18092192 + 19488256, bw_samples 10 = 5 + 5,
//!   bw_dev 1094623.79 = √((S₁+S₂)/9). [`SampleStats::sum_fio`] mirrors that, and
//!   [`aggregate_series`] builds the true aggregate series (sum per deadline).

use super::summary::{SampleSummary, SeriesPoint};

/// What the counter counts and how a sample is expressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SampleUnit {
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
pub(crate) struct SampleStats {
    pub n: u64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub m2: f64,
}

impl SampleStats {
    pub(crate) fn add(&mut self, x: f64) {
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
    pub(crate) fn stddev(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            (self.m2.max(0.0) / (self.n - 1) as f64).sqrt()
        }
    }

    /// min/max are reported as the integers that bracket the exact values (floor / ceil), so
    /// min ≤ mean ≤ max always holds.
    pub(crate) fn summary(&self) -> SampleSummary {
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
    pub(crate) fn sum_fio(parts: &[SampleStats]) -> SampleStats {
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
}

/// Periodic sampler of one counter (one direction's bytes or I/Os of one job). Not on the hot
/// path: the monitor thread owns it; the series `Vec` grows as samples arrive.
#[derive(Debug, Clone)]
pub(crate) struct PeriodicSampler {
    interval_ms: u64,
    unit: SampleUnit,
    /// When the counter was last read (ns since the measurement start) and its value then.
    last_at_ns: u64,
    last_value: u64,
    next_deadline_ms: u64,
    stats: SampleStats,
    series: Vec<SeriesPoint>,
    tail: Option<SeriesPoint>,
}

/// One reading of a cumulative counter by the monitor: the deadline it stands for (ms since the
/// measurement start), when it was actually read (ns since the measurement start), the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    pub t_ms: u64,
    pub at_ns: u64,
    pub value: u64,
}

const NS_PER_MS: u64 = 1_000_000;

/// How a job's measured period ended, for [`PeriodicSampler::from_trace`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MeasuredEnd {
    /// From the measurement start (after any ramp) to the end of the job's I/O.
    pub end_ns: u64,
    /// The job's runtime limit (counted after the ramp), if it has one.
    pub runtime_ns: Option<u64>,
    /// The job had a ramp_time, which re-aligns fio's sampling with the deadlines.
    pub after_ramp: bool,
}

impl MeasuredEnd {
    /// Deadlines before this instant are samples (fio's rule, see the module docs).
    fn counted_before_ns(&self) -> u64 {
        let limit = self.runtime_ns.unwrap_or(u64::MAX);
        if self.after_ramp {
            // On the deadline itself: up to and including the runtime limit and the end.
            self.end_ns.min(limit).saturating_add(1)
        } else {
            // Not the runtime's last deadline, and none the job did not outlive by 1 ms.
            self.end_ns.saturating_sub(NS_PER_MS).min(limit)
        }
    }
}

impl PeriodicSampler {
    /// Baseline: time 0, counter 0 (the counters restart at the measurement start, after any
    /// ramp). An interval of 0 is treated as 1 ms.
    pub(crate) fn new(interval_ms: u64, unit: SampleUnit) -> Self {
        let interval_ms = interval_ms.max(1);
        PeriodicSampler {
            interval_ms,
            unit,
            last_at_ns: 0,
            last_value: 0,
            next_deadline_ms: interval_ms,
            stats: SampleStats::default(),
            series: Vec::new(),
            tail: None,
        }
    }

    /// The samples of a job whose measured period ended as `end` says: the monitor's
    /// `readings` that fio would also have taken, then [`PeriodicSampler::finish`] with the
    /// final counter.
    pub(crate) fn from_trace(
        interval_ms: u64,
        unit: SampleUnit,
        readings: impl IntoIterator<Item = Reading>,
        end: MeasuredEnd,
        final_value: u64,
    ) -> Self {
        let mut s = PeriodicSampler::new(interval_ms, unit);
        let (cutoff_ns, end_ns) = (end.counted_before_ns(), end.end_ns);
        for r in readings
            .into_iter()
            .filter(|r| r.t_ms.saturating_mul(NS_PER_MS) < cutoff_ns)
        {
            // A reading taken while the job was closing its files belongs to the job's end.
            s.observe(r.t_ms, r.at_ns.min(end_ns), r.value);
        }
        s.finish(cutoff_ns, end_ns, final_value);
        s
    }

    /// When the monitor should observe next (ms since measurement start).
    #[cfg(test)]
    fn next_deadline_ms(&self) -> u64 {
        self.next_deadline_ms
    }

    /// Feed the cumulative counter read at `at_ns` for deadline `t_ms`. Returns the new sample
    /// when an interval closed.
    pub(crate) fn observe(
        &mut self,
        t_ms: u64,
        at_ns: u64,
        cumulative: u64,
    ) -> Option<SeriesPoint> {
        if t_ms < self.next_deadline_ms {
            return None;
        }
        let point = SeriesPoint {
            t_ms,
            value: self.rate(at_ns, cumulative),
        };
        self.series.push(point);
        if cumulative > self.last_value {
            self.stats.add(point.value);
        }
        self.last_at_ns = self.last_at_ns.max(at_ns);
        self.last_value = cumulative;
        self.next_deadline_ms = (t_ms / self.interval_ms + 1) * self.interval_ms;
        Some(point)
    }

    /// Close the sampler at the end of the job (`end_ns` since the measurement start), where
    /// only deadlines before `cutoff_ns` count. A counted deadline that the monitor missed (it
    /// woke after the job had stopped) becomes one sample up to the end, as fio would have taken
    /// it; what remains after the last sample is the tail, never counted.
    pub(crate) fn finish(&mut self, cutoff_ns: u64, end_ns: u64, cumulative: u64) {
        if self.next_deadline_ms.saturating_mul(NS_PER_MS) < cutoff_ns {
            let missed = (cutoff_ns - 1) / NS_PER_MS / self.interval_ms * self.interval_ms;
            self.observe(missed, end_ns, cumulative);
        } else if end_ns > self.last_at_ns {
            self.tail = Some(SeriesPoint {
                // Labelled with the job's runtime as reported (whole ms, rounded up).
                t_ms: end_ns.div_ceil(NS_PER_MS),
                value: self.rate(end_ns, cumulative),
            });
        }
    }

    /// Δcounter per second since the last reading, in the sampler's unit.
    fn rate(&self, at_ns: u64, cumulative: u64) -> f64 {
        let dt_ns = at_ns.saturating_sub(self.last_at_ns).max(1) as f64;
        let dv = cumulative.saturating_sub(self.last_value) as f64;
        dv * 1e9 / dt_ns / self.unit.divisor()
    }

    /// fio-compatible summary (zero intervals and the tail excluded).
    #[cfg(test)]
    fn summary(&self) -> SampleSummary {
        self.stats.summary()
    }

    pub(crate) fn stats(&self) -> &SampleStats {
        &self.stats
    }

    /// Every counted deadline, zero intervals included; not the tail.
    pub(crate) fn series(&self) -> &[SeriesPoint] {
        &self.series
    }

    /// The trailing interval after the last sample, up to the end of the job (labelled with the
    /// job's runtime): kept for charts, never counted, as fio never samples it.
    pub(crate) fn tail(&self) -> Option<SeriesPoint> {
        self.tail
    }
}

/// Sum several jobs' series into the group's aggregate series: points are matched by deadline
/// number (t_ms / interval_ms) and reported at that deadline. A job without a point for some
/// deadline (it had not started, had finished, or its monitor overslept) contributes nothing.
pub(crate) fn aggregate_series(series: &[&[SeriesPoint]], interval_ms: u64) -> Vec<SeriesPoint> {
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

/// The group's tail: the members' tail rates summed (they end within a few ms of one another in
/// a group that runs together), labelled with the latest end.
pub(crate) fn aggregate_tail(tails: &[Option<SeriesPoint>]) -> Option<SeriesPoint> {
    tails.iter().flatten().fold(None, |acc, t| {
        Some(match acc {
            None => *t,
            Some(a) => SeriesPoint {
                t_ms: a.t_ms.max(t.t_ms),
                value: a.value + t.value,
            },
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = NS_PER_MS;

    fn ended(end_ns: u64, runtime_ns: Option<u64>) -> MeasuredEnd {
        MeasuredEnd {
            end_ns,
            runtime_ns,
            after_ramp: false,
        }
    }

    /// What the monitor records for a counter growing by `per_ms` per millisecond: one reading
    /// per deadline up to `upto_ms`, each taken `late_ns` after its deadline.
    fn readings(interval_ms: u64, upto_ms: u64, late_ns: u64, per_ms: u64) -> Vec<Reading> {
        (1..)
            .map(|k| k * interval_ms)
            .take_while(|&t| t <= upto_ms)
            .map(|t| {
                let at_ns = t * MS + late_ns;
                Reading {
                    t_ms: t,
                    at_ns,
                    value: at_ns * per_ms / MS,
                }
            })
            .collect()
    }

    #[test]
    fn samples_on_absolute_deadlines_over_actual_intervals() {
        // Every reading 3 ms late; 1 KiB per ms. The labels stay on k·500 (no drift) and each
        // rate uses the times the counter was read, so every sample is exactly 1000 KiB/s.
        let r = readings(500, 5000, 3 * MS, 1024);
        let s = PeriodicSampler::from_trace(
            500,
            SampleUnit::KiBPerSec,
            r,
            ended(5200 * MS, None),
            5200 * 1024,
        );
        let ts: Vec<u64> = s.series().iter().map(|p| p.t_ms).collect();
        assert_eq!(ts, (1..=10).map(|k| k * 500).collect::<Vec<_>>());
        for p in s.series() {
            assert!((p.value - 1000.0).abs() < 1e-9, "{}", p.value);
        }
        let sum = s.summary();
        assert_eq!(sum.samples, 10);
        assert_eq!((sum.min, sum.max), (1000, 1000));
    }

    /// fio's counts for time-based runs (measured with fio 3.33, null engine): the deadline at
    /// which the job's runtime ends is not a sample, even when the job stops a few ms late.
    #[test]
    fn counts_match_fio_for_time_based_runs() {
        for (runtime_ms, interval_ms, fio_samples) in [
            (1000, 500, 1),
            (3000, 500, 5),
            (10_000, 500, 19),
            (1200, 500, 2),
            (3000, 250, 11),
            (3000, 1000, 2),
            (2000, 250, 7),
            (1000, 1000, 0),
        ] {
            // The job notices its runtime 20 µs after the deadline, or 4 ms late when it was
            // not on a CPU then; the monitor read the counter at that deadline too.
            for overshoot_ns in [20_000, 4 * MS] {
                let end_ns = runtime_ms * MS + overshoot_ns;
                let r = readings(interval_ms, runtime_ms, 10_000, 7);
                let s = PeriodicSampler::from_trace(
                    interval_ms,
                    SampleUnit::PerSec,
                    r,
                    ended(end_ns, Some(runtime_ms * MS)),
                    end_ns * 7 / MS,
                );
                let what = format!("{runtime_ms} ms at {interval_ms} ms, +{overshoot_ns} ns");
                assert_eq!(s.summary().samples, fio_samples, "{what}");
                assert_eq!(s.series().len() as u64, fio_samples, "{what}");
                // The rest of the run is the tail, labelled with the reported runtime.
                let tail = s.tail().expect("tail");
                assert_eq!(tail.t_ms, end_ns.div_ceil(MS), "{what}");
                assert!((tail.value / 7000.0 - 1.0).abs() < 1e-3, "{}", tail.value);
            }
        }
    }

    /// After a ramp, fio samples on the deadlines, so the runtime's last one usually counts
    /// (1 s after a 300 ms ramp: 2 samples in 8 runs of 10). The job stops 20 µs after it, before
    /// the monitor could read it: that interval is closed at the job's end.
    #[test]
    fn after_a_ramp_the_runtimes_last_deadline_counts() {
        for (runtime_ms, interval_ms, fio_usually) in [
            (1000, 500, 2),
            (3000, 500, 6),
            (3000, 250, 12),
            (3000, 1000, 3),
        ] {
            let end_ns = runtime_ms * MS + 20_000;
            let r = readings(interval_ms, runtime_ms - 1, 10_000, 7);
            let end = MeasuredEnd {
                end_ns,
                runtime_ns: Some(runtime_ms * MS),
                after_ramp: true,
            };
            let s = PeriodicSampler::from_trace(
                interval_ms,
                SampleUnit::PerSec,
                r,
                end,
                end_ns * 7 / MS,
            );
            assert_eq!(
                s.summary().samples,
                fio_usually,
                "{runtime_ms} at {interval_ms}"
            );
            assert_eq!(s.series().last().map(|p| p.t_ms), Some(runtime_ms));
            assert_eq!(s.tail(), None);
        }
        // A size-based job that ends 0.5 ms before a deadline does not reach it.
        let r = readings(500, 2500, 0, 1);
        let end = MeasuredEnd {
            end_ns: 2_999_500_000,
            runtime_ns: None,
            after_ramp: true,
        };
        let s = PeriodicSampler::from_trace(500, SampleUnit::PerSec, r, end, 2999);
        assert_eq!(s.summary().samples, 5);
        assert!(s.tail().is_some());
    }

    #[test]
    fn a_job_that_outlives_a_deadline_by_a_millisecond_is_sampled_there() {
        // A size-based job whose last I/O completes at 3004.5 ms: fio's helper thread, waking a
        // little after 3000 ms, still finds it running. At 3000.5 ms it would not.
        let r = readings(500, 3000, 50_000, 2);
        let s = PeriodicSampler::from_trace(
            500,
            SampleUnit::PerSec,
            r,
            ended(3_004_500_000, None),
            6009,
        );
        assert_eq!(s.summary().samples, 6);
        assert_eq!(s.tail().map(|t| t.t_ms), Some(3005));
        let r = readings(500, 3000, 50_000, 2);
        let s = PeriodicSampler::from_trace(
            500,
            SampleUnit::PerSec,
            r,
            ended(3_000_500_000, None),
            6001,
        );
        assert_eq!(s.summary().samples, 5);
    }

    #[test]
    fn deadline_missed_by_the_monitor_closes_at_the_end() {
        // The monitor woke after the job had finished at 1700 ms: 1500 ms was outlived by
        // 200 ms, so it is a sample (fio's would be), over 1000 → 1700 ms; nothing is left over.
        let r = readings(500, 1000, 0, 1);
        let s =
            PeriodicSampler::from_trace(500, SampleUnit::PerSec, r, ended(1700 * MS, None), 1700);
        assert_eq!(s.summary().samples, 3);
        let last = s.series()[2];
        assert_eq!(last.t_ms, 1500);
        assert!((last.value - 1000.0).abs() < 1e-9);
        assert_eq!(s.tail(), None);
    }

    #[test]
    fn reading_during_close_is_clamped_to_the_end() {
        // The job stopped at 1800.2 ms; the monitor, late, read the 1500 ms deadline at
        // 1800.5 ms while the job was still closing its files. The interval ends at the job's
        // end, and nothing is left for a tail.
        let mut r = readings(500, 1000, 0, 1);
        r.push(Reading {
            t_ms: 1500,
            at_ns: 1_800_500_000,
            value: 1800,
        });
        let s = PeriodicSampler::from_trace(
            500,
            SampleUnit::PerSec,
            r,
            ended(1_800_200_000, None),
            1800,
        );
        assert_eq!(s.summary().samples, 3);
        let v = s.series()[2].value;
        assert!((v - 800.0 / 0.8002).abs() < 1e-6, "{v}");
        assert_eq!(s.tail(), None);
    }

    #[test]
    fn overslept_monitor_gives_one_long_sample() {
        let mut s = PeriodicSampler::new(500, SampleUnit::PerSec);
        s.observe(500, 500 * MS, 500);
        let p = s.observe(1500, 1730 * MS, 1730).unwrap(); // woke at 1730: missed 1000
        assert!((p.value - 1000.0).abs() < 1e-9);
        assert_eq!(s.next_deadline_ms(), 2000);
        assert!(s.observe(1500, 1999 * MS, 2000).is_none());
        assert!(s.observe(2000, 2000 * MS, 2000).is_some());
    }

    #[test]
    fn zero_intervals_stay_in_series_not_in_summary() {
        let mut s = PeriodicSampler::new(100, SampleUnit::PerSec);
        s.observe(100, 100 * MS, 10); // 100 IOPS
        s.observe(200, 200 * MS, 10); // stall
        s.observe(300, 300 * MS, 30); // 200 IOPS
        assert_eq!(s.series().len(), 3);
        assert_eq!(s.series()[1].value, 0.0);
        let sum = s.summary();
        assert_eq!((sum.samples, sum.min, sum.max), (2, 100, 200));
        assert!((sum.mean - 150.0).abs() < 1e-9);
        assert!((sum.stddev - 70.710678118654).abs() < 1e-6);
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
