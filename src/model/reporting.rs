//! How a job's results are reported beyond fio's defaults (`slat_percentiles`, ...), with
//! fio 3.33's defaults.

/// Reporting settings of one job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportingSpec {
    /// Report submission-latency percentiles (fio `slat_percentiles`; queueing engines only,
    /// as synchronous engines have no submission step).
    pub slat_percentiles: bool,
    /// fio `unified_rw_reporting`: directions reported apart, together, or both.
    pub unified_rw: UnifiedRw,
    /// fio `significant_figures`: digits of the text output's IOPS, bandwidth and sizes (1–10).
    pub sig_figs: u32,
    /// fio `kb_base`: 1024 (default) or 1000. Sizes written after it in the same job read `k`
    /// as this base (and `kib` as the other one, fio's inversion), and the text output leads
    /// with IEC (1024) or SI (1000) units.
    pub kb_base: u64,
    /// fio `unit_base=1`: the text output prints bandwidth in bits (`Gibit/s`); 0 and 8 are bytes.
    pub unit_bits: bool,
    /// fio `disk_util` (default 1): the devices holding this job's files are in the report's disk
    /// statistics; with 0 they are left out (no `disk_util` at all when no job has them).
    pub disk_util: bool,
    /// What is recorded per I/O (fio's `disable_*` and `stats` options).
    pub record: RecordSpec,
}

/// Which statistics a job records per I/O (fio `disable_lat`, `disable_clat`, `disable_slat`,
/// `disable_bw_measurement`, `stats`). Each one switched off is left out of the job's results
/// as fio 3.33 leaves it out: zeroed in JSON, its line absent from the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordSpec {
    /// Total latency (`lat`); off also skips `max_latency`, as fio checks it on `lat`.
    pub lat: bool,
    /// Completion latency (`clat`, its percentiles, the latency buckets, sync latency and the
    /// clat histogram log).
    pub clat: bool,
    /// Submission latency (`slat`).
    pub slat: bool,
    /// Per-I/O bandwidth samples (a `write_bw_log` with `log_avg_msec=0`).
    pub bw: bool,
    /// fio `stats=0`: nothing at all; the job is reported as fio's empty entry.
    pub stats: bool,
}

impl Default for RecordSpec {
    fn default() -> Self {
        RecordSpec {
            lat: true,
            clat: true,
            slat: true,
            bw: true,
            stats: true,
        }
    }
}

/// fio's `unified_rw_reporting` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnifiedRw {
    /// Each direction on its own (`none`, `0`).
    #[default]
    None,
    /// Every direction summed into one `mixed` entry instead (`mixed`, `1`).
    Mixed,
    /// Each direction, then the `mixed` entry (`both`, `2`).
    Both,
}

impl Default for ReportingSpec {
    fn default() -> Self {
        ReportingSpec {
            slat_percentiles: false,
            unified_rw: UnifiedRw::None,
            sig_figs: 4,
            kb_base: 1024,
            unit_bits: false,
            disk_util: true,
            record: RecordSpec::default(),
        }
    }
}
