//! `iogauge fio …`: parse fio's grammar, run, render fio's output formats.

use super::history::{save, HistoryFlags};
use super::report::write_report;
use super::stdout;
use super::{with_output, Ended, Error, Kind, Outcome};
use crate::history::{Invocation, NewRun};
use crate::input::fio::{parse_fio_args, FioCommand};
use crate::input::fio::{Eta, FioOutput, OutputFormat};
use crate::output_file::{append, write_file, OutputError};
use crate::report::html::render_fio_html;
use crate::report::json::{render_json_with, Detail};
use crate::report::{normal::render_normal, terse::render_terse, Report};
use crate::run::partial::{failure_line, fio_error_line};
use crate::run::{run, RunError, RunOptions};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

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

fn render(how: &FioOutput, report: &Report) -> String {
    let mut out = String::new();
    for f in &how.formats {
        out.push_str(&match f {
            // Under --status-interval the header lines went out with the first dump, as fio's.
            OutputFormat::Normal if PREAMBLE_SHOWN.load(Ordering::Relaxed) => {
                crate::report::normal::render_normal_status(report)
            }
            OutputFormat::Normal => render_normal(report),
            OutputFormat::Json => render_json_with(report, false, detail(how)),
            OutputFormat::JsonPlus => render_json_with(report, true, detail(how)),
            OutputFormat::Terse => render_terse(report),
            OutputFormat::KubeFrames => crate::report::frames::render_fio_frames(
                &render_json_with(report, false, Detail::Lean),
                &render_normal(report),
            ),
        });
    }
    out
}

/// The printed JSON's per-interval data: only with `--json-intervals` (the history's copy and
/// the `--report` page always have it).
fn detail(out: &FioOutput) -> Detail {
    if out.json_intervals {
        Detail::Intervals
    } else {
        Detail::Lean
    }
}

/// The text output's header lines were printed with a `--status-interval` dump.
static PREAMBLE_SHOWN: AtomicBool = AtomicBool::new(false);

/// `--status-interval`: each report so far in every selected format, as fio (a whole JSON
/// document per interval, the text results block without the header), to stdout or appended to
/// `--output` (which is emptied first; the end report is then appended too).
fn status_interval(
    out: &FioOutput,
    stop: &std::sync::Arc<AtomicBool>,
) -> Option<crate::run::status::StatusInterval> {
    let every = out.status_interval?;
    if let Some(p) = &out.path {
        // Created empty, as a new file (see output_file); the dumps are then appended.
        if let Err(e) = write_file(p, b"") {
            eprintln!("iogauge fio: --status-interval: {e}");
        }
    }
    let how = out.clone();
    let stop = stop.clone();
    let sink = move |r: &Report| {
        let mut text = String::new();
        for f in &how.formats {
            text.push_str(&match f {
                // fio prints the job header lines once, before the first dump.
                OutputFormat::Normal if !PREAMBLE_SHOWN.swap(true, Ordering::Relaxed) => {
                    render_normal(r)
                }
                OutputFormat::Normal => crate::report::normal::render_normal_status(r),
                OutputFormat::Json => render_json_with(r, false, detail(&how)),
                OutputFormat::JsonPlus => render_json_with(r, true, detail(&how)),
                OutputFormat::Terse => render_terse(r),
                // The pod's result is the end report only.
                OutputFormat::KubeFrames => String::new(),
            });
        }
        let _ = emit(&how, &text);
        // Nobody reads the dumps any more (`| head`): the run stops as on Ctrl-C, cleaning up.
        if stdout::closed() {
            stop.store(true, Ordering::Relaxed);
        }
    };
    Some(crate::run::status::StatusInterval {
        every,
        sink: std::sync::Arc::new(sink),
    })
}

/// Writes `text` to `--output` (appended under `--status-interval`) or stdout.
fn emit(out: &FioOutput, text: &str) -> Result<(), OutputError> {
    match &out.path {
        Some(path) if out.status_interval.is_some() => append(path, text.as_bytes()),
        Some(path) => write_file(path, text.as_bytes()),
        None => {
            stdout::write(text.as_bytes());
            Ok(())
        }
    }
}

/// The results to `--output` or stdout, and the `--report` page; Err (already said) when one
/// was not written. Results that cannot be written to `--output` (a full disk, a link planted
/// there during the run) are printed on stdout instead: a run may have taken hours, and its
/// numbers exist nowhere else. The error (a run error, or bad input for a refused destination)
/// says the file is missing.
fn write_output(out: &FioOutput, report: &Report) -> Result<(), Error> {
    let text = render(out, report);
    let written = match emit(out, &text) {
        Ok(()) => Ok(()),
        Err(e) if out.path.is_some() => {
            eprintln!("iogauge fio: the results were not written: {e}; they follow on stdout");
            stdout::write(text.as_bytes());
            Err(Error::said(Kind::of_output(&e)))
        }
        Err(e) => {
            eprintln!("iogauge fio: {e}");
            Err(Error::said(Kind::Run))
        }
    };
    let Some(path) = &out.report else {
        return written;
    };
    // The page is drawn from fio's JSON document, the same one `iogauge report` reads.
    let html = render_fio_html(&crate::report::json::json_value(report, false));
    let page = write_report("iogauge fio", path, &html);
    with_output(written.map(|()| Outcome::Pass), page).map(|_| ())
}
