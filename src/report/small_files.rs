//! Result of the small-files test (`iogauge check small-files`): per-phase times and per-file
//! latency summaries.

use super::document::{LatencyStats, SmallFilesResult};
use super::LatSummary;

#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct SmallFilesReport {
    pub files: u32,
    pub file_size: u64,
    /// Wall time of the create phase and of the read-back phase, ns.
    pub create_ns: u64,
    pub read_ns: u64,
    /// Per-file open+write+close and open+read+close.
    pub create: LatSummary,
    pub read: LatSummary,
}

impl SmallFilesReport {
    pub(crate) fn total_ns(&self) -> u64 {
        self.create_ns + self.read_ns
    }

    /// Files created and read back per second over the whole test.
    pub(crate) fn files_per_sec(&self) -> f64 {
        2.0 * self.files as f64 / (self.total_ns().max(1) as f64 / 1e9)
    }

    pub(crate) fn p99(s: &LatSummary) -> Option<u64> {
        s.percentiles
            .iter()
            .find(|(q, _)| *q == 99.0)
            .map(|(_, v)| *v)
    }

    /// The result as it goes into the check document.
    pub(crate) fn result(&self) -> SmallFilesResult {
        let lat = |s: &LatSummary| LatencyStats {
            min_ns: s.min,
            max_ns: s.max,
            mean_ns: s.mean,
            n: s.n,
            percentile: s
                .percentiles
                .iter()
                .map(|(q, v)| (format!("{q:.6}"), *v))
                .collect(),
        };
        SmallFilesResult {
            files: self.files,
            file_size: self.file_size,
            create_ns: self.create_ns,
            read_ns: self.read_ns,
            total_ns: self.total_ns(),
            files_per_sec: self.files_per_sec(),
            create: lat(&self.create),
            read: lat(&self.read),
        }
    }
}
