//! One instance made ready before its phase starts (its options were checked when the run was
//! resolved, the host settings probed before the first phase): lockmem pinned, its logs opened, its files laid out and opened for I/O (write hint,
//! direct alignment, pre_read, cache drop and fadvise, the openfiles window), exec_prerun run,
//! and the worker's input built.

use super::instance::WorkerInput;
use super::plan::{self, Instance};
use super::{fileops, host, RunError};
use crate::model::{IoEngine, JobSpec, RunSpec};
use crate::workload::cleanup::CreatedFiles;
use crate::workload::layout;
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::AtomicBool;

pub(super) struct Prepared {
    pub(super) instance: Instance,
    pub(super) input: WorkerInput,
    pub(super) files: Vec<File>,
    pub(super) laid_out: Option<(u32, u64)>,
    /// fio's thread number − 1 (cpus_allowed_policy=split picks the CPU by it).
    pub(super) thread: u32,
    /// `lockmem`, pinned until the instance is dropped.
    _locked: Option<host::LockedMem>,
    /// exec_postrun runs after the phase (its exec_prerun, if any, succeeded).
    pub(super) postrun: bool,
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

pub(super) fn prepare(
    spec: &RunSpec,
    stop: &AtomicBool,
    created: &CreatedFiles,
    inst: Instance,
    diag: &crate::diag::Diag,
) -> Result<Prepared, RunError> {
    let job: &JobSpec = &spec.jobs[inst.job];
    // fio's thread number, counted from 1.
    let thread_number = inst.thread + 1;
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
                let file = layout::open_for_io(job, f, created)?;
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
                    layout::pre_read(job, f, created, stop)?;
                }
                for w in layout::on_open(job, f, &file) {
                    diag.line(&format!("iogauge: warning: {w}"));
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
        .is_none_or(|cmd| host::exec(job, cmd, "prerun", diag));
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
        diag: diag.clone(),
        // A time-based job is one fio loop (its passes wrap inside it): nothing to unlink.
        relink: (job.files.unlink_each_loop && !job.time_based && !files.is_empty()).then(|| {
            crate::workload::relink::Relinker::new(
                inst.files
                    .iter()
                    .zip(&files)
                    .map(|(p, f)| (p.path.clone(), f.as_raw_fd(), p.is_block)),
                created,
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
