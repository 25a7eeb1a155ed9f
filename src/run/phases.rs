//! The run's phases in order (stonewall), and one phase: its instances prepared, engines built,
//! the monitor and run control started, one thread per instance released together by the start
//! gate, background jobs stopped after the others, results and traces collected.

use super::engines::{self, Engines};
use super::expand::expand;
use super::instance::{WorkerInput, WorkerResult};
use super::monitor::{self, Trace, Watched};
use super::plan::Instance;
use super::prepare::{prepare, Prepared};
use super::shared::{Published, StatusLat, PHASE_DONE};
use super::{
    cgroup, clock, control, cpuio, disks, exec, fdtable, file_lock, fileops, gate, host, iosched,
    latency_target, offload, queue_worker, status, worker, InstanceResult, RunError, RunOptions,
};
use crate::model::{JobSpec, RunSpec};
use crate::workload::cleanup::CreatedFiles;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub(super) fn run_phases(
    resolved: &super::ResolvedRun,
    opts: &RunOptions,
    stop: &AtomicBool,
    created: &CreatedFiles,
    disks: &mut disks::Disks,
) -> Result<Vec<InstanceResult>, RunError> {
    let spec = &resolved.spec;
    let instances = expand(resolved, created)?;
    let nphases = resolved.phases;
    let mut results = Vec::with_capacity(instances.len());
    // exitall with exit_what=all: later phases do not start.
    let end_run = AtomicBool::new(false);
    // flow: every flow group's weights, registered before any job starts (as fio's parse).
    let flows = latency_target::FlowRegistry::new(&spec.jobs);
    // cgroup: every job's group made before any job starts, removed when this returns.
    let _cgroups = cgroup::Groups::setup(&spec.jobs, &opts.diag).map_err(RunError::JobSetup)?;
    // ioscheduler: switched before any job starts, the previous one put back when this returns.
    let _schedulers =
        iosched::Switched::setup(&spec.jobs, &opts.diag).map_err(RunError::JobSetup)?;
    // Every instance's host settings tried before the first phase (once the cgroups exist), so
    // that a job of a later phase is not refused after the earlier ones ran.
    for i in &instances {
        host::probe(&spec.jobs[i.job], i.thread).map_err(RunError::JobSetup)?;
    }
    let ctx = PhaseCtx {
        spec,
        opts,
        stop,
        end_run: &end_run,
        created,
        flows: &flows,
    };
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
                    sequential: None,
                }
            }));
            break;
        }
        let mut these: Vec<Instance> = instances
            .iter()
            .filter(|i| i.phase == phase)
            .cloned()
            .collect();
        for i in these.iter_mut().filter(|i| i.deferred) {
            super::expand::plan_deferred(spec, i, created)?;
        }
        results.extend(run_phase(&ctx, disks, these)?);
        let failed = results.iter().any(|r| r.result.error.is_some());
        if failed || stop.load(Ordering::Relaxed) {
            break;
        }
    }
    Ok(results)
}

/// What every phase of a run shares: the run, its options and stop flags, and the flow groups
/// (one value instead of six arguments passed along).
struct PhaseCtx<'a> {
    spec: &'a RunSpec,
    opts: &'a RunOptions,
    stop: &'a AtomicBool,
    /// exitall with exit_what=all: later phases do not start.
    end_run: &'a AtomicBool,
    created: &'a CreatedFiles,
    flows: &'a latency_target::FlowRegistry,
}

/// One phase: its instances prepared, engines built, the monitor and run control started, one
/// thread per instance released together by the start gate, background jobs stopped after the
/// others, results and traces collected.
fn run_phase(
    ctx: &PhaseCtx,
    disks: &mut disks::Disks,
    instances: Vec<Instance>,
) -> Result<Vec<InstanceResult>, RunError> {
    let (spec, opts, stop) = (ctx.spec, ctx.opts, ctx.stop);
    let mut prepared = prepare_instances(ctx, instances)?;
    // Laying out can take long; a signal meanwhile means this phase never starts.
    if stop.load(Ordering::Relaxed) {
        return Ok(Vec::new());
    }
    let n = prepared.len();
    let published: Vec<Arc<Published>> = (0..n).map(|_| Arc::new(Published::default())).collect();
    let watched = watch_list(&prepared, &published);
    let engines = make_engines(&prepared)?;
    let done = AtomicBool::new(false);
    let bg_stop = AtomicBool::new(false);
    let gate = gate::Gate::new(n);
    // steadystate and exitall: each worker gets its own stop flag, set by the monitor.
    let own_stop: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
    let budget = sample_budget(opts, &prepared);
    // Disk counters cover the threads' run only, as fio's (layout is done by now).
    let phase_jobs: Vec<usize> = prepared.iter().map(|p| p.instance.job).collect();
    let disk_delay = disks.open_delay(spec, &phase_jobs);
    let threads_start = clock::now_ns();
    if disk_delay.is_zero() {
        disks.open(&phase_jobs);
    }
    let waitees = waitees_of(&prepared, &published);
    // --status-interval: the results so far from the published counters and the workers'
    // latency snapshots (status.rs).
    // A sequential check's watch reads the same snapshots (sequential.rs).
    for p in prepared.iter_mut() {
        if opts.status.is_some() || p.input.job.timing.sequential.is_some() {
            p.input.status_lat = Some(Arc::new(StatusLat::new()));
        }
    }
    let mut control = start_control(ctx, &prepared, &published, &own_stop, &bg_stop);
    let control_on = control.is_some();
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
                    run_instance(engine, &p.input, pb, stop, start, budget)
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
        let joined = join_workers(handles, &prepared, stop, &bg_stop);
        disks.close();
        exec_postrun(&prepared, &opts.diag);
        done.store(true, Ordering::Release);
        if let Some(p) = joined.panicked {
            std::panic::resume_unwind(p);
        }
        // The monitor's traces line up with the results; without them the report would be empty.
        let traces = match mon.join() {
            Ok(t) => t,
            Err(p) => std::panic::resume_unwind(p),
        };
        match joined.spawn_err {
            Some(e) => (Err(RunError::Thread(e)), traces),
            None => (Ok(joined.results), traces),
        }
    });
    let results = results?;
    let (ss, seq) = control
        .map(|c| (c.reports(), c.sequential()))
        .unwrap_or_else(|| (vec![None; n], vec![None; n]));
    Ok(instance_results(prepared, results, traces, ss, seq))
}

/// exec_postrun of the phase's instances whose exec_prerun succeeded, once their threads ended.
fn exec_postrun(prepared: &[Prepared], diag: &crate::diag::Diag) {
    for p in prepared.iter().filter(|p| p.postrun) {
        if let Some(cmd) = &p.input.job.host.exec_postrun {
            host::exec(&p.input.job, cmd, "postrun", diag);
        }
    }
}

/// Each instance's result with its monitor trace, steady-state report and sequential course,
/// for `assemble`.
fn instance_results(
    prepared: Vec<Prepared>,
    results: Vec<WorkerResult>,
    traces: Vec<Trace>,
    steadystate: Vec<Option<crate::report::steadystate::SteadyStateReport>>,
    sequential: Vec<Option<crate::report::sequential::SequentialRun>>,
) -> Vec<InstanceResult> {
    prepared
        .into_iter()
        .zip(results)
        .zip(traces)
        .zip(steadystate.into_iter().zip(sequential))
        .map(
            |(((p, result), trace), (steadystate, sequential))| InstanceResult {
                instance: p.instance,
                result,
                trace,
                laid_out: p.laid_out,
                steadystate,
                sequential,
            },
        )
        .collect()
}

/// Each instance laid out and opened, with its flow group and its files' locks (shared by the
/// phase's jobs on the same file).
fn prepare_instances(ctx: &PhaseCtx, instances: Vec<Instance>) -> Result<Vec<Prepared>, RunError> {
    let mut prepared = Vec::with_capacity(instances.len());
    let mut locks = file_lock::Registry::default();
    for inst in instances {
        let mut p = prepare(ctx.spec, ctx.stop, ctx.created, inst, &ctx.opts.diag)?;
        p.input.flow = ctx.flows.group(&p.input.job);
        p.input.file_locks = locks.for_files(p.input.job.io.lockfile, &p.input.paths);
        prepared.push(p);
    }
    Ok(prepared)
}

/// What the monitor reads of each instance, for periodic samples and the progress line.
fn watch_list(prepared: &[Prepared], published: &[Arc<Published>]) -> Vec<Watched> {
    prepared
        .iter()
        .zip(published)
        .map(|(p, pb)| {
            let j = &p.input.job;
            Watched {
                published: pb.clone(),
                bw_ms: j.bwavgtime_ms,
                iops_ms: j.iopsavgtime_ms,
                depth: j.queue_depth(),
                total_bytes: p.input.io_limit,
                total_ns: j
                    .runtime
                    .filter(|_| j.time_based)
                    .map(|r| (r + j.ramp_time + j.startdelay).as_nanos() as u64),
                letter: progress_letter(j.rw.kind),
            }
        })
        .collect()
}

/// fio's letter for a running job in its progress line.
fn progress_letter(kind: crate::model::RwKind) -> char {
    match kind {
        crate::model::RwKind::Read => 'R',
        // fio: trimwrite shows as a write, trim as 'D' (discard).
        crate::model::RwKind::Write | crate::model::RwKind::TrimWrite => 'W',
        crate::model::RwKind::ReadWrite => 'M',
        crate::model::RwKind::Trim => 'D',
    }
}

/// Each instance's engine over its open files, built before any thread starts so that a setup
/// failure ends the phase before any I/O.
fn make_engines(prepared: &[Prepared]) -> Result<Vec<Engines>, RunError> {
    let mut engines = Vec::with_capacity(prepared.len());
    for p in prepared {
        let fds = p.files.iter().map(|f| f.as_raw_fd()).collect::<Vec<_>>();
        let job = &p.input.job;
        engines.push(
            if job.io.submit_mode == crate::model::io::SubmitMode::Offload {
                offload::make_pool(job, &fds)?
            } else {
                engines::make(job, fds)?
            },
        );
    }
    Ok(engines)
}

/// Run control (steadystate, exitall, exitall_on_error), None when no job of the run needs it.
fn start_control<'c>(
    ctx: &PhaseCtx<'c>,
    prepared: &[Prepared],
    published: &[Arc<Published>],
    own_stop: &'c [AtomicBool],
    bg_stop: &'c AtomicBool,
) -> Option<control::Control<'c>> {
    let jobs: Vec<&JobSpec> = prepared.iter().map(|p| &p.input.job).collect();
    let exitall = ctx.spec.jobs.iter().any(|j| j.timing.exitall);
    control::needed(&jobs, exitall).then(|| {
        let members = prepared
            .iter()
            .zip(published)
            .map(|(p, pb)| control::Member {
                published: pb.clone(),
                groupid: p.instance.groupid,
                background: p.input.job.background,
                exitall_on_error: p.input.job.timing.exitall_on_error,
                exit_what: p.input.job.timing.exit_what,
                status: p.input.status_lat.clone(),
            })
            .collect();
        let flags = control::StopFlags {
            own: own_stop,
            stop: ctx.stop,
            bg_stop,
            end_run: ctx.end_run,
        };
        control::Control::new(members, &jobs, flags, exitall, clock::now_ns())
    })
}

/// Exact samples per recorder: the phase's recorders share the run's sample memory (clat per
/// direction and sync, plus slat and lat per direction for queueing engines).
fn sample_budget(opts: &RunOptions, prepared: &[Prepared]) -> usize {
    let recorders: usize = prepared
        .iter()
        .map(|p| {
            if p.input.job.ioengine.is_async() || p.input.job.queue_depth() > 1 {
                7
            } else {
                3
            }
        })
        .sum();
    opts.sample_budget
        .min(crate::stats::sample_budget_for(recorders))
}

/// wait_for: per instance, the instances of its waitee job in this phase (earlier phases have
/// ended).
fn waitees_of(prepared: &[Prepared], published: &[Arc<Published>]) -> Vec<Vec<Arc<Published>>> {
    prepared
        .iter()
        .map(|p| match &p.input.job.timing.wait_for {
            Some(w) => prepared
                .iter()
                .zip(published)
                .filter(|(q, _)| q.input.job.name == *w)
                .map(|(_, pb)| pb.clone())
                .collect(),
            None => Vec::new(),
        })
        .collect()
}

/// One instance's I/O on its worker thread: the loop its engine needs (statically dispatched).
fn run_instance(
    engine: Engines,
    input: &WorkerInput,
    pb: &Published,
    stop: &AtomicBool,
    start: u64,
    budget: usize,
) -> WorkerResult {
    match engine {
        Engines::Sync(e) => worker::run_worker(e, input, pb, stop, start, budget),
        Engines::Psync(e) => worker::run_worker(e, input, pb, stop, start, budget),
        Engines::Null(e) => worker::run_worker(e, input, pb, stop, start, budget),
        Engines::Uring(e, b) => {
            queue_worker::run_queue_worker(*e, b, input, pb, stop, start, budget)
        }
        Engines::Aio(e, b) => queue_worker::run_queue_worker(e, b, input, pb, stop, start, budget),
        Engines::Vsync(e) => worker::run_worker(e, input, pb, stop, start, budget),
        Engines::Pvsync(e) => worker::run_worker(e, input, pb, stop, start, budget),
        Engines::Pvsync2(e) => worker::run_worker(e, input, pb, stop, start, budget),
        Engines::Mmap(e) => worker::run_worker(e, input, pb, stop, start, budget),
        Engines::Falloc(e) => worker::run_worker(e, input, pb, stop, start, budget),
        Engines::Ftruncate(e) => worker::run_worker(e, input, pb, stop, start, budget),
        Engines::Posix(e, b) => {
            queue_worker::run_queue_worker(e, b, input, pb, stop, start, budget)
        }
        Engines::Cpu => cpuio::run_cpuio_worker(input, pb, stop, start, budget),
        Engines::Exec => exec::run_exec_worker(input, pb, stop, start, budget),
        Engines::FileOps(op) => fileops::run_fileops_worker(op, input, pb, stop, start, budget),
        Engines::Offload(pool) => offload::run_offload(pool, input, pb, stop, start, budget),
    }
}

/// The phase's workers once joined: their results in instance order, and what went wrong.
struct Joined {
    results: Vec<WorkerResult>,
    /// A thread that could not be spawned (the run ends with `RunError::Thread`).
    spawn_err: Option<std::io::Error>,
    /// A worker's panic, resumed once the monitor has been told to end.
    panicked: Option<Box<dyn std::any::Any + Send>>,
}

/// Joins the foreground workers first, then tells the background ones to stop and joins them.
/// A panicking worker stops the others, or the scope would never end.
fn join_workers(
    handles: Vec<std::io::Result<std::thread::ScopedJoinHandle<'_, WorkerResult>>>,
    prepared: &[Prepared],
    stop: &AtomicBool,
    bg_stop: &AtomicBool,
) -> Joined {
    let n = handles.len();
    let mut results: Vec<Option<WorkerResult>> = (0..n).map(|_| None).collect();
    let mut spawn_err = None;
    let mut panicked = None;
    let mut handles: Vec<_> = handles.into_iter().map(Some).collect();
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
    Joined {
        results: results.into_iter().flatten().collect(),
        spawn_err,
        panicked,
    }
}

/// fio's wait_for: sleep until every instance in `waitees` has ended (or the run stops).
fn wait_for_waitees(waitees: &[Arc<Published>], stop: &AtomicBool) {
    while !waitees
        .iter()
        .all(|w| w.phase.load(Ordering::Acquire) == PHASE_DONE)
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
