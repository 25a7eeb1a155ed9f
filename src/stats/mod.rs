//! Recorders (latency histograms, counters), periodic sampler, CPU and disk statistics, merging.
//!
//! One concept per file:
//! - `histogram`: log-linear bucket layout (≤ 0.39 % relative error, 1 ns … ≈73 min).
//! - `latency`: [`LatRecorder`], the hot-path latency recorder (exact → histogram percentiles).
//! - `buckets`: fio's coarse `lat (usec): 2=…%` distribution.
//! - `intervals`: per-interval latency histograms (100 ms, merged pairwise past 1024).
//! - `depth`: IO depth / submit / complete distributions.
//! - `logs`: fio's bw/iops/lat/histogram logs, streamed to their files as the job runs.
//! - `prio`: command priorities (cmdprio_*) per I/O and latency per priority.
//! - `periodic`: bandwidth / IOPS samples on absolute deadlines.
//! - `cpu`: per-thread `getrusage` snapshots.
//! - `disk`: block device resolution and `/sys/class/block/*/stat` deltas.

pub(crate) mod buckets;
pub(crate) mod cpu;
pub(crate) mod depth;
pub(crate) mod disk;
pub(crate) mod disk_window;
pub(crate) mod histogram;
pub(crate) mod intervals;
pub(crate) mod iolog;
pub(crate) mod latency;
pub(crate) mod log_time;
pub(crate) mod logs;
pub(crate) mod periodic;
pub(crate) mod prio;
pub(crate) mod sequential;
pub(crate) mod sink;
pub(crate) mod summary;

pub(crate) use buckets::latency_buckets;
pub(crate) use cpu::CpuTimes;
pub(crate) use depth::DepthCounters;
pub(crate) use disk::resolve as resolve_disk;
pub(crate) use disk_window::DiskWindow;
pub(crate) use intervals::{interval_latency, merge_intervals, IntervalLogs};
pub(crate) use latency::{sample_budget_for, LatRecorder, DEFAULT_SAMPLE_BUDGET};
pub(crate) use periodic::{
    aggregate_series, aggregate_tail, MeasuredEnd, PeriodicSampler, Reading, SampleStats,
    SampleUnit,
};
