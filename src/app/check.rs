//! `iogauge check` from request to document: resolve the profiles and build their work before
//! anything touches the disk, check the directory (or the block device), run each profile (a failure or a signal never
//! loses the others' results), judge it, and gather everything into one `CheckDocument`.

use crate::app::error::{Error, Kind};
use crate::diag::Diag;
use crate::input::profiles::{self, Profile, SmallFiles, Tuning};
use crate::model::{JobSpec, RunSpec, SizeSpec};
use crate::report::document::{
    CheckDocument, CheckVerdict, IoErrorDetail, ProfileOutcome, Summary, SCHEMA_VERSION,
};
use crate::report::Report;
use crate::run::monitor::ProgressSink;
use crate::run::partial::failure_line;
use crate::run::small_files::run_small_files;
use crate::run::stop::Stop;
use crate::run::{context, run, RunError, RunOptions};
use crate::verdict::check::{evaluate, not_measured, partial, Judging};
use crate::verdict::profile::{threshold_text, Measured};
use crate::verdict::trust::Place;
use crate::workload::device::{self, Device};
use crate::workload::layout::LayoutError;
use crate::workload::{cleanup, fs};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What to check, and how.
#[derive(Debug, Clone)]
pub(crate) struct CheckRequest {
    /// Built-in profile names or profile files, in order.
    pub profiles: Vec<OsString>,
    /// The directory to write the test files in, or with `device` the block device to write over.
    pub dir: PathBuf,
    /// `dir` is a block device (`--device`).
    pub device: bool,
    /// `--allow-overwrite`: the device's data may go.
    pub allow_overwrite: bool,
    pub tuning: Tuning,
    pub strict: bool,
    /// Stop each profile once its verdict is decided (sequential mode); false: `--full`, the
    /// published recipe.
    pub sequential: bool,
    pub keep_files: bool,
    /// Lines for the user once the request is known to be good (before the plan lines).
    pub notes: Vec<String>,
    /// Where the runs' warnings and notes go (the CLI's draws them above its progress bar).
    pub diag: Diag,
}

/// A check that ran: its document, and why its profiles that could not run did not.
pub(crate) struct Checked {
    pub doc: CheckDocument,
    /// Of the profiles that could not run (verdict ERROR): `Run` if any failed while running
    /// (an I/O error, no space), else `BadInput` if any could not run with this input (direct
    /// I/O refused under --dir, small-files on a device), the error `iogauge fio` gives the same
    /// job; None when every profile ran.
    pub not_run: Option<Kind>,
    /// Each profile's run report, in `doc.profiles`' order: None for the small-files test and
    /// for a profile that did not run to its end (the canary adds these to its window).
    pub reports: Vec<Option<Report>>,
}

/// What the caller shows while the check runs (the CLI: lines and a progress bar on stderr):
/// the notes every command has ([`crate::observer::Observer`]), and a running job's progress.
pub(crate) trait Observer: crate::observer::Observer {
    /// Where a fio job's progress goes while it runs (None: nowhere).
    fn progress(&mut self, job: &str) -> Option<ProgressSink>;
    /// The job whose progress was shown has ended.
    fn done(&mut self);
}

/// What a profile runs.
enum Work {
    Job(Box<JobSpec>),
    SmallFiles(SmallFiles),
    /// The profile cannot run where it was asked to; the reason is its outcome.
    Unavailable(String),
}

/// Why the small-files test cannot run with `--device`: it creates files.
const NEEDS_FILESYSTEM: &str = "needs a filesystem: run it with --dir on a mounted filesystem";

struct Planned {
    profile: Profile,
    work: Work,
    shortened: bool,
}

/// `--list`: one line per built-in profile, with what it judges.
pub(crate) fn list_profiles() -> String {
    let published = Tuning {
        scale: 1.0,
        ..Tuning::default()
    };
    let mut out = String::new();
    for name in profiles::names() {
        let Ok(p) = profiles::get(name) else { continue };
        let judged: Vec<String> = p
            .metrics
            .iter()
            .map(|m| format!("{} {}", p.label(&m.label, &published), threshold_text(m)))
            .collect();
        out.push_str(&format!("{name:<12} {}: {}\n", p.title, judged.join("; ")));
    }
    out
}

/// Runs the check. Err: the request cannot run at all (bad input, or a signal before anything
/// was created); nothing was written.
pub(crate) fn check(
    req: &CheckRequest,
    stop: &Stop,
    obs: &mut dyn Observer,
) -> Result<Checked, Error> {
    let token = cleanup::run_token();
    // Held until the check ends: the device stays claimed while the profiles write over it.
    let dev = if req.device {
        Some(device::check_device(&req.dir, req.allow_overwrite).map_err(Error::bad_input)?)
    } else {
        None
    };
    let planned = plan(req, &token, dev.as_ref(), stop, obs)?;
    let place = match &dev {
        Some(d) => Place {
            memory: d.memory.clone(),
            container_layer: false,
            device: true,
        },
        None => check_dir_place(req, obs).map_err(Error::bad_input)?,
    };
    for n in &req.notes {
        obs.note(n);
    }
    for pl in &planned {
        obs.note(&plan_line(&pl.profile, &pl.work, &req.dir, req.device));
    }
    let mut outcomes = Vec::with_capacity(planned.len());
    let mut reports = Vec::with_capacity(planned.len());
    let mut not_run = None;
    for pl in &planned {
        outcomes.push(if stop.is_set() {
            reports.push(None);
            not_measured(
                &pl.profile,
                CheckVerdict::Skipped,
                "not run: the check was interrupted before it started".into(),
            )
        } else {
            let (outcome, kind, report) = run_one(req, pl, &token, &place, stop, obs);
            reports.push(report);
            // A failure while running outranks bad input: it is not the user's to fix.
            if kind.is_some() && not_run != Some(Kind::Run) {
                not_run = kind;
            }
            outcome
        });
    }
    let doc = CheckDocument {
        schema_version: SCHEMA_VERSION,
        iogauge: env!("CARGO_PKG_VERSION").to_string(),
        context: if req.device {
            context::describe_device(&req.dir)
        } else {
            context::describe(Some(&req.dir))
        },
        // Absolute, so that no output says "." (issue 22), yet as typed otherwise: symlinks
        // are not resolved here (`context.directory` has the resolved path).
        dir: std::path::absolute(&req.dir)
            .unwrap_or_else(|_| req.dir.clone())
            .display()
            .to_string(),
        device: req.device,
        summary: Summary::of(&outcomes),
        profiles: outcomes,
    };
    Ok(Checked {
        doc,
        not_run,
        reports,
    })
}

/// The directory checked and what it is on; a killed run's leftovers there are pointed out.
fn check_dir_place(req: &CheckRequest, obs: &mut dyn Observer) -> Result<Place, String> {
    fs::check_dir(&req.dir, "--dir")?;
    // Killed runs' files listed in their markers go first; files kept on purpose are named as
    // such; other files with check's names are pointed out.
    let reaped = crate::workload::marker::reap(&req.dir);
    for line in reaped.describe().into_iter().chain(reaped.describe_kept()) {
        obs.note(&format!("iogauge check: {line}"));
    }
    let mut left = cleanup::leftovers(&req.dir);
    left.retain(|f| !reaped.kept.iter().any(|(k, _, _)| k == f));
    if let Some(first) = left.first() {
        // A name proves nothing, and such a file may have been kept on purpose by an iogauge
        // that did not record it: never called a killed run's.
        obs.note(&format!(
            "iogauge check: note: {} file(s) in {} are named like an earlier iogauge check's \
             test files (e.g. {}), but no marker of yours lists them, so they are not removed; \
             if they are yours, they hold only test data: remove them with rm {}/iogauge-*",
            left.len(),
            crate::workload::marker::shown(&req.dir),
            crate::workload::marker::shown(first),
            req.dir.display()
        ));
    }
    Ok(Place {
        memory: fs::memory_backed(&req.dir),
        container_layer: fs::container_layer(&req.dir),
        device: false,
    })
}

/// The line printed before a profile runs: what it does, and how long it takes when the work
/// says so (a size-bound job takes as long as the disk needs; the progress bar shows the ETA).
fn plan_line(p: &Profile, work: &Work, dir: &Path, device: bool) -> String {
    let what = match work {
        Work::Unavailable(why) => format!("not run: {why}"),
        Work::SmallFiles(s) => format!(
            "{} files of {} bytes, created then read back",
            s.files, s.size
        ),
        Work::Job(job) => {
            let bytes = match job.size {
                Some(SizeSpec::Bytes(b)) => b,
                _ => 0,
            };
            let mib = format!("{:.0} MiB", bytes as f64 / (1u64 << 20) as f64);
            // On a device the job writes over its first bytes; there is no file.
            let size = if device {
                format!("the first {mib}")
            } else {
                format!("a {mib} file")
            };
            match (job.time_based, job.runtime) {
                (true, Some(r)) => {
                    format!("{size}, about {:.0} s", (r + job.ramp_time).as_secs_f64())
                }
                _ => {
                    let bs = job.unit_bs().max(1);
                    let sync = if job.fdatasync > 0 || job.fsync > 0 {
                        ", each synced"
                    } else {
                        ""
                    };
                    format!(
                        "{size} in {} writes of {bs} bytes{sync}; as long as the disk takes",
                        bytes / bs
                    )
                }
            }
        }
    };
    format!(
        "iogauge check: {}: {} {} {}: {what}",
        p.name,
        p.title,
        if device { "on" } else { "in" },
        dir.display()
    )
}

/// A run error in check's words: check has no fio options to point at.
fn reason(e: &RunError) -> String {
    match e {
        RunError::Layout(LayoutError::NoSpace { dir, need, avail }) => {
            fs::no_space_message(dir, *need, *avail)
        }
        RunError::Layout(LayoutError::DirectRefused { source, .. }) => format!(
            "the filesystem under --dir refused direct I/O ({source}), which this profile needs; \
             choose a --dir on a disk filesystem (tmpfs does not support it)"
        ),
        RunError::Layout(LayoutError::DirectAlignment {
            what, value, align, ..
        }) => format!(
            "the filesystem under --dir needs direct I/O aligned to {align} bytes, and this \
             profile's {what} is {value}; choose a --dir on another filesystem"
        ),
        e => e.to_string(),
    }
}

/// Profiles resolved and their work built, before anything touches the disk.
fn plan(
    req: &CheckRequest,
    token: &str,
    dev: Option<&Device>,
    stop: &Stop,
    obs: &mut dyn Observer,
) -> Result<Vec<Planned>, Error> {
    let published = Tuning {
        scale: 1.0,
        ..Tuning::default()
    };
    let mut plan = Vec::new();
    // Profiles an option given does not change, with why, said in one line each.
    let (mut no_duration, mut no_size) = (Vec::new(), Vec::new());
    for name in &req.profiles {
        // A profile file may be a FIFO that blocks: a signal while reading it ends the process.
        let p = if profiles::is_path(name) {
            stop.before_anything_exists(|| profiles::resolve(name))?
        } else {
            profiles::resolve(name)
        }
        .map_err(Error::bad_input)?;
        let mut work = match (p.small_files(&req.tuning), dev) {
            (Some(_), Some(_)) => Work::Unavailable(NEEDS_FILESYSTEM.to_string()),
            (Some(s), None) => Work::SmallFiles(s),
            (None, None) => {
                let mut j = p.job(&req.dir, &req.tuning).map_err(Error::bad_input)?;
                // Names no other run uses, so two checks in one directory never collide.
                j.filename = Some(format!("iogauge-{}.{token}", p.name));
                j.files.iogauge_names = true;
                Work::Job(Box::new(j))
            }
            (None, Some(d)) => {
                let mut j = p.job(&req.dir, &req.tuning).map_err(Error::bad_input)?;
                on_device(&mut j, &req.dir, d.size).map_err(Error::bad_input)?;
                Work::Job(Box::new(j))
            }
        };
        if let (Work::Job(j), Some(size)) = (&work, req.tuning.size) {
            let bs = j.max_bs();
            if size < bs {
                return Err(Error::bad_input(format!(
                    "--size {size}: smaller than one {bs}-byte block of profile '{}'; use at least \
                     {bs} bytes (e.g. 64m)",
                    p.name
                )));
            }
        }
        const FILES: &str = "it makes a fixed number of files: --scale changes that";
        match &work {
            Work::SmallFiles(_) => {
                no_duration.push(format!("{} ({FILES})", p.name));
                no_size.push(format!("{} ({FILES})", p.name));
            }
            Work::Job(j) if !j.time_based => no_duration.push(format!(
                "{} (it writes a fixed size: --size changes that)",
                p.name
            )),
            _ => {}
        }
        // Marked as shortened only if the tuning actually changed this profile's run.
        // A device smaller than the file is a cap like --max-size's, so it counts too.
        let shortened = match &work {
            Work::SmallFiles(s) => Some(s.files) != p.small_files.map(|d| d.files),
            Work::Unavailable(_) => false,
            Work::Job(j) => p
                .job(&req.dir, &published)
                .map(|mut pj| {
                    pj.filename = j.filename.clone();
                    pj.files.iogauge_names = j.files.iogauge_names;
                    pj.directory = j.directory.clone();
                    pj != **j
                })
                .unwrap_or(true),
        };
        if let Work::Job(j) = &mut work {
            if let Some(why) = crate::engine::io_uring_or_libaio(&mut j.ioengine) {
                obs.note(&format!("iogauge check: {}: {why}", p.name));
            }
            // After `shortened` was decided: watching the verdict does not change the recipe.
            if req.sequential && watchable(j) {
                j.timing.sequential = crate::verdict::sequential::spec_of(&p).ok();
            }
            // The fio report's "job options" say how to run it again.
            j.options = p
                .fio_options(j)
                .iter()
                .map(|o| {
                    let o = o.trim_start_matches("--");
                    let (k, v) = o.split_once('=').unwrap_or((o, ""));
                    (k.to_string(), v.to_string())
                })
                .collect();
        }
        plan.push(Planned {
            profile: p,
            work,
            shortened,
        });
    }
    for (flag, given, unused) in [
        ("--duration", req.tuning.duration.is_some(), no_duration),
        ("--size", req.tuning.size.is_some(), no_size),
    ] {
        if given && !unused.is_empty() {
            obs.note(&unused_option_line(flag, &unused));
        }
    }
    Ok(plan)
}

/// Whether a profile's job can be watched for an early verdict: one instance, measured from
/// one start (latency_target restarts it), its recipe's length known from its size (io_size and
/// loops change that) and no other rule that ends it (steadystate), no read-back (verify). A
/// profile of other options runs its full recipe.
pub(crate) fn watchable(j: &JobSpec) -> bool {
    j.numjobs == 1
        && j.latency.target_ns == 0
        && !j.verify.enabled()
        && j.timing.ss_dur.is_zero()
        && j.blocks.io_size.is_none()
        && j.loops <= 1
}

/// The line saying that `flag` does not change some profiles' runs, each with why.
fn unused_option_line(flag: &str, unused: &[String]) -> String {
    format!(
        "iogauge check: note: {flag} does not apply to {}; {} without it",
        unused.join(", "),
        if unused.len() == 1 {
            "it runs"
        } else {
            "they run"
        }
    )
}

/// Points a profile's job at the block device `path` of `size` bytes: the device is the file,
/// and a job larger than the device is capped to it in whole blocks (so it still runs its
/// published block size).
fn on_device(j: &mut JobSpec, path: &Path, size: u64) -> Result<(), String> {
    j.directory = None;
    j.filename = Some(device::as_filename(path));
    let bs = j.max_bs().max(1);
    let whole = size / bs * bs;
    if whole == 0 {
        return Err(format!(
            "--device {}: {size} bytes, smaller than one {bs}-byte block of profile '{}'",
            path.display(),
            j.name
        ));
    }
    if let Some(SizeSpec::Bytes(b)) = j.size {
        j.size = Some(SizeSpec::Bytes(b.min(whole)));
    }
    Ok(())
}

fn run_job(
    job: JobSpec,
    keep_files: bool,
    allow_overwrite: bool,
    diag: &Diag,
    stop: &Stop,
    obs: &mut dyn Observer,
) -> Result<Report, RunError> {
    let opts = RunOptions {
        progress_sink: obs.progress(&job.name),
        diag: diag.clone(),
        // check's file names are its own: a kept one is named, and recorded as kept.
        record_kept: true,
        ..RunOptions::default()
    };
    let spec = RunSpec {
        jobs: vec![job],
        keep_files,
        allow_overwrite,
        ..RunSpec::default()
    };
    let res = run(&spec, &opts, stop.flag());
    obs.done();
    res
}

/// Runs one planned profile and judges it; with the kind of error that kept it from running,
/// if one did (its verdict is then ERROR), and the report of a fio job that ran to its end.
fn run_one(
    req: &CheckRequest,
    pl: &Planned,
    token: &str,
    place: &Place,
    stop: &Stop,
    obs: &mut dyn Observer,
) -> (ProfileOutcome, Option<Kind>, Option<Report>) {
    let p = &pl.profile;
    let measured = match &pl.work {
        // With --device the job writes over the device itself, which the user allowed (check
        // refuses --device without --allow-overwrite); nothing is created or left.
        Work::Job(job) => run_job(
            (**job).clone(),
            req.keep_files,
            req.device,
            &req.diag,
            stop,
            obs,
        )
        .map(Measured::Fio),
        Work::SmallFiles(s) => run_small_files(
            &req.dir,
            &format!("iogauge-{}.{token}", p.name),
            s.files,
            s.size,
            req.keep_files.then_some(&req.diag),
            stop.flag(),
        )
        .map(Measured::SmallFiles),
        // Its reason is already on the plan line: the profile cannot run where it was asked to.
        Work::Unavailable(why) => {
            return (
                not_measured(p, CheckVerdict::Error, why.clone()),
                Some(Kind::BadInput),
                None,
            )
        }
    };
    let kind = match &measured {
        Err(e) if !stop.is_set() => Some(Kind::of_run(e)),
        _ => None,
    };
    let mut report = None;
    let outcome = match measured {
        _ if stop.is_set() => not_measured(
            p,
            CheckVerdict::Interrupted,
            format!(
                "interrupted by {}; its files were removed and its partial numbers are not judged",
                stop.reason()
            ),
        ),
        Ok(m) => {
            let how = Judging {
                shortened: pl.shortened,
                strict: req.strict,
                place: place.clone(),
            };
            let job = match &pl.work {
                Work::Job(j) => Some(&**j),
                Work::SmallFiles(_) | Work::Unavailable(_) => None,
            };
            let outcome = evaluate(p, &req.tuning, job, &m, &how);
            if let Measured::Fio(r) = m {
                report = Some(r);
            }
            outcome
        }
        // An I/O error ended the run: the error names file and operation; what was done until
        // then is kept, marked partial, and not judged.
        Err(RunError::Io {
            failure,
            partial: Some(report),
        }) => {
            let why = format!(
                "{}; the run stopped there: its numbers are partial and not judged",
                failure_line(&failure)
            );
            obs.note(&format!("iogauge check: {}: {why}", p.name));
            let job = match &pl.work {
                Work::Job(j) => Some(&**j),
                Work::SmallFiles(_) | Work::Unavailable(_) => None,
            };
            let detail = IoErrorDetail {
                operation: failure.op.to_string(),
                file: failure.path.display().to_string(),
                offset: failure.offset,
                length: failure.len,
                errno: failure.errno,
                message: failure.message,
            };
            partial(p, job, &report, detail, why)
        }
        Err(e) => {
            let why = reason(&e);
            obs.note(&format!("iogauge check: {}: {why}", p.name));
            not_measured(p, CheckVerdict::Error, why)
        }
    };
    (outcome, kind, report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_has_every_profile_with_its_threshold() {
        let l = list_profiles();
        assert_eq!(l.lines().count(), profiles::names().count());
        assert!(
            l.starts_with("etcd         etcd WAL (IBM recipe): p99 fdatasync latency < 10 ms\n")
        );
        assert!(l.contains("\nsmall-files  many small files (GitLab): create 1,000 small files"));
    }

    #[test]
    fn plan_lines_follow_the_work() {
        let t = |scale| Tuning {
            scale,
            ..Tuning::default()
        };
        let p = profiles::get("small-files").unwrap();
        let w = Work::SmallFiles(p.small_files(&t(0.1)).unwrap());
        assert_eq!(
            plan_line(&p, &w, Path::new("/d"), false),
            "iogauge check: small-files: many small files (GitLab) in /d: 100 files of 5 bytes, created then read back"
        );
        let p = profiles::get("etcd").unwrap();
        let w = Work::Job(Box::new(p.job(Path::new("/d"), &t(1.0)).unwrap()));
        assert_eq!(
            plan_line(&p, &w, Path::new("/d"), false),
            "iogauge check: etcd: etcd WAL (IBM recipe) in /d: a 22 MiB file in 10029 writes of 2300 bytes, each synced; as long as the disk takes"
        );
        let p = profiles::get("sync-iops").unwrap();
        let w = Work::Job(Box::new(p.job(Path::new("/d"), &t(0.1)).unwrap()));
        assert_eq!(
            plan_line(&p, &w, Path::new("/d"), false),
            "iogauge check: sync-iops: synchronous write IOPS (Manetu) in /d: a 102 MiB file, about 6 s"
        );
        // On a device: "on", and the job writes over the device's first bytes.
        assert_eq!(
            plan_line(&p, &w, Path::new("/dev/sdb"), true),
            "iogauge check: sync-iops: synchronous write IOPS (Manetu) on /dev/sdb: the first 102 MiB, about 6 s"
        );
        let p = profiles::get("etcd").unwrap();
        let w = Work::Job(Box::new(p.job(Path::new("/d"), &t(1.0)).unwrap()));
        assert_eq!(
            plan_line(&p, &w, Path::new("/dev/sdb"), true),
            "iogauge check: etcd: etcd WAL (IBM recipe) on /dev/sdb: the first 22 MiB in 10029 writes of 2300 bytes, each synced; as long as the disk takes"
        );
        let p = profiles::get("small-files").unwrap();
        let w = Work::Unavailable(NEEDS_FILESYSTEM.into());
        assert_eq!(
            plan_line(&p, &w, Path::new("/dev/sdb"), true),
            "iogauge check: small-files: many small files (GitLab) on /dev/sdb: not run: needs a filesystem: run it with --dir on a mounted filesystem"
        );
    }

    #[test]
    fn a_device_is_the_file_and_caps_the_size_in_whole_blocks() {
        let full = Tuning {
            scale: 1.0,
            ..Tuning::default()
        };
        let p = profiles::get("etcd").unwrap();
        let mut j = p.job(Path::new("."), &full).unwrap();
        // A 22 MiB job fits a 64 MiB device unchanged.
        on_device(&mut j, Path::new("/dev/loop0"), 64 << 20).unwrap();
        assert_eq!(j.directory, None);
        assert_eq!(j.filename.as_deref(), Some("/dev/loop0"));
        assert_eq!(j.size, Some(SizeSpec::Bytes(22 << 20)));
        // On 16 MiB: whole 2300-byte blocks that fit.
        on_device(&mut j, Path::new("/dev/loop0"), 16 << 20).unwrap();
        assert_eq!(j.size, Some(SizeSpec::Bytes((16 << 20) / 2300 * 2300)));
        assert_eq!(
            on_device(&mut j, Path::new("/dev/tiny"), 2299).unwrap_err(),
            "--device /dev/tiny: 2299 bytes, smaller than one 2300-byte block of profile 'etcd'"
        );
    }
}
