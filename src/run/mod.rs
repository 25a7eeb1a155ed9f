//! The orchestrator: expands jobs into instances, checks safety and free space, lays out files,
//! runs each phase's threads together (phases in order: stonewall), watches them with the monitor
//! thread, cleans up, and hands the raw results to `assemble` to build the `Report`.

pub(crate) mod assemble;
pub(crate) mod cgroup;
pub(crate) mod clock;
pub(crate) mod context;
pub(crate) mod control;
pub(crate) mod cpuio;
pub(crate) mod disks;
pub(crate) mod engines;
pub(crate) mod exec;
mod fdtable;
pub(crate) mod file_lock;
pub(crate) mod fileops;
pub(crate) mod gate;
pub(crate) mod host;
pub(crate) mod instance;
pub(crate) mod iosched;
pub(crate) mod latency_target;
pub(crate) mod monitor;
pub(crate) mod numa;
pub(crate) mod overlap;
pub(crate) mod partial;
pub(crate) mod plan;
pub(crate) mod queue_worker;
pub(crate) mod small_files;
pub(crate) mod source;
pub(crate) mod status;
pub(crate) mod stop;
pub(crate) mod sync_range;
pub(crate) mod timing;
pub(crate) mod trims;
pub(crate) mod verify_phase;
pub(crate) mod worker;

use crate::model::{IoEngine, JobSpec, RunSpec};
use crate::report::Report;
use crate::stats::DEFAULT_SAMPLE_BUDGET;
use crate::workload::cleanup::CreatedFiles;
use crate::workload::layout::{self, LayoutError};
use engines::Engines;
use instance::{IoFailure, Published, WorkerInput, WorkerResult};
use monitor::{Trace, Watched};
use plan::Instance;
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Why a run produced no report.
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

impl RunError {
    /// Bad input or usage (exit 2 in every command): the engine cannot run on this host, or the
    /// files cannot or must not be laid out as asked.
    pub(crate) fn is_bad_input(&self) -> bool {
        match self {
            RunError::EngineUnavailable(_) | RunError::BufferMemory(_) | RunError::JobSetup(_) => {
                true
            }
            RunError::Layout(e) => e.is_bad_input(),
            _ => false,
        }
    }
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
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            progress: false,
            progress_sink: None,
            sample_budget: DEFAULT_SAMPLE_BUDGET,
            deadline: None,
            status: None,
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
}

/// Run every job of `spec`. Files iogauge created are removed before this returns, whatever
/// happens, unless the user asked to keep them. `stop` is set by SIGINT/SIGTERM: when it is set
/// after the jobs started, the report holds what they did until then.
pub fn run(spec: &RunSpec, opts: &RunOptions, stop: &AtomicBool) -> Result<Report, RunError> {
    // fio's clocksource is one for the whole process; the first job that names one decides.
    clock::prefer(spec.jobs.iter().find_map(|j| j.host.clocksource));
    clock::init();
    let Some(deadline) = opts.deadline else {
        return run_until(spec, opts, stop);
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
        let r = run_until(spec, opts, &inner);
        done.store(true, Ordering::Relaxed);
        r
    });
    if timed_out.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
        return Err(RunError::TimedOut);
    }
    res
}

fn run_until(spec: &RunSpec, opts: &RunOptions, stop: &AtomicBool) -> Result<Report, RunError> {
    reap_dead_runs(spec);
    let created = CreatedFiles::new();
    let started_at = std::time::SystemTime::now();
    let run_start = clock::now_ns();
    let mut disks = disks::Disks::resolve(spec);
    // A panic in a worker must not skip the cleanup below: catch it, clean up, then re-raise.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_phases(spec, opts, stop, &created, &mut disks)
    }));
    // Cleanup happens on every path: success, error, interrupt and panic.
    let kept: Vec<PathBuf> = if spec.keep_files {
        created.list()
    } else {
        kept_by_unlink(spec, &created)
    };
    for p in &kept {
        created.forget(p);
        layout::untag(p);
    }
    let failed = created.remove_all();
    for (p, e) in &failed {
        eprintln!("iogauge: warning: could not remove '{}': {e}", p.display());
    }
    if let Some((p, _)) = failed.first() {
        eprintln!(
            "iogauge: its run marker stays: `iogauge cleanup {}` removes what is left once the \
             filesystem works again",
            layout::parent_dir(p).display()
        );
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
    let report = assemble::report(spec, results, started_at, run_start, disks.reports());
    match failure {
        // The results so far are still reported, marked by the failed job's error.
        Some(failure) => Err(RunError::Io {
            partial: Some(Box::new(partial::mark(report, &failure))),
            failure,
        }),
        None => Ok(report),
    }
}

/// Before anything is created: the files that killed iogauge runs left in the directories this
/// run uses (their markers list them) are removed, so that they neither fill the disk nor stand
/// in the way (`workload/marker.rs` says what counts as proof that a file is such a leftover).
fn reap_dead_runs(spec: &RunSpec) {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for job in &spec.jobs {
        for n in 0..job.numjobs {
            for p in layout::plan_files(job, n).unwrap_or_default() {
                let d = layout::parent_dir(&p.path);
                if !p.is_block && !dirs.contains(&d) {
                    dirs.push(d);
                }
            }
        }
    }
    for d in dirs {
        let r = crate::workload::marker::reap(&d);
        for line in r.describe() {
            eprintln!("iogauge: {line}");
        }
    }
}

/// Files whose job said `unlink=0`: they stay, as the user asked.
fn kept_by_unlink(spec: &RunSpec, created: &CreatedFiles) -> Vec<PathBuf> {
    let listed = created.list();
    let mut keep = Vec::new();
    for job in spec.jobs.iter().filter(|j| !j.unlink) {
        for n in 0..job.numjobs {
            if let Ok(plans) = layout::plan_files(job, n) {
                keep.extend(
                    plans
                        .into_iter()
                        .map(|p| p.path)
                        .filter(|p| listed.contains(p)),
                );
            }
        }
    }
    keep
}

/// Memory a run may take for I/O buffers: half of what the kernel says is available (None when
/// /proc/meminfo cannot be read).
fn buffer_budget() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024 / 2)
}

/// Buffers are allocated per instance before the threads start; a job that asks for more than
/// memory allows (iodepth=256 with bs=1g) is bad input, refused before anything is laid out,
/// instead of an allocation abort that would skip the cleanup.
fn check_buffer_memory(spec: &RunSpec, budget: u64) -> Result<(), RunError> {
    let total: u64 = spec
        .jobs
        .iter()
        .map(|j| j.buffer_bytes().saturating_mul(j.numjobs.max(1) as u64))
        .fold(0, u64::saturating_add);
    if total <= budget {
        return Ok(());
    }
    let big = spec
        .jobs
        .iter()
        .max_by_key(|j| j.buffer_bytes().saturating_mul(j.numjobs.max(1) as u64))
        .expect("a run that needs memory has a job");
    Err(RunError::BufferMemory(format!(
        "job '{}': {} I/O in flight × {} bytes per block × numjobs={} needs {} of I/O buffers \
         ({} for the whole run), more than half of the memory available ({}); lower iodepth, bs \
         or numjobs",
        big.name,
        big.queue_depth(),
        big.max_bs(),
        big.numjobs.max(1),
        crate::report::units::size_str(
            big.buffer_bytes().saturating_mul(big.numjobs.max(1) as u64)
        ),
        crate::report::units::size_str(total),
        crate::report::units::size_str(budget * 2),
    )))
}

fn expand(spec: &RunSpec, created: &CreatedFiles) -> Result<Vec<Instance>, RunError> {
    if let Some(budget) = buffer_budget() {
        check_buffer_memory(spec, budget)?;
    }
    let gp = plan::group_and_phase(&spec.jobs);
    let mut out = Vec::new();
    let mut new_bytes: Vec<(PathBuf, u64)> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    for (ji, job) in spec.jobs.iter().enumerate() {
        for jobnum in 0..job.numjobs.max(1) {
            let files = layout::plan_files(job, jobnum)?;
            for f in &files {
                if !job.files.allow_file_create && !f.existed && job.ioengine != IoEngine::Null {
                    return Err(layout::LayoutError::CreateDisallowed {
                        job: job.name.clone(),
                        path: f.path.clone(),
                    }
                    .into());
                }
                if spec.readonly && !f.existed && job.ioengine != IoEngine::Null {
                    return Err(layout::LayoutError::ReadOnly {
                        path: f.path.clone(),
                    }
                    .into());
                }
                if let Some(op) = job.ioengine.file_op().filter(|o| o.on_dirs()) {
                    // Directories take no space to speak of; only what exists matters.
                    if f.existed && !seen.contains(&f.path) {
                        layout::check_dir_safety(job, op, f, spec.allow_overwrite)?;
                    }
                    seen.push(f.path.clone());
                } else if !seen.contains(&f.path) {
                    layout::check_safety(job, f, spec.allow_overwrite, created)?;
                    // fio refuses to write a mounted device unless the job allows it.
                    if f.is_block && layout::job_writes(job) && !job.files.allow_mounted_write {
                        if let Some(mounted) = crate::workload::device::mounted_on(&f.path) {
                            return Err(layout::LayoutError::MountedDevice {
                                path: f.path.clone(),
                                job: job.name.clone(),
                                mounted,
                            }
                            .into());
                        }
                    }
                    // fill_device is asked to fill the filesystem: not counted against it.
                    if !f.existed && !job.files.fill_device {
                        new_bytes.push((layout::parent_dir(&f.path), f.size));
                    }
                    seen.push(f.path.clone());
                }
            }
            out.push(Instance {
                job: ji,
                jobnum,
                groupid: gp[ji].0,
                phase: gp[ji].1,
                files,
            });
        }
    }
    layout::check_free_space(&new_bytes)?;
    Ok(out)
}

fn run_phases(
    spec: &RunSpec,
    opts: &RunOptions,
    stop: &AtomicBool,
    created: &CreatedFiles,
    disks: &mut disks::Disks,
) -> Result<Vec<InstanceResult>, RunError> {
    let instances = expand(spec, created)?;
    let nphases = instances.iter().map(|i| i.phase + 1).max().unwrap_or(0);
    let mut results = Vec::with_capacity(instances.len());
    // exitall with exit_what=all: later phases do not start.
    let end_run = AtomicBool::new(false);
    // flow: every flow group's weights, registered before any job starts (as fio's parse).
    let flows = latency_target::FlowRegistry::new(&spec.jobs);
    latency_target::check_flow_phases(&spec.jobs, instances.iter().map(|i| (i.job, i.phase)))
        .map_err(RunError::JobSetup)?;
    // cgroup: every job's group made before any job starts, removed when this returns.
    let _cgroups = cgroup::Groups::setup(&spec.jobs).map_err(RunError::JobSetup)?;
    // ioscheduler: switched before any job starts, the previous one put back when this returns.
    let _schedulers = iosched::Switched::setup(&spec.jobs).map_err(RunError::JobSetup)?;
    for phase in 0..nphases {
        // A signal between phases: the phases that ran are the result.
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if end_run.load(Ordering::Relaxed) {
            // fio reports the jobs exit_what=all ended before they started, with nothing done.
            results.extend(instances.iter().filter(|i| i.phase >= phase).map(|i| {
                let job = &spec.jobs[i.job];
                InstanceResult {
                    instance: i.clone(),
                    result: WorkerResult::new(0, job.ioengine.is_async(), job),
                    trace: Trace::default(),
                    laid_out: None,
                    steadystate: None,
                }
            }));
            break;
        }
        let these: Vec<Instance> = instances
            .iter()
            .filter(|i| i.phase == phase)
            .cloned()
            .collect();
        results.extend(run_phase(
            spec, opts, stop, &end_run, created, disks, these, &flows,
        )?);
        let failed = results.iter().any(|r| r.result.error.is_some());
        if failed || stop.load(Ordering::Relaxed) {
            break;
        }
    }
    Ok(results)
}

struct Prepared {
    instance: Instance,
    input: WorkerInput,
    files: Vec<File>,
    laid_out: Option<(u32, u64)>,
    /// fio's thread number − 1 (cpus_allowed_policy=split picks the CPU by it).
    thread: u32,
    /// `lockmem`, pinned until the instance is dropped.
    _locked: Option<host::LockedMem>,
    /// exec_postrun runs after the phase (its exec_prerun, if any, succeeded).
    postrun: bool,
}

/// openfiles below the number of files: the window of open files (engines that open files
/// only; iogauge's check has refused the combinations it does not cover).
fn open_window(
    job: &JobSpec,
    files: &[crate::workload::layout::FilePlan],
) -> Result<Option<crate::workload::openfiles::OpenWindow>, RunError> {
    let open = job.files.open_files as usize;
    if open == 0 || open >= files.len() {
        return Ok(None);
    }
    let paths: Vec<&std::path::Path> = files.iter().map(|f| f.path.as_path()).collect();
    crate::workload::openfiles::OpenWindow::new(&paths, open)
        .map(Some)
        .map_err(|e| RunError::JobSetup(format!("job '{}': openfiles: {e}", job.name)))
}

fn prepare(
    spec: &RunSpec,
    stop: &AtomicBool,
    created: &CreatedFiles,
    inst: Instance,
) -> Result<Prepared, RunError> {
    let job: &JobSpec = &spec.jobs[inst.job];
    // fio's thread number: instances of every job of the run, counted from 1.
    let thread_number = spec.jobs[..inst.job]
        .iter()
        .map(|j| j.numjobs.max(1))
        .sum::<u32>()
        + inst.jobnum
        + 1;
    latency_target::check_engine(job).map_err(RunError::JobSetup)?;
    if job.ioprio.cmd_active() && !job.ioengine.is_async() {
        return Err(RunError::JobSetup(format!(
            "job '{}': {} needs a queueing engine (ioengine=io_uring or libaio), \
             as in fio; {} has no per-I/O priority",
            job.name,
            if job.ioprio.bssplit_active() {
                "cmdprio_bssplit"
            } else {
                "cmdprio_percentage"
            },
            job.ioengine.fio_name()
        )));
    }
    if job.ioprio.bssplit_active() && job.ioprio.cmd_percentage.iter().any(|&p| p > 0) {
        return Err(RunError::JobSetup(format!(
            "job '{}': cmdprio_percentage and cmdprio_bssplit are mutually exclusive (as in \
             fio); use one, e.g. cmdprio_bssplit=4k/10:64k/50",
            job.name
        )));
    }
    if let Some(p) = inst.files.iter().find(|p| {
        job.files.unlink_each_loop && p.existed && !p.is_block && !created.contains(&p.path)
    }) {
        return Err(RunError::JobSetup(format!(
            "job '{}': unlink_each_loop would delete '{}', which iogauge did not create; \
             remove it or use another directory",
            job.name,
            p.path.display()
        )));
    }
    host::probe(job, thread_number - 1).map_err(RunError::JobSetup)?;
    let locked = host::LockedMem::pin(job).map_err(RunError::JobSetup)?;
    let logs = crate::stats::logs::JobLogs::open(job, thread_number).map_err(RunError::JobSetup)?;
    let paths: Vec<_> = inst.files.iter().map(|f| f.path.clone()).collect();
    let iolog = crate::stats::iolog::IoLog::open(job, &paths).map_err(RunError::JobSetup)?;
    let mut laid = (0u32, 0u64);
    let mut files = Vec::with_capacity(inst.files.len());
    let mut pass_drops = Vec::new();
    let mut window = None;
    if let Some(op) = job.ioengine.file_op().filter(|o| o.on_dirs()) {
        // The directory engines: nothing laid out or opened.
        fileops::setup_dirs(op, &inst.files, created).map_err(|e| {
            RunError::JobSetup(format!(
                "job '{}': cannot make its directories: {e}",
                job.name
            ))
        })?;
    } else if job.ioengine == IoEngine::Filecreate {
        // filecreate makes the files itself (timed); new ones are removed as iogauge's own.
        fileops::register_new(inst.files.iter(), created);
    } else if !job.ioengine.diskless() {
        for f in &inst.files {
            if layout::lay_out(job, f, created, stop)? {
                laid.0 += 1;
                laid.1 += f.size;
            }
        }
        if job.create_only || job.ioengine.file_op().is_some() {
            // filestat and filedelete time their call on the path: nothing is opened.
            // fio's create_only: lay out, do no I/O.
        } else {
            window = open_window(job, &inst.files)?;
            // With openfiles, the files outside the window are opened (and closed) first, so
            // that no more than openfiles are ever open together.
            let n = inst.files.len();
            let first = window.as_ref().map_or(0, |w| w.len().min(n));
            let mut opened: Vec<Option<(File, Option<layout::CacheDrop>)>> =
                (0..n).map(|_| None).collect();
            for i in (first..n).chain(0..first) {
                let f = &inst.files[i];
                let file = layout::open_for_io(job, f)?;
                if let Some(h) = job.io.write_hint {
                    crate::workload::write_hint::apply(&file, h, job.direct).map_err(|source| {
                        layout::LayoutError::Io {
                            op: "cannot set the write hint (fcntl) on",
                            path: f.path.clone(),
                            source,
                        }
                    })?;
                }
                if job.direct {
                    layout::check_direct_alignment(job, f, &file)?;
                }
                if job.files.pre_read {
                    layout::pre_read(job, f, stop)?;
                }
                for w in layout::on_open(job, f, &file) {
                    eprintln!("iogauge: warning: {w}");
                }
                // Direct I/O bypasses the cache, so fio only drops it again for buffered jobs.
                let drop =
                    (job.invalidate && !job.direct).then(|| layout::CacheDrop::new(&file, f));
                if let Some(w) = window.as_mut() {
                    w.add(i, file.as_raw_fd()).map_err(|e| {
                        RunError::JobSetup(format!(
                            "job '{}': cannot close '{}' again (openfiles): {e}",
                            job.name,
                            f.path.display()
                        ))
                    })?;
                }
                opened[i] = Some((file, drop));
            }
            for (file, drop) in opened.into_iter().flatten() {
                pass_drops.extend(drop);
                files.push(file);
            }
        }
    }
    // fio runs exec_prerun in the job's thread once its files are ready; a failure means no I/O.
    let prerun_ok = job
        .host
        .exec_prerun
        .as_deref()
        .is_none_or(|cmd| host::exec(job, cmd, "prerun"));
    let io_limit = if job.create_only || !prerun_ok {
        Some(0)
    } else {
        plan::io_limit(job, &inst.files)
    };
    let input = WorkerInput {
        job: job.clone(),
        jobnum: inst.jobnum,
        paths,
        regions: inst.files.iter().map(|f| (f.offset, f.region)).collect(),
        io_limit,
        seed: plan::seed_for(job, inst.jobnum),
        pass_drops,
        logs: std::sync::Mutex::new(logs),
        iolog: std::sync::Mutex::new(iolog),
        status_lat: None,
        // A time-based job is one fio loop (its passes wrap inside it): nothing to unlink.
        relink: (job.files.unlink_each_loop && !job.time_based && !files.is_empty()).then(|| {
            crate::workload::relink::Relinker::new(
                inst.files
                    .iter()
                    .zip(&files)
                    .map(|(p, f)| (p.path.clone(), f.as_raw_fd(), p.is_block)),
            )
        }),
        flow: None,
        open_window: std::sync::Mutex::new(window),
        file_locks: None,
    };
    Ok(Prepared {
        instance: inst,
        input,
        files,
        laid_out: (laid.0 > 0).then_some(laid),
        thread: thread_number - 1,
        _locked: locked,
        postrun: prerun_ok && job.host.exec_postrun.is_some(),
    })
}

#[allow(clippy::too_many_arguments)]
fn run_phase(
    spec: &RunSpec,
    opts: &RunOptions,
    stop: &AtomicBool,
    end_run: &AtomicBool,
    created: &CreatedFiles,
    disks: &mut disks::Disks,
    instances: Vec<Instance>,
    flows: &latency_target::FlowRegistry,
) -> Result<Vec<InstanceResult>, RunError> {
    let mut prepared = Vec::with_capacity(instances.len());
    let mut locks = file_lock::Registry::default();
    for inst in instances {
        let mut p = prepare(spec, stop, created, inst)?;
        p.input.flow = flows.group(&p.input.job);
        p.input.file_locks = locks.for_files(p.input.job.io.lockfile, &p.input.paths);
        prepared.push(p);
    }
    // Laying out can take long; a signal meanwhile means this phase never starts.
    if stop.load(Ordering::Relaxed) {
        return Ok(Vec::new());
    }
    let n = prepared.len();
    let published: Vec<Arc<Published>> = (0..n).map(|_| Arc::new(Published::default())).collect();
    let watched: Vec<Watched> = prepared
        .iter()
        .zip(&published)
        .map(|(p, pb)| {
            let j = &p.input.job;
            Watched {
                published: pb.clone(),
                bw_ms: j.bwavgtime_ms,
                iops_ms: j.iopsavgtime_ms,
                depth: if j.ioengine.is_async() { j.iodepth } else { 1 },
                total_bytes: p.input.io_limit,
                total_ns: j
                    .runtime
                    .filter(|_| j.time_based)
                    .map(|r| (r + j.ramp_time + j.startdelay).as_nanos() as u64),
                letter: match j.rw.kind {
                    crate::model::RwKind::Read => 'R',
                    // fio: trimwrite shows as a write, trim as 'D' (discard).
                    crate::model::RwKind::Write | crate::model::RwKind::TrimWrite => 'W',
                    crate::model::RwKind::ReadWrite => 'M',
                    crate::model::RwKind::Trim => 'D',
                },
            }
        })
        .collect();
    let mut engines = Vec::with_capacity(n);
    for p in &prepared {
        let fds = p.files.iter().map(|f| f.as_raw_fd()).collect::<Vec<_>>();
        engines.push(engines::make(&p.input.job, fds)?);
    }
    let done = AtomicBool::new(false);
    let bg_stop = AtomicBool::new(false);
    let gate = gate::Gate::new(n);
    // steadystate and exitall: each worker gets its own stop flag, set by the monitor.
    let own_stop: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
    let jobs: Vec<&JobSpec> = prepared.iter().map(|p| &p.input.job).collect();
    let exitall = spec.jobs.iter().any(|j| j.timing.exitall);
    let mut control = control::needed(&jobs, exitall).then(|| {
        let members = prepared
            .iter()
            .zip(&published)
            .map(|(p, pb)| control::Member {
                published: pb.clone(),
                groupid: p.instance.groupid,
                background: p.input.job.background,
                exitall_on_error: p.input.job.timing.exitall_on_error,
                exit_what: p.input.job.timing.exit_what,
            })
            .collect();
        control::Control::new(
            members,
            &jobs,
            &own_stop,
            stop,
            &bg_stop,
            end_run,
            exitall,
            clock::now_ns(),
        )
    });
    // Recorders per instance share the run's sample memory: clat per direction and sync, plus
    // slat and lat per direction for queueing engines.
    let recorders: usize = prepared
        .iter()
        .map(|p| {
            if p.input.job.ioengine.is_async() {
                7
            } else {
                3
            }
        })
        .sum();
    let budget = opts
        .sample_budget
        .min(crate::stats::sample_budget_for(recorders));
    // Disk counters cover the threads' run only, as fio's (layout is done by now).
    let phase_jobs: Vec<usize> = prepared.iter().map(|p| p.instance.job).collect();
    let disk_delay = disks.open_delay(spec, &phase_jobs);
    let threads_start = clock::now_ns();
    if disk_delay.is_zero() {
        disks.open(&phase_jobs);
    }
    let control_on = control.is_some();
    // wait_for: the instances of the waitee job in this phase (earlier phases have ended).
    let waitees: Vec<Vec<Arc<Published>>> = prepared
        .iter()
        .map(|p| match &p.input.job.timing.wait_for {
            Some(w) => prepared
                .iter()
                .zip(&published)
                .filter(|(q, _)| q.input.job.name == *w)
                .map(|(_, pb)| pb.clone())
                .collect(),
            None => Vec::new(),
        })
        .collect();
    // --status-interval: the results so far from the published counters and the workers'
    // latency snapshots (status.rs).
    if opts.status.is_some() {
        for p in prepared.iter_mut() {
            p.input.status_lat = Some(Arc::new(status::StatusLat::new()));
        }
    }
    let status_lats: Vec<_> = prepared
        .iter()
        .map(|p| p.input.status_lat.clone())
        .collect();
    let status_instances: Vec<&Instance> = prepared.iter().map(|p| &p.instance).collect();
    let phase_started = std::time::SystemTime::now();
    let status_now = || {
        if let Some(st) = &opts.status {
            let r = status::report_so_far(
                spec,
                &status_instances,
                &published,
                &status_lats,
                clock::now_ns(),
                threads_start,
                phase_started,
            );
            (st.sink)(&r);
        }
    };
    let status_every = opts.status.as_ref().map(|st| st.every.as_nanos() as u64);
    let (results, traces) = std::thread::scope(|s| {
        let ctl = control.as_mut();
        let status_now = &status_now;
        let mon = s.spawn(|| {
            monitor::monitor(
                &watched,
                &done,
                opts.progress,
                opts.progress_sink.as_ref(),
                ctl,
                status_every.map(|ns| (ns, status_now as &(dyn Fn() + Sync))),
            )
        });
        let mut handles = Vec::with_capacity(n);
        for (i, ((p, pb), engine)) in prepared.iter().zip(&published).zip(engines).enumerate() {
            let gate = &gate;
            let waitees = &waitees[i];
            // Background jobs run until the phase's other jobs are done.
            let stop = if control_on {
                &own_stop[i]
            } else if p.input.job.background {
                &bg_stop
            } else {
                stop
            };
            let h = std::thread::Builder::new()
                .name(format!("{}.{}", p.input.job.name, p.input.jobnum))
                .spawn_scoped(s, move || {
                    // Probed before the run (host::probe), so it does not fail here.
                    let _ = host::apply(&p.input.job, p.thread);
                    if fdtable::wanted(&engine, &p.input) {
                        fdtable::make_private();
                    }
                    gate.wait();
                    wait_for_waitees(waitees, stop);
                    let start = clock::now_ns();
                    let input = &p.input;
                    match engine {
                        Engines::Sync(e) => worker::run_worker(e, input, pb, stop, start, budget),
                        Engines::Psync(e) => worker::run_worker(e, input, pb, stop, start, budget),
                        Engines::Null(e) => worker::run_worker(e, input, pb, stop, start, budget),
                        Engines::Uring(e, b) => {
                            queue_worker::run_queue_worker(*e, b, input, pb, stop, start, budget)
                        }
                        Engines::Aio(e, b) => {
                            queue_worker::run_queue_worker(e, b, input, pb, stop, start, budget)
                        }
                        Engines::Vsync(e) => worker::run_worker(e, input, pb, stop, start, budget),
                        Engines::Pvsync(e) => worker::run_worker(e, input, pb, stop, start, budget),
                        Engines::Pvsync2(e) => {
                            worker::run_worker(e, input, pb, stop, start, budget)
                        }
                        Engines::Mmap(e) => worker::run_worker(e, input, pb, stop, start, budget),
                        Engines::Falloc(e) => worker::run_worker(e, input, pb, stop, start, budget),
                        Engines::Ftruncate(e) => {
                            worker::run_worker(e, input, pb, stop, start, budget)
                        }
                        Engines::Posix(e, b) => {
                            queue_worker::run_queue_worker(e, b, input, pb, stop, start, budget)
                        }
                        Engines::Cpu => cpuio::run_cpuio_worker(input, pb, stop, start, budget),
                        Engines::Exec => exec::run_exec_worker(input, pb, stop, start, budget),
                        Engines::FileOps(op) => {
                            fileops::run_fileops_worker(op, input, pb, stop, start, budget)
                        }
                    }
                });
            if h.is_err() {
                // The others must not wait for it: stop them and open the gate.
                stop.store(true, Ordering::Relaxed);
                bg_stop.store(true, Ordering::Relaxed);
                gate.abort();
            }
            handles.push(h);
        }
        if !disk_delay.is_zero() {
            sleep_unless_stopped(threads_start + disk_delay.as_nanos() as u64, stop);
            disks.open(&phase_jobs);
        }
        let mut results: Vec<Option<WorkerResult>> = (0..n).map(|_| None).collect();
        let mut spawn_err = None;
        let mut panicked = None;
        let mut handles: Vec<_> = handles.into_iter().map(Some).collect();
        // Foreground jobs first; then the background ones are told to stop.
        for background in [false, true] {
            if background {
                bg_stop.store(true, Ordering::Relaxed);
            }
            for (i, h) in handles.iter_mut().enumerate() {
                if prepared[i].input.job.background != background {
                    continue;
                }
                match h.take().expect("joined once") {
                    Ok(h) => match h.join() {
                        Ok(mut r) => {
                            r.sort_samples();
                            results[i] = Some(r);
                        }
                        Err(p) => {
                            // Stop the others and the monitor first, or the scope never ends.
                            stop.store(true, Ordering::Relaxed);
                            bg_stop.store(true, Ordering::Relaxed);
                            panicked.get_or_insert(p);
                        }
                    },
                    Err(e) => spawn_err = Some(e),
                }
            }
        }
        let results: Vec<WorkerResult> = results.into_iter().flatten().collect();
        disks.close();
        for p in prepared.iter().filter(|p| p.postrun) {
            if let Some(cmd) = &p.input.job.host.exec_postrun {
                host::exec(&p.input.job, cmd, "postrun");
            }
        }
        done.store(true, Ordering::Release);
        if let Some(p) = panicked {
            std::panic::resume_unwind(p);
        }
        // The monitor's traces line up with the results; without them the report would be empty.
        let traces = match mon.join() {
            Ok(t) => t,
            Err(p) => std::panic::resume_unwind(p),
        };
        match spawn_err {
            Some(e) => (Err(RunError::Thread(e)), traces),
            None => (Ok(results), traces),
        }
    });
    let results = results?;
    let ss = control
        .map(|c| c.reports())
        .unwrap_or_else(|| vec![None; n]);
    Ok(prepared
        .into_iter()
        .zip(results)
        .zip(traces)
        .zip(ss)
        .map(|(((p, result), trace), steadystate)| InstanceResult {
            instance: p.instance,
            result,
            trace,
            laid_out: p.laid_out,
            steadystate,
        })
        .collect())
}

/// fio's wait_for: sleep until every instance in `waitees` has ended (or the run stops).
fn wait_for_waitees(waitees: &[Arc<Published>], stop: &AtomicBool) {
    while !waitees
        .iter()
        .all(|w| w.phase.load(Ordering::Acquire) == instance::PHASE_DONE)
    {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Sleep until `deadline_ns`, waking every 100 ms to notice SIGINT/SIGTERM.
fn sleep_unless_stopped(deadline_ns: u64, stop: &AtomicBool) {
    loop {
        let now = clock::now_ns();
        if now >= deadline_ns || stop.load(Ordering::Relaxed) {
            return;
        }
        clock::sleep_until(deadline_ns.min(now + 100_000_000));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{RwKind, RwMode, SizeSpec};

    fn etcd_like(dir: &std::path::Path) -> JobSpec {
        JobSpec {
            name: "mytest".into(),
            directory: Some(dir.to_path_buf()),
            size: Some(SizeSpec::Bytes(2 << 20)),
            bs: [2300; 3],
            rw: RwMode {
                kind: RwKind::Write,
                random: false,
            },
            ioengine: IoEngine::Sync,
            fdatasync: 1,
            ..JobSpec::default()
        }
    }

    #[test]
    fn buffers_beyond_the_memory_budget_are_refused_before_layout() {
        let d = tempfile::tempdir().unwrap();
        let mut j = etcd_like(d.path());
        j.ioengine = IoEngine::Libaio;
        j.iodepth = 256;
        j.bs = [1 << 30; 3];
        j.numjobs = 2;
        let spec = RunSpec {
            jobs: vec![j],
            ..RunSpec::default()
        };
        assert_eq!(spec.jobs[0].buffer_bytes(), 256 << 30);
        let e = check_buffer_memory(&spec, 8 << 30).unwrap_err();
        assert!(e.is_bad_input());
        assert_eq!(
            e.to_string(),
            "job 'mytest': 256 I/O in flight × 1073741824 bytes per block × numjobs=2 needs 512GiB of \
             I/O buffers (512GiB for the whole run), more than half of the memory available (16.0GiB); \
             lower iodepth, bs or numjobs"
        );
        assert!(check_buffer_memory(&spec, 512 << 30).is_ok());
        // Through run(): refused before anything is written.
        let e = run(&spec, &RunOptions::default(), &AtomicBool::new(false)).unwrap_err();
        assert!(matches!(e, RunError::BufferMemory(_)), "{e}");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

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
}
