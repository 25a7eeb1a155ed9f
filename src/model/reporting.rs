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

/// What a job measures of its latencies, decided once from fio's `gtod_reduce`,
/// `disable_lat`, `disable_clat`, `disable_slat` and `stats`: what the I/O loops time, which
/// recorders and latency logs take samples, and which latencies the report shows. Everything
/// downstream asks this instead of combining the options again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measured {
    /// Latency is measured at all (off under gtod_reduce=1): the per-interval histograms and
    /// the per-priority and write+sync latencies exist only then.
    pub latency: bool,
    /// Total latency (`lat`), off under disable_lat too; `max_latency` is checked on it.
    pub lat: bool,
    /// Completion latency (`clat`: its percentiles, the latency buckets, the sync latency),
    /// off under disable_clat too.
    pub clat: bool,
    /// Submission latency (`slat`, queueing engines only), off under disable_slat too.
    pub slat: bool,
    /// The I/O loops read the clock around each I/O: some latency is measured and the job
    /// keeps statistics (stats=1).
    pub timed: bool,
}

impl Measured {
    /// The set of a job with `gtod_reduce` and per-I/O switches `record`.
    pub fn new(gtod_reduce: bool, record: RecordSpec) -> Self {
        let latency = !gtod_reduce;
        let (lat, clat, slat) = (
            latency && record.lat,
            latency && record.clat,
            latency && record.slat,
        );
        Measured {
            latency,
            lat,
            clat,
            slat,
            timed: record.stats && (lat || clat || slat),
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

#[cfg(test)]
mod tests {
    use super::{Measured, RecordSpec};

    #[test]
    fn measured_is_off_under_gtod_reduce_and_per_disable_switch() {
        let all = RecordSpec::default();
        let m = Measured::new(false, all);
        assert!(m.latency && m.lat && m.clat && m.slat && m.timed);
        // gtod_reduce: nothing, whatever the switches say.
        let m = Measured::new(true, all);
        assert_eq!(
            (m.latency, m.lat, m.clat, m.slat, m.timed),
            (false, false, false, false, false)
        );
        // disable_clat alone: the others stay, the loops still read the clock.
        let m = Measured::new(false, RecordSpec { clat: false, ..all });
        assert_eq!((m.lat, m.clat, m.slat, m.timed), (true, false, true, true));
        // Every latency off: latency "at all" stays on (intervals exist) but nothing is timed.
        let none = RecordSpec {
            lat: false,
            clat: false,
            slat: false,
            ..all
        };
        let m = Measured::new(false, none);
        assert!(m.latency && !m.timed);
        // stats=0: latencies as set, but the loops read no clock (the job is not reported).
        let m = Measured::new(
            false,
            RecordSpec {
                stats: false,
                ..all
            },
        );
        assert!(m.lat && !m.timed);
    }
}
