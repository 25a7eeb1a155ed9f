//! Rate and timing shapes and run control of one job (fio's thinktime, rate_process, rate_min,
//! steadystate, exitall, …). `Default` is fio 3.33's defaults.

use std::time::Duration;

/// Which counter `thinktime_blocks` counts (fio `thinktime_blocks_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThinkBlocks {
    /// Completed I/Os (fio's default).
    Complete,
    /// Issued I/Os.
    Issue,
}

/// How rated I/O is spaced (fio `rate_process`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateProcess {
    /// Evenly spaced.
    Linear,
    /// Exponential inter-arrival times with the same mean (a Poisson process).
    Poisson,
}

/// What a steady state is judged on (fio `steadystate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SsMetric {
    /// I/Os per second.
    Iops,
    /// Bandwidth.
    Bw,
}

/// fio's `steadystate=iops:2%` (deviation) or `iops_slope:0.1%` (slope).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadyState {
    /// IOPS or bandwidth.
    pub metric: SsMetric,
    /// Judged by the slope of a least-squares line; by the largest deviation from the mean
    /// otherwise.
    pub slope: bool,
    /// The limit: a percentage of the mean when `percent`, else in the metric's unit.
    pub limit: f64,
    /// `limit` is a percentage of the mean.
    pub percent: bool,
}

impl SteadyState {
    /// fio's name of the criterion (`iops`, `iops_slope`, `bw`, `bw_slope`).
    pub fn fio_name(&self) -> &'static str {
        match (self.metric, self.slope) {
            (SsMetric::Iops, false) => "iops",
            (SsMetric::Iops, true) => "iops_slope",
            (SsMetric::Bw, false) => "bw",
            (SsMetric::Bw, true) => "bw_slope",
        }
    }
}

/// Which jobs an `exitall` ends (fio `exit_what`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitWhat {
    /// The jobs of the same reporting group (fio's default).
    Group,
    /// The jobs of the same phase (stonewall).
    Stonewall,
    /// Every job.
    All,
}

/// Which I/O errors a job survives (fio `continue_on_error`, `ignore_error`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ErrorPolicy {
    /// Error types the job continues after: bit 0 read, bit 1 write, bit 2 verify.
    pub continue_on: u8,
    /// Per type (read, write, verify), the errnos ignored; None = fio's EIO and EILSEQ.
    pub ignore: [Option<Vec<i32>>; 3],
}

impl ErrorPolicy {
    /// `continue_on_error` is in effect (fio then reports `total_err` and `first_error`).
    pub fn is_set(&self) -> bool {
        self.continue_on != 0
    }

    /// Whether an I/O in direction `dir` (0 read, 1 write) failing with `errno` is survived.
    pub fn ignores(&self, dir: usize, errno: i32) -> bool {
        let t = dir.min(1);
        if self.continue_on & (1 << t) == 0 {
            return false;
        }
        match &self.ignore[t] {
            Some(list) => list.contains(&errno),
            None => errno == libc::EIO || errno == libc::EILSEQ,
        }
    }
}

/// The timing group's settings of one job.
#[derive(Debug, Clone, PartialEq)]
pub struct TimingSpec {
    /// Pause after every `thinktime_blocks` I/Os (fio `thinktime`; zero = none).
    pub thinktime: Duration,
    /// Of the pause, the part spent spinning on the CPU (fio `thinktime_spin`).
    pub thinktime_spin: Duration,
    /// I/Os between pauses (fio `thinktime_blocks`); None = unset (fio's default 1).
    pub thinktime_blocks: Option<u32>,
    /// Which I/Os `thinktime_blocks` counts.
    pub thinktime_blocks_type: ThinkBlocks,
    /// Pause also after this much I/O time (fio `thinktime_iotime`; zero = off).
    pub thinktime_iotime: Duration,
    /// How rated I/O is spaced.
    pub rate_process: RateProcess,
    /// Bytes per second the job must reach per direction, or it fails (fio `rate_min`).
    pub rate_min: [Option<u64>; 3],
    /// I/Os per second the job must reach per direction, or it fails (fio `rate_iops_min`).
    pub rate_iops_min: [Option<u64>; 3],
    /// Window of the minimum-rate check, ms (fio `rate_cycle`).
    pub ratecycle_ms: u64,
    /// After a thinktime, go on at the rate instead of catching up (fio `rate_ignore_thinktime`).
    pub rate_ignore_thinktime: bool,
    /// End the job once this steady state is reached (fio `steadystate`; default
    /// iops_slope:0.01%); judged only when `ss_dur` is set.
    pub steadystate: SteadyState,
    /// Window the steady state is judged over (fio `ss_dur`).
    pub ss_dur: Duration,
    /// Time after the start before the steady-state window fills (fio `ss_ramp`).
    pub ss_ramp: Duration,
    /// When this job ends, end the others (fio `exitall`).
    pub exitall: bool,
    /// When this job fails, end the others (fio `exitall_on_error`).
    pub exitall_on_error: bool,
    /// Which jobs `exitall` ends.
    pub exit_what: ExitWhat,
    /// Start only once every instance of this earlier job has ended (fio `wait_for`).
    pub wait_for: Option<String>,
    /// I/O errors the job survives.
    pub errors: ErrorPolicy,
    /// fio's `max_latency`, per direction, in ns: an I/O whose total latency exceeds it fails
    /// the job with ETIMEDOUT. None: no limit.
    pub max_latency: [Option<u64>; 3],
    /// `iogauge check`'s sequential mode: stop once the verdict is decided (not a fio option).
    pub sequential: Option<super::sequential::SequentialSpec>,
}

impl Default for TimingSpec {
    fn default() -> Self {
        TimingSpec {
            thinktime: Duration::ZERO,
            thinktime_spin: Duration::ZERO,
            thinktime_blocks: None,
            thinktime_blocks_type: ThinkBlocks::Complete,
            thinktime_iotime: Duration::ZERO,
            rate_process: RateProcess::Linear,
            rate_min: [None; 3],
            rate_iops_min: [None; 3],
            ratecycle_ms: 1000,
            rate_ignore_thinktime: false,
            steadystate: SteadyState {
                metric: SsMetric::Iops,
                slope: true,
                limit: 0.01,
                percent: true,
            },
            ss_dur: Duration::ZERO,
            ss_ramp: Duration::ZERO,
            exitall: false,
            exitall_on_error: false,
            exit_what: ExitWhat::Group,
            wait_for: None,
            errors: ErrorPolicy::default(),
            max_latency: [None; 3],
            sequential: None,
        }
    }
}

impl TimingSpec {
    /// A minimum rate is checked.
    pub(crate) fn checks_min_rate(&self) -> bool {
        self.rate_min
            .iter()
            .chain(&self.rate_iops_min)
            .any(|r| r.is_some())
    }
}
