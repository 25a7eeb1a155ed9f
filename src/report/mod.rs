//! `Report`: the one result model. Statistics are computed before a `Report` is built;
//! renderers (one file per output format) are pure functions of it.

pub(crate) mod bounded;
pub(crate) mod check_csv;
pub(crate) mod check_markdown;
pub(crate) mod check_text;
pub(crate) mod compare_text;
pub mod comparison;
pub mod document;
pub(crate) mod frames;
pub(crate) mod html;
pub(crate) mod intervals;
pub(crate) mod json;
pub(crate) mod kube_fio_text;
pub(crate) mod kube_text;
pub(crate) mod normal;
pub(crate) mod openmetrics;
pub(crate) mod preflight_text;
pub mod sequential;
pub(crate) mod small_files;
pub mod steadystate;
pub(crate) mod terse;
pub(crate) mod troubleshoot;
pub(crate) mod units;

#[cfg(test)]
pub(crate) mod fixtures;

use std::time::SystemTime;

// The statistics' own summaries, defined beside the code that computes them.
/// fio's percentile rank, the one rule of every percentile (the integration tests check
/// documents with it).
pub use crate::stats::latency::fio_rank;
pub use crate::stats::summary::{
    CpuReport, DepthReport, DiskReport, IntervalLatency, LatIntervals, LatSummary, LatencyBuckets,
    PercentileMethod, SampleSummary, SeriesPoint,
};

/// Statistics of one direction (read, write or trim) of a job or group.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DirReport {
    /// Bytes transferred in the measured period (after ramp).
    pub io_bytes: u64,
    /// I/Os completed in the measured period (after ramp).
    pub total_ios: u64,
    /// I/Os that transferred fewer bytes than asked (fio `short`).
    pub short_ios: u64,
    /// I/Os dropped (fio `drop`); iogauge never drops any, so always 0.
    pub drop_ios: u64,
    /// Runtime of this direction in ms (0 when it did no I/O), as fio.
    pub runtime_ms: u64,
    /// Bytes per second: 1000·io_bytes / runtime_ms.
    pub bw_bytes: u64,
    /// I/Os per second: 1000·total_ios / runtime_ms.
    pub iops: f64,
    /// Submission latency (queueing engines only).
    pub slat: LatSummary,
    /// Completion latency: from submission (or the call, for synchronous engines) to completion.
    pub clat: LatSummary,
    /// Total latency: from queueing to completion (equals `clat` for synchronous engines).
    pub lat: LatSummary,
    /// Periodic bandwidth samples, KiB/s.
    pub bw_samples: SampleSummary,
    /// The job's mean bandwidth as a percentage of its group's aggregate (fio `per=` / `bw_agg`).
    pub bw_agg_pct: f64,
    /// Periodic IOPS samples, I/Os per second.
    pub iops_samples: SampleSummary,
    /// The periodic series (KiB/s and IOPS) for charts: every counted deadline, including
    /// intervals without I/O (value 0, not in the sample statistics).
    pub bw_series: Vec<SeriesPoint>,
    /// The periodic IOPS series for charts (see `bw_series`).
    pub iops_series: Vec<SeriesPoint>,
    /// The trailing interval from the last sample to the end of the measured period, labelled
    /// with the runtime; never counted (fio does not sample it). With the series it covers the
    /// whole run.
    pub bw_tail: Option<SeriesPoint>,
    /// The trailing IOPS interval (see `bw_tail`).
    pub iops_tail: Option<SeriesPoint>,
    /// Latency histogram per 100 ms (or coarser) of the measured period; None without I/O or
    /// latency measurement.
    pub lat_intervals: Option<LatIntervals>,
    /// Latency per I/O priority (fio's `prios`, cmdprio_*): present when at least two
    /// priorities had I/O, as fio prints them.
    pub prios: Vec<PrioReport>,
}

/// One I/O priority's latency (fio's `prios[]` entry).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PrioReport {
    /// The priority class (ioprio >> 13).
    pub class: u32,
    /// The level within the class (ioprio & 7).
    pub level: u32,
    /// Completion latency, or total latency with lat_percentiles (fio's rule).
    pub lat: LatSummary,
}

/// fsync/fdatasync operations issued by the job (fio's `sync` object).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SyncReport {
    /// Sync calls completed in the measured period (after ramp).
    pub total_ios: u64,
    /// Latency of each fsync/fdatasync call.
    pub lat: LatSummary,
    /// Each synced write from the start of the write to the end of its sync (iogauge only).
    pub write_and_sync: LatSummary,
    /// Sync latency histogram per interval (see `DirReport::lat_intervals`).
    pub lat_intervals: Option<LatIntervals>,
}

/// What the text header line and `job options` describe.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobHeader {
    /// `write`, `randrw`, ...
    pub rw: String,
    /// Smallest block size per direction.
    pub bs: [u64; 3],
    /// Largest block size per direction (= `bs` unless `bsrange`/`bssplit`).
    pub bs_max: [u64; 3],
    /// fio's `bs_is_seq_rand`: the header then shows no trim sizes.
    pub bs_is_seq_rand: bool,
    /// fio's ioengine name (`psync`, `io_uring`, ...).
    pub ioengine: String,
    /// The iodepth setting.
    pub iodepth: u32,
    /// fio `kb_base`/`unit_base` of the job, for the block sizes of its text line.
    pub units: units::TextUnits,
}

/// One entry of fio's `jobs[]`: a job instance, or a whole group with `group_reporting`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobReport {
    /// The job's name (fio's `jobname`).
    pub name: String,
    /// Reporting group number (fio `groupid`).
    pub groupid: u32,
    /// Number of job instances folded into this entry (`jobs=N` in the text).
    pub njobs: u32,
    /// Thread id of the job's (first) worker thread, where fio prints its pid.
    pub pid: u32,
    /// errno of the first error, 0 if none.
    pub error: i32,
    /// Seconds since the run started, as fio's `elapsed`.
    pub elapsed_s: u64,
    /// Wall time of the measured period in ms (fio `job_runtime`).
    pub job_runtime_ms: u64,
    /// When the job finished (for the text line `... pid=N: <date>`).
    pub finished_at: Option<SystemTime>,
    /// The job's rw, block sizes, engine and depth, as its header line describes them.
    pub header: JobHeader,
    /// Options as written for this job, in order (fio's `job options`).
    pub options: Vec<(String, String)>,
    /// read, write, trim.
    pub dirs: [DirReport; 3],
    /// fsync/fdatasync calls and their latencies.
    pub sync: SyncReport,
    /// CPU use of the job's threads in the measured period.
    pub cpu: CpuReport,
    /// I/O depth and submit/complete batch distributions.
    pub depths: DepthReport,
    /// Share of I/Os by completion-latency bucket.
    pub lat_buckets: LatencyBuckets,
    /// Latency collection was switched off (gtod_reduce): percentiles and latencies are absent.
    pub gtod_reduce: bool,
    /// clat percentiles are reported (fio `clat_percentiles`).
    pub clat_percentiles: bool,
    /// Total-latency percentiles are reported (fio `lat_percentiles`).
    pub lat_percentiles: bool,
    /// The iodepth setting, for fio's `latency_depth`.
    pub iodepth: u32,
    /// Files laid out / opened, for `(f=N)` and notes.
    pub nr_files: u32,
    /// `Laying out IO file (N files / SIZE)`: files and total bytes laid out before the run,
    /// None when nothing had to be laid out.
    pub laid_out: Option<(u32, u64)>,
    /// fio's `description` option; empty when unset (text `Description  : [...]`, JSON `desc`).
    pub description: String,
    /// The `percentile_list` in effect (fio prints it in terse output even without samples).
    /// Empty means fio's default list.
    pub percentile_list: Vec<f64>,
    /// fio `unified_rw_reporting`: print the directions, `mixed` instead, or both.
    pub unified_rw: crate::model::UnifiedRw,
    /// Every direction summed (fio's `mixed`), when `unified_rw` asks for it.
    pub mixed: Option<DirReport>,
    /// fio `significant_figures` for the text output (0: fio's default, 4).
    pub sig_figs: u32,
    /// fio `kb_base`/`unit_base`: the text output's units.
    pub units: units::TextUnits,
    /// fio's steady-state result, when the job set `ss_dur`.
    pub steadystate: Option<steadystate::SteadyStateReport>,
    /// iogauge check's sequential mode: how the run reached its verdict.
    pub sequential: Option<sequential::SequentialRun>,
    /// With continue_on_error: the I/O errors survived and the first one's errno (fio's
    /// `total_err`, `first_error`).
    pub errors: Option<(u64, i32)>,
    /// The job's latency_target settings as fio prints them: target in ns, window in µs,
    /// percentile (None: fio's defaults 0, 0, 100). `iodepth` is then the depth reached.
    pub latency_target: Option<(u64, u64, f64)>,
}

impl JobReport {
    /// Whether the job's latencies were measured at all (the run's `model::Measured::latency`):
    /// false under gtod_reduce, and the renderers say "not measured" instead of zeros.
    pub fn latency_measured(&self) -> bool {
        !self.gtod_reduce
    }

    /// fio's entry for a job run with `stats=0`: an empty thread_stat (no name, group -1,
    /// every count zero). The text output shows nothing for it.
    pub fn silent(elapsed_s: u64) -> JobReport {
        JobReport {
            groupid: u32::MAX,
            elapsed_s,
            gtod_reduce: true,
            ..JobReport::default()
        }
    }
}

/// fio's default `percentile_list`.
pub(crate) use crate::model::DEFAULT_PERCENTILES;

/// One job definition as announced before the run (`name: (g=0): rw=..., ioengine=..., iodepth=1`
/// followed by `...` when numjobs > 1). Independent of `jobs[]`, which may be folded by
/// group_reporting.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobLine {
    /// The job definition's name.
    pub name: String,
    /// Reporting group number.
    pub groupid: u32,
    /// The definition's rw, block sizes, engine and depth.
    pub header: JobHeader,
    /// numjobs of this definition.
    pub numjobs: u32,
}

/// fio's `Run status group N (all jobs)` block.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GroupDirReport {
    /// Bytes transferred by the group's jobs.
    pub io_bytes: u64,
    /// Aggregate bandwidth: total bytes·1000 / longest job runtime (B/s).
    pub agg_bw_bytes: u64,
    /// Per-job min and max bandwidth (B/s).
    pub min_bw_bytes: u64,
    /// Highest per-job bandwidth (B/s).
    pub max_bw_bytes: u64,
    /// Shortest and longest job runtime (ms).
    pub min_run_ms: u64,
    /// Longest job runtime (ms).
    pub max_run_ms: u64,
}

/// A reporting group's totals per direction (fio's `Run status group N` block).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GroupReport {
    /// Reporting group number.
    pub groupid: u32,
    /// read, write, trim.
    pub dirs: [GroupDirReport; 3],
    /// fio's `MIXED:` line (unified_rw_reporting).
    pub mixed: Option<GroupDirReport>,
    /// fio `significant_figures` of the group's jobs (0: fio's default, 4).
    pub sig_figs: u32,
    /// fio `kb_base`/`unit_base` of the group's first job: the text output's units.
    pub units: units::TextUnits,
}

/// The result of one run: fio's JSON and text output are rendered from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Printed where fio prints its version (`fio version` in JSON).
    pub version: String,
    /// When the run started (wall clock).
    pub started_at: SystemTime,
    /// Where the run happened (host, kernel, filesystem, device), for iogauge's JSON key.
    pub context: Option<document::Context>,
    /// Options of the job file's global section, as written (fio's `global options`).
    pub global_options: Vec<(String, String)>,
    /// fio's `jobs[]`: one entry per job instance, or per group with `group_reporting`.
    pub jobs: Vec<JobReport>,
    /// One entry per reporting group, in group order.
    pub groups: Vec<GroupReport>,
    /// Block devices under the jobs' files and their counters over the run (fio `disk_util`).
    pub disks: Vec<DiskReport>,
    /// Human notes shown after the run (e.g. "latency was not measured (gtod_reduce=1)").
    pub notes: Vec<String>,
    /// Why the run stopped before its end ("interrupted by SIGINT"), when it did: its numbers
    /// cover only part of it (`iogauge.interrupted` in the JSON; `compare` refuses such runs).
    pub interrupted: Option<String>,
    /// Job definitions for the header lines of the text output, in job-file order. When empty,
    /// the text renderer derives them from `jobs` (one line per entry, `...` when njobs > 1).
    pub job_lines: Vec<JobLine>,
}

impl Report {
    pub(crate) fn version_string() -> String {
        format!("iogauge-{}", env!("CARGO_PKG_VERSION"))
    }
}
