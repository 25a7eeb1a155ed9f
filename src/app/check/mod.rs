//! `iogauge check` from request to document: resolve the profiles and build their work before
//! anything touches the disk, check the directory (or the block device), run each profile (a failure or a signal never
//! loses the others' results), judge it, and gather everything into one `CheckDocument`. The
//! plan (profiles resolved, their work built, the line said before each) is in `plan.rs`.

mod plan;
pub(crate) use plan::watchable;
use plan::{plan, plan_line, Planned, Work};

use crate::app::error::{Error, Kind};
use crate::diag::Diag;
use crate::input::profiles::{self, Profile, Tuning};
use crate::model::{JobSpec, RunSpec};
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
use crate::workload::device;
use crate::workload::layout::LayoutError;
use crate::workload::{cleanup, fs};
use std::ffi::OsString;
use std::path::PathBuf;

/// A profile to run: named (a built-in name or a file, resolved when the check plans), or
/// resolved already (the canary reads its profiles once, not at every probe).
#[derive(Debug, Clone)]
pub(crate) enum ProfileSource {
    Named(OsString),
    Resolved(Box<Profile>),
}

/// What to check, and how.
#[derive(Debug, Clone)]
pub(crate) struct CheckRequest {
    /// Built-in profile names or profile files, in order.
    pub profiles: Vec<ProfileSource>,
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
}
