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
        }
    }
}
