//! Recorders (latency histograms, counters), periodic sampler, CPU and disk statistics, merging.
//!
//! One concept per file:
//! - `histogram`: log-linear bucket layout (≤ 0.39 % relative error, 1 ns … ≈73 min).
//! - `latency`: [`LatRecorder`], the hot-path latency recorder (exact → histogram percentiles).
//! - `buckets`: fio's coarse `lat (usec): 2=…%` distribution.
//! - `depth`: IO depth / submit / complete distributions.
//! - `periodic`: bandwidth / IOPS samples on absolute deadlines.
//! - `cpu`: per-thread `getrusage` snapshots.
//! - `disk`: block device resolution and `/sys/class/block/*/stat` deltas.

pub mod buckets;
pub mod cpu;
pub mod depth;
pub mod disk;
pub mod histogram;
pub mod latency;
pub mod periodic;
pub mod summary;

pub use buckets::latency_buckets;
pub use cpu::{CpuError, CpuTimes};
pub use depth::DepthCounters;
pub use disk::{
    resolve as resolve_disk, DiskError, DiskSnapshot, DiskStat, DiskTarget, DiskWindow,
};
pub use latency::{sample_budget_for, LatRecorder, DEFAULT_SAMPLE_BUDGET};
pub use periodic::{
    aggregate_series, aggregate_tail, MeasuredEnd, PeriodicSampler, Reading, SampleStats,
    SampleUnit,
};
