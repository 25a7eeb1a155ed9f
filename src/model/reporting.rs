//! How a job's results are reported beyond fio's defaults (`slat_percentiles`, ...), with
//! fio 3.33's defaults.

/// Reporting settings of one job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportingSpec {
    /// Report submission-latency percentiles (fio `slat_percentiles`; queueing engines only,
    /// as synchronous engines have no submission step).
    pub slat_percentiles: bool,
}

impl Default for ReportingSpec {
    fn default() -> Self {
        ReportingSpec {
            slat_percentiles: false,
        }
    }
}
