//! The loop of fio's file operation engines (`filecreate`, `filestat`, `filedelete`, and fio
//! 3.37's `dircreate`, `dirstat`, `dirdelete`): no data is transferred; what is timed is one
//! open(O_CREAT|O_RDWR), stat (or lstat, statx), unlink, mkdir or rmdir per file (a directory
//! for the dir engines) and pass, recorded as completion latency of the job's data direction (read when the job
//! reads, else write), as fio's engines/fileoperations.c does. The I/Os fio then "does" on the
//! file are fake (completed at once, never timed) but counted: every whole block of the file's
//! region, split between the directions as `rw`/`rwmixread` say, so total_ios and io_bytes equal
//! fio's. All files are operated on at the start of each pass (fio opens the job's files before
//! its I/O and again for each loop).
//!
//! Differs from fio on purpose: fio's lat_ns of these engines is empty (only clat has samples);
//! here lat equals clat, as for every synchronous engine. A created file is closed right away
//! (untimed) instead of staying open until the pass ends.

use super::clock::now_ns;
use super::instance::WorkerResult;
use super::instance::{errno, wait_for_start, IoFailure, Published, Timeline, WorkerInput};
use crate::model::engines::FileOp;
use crate::model::{RwKind, StatType, DDIR_READ, DDIR_TRIM, DDIR_WRITE};
use crate::workload::rng::Rng;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicBool, Ordering};

/// Run one instance of a file operation engine.
pub(crate) fn run_fileops_worker(
    op: FileOp,
    input: &WorkerInput,
    published: &Published,
    stop: &AtomicBool,
    start_ns: u64,
    sample_budget: usize,
) -> WorkerResult {
    let job = &input.job;
    let mut res = WorkerResult::new(sample_budget, false, job);
    wait_for_start(start_ns, job);
    // The paths as C strings, made before the clock starts.
    let paths: Vec<CString> = input
        .paths
        .iter()
        .map(|p| CString::new(p.as_os_str().as_bytes()).unwrap_or_default())
        .collect();
    let stat_dir = if job.rw.kind == RwKind::Write {
        DDIR_WRITE
    } else {
        DDIR_READ
    };
    let timed = job.timed();
    let mut rng = Rng::new(input.seed);
    let mut tl = Timeline::begin(job, published, &mut res);
    let passes = job.loops.max(1);
    'passes: for _ in 0..passes {
        for (file, path) in paths.iter().enumerate() {
            if stop.load(Ordering::Relaxed) {
                break 'passes;
            }
            let t0 = now_ns();
            let r = one_op(op, job.engines.stat_type, path);
            let t1 = now_ns();
            if let Err(e) = r {
                let name = match op {
                    FileOp::Create => "open",
                    FileOp::Stat | FileOp::DirStat => "stat",
                    FileOp::Delete => "unlink",
                    FileOp::DirCreate => "mkdir",
                    FileOp::DirDelete => "rmdir",
                };
                res.error = Some(IoFailure::new(input, name, file, 0, errno(&e)));
                break 'passes;
            }
            if op == FileOp::DirCreate {
                // Untimed: the new directory carries iogauge's tag, so that a killed run's
                // directories can be told from the user's.
                tag_dir(&input.paths[file]);
            }
            if timed {
                res.tick(t1);
                res.clat[stat_dir].record(t1 - t0);
            }
            if tl.ramp_over(t1, &mut res, published) {
                continue;
            }
            if t1 >= tl.deadline {
                break 'passes;
            }
        }
        // The fake I/Os: every whole block of every region.
        for &(_, region) in &input.regions {
            let blocks = region / job.unit_bs().max(1);
            for _ in 0..blocks {
                let dir = match job.rw.kind {
                    RwKind::Read => DDIR_READ,
                    RwKind::Write => DDIR_WRITE,
                    RwKind::ReadWrite if rng.below(100) < job.rwmixread as u64 => DDIR_READ,
                    RwKind::ReadWrite => DDIR_WRITE,
                    // Refused in the input (fio's fake trims are not modelled).
                    RwKind::Trim | RwKind::TrimWrite => DDIR_TRIM,
                };
                res.ios[dir] += 1;
                res.bytes[dir] += job.bs[dir];
            }
        }
        for d in [DDIR_READ, DDIR_WRITE] {
            published.bytes[d].store(res.bytes[d], Ordering::Relaxed);
            published.ios[d].store(res.ios[d], Ordering::Relaxed);
        }
    }
    let end = tl.finish(&mut res, input, |_| Ok(()));
    Timeline::done(published, end, &mut res);
    res
}

/// The timed system call (plus, for a create, the untimed close and tag after it).
fn one_op(op: FileOp, stat_type: StatType, path: &CString) -> std::io::Result<()> {
    let r = match op {
        FileOp::Create => {
            // SAFETY: a valid C path; the descriptor is closed below.
            let fd = unsafe {
                libc::open(
                    path.as_ptr(),
                    libc::O_CREAT | libc::O_RDWR | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                    0o600,
                )
            };
            if fd >= 0 {
                // Not tagged with iogauge's xattr: the file may be the user's (an existing file
                // is only opened); the run removes the ones it registered as new.
                // SAFETY: the descriptor was just opened and is owned here.
                unsafe { libc::close(fd) };
                return Ok(());
            }
            -1
        }
        // fio 3.37 passes S_IFDIR as the mode (no permission bits); 0700 keeps it usable.
        // SAFETY: a valid C path.
        FileOp::DirCreate => unsafe { libc::mkdir(path.as_ptr(), 0o700) },
        // SAFETY: a valid C path.
        FileOp::DirDelete => unsafe { libc::rmdir(path.as_ptr()) },
        FileOp::Stat | FileOp::DirStat => {
            // SAFETY: a valid C path and a writable stat buffer.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            match stat_type {
                // SAFETY: as above.
                StatType::Stat => unsafe { libc::stat(path.as_ptr(), &mut st) },
                // SAFETY: as above.
                StatType::Lstat => unsafe { libc::lstat(path.as_ptr(), &mut st) },
                StatType::Statx => {
                    // SAFETY: a zeroed statx is a valid output buffer.
                    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
                    // SAFETY: a valid C path (absolute, as fio's realpath) and output buffer.
                    unsafe {
                        libc::statx(libc::AT_FDCWD, path.as_ptr(), 0, libc::STATX_ALL, &mut stx)
                    }
                }
            }
        }
        // SAFETY: a valid C path.
        FileOp::Delete => unsafe { libc::unlink(path.as_ptr()) },
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Tag a directory iogauge made (best effort: a filesystem without user xattrs has no tag,
/// and the directory is still removed at the end of the run).
fn tag_dir(path: &std::path::Path) {
    if let Ok(d) = std::fs::File::open(path) {
        crate::workload::tag::tag_created(&d);
    }
}

/// Before a directory engine's job (fio 3.37's setup_dirs for dirstat and dirdelete): the
/// directories that do not exist are made (0700, untimed), tagged and registered as iogauge's,
/// so that the run removes them; dircreate's are registered and made by the worker (timed).
pub(crate) fn setup_dirs(
    op: FileOp,
    files: &[crate::workload::layout::FilePlan],
    created: &crate::workload::cleanup::CreatedFiles,
) -> std::io::Result<()> {
    if op == FileOp::DirCreate {
        register_new(files.iter(), created);
        return Ok(());
    }
    for f in files
        .iter()
        .filter(|f| !f.existed && !created.contains(&f.path))
    {
        created.make_dir(&f.path, 0o700).map_err(|e| {
            std::io::Error::new(e.kind(), format!("mkdir {}: {e}", f.path.display()))
        })?;
        tag_dir(&f.path);
    }
    Ok(())
}

/// Before a filecreate job: the files that do not exist yet are registered as iogauge's, so that
/// the run removes them on every path (the worker creates them).
pub(crate) fn register_new<'a>(
    files: impl Iterator<Item = &'a crate::workload::layout::FilePlan>,
    created: &crate::workload::cleanup::CreatedFiles,
) {
    let new: Vec<&crate::workload::layout::FilePlan> = files
        .filter(|f| !f.existed && !created.contains(&f.path))
        .collect();
    // Best effort: the worker's own create reports a directory that cannot be written.
    let _ = created.intend(new.iter().map(|f| f.path.as_path()));
    for f in new {
        let _ = created.register_pending(&f.path);
    }
}
