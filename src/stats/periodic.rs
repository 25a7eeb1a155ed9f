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
#[path = "periodic_tests.rs"]
mod tests;
