//! A sequential run (issue 27): the job stops as soon as every threshold it is judged by is
//! decided at the stated confidence, and otherwise runs its full recipe. The job carries only
//! what to watch; the statistics are `stats::sequential`, the watching `run/sequential.rs`.

/// What a sequential run watches, and how sure it must be.
#[derive(Debug, Clone, PartialEq)]
pub struct SequentialSpec {
    /// The metrics and their thresholds.
    pub watch: Vec<Watched>,
    /// Of every decision together (split over the thresholds and the looks), e.g. 0.999.
    pub confidence: f64,
    /// Relative margin around each threshold inside which nothing is decided, e.g. 0.10: a
    /// value that close to a threshold runs the full recipe.
    pub margin: f64,
}

/// One metric and the values it is judged against (pass and warn).
#[derive(Debug, Clone, PartialEq)]
pub struct Watched {
    /// The metric's key as the profile names it (`sync_p99`, `write_iops`), for the result.
    pub key: String,
    /// What the run counts for it.
    pub metric: WatchedMetric,
    /// In the metric's unit: ns for latencies, I/Os per second for rates.
    pub thresholds: Vec<f64>,
}

/// What a watched metric is, in terms the run can count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WatchedMetric {
    /// A percentile (0.99) of the fsync/fdatasync latency.
    SyncQuantile(f64),
    /// A percentile of the write completion latency (`clat`; a synchronous engine's whole
    /// write): what a troubleshoot collector without sync or datasync measures.
    WriteQuantile(f64),
    /// The mean I/O rate of a direction (0 read, 1 write, 2 trim).
    Iops(usize),
}

impl SequentialSpec {
    /// Thresholds over all metrics: each gets an equal share of the risk.
    pub(crate) fn thresholds(&self) -> usize {
        self.watch.iter().map(|w| w.thresholds.len()).sum()
    }
}
