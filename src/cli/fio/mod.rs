//! `iogauge fio …`: parse fio's grammar, run, and end as fio does; what it prints and writes
//! is in `output.rs`.

mod output;
use output::{status_interval, write_output};

use super::history::{save, HistoryFlags};
use super::stdout;
use super::{Ended, Error, Kind, Outcome};
use crate::history::{Invocation, NewRun};
use crate::input::fio::{parse_fio_args, Eta, FioCommand, FioOutput};
use crate::report::Report;
use crate::run::partial::{failure_line, fio_error_line};
use crate::run::{run, RunError, RunOptions};
use std::io::IsTerminal;

pub(crate) fn main(mut args: Vec<String>, stop: &super::Stop) -> Ended {
    let at = Invocation::now();
    let history = HistoryFlags::take_from(&mut args).map_err(Error::bad_input)?;
    let env = |k: &str| std::env::var(k).ok();
    // Job files may be stdin or a FIFO that never ends: a signal while reading ends the process.
    let cmd = stop
        .before_anything_exists(|| parse_fio_args(&args, &env, &mut std::io::stdin()))?
        .map_err(|e| Error::bad_input(e.to_string()))?;
    let (spec, out) = match cmd {
        FioCommand::Version => {
            stdout::println(&Report::version_string());
            return Ok(Outcome::Pass);
        }
        FioCommand::Help(text) => {
            stdout::print(&text);
            return Ok(Outcome::Pass);
        }
        FioCommand::Inflate(path) => return inflate_log(&path),
        FioCommand::Run(spec, out) => (spec, out),
    };
    // Files written after the run are checked before it, so a typo costs no measurement.
    for (flag, path) in [("--report", &out.report), ("--output", &out.path)] {
        if let Some(p) = path {
            if let Err(e) = super::report::output_file(&p.to_string_lossy()) {
                return Err(Error::bad_input(format!("{flag}={}: {e}", p.display())));
            }
        }
    }
    if out.parse_only {
        return Ok(Outcome::Pass);
    }
    let progress = show_progress(&out);
    let opts = RunOptions {
        progress,
        status: status_interval(&out, stop.flag()),
        diag: super::progress::fio_diag(progress),
        ..RunOptions::default()
    };
    // Notes on options fio accepts silently go with the results (the text output's "iogauge
    // notes", the JSON's iogauge section), not to stderr, where fio is silent and scripts
    // take any line for a failure.
    let noted = |mut r: Report| {
        r.notes.extend(out.warnings.iter().cloned());
        r
    };
    match run(&spec, &opts, stop.flag()).map(noted) {
        // Like fio, an interrupted run prints what it measured until then.
        // The document says so (`iogauge.interrupted`, and a note), as check's does, so that
        // neither a reader nor `compare` takes it for a whole run.
        Ok(mut report) if stop.is_set() => {
            eprintln!(
                "iogauge fio: interrupted by {}; removed the files iogauge created; results so far follow",
                reason(stop)
            );
            let why = format!("interrupted by {}", reason(stop));
            report
                .notes
                .push(format!("{why}: the results cover the run until then only"));
            report.interrupted = Some(why);
            let _ = write_output(&out, &report);
            save(&history, || saved(&report, &out, &at));
            Ok(Outcome::Interrupted)
        }
        Ok(report) => {
            let written = write_output(&out, &report);
            save(&history, || saved(&report, &out, &at));
            // Like fio, a job that ended with an error (a verify mismatch, a missed rate_min)
            // makes the exit code 1. Errors survived under continue_on_error (reported as the
            // job's error) are not a failure: fio exits 0 then.
            let failed = |j: &crate::report::JobReport| {
                j.error != 0 && j.errors.is_none_or(|(_, first)| first != j.error)
            };
            written?;
            if report.jobs.iter().any(failed) {
                // The job's error is in the results printed.
                Err(Error::said(Kind::Run))
            } else {
                Ok(Outcome::Pass)
            }
        }
        // Like fio, an I/O error that ended a job prints fio's error line, then the results
        // so far (the job's `err=`/`"error"` says which); exit 1.
        Err(RunError::Io {
            failure,
            partial: Some(report),
        }) => {
            if let Some(line) = fio_error_line(&failure) {
                eprintln!("iogauge fio: {line}");
            }
            // Then the same in iogauge's words, with the errno.
            eprintln!(
                "iogauge fio: {}; the run ended there, partial results follow",
                failure_line(&failure)
            );
            let _ = write_output(&out, &report);
            // The report's notes already say it is partial, and why.
            save(&history, || saved(&report, &out, &at));
            Err(Error::said(Kind::Run))
        }
        Err(e) if Kind::of_run(&e) == Kind::BadInput => Err(e.into()),
        Err(e) if stop.is_set() => Err(Error::new(
            Kind::Interrupted,
            format!(
                "interrupted by {} ({e}); removed the files iogauge created",
                reason(stop)
            ),
        )),
        Err(e) => Err(Error::run(e.to_string())),
    }
}

/// `--inflate-log=FILE`: the compressed log's entries on stdout, as fio prints them. A file
/// that is not one (or is cut short) exits 2 after the entries before the damage.
fn inflate_log(path: &std::path::Path) -> Ended {
    match crate::stats::logs::inflate(path, &mut |text| stdout::write(text)) {
        Ok(()) => Ok(Outcome::Pass),
        Err(e) => Err(Error::bad_input(format!(
            "--inflate-log={}: {e}",
            path.display()
        ))),
    }
}

/// Why the run stopped early: a signal, or a `--status-interval` stream nobody reads any more.
fn reason(stop: &super::Stop) -> &'static str {
    if stdout::closed() {
        "a closed stdout"
    } else {
        stop.reason()
    }
}

/// The history's copy: fio's JSON output of the same report, whatever format was printed (one
/// document for every group and job); an interrupted or partial run says so in its notes.
fn saved(report: &Report, out: &FioOutput, at: &Invocation) -> Result<NewRun, String> {
    let json = crate::report::json::json_value(report, false);
    Ok(NewRun::fio(json, &out.job_files, at))
}

fn show_progress(out: &FioOutput) -> bool {
    match out.eta {
        Eta::Always => true,
        Eta::Never => false,
        Eta::Auto => std::io::stderr().is_terminal(),
    }
}
