//! fio's logs for plotting (`write_bw_log`, `write_lat_log`, `write_iops_log`, `write_hist_log`)
//! and their settings, with fio 3.33's defaults.

/// Which logs a job writes and how. A log's prefix is `Some` when it is on: the option's value,
/// or the job's name when the value is empty (fio's make_log_name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSpec {
    /// `write_bw_log`: bandwidth log prefix.
    pub bw: Option<String>,
    /// `write_lat_log`: prefix of the `_lat`, `_clat` and `_slat` logs.
    pub lat: Option<String>,
    /// `write_iops_log`: IOPS log prefix.
    pub iops: Option<String>,
    /// `write_hist_log`: completion latency histogram log prefix (`_clat_hist`).
    pub hist: Option<String>,
    /// `log_avg_msec`: average the logs over this many ms (0 = one entry per I/O).
    pub avg_msec: u64,
    /// `log_hist_msec`: a histogram entry every this many ms (0 = none).
    pub hist_msec: u64,
    /// `log_hist_coarseness`: 0..=6, bins merged 2^n at a time.
    pub hist_coarseness: u32,
    /// `log_max_value`: averaged entries hold the window's maximum instead of its mean.
    pub max_value: bool,
    /// `log_offset`: add the I/O's offset column.
    pub offset: bool,
    /// `per_job_logs`: one file per job instance (`NAME_bw.N.log`); off, every instance
    /// appends to one `NAME_bw.log`.
    pub per_job_logs: bool,
    /// `log_prio`: the priority column holds the I/O's full ioprio value (hex) instead of
    /// 1 for the real-time class and 0 otherwise.
    pub prio: bool,
    /// fio's bw/iops statistics follow a per-I/O bandwidth/IOPS log (write_*_log without
    /// log_avg_msec or bwavgtime/iopsavgtime): one sample per I/O instead of periodic ones.
    /// Set when the job's options are settled, never by an option directly.
    pub per_io_stats: [bool; 2],
    /// `log_unix_epoch`: the time column counts from the Unix epoch (ms) instead of the job's
    /// start; the clock is `alternate_clock_id`'s, as fio 3.33 reads it.
    pub unix_epoch: bool,
    /// `log_alternate_epoch`: the same shift, by the `alternate_clock_id` clock's epoch.
    pub alternate_epoch: bool,
    /// `log_alternate_epoch_clock_id`: the clock_gettime clock of either epoch (0, CLOCK_REALTIME).
    pub alternate_clock_id: i32,
    /// `log_entries`: fio's initial in-memory log size; iogauge streams its logs, so it only
    /// sizes the chunks of log_store_compressed files without log_compression (fio's first
    /// chunk holds this many samples).
    pub entries: u64,
    /// `log_compression`: bytes of samples per compressed chunk (0: off). Only the stored
    /// compressed logs are chunked by it: iogauge streams its text logs, so it has no
    /// in-memory log to compress.
    pub compression: u64,
    /// `log_store_compressed`: write fio's compressed logs (`NAME_KIND.N.log.fz`, zlib streams
    /// of fio's binary samples) instead of text (the histogram log stays text).
    pub store_compressed: bool,
    /// `write_iolog`: the text I/O log's path (fio's "version 3" iolog), appended to by every
    /// instance that names it.
    pub iolog: Option<String>,
}

impl Default for LogSpec {
    fn default() -> Self {
        LogSpec {
            bw: None,
            lat: None,
            iops: None,
            hist: None,
            avg_msec: 0,
            hist_msec: 0,
            hist_coarseness: 0,
            max_value: false,
            offset: false,
            per_job_logs: true,
            prio: false,
            per_io_stats: [false; 2],
            unix_epoch: false,
            alternate_epoch: false,
            alternate_clock_id: 0,
            entries: 1024,
            compression: 0,
            store_compressed: false,
            iolog: None,
        }
    }
}

impl LogSpec {
    /// Whether any log is written.
    pub(crate) fn any(&self) -> bool {
        self.bw.is_some() || self.lat.is_some() || self.iops.is_some() || self.hist.is_some()
    }

    /// The clock whose epoch the time column counts from, when not the job's start (fio's
    /// log_unix_epoch | log_alternate_epoch, both with log_alternate_epoch_clock_id's clock).
    pub(crate) fn epoch_clock(&self) -> Option<i32> {
        (self.unix_epoch || self.alternate_epoch).then_some(self.alternate_clock_id)
    }
}
