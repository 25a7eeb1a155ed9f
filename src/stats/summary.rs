//! The summaries the statistics produce (latency, periodic samples, depths, CPU, disks): plain
//! data owned here, beside the code that computes them, and re-exported by `report` for the
//! renderers.

/// How a percentile table was computed (iogauge's honesty note; goes under the `iogauge` JSON key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PercentileMethod {
    /// Sorted samples, the value at fio's rank (`stats::latency::fio_rank`): exact.
    Exact,
    /// Log-linear histogram, relative error ≤ 0.5 % (value reported is the bucket midpoint,
    /// clamped into min..max).
    Histogram,
}

impl PercentileMethod {
    pub(crate) fn as_str(&self) -> &'static str {
        match self {
            PercentileMethod::Exact => "exact",
            PercentileMethod::Histogram => "histogram",
        }
    }
}

/// Summary of one latency distribution, in nanoseconds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LatSummary {
    /// Number of latencies recorded (after ramp).
    pub n: u64,
    /// Smallest latency, ns (0 when none).
    pub min: u64,
    /// Largest latency, ns (0 when none).
    pub max: u64,
    /// Mean latency, ns.
    pub mean: f64,
    /// Sample standard deviation (n − 1), as fio.
    pub stddev: f64,
    /// (percentile, value ns) in `percentile_list` order. Empty when percentiles are not reported
    /// for this distribution (fio omits the `percentile` object then).
    pub percentiles: Vec<(f64, u64)>,
    /// How `percentiles` were computed; None when there are none.
    pub method: Option<PercentileMethod>,
    /// Histogram bins (bucket value ns, count) with count > 0, ascending; for `json+`.
    pub bins: Vec<(u64, u64)>,
}

/// Which latency per-interval histograms hold (the one whose percentiles the JSON prints).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntervalLatency {
    /// Completion latency.
    Clat,
    /// Total latency.
    Lat,
}

impl IntervalLatency {
    pub(crate) fn as_str(&self) -> &'static str {
        match self {
            IntervalLatency::Clat => "clat",
            IntervalLatency::Lat => "lat",
        }
    }
}

/// Latency histograms per time interval of the measured period (iogauge's `lat_intervals`).
#[derive(Debug, Clone, PartialEq)]
pub struct LatIntervals {
    /// Interval length: 100 ms, doubled each time a run would need more than 1024 intervals
    /// (or its intervals more than 32 Ki non-empty buckets in all).
    pub interval_ms: u64,
    /// Which latency is counted.
    pub latency: IntervalLatency,
    /// (end ms since the measurement start, [(bucket value ns, count)] of the non-empty buckets,
    /// ascending), one entry per interval from the start, empty intervals included; the last
    /// ends at the end of the measured period.
    pub intervals: Vec<(u64, Vec<(u64, u64)>)>,
}

/// Min/max/mean/stddev of the periodic bandwidth or IOPS samples.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SampleSummary {
    /// Smallest sample (KiB/s or IOPS, rounded down).
    pub min: u64,
    /// Largest sample (KiB/s or IOPS, rounded up).
    pub max: u64,
    /// Mean of the samples.
    pub mean: f64,
    /// Sample standard deviation (n − 1), as fio.
    pub stddev: f64,
    /// Number of samples (intervals without I/O excluded).
    pub samples: u64,
}

/// One periodic sample: end of the interval (ms since the job's measurement start) and value.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SeriesPoint {
    /// End of the interval, ms since the job's measurement start.
    pub t_ms: u64,
    /// The interval's rate: KiB/s or I/Os per second.
    pub value: f64,
}

/// The fio `IO depths` / `submit` / `complete` distributions, as percentages.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DepthReport {
    /// Buckets 1, 2, 4, 8, 16, 32, >=64.
    pub level: [f64; 7],
    /// Buckets 0, 4, 8, 16, 32, 64, >=64.
    pub submit: [f64; 7],
    /// Buckets 0, 4, 8, 16, 32, 64, >=64.
    pub complete: [f64; 7],
}

/// Share of I/Os by completion latency (the `lat (usec): 2=…%` lines), percentages of
/// read+write+trim I/Os. Each label is an exclusive upper bound.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LatencyBuckets {
    /// ≤ 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000 ns
    pub ns: [f64; 10],
    /// ≤ 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000 µs
    pub us: [f64; 10],
    /// ≤ 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000 ms, ≥ 2000 ms
    pub ms: [f64; 12],
}

/// CPU use of the job's threads during the measured period.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CpuReport {
    /// Percent of the job's wall time.
    pub usr_pct: f64,
    /// System CPU time, percent of the job's wall time.
    pub sys_pct: f64,
    /// Voluntary + involuntary context switches.
    pub ctx: u64,
    /// Major page faults.
    pub majf: u64,
    /// Minor page faults.
    pub minf: u64,
}

impl DiskReport {
    /// fio's `aggr*` values for a device with slaves: counters averaged over the slaves (integer
    /// division, as fio) and the highest slave utilisation. None without slaves.
    pub(crate) fn aggr(&self) -> Option<DiskAggr> {
        let n = self.slaves.len() as u64;
        if n == 0 {
            return None;
        }
        let sum = |f: fn(&DiskReport) -> u64| self.slaves.iter().map(f).sum::<u64>() / n;
        Some(DiskAggr {
            read_ios: sum(|d| d.read_ios),
            write_ios: sum(|d| d.write_ios),
            read_merges: sum(|d| d.read_merges),
            write_merges: sum(|d| d.write_merges),
            read_ticks: sum(|d| d.read_ticks),
            write_ticks: sum(|d| d.write_ticks),
            in_queue: sum(|d| d.in_queue),
            util_pct: self
                .slaves
                .iter()
                .map(|d| d.util_pct)
                .fold(0.0, f64::max)
                .min(100.0),
        })
    }
}

/// Averages over a device's slaves (see `DiskReport::aggr`).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct DiskAggr {
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_ticks: u64,
    pub write_ticks: u64,
    pub in_queue: u64,
    pub util_pct: f64,
}

/// One block device's counters over the run (fio `disk_util`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DiskReport {
    /// Device name as in /proc/diskstats (`sda`, `dm-0`, ...).
    pub name: String,
    /// Reads completed on the device over the run (all I/O on it, not only iogauge's).
    pub read_ios: u64,
    /// Writes completed on the device over the run (all I/O on it, not only iogauge's).
    pub write_ios: u64,
    /// Reads merged by the I/O scheduler.
    pub read_merges: u64,
    /// Writes merged by the I/O scheduler.
    pub write_merges: u64,
    /// Time spent on reads, ms (summed over I/Os).
    pub read_ticks: u64,
    /// Time spent on writes, ms (summed over I/Os).
    pub write_ticks: u64,
    /// Weighted time I/Os spent in the queue, ms (diskstats `time_in_queue`).
    pub in_queue: u64,
    /// Percent of the run's wall time the device was busy (0..=100).
    pub util_pct: f64,
    /// For device-mapper / md: the underlying disks, printed as fio's `aggr*` values.
    pub slaves: Vec<DiskReport>,
}
