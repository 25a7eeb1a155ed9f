//! The orchestrator: expands jobs into instances, checks safety and free space, lays out files,
//! runs each phase's threads together (phases in order: stonewall), watches them with the monitor
//! thread, cleans up, and hands the raw results to `assemble` to build the `Report`.

pub(crate) mod assemble;
pub(crate) mod cgroup;
mod cleanup;
pub(crate) mod clock;
pub(crate) mod context;
pub(crate) mod control;
pub(crate) mod cpuio;
pub(crate) mod disks;
pub(crate) mod engines;
pub(crate) mod exec;
mod expand;
mod fdtable;
pub(crate) mod file_lock;
pub(crate) mod fileops;
pub(crate) mod gate;
pub(crate) mod host;
pub(crate) mod instance;
pub(crate) mod iosched;
pub(crate) mod latency_target;
mod loop_core;
mod loop_ctx;
#[cfg(test)]
mod loop_tests;
pub(crate) mod monitor;
pub(crate) mod numa;
pub(crate) mod offload;
pub(crate) mod overlap;
pub(crate) mod partial;
mod phases;
pub(crate) mod plan;
mod prepare;
pub(crate) mod queue_worker;
pub(crate) mod resolve;
mod sequential;
pub(crate) mod shared;
pub(crate) mod small_files;
pub(crate) mod source;
pub(crate) mod status;
pub(crate) mod stop;
pub(crate) mod sync_range;
pub(crate) mod timing;
pub(crate) mod trims;
pub(crate) mod verify_phase;
pub(crate) mod worker;

use crate::model::RunSpec;
use crate::report::Report;
use crate::stats::DEFAULT_SAMPLE_BUDGET;
use crate::workload::cleanup::CreatedFiles;
use crate::workload::layout::{self, LayoutError};
use cleanup::{keep, reap_dead_runs};
use instance::{IoFailure, WorkerResult};
use monitor::Trace;
use phases::run_phases;
use plan::Instance;
pub use resolve::{resolve, ResolveError, ResolvedRun};
use std::sync::atomic::{AtomicBool, Ordering};

/// Why a run produced no report. Which of these are bad input (exit 2) is decided in one
/// place, `app::error::Kind::of_run`.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Files could not be planned, checked or laid out.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// An I/O failed and ended its job (operation, file, offset, length, errno). `partial` is
    /// what every job did until the end of the run, the failed one's `error` set (fio prints
    /// its results after an I/O error too); None when nothing can be reported.
    #[error("{}", partial::failure_line(failure))]
    Io {
        /// The first failure.
        failure: IoFailure,
        /// The results so far (the run's report, partial).
        partial: Option<Box<Report>>,
    },
    /// A signal arrived before any job ran.
    #[error("stopped before any job ran")]
    Interrupted,
    /// A worker thread could not be spawned.
    #[error("could not start a worker thread: {0}")]
    Thread(std::io::Error),
    /// The engine cannot run on this host at all (a usage problem: exit 2).
    #[error("{0}")]
    EngineUnavailable(String),
    /// The engine failed to set up for this job (e.g. io_uring or AIO context creation).
    #[error("{0}")]
    EngineSetup(String),
    /// The jobs' I/O buffers would not fit in memory (bad input: exit 2).
    #[error("{0}")]
    BufferMemory(String),
    /// A job's options cannot work here, or its log files (fio `write_*_log`) cannot be
    /// created (bad input: exit 2).
    #[error("{0}")]
    JobSetup(String),
    /// The run's deadline passed, in whatever stage (its files are removed).
    #[error("did not finish before its deadline")]
    TimedOut,
}

/// How to run (beyond what the jobs say).
#[derive(Clone)]
pub struct RunOptions {
    /// Draw fio's progress line on stderr.
    pub progress: bool,
    /// Or hand progress snapshots to this instead.
    pub progress_sink: Option<monitor::ProgressSink>,
    /// Samples kept per latency recorder for exact percentiles.
    pub sample_budget: usize,
    /// The whole run (layout, ramp, I/O) must end by then, or it stops and is a
    /// [`RunError::TimedOut`] (troubleshoot's collector `timeout`).
    pub deadline: Option<std::time::Instant>,
    /// fio `--status-interval`: the results so far, every interval (see `status`).
    pub status: Option<status::StatusInterval>,
    /// With `keep_files`: record the kept files in the run's marker, which then stays, and name
    /// them on stderr (`check`, whose file names the user did not choose); see `cleanup::keep`.
    pub record_kept: bool,
    /// Where warnings and notes raised while running go (the command's face decides).
    pub diag: crate::diag::Diag,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            progress: false,
            progress_sink: None,
            sample_budget: DEFAULT_SAMPLE_BUDGET,
            deadline: None,
            status: None,
            record_kept: false,
            diag: crate::diag::Diag::default(),
        }
    }
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("progress", &self.progress)
            .field("progress_sink", &self.progress_sink.is_some())
            .field("sample_budget", &self.sample_budget)
            .field("deadline", &self.deadline)
            .field("status", &self.status.as_ref().map(|s| s.every))
            .field("diag", &self.diag)
            .finish()
    }
}

/// Raw results of one instance, for `assemble`.
pub(crate) struct InstanceResult {
    pub instance: Instance,
    pub result: WorkerResult,
    pub trace: Trace,
    /// Files laid out for this instance: (count, bytes).
    pub laid_out: Option<(u32, u64)>,
    /// Steady-state result (fio's `steadystate` block), on the instance that reports it.
    pub steadystate: Option<crate::report::steadystate::SteadyStateReport>,
    /// A sequential check's course (sequential.rs).
    pub sequential: Option<crate::report::sequential::SequentialRun>,
}

/// Run every job of `spec`. Files iogauge created are removed before this returns, whatever
/// happens, unless the user asked to keep them. `stop` is set by SIGINT/SIGTERM: when it is set
/// after the jobs started, the report holds what they did until then.
/// The run is resolved first ([`resolve`]): a bad combination in any job, whatever its phase,
/// is refused before anything touches the host.
pub fn run(spec: &RunSpec, opts: &RunOptions, stop: &AtomicBool) -> Result<Report, RunError> {
    let resolved = resolve(spec.clone())?;
    // fio's clocksource is one for the whole process; the first job that names one decides.
    clock::prefer(spec.jobs.iter().find_map(|j| j.host.clocksource));
    clock::init();
    let Some(deadline) = opts.deadline else {
        return run_until(&resolved, opts, stop);
    };
    // The run stops on the caller's flag or at the deadline; the two are told apart afterwards
    // and the caller's flag is never set by the timer.
    let inner = AtomicBool::new(false);
    let timed_out = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    let res = std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                let now = std::time::Instant::now();
                if now >= deadline {
                    timed_out.store(true, Ordering::Relaxed);
                }
                if stop.load(Ordering::Relaxed) || now >= deadline {
                    inner.store(true, Ordering::Relaxed);
                    return;
                }
                std::thread::sleep((deadline - now).min(std::time::Duration::from_millis(10)));
            }
        });
        let r = run_until(&resolved, opts, &inner);
        done.store(true, Ordering::Relaxed);
        r
    });
    if timed_out.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
        return Err(RunError::TimedOut);
    }
    res
}

fn run_until(
    resolved: &ResolvedRun,
    opts: &RunOptions,
    stop: &AtomicBool,
) -> Result<Report, RunError> {
    let spec = &resolved.spec;
    reap_dead_runs(spec, &opts.diag);
    let created = CreatedFiles::new();
    let started_at = std::time::SystemTime::now();
    let run_start = clock::now_ns();
    let mut disks = disks::Disks::resolve(spec);
    // A panic in a worker must not skip the cleanup below: catch it, clean up, then re-raise.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_phases(resolved, opts, stop, &created, &mut disks)
    }));
    // Cleanup happens on every path: success, error, interrupt and panic.
    let kept = keep(spec, &created, opts.record_kept, &opts.diag);
    let failed = created.remove_all();
    for (p, e) in &failed {
        opts.diag.line(&format!(
            "iogauge: warning: could not remove '{}': {e}",
            p.display()
        ));
    }
    if let Some((p, _)) = failed.first().filter(|_| created.markers_left()) {
        opts.diag.line(&format!(
            "iogauge: its run marker stays: `iogauge cleanup {}` removes what is left once the \
             filesystem works again",
            layout::parent_dir(p).display()
        ));
    }
    let results = match outcome {
        Ok(r) => r?,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    let failure = results.iter().find_map(|r| r.result.error.clone());
    // Interrupted before any job ran: nothing to report. Otherwise the results so far are
    // reported, as fio does; the caller knows from `stop` that the run was cut short.
    if stop.load(Ordering::Relaxed) && results.is_empty() {
        return Err(RunError::Interrupted);
    }
    let mut report = assemble::report(spec, results, started_at, run_start, disks.reports());
    report.notes.extend(kept);
    match failure {
        // The results so far are still reported, marked by the failed job's error.
        Some(failure) => Err(RunError::Io {
            partial: Some(Box::new(partial::mark(report, &failure))),
            failure,
        }),
        None => Ok(report),
    }
}

/// A job like etcd's fio recipe (2 MiB of 2300-byte writes, fdatasync after each), for the
/// tests.
#[cfg(test)]
fn etcd_like(dir: &std::path::Path) -> crate::model::JobSpec {
    crate::model::JobSpec {
        name: "mytest".into(),
        directory: Some(dir.to_path_buf()),
        size: Some(crate::model::SizeSpec::Bytes(2 << 20)),
        bs: [2300; 3],
        rw: crate::model::RwMode {
            kind: crate::model::RwKind::Write,
            random: false,
        },
        ioengine: crate::model::IoEngine::Sync,
        fdatasync: 1,
        ..crate::model::JobSpec::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etcd_recipe_counts_writes_and_syncs_and_cleans_up() {
        let d = tempfile::tempdir().unwrap();
        let spec = RunSpec {
            jobs: vec![etcd_like(d.path())],
            ..RunSpec::default()
        };
        let stop = AtomicBool::new(false);
        let r = run(&spec, &RunOptions::default(), &stop).unwrap();
        let j = &r.jobs[0];
        // 2 MiB / 2300 B = 911 whole blocks, one fdatasync after each.
        assert_eq!(j.dirs[1].total_ios, 911);
        assert_eq!(j.dirs[1].io_bytes, 911 * 2300);
        assert_eq!(j.sync.total_ios, 911);
        assert_eq!(j.sync.lat.n, 911);
        assert_eq!(j.dirs[0].total_ios, 0);
        let s = &j.sync.lat;
        assert!(s.min <= s.max && s.min as f64 <= s.mean && s.mean <= s.max as f64);
        let p: Vec<u64> = s.percentiles.iter().map(|x| x.1).collect();
        assert!(p.windows(2).all(|w| w[0] <= w[1]));
        assert!(p.iter().all(|&v| v >= s.min && v <= s.max));
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            0,
            "files left behind"
        );
    }
    /// The lines a run raises go to the run's diagnostics sink in the command's name: fio's
    /// io_u error line of a survived error says "iogauge check:" under check (it said
    /// "iogauge fio:" under every command, past the progress bar).
    #[test]
    fn diagnostics_go_to_the_sink_in_the_commands_name() {
        let args: Vec<String> = [
            "--name=dump",
            "--filename=/dev/full",
            "--rw=write",
            "--bs=4k",
            "--size=16k",
            "--continue_on_error=all",
            "--ignore_error=,ENOSPC",
            "--error_dump=1",
            "--allow-overwrite",
        ]
        .map(String::from)
        .to_vec();
        let cmd = crate::input::fio::parse_fio_args(&args, &|_: &str| None, &mut std::io::empty())
            .unwrap();
        let crate::input::fio::FioCommand::Run(spec, _) = cmd else {
            panic!("not a run");
        };
        let (diag, said) = crate::diag::Diag::collect("iogauge check");
        let opts = RunOptions {
            diag,
            ..RunOptions::default()
        };
        run(&spec, &opts, &AtomicBool::new(false)).unwrap();
        let said = said.lock().unwrap().clone();
        let want: Vec<String> = (0..4)
            .map(|i| {
                format!(
                    "iogauge check: io_u error on file /dev/full: No space left on device: \
                     write offset={}, buflen=4096",
                    i * 4096
                )
            })
            .collect();
        assert_eq!(said, want);
    }
}
